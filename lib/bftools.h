/* SPDX-License-Identifier: MIT */
/*
 * bftools.h - the bftools library for C programs, in one include.
 *
 * Build with pkg-config:  cc prog.c $(pkg-config --cflags --libs bftools)
 *
 * What is here, by module (each header documents its own contract; the
 * source tree keeps them in layers, ARCHITECTURE.md):
 *   filter.h    one Bloom filter: batch add/test in any layout (its data
 *               in filter_types.h)
 *   layout.h    the layouts (blocked, classic, counting, DCSO) as tables:
 *               names, units, traits, models
 *   cascade.h   what a filter file holds: a fixed filter or a growing cascade
 *   sizing.h    m and k from n and p for each layout; estimates from the fill
 *   format.h    load and save filter files (validated, atomic), streaming reads
 *   merge.h     OR/AND filters of the same shape and key; merge_stream.h
 *               the same with one filter streamed from its file
 *   siphash.h   SipHash-2-4 and -1-3, 64- and 128-bit; many keys at once (SIMD)
 *   hll.h       HyperLogLog distinct counting
 *   sketch.h    HyperLogLog sketches keyed like filters, merged;
 *               sketch_file.h saves and loads them
 *   lines.h, keys.h, writer.h   fast record input, key extraction, checked output
 *   fieldlist.h, json.h   -k field lists and names; NDJSON paths and key text
 *   json_out.h            JSON strings out of any bytes, for reports
 *   numparse.h  counts and rates as users type them
 *   atomic.h    replace a file all at once or not at all
 *   lock.h      serialise the processes that update one file
 *   keyfile.h   a filter's key kept in a file of its own
 *   dcso.h      DCSO bloom filter files (read and written for interop);
 *               layout_dcso.h their probe rule
 *   pipeline.h  batches over two threads: read ahead, share the hashing
 *   window.h    sliding windows: forget keys older than N keys or W seconds
 *   topk.h      heavy hitters: Space-Saving beside a conservative count-min sketch
 *   topk_file.h those summaries saved, loaded (validated, atomic)
 *   topk_window.h  those summaries over a sliding window of generations
 *
 * The library never prints and never exits: calls report failure by return
 * value and a static message through a const char **errstr argument.
 */
#ifndef BFTOOLS_H
#define BFTOOLS_H

#define BFTOOLS_VERSION_MAJOR 1
#define BFTOOLS_VERSION_MINOR 0
#define BFTOOLS_VERSION_PATCH 0

#include "line.h"
#include "siphash.h"
#include "partition.h"
#include "filter_types.h"
#include "filter.h"
#include "layout.h"
#include "layout_dcso.h"
#include "sizing.h"
#include "cascade.h"
#include "format.h"
#include "merge.h"
#include "merge_stream.h"
#include "lines.h"
#include "keys.h"
#include "fieldlist.h"
#include "json.h"
#include "json_out.h"
#include "writer.h"
#include "hll.h"
#include "sketch.h"
#include "sketch_file.h"
#include "numparse.h"
#include "atomic.h"
#include "lock.h"
#include "keyfile.h"
#include "dcso.h"
#include "pipeline.h"
#include "window.h"
#include "topk.h"
#include "topk_file.h"
#include "topk_window.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif
