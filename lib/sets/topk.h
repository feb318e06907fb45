/* SPDX-License-Identifier: MIT */
/*
 * topk.h - which keys are most frequent in a stream, and how often any key
 * occurred, in memory fixed in advance: a Space-Saving summary (Metwally,
 * Agrawal & El Abbadi 2005) beside a count-min sketch with conservative
 * update (Cormode & Muthukrishnan 2005; Estan & Varghese 2002).
 *
 * Why Space-Saving: its bounds are deterministic, not probabilistic. It
 * keeps at most C = capacity keys with a count and an error; a key it
 * keeps occurred at least count - error and at most count times, and a
 * key it does not keep at most `floor` times (its smallest count once
 * full, at most N / C for a stream of N keys), so every key that occurred
 * more than N / C times is kept. Misra-Gries gives the same guarantee
 * with less to show (no upper bound per key), HeavyKeeper only bounds it
 * with high probability. The count-min sketch answers for any key, kept
 * or not, with an upper bound that is never too low and, with
 * probability `confidence`, at most EPS * N too high; the upper bound
 * reported is the smaller of the two.
 *
 * Sizing for an additive error EPS (a fraction of the stream): C =
 * ceil(1/EPS) keys, width ceil(e/EPS) cells, depth ceil(ln(1/(1 -
 * confidence))) rows (topk_size).
 *
 * Keys are told apart by their 128-bit SipHash (the filters' hash, under
 * this summary's key, after the caller's case folding): two keys that
 * share a hash would count as one, at odds of about n^2 / 2^129 for n
 * distinct keys. Only the first TOPK_KEY_MAX bytes of a kept key are
 * stored, for display, so the memory is bounded whatever the keys'
 * lengths; a longer key is still counted by its full hash, and is shown
 * truncated (topk_item.truncated).
 *
 * The updates depend on the order of the keys (which key is evicted, and
 * the conservative update's cells), so a summary is only deterministic
 * when the keys are added in one order: callers add in input order, on
 * one thread, and hash on as many as they like (topk_hash only reads).
 * This module does no I/O: topk_file.h saves and loads a summary.
 */
#ifndef BFTOOLS_TOPK_H
#define BFTOOLS_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "line.h"
#include "siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a key kept for display; a longer key is shown truncated. */
#define TOPK_KEY_MAX 256u
/* Limits on the sizing: EPS from 1e-6 (a million keys kept) to 0.5; depth 1..16. */
#define TOPK_EPS_MIN 1e-6
#define TOPK_EPS_MAX 0.5
#define TOPK_EPS_DEFAULT 1e-4
#define TOPK_CONFIDENCE_DEFAULT 0.999
#define TOPK_DEPTH_MAX 16u
#define TOPK_CAPACITY_MAX 1000000u
#define TOPK_WIDTH_MAX 3000000u

/* The public key bftop hashes with unless told otherwise: "bftop-topk-key01". */
extern const unsigned char topk_default_key[16];

struct topk_params {
	uint64_t capacity;	/* keys kept, C: 1..TOPK_CAPACITY_MAX */
	uint64_t width;		/* count-min cells per row: 1..TOPK_WIDTH_MAX */
	unsigned depth;		/* count-min rows: 1..TOPK_DEPTH_MAX */
};

/*
 * The parameters for additive error eps (TOPK_EPS_MIN..MAX) with the
 * count-min bound holding at probability confidence (0.5..1 - 1e-9).
 * 0, or -1 with *errstr.
 */
int topk_size(double eps, double confidence, struct topk_params *p, const char **errstr);

/* Whether p is within the limits above: 0, or -1 with *errstr. */
int topk_check_params(const struct topk_params *p, const char **errstr);

/* Bytes of memory a summary of p takes. */
uint64_t topk_memory(const struct topk_params *p);

struct topk_entry;

struct topk {
	struct topk_params params;
	enum filter_hash hash;	/* FILTER_SIPHASH_1_3 or FILTER_SIPHASH_2_4 */
	uint32_t flags;		/* FILTER_FOLD_CASE, FILTER_KEY_EXTERNAL */
	unsigned char key[16];	/* all 0 while a key kept outside is not supplied */
	uint64_t fingerprint;	/* filter_key_fingerprint(key), or the file's */
	int needs_key;		/* the key is outside and not supplied: hash nothing */
	struct siphash_key sipkey;
	uint64_t total;		/* N: keys added, repeats included (saturating) */
	uint64_t *cells;	/* depth rows of width cells, row after row */
	struct topk_entry *entries;	/* capacity of them, the first `kept` in use */
	unsigned char *keys;	/* TOPK_KEY_MAX bytes per entry */
	uint32_t *heap;		/* entry indexes, a min-heap on count */
	uint32_t *slots;	/* hash table: entry index + 1, 0 empty */
	uint64_t nslots;	/* a power of two, at least 2 * capacity */
	uint64_t kept;
};

