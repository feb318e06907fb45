/* SPDX-License-Identifier: MIT */
/*
 * model.c - what a filter's geometry predicts: its false-positive rate at n
 * keys, and n estimated back from its fill. sizing.c searches with these.
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
#include "model.h"

#include <math.h>
#include <stdlib.h>

#include "filter_types.h"

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

/*
 * A probability below which the occupancy's tails are taken as zero: a
 * term that small cannot reach the last bit of any g (the least is
 * (1/512)^k, above 1e-200 for every k allowed), and left alone the tails
 * underflow into subnormal numbers, which Intel cores take a microcode
 * assist for each: bfbuild -m 4e8 of 1e5 keys spent 43 s here on one
 * such host, 2 s with the tails cut (issue 33's second host, 2026-12-02).
 */
#define NEGLIGIBLE 1e-280

/*
 * Fill g[0 .. count - 1]; stop early once every block is surely full.
 * Below `low` the distribution is all zero (every tail under NEGLIGIBLE
 * has been cut), so the probes and the sums start there: adding zeros
 * changes no bit of a sum, and the sizing of bfbuild -m, which asks for
 * every k from 1 to 64, went from 1.1 s to 0.19 s (481 loads each, same
 * results to the bit, 2026-12-02).
 */
static void compute_fill_powers(uint32_t k, double *g, size_t count)
{
	const unsigned b = FILTER_BLOCK_BITS;
	double dist[FILTER_BLOCK_BITS + 1] = { 1.0 }, power[FILTER_BLOCK_BITS + 1];
	unsigned low = 0;	/* the fewest bits a block can have set with weight left */
	unsigned top = 0;	/* the most bits any block can have set so far */

	for (unsigned x = 0; x <= b; x++)
		power[x] = pow((double)x / b, (double)k);
	for (size_t j = 0; j < count; j++) {
		double sum = 0.0;

		for (unsigned x = low; x <= top; x++)
			sum += dist[x] * power[x];
		g[j] = sum;
		if (dist[b] >= 1.0 - 1e-17) {	/* full: every later load gives 1 */
			while (++j < count)
				g[j] = 1.0;
			return;
		}
		for (uint32_t probe = 0; probe < k; probe++) {
			unsigned end = low > 1 ? low : 1;

			if (top < b)
				top++;
			/* descending, so dist[x - 1] is still the old value */
			for (unsigned x = top; x >= end; x--) {
				dist[x] = dist[x] * x / b + dist[x - 1] * (b - x + 1) / b;
				if (dist[x] < NEGLIGIBLE)
					dist[x] = 0.0;
			}
			dist[0] = 0.0;
			while (low < top && dist[low] == 0.0)
				low++;
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

double model_classic_fpr(uint64_t n, uint64_t m, uint32_t k)
{
	return n == 0 ? 0.0 : classic_fpr((double)n, (double)m, (double)k);
}

double model_blocked_fpr(uint64_t n, uint64_t m, uint32_t k)
{
	return n == 0 ? 0.0 : blocked_fpr((double)n, (double)m, k);
}

/* n back from X positions set: infinite when all are, 0 when none is. */
static int estimate_edges(uint64_t m, uint64_t set, double *n)
{
	if (set == 0) {
		*n = 0.0;
		return 1;
	}
	if (set >= m) {
		*n = INFINITY;
		return 1;
	}
	return 0;
}

double model_classic_estimate(uint64_t m, uint32_t k, uint64_t set)
{
	double n;

	if (estimate_edges(m, set, &n))
		return n;
	return log(1.0 - (double)set / (double)m) / ((double)k * log1p(-1.0 / (double)m));
}

double model_blocked_estimate(uint64_t m, uint32_t k, uint64_t set)
{
	double n;

	if (estimate_edges(m, set, &n))
		return n;
	return -((double)m / FILTER_BLOCK_BITS) * log(1.0 - (double)set / (double)m) /
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

double model_classic_estimate_sd(uint64_t m, uint32_t k, double n)
{
	double md = (double)m, kd = (double)k;
	double q = exp(kd * n * log1p(-1.0 / md)), q2 = exp(kd * n * log1p(-2.0 / md));
	double var = md * q + md * (md - 1.0) * q2 - md * md * q * q;

	if (n <= 0.0)
		return 0.0;
	return sqrt(var > 0.0 ? var : 0.0) / (md * q * kd * -log1p(-1.0 / md));
}

double model_blocked_estimate_sd(uint64_t m, uint32_t k, double n)
{
	double kd = (double)k, blocks = (double)m / FILTER_BLOCK_BITS, var_block, mean_block;
	double r = pow(1.0 - 1.0 / FILTER_BLOCK_BITS, kd);

	if (n <= 0.0)
		return 0.0;
	mean_block = block_clear_moments(n / blocks, kd, &var_block);
	return sqrt(blocks * (var_block > 0.0 ? var_block : 0.0)) / (mean_block * (1.0 - r));
}
