/* SPDX-License-Identifier: MIT */
/*
 * test_counting.c - the counting layout (4-bit counters, filter.h): adding
 * counts, removing uncounts, a saturated counter never moves again, a key
 * never added is reported and changes nothing, the fill statistics are
 * classic's read off non-zero counters, sizing is classic's in counters
 * at 4 bits each, files keep the counters (low nibble first) and the
 * removals, and merging adds counters (OR) or keeps the smaller (AND).
 *
 * Everything uses fixed SipHash keys and key strings, so every run sees
 * the same counters; no assertion depends on chance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "merge.h"
#include "sizing.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

static const unsigned char fixed_key[16] = {
	0x63, 0x6f, 0x75, 0x6e, 0x74, 0x69, 0x6e, 0x67,
	0x2d, 0x75, 0x6e, 0x69, 0x74, 0x2d, 0x6b, 0x79,
};

static char tmpdir[256];
static char pathbuf[512];

static const char *tmp_path(const char *name)
{
	snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
	return pathbuf;
}

static struct filter_params counting_params(uint64_t m, uint32_t k)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_COUNTING;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = k;
	p.m = m;
	p.capacity = 1000;
	p.target_p = 0.001;
	memcpy(p.key, fixed_key, sizeof fixed_key);
	return p;
}

static struct filter *counting_filter(uint64_t m, uint32_t k)
{
	struct filter_params p = counting_params(m, k);
	const char *why;

	return filter_new(&p, &why);
}

/* A filter of layout sized for n keys at rate p. */
static struct filter *sized(enum filter_layout layout, uint64_t n, double p)
{
	struct filter_params params = counting_params(512, 1);
	const char *why;

	params.layout = layout;
	params.capacity = n;
	params.target_p = p;
	if (sizing_choose(layout, n, p, &params.m, &params.k, &why) < 0)
		return NULL;
	return filter_new(&params, &why);
}

/* Counter i of a counting filter, read as the file lays it out. */
static unsigned counter(const struct filter *f, uint64_t i)
{
	return (unsigned)(f->words[i / 16] >> (4 * (i % 16))) & 15u;
}

static void set_counter(struct filter *f, uint64_t i, unsigned value)
{
	uint64_t shift = 4 * (i % 16);

	f->words[i / 16] = (f->words[i / 16] & ~(UINT64_C(15) << shift)) | (uint64_t)value << shift;
}

struct keys {
	struct line *keys;
	char *text;
};

