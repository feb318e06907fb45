/* SPDX-License-Identifier: MIT */
/*
 * test_merge.c - OR and AND of filters: the OR of two filters is the filter
 * of the union bit for bit, AND keeps the keys both hold, every kind of
 * incompatibility is refused by name with into untouched, growing
 * cascades carry extra stages over, and merging from a stream gives
 * exactly what merging in memory gives, in about one filter of memory.
 *
 * Keys are fixed strings and filters are built with fixed SipHash keys, so
 * every run sees the same bits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "merge.h"
#include "merge_stream.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[256];
static char pathbuf[512];

static const char *tmp_path(const char *name)
{
	snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
	return pathbuf;
}

struct keyset {
	struct line *keys;
	char *text;
	size_t n;
};

/* Keys "<prefix><i>" for i in [from, from + n). */
static int keyset_make(struct keyset *ks, const char *prefix, size_t from, size_t n)
{
	char *p;

	ks->n = n;
	ks->keys = malloc(n * sizeof *ks->keys);
	p = ks->text = malloc(n * 32);
	if (ks->keys == NULL || p == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(p, 32, "%s%zu", prefix, from + i);

		ks->keys[i].data = p;
		ks->keys[i].len = (size_t)len;
		p += len;
	}
	return 0;
}

static void keyset_free(struct keyset *ks)
{
	free(ks->keys);
	free(ks->text);
}

static struct filter_params base_params(void)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 7;
	p.m = 512 * 200;
	p.capacity = 10000;
	p.target_p = 0.01;
	memcpy(p.key, "merge-test-key-0", 16);
	return p;
}

/* A fixed cascade with params p holding keys [from, from + n) of prefix. */
static struct cascade *fixed_with(const struct filter_params *p, const char *prefix, size_t from,
				  size_t n)
{
	struct keyset ks;
	const char *why;
	struct cascade *c = cascade_new_fixed(p, &why);

	if (c == NULL || keyset_make(&ks, prefix, from, n) < 0 || cascade_add(c, ks.keys, n, &why) < 0) {
		cascade_free(c);
		return NULL;
	}
	keyset_free(&ks);
	return c;
}

/* A growing cascade (first stage 1000 keys, growth 2, tighten 1, P 0.01) holding n keys. */
static struct cascade *growing_with(const char *prefix, size_t n, unsigned tighten)
{
	struct filter_params first = base_params();
	struct keyset ks;
	const char *why;
	struct cascade *c;

	first.capacity = 1000;
	c = cascade_new_growing(&first, 0.01, 2, tighten, &why);
	if (c == NULL || keyset_make(&ks, prefix, 0, n) < 0 || cascade_add(c, ks.keys, n, &why) < 0) {
		cascade_free(c);
		return NULL;
	}
	keyset_free(&ks);
	return c;
}

static int same_bits(const struct filter *a, const struct filter *b)
{
	return a->params.m == b->params.m && memcmp(a->words, b->words, a->params.m / 8) == 0;
}

static int same_params(const struct filter_params *x, const struct filter_params *y)
{
	return x->layout == y->layout && x->hash == y->hash && x->flags == y->flags
	       && x->k == y->k && x->m == y->m && x->capacity == y->capacity
	       && x->target_p == y->target_p && memcmp(x->key, y->key, 16) == 0;
}

/*
 * Shape, labels, insertions and bits; with_count, the newest stage's count
 * too (a copy through a file has it estimated, the original exact).
 */
static int same_cascade(const struct cascade *a, const struct cascade *b, int with_count)
{
	if (a->nstages != b->nstages || a->growth != b->growth || a->tighten != b->tighten
	    || a->capacity != b->capacity || a->target_p != b->target_p
	    || (with_count && a->newest_keys != b->newest_keys))
		return 0;
	for (size_t i = 0; i < a->nstages; i++) {
		const struct filter *x = a->stages[i], *y = b->stages[i];

		if (!same_params(&x->params, &y->params) || x->insertions != y->insertions
		    || !same_bits(x, y))
			return 0;
	}
	return 1;
}

/* A copy through the file format, which round-trips exactly. */
static struct cascade *copy_of(const struct cascade *c, const char *name)
{
	const char *why;

	if (format_save_path(c, tmp_path(name), &why) < 0)
		return NULL;
	return format_load_path(tmp_path(name), &why);
}

