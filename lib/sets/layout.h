/* SPDX-License-Identifier: MIT */
/*
 * layout.h - a filter layout as one table of operations.
 *
 * filter.c never asks which layout a filter has: it finds the layout's
 * table (layout_of) and calls through it, as curl calls a TLS backend
 * through struct Curl_ssl or SQLite a file system through
 * sqlite3_io_methods. Callers outside the core ask the table too: its
 * name, its unit, its traits. Adding a layout is one file that defines a
 * struct layout_ops, and a line for it in layout.c's registry.
 *
 * The hot operations take one batch of at most LAYOUT_BATCH keys with
 * their SipHash halves (h1, h2 at h[2i], h[2i+1]; NULL for a keyless
 * layout, whose probes come from the keys themselves). Each layout keeps
 * its own per-batch state on the stack, probes its own way, and owns the
 * statistics its positions need (bits or counters, per block or not).
 *
 * The layouts: layout_blocked.c (k bits in one 512-bit block),
 * layout_classic.c (k bits anywhere), layout_counting.c (classic probes
 * over 4-bit counters), layout_dcso.c (DCSO's keyless FNV-1 probes, for
 * interoperation). What the last three share is in scattered.h.
 */
#ifndef BFTOOLS_LAYOUT_H
#define BFTOOLS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "filter_types.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Keys per call of a hot operation: the misses of a batch overlap. */
#define LAYOUT_BATCH 32

/* Traits, which callers ask instead of comparing layout ids. */
#define LAYOUT_COUNTERS 0x1u	/* positions are counters: adds count, keys can be removed */
#define LAYOUT_KEYLESS 0x2u	/* no SipHash key: probes from the key bytes (DCSO) */
#define LAYOUT_ONE_BLOCK 0x4u	/* a key's probes lie in one block: regions can be owned */
#define LAYOUT_FOREIGN 0x8u	/* kept in another program's file format, never in bftools' */
#define LAYOUT_SAVED 0x10u	/* has an id in the bftools format (bf(5)) */

struct layout_ops {
	enum filter_layout id;
	const char *name;	/* as options and bfinfo say it: "blocked" */
	const char *unit;	/* what m counts: "bits" or "counters" */
	unsigned position_bits;	/* bits of memory per position: 1, or 4 for counters */
	unsigned traits;	/* LAYOUT_* */

	/* The layout's own rules on params, after the common ones (filter_params_check). */
	int (*check)(const struct filter_params *p, const char **errstr);
	/* The positions a key's probes range over: m, or DCSO's own m. */
	uint64_t (*probed)(const struct filter_params *p);

	/* One batch of n <= LAYOUT_BATCH keys; h as above. */
	void (*add)(struct filter *f, const struct line *keys, const uint64_t *h, size_t n);
	void (*test)(const struct filter *f, const struct line *keys, const uint64_t *h, size_t n,
		     unsigned char *present);
	/* In order: a repeat later in the batch meets its first copy. Returns the new keys. */
	size_t (*test_and_add)(struct filter *f, const struct line *keys, const uint64_t *h, size_t n,
			       unsigned char *present);
	/* OR in from several threads at once; NULL where an add is not an OR. */
	void (*add_shared)(struct filter *f, const struct line *keys, const uint64_t *h, size_t n);
	/* Returns the keys found absent (nothing changed for them); NULL: cannot remove. */
	size_t (*remove)(struct filter *f, const struct line *keys, const uint64_t *h, size_t n);
	/* The k position indexes of one key. */
	void (*positions)(const struct filter *f, const struct line *key, const uint64_t h[2],
			  uint64_t *positions);
	/* Make the words n hashed keys will add to ready (filter.h); NULL: nothing to do. */
	void (*ready)(const struct filter *f, const uint64_t *h, size_t n);

