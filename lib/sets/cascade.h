/* SPDX-License-Identifier: MIT */
/*
 * cascade.h - what a filter file holds: one Bloom filter, or a growing
 * cascade of them (a scalable Bloom filter, Almeida, Baquero, Preguiça &
 * Hutchison 2007; RedisBloom's SCALING is the same design).
 *
 * All stages share the hash function, key and key normalisation, so a key
 * is hashed the same way for every stage. A key is present when any stage
 * has it. A fixed cascade has exactly one stage, sized up front from n and
 * p. A growing cascade starts with a small stage; when the newest stage has
 * taken its capacity of distinct keys, a stage `growth` times larger is
 * added, with a false-positive rate 2^tighten times smaller, so the rates
 * form a geometric series whose sum stays below the target however many
 * keys arrive:
 *
 *     stage i:  capacity n0 * growth^i,  rate p0 * 2^(-tighten * i)
 *     total rate  <=  sum_i p0 2^(-tighten i)  =  p0 / (1 - 2^-tighten)
 *
 * so the first stage gets p0 = P (1 - 2^-tighten): with tighten = 1,
 * p0 = P/2, P/4, P/8, ... and the compounded rate stays <= P.
 */
#ifndef BFTOOLS_CASCADE_H
#define BFTOOLS_CASCADE_H

#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CASCADE_STAGES_MAX 64u
#define CASCADE_GROWTH_DEFAULT 2u
#define CASCADE_TIGHTEN_DEFAULT 1u
#define CASCADE_GROWTH_MAX 16u
#define CASCADE_TIGHTEN_MAX 4u

struct cascade {
	struct filter **stages;	/* oldest first; the last one takes new keys;
				   room for CASCADE_STAGES_MAX */
	size_t nstages;
	unsigned growth;	/* 0: fixed (one stage); else capacity factor 2..16 */
	unsigned tighten;	/* rate divisor exponent per stage, 1..4 (growing) */
	uint64_t capacity;	/* fixed: the capacity; growing: the first stage's */
	double target_p;	/* the rate promised for the whole */
	uint64_t newest_keys;	/* distinct keys taken by the newest stage */
	/*
	 * A DCSO filter read from a file (dcso.h): whether it was gzipped, and
	 * the free-form data after its bits (freed with the cascade), so that
	 * it is written back as it came.
	 */
	int dcso_gzip;
	unsigned char *dcso_data;
	size_t dcso_data_len;
	/*
	 * Test-and-add counts as insertions only the keys new to the filter
	 * (a seen-set: bfuniq), not every key offered; set by the caller.
	 */
	int count_new_only;
};

/* About n adds coming, to every stage there is now (filter_expect_adds). */
void cascade_expect_adds(struct cascade *c, uint64_t n);

/* A one-stage cascade holding a new empty filter with params p. */
struct cascade *cascade_new_fixed(const struct filter_params *p, const char **errstr);

/*
 * A growing cascade promising rate p overall. first describes the first
 * stage: its layout, hash, flags, key and capacity are used, its m, k and
 * target_p are computed here.
 */
struct cascade *cascade_new_growing(const struct filter_params *first, double p,
				    unsigned growth, unsigned tighten, const char **errstr);

/*
 * Wrap already built stages (from a file). Takes ownership of stages on
 * success. Checks that the stages share hash, key and flags and that a
 * fixed cascade has one stage. A growing cascade's newest_keys is estimated
 * from the fill; a fixed one's is left 0 (counting every bit would cost each
 * reader a full pass): call cascade_refresh_count when it matters.
 */
struct cascade *cascade_from_stages(struct filter **stages, size_t n, unsigned growth,
				    unsigned tighten, uint64_t capacity, double target_p,
				    const char **errstr);

/*
 * Estimate newest_keys from the newest stage's fill: for a loaded fixed
 * filter, or after its bits changed outside cascade_test_and_add (bfmerge
 * OR-ing another filter in). A DCSO filter keeps its N, which is exact.
 */
void cascade_refresh_count(struct cascade *c);

/*
 * An empty cascade of the same shape, key and growth (for bfbuild --like);
 * a DCSO one gzipped as the model was, without its data.
 */
struct cascade *cascade_new_like(const struct cascade *model, const char **errstr);

void cascade_free(struct cascade *c);

/*
 * Supply the key of a cascade whose key is kept outside (every stage).
 * Returns 0, or -1 with *errstr when it does not match the fingerprint.
 */
int cascade_supply_key(struct cascade *c, const unsigned char key[16], const char **errstr);

/* Whether the cascade's key is kept outside and has not been supplied. */
int cascade_needs_key(const struct cascade *c);

/* The params every stage shares (hash, flags, key), read from stage 0. */
const struct filter_params *cascade_params(const struct cascade *c);

/*
 * present[i] = 1 if keys[i] may be in any stage. Returns 0, or -1 (present
 * untouched) when the cascade's key is kept outside and was not supplied:
 * hashing with no key would give wrong answers, never an error.
 */
int cascade_test(const struct cascade *c, const struct line *keys, size_t n,
		 unsigned char *present);