static int all_present(const struct cascade *c, const char *prefix, size_t n)
{
	struct keyset ks;
	unsigned char *present = malloc(n);
	int all = 1;

	if (present == NULL || keyset_make(&ks, prefix, 0, n) < 0)
		return 0;
	cascade_test(c, ks.keys, n, present);
	for (size_t i = 0; i < n; i++)
		all &= present[i];
	keyset_free(&ks);
	free(present);
	return all;
}

/* ---- in memory -------------------------------------------------------- */

static void or_of_disjoint_sets_is_the_filter_of_the_union(void)
{
	static const enum filter_layout layouts[] = { FILTER_BLOCKED, FILTER_CLASSIC };

	for (size_t i = 0; i < 2; i++) {
		struct filter_params p = base_params();
		struct cascade *a, *b, *u;
		const char *why = "";

		p.layout = layouts[i];
		a = fixed_with(&p, "k", 0, 3000);
		b = fixed_with(&p, "k", 3000, 4000);
		u = fixed_with(&p, "k", 0, 7000);
		CHECK(a != NULL && b != NULL && u != NULL);
		CHECKF(merge_into(a, b, MERGE_OR, &why) == 0, "%s", why);
		CHECK(same_bits(a->stages[0], u->stages[0]));
		CHECK(a->stages[0]->insertions == 7000 && cascade_insertions(a) == 7000);
		CHECK(a->capacity == p.capacity && a->target_p == p.target_p && a->growth == 0);
		cascade_free(a);
		cascade_free(b);
		cascade_free(u);
	}
}

static void and_keeps_the_keys_of_both(void)
{
	struct filter_params p = base_params();
	struct cascade *a = fixed_with(&p, "k", 0, 5000);	/* common: k2000..k4999 */
	struct cascade *b = fixed_with(&p, "k", 2000, 5000);
	struct cascade *a_copy = copy_of(a, "and.bf");
	const struct filter *fa, *fb;
	struct keyset common;
	unsigned char *present;
	const char *why = "";

	CHECK(a != NULL && b != NULL && a_copy != NULL && keyset_make(&common, "k", 2000, 3000) == 0);
	CHECKF(merge_into(a, b, MERGE_AND, &why) == 0, "%s", why);
	fa = a_copy->stages[0];
	fb = b->stages[0];
	for (uint64_t w = 0; w < p.m / 64; w++)
		CHECK(a->stages[0]->words[w] == (fa->words[w] & fb->words[w]));
	CHECK(a->stages[0]->insertions == 10000);
	present = malloc(common.n);
	CHECK(present != NULL);
	cascade_test(a, common.keys, common.n, present);
	for (size_t i = 0; i < common.n; i++)
		CHECKF(present[i], "key %zu of the intersection lost", i);
	free(present);
	keyset_free(&common);
	cascade_free(a);
	cascade_free(b);
	cascade_free(a_copy);
}

struct variant {
	const char *field;
	void (*change)(struct filter_params *p);
};

static void other_m(struct filter_params *p) { p->m += 512; }
static void other_key(struct filter_params *p) { p->key[15] ^= 1; }
static void other_k(struct filter_params *p) { p->k = 6; }
static void other_layout(struct filter_params *p) { p->layout = FILTER_CLASSIC; }
static void other_flags(struct filter_params *p) { p->flags = FILTER_FOLD_CASE; }
static void other_hash(struct filter_params *p) { p->hash = FILTER_SIPHASH_2_4; }

static void incompatible_filters_are_named_and_left_alone(void)
{
	static const struct variant variants[] = {
		{ "size", other_m }, { "key", other_key }, { "hashes", other_k },
		{ "layout", other_layout }, { "normalisation", other_flags },
		{ "hash function", other_hash },
	};
	struct filter_params p = base_params();
	struct cascade *a = fixed_with(&p, "k", 0, 1000), *a_copy = copy_of(a, "alone.bf");

	CHECK(a != NULL && a_copy != NULL);
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		struct filter_params q = p;
		struct cascade *b;
		const char *why = "";

		variants[i].change(&q);
		b = fixed_with(&q, "k", 1000, 1000);
		CHECK(b != NULL);
		CHECK(merge_into(a, b, MERGE_OR, &why) == -1);
		CHECKF(strcmp(why, variants[i].field) == 0, "got \"%s\", want \"%s\"", why,
		       variants[i].field);
		CHECK(merge_into(a, b, MERGE_AND, &why) == -1 && strcmp(why, variants[i].field) == 0);
		CHECK(same_cascade(a, a_copy, 0));
		cascade_free(b);
	}
	cascade_free(a);
	cascade_free(a_copy);
}

