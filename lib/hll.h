/* SPDX-License-Identifier: MIT */
/*
 * hll.h - counting distinct keys in a stream: HyperLogLog (Flajolet, Fusy,
 * Gandouet & Meunier 2007) with an exact phase for small counts.
 *
 * A Bloom filter can estimate a count too, but it needs ~10 bits per key to
 * do it; HyperLogLog needs 2^precision bytes whatever the count. bfcount
 * uses precision 16: 64 KiB of registers, a relative standard error of
 * 1.04/256 = 0.41%. Estimation details (small-range and bias handling) are
 * in hll.c.
 *
 * The caller hashes keys (64-bit, uniformly distributed) and feeds hashes;
 * this module does no hashing of its own.
 */
#ifndef BFTOOLS_HLL_H
#define BFTOOLS_HLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HLL_PRECISION_MIN 4u
#define HLL_PRECISION_MAX 18u
#define HLL_PRECISION_DEFAULT 16u

struct hll;

/* A new, empty counter with 2^precision registers. NULL on bad precision or no memory. */
struct hll *hll_new(unsigned precision);
void hll_free(struct hll *h);

/* Count one key by its 64-bit hash; hll_add_many for a batch. */
void hll_add(struct hll *h, uint64_t hash);
void hll_add_many(struct hll *h, const uint64_t *hashes, size_t n);

/* The estimated number of distinct hashes added. */
double hll_estimate(const struct hll *h);

/* The relative standard error of hll_estimate at its current count (0 while exact). */
double hll_relative_error(const struct hll *h);

/* Whether the estimate is still an exact count (the small-count phase). */
int hll_is_exact(const struct hll *h);

/* Bytes of memory the counter uses at most. */
size_t hll_memory(unsigned precision);

#ifdef __cplusplus
}
#endif

#endif
