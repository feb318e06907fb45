/* SPDX-License-Identifier: MIT */
/*
 * test_blocked_simd.c - the SIMD membership test of the blocked layout
 * against the definition, one probe at a time.
 *
 * A key is present when bit (h2 * C[i]) >> 55 of its 512-bit block is set
 * for every i < k. The reference below computes exactly that; the SIMD
 * version must agree for every k from 1 to FILTER_K_MAX, at fills from
 * nearly empty to full (where most keys pass the first eight probes and the
 * later groups decide), for blocks at any word offset. Through the filter
 * API, filter_test must answer the same with the SIMD version on and off.
 * On a CPU without it, blocked_test_many must say so (-1) and leave the
 * answers alone. Random data comes from a fixed-seed splitmix64.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocked_simd.h"
#include "filter.h"
#include "sizing.h"
#include "unit.h"

#define BLOCKS 64
#define KEYS 2000

/* A word whose bits are each set with probability about ones / 64. */
static uint64_t random_word(uint64_t *state, unsigned ones)
{
	uint64_t w = 0;

	if (ones >= 64)
		return ~UINT64_C(0);
	for (unsigned b = 0; b < 64; b++)
		if (unit_splitmix64(state) % 64 < ones)
			w |= UINT64_C(1) << b;
	return w;
}

static int reference_present(const uint64_t *block, uint64_t h2, uint32_t k, const uint64_t *c)
{
	for (uint32_t i = 0; i < k; i++) {
		uint64_t bit = (h2 * c[i]) >> 55;

		if (!(block[bit >> 6] >> (bit & 63) & 1))
			return 0;
	}
	return 1;
}

static int simd_available(void)
{
	return strcmp(blocked_simd_impl(), "none") != 0;
}

struct fixture {
	uint64_t words[BLOCKS * 8 + 8];
	uint64_t base[KEYS];
	uint64_t h[2 * KEYS];
	uint64_t c[FILTER_K_MAX];
	unsigned char got[KEYS + 1];
};

/*
 * Blocks at any word offset (not only multiples of eight), bits set with
 * probability ones/64, odd multipliers. Dense and full blocks let keys pass
 * their first eight probes, so the later probe groups are exercised too.
 */
static void fixture_fill(struct fixture *fx, uint64_t *state, unsigned ones)
{
	for (size_t i = 0; i < sizeof fx->words / sizeof fx->words[0]; i++)
		fx->words[i] = random_word(state, ones);
	for (uint32_t i = 0; i < FILTER_K_MAX; i++)
		fx->c[i] = unit_splitmix64(state) | 1;
	for (size_t i = 0; i < KEYS; i++) {
		fx->base[i] = unit_splitmix64(state) % (BLOCKS * 8 + 1);
		fx->h[2 * i] = unit_splitmix64(state);
		fx->h[2 * i + 1] = unit_splitmix64(state);
	}
}

static void check_fill(unsigned ones, uint64_t seed)
{
	static struct fixture fx;
	uint64_t state = seed;

	if (!simd_available()) {
		memset(fx.got, 7, sizeof fx.got);
		CHECK(blocked_test_many(fx.words, fx.base, fx.h, KEYS, 1, fx.c, fx.got) == -1);
		CHECK(fx.got[0] == 7 && fx.got[KEYS - 1] == 7);
		return;
	}
	fixture_fill(&fx, &state, ones);
	for (uint32_t k = 1; k <= FILTER_K_MAX; k++) {
		size_t hits = 0;

		fx.got[KEYS] = 0xaa;
		CHECK(blocked_test_many(fx.words, fx.base, fx.h, KEYS, k, fx.c, fx.got) == 0);
		CHECKF(fx.got[KEYS] == 0xaa, "k = %u: wrote past n", k);
		for (size_t i = 0; i < KEYS; i++) {
			int want = reference_present(fx.words + fx.base[i], fx.h[2 * i + 1], k, fx.c);

			CHECKF(fx.got[i] == want, "k = %u, fill %u/64, key %zu: got %d, want %d", k, ones, i,
			       fx.got[i], want);
			hits += (size_t)want;
		}
		/* the check means something only if both answers occur (or must not) */
		if (ones >= 64)
			CHECKF(hits == KEYS, "k = %u: a full block must hold every key", k);
		else if (ones >= 32 && k <= 4)
			CHECKF(hits > 0 && hits < KEYS, "k = %u, fill %u/64: %zu of %d present", k, ones, hits,
			       KEYS);
	}
}

