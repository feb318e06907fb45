/* SPDX-License-Identifier: MIT */
/*
 * crc.c - CRC-32 (gzip's polynomial, bit-reflected) by carry-less
 * multiplication, folded 256 bytes at a time, fused with a copy (see crc.h).
 *
 * The method is folding (Gopal et al., "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ", Intel, 2009), worked out here for our own
 * layout rather than taken from a table:
 *
 * Read 16 bytes little-endian as a 128-bit A, bit j is the coefficient of
 * x^(127-j) (gzip takes each byte's low bit first). A's first eight bytes
 * a0 and last eight a1 are then A = a0 x^64 + a1, each a polynomial of
 * degree 63 at most with bit i for x^(63-i). The message from A on is
 * A x^D + (the D bits after A) + ..., and only its value modulo P counts,
 * so A can be replaced by anything congruent to A x^D placed where the
 * block D bits later starts: a0 (x^(D+64) mod P) + a1 (x^D mod P), 96 bits
 * at most, XORed into that block. The carry-less product of two such
 * 64-bit values has its bit j for x^(126-j), one place off from A's
 * convention, which the constants absorb: x^(D+63) and x^(D-1) instead.
 * Constants are kept as bit i for x^(63-i) too (a 32-bit remainder in the
 * high half), and computed once, here, from P.
 *
 * Four registers of four 128-bit lanes hold 256 bytes; each lane folds
 * into its place in the next 256 (D = 2048). At the end the registers fold
 * into the last (D = 1536, 1024, 512) and its lanes into its last lane
 * (D = 384, 256, 128): a 16-byte block whose CRC, with no initial value,
 * is the whole message's. The caller's CRC is XORed into the first four
 * bytes first (a reflected CRC's register meets the message there), and
 * libdeflate finishes: the 16 bytes and the tail under 256.
 */
#include <pthread.h>
#include <string.h>

#include <libdeflate.h>

#include "crc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_X86 1
#include <immintrin.h>
#endif

#define PORTABLE_PIECE ((size_t)16 << 10)	/* copied, then CRC'd while in L1 */
#define FOLD_BYTES 256				/* four 512-bit registers */
#define SIMD_MIN (2 * FOLD_BYTES)		/* shorter: libdeflate alone */

static int enabled = 1;

void crc_simd_enable(int on)
{
	enabled = on;
}

/* libdeflate's CRC: the portable path, and the SIMD one's last bytes. */
static uint32_t crc_libdeflate(uint32_t crc, const void *p, size_t n)
{
	return n == 0 ? crc : (uint32_t)libdeflate_crc32(crc, p, n);
}

static uint32_t copy_portable(unsigned char *dst, const unsigned char *src, size_t n, uint32_t crc)
{
	for (size_t off = 0, len; off < n; off += len) {
		len = n - off < PORTABLE_PIECE ? n - off : PORTABLE_PIECE;
		memcpy(dst + off, src + off, len);
		crc = crc_libdeflate(crc, dst + off, len);
	}
	return crc;
}

#ifdef CRC_X86

/* x^n mod P (P = x^32 + 0x04c11db7, gzip's, not reflected): bit d for x^d. */
static uint32_t x_pow_mod(unsigned n)
{
	uint64_t r = 1;

	while (n-- > 0) {
		r <<= 1;
		if (r & ((uint64_t)1 << 32))
			r ^= 0x104c11db7u;
	}
	return (uint32_t)r;
}

/* x^n mod P as a fold multiplier: bit i for x^(63-i) (x^0 is bit 63). */
static uint64_t multiplier(unsigned n)
{
	uint32_t r = x_pow_mod(n), reflected = 0;

	for (int d = 0; d < 32; d++)
		if (r & (1u << d))
			reflected |= 1u << (31 - d);
	return (uint64_t)reflected << 32;
}

/* The multipliers that carry a 16-byte block D bits on: for a0, for a1. */
struct fold {
	uint64_t first, second;
};

static struct {
	struct fold by2048, by1536, by1024, by512, by384, by256, by128;
} folds;

static struct fold fold_by(unsigned bits)
{
	struct fold f = { multiplier(bits + 63), multiplier(bits - 1) };

	return f;
}

static void compute_folds(void)
{
	folds.by2048 = fold_by(2048);
	folds.by1536 = fold_by(1536);
	folds.by1024 = fold_by(1024);
	folds.by512 = fold_by(512);
	folds.by384 = fold_by(384);
	folds.by256 = fold_by(256);
	folds.by128 = fold_by(128);
}

static pthread_once_t folds_once = PTHREAD_ONCE_INIT;

#define T512 __attribute__((target("avx512f,vpclmulqdq")))
#define INLINE512 static inline __attribute__((always_inline, target("avx512f,vpclmulqdq")))

/* Every lane of a register: (first, second). */
INLINE512 __m512i lanes_of(struct fold f)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)f.second, (long long)f.first));
}

