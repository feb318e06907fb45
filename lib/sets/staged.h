/* SPDX-License-Identifier: MIT */
/*
 * staged.h - the blocks a fresh big blocked filter's first keys set, kept
 * in a hash table instead of the filter's array (issue 33).
 *
 * A filter sized for 1e9 keys is gigabytes of address space. Its first
 * keys each land in a different 4 KiB page of it, and backing a page costs
 * a page fault (12 us on some virtual machines, ~430,000 of them before
 * such a filter is worth its huge pages). Here each touched 512-bit block
 * is 72 bytes of a table (its key and its block) until the filter goes
 * dense (then the blocks are written into the array, huge pages and all)
 * or something needs the array itself (a save, a merge): then they are
 * written into it page by page, as they would have been.
 *
 * The table knows nothing of filters: it maps a block's first word index
 * (base) to the block's 8 words. Its users take turns (a mutex, here):
 * staging lasts a few hundred thousand keys at most, so its speed under
 * many threads hardly matters; being right does.
 */
#ifndef BFTOOLS_STAGED_H
#define BFTOOLS_STAGED_H

#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STAGED_BLOCK_WORDS 8

struct staged {
	pthread_mutex_t lock;	/* held for every use below */
	int active;		/* 1 while the filter's bits live here (atomic: read unlocked) */
	uint64_t adds;		/* keys added while staged, repeats included */
	uint64_t used;		/* blocks in the table */
	uint64_t capacity;	/* slots, a power of two (0: none yet) */
	uint64_t *keys;		/* capacity keys, base + 1 (0: empty), then capacity blocks of 8 words */
};

/* A new, active, empty table; NULL when there is no memory for it. */
struct staged *staged_new(void);
/* Free it (the struct too). NULL is fine. */
void staged_free(struct staged *s);

/* Room for n more blocks without growing: 0, or -1 when none can be had. */
int staged_reserve(struct staged *s, uint64_t n);
/*
 * The 8 words of the block at base: NULL if it is not in the table and
 * insert is 0; with insert, a new zero block (room reserved beforehand).
 */
uint64_t *staged_block(struct staged *s, uint64_t base, int insert);
/*
 * Ask for the cache lines where the blocks at these n bases are looked
 * for, so that a batch's lookups wait for memory together, not in turn.
 */
void staged_prefetch(const struct staged *s, const uint64_t *base, size_t n);
/* Call each(ctx, base, words) for every block, in no particular order. */
void staged_each(const struct staged *s, void (*each)(void *ctx, uint64_t base, const uint64_t *words),
		 void *ctx);
/* Empty the table and give back its memory; it stays usable. */
void staged_clear(struct staged *s);

#ifdef __cplusplus
}
#endif

#endif
