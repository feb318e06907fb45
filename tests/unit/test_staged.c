/* SPDX-License-Identifier: MIT */
/*
 * test_staged.c - a fresh big blocked filter keeps its first blocks in a
 * table (staged.h, filter_stage): the table itself; every answer, bit and
 * figure the same as the same filter's without a table; going dense at
 * the threshold, from one thread or many; and the saves and merges that
 * need the array finding the bits there.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "merge.h"
#include "staged.h"
#include "unit.h"

/* 128 MiB: 64 spans, so dense at 64 x FILTER_DENSE_KEYS_PER_SPAN = 32,768 blocks */
#define BYTES (UINT64_C(128) << 20)
#define THRESHOLD (BYTES / FILTER_BACK_SPAN * FILTER_DENSE_KEYS_PER_SPAN)

static const unsigned char the_key[16] = { 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
					   0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

static struct filter_params params_of(uint64_t bytes)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 7;
	p.m = bytes * 8;
	p.capacity = 1000;
	p.target_p = 0.01;
	memcpy(p.key, the_key, sizeof the_key);
	return p;
}

/* A BYTES filter, staged or not. */
static struct filter *fresh(int staged)
{
	struct filter_params p = params_of(BYTES);
	const char *why;
	struct filter *f = filter_new(&p, &why);

	if (f != NULL && staged)
		filter_stage(f);
	return f;
}

static int is_staged(const struct filter *f)
{
	return f->staged != NULL && __atomic_load_n(&f->staged->active, __ATOMIC_ACQUIRE);
}

/* Keys "s-N" for N in [from, from + n), the lines pointing into one buffer. */
struct keys {
	struct line *line;
	char *text;
};

static int make_keys(struct keys *k, uint64_t from, size_t n)
{
	char *p;

	k->line = malloc(n * sizeof *k->line);
	k->text = malloc(n * 24);
	if (k->line == NULL || k->text == NULL)
		return -1;
	p = k->text;
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(p, 24, "s-%llu", (unsigned long long)(from + i));

		k->line[i].data = p;
		k->line[i].len = (size_t)len;
		p += len + 1;
	}
	return 0;
}

static void free_keys(struct keys *k)
{
	free(k->line);
	free(k->text);
}

/* Distinct block bases: i times an odd number, modulo 2^31, is one-to-one. */
static uint64_t base_of(uint64_t i)
{
	return (i * UINT64_C(2654435761) % (UINT64_C(1) << 31)) * STAGED_BLOCK_WORDS;
}

static void sum_bases(void *ctx, uint64_t base, const uint64_t *words)
{
	uint64_t *sum = ctx;

	sum[0] += base;
	sum[1]++;
	sum[2] += words[base / STAGED_BLOCK_WORDS % STAGED_BLOCK_WORDS];
}

/*
 * 50,000 blocks in, grown from nothing (prefetches asked on the way),
 * each on a cache line of its own, found with what was written in it
 * and nothing else, 50,000 others not found, each visited once, and
 * an emptied table empty and usable again.
 */
