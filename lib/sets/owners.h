/* SPDX-License-Identifier: MIT */
/*
 * owners.h - ordered test-and-add of a blocked cascade cut into regions
 * that threads can work side by side.
 *
 * Whether a key is new depends on every earlier key, but only on those
 * that touch the same bits; in the blocked layout all of a key's bits lie
 * in its one block. So the newest stage's blocks are split into R regions
 * (consecutive block ranges), the keys of a batch are sorted by region
 * with a counting pass (stable: each region keeps input order), and each
 * region's keys are tested and added by one thread at a time, batch after
 * batch: every key sees exactly the bits it would see on one thread, so
 * the answers (present[]), the bits, the insertion counts and the moments
 * a growing cascade adds a stage are those of cascade_test_and_add_hashed,
 * for every R and however the regions of consecutive batches interleave.
 * Writes to the bits need no atomic read-modify-write: no two threads
 * write one block.
 *
 * Use, per batch in a slot (the pipeline's parts, pipeline.h, do this):
 *   owners_split   in input order: 1 when the batch is worked in regions,
 *                  0 when it must go whole to cascade_test_and_add_hashed
 *                  (short, or the newest stage may fill within it)
 *   owners_region  each region r of the slot, on any thread, after region
 *                  r of every earlier batch split in regions
 *   owners_finish  in input order, after all the slot's regions: the
 *                  cascade's counts, and how many keys were new
 * A batch that goes whole must wait for every earlier batch's finish, and
 * the next batch's split for its end (a stage may have been added).
 *
 * Older stages of a growing cascade no longer change: each region tests
 * its keys against them as it goes. A new stage begins at the same input
 * position as on one thread, because a batch that might fill the newest
 * stage (counting every key split but not yet finished as new) goes
 * whole, and cascade.c cuts it at the stage's room.
 *
 * A window (window.h) is cut the same way where its live generations
 * share one blocked shape (a key's block is then at the same place in
 * each): a batch whose keys all fall in the newest generation, with the
 * batch's one time, is split (owners_split_window); one that crosses a
 * generation's boundary goes whole.
 *
 * What it does not do: the classic, counting and DCSO layouts (a key's
 * bits lie anywhere, so no split keeps order: owners_usable says no);
 * windows with growing generations (timed ones) or a time per key;
 * hashing (the caller passes SipHash halves, filter_hash); threads
 * (owners.c starts none: the caller's pipeline runs the regions).
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
 * Owners of regions regions (1 .. 256) for batches in slots 0 .. slots-1
 * (1 .. OWNERS_SLOTS_MAX). NULL with *errstr when out of memory or out of range.
 */
#define OWNERS_SLOTS_MAX 64
struct owners *owners_new(unsigned regions, unsigned slots, const char **errstr);

/* NULL is fine. */
void owners_free(struct owners *o);

/*
 * 1 when c can be worked in regions: every stage's layout keeps a key's
 * probes in one block (LAYOUT_ONE_BLOCK: blocked), its key supplied; else 0.
 */
int owners_usable(const struct cascade *c);

/*
 * The batch in slot: n keys' hashes h (from cascade_hasher(c)), answers to
 * go in present[0..n). 1 when it is sorted into regions for owners_region
 * and owners_finish; 0 when it must go whole (fewer than 16 keys a
 * region, the newest stage may fill within it, or out of memory for the
 * sort). h and present must stay until owners_finish. c must be
 * owners_usable, and not change but through these calls meanwhile.
 */
int owners_split(struct owners *o, unsigned slot, struct cascade *c, const uint64_t *h, size_t n,
		 unsigned char *present);

/*
 * Optional, ahead of owners_split, on any thread, while no batch is split
 * in slot (between its owners_finish and the next batch's owners_split):
 * the sort of the slot's next batch by region, for the newest stage
 * `newest` that owners_split will find, so that the thread splitting in
 * input order only checks it. owners_split sorts again when the stage,
 * h or n differ by then (a stage added, the batch cut short). Nothing
 * when the batch is short or memory is short.
 */
void owners_presort(struct owners *o, unsigned slot, const struct filter *newest,
		    const uint64_t *h, size_t n);

/*
 * owners_split for a window's batch of n keys of time now (no per-key
 * times; window.h): 1 when it is sorted into regions (window_regions_take
 * said yes: the window's clock has moved past it), 0 when it must go
 * whole to window_test_and_add_hashed. The window's regions and finish
 * are owners_region and owners_finish, as for a cascade.
 */
struct window;
int owners_split_window(struct owners *o, unsigned slot, struct window *w, const uint64_t *h,
			size_t n, uint64_t now, unsigned char *present);

/* 1 when a window's batches can be split by region: blocked generations, key supplied. */
int owners_usable_window(const struct window *w);

/* Region `region` of the batch split in slot: test-and-set its keys, in input order. */
void owners_region(struct owners *o, unsigned slot, unsigned region);

/* After every region of slot: add its counts to the cascade; how many keys were new. */
size_t owners_finish(struct owners *o, unsigned slot);

/*
 * cascade_test_and_add_hashed(c, keys, h, n, present, fresh, errstr) done
 * through regions on the calling thread (slot 0; not while a batch is
 * split there): the same results, bits and counts. For tests, and as a
 * model of the use above. Returns 0, or -1 with *errstr (a new stage could
 * not be made: keys before the failing one have been added, *fresh counts them).
 */
int owners_test_and_add(struct owners *o, struct cascade *c, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present, size_t *fresh,
			const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
