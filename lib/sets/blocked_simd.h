/* SPDX-License-Identifier: MIT */
/*
 * blocked_simd.h - the blocked layout's membership test for many keys at
 * once, with SIMD where the CPU has it. Private to lib/ (filter.c and the
 * unit tests).
 *
 * A key of the blocked layout is present when bit (h2 * C[i]) >> 55 of its
 * 512-bit block is set for every i < k (filter.c). One block is one AVX-512
 * register: eight probes are computed, looked up and tested in a handful of
 * instructions with no branch per probe, where the scalar test stops at the
 * first clear bit and so mispredicts about once a key.
 */
#ifndef BFTOOLS_BLOCKED_SIMD_H
#define BFTOOLS_BLOCKED_SIMD_H

#include <stddef.h>
#include <stdint.h>

/*
 * For each key i < n: present[i] = 1 when every probe bit of its block
 * words[base[i] .. base[i] + 8) is set, else 0. h holds the keys' (h1, h2),
 * two words a key; multiplier holds C[0..k). Returns 0, or -1 without
 * touching present when this CPU has no SIMD version (the caller tests
 * one key at a time).
 */
int blocked_test_many(const uint64_t *words, const uint64_t *base, const uint64_t *h, size_t n,
		      uint32_t k, const uint64_t *multiplier, unsigned char *present);

/* 1 when blocked_test_many has a SIMD version here (it returns 0), else 0. */
int blocked_simd_usable(void);

/* Name of the version blocked_test_many uses: "avx512" or "none". */
const char *blocked_simd_impl(void);

/* For tests: 0 makes blocked_test_many return -1 from now on, 1 restores it. */
void blocked_simd_enable(int on);

#endif
