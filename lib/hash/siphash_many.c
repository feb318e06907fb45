/* SPDX-License-Identifier: MIT */
/*
 * siphash_many.c - SipHash-1-3-128 and SipHash-2-4-128 of a whole batch of
 * messages, several at a time.
 *
 * Why: one SipHash is a single long dependency chain, so a scalar loop is
 * bound by the latency of the rounds, not by the width of the CPU. Messages
 * of a batch are independent: hashing a group of them in lockstep, one
 * message per SIMD lane (or per interleaved scalar chain), fills the idle
 * execution units. The results are bit-for-bit those of siphash.c, which
 * stays the reference; this file only reorganises the same arithmetic.
 *
 * How a batch is hashed:
 *
 *   1. Plan (portable C). Up to CHUNK messages at a time are counting-sorted
 *      by their number of full 8-byte words, so that the GROUP messages
 *      hashed together need (nearly) the same number of compression steps
 *      and few lanes sit idle. A message with LONG_WORDS full words or more
 *      is handed to the scalar function at once: in a group it would keep
 *      the other lanes idle for its whole length.
 *   2. Group kernel (per implementation). All lanes absorb word j together;
 *      a lane whose message has no word j keeps its state (masked blend).
 *      Word j of a lane is its full word j, its last word (the leftover
 *      bytes plus len mod 256 in the top byte, as siphash.c builds it), or
 *      nothing. Then all lanes are finalised together.
 *   3. The two output words go back to out[2*i], out[2*i + 1] for the
 *      message's original index i. Padding lanes (index PAD_INDEX) hash an
 *      empty message and are never written out.
 *
 * Never reading outside [data, data + len), which could fault at a page
 * boundary: "avx512" loads each lane's 64-byte blocks with a byte mask of
 * exactly the message's bytes (masked-off bytes are not accessed and
 * cannot fault), which also delivers the last word zero-padded; "avx2" and
 * "portable" load only full words (AVX2 gathers masked per lane) and build
 * the last word from the 8 bytes ending exactly at data + len, shifted
 * right, or byte by byte when the message is shorter than 8 bytes.
 *
 * Implementations, best first: "avx512" (AVX-512F+BW: two registers of 8
 * lanes, native 64-bit rotate), "avx2" (two registers of 4 lanes, rotates
 * from shifts and byte shuffles) and "portable" (plain C11, two interleaved
 * scalar chains; the only one built for other CPUs or compilers). The x86
 * code is compiled per function with target attributes, so the library
 * needs no special compiler flags, and is chosen at run time from what the
 * CPU reports. Measured on the build machine (AMD EPYC, Zen 4, 2.6 GHz),
 * 4096-line batches of URL-like lines of 40-90 bytes, ns per line:
 *
 *                    1-3-128 gcc/clang    2-4-128 gcc/clang
 *   scalar loop         31 / 31              46 / 46
 *   avx512              11 / 11              14 / 15
 *   avx2                17 / 18              22 / 25
 *   portable            27 / 28              38 / 42
 *
 * Zen 4 runs a 512-bit operation as two 256-bit halves, so "avx512" wins
 * by the one-instruction rotate and byte-masked loads, not by width.
 *
 * Deliberately absent: 64-bit output (bftools uses the 128-bit form),
 * streaming input, and any state shared between calls except the choice
 * made with siphash_many_select().
 */
#include <stdint.h>
#include <string.h>

#include "sip_core.h"
#include "siphash.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIPMANY_X86 1
#include <immintrin.h>
#endif

/* As in siphash.c: each variant gets its own copy with constant rounds. */

#define CHUNK 512		/* messages planned at a time: the plan fits in L1 */
#define GROUP 16		/* messages per kernel call; the plan is padded to it */
#define LONG_WORDS 64		/* from 512 bytes on, the scalar function is used */
#define PAD_INDEX UINT32_MAX

typedef void scalar_fn(const struct siphash_key *, const void *, size_t, uint64_t[2]);