static void fill_sparse(void) { check_fill(6, 1); }
static void fill_half(void) { check_fill(32, 2); }
static void fill_dense(void) { check_fill(60, 3); }
static void fill_full(void) { check_fill(64, 4); }

static void zero_keys_write_nothing(void)
{
	static struct fixture fx;
	uint64_t state = 5;

	fixture_fill(&fx, &state, 32);
	fx.got[0] = 0x5a;
	(void)blocked_test_many(fx.words, fx.base, fx.h, 0, 12, fx.c, fx.got);
	CHECK(fx.got[0] == 0x5a);
}

static void disabling_says_none_and_returns_minus_one(void)
{
	static struct fixture fx;
	int had = simd_available();

	blocked_simd_enable(0);
	CHECK(strcmp(blocked_simd_impl(), "none") == 0);
	fx.got[0] = 9;
	CHECK(blocked_test_many(fx.words, fx.base, fx.h, 1, 3, fx.c, fx.got) == -1);
	CHECK(fx.got[0] == 9);
	blocked_simd_enable(1);
	CHECK(simd_available() == had);
}

/* Keys "k<i>" for i in [from, from + n) into lines over text (n * 16 bytes). */
static void make_keys(struct line *keys, char *text, size_t from, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(text + 16 * i, 16, "k%zu", from + i);

		keys[i].data = text + 16 * i;
		keys[i].len = (size_t)len;
	}
}

/* filter_test through both paths, over keys in and out, for a filter sized at p. */
static void check_filter_paths(double p)
{
	const size_t n = 20000;
	struct filter_params params = { 0 };
	struct line *keys = malloc(2 * n * sizeof *keys);
	char *text = malloc(2 * n * 16);
	unsigned char *simd = malloc(2 * n), *scalar = malloc(2 * n);
	struct filter *f = NULL;
	const char *why;
	size_t in = 0, out = 0;

	CHECK(keys && text && simd && scalar);
	params.layout = FILTER_BLOCKED;
	params.hash = FILTER_SIPHASH_1_3;
	params.capacity = n;
	params.target_p = p;
	memset(params.key, 0x42, sizeof params.key);
	if (sizing_choose(FILTER_BLOCKED, n, p, &params.m, &params.k, &why) == 0)
		f = filter_new(&params, &why);
	CHECK(f != NULL);
	/* past eight probes, the later groups decide too */
	CHECKF(p > 1e-6 || params.k > 8, "p = %g gave k = %u", p, params.k);
	make_keys(keys, text, 0, 2 * n);
	filter_add(f, keys, n);
	filter_test(f, keys, 2 * n, simd);
	blocked_simd_enable(0);
	filter_test(f, keys, 2 * n, scalar);
	blocked_simd_enable(1);
	for (size_t i = 0; i < n; i++) {
		in += simd[i];
		out += simd[n + i];
	}
	filter_free(f);
	CHECKF(memcmp(simd, scalar, 2 * n) == 0, "p = %g, k = %u: the two paths differ", p, params.k);
	CHECKF(in == n, "p = %g: %zu of %zu added keys found", p, in, n);
	CHECKF(out < n / 10, "p = %g: %zu of %zu absent keys found", p, out, n);
	free(keys);
	free(text);
	free(simd);
	free(scalar);
}

static void filter_paths_1e2(void) { check_filter_paths(1e-2); }
static void filter_paths_1e6(void) { check_filter_paths(1e-6); }
static void filter_paths_1e12(void) { check_filter_paths(1e-12); }

/*
 * filter_test_and_add through both paths (on a filter big enough to take
 * the SIMD one) over a stream with repeats next to their first copy,
 * inside one batch of 32 and far apart: same answers,
 * same bits, and every repeat found (the SIMD path adds no key of a batch
 * before it has tested them all, so a repeat inside a batch is the case
 * that needs its second look).
 */
