/* SPDX-License-Identifier: MIT */
/*
 * merge.h - combining filters bit by bit: union (OR) and intersection (AND).
 *
 * Two Bloom filters with the same layout, size, probes, hash function, key
 * and key normalisation combine word by word: the OR of two filters is
 * exactly the filter of the union of their keys, bit for bit. The AND
 * holds every key both held; any other key tests present in it only if it
 * did in both. Growing cascades combine stage by stage (OR only).
 * Counting filters combine counter by counter: OR adds the counters,
 * saturating at 15; AND keeps the smaller of each pair (merge.c says why
 * both keep removal safe).
 *
 * The library never prints: failures return -1 with a static message in
 * *errstr.
 */
#ifndef BFTOOLS_MERGE_H
#define BFTOOLS_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "cascade.h"
#include "filter.h"

#ifdef __cplusplus
extern "C" {
#endif

enum merge_op { MERGE_OR, MERGE_AND };

/*
 * into := into OP other, stage by stage (into holds bits: not a shape from
 * format_open). Requires cascade_compatible(into,
 * other) (else -1, *errstr = the differing field: "size", "key", "growth",
 * ...). OR: other's stages beyond into's are copied in as new filters,
 * labelled with into's capacity and rate for their index. AND: both must be
 * fixed (growth 0), since a key may sit in different stages of two growing
 * filters and AND would lose it: -1 with "cannot intersect growing
 * filters". Insertions are summed; overflow gives -1 with "insertion counts
 * overflow". The result keeps into's capacity, rate and growth, and its
 * newest_keys is estimated again from the newest stage's fill. On any
 * failure into is unchanged.
 */
int merge_into(struct cascade *into, const struct cascade *other, enum merge_op op,
	       const char **errstr);

/*
 * The steps merge_into takes, for a merge that reads the other filter from
 * a file (merge_stream.h), so both check, combine and finish alike.
 *   merge_check: everything that can be refused, before any bit changes.
 *   merge_carried_stage: an empty stage for index j of into, shaped like
 *     model, with model's insertions.
 *   merge_words: n words of another filter of f's shape into dst.
 *   merge_finish: carried stages appended, insertions summed (cannot fail).
 */
int merge_check(const struct cascade *into, const struct cascade *other, enum merge_op op,
		const char **errstr);
struct filter *merge_carried_stage(const struct cascade *into, const struct filter *model,
				   size_t j, const char **errstr);
void merge_words(const struct filter *f, uint64_t *dst, const uint64_t *src, size_t n,
		 enum merge_op op);
void merge_finish(struct cascade *into, const struct cascade *other, enum merge_op op,
		  struct filter **carried, size_t ncarried);
void merge_free_stages(struct filter **stages, size_t n);

#ifdef __cplusplus
}
#endif

#endif
