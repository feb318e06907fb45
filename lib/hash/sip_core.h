/* SPDX-License-Identifier: MIT */
/*
 * sip_core.h - the scalar SipHash core that siphash.c (one message) and
 * siphash_many.c (many at once: its portable path, and the tails of its
 * SIMD paths) share: the state, the round, absorbing a word, and reading
 * little-endian words. Private to the library: not installed.
 *
 * Everything is static inline, so each file gets copies specialised for
 * the constant round counts its callers pass.
 */
#ifndef BFTOOLS_SIP_CORE_H
#define BFTOOLS_SIP_CORE_H

#include <stdint.h>
#include <string.h>

/*
 * Plain "static inline" is only a hint: gcc 12 and clang 14 both kept one
 * generic worker with run-time round counts (3-8% slower). Forcing inlining
 * gives each caller its own copy with constant, unrolled counts.
 */
#if defined(__GNUC__)
#define SIP_INLINE static inline __attribute__((always_inline))
#else
#define SIP_INLINE static inline
#endif

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

/* Build a uint64_t from 8 little-endian bytes without depending on the host. */
static inline uint64_t load_le64(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

static inline void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = rotl64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl64(s->v2, 32);
}

SIP_INLINE void sip_rounds(struct sip_state *s, int n)
{
	for (int i = 0; i < n; i++)
		sip_round(s);
}

/* One message word m through c compression rounds. */
SIP_INLINE void sip_absorb(struct sip_state *s, uint64_t m, int c)
{
	s->v3 ^= m;
	sip_rounds(s, c);
	s->v0 ^= m;
}

#endif