/* Messages of one chunk, sorted by word count; idx is the place in the chunk. */
struct plan {
	const unsigned char *ptr[CHUNK + GROUP];
	uint64_t len[CHUNK + GROUP];
	uint32_t idx[CHUNK + GROUP];
	size_t count;		/* a multiple of GROUP */
};

typedef void group_fn(const struct siphash_key *, const struct plan *, size_t, uint64_t *);

/* "somepseudorandomlygeneratedbytes"; v1's has the 128-bit tweak 0xee folded in. */
static const uint64_t sip_iv[4] = {
	UINT64_C(0x736f6d6570736575), UINT64_C(0x646f72616e646f6d) ^ 0xee,
	UINT64_C(0x6c7967656e657261), UINT64_C(0x7465646279746573),
};

/* ---- portable pieces, also used by the x86 kernels -------------------- */

/*
 * The leftover bytes of a message (len mod 8 of them) as a little-endian
 * word, without the length byte. From 8 bytes on, one load of the 8 bytes
 * ending at data + len; ">> 1 >> (63 - 8r)" drops 64 - 8r bits and, for
 * r == 0, all 64 without an undefined 64-bit shift. Shorter messages are
 * assembled in 4 + 2 + 1 byte pieces, indexing from p so that p may be NULL
 * when len is 0.
 */
static inline uint64_t tail_bytes(const unsigned char *p, size_t len)
{
	unsigned r = (unsigned)(len & 7);
	unsigned shift = 0;
	size_t i = 0;
	uint64_t b = 0;

	if (len >= 8)
		return load_le64(p + len - 8) >> 1 >> (63 - 8 * r);
	if (len & 4) {
		b = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
		i = 4;
		shift = 32;
	}
	if (len & 2) {
		b |= ((uint64_t)p[i] | (uint64_t)p[i + 1] << 8) << shift;
		i += 2;
		shift += 16;
	}
	if (len & 1)
		b |= (uint64_t)p[i] << shift;
	return b;
}

static inline uint64_t last_word(const unsigned char *p, size_t len)
{
	return tail_bytes(p, len) | (uint64_t)(len & 0xff) << 56;
}

SIP_INLINE void sip_init(struct sip_state *s, const struct siphash_key *key)
{
	s->v0 = key->k0 ^ sip_iv[0];
	s->v1 = key->k1 ^ sip_iv[1];
	s->v2 = key->k0 ^ sip_iv[2];
	s->v3 = key->k1 ^ sip_iv[3];
}

/* Write a group's results to their messages' places, skipping padding. */
static void put_results(const struct plan *p, size_t g, const uint64_t h0[GROUP],
			const uint64_t h1[GROUP], uint64_t *out)
{
	for (size_t l = 0; l < GROUP; l++) {
		uint32_t i = p->idx[g + l];

		if (i == PAD_INDEX)
			continue;
		out[2 * (size_t)i] = h0[l];
		out[2 * (size_t)i + 1] = h1[l];
	}
}

/* The most full words among lanes g..g+count-1. */
static inline uint64_t group_max_words(const struct plan *p, size_t g, size_t count)
{
	uint64_t hi = 0;

	for (size_t l = 0; l < count; l++)
		hi = p->len[g + l] >> 3 > hi ? p->len[g + l] >> 3 : hi;
	return hi;
}

/* ---- the plan ---------------------------------------------------------- */

/*
 * Counting sort of msgs[0..n) by full word count into p; long messages are
 * hashed here with the scalar function instead. Padding lanes are empty
 * messages (NULL, 0), which no kernel dereferences.
 */
static void plan_build(struct plan *p, const struct siphash_key *key, const struct line *msgs,
		       size_t n, scalar_fn *one, uint64_t *out)
{
	size_t next[LONG_WORDS] = { 0 };
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		size_t w = msgs[i].len >> 3;

		if (w < LONG_WORDS)
			next[w]++;
		else
			one(key, msgs[i].data, msgs[i].len, out + 2 * i);
	}
	for (size_t b = 0; b < LONG_WORDS; b++) {
		size_t count = next[b];

		next[b] = total;
		total += count;
	}
	for (size_t i = 0; i < n; i++) {
		size_t w = msgs[i].len >> 3, k;

		if (w >= LONG_WORDS)
			continue;
		k = next[w]++;
		p->ptr[k] = (const unsigned char *)msgs[i].data;
		p->len[k] = msgs[i].len;
		p->idx[k] = (uint32_t)i;
	}
	for (; total % GROUP != 0; total++) {
		p->ptr[total] = NULL;
		p->len[total] = 0;
		p->idx[total] = PAD_INDEX;
	}
	p->count = total;
}

