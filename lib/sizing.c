/* SPDX-License-Identifier: MIT */
/*
 * sizing.c - how many bits and hashes a filter needs, and what a filter's
 * fill says about its contents.
 *
 * classic layout, n keys, m bits, k independent uniform probes per key:
 *
 *     fpr(n) = (1 - (1 - 1/m)^(kn))^k  ~  (1 - e^(-kn/m))^k
 *
 *   minimised at k = ln 2 * m/n, where m = -n ln p / (ln 2)^2: 9.59 bits per
 *   key at p = 1%, 4.79 more per tenfold lower p.
 *
 * blocked layout, B = m/512 blocks of 512 bits: a key's k probes land in one
 * block chosen uniformly, so the number of keys j in a block is binomial,
 * close to Poisson with mean L = n/B. A block holding j keys has taken kj
 * probes, each a uniform bit; let X_j be the number of its bits set. A
 * foreign key's k probes (uniform, with repeats, like an added key's) all
 * hit set bits with probability E[(X_j/512)^k], so
 *
 *     fpr(n) = sum_j  e^-L L^j / j!  *  E[(X_j / 512)^k]
 *
 *   The textbook form (Putze, Sanders & Singler, "Cache-, hash- and
 *   space-efficient Bloom filters", 2007) puts (E[X_j]/512)^k =
 *   (1 - (1 - 1/512)^(kj))^k in the sum instead. That is too low: a block
 *   has only 512 bits, so X_j spreads, and by Jensen's inequality the mean
 *   of the k-th power exceeds the k-th power of the mean, more so as k
 *   grows. Sized by it, filters missed their rate at capacity by 1% at
 *   p = 1e-2, 4% at 1e-4 and 8% at 1e-6; the exact sum matches what is
 *   measured (make accuracy). E[(X_j/512)^k] comes from the occupancy
 *   distribution of X_j, computed by a recurrence over the probes (each
 *   probe leaves X at x with probability x/512 and raises it to x + 1
 *   otherwise) and cached per k for each thread.
 *
 *   Overloaded blocks dominate the sum, so blocked needs more bits than
 *   classic for the same rate (3% more at p = 1e-2, 15% at 1e-4, 35% at
 *   1e-6). We do not use an approximation: sizing_choose searches for the
 *   smallest m whose own rate at n is <= p, for each k near the optimum,
 *   and keeps the best.
 *
 * counting layout: classic probing over m 4-bit counters. A key tests
 * present when its k counters are non-zero, and a counter is non-zero
 * exactly when a bit would be set (removals take away what adding put
 * there; saturated counters, at 15, are rare for distinct keys: at the
 * classic optimum a counter's load is Poisson with mean ln 2, and
 * P(load >= 15) ~ 2e-15). So every formula here is classic's, with
 * counters for bits: m counters for n keys at rate p, 4m bits of memory.
 *
 * Estimating n back from X bits set: the expected clear fraction is
 * (1 - 1/m)^(kn) for classic, and for blocked (averaging the Poisson
 * mixture) e^(-L (1 - (1 - 1/512)^k)); solving each for n gives the
 * estimators in sizing.h. The classic one is Swamidass & Baldi's (2007).
 */
#include "sizing.h"

#include <math.h>
#include <stdlib.h>

static double classic_fpr(double n, double m, double k)
{
	return pow(-expm1(k * n * log1p(-1.0 / m)), k);
}

/*
 * E[(X_j / 512)^k] for j = 0 .. count - 1 (see the file comment), cached
 * per k and per thread, so that a search over m, or a rate asked for each
 * batch of a stream, computes the occupancy distribution once.
 */
struct fill_powers {
	size_t count;
	double *mean_power;
};

static _Thread_local struct fill_powers fill_cache[FILTER_K_MAX + 1];

/* Fill g[0 .. count - 1]; stop early once every block is surely full. */
static void compute_fill_powers(uint32_t k, double *g, size_t count)
{
	const unsigned b = FILTER_BLOCK_BITS;
	double dist[FILTER_BLOCK_BITS + 1] = { 1.0 }, power[FILTER_BLOCK_BITS + 1];
	unsigned top = 0;	/* the most bits any block can have set so far */

	for (unsigned x = 0; x <= b; x++)
		power[x] = pow((double)x / b, (double)k);
	for (size_t j = 0; j < count; j++) {
		double sum = 0.0;

		for (unsigned x = 0; x <= top; x++)
			sum += dist[x] * power[x];
		g[j] = sum;
		if (dist[b] >= 1.0 - 1e-17) {	/* full: every later load gives 1 */
			while (++j < count)
				g[j] = 1.0;
			return;
		}
		for (uint32_t probe = 0; probe < k; probe++) {
			if (top < b)
				top++;
			/* descending, so dist[x - 1] is still the old value */
			for (unsigned x = top; x > 0; x--)
				dist[x] = dist[x] * x / b + dist[x - 1] * (b - x + 1) / b;
			dist[0] = 0.0;
		}
	}
}

