/* SPDX-License-Identifier: MIT */
/*
 * test_hll.c - HyperLogLog: exact while small, within the advertised error
 * when large, and indifferent to duplicates, order and batching.
 *
 * Keys are the counters 0, 1, 2, ... of a fixed seed, hashed by the
 * splitmix64 finaliser (a bijection, so distinct counters give distinct
 * hashes). At precision 16 the relative standard error is 1.04/256 = 0.41%;
 * the bounds below are written as multiples of it, so every check is
 * deterministic and far from its edge (the seeds are fixed, and a fresh
 * seed would fail a 2% bound with probability ~1e-6).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hll.h"
#include "siphash.h"
#include "unit.h"

#define P16_EXACT_LIMIT 8192u   /* m/8 at precision 16 */
#define P16_STDERR (1.04 / 256.0)

static uint64_t splitmix_finish(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The hash of key number i in the stream of a seed. */
static uint64_t key_hash(uint64_t seed, uint64_t i)
{
	return splitmix_finish(splitmix_finish(seed) + i * UINT64_C(0x9e3779b97f4a7c15));
}

static void add_keys(struct hll *h, uint64_t seed, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++)
		hll_add(h, key_hash(seed, i));
}

static double relative_error(double estimate, double truth)
{
	return (estimate - truth) / truth;
}

static void refuses_a_precision_outside_4_to_18(void)
{
	const unsigned bad[] = { 0, 3, 19, 64, 1000 };

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECKF(hll_new(bad[i]) == NULL, "precision %u accepted", bad[i]);
		CHECKF(hll_memory(bad[i]) == 0, "precision %u has a size", bad[i]);
	}
	for (unsigned p = HLL_PRECISION_MIN; p <= HLL_PRECISION_MAX; p++) {
		struct hll *h = hll_new(p);

		CHECKF(h != NULL, "precision %u refused", p);
		hll_free(h);
	}
	hll_free(NULL);
}

/* Registers m bytes plus the exact-phase table 2m bytes: 192 KiB at 16. */
static void fits_in_one_mebibyte_even_at_precision_18(void)
{
	CHECK(hll_memory(HLL_PRECISION_DEFAULT) <= 256 * 1024);
	CHECK(hll_memory(HLL_PRECISION_MAX) <= 1024 * 1024);
	CHECK(hll_memory(HLL_PRECISION_DEFAULT) >= 65536);
}

static void an_empty_counter_counts_zero_exactly(void)
{
	struct hll *h = hll_new(HLL_PRECISION_DEFAULT);

	CHECK(h != NULL);
	CHECK(hll_is_exact(h));
	CHECK(hll_estimate(h) == 0.0);
	CHECK(hll_relative_error(h) == 0.0);
	hll_free(h);
}

/* Key i is added, then every key so far is added again now and then. */
static void counts_exactly_up_to_8192_keys_despite_duplicates(void)
{
	struct hll *h = hll_new(HLL_PRECISION_DEFAULT);

	CHECK(h != NULL);
	for (uint64_t n = 1; n <= P16_EXACT_LIMIT; n++) {
		hll_add(h, key_hash(1, n - 1));
		hll_add(h, key_hash(1, n - 1));
		if (n % 1000 == 0 || n == P16_EXACT_LIMIT)
			add_keys(h, 1, 0, n);
		CHECKF(hll_is_exact(h), "left the exact phase at %llu", (unsigned long long)n);
		CHECKF(hll_estimate(h) == (double)n, "%llu keys counted as %.1f",
		       (unsigned long long)n, hll_estimate(h));
	}
	hll_free(h);
}

/* 0 is the empty-slot marker of the exact table, so it is kept apart. */
static void counts_the_hashes_0_and_all_ones_like_any_other(void)
{
	struct hll *h = hll_new(HLL_PRECISION_DEFAULT);

	CHECK(h != NULL);
	for (int i = 0; i < 5; i++) {
		hll_add(h, 0);
		hll_add(h, UINT64_MAX);
	}
	CHECK(hll_estimate(h) == 2.0);
	add_keys(h, 2, 0, 100);
	CHECK(hll_estimate(h) == 102.0);
	add_keys(h, 2, 0, P16_EXACT_LIMIT);
	CHECK(!hll_is_exact(h));
	CHECKF(fabs(relative_error(hll_estimate(h), P16_EXACT_LIMIT + 2)) < 3 * P16_STDERR,
	       "estimate %.1f", hll_estimate(h));
	hll_free(h);
}

/*
 * Past 8192 the registers take over; just after the switch the estimate is
 * linear counting in disguise, with a standard error of ~0.28% (hll.c), so
 * 1% is > 3.5 standard errors on each of the 20 seeds.
 */
