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
 * this module does no hashing of its own. Counters of one precision
 * combine exactly (hll_merge): the union of two counters is the counter
 * of the union of their inputs, register for register.
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

/*
 * What a counter holds, for saving it and loading it back (sketch.h) and
 * for combining counters.
 */
unsigned hll_precision(const struct hll *h);

/* The most distinct hashes the exact phase holds: 2^precision / 8. */
size_t hll_exact_max(unsigned precision);

/* The largest value a register can hold: 64 - precision + 1. */
unsigned hll_register_max(unsigned precision);

/*
 * While exact: the distinct hashes counted, in ascending order, into out
 * (room for hll_exact_max of them); returns how many. 0 once estimating.
 */
size_t hll_exact_hashes(const struct hll *h, uint64_t *out);

/*
 * The 2^precision registers into out: as they are, or while exact, as the
 * hashes counted so far set them (what the switch would make).
 */
void hll_registers(const struct hll *h, uint8_t *out);

/*
 * Make h hold exactly these 2^precision registers, estimating from now on
 * (what was counted before is dropped). Returns 0, or -1 leaving h as it
 * was when a register is above hll_register_max.
 */
int hll_set_registers(struct hll *h, const uint8_t *registers);

/*
 * into := the union of into and from, as if every hash counted by from had
 * been added to into: register by register the larger; while both are
 * exact, the union of their hashes (which may end into's exact phase, just
 * as adding them would). Returns 0, or -1 leaving into as it was when the
 * precisions differ.
 */
int hll_merge(struct hll *into, const struct hll *from);

#ifdef __cplusplus
}
#endif

#endif