/* A key kept, as topk_items and topk_restore see it. */
struct topk_item {
	uint64_t hash[2];	/* the key's SipHash-128 */
	uint64_t count;		/* Space-Saving's count: an upper bound */
	uint64_t error;		/* count - error is a lower bound */
	uint64_t upper;		/* min(count, the count-min estimate): topk_items only */
	uint64_t len;		/* the key's full length in bytes */
	const unsigned char *key;	/* its first min(len, TOPK_KEY_MAX) bytes */
	int truncated;		/* len > TOPK_KEY_MAX */
};

/*
 * A new, empty summary of p hashing with hash and key; flags as for
 * filters. NULL with *errstr on bad arguments or no memory.
 */
struct topk *topk_new(const struct topk_params *p, enum filter_hash hash, uint32_t flags,
		      const unsigned char key[16], const char **errstr);
/* An empty summary that merges with model: its parameters, hash, key and flags. */
struct topk *topk_new_like(const struct topk *model, const char **errstr);
void topk_free(struct topk *t);

/* The key of a summary whose key is kept outside: 0, or -1 when its fingerprint differs. */
int topk_supply_key(struct topk *t, const unsigned char key[16], const char **errstr);

/* out[2i], out[2i+1] = SipHash-128 of keys[i]. Only reads t: any thread. */
void topk_hash(const struct topk *t, const struct line *keys, size_t n, uint64_t *out);

/* Count keys[0..n) (hashes as topk_hash made them), in order. Not thread-safe. */
void topk_add_hashed(struct topk *t, const struct line *keys, const uint64_t *hashes, size_t n);

/* The most any key that is not kept can have occurred: 0 until C keys are kept. */
uint64_t topk_floor(const struct topk *t);

/*
 * Bounds on how often the key of hash occurred: kept, [count - error,
 * min(count, count-min)]; else [0, min(floor, count-min)].
 */
void topk_query(const struct topk *t, const uint64_t hash[2], uint64_t *lower, uint64_t *upper);

/*
 * What the summary can say of whether a key with bounds [lower, upper]
 * is frequent: occurred more often than topk_floor(t), the error bound
 * (no key it does not keep occurred more often, and no kept key's bounds
 * are further apart), the threshold of DataSketches' frequent items.
 * TOPK_SURE: lower > floor, it is, whatever the stream was;
 * TOPK_POSSIBLE: only upper > floor, it may be; TOPK_INFREQUENT: it is not.
 * While fewer than C keys are kept the floor is 0 and every count exact,
 * so every key kept is TOPK_SURE.
 */
enum topk_frequency { TOPK_INFREQUENT, TOPK_POSSIBLE, TOPK_SURE };
enum topk_frequency topk_frequency(const struct topk *t, uint64_t lower, uint64_t upper);

/*
 * Which keys topk_frequent lists, named as DataSketches' ErrorType:
 * NO_FALSE_POSITIVES only the TOPK_SURE ones, so no key listed is
 * infrequent; NO_FALSE_NEGATIVES every one that is not TOPK_INFREQUENT,
 * so every frequent key is listed.
 */
enum topk_error_type { TOPK_NO_FALSE_POSITIVES, TOPK_NO_FALSE_NEGATIVES };

/*
 * The frequent keys of type into out (room for t->kept), in topk_items'
 * order. Returns how many.
 */
size_t topk_frequent(const struct topk *t, enum topk_error_type type, struct topk_item *out);

/*
 * The kept keys into out (room for t->kept), most frequent first: by
 * upper bound, then lower bound, descending, then key bytes ascending, so
 * the order depends only on the summary. Returns how many.
 */
size_t topk_items(const struct topk *t, struct topk_item *out);

/*
 * For loading (topk_file.c): keep one more key, as given (key bytes are
 * copied); and set the count-min cells. -1 with *errstr when the summary
 * is full, the key is kept already, or error > count.
 */
int topk_restore(struct topk *t, const struct topk_item *item, const char **errstr);

/*
 * Whether a and b merge: 1, or 0 with *what naming the first field that
 * differs: "capacity", "width", "depth", "hash function", "key", "normalisation".
 */
int topk_compatible(const struct topk *a, const struct topk *b, const char **what);

/*
 * into := the summary of both streams (Agarwal, Cormode, Huang, Phillips,
 * Wei & Yi 2012, "Mergeable summaries"): count-min cells add; a key kept
 * by both gets the sum of counts and of errors, a key kept by one gets the
 * other's floor added to both (it occurred at most that often there), and
 * the C largest counts stay. Every interval still holds; a key that is
 * not kept occurred at most max(floor_a + floor_b, the (C+1)th merged
 * count) <= 2 (N_a + N_b) / C times. -1 with *errstr leaving into as it
 * was: incompatible, counts overflow, or no memory.
 */
int topk_merge(struct topk *into, const struct topk *from, const char **errstr);

/*
 * into := the summary of into's and from[0..n)'s streams, in one merge:
 * each key's count and error are summed over the summaries, a summary
 * that does not keep it adding its floor to both. The bound is that of
 * two: every key not kept occurred at most 2 N / C times, N the streams'
 * total (for summaries made from streams, not from merges). -1 with
 * *errstr leaving into as it was.
 */
int topk_merge_many(struct topk *into, const struct topk *const *from, size_t n,
		    const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