static void the_table_finds_what_it_holds(void)
{
	const uint64_t n = 50000;
	struct staged *s = staged_new();
	uint64_t sum[3] = { 0, 0, 0 }, want_bases = 0, want_marks = 0;

	CHECK(s != NULL && s->active == 1 && s->used == 0);
	CHECK(staged_block(s, base_of(0), 0) == NULL);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *w;

		if (i % 1000 == 0)
			CHECK(staged_reserve(s, 1000) == 0);
		if (i % 7 == 0) {
			uint64_t ahead[3] = { base_of(i), base_of(i + 1), base_of(n + i) };

			staged_prefetch(s, ahead, 3);	/* a hint: it changes nothing */
		}
		w = staged_block(s, base_of(i), 1);
		/* a block is one cache line: a search reads its keys, then that line alone */
		CHECKF(w != NULL && (uintptr_t)w % 64 == 0, "block %llu at %p", (unsigned long long)i, (void *)w);
		for (unsigned j = 0; j < STAGED_BLOCK_WORDS; j++)
			CHECK(w[j] == 0);
		w[base_of(i) / STAGED_BLOCK_WORDS % STAGED_BLOCK_WORDS] = i + 1;
		want_bases += base_of(i);
		want_marks += i + 1;
	}
	CHECKF(s->used == n && s->capacity >= n * 4 / 3, "used %llu of %llu", (unsigned long long)s->used,
	       (unsigned long long)s->capacity);
	for (uint64_t i = 0; i < n; i++) {
		const uint64_t *w = staged_block(s, base_of(i), 0);
		unsigned mark = (unsigned)(base_of(i) / STAGED_BLOCK_WORDS % STAGED_BLOCK_WORDS);

		CHECKF(w != NULL, "block %llu lost", (unsigned long long)i);
		for (unsigned j = 0; j < STAGED_BLOCK_WORDS; j++)
			CHECK(w[j] == (j == mark ? i + 1 : 0));
		CHECK(staged_block(s, base_of(n + i), 0) == NULL);
	}
	staged_each(s, sum_bases, sum);
	CHECK(sum[0] == want_bases && sum[1] == n && sum[2] == want_marks);
	staged_clear(s);
	CHECK(s->used == 0 && staged_block(s, base_of(0), 0) == NULL);
	CHECK(staged_reserve(s, 1) == 0 && staged_block(s, base_of(7), 1) != NULL && s->used == 1);
	staged_free(s);
}

/*
 * 20,000 keys tested and added (every fourth a repeat), 1,000 more added:
 * a staged filter answers each as one without the table, its bits set,
 * rate, statistics and fill are the same to the last bit, and all the
 * while not one page of its array is resident. Settled, its array is the
 * other's word for word, a page or so a key, and both go on alike.
 */
static void a_staged_filter_answers_as_its_array_would(void)
{
	const size_t n = 20000;
	struct filter *f = fresh(1), *g = fresh(0);
	unsigned char *pf = malloc(2 * n), *pg = malloc(2 * n);
	struct keys k, more;
	struct filter_stats sf, sg;
	size_t fresh_f, fresh_g;
	double rf, rg;
	long pages;

	CHECK(f != NULL && g != NULL && pf != NULL && pg != NULL && is_staged(f) && !is_staged(g));
	CHECK(make_keys(&k, 0, 2 * n) == 0 && make_keys(&more, 5000000, 1000) == 0);
	for (size_t i = 3; i < n; i += 4)
		k.line[i] = k.line[i / 4];
	fresh_f = filter_test_and_add(f, k.line, n, pf);
	fresh_g = filter_test_and_add(g, k.line, n, pg);
	CHECKF(fresh_f == fresh_g && memcmp(pf, pg, n) == 0, "fresh %zu and %zu", fresh_f, fresh_g);
	CHECK(fresh_f < n && fresh_f > n / 2);
	filter_add(f, more.line, 1000);
	filter_add(g, more.line, 1000);
	filter_test(f, k.line, 2 * n, pf);
	filter_test(g, k.line, 2 * n, pg);
	CHECK(memcmp(pf, pg, 2 * n) == 0);
	CHECK(filter_bits_set(f) == filter_bits_set(g) && filter_bits_set(f) > 0);
	rf = filter_current_fpr(f);
	rg = filter_current_fpr(g);
	CHECKF(memcmp(&rf, &rg, sizeof rf) == 0, "rate %.17g staged, %.17g not", rf, rg);
	filter_stats_of(f, &sf);
	filter_stats_of(g, &sg);
	CHECK(sf.bits_set == sg.bits_set && sf.saturated == sg.saturated &&
	      memcmp(&sf.rate, &sg.rate, sizeof sf.rate) == 0);
	CHECK(filter_sampled_fill(f, 4096) == (double)filter_bits_set(g) / (double)(BYTES * 8));
	pages = unit_resident_pages(f->words, BYTES);
	CHECKF(is_staged(f) && pages == 0, "%ld pages of a staged array resident", pages);
	filter_settle(f);
	pages = unit_resident_pages(f->words, BYTES);
	CHECK(!is_staged(f) && memcmp(f->words, g->words, BYTES) == 0);
	CHECKF(pages > 0 && pages <= (long)(fresh_f + 1000), "%ld pages for %zu keys", pages, fresh_f + 1000);
	filter_test_and_add(f, k.line + n, n, pf);
	filter_test_and_add(g, k.line + n, n, pg);
	CHECK(memcmp(pf, pg, n) == 0 && memcmp(f->words, g->words, BYTES) == 0);
	free_keys(&k);
	free_keys(&more);
	free(pf);
	free(pg);
	filter_free(f);
	filter_free(g);
}

