/* SPDX-License-Identifier: MIT */
/*
 * owners.h - ordered test-and-add of a blocked cascade on several threads,
 * each owning a region of the newest stage's blocks.
 *
 * Whether a key is new depends on every earlier key, but only on those
 * that touch the same bits; in the blocked layout all of a key's bits lie
 * in its one block. So the newest stage's blocks are split into R regions
 * (consecutive block ranges), the keys of a call are sorted by region with
 * a counting pass (stable: each region keeps input order), and one thread
 * per region tests and adds its keys: every key sees exactly the bits it
 * would see on one thread, so the answers (present[], fresh), the bits,
 * the insertion counts and the moments a growing cascade adds a stage are
 * those of cascade_test_and_add_hashed, for every R. Writes to the bits
 * need no atomic read-modify-write: no two threads write one block.
 *
 * Older stages of a growing cascade no longer change: each owner tests
 * its keys against them as it goes. A new stage begins at the same input
 * position as on one thread: a call is cut into pieces no longer than the
 * newest stage's room (as cascade.c does), and a piece too short to share
 * (the last keys before a stage fills, the first key after) is done on the
 * calling thread by cascade_test_and_add_hashed itself.
 *
 * What it does not do: the classic, counting and DCSO layouts (a key's
 * bits lie anywhere, so no split keeps order: owners_usable says no);
 * hashing (the caller passes SipHash halves, filter_hash); windows. The
 * owners of one call work it to the end before the call returns (one
 * handover and one wait per piece), so a run overlaps hashing and writing
 * with probing only through the pipeline around it.
 */
#ifndef BFTOOLS_OWNERS_H
#define BFTOOLS_OWNERS_H

#include <stddef.h>
#include <stdint.h>

#include "cascade.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct owners;

/*
 * Owners for regions regions (1 .. 256): the calling thread owns region 0
 * during a call, regions - 1 threads the others (started here with every
 * signal blocked, so handlers run on the caller). A thread that cannot
 * start leaves its region to the caller, never an error. NULL with *errstr
 * when out of memory.
 */
struct owners *owners_new(unsigned regions, const char **errstr);

/* Stop and reap the threads; NULL is fine. */
void owners_free(struct owners *o);

/*
 * 1 when c can be shared out: every stage's layout keeps a key's probes in
 * one block (LAYOUT_ONE_BLOCK: blocked), its key supplied; else 0.
 */
int owners_usable(const struct cascade *c);

/*
 * cascade_test_and_add_hashed(c, keys, h, n, present, fresh, errstr) with
 * the newest stage's regions worked by the owners: the same results, bits
 * and counts (see above). c must be owners_usable; h the keys' hashes from
 * cascade_hasher(c). keys is only read where a piece runs on the caller.
 * Returns 0, or -1 with *errstr (out of memory, or a new stage could not be
 * made: keys before the failing one have been added, *fresh counts them).
 */
int owners_test_and_add(struct owners *o, struct cascade *c, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present, size_t *fresh,
			const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
