/* SPDX-License-Identifier: MIT */
/*
 * layout_counting.c - a counting Bloom filter (Fan, Cao, Almeida & Broder
 * 2000): the classic sequence over m 4-bit counters instead of bits, so
 * keys can be removed.
 *
 * A probe is the word holding the counter and the mask of its nibble, so
 * "set" (non-zero) is tested exactly as a bit is, and only adding and
 * removing know about counts. Classic probing, not blocked: a counting
 * filter is four times the memory of a classic one already, and a
 * 512-counter block (256 bytes, four cache lines) would lose most of
 * blocked's one-miss speed while still needing its extra bits; classic
 * keeps the textbook sizing and estimates (model.c), read with counters
 * for bits.
 *
 * A counter is incremented up to 15 and then stays there: a saturated
 * counter may stand for more keys than it can count, so decrementing it
 * could one day make it 0 under a key still in the filter. Removal
 * decrements the others, and undoes itself when it meets a 0 (the key was
 * never added): no counter changes for a key that was surely absent.
 *
 * Merging combines counter by counter: a union adds them, saturating at
 * 15, which is the counting filter of the two inputs' keys together (a key
 * added to both counts twice, as if added twice), so every key may later
 * be removed as often as it was added; the non-zero counters are exactly
 * the OR of the two filters' non-zero ones. An intersection takes the
 * smaller of each pair: a key both hold keeps every counter above 0, and a
 * counter never falls below what the keys both hold put in it (their share
 * of each side is at most that side's counter), so the result counts at
 * least the keys held by both, each as often as the side holding it fewer
 * times. A saturated counter stays saturated only where both were. Both
 * work on 16 counters per 64-bit word at once: split into the even and odd
 * nibbles, one counter per byte, where an add or compare of 4-bit values
 * cannot carry into the next byte.
 */
#include "layout.h"

#include "model.h"
#include "popcount.h"
#include "scattered.h"

/* The lowest bit of each 4-bit counter in a word. */
#define NIBBLE_LOW UINT64_C(0x1111111111111111)

/* The probes of a batch, prefetched (scattered_prepare_fn). */
static void counting_prepare(const struct filter *f, const struct line *keys, const uint64_t *h,
			     size_t n, struct scattered_batch *b)
{
	(void)keys;
	for (size_t i = 0; i < n; i++) {
		scattered_classic_probes(f, h + 2 * i, &b->pr[i], 1);
		scattered_prefetch(f, &b->pr[i]);
	}
}

/*
 * One more on each probed counter, none past 15. mask & -mask is the
 * nibble's lowest bit, so adding it is +1 on that counter alone (it is
 * below 15: no carry leaves the nibble).
 */
static void counters_increment(struct filter *f, const struct scattered_probes *pr, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		uint64_t *w = &f->words[pr->word[j]], mask = pr->mask[j];

		if ((*w & mask) != mask)
			*w += mask & -mask;
	}
}

/*
 * One less on each probed counter but the saturated ones. Returns 0, with
 * every counter as it was, when one is already 0: the key was never added,
 * and its other counters belong to other keys. Undoing the first j
 * decrements is incrementing them again: a decremented counter is at most
 * 13 now and a skipped one is 15, so 15 means "left alone"; a counter
 * probed twice was decremented twice and is incremented twice.
 */
static int counters_decrement(struct filter *f, const struct scattered_probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++) {
		uint64_t *w = &f->words[pr->word[j]], mask = pr->mask[j];
		uint64_t counter = *w & mask;

		if (counter == 0) {
			counters_increment(f, pr, j);
			return 0;
		}
		if (counter != mask)
			*w -= mask & -mask;
	}
	return 1;
}

static void counting_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	struct scattered_batch b;

	counting_prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++)
		counters_increment(f, &b.pr[i], f->params.k);
}

static void counting_test(const struct filter *f, const struct line *keys, const uint64_t *h,
			  size_t n, unsigned char *present)
{
	scattered_test(f, keys, h, n, present, counting_prepare);
}

/* Counting counts every key: one that tests present may be a false positive. */
static size_t counting_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
				    size_t n, unsigned char *present)
{
	struct scattered_batch b;
	size_t fresh = 0;

	counting_prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++) {
		int seen = scattered_all_set(f, &b.pr[i]);

		present[i] = (unsigned char)seen;
		fresh += (size_t)!seen;
		counters_increment(f, &b.pr[i], f->params.k);
	}
	return fresh;
}