/* Keys "<prefix><i>" for i in [from, from + n). */
static int keys_make(struct keys *ks, const char *prefix, size_t from, size_t n)
{
	char *p;

	ks->keys = malloc((n ? n : 1) * sizeof *ks->keys);
	p = ks->text = malloc((n ? n : 1) * 32);
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

static void keys_free(struct keys *ks)
{
	free(ks->keys);
	free(ks->text);
}

static size_t count_present(const struct filter *f, const struct line *keys, size_t n)
{
	unsigned char *present = malloc(n);
	size_t hits = 0;

	if (present == NULL)
		return (size_t)-1;
	filter_test(f, keys, n, present);
	for (size_t i = 0; i < n; i++)
		hits += present[i];
	free(present);
	return hits;
}

static int key_present(const struct filter *f, struct line key)
{
	unsigned char present;

	filter_test(f, &key, 1, &present);
	return present;
}

/* ---- counting ------------------------------------------------------------ */

/*
 * One probe (k = 1): the key's counter counts its additions up to 15. At
 * 14 it is still exact, so 14 removals empty it; at 15 it is saturated
 * and no number of removals brings it down.
 */
static void a_counter_saturates_at_15_and_stays(void)
{
	struct filter *f = counting_filter(512, 1);
	struct line key = { "often", 5 };
	uint64_t pos;

	CHECK(f != NULL);
	filter_positions(f, key, &pos);
	for (int i = 0; i < 14; i++)
		filter_add(f, &key, 1);
	CHECK(counter(f, pos) == 14 && filter_saturated(f) == 0);
	for (int i = 0; i < 14; i++)
		CHECK(filter_remove(f, &key, 1) == 0);
	CHECK(counter(f, pos) == 0 && !key_present(f, key));
	for (int i = 0; i < 40; i++)
		filter_add(f, &key, 1);
	CHECK(counter(f, pos) == 15 && filter_saturated(f) == 1);
	for (int i = 0; i < 40; i++)
		CHECK(filter_remove(f, &key, 1) == 0);
	CHECK(counter(f, pos) == 15 && filter_saturated(f) == 1 && key_present(f, key));
	CHECK(f->insertions == 54 && f->removals == 54);
	filter_free(f);
}

/*
 * Counters count exactly while none saturates, so adding A and B and
 * removing A leaves the very counters of a filter that only ever held B:
 * every key of B is still present (no false negative can appear), and
 * the removed keys test present only as any key never added would.
 */
static void removing_half_leaves_the_filter_of_the_other_half(void)
{
	const size_t n = 20000;
	struct filter *f = sized(FILTER_COUNTING, n, 1e-3), *only_b = sized(FILTER_COUNTING, n, 1e-3);
	struct keys a, b;

	CHECK(f != NULL && only_b != NULL);
	CHECK(keys_make(&a, "a-", 0, n / 2) == 0 && keys_make(&b, "b-", 0, n / 2) == 0);
	filter_add(f, a.keys, n / 2);
	filter_add(f, b.keys, n / 2);
	filter_add(only_b, b.keys, n / 2);
	CHECK(filter_saturated(f) == 0);
	CHECK(filter_remove(f, a.keys, n / 2) == 0);
	CHECK(memcmp(f->words, only_b->words, filter_bytes(f)) == 0);
	CHECK(count_present(f, b.keys, n / 2) == n / 2);
	CHECK(f->insertions == n && f->removals == n / 2);
	keys_free(&a);
	keys_free(&b);
	filter_free(f);
	filter_free(only_b);
}

/*
 * Every key added and then removed as often, in any order, with repeats
 * and saturation: the keys still added more often than removed are all
 * present after every step.
 */
static void removal_never_makes_a_false_negative(void)
{
	struct filter *f = counting_filter(2048, 6);
	struct keys ks;
	unsigned added[200] = { 0 };
	uint64_t state = 12345;

	CHECK(f != NULL && keys_make(&ks, "k", 0, 200) == 0);
	for (int step = 0; step < 20000; step++) {
		size_t i;

		state = state * 6364136223846793005u + 1442695040888963407u;
		i = (size_t)(state >> 33) % 200;
		if ((state >> 20) % 3 != 0 || added[i] == 0) {
			filter_add(f, &ks.keys[i], 1);
			added[i]++;
		} else {
			CHECK(filter_remove(f, &ks.keys[i], 1) == 0);
			added[i]--;
		}
		for (size_t j = 0; j < 200; j++)
			CHECKF(added[j] == 0 || key_present(f, ks.keys[j]),
			       "step %d: key %zu added %u more times than removed, absent", step, j,
			       added[j]);
	}
	CHECK(filter_saturated(f) > 0);	/* the walk did reach saturation */
	keys_free(&ks);
	filter_free(f);
}

/*
 * A key never added has a counter at 0 (the filter is nearly empty): it
 * is counted, and nothing changes, even where its first counter is shared
 * with a key that was added and had to be put back.
 */
static void removing_a_key_never_added_is_reported_and_changes_nothing(void)
{
	struct filter *f = counting_filter(512, 4);
	struct line added = { "added", 5 };
	uint64_t mine[FILTER_K_MAX], theirs[FILTER_K_MAX];
	unsigned char *before;
	struct keys others;
	size_t shared = 0, false_positives;

	CHECK(f != NULL && keys_make(&others, "never-", 0, 20000) == 0);
	filter_add(f, &added, 1);
	filter_positions(f, added, mine);
	before = malloc(filter_bytes(f));
	CHECK(before != NULL);
	memcpy(before, f->words, filter_bytes(f));
	/* 4 counters of 512 set: a few of 20000 others test present, and are removed */
	false_positives = count_present(f, others.keys, 20000);
	CHECK(filter_remove(f, others.keys, 20000) == 20000 - false_positives);
	CHECK(f->removals == false_positives);
	memcpy(f->words, before, filter_bytes(f));
	f->removals = 0;
	/* a key whose first counter is "added"'s: at 1/512 a key, 20000 tries find ~39 */
	for (size_t i = 0; i < 20000 && shared == 0; i++) {
		filter_positions(f, others.keys[i], theirs);
		if (theirs[0] == mine[0] && !key_present(f, others.keys[i]))
			shared = i + 1;
	}
	CHECK(shared != 0);
	CHECK(filter_remove(f, &others.keys[shared - 1], 1) == 1);
	CHECK(memcmp(f->words, before, filter_bytes(f)) == 0 && f->removals == 0);
	free(before);
	keys_free(&others);
	filter_free(f);
}

static void test_and_add_counts_every_key(void)
{
	struct filter *f = counting_filter(4096, 5);
	struct line keys[2] = { { "twice", 5 }, { "twice", 5 } };
	unsigned char present[2];

	CHECK(f != NULL);
	CHECK(filter_test_and_add(f, keys, 2, present) == 1);
	CHECK(present[0] == 0 && present[1] == 1);
	CHECK(filter_remove(f, keys, 1) == 0 && key_present(f, keys[0]));
	CHECK(filter_remove(f, keys, 1) == 0 && !key_present(f, keys[0]));
	CHECK(filter_remove(f, keys, 1) == 1);
	filter_free(f);
}

/*
 * Counting and classic share the probe sequence, so with the same key, m
 * and k a counting filter's non-zero counters are exactly a classic
 * filter's set bits, and every figure read off the fill is the same.
 */
static void fill_statistics_read_non_zero_counters_as_set_bits(void)
{
	const size_t n = 30000;
	struct filter *c = sized(FILTER_COUNTING, n, 1e-2), *b = sized(FILTER_CLASSIC, n, 1e-2);
	struct keys ks;

	CHECK(c != NULL && b != NULL && keys_make(&ks, "fill-", 0, n) == 0);
	CHECK(c->params.m == b->params.m && c->params.k == b->params.k);
	filter_add(c, ks.keys, n);
	filter_add(c, ks.keys, n / 3);	/* repeats raise counters, not the fill */
	filter_add(b, ks.keys, n);
	CHECK(filter_bits_set(c) == filter_bits_set(b));
	CHECK(filter_estimate_count(c) == filter_estimate_count(b));
	CHECK(filter_current_fpr(c) == filter_current_fpr(b));
	CHECK(filter_sampled_fill(c, UINT64_MAX) == filter_sampled_fill(b, UINT64_MAX));
	keys_free(&ks);
	filter_free(c);
	filter_free(b);
}

/* 1e6 keys at 1e-3: classic's 14.38 counters a key, at 4 bits each 7.2 MB. */
static void sizing_is_classic_in_counters_at_4_bits_each(void)
{
	uint64_t mc, mb;
	uint32_t kc, kb;
	const char *why;
	struct filter_params p = counting_params(512, 1);
	struct cascade *c;

	CHECK(sizing_choose(FILTER_COUNTING, 1000000, 1e-3, &mc, &kc, &why) == 0);
	CHECK(sizing_choose(FILTER_CLASSIC, 1000000, 1e-3, &mb, &kb, &why) == 0);
	CHECK(mc == mb && kc == kb);
	CHECKF(mc > 14370000 && mc < 14390000, "m = %llu", (unsigned long long)mc);
	p.m = mc;
	p.k = kc;
	CHECK(filter_array_bytes(&p) == mc / 2);
	c = cascade_new_fixed(&p, &why);
	CHECK(c != NULL);
	CHECK(cascade_bytes(c) == mc / 2 && filter_bytes(c->stages[0]) == mc / 2);
	cascade_free(c);
	CHECK(sizing_fpr(FILTER_COUNTING, 1000, 20000, 7) == sizing_fpr(FILTER_CLASSIC, 1000, 20000, 7));
}

/* ---- removal refused ------------------------------------------------------ */

static void removal_is_refused_for_other_layouts_and_growing_filters(void)
{
	struct filter_params p = counting_params(512, 3);
	struct line key = { "x", 1 };
	const char *why = "";
	struct cascade *bits, *grow;
	size_t absent = 7;

	p.layout = FILTER_CLASSIC;
	bits = cascade_new_fixed(&p, &why);
	CHECK(bits != NULL);
	CHECK(cascade_add(bits, &key, 1, &why) == 0);
	CHECK(cascade_remove(bits, &key, 1, &absent, &why) == -1 && absent == 7);
	CHECK(strcmp(why, "only a counting filter can remove keys") == 0);
	CHECK(filter_remove(bits->stages[0], &key, 1) == 1 && key_present(bits->stages[0], key));
	cascade_free(bits);
	p.layout = FILTER_COUNTING;
	grow = cascade_new_growing(&p, 0.01, 2, 1, &why);
	CHECK(grow != NULL);
	CHECK(cascade_remove(grow, NULL, 0, NULL, &why) == -1 && strstr(why, "growing") != NULL);
	cascade_free(grow);
}

/* ---- files ------------------------------------------------------------- */

/* The first len bytes of the content of the gzip file at path. */
static int read_content(const char *path, unsigned char *buf, unsigned len)
{
	gzFile gz = gzopen(path, "rb");
	int got;

	if (gz == NULL)
		return -1;
	got = gzread(gz, buf, len);
	gzclose(gz);
	return got == (int)len ? 0 : -1;
}

static uint64_t le(const unsigned char *p, unsigned len)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < len; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * Saved and loaded: the same counters, insertions and removals; the stage
 * header says layout 3, payload m / 2, removals at offset 48; counter 0
 * is the low nibble of the payload's first byte, counter 1 the high one.
 */
static void a_file_keeps_counters_and_removals(void)
{
	struct filter_params p = counting_params(1024, 3);
	unsigned char head[128 + 2];
	const char *why = "";
	struct cascade *c = cascade_new_fixed(&p, &why), *back;
	struct keys ks;

	CHECK(c != NULL && keys_make(&ks, "file-", 0, 50) == 0);
	CHECK(cascade_add(c, ks.keys, 50, &why) == 0);
	CHECK(cascade_remove(c, ks.keys, 10, NULL, &why) == 0);
	set_counter(c->stages[0], 0, 9);
	set_counter(c->stages[0], 1, 15);
	CHECK(format_save_path(c, tmp_path("counting.bf"), &why) == 0);
	back = format_load_path(tmp_path("counting.bf"), &why);
	CHECKF(back != NULL, "%s", why);
	CHECK(back->stages[0]->params.layout == FILTER_COUNTING && back->stages[0]->params.m == 1024);
	CHECK(back->stages[0]->insertions == 50 && back->stages[0]->removals == 10);
	CHECK(memcmp(back->stages[0]->words, c->stages[0]->words, 512) == 0);
	CHECK(filter_saturated(back->stages[0]) == filter_saturated(c->stages[0]));
	CHECK(read_content(tmp_path("counting.bf"), head, sizeof head) == 0);
	CHECK(head[64] == 3 && le(head + 64 + 40, 8) == 512 && le(head + 64 + 48, 8) == 10);
	CHECK(head[128] == 0xf9);
	cascade_free(back);
	cascade_free(c);
	keys_free(&ks);
}

/* The content of path with byte at set to value, written back as a new gzip file. */
static int edit_content(const char *path, size_t at, unsigned char value)
{
	unsigned char buf[4096];
	gzFile in = gzopen(path, "rb"), out;
	int len;

	if (in == NULL)
		return -1;
	len = gzread(in, buf, sizeof buf);
	gzclose(in);
	if (len <= 0 || (size_t)len <= at || (out = gzopen(path, "wb")) == NULL)
		return -1;
	buf[at] = value;
	len = gzwrite(out, buf, (unsigned)len) == len ? 0 : -1;
	return gzclose(out) == Z_OK ? len : -1;
}

/* What loading path says after its byte at was set to value. */
static const char *load_error(const char *path, size_t at, unsigned char value)
{
	const char *why = NULL;
	struct cascade *c;

	if (edit_content(path, at, value) < 0)
		return "(edit failed)";
	c = format_load_path(path, &why);
	if (c != NULL) {
		cascade_free(c);
		return "(loaded)";
	}
	return why;
}

/*
 * Layout 3 asks for a payload of m / 2: a bit layout's m / 8 is refused,
 * and a bit layout's header with removals (its reserved bytes) is too.
 */
static void headers_are_checked_for_the_counting_layout(void)
{
	struct filter_params p = counting_params(512, 3);
	const char *why = "", *path = tmp_path("edited.bf");
	struct cascade *c;

	p.layout = FILTER_CLASSIC;
	c = cascade_new_fixed(&p, &why);
	CHECK(c != NULL && format_save_path(c, path, &why) == 0);
	why = load_error(path, 64, 3);	/* classic's m / 8 = 64 under layout 3 */
	CHECKF(strcmp(why, "bad header: payload length is not m / 2") == 0, "got %s", why);
	CHECK(format_save_path(c, path, &why) == 0);
	why = load_error(path, 64 + 48, 1);	/* removals in a classic stage */
	CHECKF(strcmp(why, "bad header: stage reserved field not zero") == 0, "got %s", why);
	cascade_free(c);
	p.layout = FILTER_COUNTING;
	c = cascade_new_fixed(&p, &why);
	CHECK(c != NULL && format_save_path(c, path, &why) == 0);
	why = load_error(path, 64 + 56, 1);	/* still reserved in a counting stage */
	CHECKF(strcmp(why, "bad header: stage reserved field not zero") == 0, "got %s", why);
	cascade_free(c);
	unlink(path);
}

/* ---- merging ------------------------------------------------------------- */

/* Two filters with every pair (a, b) of counter values: a at counter 16a + b of x, b of y. */
static int every_pair(struct cascade **x, struct cascade **y)
{
	struct filter_params p = counting_params(512, 3);
	const char *why;

	*x = cascade_new_fixed(&p, &why);
	*y = cascade_new_fixed(&p, &why);
	if (*x == NULL || *y == NULL)
		return -1;
	for (unsigned a = 0; a < 16; a++)
		for (unsigned b = 0; b < 16; b++) {
			set_counter((*x)->stages[0], 16 * a + b, a);
			set_counter((*y)->stages[0], 16 * a + b, b);
		}
	(*x)->stages[0]->removals = 4;
	(*y)->stages[0]->removals = 5;
	return 0;
}

/* After x := x OP y over every pair: OR is min(a + b, 15), AND is min(a, b). */
static int pairs_combined(const struct cascade *x, enum merge_op op)
{
	for (unsigned a = 0; a < 16; a++)
		for (unsigned b = 0; b < 16; b++) {
			unsigned want = op == MERGE_OR ? (a + b > 15 ? 15 : a + b) : (a < b ? a : b);

			if (counter(x->stages[0], 16 * a + b) != want)
				return 0;
		}
	return x->stages[0]->removals == 9;
}

static void merging_adds_counters_or_keeps_the_smaller(void)
{
	enum merge_op ops[2] = { MERGE_OR, MERGE_AND };

	for (int i = 0; i < 2; i++) {
		struct cascade *x, *y;
		const char *why = "";

		CHECK(every_pair(&x, &y) == 0);
		CHECK(merge_into(x, y, ops[i], &why) == 0);
		CHECKF(pairs_combined(x, ops[i]), "in memory, %s", i == 0 ? "OR" : "AND");
		cascade_free(x);
		cascade_free(y);
	}
}

static void streamed_merges_add_counters_or_keep_the_smaller(void)
{
	enum merge_op ops[2] = { MERGE_OR, MERGE_AND };

	for (int i = 0; i < 2; i++) {
		struct cascade *x, *y;
		const char *why = "";

		CHECK(every_pair(&x, &y) == 0);
		CHECK(format_save_path(y, tmp_path("y.bf"), &why) == 0);
		CHECKF(unit_merge_file(x, tmp_path("y.bf"), ops[i], &why) == 0, "%s", why);
		CHECKF(pairs_combined(x, ops[i]), "streamed, %s", i == 0 ? "OR" : "AND");
		cascade_free(x);
		cascade_free(y);
	}
}

/* A counting filter and a classic one of the same m, k and key do not mix. */
static void a_counting_filter_merges_only_with_counting_ones(void)
{
	struct filter_params p = counting_params(1024, 3);
	const char *why = "";
	struct cascade *c = cascade_new_fixed(&p, &why), *b;

	p.layout = FILTER_CLASSIC;
	b = cascade_new_fixed(&p, &why);
	CHECK(c != NULL && b != NULL);
	CHECK(merge_into(c, b, MERGE_OR, &why) == -1 && strcmp(why, "layout") == 0);
	CHECK(merge_into(b, c, MERGE_OR, &why) == -1 && strcmp(why, "layout") == 0);
	cascade_free(c);
	cascade_free(b);
}

/* ---- the suite ------------------------------------------------------------- */

static void no_scratch_directory(void)
{
	CHECKF(0, "mkdtemp %s failed", tmpdir);
}

void suite_counting(void);
void suite_counting(void)
{
	const char *base = getenv("TMPDIR");

	unit_run("counting: a counter saturates at 15 and no removal brings it down",
		 a_counter_saturates_at_15_and_stays);
	unit_run("counting: removing half the keys leaves exactly the filter of the other half",
		 removing_half_leaves_the_filter_of_the_other_half);
	unit_run("counting: keys added more often than removed stay present through 20000 steps",
		 removal_never_makes_a_false_negative);
	unit_run("counting: removing a key never added is reported and changes no counter",
		 removing_a_key_never_added_is_reported_and_changes_nothing);
	unit_run("counting: test-and-add counts every key, so each addition can be removed",
		 test_and_add_counts_every_key);
	unit_run("counting: fill, estimates and rate read non-zero counters as classic's set bits",
		 fill_statistics_read_non_zero_counters_as_set_bits);
	unit_run("counting: sized as classic in counters, at 4 bits of memory each",
		 sizing_is_classic_in_counters_at_4_bits_each);
	unit_run("counting: removal is refused for bit layouts and growing filters",
		 removal_is_refused_for_other_layouts_and_growing_filters);
	unit_run("counting: merge OR adds counters (saturating), AND keeps the smaller, in memory",
		 merging_adds_counters_or_keeps_the_smaller);
	unit_run("counting: a counting filter does not merge with a classic one",
		 a_counting_filter_merges_only_with_counting_ones);
	snprintf(tmpdir, sizeof tmpdir, "%s/bftools-counting-XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		unit_run("counting: a scratch directory can be made", no_scratch_directory);
		return;
	}
	unit_run("counting: a file keeps the counters (low nibble first) and the removals",
		 a_file_keeps_counters_and_removals);
	unit_run("counting: stage headers are checked for the counting layout",
		 headers_are_checked_for_the_counting_layout);
	unit_run("counting: streamed merges add counters or keep the smaller, as in memory",
		 streamed_merges_add_counters_or_keep_the_smaller);
	unlink(tmp_path("counting.bf"));
	unlink(tmp_path("y.bf"));
	rmdir(tmpdir);
}