static void growth_differences_are_named(void)
{
	struct filter_params p = base_params();
	struct cascade *fixed = fixed_with(&p, "k", 0, 100);
	struct cascade *grow1 = growing_with("k", 100, 1), *grow2 = growing_with("k", 100, 2);
	const char *why = "";

	CHECK(fixed != NULL && grow1 != NULL && grow2 != NULL);
	CHECK(merge_into(fixed, grow1, MERGE_OR, &why) == -1 && strcmp(why, "growth") == 0);
	CHECK(merge_into(grow1, fixed, MERGE_OR, &why) == -1 && strcmp(why, "growth") == 0);
	CHECK(merge_into(grow1, grow2, MERGE_OR, &why) == -1 && strcmp(why, "growth") == 0);
	cascade_free(fixed);
	cascade_free(grow1);
	cascade_free(grow2);
}

/*
 * 1500 keys fill a first stage of 1000 and start a second of 2000; 5000
 * fill 1000 + 2000 and start a third of 4000. The OR has three stages: the
 * first two OR-ed, the third carried over bit for bit.
 */
static void growing_or_carries_extra_stages(void)
{
	struct cascade *a = growing_with("a", 1500, 1), *b = growing_with("b", 5000, 1);
	struct cascade *merged;
	uint64_t a_ins0, b_ins0;
	const char *why = "";

	CHECK(a != NULL && b != NULL && a->nstages == 2 && b->nstages == 3);
	a_ins0 = a->stages[0]->insertions;
	b_ins0 = b->stages[0]->insertions;
	CHECKF(merge_into(a, b, MERGE_OR, &why) == 0, "%s", why);
	CHECK(a->nstages == 3 && a->growth == 2 && a->tighten == 1);
	CHECK(same_bits(a->stages[2], b->stages[2]));
	CHECK(a->stages[2]->insertions == b->stages[2]->insertions);
	CHECK(a->stages[0]->insertions == a_ins0 + b_ins0);
	CHECK(cascade_insertions(a) == 6500);
	CHECK(same_params(&a->stages[2]->params, &b->stages[2]->params));
	CHECK(all_present(a, "a", 1500) && all_present(a, "b", 5000));
	/* the newest stage is b's, and a's count of it was estimated from its fill */
	CHECK(a->newest_keys > 1800 && a->newest_keys < 2200);
	merged = copy_of(a, "grown.bf");	/* still a valid file: labels follow the plan */
	CHECK(merged != NULL && merged->nstages == 3);
	cascade_free(merged);
	cascade_free(a);
	cascade_free(b);
}

static void growing_or_into_the_longer_keeps_its_stages(void)
{
	struct cascade *a = growing_with("a", 1500, 1), *b = growing_with("b", 5000, 1);
	const char *why = "";

	CHECK(a != NULL && b != NULL);
	CHECKF(merge_into(b, a, MERGE_OR, &why) == 0, "%s", why);
	CHECK(b->nstages == 3 && cascade_insertions(b) == 6500);
	CHECK(all_present(b, "a", 1500) && all_present(b, "b", 5000));
	cascade_free(a);
	cascade_free(b);
}

static void and_of_growing_filters_is_refused(void)
{
	struct filter_params p = base_params();
	struct cascade *a = growing_with("a", 100, 1), *b = growing_with("b", 100, 1);
	struct cascade *fixed = fixed_with(&p, "k", 0, 100);
	const char *why = "";

	CHECK(a != NULL && b != NULL && fixed != NULL);
	CHECK(merge_into(a, b, MERGE_AND, &why) == -1);
	CHECK(strcmp(why, "cannot intersect growing filters") == 0);
	CHECK(merge_into(fixed, a, MERGE_AND, &why) == -1);
	CHECK(strcmp(why, "cannot intersect growing filters") == 0);
	CHECK(a->stages[0]->insertions == 100 && fixed->stages[0]->insertions == 100);
	cascade_free(a);
	cascade_free(b);
	cascade_free(fixed);
}

