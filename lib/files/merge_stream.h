/* SPDX-License-Identifier: MIT */
/*
 * merge_stream.h - merging a filter streamed from a bftools file into one in
 * memory (merge.h combines two in memory). The library never prints.
 */
#ifndef BFTOOLS_MERGE_STREAM_H
#define BFTOOLS_MERGE_STREAM_H

#include "cascade.h"
#include "format.h"
#include "merge.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * merge_into (merge.h), with other read from r (from format_open; shape is the shape
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
