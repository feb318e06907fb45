/* SPDX-License-Identifier: MIT */
/*
 * partition.c - a key's partition of N (partition.h has the function).
 *
 * Why a derived key and not the partitioning key itself: a filter built
 * with the same key K hashes each key with SipHash under K and takes its
 * bit indexes (and, blocked, its block) from that hash. Were the
 * partition taken from SipHash under K too, the keys of one partition
 * would share the hash's high bits, so in that partition's filter they
 * would crowd into 1/N of its blocks and its false-positive rate would
 * soar. K' = SipHash(K, label) is a pseudo-random key unrelated to K
 * for anyone without K, so the partition says nothing about the
 * filter's indexes, whether or not the cluster uses K for both.
 *
 * Why multiply-high and not h mod N: mod favours the first 2^64 mod N
 * partitions; floor(h * N / 2^64) splits [0, 2^64) into N runs that
 * differ in length by at most one, and costs one multiplication.
 */
#include "partition.h"

static const char label_k0[] = "bftools partition k0";
static const char label_k1[] = "bftools partition k1";

int partition_init(struct partition *p, const unsigned char key[16], uint64_t count)
{
	struct siphash_key k;

	if (count == 0)
		return -1;
	siphash_key_from_bytes(&k, key);
	p->key.k0 = siphash_2_4_64(&k, label_k0, sizeof label_k0 - 1);
	p->key.k1 = siphash_2_4_64(&k, label_k1, sizeof label_k1 - 1);
	p->count = count;
	return 0;
}

/* The high 64 bits of the 128-bit product, from 32-bit halves (ISO C has no 128-bit type). */
uint64_t partition_scale(uint64_t h, uint64_t n)
{
	uint64_t h_lo = h & 0xffffffffu, h_hi = h >> 32;
	uint64_t n_lo = n & 0xffffffffu, n_hi = n >> 32;
	uint64_t lo_lo = h_lo * n_lo, hi_lo = h_hi * n_lo, lo_hi = h_lo * n_hi;
	uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + (lo_hi & 0xffffffffu);

	return h_hi * n_hi + (hi_lo >> 32) + (lo_hi >> 32) + (middle >> 32);
}

uint64_t partition_of(const struct partition *p, const void *bytes, size_t len)
{
	return partition_scale(siphash_2_4_64(&p->key, bytes, len), p->count);
}