static void switches_to_estimating_at_8193_keys_without_a_jump(void)
{
	for (uint64_t seed = 0; seed < 20; seed++) {
		struct hll *h = hll_new(HLL_PRECISION_DEFAULT);
		double err;

		CHECK(h != NULL);
		add_keys(h, seed, 0, P16_EXACT_LIMIT + 1);
		CHECK(!hll_is_exact(h));
		CHECK(hll_relative_error(h) == P16_STDERR);
		err = relative_error(hll_estimate(h), P16_EXACT_LIMIT + 1);
		hll_free(h);
		CHECKF(fabs(err) < 0.01, "seed %llu: error %.3f%%", (unsigned long long)seed,
		       100 * err);
	}
}

/*
 * 8 seeds, each one stream read at every checkpoint. A single estimate must
 * be within 2% (4.9 standard errors); the mean error of the 8 seeds, whose
 * own standard error is 0.41%/sqrt(8) = 0.15%, must be within 0.5% (3.4 of
 * those), which a bias of the estimator would break.
 */
static void is_within_2_percent_and_unbiased_from_1e3_to_1e6(void)
{
	const uint64_t counts[] = { 1000, 10000, 30000, 100000, 300000, 1000000 };
	const size_t ncounts = sizeof counts / sizeof counts[0];
	const uint64_t seeds = 8;
	double sum[sizeof counts / sizeof counts[0]] = { 0 };

	for (uint64_t seed = 0; seed < seeds; seed++) {
		struct hll *h = hll_new(HLL_PRECISION_DEFAULT);
		uint64_t n = 0;

		CHECK(h != NULL);
		for (size_t c = 0; c < ncounts; n = counts[c++]) {
			double err;

			add_keys(h, 100 + seed, n, counts[c]);
			err = relative_error(hll_estimate(h), (double)counts[c]);
			sum[c] += err;
			CHECKF(fabs(err) <= 0.02, "seed %llu, %llu keys: error %.3f%%",
			       (unsigned long long)seed, (unsigned long long)counts[c], 100 * err);
		}
		hll_free(h);
	}
	for (size_t c = 0; c < ncounts; c++)
		CHECKF(fabs(sum[c] / seeds) <= 0.005, "%llu keys: mean error %.3f%%",
		       (unsigned long long)counts[c], 100 * sum[c] / seeds);
}

/* Registers keep a maximum, so adding a key again changes nothing at all. */
static void gives_the_same_estimate_when_keys_repeat(void)
{
	struct hll *once = hll_new(HLL_PRECISION_DEFAULT);
	struct hll *thrice = hll_new(HLL_PRECISION_DEFAULT);

	CHECK(once && thrice);
	add_keys(once, 3, 0, 50000);
	add_keys(thrice, 3, 0, 50000);
	add_keys(thrice, 3, 20000, 50000);
	add_keys(thrice, 3, 0, 30000);
	CHECK(hll_estimate(once) == hll_estimate(thrice));
	hll_free(once);
	hll_free(thrice);
}

static void shuffle(uint64_t *a, size_t n, uint64_t seed)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(key_hash(seed, i) % (i + 1));
		uint64_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/* Batches of 1, 4, 13, 40, ... hashes: every size the caller might use. */
static void add_in_growing_batches(struct hll *h, const uint64_t *hashes, size_t n)
{
	size_t done = 0;

	for (size_t batch = 1; done < n; batch = batch * 3 + 1) {
		size_t len = batch < n - done ? batch : n - done;

		hll_add_many(h, hashes + done, len);
		done += len;
	}
}

/*
 * The same 40000 hashes one at a time in order, and shuffled in uneven
 * batches: the switch from the exact phase happens at a different key, but
 * the registers, and so the estimate, come out identical.
 */
static void gives_the_same_estimate_whatever_the_order_and_batching(void)
{
	static uint64_t hashes[40000];
	const size_t n = sizeof hashes / sizeof hashes[0];
	struct hll *ordered = hll_new(HLL_PRECISION_DEFAULT);
	struct hll *shuffled = hll_new(HLL_PRECISION_DEFAULT);
	int same;

	CHECK(ordered && shuffled);
	for (size_t i = 0; i < n; i++)
		hashes[i] = key_hash(4, i);
	add_keys(ordered, 4, 0, n);
	shuffle(hashes, n, 5);
	add_in_growing_batches(shuffled, hashes, n);
	same = hll_estimate(ordered) == hll_estimate(shuffled);
	hll_free(ordered);
	hll_free(shuffled);
	CHECK(same);
}

