/* SPDX-License-Identifier: MIT */
/*
 * partition.h - which of N partitions a key belongs to, the same on every
 * machine that is given the same 128-bit partitioning key.
 *
 * For de-duplication beyond one machine (bfsplit, --shard I/N): every copy
 * of a key must reach the one machine that holds that key's part of the
 * seen-set, so the partition is a function of the key's bytes (as the
 * programs cut them) and of a key shared by the cluster, and nothing else:
 *
 *     K'  = SipHash-2-4-64(K, "bftools partition k0")
 *        || SipHash-2-4-64(K, "bftools partition k1")   (two LE words)
 *     h   = SipHash-2-4-64(K', key bytes)
 *     partition = floor(h * N / 2^64)                   (0 .. N-1)
 *
 * The derived key K' separates the partition's hash from the filters' own
 * (SipHash with K itself, partition.c says why); the multiply-high maps h
 * onto [0, N) without the bias of h mod N. bf(5) states the same, for
 * anyone who reimplements it.
 *
 * Not here: cutting keys out of lines (keys.h), or choosing N.
 */
#ifndef BFTOOLS_PARTITION_H
#define BFTOOLS_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

struct partition {
	struct siphash_key key;	/* K', derived from the partitioning key */
	uint64_t count;		/* N, at least 1 */
};

/*
 * p for count partitions (count >= 1) under the 16-byte partitioning key,
 * read as siphash_key_from_bytes reads a key. 0, or -1 when count is 0.
 */
int partition_init(struct partition *p, const unsigned char key[16], uint64_t count);

/* The partition, 0 .. count - 1, of the key bytes[0..len). */
uint64_t partition_of(const struct partition *p, const void *bytes, size_t len);

/* floor(h * n / 2^64): h mapped onto [0, n) by its high bits, without modulo bias. */
uint64_t partition_scale(uint64_t h, uint64_t n);

#ifdef __cplusplus
}
#endif

#endif