static void insertion_overflow_is_refused(void)
{
	struct filter_params p = base_params();
	struct cascade *a = fixed_with(&p, "a", 0, 100), *b = fixed_with(&p, "b", 0, 100);
	struct cascade *ga = growing_with("a", 1500, 1), *gb = growing_with("b", 1500, 1);
	struct cascade *a_copy;
	const char *why = "";

	CHECK(a != NULL && b != NULL && ga != NULL && gb != NULL);
	a->stages[0]->insertions = UINT64_MAX - 1;
	b->stages[0]->insertions = 2;
	a_copy = copy_of(a, "overflow.bf");
	CHECK(a_copy != NULL);
	CHECK(merge_into(a, b, MERGE_OR, &why) == -1);
	CHECK(strcmp(why, "insertion counts overflow") == 0 && same_cascade(a, a_copy, 0));
	b->stages[0]->insertions = 1;	/* exactly UINT64_MAX is fine */
	CHECKF(merge_into(a, b, MERGE_OR, &why) == 0, "%s", why);
	CHECK(a->stages[0]->insertions == UINT64_MAX);
	/* each stage fits, the cascade's total would not */
	ga->stages[0]->insertions = UINT64_MAX / 2;
	gb->stages[1]->insertions = UINT64_MAX / 2;
	ga->stages[1]->insertions = gb->stages[0]->insertions = 1;
	CHECK(merge_into(ga, gb, MERGE_OR, &why) == -1);
	CHECK(strcmp(why, "insertion counts overflow") == 0);
	cascade_free(a);
	cascade_free(b);
	cascade_free(a_copy);
	cascade_free(ga);
	cascade_free(gb);
}

/* ---- streamed --------------------------------------------------------- */