static void check_add_paths(double p)
{
	const size_t n = 30000;
	struct filter_params params = { 0 };
	struct line *keys = malloc(n * sizeof *keys);
	char *text = malloc(n * 16);
	unsigned char *simd = malloc(n), *scalar = malloc(n), *repeat = calloc(n, 1);
	struct filter *f = NULL, *g = NULL;
	const char *why;
	size_t fresh_simd, fresh_scalar, distinct = 0, missed = 0;

	CHECK(keys && text && simd && scalar && repeat);
	params.layout = FILTER_BLOCKED;
	params.hash = FILTER_SIPHASH_1_3;
	params.capacity = n;
	params.target_p = p;
	memset(params.key, 0x42, sizeof params.key);
	/* k as sized for p; m as big as a filter that takes the SIMD path (filter.c) */
	if (sizing_choose(FILTER_BLOCKED, n, p, &params.m, &params.k, &why) == 0) {
		params.m = FILTER_READY_MIN * 8;
		f = filter_new(&params, &why);
		g = filter_new(&params, &why);
	}
	CHECK(f != NULL && g != NULL);
	make_keys(keys, text, 0, n);
	for (size_t i = 1; i < n; i++) {
		size_t back = i % 7 == 0 ? 1 : i % 5 == 0 ? 13 : i % 11 == 0 ? 5000 : 0;

		if (back > 0 && back <= i) {
			keys[i] = keys[i - back];
			repeat[i] = 1;
		}
	}
	CHECK(blocked_simd_usable() == simd_available());
	fresh_simd = filter_test_and_add(f, keys, n, simd);
	blocked_simd_enable(0);
	fresh_scalar = filter_test_and_add(g, keys, n, scalar);
	blocked_simd_enable(1);
	for (size_t i = 0; i < n; i++) {
		distinct += !repeat[i];
		missed += repeat[i] && !simd[i];
	}
	CHECKF(memcmp(simd, scalar, n) == 0, "p = %g, k = %u: the two paths answer differently", p, params.k);
	CHECK(fresh_simd == fresh_scalar);
	CHECKF(memcmp(f->words, g->words, filter_bytes(f)) == 0, "p = %g: the two paths set different bits", p);
	CHECKF(missed == 0, "p = %g: %zu repeats taken for new", p, missed);
	CHECKF(fresh_simd <= distinct && fresh_simd > distinct - distinct / 10,
	       "p = %g: %zu fresh of %zu distinct", p, fresh_simd, distinct);
	filter_free(f);
	filter_free(g);
	free(keys);
	free(text);
	free(simd);
	free(scalar);
	free(repeat);
}

static void add_paths_1e2(void) { check_add_paths(1e-2); }
static void add_paths_1e6(void) { check_add_paths(1e-6); }
static void add_paths_1e12(void) { check_add_paths(1e-12); }

void suite_blocked_simd(void)
{
	unit_run("blocked_simd: equals the probe-by-probe test for k = 1..64, blocks 10% full", fill_sparse);
	unit_run("blocked_simd: equals the probe-by-probe test for k = 1..64, blocks half full", fill_half);
	unit_run("blocked_simd: equals the probe-by-probe test for k = 1..64, blocks 94% full", fill_dense);
	unit_run("blocked_simd: full blocks hold every key for k = 1..64", fill_full);
	unit_run("blocked_simd: zero keys write nothing", zero_keys_write_nothing);
	unit_run("blocked_simd: disabled, it names none and leaves the answers to the caller",
		 disabling_says_none_and_returns_minus_one);
	unit_run("blocked_simd: filter_test answers alike with and without SIMD (p = 1e-2)", filter_paths_1e2);
	unit_run("blocked_simd: filter_test answers alike with and without SIMD (p = 1e-6)",
		 filter_paths_1e6);
	unit_run("blocked_simd: filter_test answers alike with and without SIMD (p = 1e-12)",
		 filter_paths_1e12);
	unit_run("blocked_simd: filter_test_and_add answers and adds alike with and without SIMD (p = 1e-2)",
		 add_paths_1e2);
	unit_run("blocked_simd: filter_test_and_add answers and adds alike with and without SIMD (p = 1e-6)",
		 add_paths_1e6);
	unit_run("blocked_simd: filter_test_and_add answers and adds alike with and without SIMD (p = 1e-12)",
		 add_paths_1e12);
}