/* Each lane of a carried D bits on (by k's lanes), XORed into b. */
INLINE512 __m512i fold_into(__m512i a, __m512i k, __m512i b)
{
	__m512i lo = _mm512_clmulepi64_epi128(a, k, 0x00), hi = _mm512_clmulepi64_epi128(a, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, b, 0x96);	/* lo ^ hi ^ b */
}

INLINE512 __m512i load_copy(unsigned char *dst, const unsigned char *src)
{
	__m512i v = _mm512_loadu_si512((const void *)src);

	if (dst != NULL)
		_mm512_storeu_si512((void *)dst, v);
	return v;
}

/*
 * The four registers, which end FOLD_BYTES before the message's last 16
 * bytes so far, down to those 16 bytes, stored to out.
 */
INLINE512 void reduce(__m512i r0, __m512i r1, __m512i r2, __m512i r3, unsigned char out[16])
{
	__m512i r = fold_into(r0, lanes_of(folds.by1536), r3);
	__m512i k = _mm512_inserti32x4(_mm512_inserti32x4(lanes_of(folds.by384),
							  _mm_set_epi64x((long long)folds.by256.second,
									 (long long)folds.by256.first), 1),
				       _mm_set_epi64x((long long)folds.by128.second, (long long)folds.by128.first), 2);
	__m128i x;

	r = fold_into(r1, lanes_of(folds.by1024), r);
	r = fold_into(r2, lanes_of(folds.by512), r);
	/* lanes 0-2 carried to lane 3's place; lane 3 as it is */
	r = _mm512_mask_blend_epi64(0xc0, fold_into(r, k, _mm512_setzero_si512()), r);
	x = _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(r, 0), _mm512_extracti32x4_epi32(r, 1)),
			  _mm_xor_si128(_mm512_extracti32x4_epi32(r, 2), _mm512_extracti32x4_epi32(r, 3)));
	_mm_storeu_si128((__m128i *)(void *)out, x);
}

/* crc_copy's SIMD body (dst NULL: the CRC alone), for n >= SIMD_MIN. */
INLINE512 uint32_t fold_all(unsigned char *dst, const unsigned char *src, size_t n, uint32_t crc)
{
	__m512i k = lanes_of(folds.by2048);
	__m512i r0 = load_copy(dst, src), r1 = load_copy(dst ? dst + 64 : NULL, src + 64);
	__m512i r2 = load_copy(dst ? dst + 128 : NULL, src + 128), r3 = load_copy(dst ? dst + 192 : NULL, src + 192);
	unsigned char last[16];
	size_t off = FOLD_BYTES;

	r0 = _mm512_xor_si512(r0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (; n - off >= FOLD_BYTES; off += FOLD_BYTES) {
		unsigned char *to = dst != NULL ? dst + off : NULL;

		r0 = fold_into(r0, k, load_copy(to, src + off));
		r1 = fold_into(r1, k, load_copy(to ? to + 64 : NULL, src + off + 64));
		r2 = fold_into(r2, k, load_copy(to ? to + 128 : NULL, src + off + 128));
		r3 = fold_into(r3, k, load_copy(to ? to + 192 : NULL, src + off + 192));
	}
	reduce(r0, r1, r2, r3, last);
	if (dst != NULL)
		memcpy(dst + off, src + off, n - off);
	/* the 16 bytes' CRC from a zero register: libdeflate's from ~0, which it inverts first */
	crc = crc_libdeflate(0xffffffffu, last, sizeof last);
	return crc_libdeflate(crc, src + off, n - off);
}

T512 static uint32_t copy_simd(unsigned char *dst, const unsigned char *src, size_t n, uint32_t crc)
{
	return fold_all(dst, src, n, crc);
}

T512 static uint32_t crc_simd(const unsigned char *p, size_t n, uint32_t crc)
{
	return fold_all(NULL, p, n, crc);
}

/* Asked on every call (a few instructions): no state shared between threads. */
static int simd_usable(void)
{
	__builtin_cpu_init();
	if (!enabled || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("vpclmulqdq"))
		return 0;
	pthread_once(&folds_once, compute_folds);
	return 1;
}

#else

static int simd_usable(void)
{
	return 0;
}

#endif

uint32_t crc_copy(void *dst, const void *src, size_t n, uint32_t crc)
{
#ifdef CRC_X86
	if (n >= SIMD_MIN && simd_usable())
		return copy_simd(dst, src, n, crc);
#endif
	return copy_portable(dst, src, n, crc);
}

uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
#ifdef CRC_X86
	if (n >= SIMD_MIN && simd_usable())
		return crc_simd(p, n, crc);
#endif
	return crc_libdeflate(crc, p, n);
}

const char *crc_impl(void)
{
	return simd_usable() ? "vpclmulqdq" : "libdeflate";
}