/* ---- portable kernel ----------------------------------------------------- */

/* All full words of plan entry e from word j on, alone. */
SIP_INLINE void portable_rest(struct sip_state *s, const struct plan *p, size_t e, size_t j, int c)
{
	for (; j < p->len[e] >> 3; j++)
		sip_absorb(s, load_le64(p->ptr[e] + 8 * j), c);
	sip_absorb(s, last_word(p->ptr[e], p->len[e]), c);
}

SIP_INLINE void portable_final(struct sip_state *a, struct sip_state *b, int d, uint64_t *h0, uint64_t *h1)
{
	a->v2 ^= 0xee;
	b->v2 ^= 0xee;
	for (int i = 0; i < d; i++) {
		sip_round(a);
		sip_round(b);
	}
	h0[0] = a->v0 ^ a->v1 ^ a->v2 ^ a->v3;
	h0[1] = b->v0 ^ b->v1 ^ b->v2 ^ b->v3;
	a->v1 ^= 0xdd;
	b->v1 ^= 0xdd;
	for (int i = 0; i < d; i++) {
		sip_round(a);
		sip_round(b);
	}
	h1[0] = a->v0 ^ a->v1 ^ a->v2 ^ a->v3;
	h1[1] = b->v0 ^ b->v1 ^ b->v2 ^ b->v3;
}

/*
 * Plan entries e and e + 1 as two interleaved scalar chains: their common
 * full words in lockstep, the rest of each (rarely more than the last word:
 * the plan groups equal word counts), then both finalisations in lockstep.
 * Two named states rather than an array of lanes: gcc 12 turned the array
 * version into slow SSE2 code.
 */
SIP_INLINE void portable_pair(const struct siphash_key *key, const struct plan *p, size_t e,
			      int c, int d, uint64_t *h0, uint64_t *h1)
{
	const unsigned char *pa = p->ptr[e], *pb = p->ptr[e + 1];
	size_t wa = p->len[e] >> 3, wb = p->len[e + 1] >> 3;
	size_t lo = wa < wb ? wa : wb;
	struct sip_state a, b;

	sip_init(&a, key);
	sip_init(&b, key);
	for (size_t j = 0; j < lo; j++) {
		sip_absorb(&a, load_le64(pa + 8 * j), c);
		sip_absorb(&b, load_le64(pb + 8 * j), c);
	}
	portable_rest(&a, p, e, lo, c);
	portable_rest(&b, p, e + 1, lo, c);
	portable_final(&a, &b, d, h0, h1);
}

SIP_INLINE void portable_group(const struct siphash_key *key, const struct plan *p, size_t g,
			       uint64_t *out, int c, int d)
{
	uint64_t h0[GROUP], h1[GROUP];

	for (size_t l = 0; l < GROUP; l += 2)
		portable_pair(key, p, g + l, c, d, h0 + l, h1 + l);
	put_results(p, g, h0, h1, out);
}

static void portable_13(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	portable_group(key, p, g, out, 1, 3);
}

static void portable_24(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	portable_group(key, p, g, out, 2, 4);
}

static int portable_usable(void)
{
	return 1;
}

#ifdef SIPMANY_X86

/* ---- AVX-512 kernel: 8 lanes in one register ----------------------------- */

#define T512 __attribute__((target("avx512f,avx512bw")))
#define INLINE512 static inline __attribute__((always_inline, target("avx512f,avx512bw")))

struct v512 {
	__m512i v0, v1, v2, v3;
};