/*
 * Each precision at 20 m keys: exact up to m/8 keys, then within 5
 * standard errors 1.04/sqrt(m) (26% at precision 4, 0.2% at 18).
 */
static void works_at_every_precision_from_4_to_18(void)
{
	for (unsigned p = HLL_PRECISION_MIN; p <= HLL_PRECISION_MAX; p++) {
		uint64_t m = UINT64_C(1) << p, n = 20 * m;
		struct hll *h = hll_new(p);
		double err, bound = 5 * 1.04 / sqrt((double)m);

		CHECK(h != NULL);
		add_keys(h, 6, 0, m / 8);
		CHECKF(hll_is_exact(h) && hll_estimate(h) == (double)(m / 8), "p=%u", p);
		add_keys(h, 6, m / 8, n);
		err = relative_error(hll_estimate(h), (double)n);
		CHECKF(!hll_is_exact(h) && hll_relative_error(h) == 1.04 / sqrt((double)m), "p=%u", p);
		hll_free(h);
		CHECKF(fabs(err) <= bound, "p=%u: error %.3f%%, bound %.3f%%", p, 100 * err,
		       100 * bound);
	}
}

/* As bfcount uses it: SipHash-1-3 of the lines "0".."199999"; 2% as above. */
static void counts_siphashed_lines_within_2_percent(void)
{
	struct siphash_key key = { UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908) };
	struct hll *h = hll_new(HLL_PRECISION_DEFAULT);
	double err;

	CHECK(h != NULL);
	for (unsigned i = 0; i < 200000; i++) {
		char line[16];
		int len = snprintf(line, sizeof line, "%u", i);
		uint64_t out[2];

		siphash_1_3_128(&key, line, (size_t)len, out);
		hll_add(h, out[0]);
	}
	err = relative_error(hll_estimate(h), 200000.0);
	hll_free(h);
	CHECKF(fabs(err) <= 0.02, "error %.3f%%", 100 * err);
}

/* Whether a and b hold the same registers (as hll_registers gives them). */
static int same_registers(const struct hll *a, const struct hll *b)
{
	static uint8_t ra[1u << HLL_PRECISION_MAX], rb[1u << HLL_PRECISION_MAX];
	size_t m = (size_t)1 << hll_precision(a);

	hll_registers(a, ra);
	hll_registers(b, rb);
	return hll_precision(a) == hll_precision(b) && memcmp(ra, rb, m) == 0;
}

/*
 * Keys 0..n split into shards at the cut points, each shard counted on its
 * own, then merged: the registers, the phase and the estimate are those of
 * the counter that saw every key. Shards overlap (each also gets the keys
 * of the one before), as days overlap in visitors. The cuts put the
 * shards and the whole on either side of the exact phase's 8192.
 */
static void merged_shards_equal_the_whole_register_for_register(void)
{
	static const uint64_t cases[][4] = {
		{ 100, 2000, 5000, 6000 },	/* all exact, the union too */
		{ 3000, 6000, 8000, 12000 },	/* exact shards, a union past 8192 */
		{ 1000, 9000, 20000, 50000 },	/* mixed */
		{ 40000, 90000, 150000, 300000 },	/* all estimating */
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct hll *whole = hll_new(HLL_PRECISION_DEFAULT), *merged = hll_new(HLL_PRECISION_DEFAULT);
		uint64_t from = 0;
		int same;

		CHECK(whole && merged);
		add_keys(whole, 7, 0, cases[c][3]);
		for (size_t i = 0; i < 4; from = cases[c][i++]) {
			struct hll *shard = hll_new(HLL_PRECISION_DEFAULT);

			CHECK(shard != NULL);
			add_keys(shard, 7, from > 500 ? from - 500 : 0, cases[c][i]);
			CHECK(hll_merge(merged, shard) == 0);
			hll_free(shard);
		}
		same = same_registers(whole, merged) && hll_is_exact(whole) == hll_is_exact(merged)
		       && hll_estimate(whole) == hll_estimate(merged);
		hll_free(whole);
		hll_free(merged);
		CHECKF(same, "case %zu", c);
	}
}

static void merging_refuses_another_precision_and_changes_nothing(void)
{
	struct hll *a = hll_new(12), *b = hll_new(14);
	double before;

	CHECK(a && b);
	add_keys(a, 8, 0, 300);	/* exact: 300 < 4096 / 8 */
	add_keys(b, 8, 300, 600);
	before = hll_estimate(a);
	CHECK(hll_merge(a, b) == -1);
	CHECK(hll_estimate(a) == before && hll_is_exact(a));
	hll_free(a);
	hll_free(b);
}