/*
 * Keys added one at a time: the filter stays staged until its table holds
 * THRESHOLD blocks less one, and the add that would bring it to THRESHOLD
 * makes it dense (huge pages asked for, the array backed), its blocks in
 * the array, word for word those of a filter never staged. Then repeats
 * of the same keys, however many, leave a staged filter staged.
 */
static void the_add_that_reaches_the_threshold_makes_it_dense(void)
{
	struct filter *f = fresh(1), *g = fresh(0), *r = fresh(1);
	struct keys k;
	uint64_t before = 0, added = 0;

	CHECK(f != NULL && g != NULL && r != NULL && make_keys(&k, 0, 2 * THRESHOLD) == 0);
	while (is_staged(f) && added < 2 * THRESHOLD) {
		before = f->staged->used;
		filter_add(f, k.line + added, 1);
		filter_add(g, k.line + added, 1);
		added++;
	}
	CHECKF(!is_staged(f) && before == THRESHOLD - 1, "dense after %llu blocks, %llu keys",
	       (unsigned long long)before, (unsigned long long)added);
	CHECK(f->backed[1] == 1 && f->staged->used == 0 && unit_resident_pages(f->words, BYTES) == BYTES / 4096);
	CHECK(memcmp(f->words, g->words, BYTES) == 0);
	for (int round = 0; round < 40; round++)
		filter_add(r, k.line, 1000);
	CHECK(is_staged(r) && r->staged->used <= 1000 && r->staged->adds == 40000);
	CHECK(unit_resident_pages(r->words, BYTES) == 0);
	free_keys(&k);
	filter_free(f);
	filter_free(g);
	filter_free(r);
}

/* filter_expect_dense on a staged filter: its blocks into the array, dense. */
static void expecting_dense_ends_the_staging(void)
{
	struct filter *f = fresh(1), *g = fresh(0);
	struct keys k;

	CHECK(f != NULL && g != NULL && make_keys(&k, 0, 3000) == 0);
	filter_add(f, k.line, 3000);
	filter_add(g, k.line, 3000);
	filter_expect_dense(f);
	CHECK(!is_staged(f) && f->backed[1] == 1 && memcmp(f->words, g->words, BYTES) == 0);
	free_keys(&k);
	filter_free(f);
	filter_free(g);
}

/*
 * Keys made ready (filter_ready_hashed, the hashing thread's call) back no
 * page of a staged filter and change no bit: the table is the filter.
 */
static void keys_made_ready_back_no_page_of_a_staged_filter(void)
{
	const size_t n = 2 * THRESHOLD;
	struct filter *f = fresh(1);
	uint64_t *h = malloc(2 * n * sizeof *h);
	struct keys k;

	CHECK(f != NULL && h != NULL && make_keys(&k, 0, n) == 0);
	CHECK(filter_hash(f, k.line, n, h) == 0);
	filter_add_hashed(f, k.line, h, 1000);
	filter_ready_hashed(f, h, n);
	CHECK(is_staged(f) && unit_resident_pages(f->words, BYTES) == 0 && f->staged->used <= 1000);
	free_keys(&k);
	free(h);
	filter_free(f);
}