INLINE512 void round512(struct v512 *s)
{
	s->v0 = _mm512_add_epi64(s->v0, s->v1);
	s->v1 = _mm512_rol_epi64(s->v1, 13);
	s->v1 = _mm512_xor_si512(s->v1, s->v0);
	s->v0 = _mm512_rol_epi64(s->v0, 32);
	s->v2 = _mm512_add_epi64(s->v2, s->v3);
	s->v3 = _mm512_rol_epi64(s->v3, 16);
	s->v3 = _mm512_xor_si512(s->v3, s->v2);
	s->v0 = _mm512_add_epi64(s->v0, s->v3);
	s->v3 = _mm512_rol_epi64(s->v3, 21);
	s->v3 = _mm512_xor_si512(s->v3, s->v0);
	s->v2 = _mm512_add_epi64(s->v2, s->v1);
	s->v1 = _mm512_rol_epi64(s->v1, 17);
	s->v1 = _mm512_xor_si512(s->v1, s->v2);
	s->v2 = _mm512_rol_epi64(s->v2, 32);
}

INLINE512 void absorb512(struct v512 *s, __m512i m, int c)
{
	s->v3 = _mm512_xor_si512(s->v3, m);
	for (int i = 0; i < c; i++)
		round512(s);
	s->v0 = _mm512_xor_si512(s->v0, m);
}

/* Lanes not in live keep their old state: their message has no word here. */
INLINE512 void absorb512_masked(struct v512 *s, __m512i m, __mmask8 live, int c)
{
	struct v512 t = *s;

	absorb512(&t, m, c);
	s->v0 = _mm512_mask_mov_epi64(s->v0, live, t.v0);
	s->v1 = _mm512_mask_mov_epi64(s->v1, live, t.v1);
	s->v2 = _mm512_mask_mov_epi64(s->v2, live, t.v2);
	s->v3 = _mm512_mask_mov_epi64(s->v3, live, t.v3);
}

INLINE512 __m512i xor4_512(const struct v512 *s)
{
	return _mm512_xor_si512(_mm512_xor_si512(s->v0, s->v1), _mm512_xor_si512(s->v2, s->v3));
}

/*
 * Words 8b..8b+7 of the 8 lanes, transposed so that w[i] holds word 8b + i
 * of every lane: one byte-masked load per lane (exactly its bytes in this
 * 64-byte block, zeros after them, so the last word arrives zero-padded),
 * then an 8x8 transpose in three shuffle stages. Measured faster than a
 * gather per word on AMD Zen 4, where gathers are slow.
 */
INLINE512 __m512i lane_block512(const struct plan *p, size_t e, uint64_t b)
{
	uint64_t len = p->len[e];
	uint64_t have = len > 64 * b ? len - 64 * b : 0;
	__mmask64 k = have >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << have) - 1;

	/* through uintptr_t: ptr may be NULL, and 64b past it is never read */
	return _mm512_maskz_loadu_epi8(k, (const void *)((uintptr_t)p->ptr[e] + 64 * b));
}

