/* SPDX-License-Identifier: MIT */
/*
 * sizing.h - choosing m and k for a capacity n and target rate p, and the
 * estimates that run the formulas backwards. Formulas in sizing.c.
 *
 * layout is FILTER_BLOCKED for the blocked formulas; every other layout
 * (classic, counting, DCSO) probes anywhere in its m positions and gets
 * the classic ones. For counting, m counts counters (4 bits each).
 */
#ifndef BFTOOLS_SIZING_H
#define BFTOOLS_SIZING_H

#include <stdint.h>

#include "filter_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expected false-positive rate after n distinct keys in m bits with k probes. */
double sizing_fpr(enum filter_layout layout, uint64_t n, uint64_t m, uint32_t k);

/*
 * The smallest m (a multiple of 512) and its k for which the layout's own
 * false-positive rate at n keys is <= p. Returns 0, or -1 with *errstr
 * (the filter would exceed FILTER_M_MAX).
 */
int sizing_choose(enum filter_layout layout, uint64_t n, double p,
		  uint64_t *m, uint32_t *k, const char **errstr);

/* The smallest m (multiple of 512) for which k probes keep the rate at n <= p. */
int sizing_bits_for_k(enum filter_layout layout, uint64_t n, double p, uint32_t k,
		      uint64_t *m, const char **errstr);

/* The k that minimises the rate at n keys for a fixed m. */
uint32_t sizing_best_k(enum filter_layout layout, uint64_t n, uint64_t m);

/* The capacity: the largest n for which sizing_fpr(n, m, k) <= p. */
uint64_t sizing_capacity(enum filter_layout layout, uint64_t m, uint32_t k, double p);

/* m rounded up to the layout's granule (512 bits). 0 if it would overflow. */
uint64_t sizing_round_bits(uint64_t m);

/*
 * Estimated distinct keys from bits_set of m with k probes:
 *   classic  n = ln(1 - X/m) / (k ln(1 - 1/m))       (~ -(m/k) ln(1 - X/m))
 *   blocked  n = -(m/512) ln(1 - X/m) / (1 - (1 - 1/512)^k)
 * Returns INFINITY for a full filter.
 */
double sizing_estimate_count(enum filter_layout layout, uint64_t m, uint32_t k,
			     uint64_t bits_set);

/*
 * Standard error of sizing_estimate_count for n keys in m bits with k
 * probes, by the delta method on the number of clear bits Z. Classic:
 * Var Z = m q (1 - q) - m^2 q^2 ... (occupancy; see sizing.c), with
 * q = (1 - 1/m)^(kn). Blocked: blocks are independent given their loads,
 * and the loads are Poisson, which adds their spread to Var Z.
 */
double sizing_estimate_sd(enum filter_layout layout, uint64_t m, uint32_t k, double n);

#ifdef __cplusplus
}
#endif

#endif