/* Merge the file at path into c by streaming (unit.h: test_counting.c uses it too). */
int unit_merge_file(struct cascade *c, const char *path, enum merge_op op, const char **why)
{
	struct cascade *shape;
	struct format_reader *r;
	int fd = open(path, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	r = format_open(fd, &shape, why);
	if (r == NULL) {
		close(fd);
		return -1;
	}
	ret = merge_stream(c, r, shape, op, why);
	cascade_free(shape);
	close(fd);
	return ret;
}

/* into twice (a copy through a file), other saved: memory and stream merges compared. */
static int stream_matches_memory(struct cascade *into, const struct cascade *other,
				 enum merge_op op)
{
	struct cascade *twin = copy_of(into, "twin.bf");
	const char *why = "", *path = tmp_path("other.bf");
	int same;

	if (twin == NULL || format_save_path(other, path, &why) < 0)
		return 0;
	if (merge_into(into, other, op, &why) < 0 || unit_merge_file(twin, path, op, &why) < 0) {
		printf("#   %s\n", why);
		cascade_free(twin);
		return 0;
	}
	same = same_cascade(into, twin, 1);
	cascade_free(twin);
	return same;
}

/* 2^24 + 1536 bits: two whole 1 MiB pieces and a short one. */
static void stream_equals_memory_for_fixed_filters(void)
{
	struct filter_params p = base_params();
	struct cascade *a, *b;

	p.m = (UINT64_C(1) << 24) + 512 * 3;
	p.layout = FILTER_CLASSIC;
	a = fixed_with(&p, "a", 0, 200000);
	b = fixed_with(&p, "b", 0, 300000);
	CHECK(a != NULL && b != NULL);
	CHECK(stream_matches_memory(a, b, MERGE_OR));
	CHECK(stream_matches_memory(a, b, MERGE_AND));
	cascade_free(a);
	cascade_free(b);
}

static void stream_equals_memory_for_growing_filters(void)
{
	struct cascade *a = growing_with("a", 1500, 1), *b = growing_with("b", 5000, 1);

	CHECK(a != NULL && b != NULL);
	CHECK(stream_matches_memory(a, b, MERGE_OR));	/* a gains b's third stage */
	CHECK(a->nstages == 3);
	CHECK(stream_matches_memory(b, a, MERGE_OR));	/* b is the longer */
	cascade_free(a);
	cascade_free(b);
}

static void stream_refusals_leave_into_alone(void)
{
	struct filter_params p = base_params(), q = base_params();
	struct cascade *a, *b, *a_copy, *grow = growing_with("g", 100, 1);
	const char *why = "";

	q.key[0] ^= 1;
	a = fixed_with(&p, "a", 0, 1000);
	b = fixed_with(&q, "b", 0, 1000);
	a_copy = copy_of(a, "streamalone.bf");
	CHECK(a != NULL && b != NULL && a_copy != NULL && grow != NULL);
	CHECK(format_save_path(b, tmp_path("otherkey.bf"), &why) == 0);
	CHECK(unit_merge_file(a, tmp_path("otherkey.bf"), MERGE_OR, &why) == -1);
	CHECK(strcmp(why, "key") == 0 && same_cascade(a, a_copy, 0));
	CHECK(format_save_path(grow, tmp_path("grow.bf"), &why) == 0);
	CHECK(unit_merge_file(grow, tmp_path("grow.bf"), MERGE_AND, &why) == -1);
	CHECK(strcmp(why, "cannot intersect growing filters") == 0);
	cascade_free(a);
	cascade_free(b);
	cascade_free(a_copy);
	cascade_free(grow);
}

static void stream_reports_a_corrupt_file(void)
{
	struct filter_params p = base_params();
	struct cascade *a = fixed_with(&p, "a", 0, 1000), *b = fixed_with(&p, "b", 0, 1000);
	const char *why = "", *path = tmp_path("corrupt.bf");
	unsigned char byte;
	int fd;

	CHECK(a != NULL && b != NULL && format_save_path(b, path, &why) == 0);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && lseek(fd, -8, SEEK_END) >= 0 && read(fd, &byte, 1) == 1);
	byte ^= 1;	/* the CRC-32: found only after every bit was read */
	CHECK(lseek(fd, -8, SEEK_END) >= 0 && write(fd, &byte, 1) == 1);
	close(fd);
	CHECK(unit_merge_file(a, path, MERGE_OR, &why) == -1);
	CHECKF(strcmp(why, "corrupt: checksum mismatch") == 0, "got %s", why);
	cascade_free(a);
	cascade_free(b);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/*
 * In a child, so the peak is this merge's: into is 32 MiB with every page
 * touched; streaming a 32 MiB file into it may add the read buffer, zlib's
 * window and the piece buffer (about 2 MiB), never a second filter. The
 * bound, 8 MiB, is a quarter of what a second copy would cost.
 */
static void stream_merge_memory_stays_near_one_filter(void)
{
	struct filter_params p = base_params();
	const char *why = "", *path = tmp_path("big.bf");
	struct cascade *b;
	pid_t pid;
	int status;

	p.m = UINT64_C(1) << 28;	/* 32 MiB */
	b = fixed_with(&p, "b", 0, 1000);
	CHECK(b != NULL && format_save_path(b, path, &why) == 0);
	cascade_free(b);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct cascade *a = cascade_new_fixed(&p, &why);
		long before, after;

		if (a == NULL)
			_exit(2);
		memset(a->stages[0]->words, 0x11, p.m / 8);
		before = max_rss_kib();
		if (unit_merge_file(a, path, MERGE_OR, &why) < 0)
			_exit(3);
		after = max_rss_kib();
		printf("# streaming a 32 MiB filter in raised the peak by %ld KiB\n", after - before);
		fflush(stdout);
		cascade_free(a);	/* so that valgrind's leak check passes the child */
		_exit(after - before < 8 * 1024 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* ---- the suite -------------------------------------------------------- */

static void no_scratch_directory(void)
{
	CHECKF(0, "mkdtemp %s failed", tmpdir);
}

static void remove_tmpdir(void)
{
	static const char *names[] = { "and.bf", "alone.bf", "grown.bf", "overflow.bf", "twin.bf",
				       "other.bf", "streamalone.bf", "otherkey.bf", "grow.bf",
				       "corrupt.bf", "big.bf" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(tmp_path(names[i]));
	rmdir(tmpdir);
}

static int all_zero_words(const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] != 0)
			return 0;
	return 1;
}
/* A 64 MiB blocked filter, not staged, with the keys "m-from" .. "m-(from + n - 1)". */
static struct filter *sparse_filter(uint64_t from, size_t n)
{
	struct filter_params p = { 0 };
	const char *why;
	struct filter *f;
	char text[32];

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 7;
	p.m = (UINT64_C(64) << 20) * 8;
	p.capacity = 1000;
	p.target_p = 0.01;
	memset(p.key, 7, sizeof p.key);
	if ((f = filter_new(&p, &why)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct line key = { text, (size_t)snprintf(text, sizeof text, "m-%llu", (unsigned long long)(from + i)) };

		filter_add(f, &key, 1);
	}
	return f;
}

/*
 * OR and AND of two filters of 64 MiB holding 100 keys each: the bits of
 * a plain word-by-word OR and AND, while the pages in memory are only the
 * keys' (OR: into's and the other's; AND: into's, those the other lacks
 * cleared): never the 16,384 pages of either array.
 */
static void merging_sparse_filters_touches_only_their_pages(void)
{
	const size_t bytes = UINT64_C(64) << 20, words = bytes / 8;
	struct filter *a = sparse_filter(0, 100), *b = sparse_filter(1000, 100), *c = sparse_filter(0, 50);
	uint64_t *want = malloc(bytes);
	long pa, pb, pc, after;

	CHECK(a != NULL && b != NULL && c != NULL && want != NULL);
	pa = unit_resident_pages(a->words, bytes);
	pb = unit_resident_pages(b->words, bytes);
	pc = unit_resident_pages(c->words, bytes);
	CHECKF(pa > 0 && pa <= 100 && pb > 0 && pb <= 100, "%ld and %ld pages", pa, pb);
	/* page by page, reading only pages in memory: reading the others would back them */
	for (size_t i = 0; i < words; i += 512) {
		int in_a = unit_resident_pages(a->words + i, 4096) > 0, in_b = unit_resident_pages(b->words + i, 4096) > 0;

		for (size_t j = i; j < i + 512; j++)
			want[j] = (in_a ? a->words[j] : 0) | (in_b ? b->words[j] : 0);
	}
	merge_words(a, a->words, b->words, words, MERGE_OR);
	after = unit_resident_pages(a->words, bytes);
	CHECKF(after <= pa + pb && unit_resident_pages(b->words, bytes) == pb, "%ld pages after the OR", after);
	for (size_t i = 0; i < words; i += 512)
		if (unit_resident_pages(a->words + i, 4096))
			CHECK(memcmp(a->words + i, want + i, 4096) == 0);
		else
			CHECK(all_zero_words(want + i, 512));
	/* AND with c (50 of a's first 100 keys): c's bits, as c's keys are a's */
	merge_words(a, a->words, c->words, words, MERGE_AND);
	CHECKF(unit_resident_pages(a->words, bytes) == after && unit_resident_pages(c->words, bytes) == pc,
	       "%ld pages after the AND", unit_resident_pages(a->words, bytes));
	for (size_t i = 0; i < words; i += 512)
		if (unit_resident_pages(c->words + i, 4096))
			CHECK(memcmp(a->words + i, c->words + i, 4096) == 0);
		else if (unit_resident_pages(a->words + i, 4096))
			CHECK(all_zero_words(a->words + i, 512));
	free(want);
	filter_free(a);
	filter_free(b);
	filter_free(c);
}

void suite_merge(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/bftools-merge-XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		unit_run("merge: a scratch directory can be made", no_scratch_directory);
		return;
	}
	unit_run("merge: OR and AND of sparse filters touch only the pages their keys are in",
		 merging_sparse_filters_touches_only_their_pages);
	unit_run("merge: OR of filters of disjoint key sets is the filter of their union, bit for bit",
		 or_of_disjoint_sets_is_the_filter_of_the_union);
	unit_run("merge: AND is the AND of the bits and keeps every key both held",
		 and_keeps_the_keys_of_both);
	unit_run("merge: size, key, hashes, layout, normalisation, hash function differences are named",
		 incompatible_filters_are_named_and_left_alone);
	unit_run("merge: fixed against growing, or different tightening, is named \"growth\"",
		 growth_differences_are_named);
	unit_run("merge: OR of growing filters carries the other's extra stages over, bit for bit",
		 growing_or_carries_extra_stages);
	unit_run("merge: OR into the longer growing filter keeps its stages and every key",
		 growing_or_into_the_longer_keeps_its_stages);
	unit_run("merge: AND of growing filters is refused", and_of_growing_filters_is_refused);
	unit_run("merge: insertion counts that would overflow are refused, into untouched",
		 insertion_overflow_is_refused);
	unit_run("merge: streaming a fixed filter in (OR, AND) gives exactly the in-memory result",
		 stream_equals_memory_for_fixed_filters);
	unit_run("merge: streaming a growing filter in gives exactly the in-memory result",
		 stream_equals_memory_for_growing_filters);
	unit_run("merge: a streamed merge refused before reading leaves into alone",
		 stream_refusals_leave_into_alone);
	unit_run("merge: a streamed merge reports a CRC found bad at the end",
		 stream_reports_a_corrupt_file);
	unit_run("merge: streaming a 32 MiB filter in raises peak memory by under 8 MiB",
		 stream_merge_memory_stays_near_one_filter);
	remove_tmpdir();
}