/* Written out without loops or arrays: gcc 12 otherwise kept them in memory. */
INLINE512 void block512(const struct plan *p, size_t g, uint64_t b, __m512i w[8])
{
	__m512i r0 = lane_block512(p, g, b), r1 = lane_block512(p, g + 1, b);
	__m512i r2 = lane_block512(p, g + 2, b), r3 = lane_block512(p, g + 3, b);
	__m512i r4 = lane_block512(p, g + 4, b), r5 = lane_block512(p, g + 5, b);
	__m512i r6 = lane_block512(p, g + 6, b), r7 = lane_block512(p, g + 7, b);
	/* t: pairs of lanes, word 2i in 128-bit chunk i (lo) or word 2i+1 (hi) */
	__m512i t0 = _mm512_unpacklo_epi64(r0, r1), t1 = _mm512_unpackhi_epi64(r0, r1);
	__m512i t2 = _mm512_unpacklo_epi64(r2, r3), t3 = _mm512_unpackhi_epi64(r2, r3);
	__m512i t4 = _mm512_unpacklo_epi64(r4, r5), t5 = _mm512_unpackhi_epi64(r4, r5);
	__m512i t6 = _mm512_unpacklo_epi64(r6, r7), t7 = _mm512_unpackhi_epi64(r6, r7);
	/* u: four lanes, two words (0x88: chunks 0 and 2, 0xdd: 1 and 3) */
	__m512i u0 = _mm512_shuffle_i64x2(t0, t2, 0x88), u1 = _mm512_shuffle_i64x2(t1, t3, 0x88);
	__m512i u2 = _mm512_shuffle_i64x2(t0, t2, 0xdd), u3 = _mm512_shuffle_i64x2(t1, t3, 0xdd);
	__m512i u4 = _mm512_shuffle_i64x2(t4, t6, 0x88), u5 = _mm512_shuffle_i64x2(t5, t7, 0x88);
	__m512i u6 = _mm512_shuffle_i64x2(t4, t6, 0xdd), u7 = _mm512_shuffle_i64x2(t5, t7, 0xdd);

	w[0] = _mm512_shuffle_i64x2(u0, u4, 0x88);
	w[1] = _mm512_shuffle_i64x2(u1, u5, 0x88);
	w[2] = _mm512_shuffle_i64x2(u2, u6, 0x88);
	w[3] = _mm512_shuffle_i64x2(u3, u7, 0x88);
	w[4] = _mm512_shuffle_i64x2(u0, u4, 0xdd);
	w[5] = _mm512_shuffle_i64x2(u1, u5, 0xdd);
	w[6] = _mm512_shuffle_i64x2(u2, u6, 0xdd);
	w[7] = _mm512_shuffle_i64x2(u3, u7, 0xdd);
}

/*
 * One register of 8 lanes: state and word counts. The current block of
 * words is kept apart: it is indexed at run time, and gcc 12 then kept a
 * whole struct holding it, state included, in memory.
 */
struct lanes512 {
	struct v512 s;
	__m512i words, len_byte;
};

INLINE512 void lanes512_init(struct lanes512 *a, const struct siphash_key *key,
			     const struct plan *p, size_t g)
{
	__m512i len = _mm512_loadu_si512(&p->len[g]);

	a->words = _mm512_srli_epi64(len, 3);
	a->len_byte = _mm512_slli_epi64(len, 56);
	a->s.v0 = _mm512_set1_epi64((long long)(key->k0 ^ sip_iv[0]));
	a->s.v1 = _mm512_set1_epi64((long long)(key->k1 ^ sip_iv[1]));
	a->s.v2 = _mm512_set1_epi64((long long)(key->k0 ^ sip_iv[2]));
	a->s.v3 = _mm512_set1_epi64((long long)(key->k1 ^ sip_iv[3]));
}

/*
 * Absorb word j of every lane that has one: a full word, or at j equal to
 * its word count the zero-padded last word plus the length byte.
 */
INLINE512 void lanes512_word(struct lanes512 *a, __m512i w[8], const struct plan *p, size_t g,
			     uint64_t j, int c)
{
	__m512i jv = _mm512_set1_epi64((long long)j);
	__mmask8 ends = _mm512_cmpeq_epu64_mask(a->words, jv);
	__mmask8 live = _mm512_cmpge_epu64_mask(a->words, jv);
	__m512i m;

	if (j % 8 == 0)
		block512(p, g, j / 8, w);
	m = _mm512_mask_or_epi64(w[j % 8], ends, w[j % 8], a->len_byte);
	if (live == 0xff)
		absorb512(&a->s, m, c);
	else
		absorb512_masked(&a->s, m, live, c);
}

INLINE512 void final512(struct v512 *a, struct v512 *b, int d, uint64_t *h0, uint64_t *h1)
{
	a->v2 = _mm512_xor_si512(a->v2, _mm512_set1_epi64(0xee));
	b->v2 = _mm512_xor_si512(b->v2, _mm512_set1_epi64(0xee));
	for (int i = 0; i < d; i++) {
		round512(a);
		round512(b);
	}
	_mm512_storeu_si512(h0, xor4_512(a));
	_mm512_storeu_si512(h0 + 8, xor4_512(b));
	a->v1 = _mm512_xor_si512(a->v1, _mm512_set1_epi64(0xdd));
	b->v1 = _mm512_xor_si512(b->v1, _mm512_set1_epi64(0xdd));
	for (int i = 0; i < d; i++) {
		round512(a);
		round512(b);
	}
	_mm512_storeu_si512(h1, xor4_512(a));
	_mm512_storeu_si512(h1 + 8, xor4_512(b));
}

