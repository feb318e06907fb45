/* SPDX-License-Identifier: MIT */
/*
 * sketch.h - a distinct count that outlives the process: a HyperLogLog
 * counter (hll.h) together with what its keys were hashed with, so that
 * sketches of different runs and machines combine, and its file, sketch
 * format version 1 (byte layout drawn in sketch.c and man/bf.5).
 *
 * Keys are hashed as filters hash them (filter.h, bf(5)): SipHash-1-3-128
 * or SipHash-2-4-128 under a 16-byte key, after ASCII case folding when
 * the sketch says so (the caller folds: keys.h). The counter takes h1,
 * the hash's first 64-bit half. Two sketches combine when their
 * precision, hash function, key (compared by fingerprint, as filters'
 * keys are) and normalisation agree; their union is then exactly the
 * sketch of the union of their keys, register for register, and keeps
 * the error of one HyperLogLog.
 *
 * A key may be kept outside the file, in a key file (keyfile.h), exactly
 * as a filter's: the file then holds only the key's fingerprint, and the
 * loaded sketch can be counted, combined and saved without the key, but
 * hashes no key until sketch_supply_key gives it.
 *
 * A sketch file is one gzip member, like a filter file, whose content
 * starts with its own magic; loading checks every header field before it
 * allocates anything, and refuses truncation, damage, trailing bytes and
 * filters. Saving to a path is atomic (atomic.h). The library never
 * prints: failures return NULL/-1 with a static message in *errstr.
 */
#ifndef BFTOOLS_SKETCH_H
#define BFTOOLS_SKETCH_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "hll.h"
#include "line.h"
#include "siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SKETCH_FORMAT_VERSION 1u

/*
 * The key bfcount hashes with unless told otherwise: the ASCII bytes
 * "bfcount-hll-key1". It is public, so that counts are reproducible and
 * sketches from anywhere combine; a sketch of inputs that someone else
 * chooses wants a secret key (whoever knows the key can pick keys that
 * inflate a count).
 */
extern const unsigned char sketch_default_key[16];

struct sketch {
	enum filter_hash hash;	/* FILTER_SIPHASH_1_3 or FILTER_SIPHASH_2_4 */
	uint32_t flags;		/* FILTER_FOLD_CASE, FILTER_KEY_EXTERNAL */
	unsigned char key[16];	/* all 0 while a key kept outside is not supplied */
	uint64_t fingerprint;	/* filter_key_fingerprint(key), or the file's */
	int needs_key;		/* the key is outside and not supplied: hash nothing */
	uint64_t insertions;	/* keys added, repeats included */
	struct hll *hll;
	struct siphash_key sipkey;
};

/*
 * A new, empty sketch of 2^precision registers (HLL_PRECISION_MIN..MAX)
 * hashing with hash and key; flags as for filters. NULL with *errstr on
 * bad arguments or no memory.
 */
struct sketch *sketch_new(unsigned precision, enum filter_hash hash, uint32_t flags,
			  const unsigned char key[16], const char **errstr);

/* An empty sketch that combines with model: its precision, hash, key and flags. */
/*
 * A sketch whose key is kept outside (a file's): only its fingerprint is
 * known until sketch_supply_key.
 */
struct sketch *sketch_new_keyless(unsigned precision, enum filter_hash hash, uint32_t flags,
				  uint64_t fingerprint, const char **errstr);

struct sketch *sketch_new_like(const struct sketch *model, const char **errstr);

void sketch_free(struct sketch *s);

/*
 * The key of a sketch whose key is kept outside. Returns 0, or -1 with
 * *errstr when the key's fingerprint is not the sketch's.
 */
int sketch_supply_key(struct sketch *s, const unsigned char key[16], const char **errstr);

/*
 * out[i] = h1 of keys[i] under s's hash and key: what sketch_add_hashed
 * counts. Only reads s, so two threads may hash disjoint ranges at once.
 * Not for a sketch that needs its key.
 */
void sketch_hash(const struct sketch *s, const struct line *keys, size_t n, uint64_t *out);

/* Count n hashed keys (repeats are counted once, and in insertions each time). */
void sketch_add_hashed(struct sketch *s, const uint64_t *hashes, size_t n);

unsigned sketch_precision(const struct sketch *s);
double sketch_estimate(const struct sketch *s);
/* The relative standard error of the estimate: 0 while it is exact. */
double sketch_relative_error(const struct sketch *s);
int sketch_is_exact(const struct sketch *s);
/* Registers above 0 (while exact: those the hashes counted would set). */
uint64_t sketch_registers_nonzero(const struct sketch *s);

/*
 * Whether a and b combine: 1, or 0 with *what naming the first field that
 * differs: "precision", "hash function", "key", "normalisation".
 */
int sketch_compatible(const struct sketch *a, const struct sketch *b, const char **what);

/*
 * into := the union of into and from (hll_merge), insertions summed.
 * Returns 0, or -1 with *errstr leaving into as it was: incompatible
 * ("different precision", ...) or "insertion counts overflow".
 */
int sketch_merge(struct sketch *into, const struct sketch *from, const char **errstr);

/* ---- counting on several threads ------------------------------------ */

/*
 * Partial counters for counting one stream into s on several threads at
 * once (bfcount -j N). sketch_shards_add may be called from any thread,
 * by any number of threads at a time: each call adds to one of the
 * partials that no other call holds meanwhile (a lock per partial, taken
 * with trylock, so a thread that finds its usual one taken uses another).
 * A counter depends only on the set of hashes it has counted, not on
 * their order or grouping (hll_merge), so merging the partials into s
 * (sketch_shards_merge) leaves s exactly as adding every hash to it in
 * turn would, in either phase, and insertions the same saturating sum.
 *
 * n partials, clamped to 1..SKETCH_SHARDS_MAX: beyond that threads share
 * them (and some wait), which keeps the memory bounded at n counters of
 * hll_memory(p) each: 192 KiB at p = 16 while exact, 64 KiB of registers
 * once estimating; 768 KiB and 256 KiB at p = 18.
 */
#define SKETCH_SHARDS_MAX 16u

struct sketch_shards;

/* n empty partials of s's precision, to be merged into s. NULL with *errstr when out of memory. */
struct sketch_shards *sketch_shards_new(struct sketch *s, unsigned n, const char **errstr);

/* Count n hashed keys (as sketch_add_hashed) in a partial. Any thread. */
void sketch_shards_add(struct sketch_shards *sh, const uint64_t *hashes, size_t n);

/*
 * s's estimate with what the partials hold so far merged in, for progress
 * reports: locks each partial in turn, so it may run while adds go on.
 * Leaves s and the partials as they were; NAN when out of memory.
 */
double sketch_shards_estimate(struct sketch_shards *sh);

/*
 * Merge every partial into s, register by register the larger, and add
 * their insertions (saturating). Call once, when no add is under way
 * (the threads that added are joined), then free sh.
 */
void sketch_shards_merge(struct sketch_shards *sh);

void sketch_shards_free(struct sketch_shards *sh);

#ifdef __cplusplus
}
#endif

#endif
