/* SPDX-License-Identifier: MIT */
/*
 * popcount.h - bits set in 64-bit words, one word or a whole array.
 *
 * Counting the bits of a whole array is the one loop where popcount speed
 * shows (bfinfo, -v, estimates, the current rate), hence an array call
 * that uses the CPU's instruction where it has one.
 */
#ifndef BFTOOLS_POPCOUNT_H
#define BFTOOLS_POPCOUNT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline unsigned popcount64(uint64_t w)
{
	return (unsigned)__builtin_popcountll(w);
}

/* Bits set in w[0 .. n). */
uint64_t popcount_words(const uint64_t *w, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