/* Two registers per step: 16 independent chains keep the vector units busy. */
INLINE512 void group512(const struct siphash_key *key, const struct plan *p, size_t g,
			uint64_t *out, int c, int d)
{
	struct lanes512 a, b;
	__m512i wa[8], wb[8];
	uint64_t hi = group_max_words(p, g, GROUP), h0[GROUP], h1[GROUP];

	lanes512_init(&a, key, p, g);
	lanes512_init(&b, key, p, g + 8);
	for (uint64_t j = 0; j <= hi; j++) {
		lanes512_word(&a, wa, p, g, j, c);
		lanes512_word(&b, wb, p, g + 8, j, c);
	}
	final512(&a.s, &b.s, d, h0, h1);
	put_results(p, g, h0, h1, out);
}

T512 static void avx512_13(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	group512(key, p, g, out, 1, 3);
}

T512 static void avx512_24(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	group512(key, p, g, out, 2, 4);
}

static int avx512_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

/* ---- AVX2 kernel: two registers of 4 lanes, interleaved -------------------- */

#define T256 __attribute__((target("avx2")))
#define INLINE256 static inline __attribute__((always_inline, target("avx2")))

struct v256 {
	__m256i v0, v1, v2, v3;
};

/* AVX2 has no 64-bit rotate: 32 and 16 are shuffles, the rest shift twice. */
#define ROL256(x, r) _mm256_or_si256(_mm256_slli_epi64((x), (r)), _mm256_srli_epi64((x), 64 - (r)))
#define ROL256_32(x) _mm256_shuffle_epi32((x), 0xb1)
#define ROL256_16(x, rot16) _mm256_shuffle_epi8((x), (rot16))

INLINE256 void round256(struct v256 *s)
{
	const __m256i rot16 = _mm256_setr_epi8(6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13,
					       6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13);

	s->v0 = _mm256_add_epi64(s->v0, s->v1);
	s->v1 = ROL256(s->v1, 13);
	s->v1 = _mm256_xor_si256(s->v1, s->v0);
	s->v0 = ROL256_32(s->v0);
	s->v2 = _mm256_add_epi64(s->v2, s->v3);
	s->v3 = ROL256_16(s->v3, rot16);
	s->v3 = _mm256_xor_si256(s->v3, s->v2);
	s->v0 = _mm256_add_epi64(s->v0, s->v3);
	s->v3 = ROL256(s->v3, 21);
	s->v3 = _mm256_xor_si256(s->v3, s->v0);
	s->v2 = _mm256_add_epi64(s->v2, s->v1);
	s->v1 = ROL256(s->v1, 17);
	s->v1 = _mm256_xor_si256(s->v1, s->v2);
	s->v2 = ROL256_32(s->v2);
}

INLINE256 void absorb256(struct v256 *s, __m256i m, __m256i live, int c)
{
	struct v256 t = *s;

	t.v3 = _mm256_xor_si256(t.v3, m);
	for (int i = 0; i < c; i++)
		round256(&t);
	t.v0 = _mm256_xor_si256(t.v0, m);
	s->v0 = _mm256_blendv_epi8(s->v0, t.v0, live);
	s->v1 = _mm256_blendv_epi8(s->v1, t.v1, live);
	s->v2 = _mm256_blendv_epi8(s->v2, t.v2, live);
	s->v3 = _mm256_blendv_epi8(s->v3, t.v3, live);
}

/*
 * Last words of 4 lanes: a gather, masked to messages of 8 bytes or more,
 * of the 8 bytes ending at data + len, shifted right by 64 - 8 * (len mod 8)
 * (a variable shift of 64 gives 0, right for len mod 8 == 0); the rare
 * shorter messages in scalar. Plan lengths are below 512, so the signed
 * 64-bit compare of AVX2 does.
 */
