/* SPDX-License-Identifier: MIT */
/*
 * sizing.c - how many bits and hashes a filter needs, searched with the
 * layout's own model of its false-positive rate (model.c derives the
 * formulas), and what a filter's fill says about its contents.
 *
 * We do not use a closed-form approximation for blocked: sizing_choose
 * searches for the smallest m whose own rate at n is <= p, for each k near
 * the classic optimum (k = ln 2 * m/n, m = -n ln p / (ln 2)^2: 9.59 bits
 * per key at p = 1%, 4.79 more per tenfold lower p), and keeps the best.
 * Every layout's m is a multiple of 512 bits.
 */
#include "sizing.h"

#include <math.h>
#include <stdlib.h>

#include "layout.h"

/* The table of layout; sizing is asked only about valid layouts. */
static const struct layout_ops *geometry(enum filter_layout layout)
{
	const struct layout_ops *l = layout_of(layout);

	return l ? l : &layout_classic;
}

double sizing_fpr(enum filter_layout layout, uint64_t n, uint64_t m, uint32_t k)
{
	return geometry(layout)->fpr(n, m, k);
}

uint64_t sizing_round_bits(uint64_t m)
{
	if (m > UINT64_MAX - (FILTER_BLOCK_BITS - 1))
		return 0;
	return (m + FILTER_BLOCK_BITS - 1) / FILTER_BLOCK_BITS * FILTER_BLOCK_BITS;
}

/*
 * The fewest blocks for which k probes keep the rate at n within p, or 0 if
 * none up to FILTER_M_MAX does. The rate falls as blocks are added, so we
 * bracket the answer around the closed-form classic size (far from it the
 * Poisson sums get long) and bisect.
 */
static uint64_t fewest_blocks(enum filter_layout layout, uint64_t n, double p, uint32_t k)
{
	const uint64_t max_blocks = FILTER_M_MAX / FILTER_BLOCK_BITS;
	double guess = -(double)n * log(p) / (M_LN2 * M_LN2) / FILTER_BLOCK_BITS;
	uint64_t hi = guess < 1 ? 1 : guess > (double)max_blocks ? max_blocks : (uint64_t)guess;
	uint64_t lo;

	while (hi > 1 && sizing_fpr(layout, n, hi * FILTER_BLOCK_BITS, k) <= p)
		hi /= 2;
	lo = hi;
	while (sizing_fpr(layout, n, hi * FILTER_BLOCK_BITS, k) > p) {
		if (hi == max_blocks)
			return 0;
		lo = hi;
		hi = hi * 2 > max_blocks ? max_blocks : hi * 2;
	}
	if (lo == hi)	/* even one block is enough */
		return hi;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sizing_fpr(layout, n, mid * FILTER_BLOCK_BITS, k) > p)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

int sizing_choose(enum filter_layout layout, uint64_t n, double p,
		  uint64_t *m, uint32_t *k, const char **errstr)
{
	/* the classic optimum; blocked's optimum lies a little above it */
	double k_opt = -log(p) / log(2.0);
	uint32_t k_lo = k_opt > 3 ? (uint32_t)k_opt - 2 : 1;
	uint32_t k_hi = (uint32_t)k_opt + 4;
	uint64_t best_blocks = 0;
	double best_rate = 1.0;

	if (k_hi > FILTER_K_MAX)
		k_hi = FILTER_K_MAX;
	if (k_lo > k_hi)
		k_lo = k_hi;
	for (uint32_t kk = k_lo; kk <= k_hi; kk++) {
		uint64_t blocks = fewest_blocks(layout, n, p, kk);
		double rate;

		if (blocks == 0 || (best_blocks != 0 && blocks > best_blocks))
			continue;
		/* the fewest bits; among equals, the lowest rate */
		rate = sizing_fpr(layout, n, blocks * FILTER_BLOCK_BITS, kk);
		if (best_blocks == 0 || blocks < best_blocks || rate < best_rate) {
			best_blocks = blocks;
			best_rate = rate;
			*k = kk;
		}
	}
	if (best_blocks == 0) {
		*errstr = "filter would exceed the 2^46-bit limit";
		return -1;
	}
	*m = best_blocks * FILTER_BLOCK_BITS;
	return 0;
}

int sizing_bits_for_k(enum filter_layout layout, uint64_t n, double p, uint32_t k,
		      uint64_t *m, const char **errstr)
{
	uint64_t blocks = fewest_blocks(layout, n, p, k);

	if (blocks == 0) {
		*errstr = "filter would exceed the 2^46-bit limit";
		return -1;
	}
	*m = blocks * FILTER_BLOCK_BITS;
	return 0;
}

uint32_t sizing_best_k(enum filter_layout layout, uint64_t n, uint64_t m)
{
	uint32_t best = 1;
	double best_rate = 2.0;

	for (uint32_t k = 1; k <= FILTER_K_MAX; k++) {
		double rate = sizing_fpr(layout, n, m, k);

		if (rate < best_rate) {
			best_rate = rate;
			best = k;
		}
	}
	return best;
}

uint64_t sizing_capacity(enum filter_layout layout, uint64_t m, uint32_t k, double p)
{
	uint64_t lo = 0, hi = m;	/* beyond m keys no useful rate remains */

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sizing_fpr(layout, mid, m, k) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double sizing_estimate_count(enum filter_layout layout, uint64_t m, uint32_t k,
			     uint64_t bits_set)
{
	return geometry(layout)->estimate(m, k, bits_set);
}

double sizing_estimate_sd(enum filter_layout layout, uint64_t m, uint32_t k, double n)
{
	return geometry(layout)->estimate_sd(m, k, n);
}