struct shared_job {
	struct filter *f;
	const struct line *keys;
	size_t n;
	/* by regions: only the keys whose block lies in [lo, hi), their answers */
	uint64_t lo, hi;
	const uint64_t *base, *h;
	unsigned char *present;
};

static void *add_shared_all(void *arg)
{
	const struct shared_job *job = arg;

	for (size_t done = 0; done < job->n; done += 100) {
		size_t len = job->n - done < 100 ? job->n - done : 100;

		(void)filter_add_shared(job->f, job->keys + done, NULL, len);
	}
	return NULL;
}

/* The way region owners add: each thread the keys of its blocks, in order (their count kept apart). */
static void *test_and_add_region(void *arg)
{
	const struct shared_job *job = arg;

	for (size_t i = 0; i < job->n; i++)
		if (job->base[i] >= job->lo && job->base[i] < job->hi)
			filter_blocks_test_and_set(job->f, job->base + i, job->h + 2 * i, 1, job->present + i);
	return NULL;
}

/*
 * Four threads add 20,000 keys each at once, past the dense threshold
 * (32,768 blocks): the bits are those of one thread adding them all.
 */
static void threads_adding_at_once_lose_nothing_going_dense(void)
{
	const size_t per = 20000, threads = 4;
	struct filter *f = fresh(1), *g = fresh(0);
	struct shared_job job[4];
	pthread_t t[4];
	struct keys k;

	CHECK(f != NULL && g != NULL && make_keys(&k, 0, per * threads) == 0);
	for (size_t i = 0; i < threads; i++) {
		job[i] = (struct shared_job){ .f = f, .keys = k.line + i * per, .n = per };
		CHECK(pthread_create(&t[i], NULL, add_shared_all, &job[i]) == 0);
	}
	for (size_t i = 0; i < threads; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	filter_add(g, k.line, per * threads);
	CHECK(!is_staged(f) && f->backed[1] == 1);
	CHECK(memcmp(f->words, g->words, BYTES) == 0);
	free_keys(&k);
	filter_free(f);
	filter_free(g);
}

/*
 * Two threads each test and add the keys of half the blocks (region
 * owners), 60,000 keys with repeats, past the threshold: every answer is
 * the one a single thread gives, and so is every bit.
 */
static void region_owners_on_a_staged_filter_answer_as_one_thread(void)
{
	const size_t n = 60000;
	struct filter *f = fresh(1), *g = fresh(0);
	uint64_t *h = malloc(2 * n * sizeof *h), *base = malloc(n * sizeof *base);
	unsigned char *pf = malloc(n), *pg = malloc(n);
	struct shared_job job[2];
	pthread_t t[2];
	struct keys k;

	CHECK(f != NULL && g != NULL && h != NULL && base != NULL && pf != NULL && pg != NULL);
	CHECK(make_keys(&k, 0, n) == 0);
	for (size_t i = 5; i < n; i += 5)
		k.line[i] = k.line[i / 3];
	CHECK(filter_hash(f, k.line, n, h) == 0);
	filter_blocks_of(f, h, n, base);
	for (size_t i = 0; i < 2; i++) {
		job[i] = (struct shared_job){ .f = f, .n = n, .base = base, .h = h, .present = pf,
					      .lo = i == 0 ? 0 : BYTES / 16, .hi = i == 0 ? BYTES / 16 : BYTES / 8 };
		CHECK(pthread_create(&t[i], NULL, test_and_add_region, &job[i]) == 0);
	}
	for (size_t i = 0; i < 2; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	filter_test_and_add(g, k.line, n, pg);
	CHECK(memcmp(pf, pg, n) == 0 && !is_staged(f));
	CHECK(memcmp(f->words, g->words, BYTES) == 0);
	free_keys(&k);
	free(h);
	free(base);
	free(pf);
	free(pg);
	filter_free(f);
	filter_free(g);
}

static int same_file(const char *a, const char *b)
{
	FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
	int same = x != NULL && y != NULL, cx = 0;

	while (same && cx != EOF) {
		cx = getc(x);
		same = cx == getc(y);
	}
	if (x != NULL)
		fclose(x);
	if (y != NULL)
		fclose(y);
	return same;
}

/*
 * A cascade made new is staged (cascade_new_fixed); saved, it is the file
 * of the same keys in a filter never staged, byte for byte, written from
 * its blocks without backing a page of its array. A merge into a new one
 * (bfcount's union) of a staged cascade finds every bit.
 */
static void saves_and_merges_find_the_staged_bits(void)
{
	struct filter_params p = params_of(BYTES);
	const char *why = NULL;
	struct cascade *a = cascade_new_fixed(&p, &why), *u;
	struct filter *plain = fresh(0);
	struct cascade *b = plain ? cascade_from_stages(&plain, 1, 0, 0, p.capacity, p.target_p, &why) : NULL;
	char pa[] = "/tmp/bftools-staged-a-XXXXXX", pb[] = "/tmp/bftools-staged-b-XXXXXX";
	int fa = mkstemp(pa), fb = mkstemp(pb);
	struct keys k;
	long pages;

	CHECK(a != NULL && b != NULL && fa >= 0 && fb >= 0 && make_keys(&k, 0, 5000) == 0);
	close(fa);
	close(fb);
	CHECK(is_staged(a->stages[0]));
	CHECK(cascade_add(a, k.line, 5000, &why) == 0 && cascade_add(b, k.line, 5000, &why) == 0);
	CHECK(is_staged(a->stages[0]));
	CHECK(format_save_path(a, pa, &why) == 0 && format_save_path(b, pb, &why) == 0);
	CHECK(same_file(pa, pb));
	pages = unit_resident_pages(a->stages[0]->words, BYTES);
	CHECKF(is_staged(a->stages[0]) && pages == 0, "saved from its blocks: %ld pages backed", pages);
	u = cascade_new_like(a, &why);
	CHECK(u != NULL && is_staged(u->stages[0]));
	CHECKF(merge_into(u, a, MERGE_OR, &why) == 0, "%s", why);
	CHECK(!is_staged(u->stages[0]) && !is_staged(a->stages[0]));
	CHECK(memcmp(u->stages[0]->words, plain->words, BYTES) == 0);
	unlink(pa);
	unlink(pb);
	free_keys(&k);
	cascade_free(a);
	cascade_free(b);
	cascade_free(u);
}

void suite_staged(void)
{
	unit_run("staged: the table finds each block it holds, grown from nothing, and nothing else",
		 the_table_finds_what_it_holds);
	unit_run("staged: a staged filter answers, counts and rates as its array would, with no page of it resident",
		 a_staged_filter_answers_as_its_array_would);
	unit_run("staged: the add that brings the table to the dense threshold makes it dense; repeats never do",
		 the_add_that_reaches_the_threshold_makes_it_dense);
	unit_run("staged: expecting dense ends the staging, no bit lost", expecting_dense_ends_the_staging);
	unit_run("staged: keys made ready back no page of a staged filter", keys_made_ready_back_no_page_of_a_staged_filter);
	unit_run("staged: four threads adding at once past the threshold lose nothing",
		 threads_adding_at_once_lose_nothing_going_dense);
	unit_run("staged: region owners on a staged filter answer as one thread",
		 region_owners_on_a_staged_filter_answer_as_one_thread);
	unit_run("staged: saves and merges find the staged bits (the file byte for byte an unstaged one's)",
		 saves_and_merges_find_the_staged_bits);
}