/* The exact phase's hashes come out ascending, 0 included, each once. */
static void gives_its_exact_hashes_in_ascending_order(void)
{
	static uint64_t out[P16_EXACT_LIMIT];
	struct hll *h = hll_new(HLL_PRECISION_DEFAULT);
	size_t n;

	CHECK(h != NULL);
	CHECK(hll_exact_max(HLL_PRECISION_DEFAULT) == P16_EXACT_LIMIT);
	CHECK(hll_exact_hashes(h, out) == 0);
	add_keys(h, 9, 0, 3000);
	add_keys(h, 9, 0, 3000);
	hll_add(h, 0);
	hll_add(h, UINT64_MAX);
	n = hll_exact_hashes(h, out);
	CHECK(n == 3002 && out[0] == 0 && out[n - 1] == UINT64_MAX);
	for (size_t i = 1; i < n; i++)
		CHECK(out[i - 1] < out[i]);
	add_keys(h, 9, 3000, P16_EXACT_LIMIT);
	CHECK(!hll_is_exact(h) && hll_exact_hashes(h, out) == 0);
	hll_free(h);
}

/*
 * An exact counter's registers are those its hashes will set: merged
 * into an estimating counter whose registers are all 0, they come out
 * the same. Registers loaded back give the same estimate; one above
 * 65 - p is refused and changes nothing.
 */
static void registers_go_out_and_come_back_in(void)
{
	static uint8_t regs[1u << HLL_PRECISION_DEFAULT];
	struct hll *exact = hll_new(HLL_PRECISION_DEFAULT), *blank = hll_new(HLL_PRECISION_DEFAULT);
	struct hll *big = hll_new(HLL_PRECISION_DEFAULT);

	CHECK(exact && blank && big);
	add_keys(exact, 10, 0, 5000);
	memset(regs, 0, sizeof regs);
	CHECK(hll_set_registers(blank, regs) == 0 && !hll_is_exact(blank));
	CHECK(hll_estimate(blank) == 0.0);
	CHECK(hll_merge(blank, exact) == 0 && same_registers(blank, exact));
	add_keys(big, 11, 0, 100000);
	hll_registers(big, regs);
	CHECK(hll_register_max(HLL_PRECISION_DEFAULT) == 49);
	CHECK(hll_set_registers(exact, regs) == 0 && hll_estimate(exact) == hll_estimate(big));
	regs[77] = 50;
	CHECK(hll_set_registers(blank, regs) == -1 && same_registers(blank, exact) == 0);
	CHECK(hll_estimate(blank) > 4900.0 && hll_estimate(blank) < 5100.0);
	hll_free(exact);
	hll_free(blank);
	hll_free(big);
}

void suite_hll(void)
{
	unit_run("hll: refuses a precision outside 4..18", refuses_a_precision_outside_4_to_18);
	unit_run("hll: fits in 1 MiB even at precision 18", fits_in_one_mebibyte_even_at_precision_18);
	unit_run("hll: an empty counter counts 0 exactly", an_empty_counter_counts_zero_exactly);
	unit_run("hll: counts exactly up to 8192 keys despite duplicates",
		 counts_exactly_up_to_8192_keys_despite_duplicates);
	unit_run("hll: counts the hashes 0 and all-ones like any other",
		 counts_the_hashes_0_and_all_ones_like_any_other);
	unit_run("hll: switches to estimating at 8193 keys without a jump in error",
		 switches_to_estimating_at_8193_keys_without_a_jump);
	unit_run("hll: is within 2% and unbiased from 1e3 to 1e6 keys",
		 is_within_2_percent_and_unbiased_from_1e3_to_1e6);
	unit_run("hll: gives the same estimate when keys repeat",
		 gives_the_same_estimate_when_keys_repeat);
	unit_run("hll: gives the same estimate whatever the order and batching",
		 gives_the_same_estimate_whatever_the_order_and_batching);
	unit_run("hll: works at every precision from 4 to 18", works_at_every_precision_from_4_to_18);
	unit_run("hll: counts SipHashed lines within 2%", counts_siphashed_lines_within_2_percent);
	unit_run("hll: merged shards equal the whole, register for register",
		 merged_shards_equal_the_whole_register_for_register);
	unit_run("hll: merging refuses another precision and changes nothing",
		 merging_refuses_another_precision_and_changes_nothing);
	unit_run("hll: gives its exact hashes in ascending order",
		 gives_its_exact_hashes_in_ascending_order);
	unit_run("hll: registers go out and come back in", registers_go_out_and_come_back_in);
}
