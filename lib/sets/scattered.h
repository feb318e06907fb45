/* SPDX-License-Identifier: MIT */
/*
 * scattered.h - what the layouts whose k probes fall anywhere in the array
 * share (classic, counting, DCSO): a key's probes as k word indexes and
 * masks (a bit, or a counter's nibble), prefetched for a whole batch before
 * any is probed, so the batch's misses overlap; the classic probe sequence;
 * and the statistics of an array of bits.
 *
 * Each such layout fills a struct scattered_batch its own way (probes from
 * SipHash halves, or DCSO's from the key bytes) and probes with these.
 */
#ifndef BFTOOLS_SCATTERED_H
#define BFTOOLS_SCATTERED_H

#include <stddef.h>
#include <stdint.h>

#include "filter_types.h"
#include "layout.h"

struct scattered_probes {
	uint64_t word[FILTER_K_MAX];
	uint64_t mask[FILTER_K_MAX];
};

struct scattered_batch {
	struct scattered_probes pr[LAYOUT_BATCH];
};

/* Position x as probe i: bit x, or with counters the nibble of counter x. */
static inline void scattered_place(struct scattered_probes *pr, uint32_t i, uint64_t x,
				   int counters)
{
	if (counters) {
		pr->word[i] = x >> 4;
		pr->mask[i] = UINT64_C(0xf) << ((x & 15) * 4);
		return;
	}
	pr->word[i] = x >> 6;
	pr->mask[i] = UINT64_C(1) << (x & 63);
}

/* Are all of the key's probes set (bits set, counters non-zero)? */
static inline int scattered_all_set(const struct filter *f, const struct scattered_probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++)
		if ((f->words[pr->word[j]] & pr->mask[j]) == 0)
			return 0;
	return 1;
}

/*
 * The classic sequence from h (over m bits or, with counters, m counters):
 * x = h1 mod m, y = h2 mod m; probe x; x = x + y; y = y + i (mod m).
 */
void scattered_classic_probes(const struct filter *f, const uint64_t h[2],
			      struct scattered_probes *pr, int counters);

/* Prefetch every word of a key's probes for writing. */
void scattered_prefetch(const struct filter *f, const struct scattered_probes *pr);

/* The k position indexes of probes pr (bits, or counters). */
void scattered_positions(const struct filter *f, const struct scattered_probes *pr, int counters,
			 uint64_t *positions);

/* q^k, q the share of the probed positions set. */
double scattered_current_fpr(const struct filter *f);
/* probed: all of m. */
uint64_t scattered_probed_m(const struct filter_params *p);

/*
 * A layout's batch of probes: from the hashes h (NULL for a keyless
 * layout) or the keys, prefetched.
 */
typedef void (*scattered_prepare_fn)(const struct filter *f, const struct line *keys,
				     const uint64_t *h, size_t n, struct scattered_batch *b);

/*
 * The batch operations of a layout of bits (layout.h's add, test,
 * test_and_add, add_shared), given how the layout prepares a batch.
 */
void scattered_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n,
		   scattered_prepare_fn prepare);
void scattered_test(const struct filter *f, const struct line *keys, const uint64_t *h,
		    size_t n, unsigned char *present, scattered_prepare_fn prepare);
size_t scattered_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
			      size_t n, unsigned char *present, scattered_prepare_fn prepare);
void scattered_add_shared(struct filter *f, const struct line *keys, const uint64_t *h,
			  size_t n, scattered_prepare_fn prepare);

/* Bits: set probe's bit (classic and DCSO add, test-and-add). */
void scattered_set(struct filter *f, const struct scattered_probes *pr);
/* OR with atomics, for threads adding at once. */
void scattered_or_shared(struct filter *f, const struct scattered_probes *pr);
/* Test-and-add of a prepared batch of bits, in order. */
size_t scattered_test_and_set(struct filter *f, const struct scattered_batch *b, size_t n,
			      unsigned char *present);

#endif
