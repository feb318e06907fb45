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

#include "cascade.h"
#include "format.h"

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
 * The same, with other read from r (from format_open; shape is the shape
 * format_open returned, still the caller's to free) 1 MiB at a time, so
 * memory stays at into plus one buffer (plus the stages other adds).
 * Consumes r: closed with format_close on success, format_abandon on
 * failure. A failure found before any bits are read (incompatible, AND of
 * growing filters, insertion overflow) leaves into unchanged; one found
 * while reading (a truncated or corrupt file, whose CRC is only known at
 * the end) leaves into partly merged, to be discarded, never saved.
 */
int merge_stream(struct cascade *into, struct format_reader *r, const struct cascade *shape,
		 enum merge_op op, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