T256 static __m256i last256(const struct plan *p, size_t g, __m256i ptr, __m256i len)
{
	const __m256i eight = _mm256_set1_epi64x(8);
	__m256i big = _mm256_cmpgt_epi64(len, _mm256_set1_epi64x(7));
	__m256i end = _mm256_sub_epi64(_mm256_add_epi64(ptr, len), eight);
	__m256i w = _mm256_mask_i64gather_epi64(_mm256_setzero_si256(), NULL, end, big, 1);
	__m256i drop = _mm256_sub_epi64(_mm256_set1_epi64x(64),
					_mm256_slli_epi64(_mm256_and_si256(len, _mm256_set1_epi64x(7)), 3));
	int bigbits = _mm256_movemask_pd(_mm256_castsi256_pd(big));

	w = _mm256_srlv_epi64(w, drop);
	if (bigbits != 0xf) {
		uint64_t tmp[4];

		_mm256_storeu_si256((__m256i *)tmp, w);
		for (size_t l = 0; l < 4; l++)
			if (!(bigbits >> l & 1))
				tmp[l] = tail_bytes(p->ptr[g + l], p->len[g + l]);
		w = _mm256_loadu_si256((const __m256i *)tmp);
	}
	return _mm256_or_si256(w, _mm256_slli_epi64(len, 56));
}

INLINE256 __m256i xor4_256(const struct v256 *s)
{
	return _mm256_xor_si256(_mm256_xor_si256(s->v0, s->v1), _mm256_xor_si256(s->v2, s->v3));
}

/* Everything about one register of 4 lanes that the word loop needs. */
struct lanes256 {
	struct v256 s;
	__m256i ptr, words, last;
};

INLINE256 void lanes256_init(struct lanes256 *a, const struct siphash_key *key,
			     const struct plan *p, size_t g)
{
	__m256i len = _mm256_loadu_si256((const __m256i *)&p->len[g]);

	a->ptr = _mm256_loadu_si256((const __m256i *)&p->ptr[g]);
	a->words = _mm256_srli_epi64(len, 3);
	a->last = last256(p, g, a->ptr, len);
	a->s.v0 = _mm256_set1_epi64x((long long)(key->k0 ^ sip_iv[0]));
	a->s.v1 = _mm256_set1_epi64x((long long)(key->k1 ^ sip_iv[1]));
	a->s.v2 = _mm256_set1_epi64x((long long)(key->k0 ^ sip_iv[2]));
	a->s.v3 = _mm256_set1_epi64x((long long)(key->k1 ^ sip_iv[3]));
}

/* Absorb word j of every lane that has one (full word or last word). */
INLINE256 void lanes256_word(struct lanes256 *a, __m256i jv, int c)
{
	__m256i full = _mm256_cmpgt_epi64(a->words, jv);
	__m256i live = _mm256_or_si256(full, _mm256_cmpeq_epi64(a->words, jv));
	__m256i m = _mm256_mask_i64gather_epi64(a->last, NULL, a->ptr, full, 1);

	absorb256(&a->s, m, live, c);
	a->ptr = _mm256_add_epi64(a->ptr, _mm256_set1_epi64x(8));
}

INLINE256 void final256(struct v256 *a, struct v256 *b, int d, uint64_t *h0, uint64_t *h1)
{
	a->v2 = _mm256_xor_si256(a->v2, _mm256_set1_epi64x(0xee));
	b->v2 = _mm256_xor_si256(b->v2, _mm256_set1_epi64x(0xee));
	for (int i = 0; i < d; i++) {
		round256(a);
		round256(b);
	}
	_mm256_storeu_si256((__m256i *)h0, xor4_256(a));
	_mm256_storeu_si256((__m256i *)(h0 + 4), xor4_256(b));
	a->v1 = _mm256_xor_si256(a->v1, _mm256_set1_epi64x(0xdd));
	b->v1 = _mm256_xor_si256(b->v1, _mm256_set1_epi64x(0xdd));
	for (int i = 0; i < d; i++) {
		round256(a);
		round256(b);
	}
	_mm256_storeu_si256((__m256i *)h1, xor4_256(a));
	_mm256_storeu_si256((__m256i *)(h1 + 4), xor4_256(b));
}