	/* Statistics over the array (nwords 64-bit words). */
	uint64_t (*set)(const uint64_t *words, uint64_t nwords);	/* positions "set" */
	unsigned (*word_set)(uint64_t w);			/* the same, of one word */
	uint64_t (*saturated)(const uint64_t *words, uint64_t nwords);	/* NULL: never */
	/* The chance a key never added tests present, from the actual fill. */
	double (*current_fpr)(const struct filter *f);
	/*
	 * set and current_fpr of the whole array in one pass, the same
	 * numbers to the last bit (what a save stores, filter_stats_of);
	 * NULL: the two passes.
	 */
	void (*set_and_fpr)(const struct filter *f, uint64_t *set, double *fpr);

	/* Models (model.h): expected rate at n keys, and n back from the fill. */
	double (*fpr)(uint64_t n, uint64_t m, uint32_t k);
	double (*estimate)(uint64_t m, uint32_t k, uint64_t set);
	double (*estimate_sd)(uint64_t m, uint32_t k, double n);

	/* Merging n words of another filter of the same shape: union or intersection. */
	void (*unite)(uint64_t *dst, const uint64_t *src, size_t n);
	void (*intersect)(uint64_t *dst, const uint64_t *src, size_t n);
};

/* The table of layout id, or NULL for an unknown id. */
const struct layout_ops *layout_of(enum filter_layout id);

/* The table of the layout named name ("blocked"), or NULL. */
const struct layout_ops *layout_named(const char *name);

/* Shared by the layouts of bits. check: keys probe all of m (probe_bits is 0). */
int layout_check_whole_m(const struct filter_params *p, const char **errstr);
/* word_set: the bits set in w. */
unsigned layout_word_bits(uint64_t w);
/* unite and intersect: OR and AND, word by word. */
void layout_or_words(uint64_t *dst, const uint64_t *src, size_t n);
void layout_and_words(uint64_t *dst, const uint64_t *src, size_t n);

/* The registered layouts (layout.c). */
extern const struct layout_ops layout_blocked, layout_classic, layout_counting, layout_dcso;

/*
 * The blocked layout's own entry points, behind filter_blocks_of,
 * filter_blocks_test and filter_blocks_test_and_add (filter.h), for any
 * number of keys.
 */
void layout_blocked_bases(const struct filter *f, const uint64_t *h, size_t n, uint64_t *base);
/* A big blocked filter (f->backed set) from now on dense: huge pages asked for, once (filter_expect_dense). */
void layout_blocked_dense(const struct filter *f);
/*
 * A staged filter (filter_stage) has its blocks written into its array
 * from now on: before anything reads or writes the array other than the
 * layout's own operations (a save, a merge). Nothing when not staged.
 */
void layout_blocked_settle(const struct filter *f);
/* A staged filter's blocks (filter_staged_blocks). */
int layout_blocked_staged_blocks(const struct filter *f, struct filter_block **blocks, size_t *n);
/* A staged filter's bits set, into set: 1; 0 when it is not staged. */
int layout_blocked_staged_set(const struct filter *f, uint64_t *set);
void layout_blocked_test_bases(const struct filter *f, const uint64_t *base, const uint64_t *h,
			       size_t n, unsigned char *present);
size_t layout_blocked_test_and_add_bases(struct filter *f, const uint64_t *base,
					 const uint64_t *h, size_t n, unsigned char *present);

/*
 * OR bits into a word shared with other adding threads. The relaxed load
 * first skips words that hold the bits already (most, once a filter
 * fills), so their cache lines are not taken for writing; the fetch-or
 * makes concurrent adds to one word lose nothing. Relaxed: the bits order
 * nothing else, and the threads are joined before the filter is read.
 */
static inline void layout_word_or_shared(uint64_t *w, uint64_t bits)
{
	if ((__atomic_load_n(w, __ATOMIC_RELAXED) & bits) != bits)
		__atomic_fetch_or(w, bits, __ATOMIC_RELAXED);
}

/* Whether layout id is known and has every trait of traits (LAYOUT_*). */
static inline int layout_has(enum filter_layout id, unsigned traits)
{
	const struct layout_ops *l = layout_of(id);

	return l != NULL && (l->traits & traits) == traits;
}

/* Positions per 64-bit word of a layout. */
static inline unsigned layout_positions_per_word(const struct layout_ops *l)
{
	return 64u / l->position_bits;
}

#ifdef __cplusplus
}
#endif

#endif
