/* SPDX-License-Identifier: MIT */
/*
 * blocked_simd.c - the blocked layout's membership test with AVX-512.
 *
 * Per key: the block's eight words are one register. Eight probes at a
 * time: broadcast h2, multiply by eight of the C[i] (vpmullq), keep the top
 * nine bits (the bit's place in the block), pick each probe's word with a
 * permute on the top three of those, shift its bit down and test it. A key
 * whose first eight probes are all set goes on to the next eight; at the
 * fills a filter is used at (about half its bits set) that happens for one
 * absent key in hundreds, so the branch is nearly always predicted, while
 * the scalar test stops at a random probe and mispredicts about once a key.
 *
 * Compiled per function with a target attribute, so the library runs on any
 * x86-64 (or other) CPU; the kernel is used only when the CPU reports
 * AVX-512F and DQ.
 */
#include "blocked_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BLOCKED_X86 1
#include <immintrin.h>
#endif

static int enabled = 1;

void blocked_simd_enable(int on)
{
	enabled = on;
}

#ifdef BLOCKED_X86

#define T512 __attribute__((target("avx512f,avx512dq")))
#define INLINE512 static inline __attribute__((always_inline, target("avx512f,avx512dq")))

/* Lanes (probes) of a group of eight that exist: all but in the last group. */
static __mmask8 group_lanes(uint32_t k, uint32_t first)
{
	uint32_t left = k - first;

	return left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);
}

/* Are the probes multiplier[first ..] (the lanes of live) all set in block? */
INLINE512 int group_all_set(__m512i block, __m512i h2, const uint64_t *multiplier, __mmask8 live)
{
	__m512i c = _mm512_maskz_loadu_epi64(live, multiplier);
	__m512i bit = _mm512_srli_epi64(_mm512_mullo_epi64(h2, c), 55);
	/* the permute reads only an index's low three bits: bit >> 6 is 0..7 */
	__m512i word = _mm512_permutexvar_epi64(_mm512_srli_epi64(bit, 6), block);
	__m512i low = _mm512_and_si512(bit, _mm512_set1_epi64(63));
	__m512i probe = _mm512_sllv_epi64(_mm512_set1_epi64(1), low);

	return _mm512_mask_test_epi64_mask(live, word, probe) == live;
}

T512 static void test_avx512(const uint64_t *words, const uint64_t *base, const uint64_t *h,
			     size_t n, uint32_t k, const uint64_t *multiplier,
			     unsigned char *present)
{
	__mmask8 first = group_lanes(k, 0);

	for (size_t i = 0; i < n; i++) {
		__m512i block = _mm512_loadu_si512((const void *)(words + base[i]));
		__m512i h2 = _mm512_set1_epi64((long long)h[2 * i + 1]);
		int all = group_all_set(block, h2, multiplier, first);

		for (uint32_t g = 8; all && g < k; g += 8)
			all = group_all_set(block, h2, multiplier + g, group_lanes(k, g));
		present[i] = (unsigned char)all;
	}
}

/* Asked on every call (a few instructions a batch): no state shared between threads. */
static int avx512_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

int blocked_test_many(const uint64_t *words, const uint64_t *base, const uint64_t *h, size_t n,
		      uint32_t k, const uint64_t *multiplier, unsigned char *present)
{
	if (!enabled || !avx512_usable())
		return -1;
	test_avx512(words, base, h, n, k, multiplier, present);
	return 0;
}

int blocked_simd_usable(void)
{
	return enabled && avx512_usable();
}

const char *blocked_simd_impl(void)
{
	return blocked_simd_usable() ? "avx512" : "none";
}

#else /* no x86-64 SIMD: the caller's scalar test */

int blocked_test_many(const uint64_t *words, const uint64_t *base, const uint64_t *h, size_t n,
		      uint32_t k, const uint64_t *multiplier, unsigned char *present)
{
	(void)words, (void)base, (void)h, (void)n, (void)k, (void)multiplier, (void)present;
	return -1;
}

int blocked_simd_usable(void)
{
	return 0;
}

const char *blocked_simd_impl(void)
{
	return "none";
}

#endif