/* The cached powers for k, at least count of them; NULL without memory. */
static const double *fill_powers(uint32_t k, size_t count)
{
	struct fill_powers *c = &fill_cache[k];
	double *g;

	if (c->count >= count)
		return c->mean_power;
	if (count < 2 * c->count)
		count = 2 * c->count;
	if (count < 64)
		count = 64;
	g = malloc(count * sizeof *g);
	if (g == NULL)
		return NULL;
	compute_fill_powers(k, g, count);
	free(c->mean_power);
	c->mean_power = g;
	c->count = count;
	return g;
}

/*
 * Sum the Poisson mixture over the loads that carry any weight. Without
 * memory for the cache, the textbook term stands in (slightly low).
 */
static double blocked_fpr(double n, double m, uint32_t k)
{
	double blocks = m / FILTER_BLOCK_BITS, load = n / blocks;
	double spread = 12.0 * sqrt(load) + 12.0;
	double lo = floor(load - spread), hi = ceil(load + spread + 20.0);
	double clear_per_key = k * log1p(-1.0 / FILTER_BLOCK_BITS), sum = 0.0;
	const double *g;

	if (lo < 0)
		lo = 0;
	g = fill_powers(k, (size_t)hi + 1);
	for (double j = lo; j <= hi; j++) {
		double weight = exp(j * log(load) - load - lgamma(j + 1.0));
		double term = g ? g[(size_t)j] : pow(-expm1(clear_per_key * j), k);

		sum += weight * term;
	}
	return sum;
}

double sizing_fpr(enum filter_layout layout, uint64_t n, uint64_t m, uint32_t k)
{
	if (n == 0)
		return 0.0;
	if (layout != FILTER_BLOCKED)	/* classic, counting, DCSO */
		return classic_fpr((double)n, (double)m, (double)k);
	return blocked_fpr((double)n, (double)m, k);
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
	double clear = 1.0 - (double)bits_set / (double)m;

	if (bits_set == 0)
		return 0.0;
	if (bits_set >= m)
		return INFINITY;
	if (layout != FILTER_BLOCKED)
		return log(clear) / ((double)k * log1p(-1.0 / (double)m));
	return -((double)m / FILTER_BLOCK_BITS) * log(clear) /
	       -expm1((double)k * log1p(-1.0 / FILTER_BLOCK_BITS));
}

/*
 * Classic: the number of clear bits Z after kn uniform probes has
 *   E Z = m q,  Var Z = m q + m (m - 1) q2 - (m q)^2,
 *   q = (1 - 1/m)^(kn), q2 = (1 - 2/m)^(kn)   (the occupancy problem),
 * and n = ln(Z/m) / (k ln(1 - 1/m)), so dn/dZ = 1 / (Z k ln(1 - 1/m)) and
 *   sd(n) ~ sqrt(Var Z) / (m q k |ln(1 - 1/m)|).
 * Blocked: each block is such an array of 512 bits holding a Poisson(L)
 * number of keys, L = n / B. For one block with j keys the clear count has
 * the occupancy mean and variance above (m = 512, kn -> kj); mixing over
 * j adds the variance of the conditional mean. Summing B independent
 * blocks, less the part that only reflects a varying total of keys (the
 * total is fixed at n), gives Var Z; E Z = m e^(-L(1 - r)), r = (1 - 1/512)^k, and
 * n = -B ln(Z/m) / (1 - r), so dn/dZ = -B / (Z (1 - r)).
 */
static double block_clear_moments(double load, double k, double *var)
{
	double r1 = pow(1.0 - 1.0 / FILTER_BLOCK_BITS, k);
	double r2 = pow(1.0 - 2.0 / FILTER_BLOCK_BITS, k);
	double b = FILTER_BLOCK_BITS;
	/* Poisson generating function: E[x^J] = e^(-L(1 - x)) */
	double e1 = exp(-load * (1.0 - r1)), e2 = exp(-load * (1.0 - r2));
	double mean = b * e1;

	/* E[Z^2] = b E[r1^J] + b(b-1) E[r2^J] */
	double var_poisson = b * e1 + b * (b - 1.0) * e2 - mean * mean;
	/*
	 * Poisson loads let the total number of keys vary too; it is fixed at
	 * n. Conditioning on it removes Cov(Z, J)^2 / Var J per block, with
	 * Cov(Z, J) = b L e1 (r1 - 1) and Var J = L.
	 */
	double cov = b * load * e1 * (r1 - 1.0);

	*var = var_poisson - (load > 0.0 ? cov * cov / load : 0.0);
	return mean;
}

double sizing_estimate_sd(enum filter_layout layout, uint64_t m, uint32_t k, double n)
{
	double md = (double)m, kd = (double)k;

	if (n <= 0.0)
		return 0.0;
	if (layout != FILTER_BLOCKED) {
		double q = exp(kd * n * log1p(-1.0 / md)), q2 = exp(kd * n * log1p(-2.0 / md));
		double var = md * q + md * (md - 1.0) * q2 - md * md * q * q;

		return sqrt(var > 0.0 ? var : 0.0) / (md * q * kd * -log1p(-1.0 / md));
	}
	{
		double blocks = md / FILTER_BLOCK_BITS, var_block, mean_block;
		double r = pow(1.0 - 1.0 / FILTER_BLOCK_BITS, kd);

		mean_block = block_clear_moments(n / blocks, kd, &var_block);
		return sqrt(blocks * (var_block > 0.0 ? var_block : 0.0)) /
		       (mean_block * (1.0 - r));
	}
}