static size_t counting_remove(struct filter *f, const struct line *keys, const uint64_t *h,
			      size_t n)
{
	struct scattered_batch b;
	size_t absent = 0;

	counting_prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++)
		absent += (size_t)!counters_decrement(f, &b.pr[i]);
	return absent;
}

static void counting_positions(const struct filter *f, const struct line *key,
			       const uint64_t h[2], uint64_t *positions)
{
	struct scattered_probes pr;

	(void)key;
	scattered_classic_probes(f, h, &pr, 1);
	scattered_positions(f, &pr, 1, positions);
}

/* The lowest bit of each counter of w set when the counter is non-zero. */
static uint64_t counters_nonzero(uint64_t w)
{
	return (w | w >> 1 | w >> 2 | w >> 3) & NIBBLE_LOW;
}

static unsigned counting_word_set(uint64_t w)
{
	return popcount64(counters_nonzero(w));
}

static uint64_t counting_set(const uint64_t *words, uint64_t nwords)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < nwords; i++)
		total += counting_word_set(words[i]);
	return total;
}

static uint64_t counting_saturated(const uint64_t *words, uint64_t nwords)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < nwords; i++) {
		uint64_t w = words[i];

		total += popcount64(w & w >> 1 & w >> 2 & w >> 3 & NIBBLE_LOW);
	}
	return total;
}

#define BYTES_LOW_NIBBLE UINT64_C(0x0f0f0f0f0f0f0f0f)
#define BYTES_ONE UINT64_C(0x0101010101010101)
#define BYTES_SIXTEEN UINT64_C(0x1010101010101010)

/* Eight counters a byte apart (0..15 each): their sums, 15 where a sum passes 15. */
static uint64_t lanes_sum(uint64_t a, uint64_t b)
{
	uint64_t sum = a + b;				/* <= 30 a byte: no carry out */
	uint64_t over = (sum >> 4) & BYTES_ONE;		/* bit 4: the sum is 16 or more */

	return (sum | over * 15) & BYTES_LOW_NIBBLE;
}

/* Eight counters a byte apart: the smaller of each pair. */
static uint64_t lanes_min(uint64_t a, uint64_t b)
{
	uint64_t diff = (a | BYTES_SIXTEEN) - b;	/* 16 + a - b, 1..31 a byte: no borrow */
	uint64_t a_larger = ((diff >> 4) & BYTES_ONE) * 15;	/* a >= b: take b */

	return (b & a_larger) | (a & ~a_larger);
}

static void counting_unite(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t a = dst[i], b = src[i];

		dst[i] = lanes_sum(a & BYTES_LOW_NIBBLE, b & BYTES_LOW_NIBBLE) |
			 lanes_sum(a >> 4 & BYTES_LOW_NIBBLE, b >> 4 & BYTES_LOW_NIBBLE) << 4;
	}
}

static void counting_intersect(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t a = dst[i], b = src[i];

		dst[i] = lanes_min(a & BYTES_LOW_NIBBLE, b & BYTES_LOW_NIBBLE) |
			 lanes_min(a >> 4 & BYTES_LOW_NIBBLE, b >> 4 & BYTES_LOW_NIBBLE) << 4;
	}
}

const struct layout_ops layout_counting = {
	.id = FILTER_COUNTING,
	.name = "counting",
	.unit = "counters",
	.position_bits = 4,
	.traits = LAYOUT_COUNTERS | LAYOUT_SAVED,
	.check = layout_check_whole_m,
	.probed = scattered_probed_m,
	.add = counting_add,
	.test = counting_test,
	.test_and_add = counting_test_and_add,
	.add_shared = NULL,	/* an increment is not an OR */
	.remove = counting_remove,
	.positions = counting_positions,
	.ready = NULL,
	.set = counting_set,
	.word_set = counting_word_set,
	.saturated = counting_saturated,
	.current_fpr = scattered_current_fpr,
	.fpr = model_classic_fpr,
	.estimate = model_classic_estimate,
	.estimate_sd = model_classic_estimate_sd,
	.unite = counting_unite,
	.intersect = counting_intersect,
};
