/* SPDX-License-Identifier: MIT */
/*
 * siphash.h - SipHash keyed pseudo-random functions (Aumasson & Bernstein,
 * "SipHash: a fast short-input PRF", 2012).
 *
 * SipHash-c-d runs c compression rounds per 8-byte message word and d
 * finalisation rounds. 2-4 is the conservative choice of the paper; 1-3 is
 * the lighter variant (used by Rust's and Python's hash tables) that bftools
 * uses by default for speed. Both produce 64- or 128-bit output; the 128-bit
 * form is the paper's "SipHash-128" extension.
 *
 * Output words are returned as host integers; the reference test vectors are
 * the little-endian bytes of out[0] then out[1].
 */
#ifndef BFTOOLS_SIPHASH_H
#define BFTOOLS_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct siphash_key {
	uint64_t k0, k1;
};

/* Read the 16 key bytes as two little-endian words, as the reference does. */
void siphash_key_from_bytes(struct siphash_key *key, const unsigned char bytes[16]);

uint64_t siphash_2_4_64(const struct siphash_key *key, const void *msg, size_t len);
void siphash_2_4_128(const struct siphash_key *key, const void *msg, size_t len, uint64_t out[2]);
void siphash_1_3_128(const struct siphash_key *key, const void *msg, size_t len, uint64_t out[2]);

/*
 * Hash n messages at once: out[2*i] and out[2*i + 1] receive exactly what
 * siphash_1_3_128 (or _2_4_128) writes for msgs[i]. Same results on every
 * CPU; uses wider hardware (AVX-512, AVX2) where the CPU has it.
 */
void siphash_1_3_128_many(const struct siphash_key *key, const struct line *msgs, size_t n, uint64_t *out);
void siphash_2_4_128_many(const struct siphash_key *key, const struct line *msgs, size_t n, uint64_t *out);

/* The implementation the _many calls use now ("avx512", "avx2", "portable"...). */
const char *siphash_many_impl(void);
/* Use the named implementation (tests, benchmarks): 0, or -1 if unknown or this CPU lacks it. NULL = best. */
int siphash_many_select(const char *name);

#ifdef __cplusplus
}
#endif

#endif