/* The message of the adding calls when the key was not supplied. */
extern const char cascade_err_no_key[];

/*
 * Test and add, as filter_test_and_add over the whole cascade: a key found
 * in any stage is not added again; new keys go to the newest stage, and a
 * growing cascade adds stages as they fill. *fresh (may be NULL) is set to
 * the number of new keys. Returns 0, or -1 with *errstr when a new stage
 * cannot be made (out of memory, CASCADE_STAGES_MAX reached); keys before
 * the failing one have been added.
 */
int cascade_test_and_add(struct cascade *c, const struct line *keys, size_t n,
			 unsigned char *present, size_t *fresh, const char **errstr);

/*
 * Add keys. A fixed cascade adds them to its one filter without testing
 * (the fast path for building); a growing one uses cascade_test_and_add.
 */
int cascade_add(struct cascade *c, const struct line *keys, size_t n, const char **errstr);

/*
 * The same calls split as in filter.h, so keys can be hashed on another
 * thread: every stage shares the hash and the key, so one filter_hash of
 * the filter cascade_hasher returns serves them all. cascade_hasher is
 * NULL when hashes cannot be made ahead (DCSO; key not supplied); the
 * filter it returns stays put while the cascade grows.
 */
const struct filter *cascade_hasher(const struct cascade *c);
int cascade_test_hashed(const struct cascade *c, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present);
int cascade_test_and_add_hashed(struct cascade *c, const struct line *keys, const uint64_t *h,
				size_t n, unsigned char *present, size_t *fresh,
				const char **errstr);
int cascade_add_hashed(struct cascade *c, const struct line *keys, const uint64_t *h, size_t n,
		       const char **errstr);

/*
 * Adding on several threads at once (filter_add_shared): possible when c
 * is one fixed stage (no growth), not counting, with its key. Then
 * cascade_add_shared from any threads, with the keys' hashes (h from
 * cascade_hasher, or NULL), sets the same bits as cascade_add_hashed, and
 * the adding thread counts the keys once with cascade_count_added.
 */
int cascade_can_add_shared(const struct cascade *c);
void cascade_add_shared(struct cascade *c, const struct line *keys, const uint64_t *h, size_t n);
void cascade_count_added(struct cascade *c, uint64_t n);

/*
 * Remove keys from a fixed counting filter (filter_remove): *absent (may
 * be NULL) is set to the number of keys that were surely not in it, which
 * changed nothing. Returns 0, or -1 with *errstr for a filter of another
 * layout (its bits cannot be cleared without false negatives), a growing
 * one (a key's stage is not known, and a key found present in a stage it
 * was never added to would take counts from that stage's keys), or a key
 * kept outside and not supplied; then nothing is removed. With n = 0 it
 * only checks.
 */
int cascade_remove(struct cascade *c, const struct line *keys, size_t n, size_t *absent,
		   const char **errstr);

/* Keys added, repeats included, over all stages. */
uint64_t cascade_insertions(const struct cascade *c);

/* Sum of the stages' estimated distinct keys. */
double cascade_estimate_count(const struct cascade *c);

/* 1 - prod(1 - stage rate), each from its fill: the rate as it is now. */
double cascade_current_fpr(const struct cascade *c);

/*
 * The two above from each stage's figures (stats[i] for stage i,
 * filter.h), for a cascade whose bits were not read: the same numbers.
 */
double cascade_stats_estimate(const struct cascade *c, const struct filter_stats *stats);
double cascade_stats_fpr(const struct cascade *c, const struct filter_stats *stats);

/*
 * Over capacity: the rate as it is now (cascade_current_fpr) above the
 * target by more than this factor. The rate read off the fill scatters
 * around the target for a filter filled exactly to capacity; 10% over it
 * means about 2-3% more keys than the filter was sized for, beyond that
 * noise. bfbuild and bfmerge warn by it, bfinfo says so.
 */
#define CASCADE_OVER_CAPACITY_SLACK 1.1

/*
 * The model's rate (sizing_fpr) for a key never added: every stage but the
 * newest full at its capacity, the newest after newest_offered keys. Count
 * in newest_offered the keys the newest stage found present as well as
 * those it took: a key found present changes no bit, but the state is the
 * one the model gives for every key offered.
 */
double cascade_model_fpr(const struct cascade *c, uint64_t newest_offered);

/* Bytes of all bit arrays (counter arrays included: filter_array_bytes). */
uint64_t cascade_bytes(const struct cascade *c);

/*
 * Whether b can be OR-ed into a stage by stage: same growth and tighten,
 * and each pair of stages at the same index filter_compatible (the longer
 * cascade's extra stages are carried over as they are); DCSO filters must
 * also agree in capacity and rate, as DCSO's own join demands. Returns 1,
 * or 0 with *what naming the difference ("growth", "capacity", "rate", or
 * a filter_compatible field such as "size" or "key").
 */
int cascade_compatible(const struct cascade *a, const struct cascade *b, const char **what);

#ifdef __cplusplus
}
#endif

#endif