/* 8 lanes in two registers per step, so one's latency hides the other's. */
INLINE256 void lanes256_x8(const struct siphash_key *key, const struct plan *p, size_t g,
			   int c, int d, uint64_t *h0, uint64_t *h1)
{
	struct lanes256 a, b;
	uint64_t hi = group_max_words(p, g, 8);

	lanes256_init(&a, key, p, g);
	lanes256_init(&b, key, p, g + 4);
	for (uint64_t j = 0; j <= hi; j++) {
		__m256i jv = _mm256_set1_epi64x((long long)j);

		lanes256_word(&a, jv, c);
		lanes256_word(&b, jv, c);
	}
	final256(&a.s, &b.s, d, h0, h1);
}

INLINE256 void group256(const struct siphash_key *key, const struct plan *p, size_t g,
			uint64_t *out, int c, int d)
{
	uint64_t h0[GROUP], h1[GROUP];

	for (size_t l = 0; l < GROUP; l += 8)
		lanes256_x8(key, p, g + l, c, d, h0 + l, h1 + l);
	put_results(p, g, h0, h1, out);
}

T256 static void avx2_13(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	group256(key, p, g, out, 1, 3);
}

T256 static void avx2_24(const struct siphash_key *key, const struct plan *p, size_t g, uint64_t *out)
{
	group256(key, p, g, out, 2, 4);
}

static int avx2_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

#endif /* SIPMANY_X86 */

/* ---- dispatch ------------------------------------------------------------- */

struct impl {
	const char *name;
	int (*usable)(void);
	group_fn *g13, *g24;
};

/* Best first. */
static const struct impl impls[] = {
#ifdef SIPMANY_X86
	{ "avx512", avx512_usable, avx512_13, avx512_24 },
	{ "avx2", avx2_usable, avx2_13, avx2_24 },
#endif
	{ "portable", portable_usable, portable_13, portable_24 },
};

#define NIMPLS (sizeof impls / sizeof impls[0])

/*
 * NULL: the best one, looked up on every call (a few instructions per batch)
 * so that normal use shares no mutable state between threads.
 */
static const struct impl *chosen;

static const struct impl *current_impl(void)
{
	if (chosen)
		return chosen;
	for (size_t i = 0; i < NIMPLS; i++)
		if (impls[i].usable())
			return &impls[i];
	return &impls[NIMPLS - 1];
}

static void hash_many(const struct siphash_key *key, const struct line *msgs, size_t n,
		      uint64_t *out, int wide_rounds)
{
	const struct impl *im = current_impl();
	group_fn *group = wide_rounds ? im->g24 : im->g13;
	scalar_fn *one = wide_rounds ? siphash_2_4_128 : siphash_1_3_128;
	struct plan p;

	for (size_t base = 0; base < n; base += CHUNK) {
		size_t m = n - base < CHUNK ? n - base : CHUNK;

		plan_build(&p, key, msgs + base, m, one, out + 2 * base);
		for (size_t g = 0; g < p.count; g += GROUP)
			group(key, &p, g, out + 2 * base);
	}
}

void siphash_1_3_128_many(const struct siphash_key *key, const struct line *msgs, size_t n, uint64_t *out)
{
	hash_many(key, msgs, n, out, 0);
}

void siphash_2_4_128_many(const struct siphash_key *key, const struct line *msgs, size_t n, uint64_t *out)
{
	hash_many(key, msgs, n, out, 1);
}

const char *siphash_many_impl(void)
{
	return current_impl()->name;
}

int siphash_many_select(const char *name)
{
	if (!name) {
		chosen = NULL;
		return 0;
	}
	for (size_t i = 0; i < NIMPLS; i++) {
		if (strcmp(impls[i].name, name) != 0)
			continue;
		if (!impls[i].usable())
			return -1;
		chosen = &impls[i];
		return 0;
	}
	return -1;
}
