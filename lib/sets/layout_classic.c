/* SPDX-License-Identifier: MIT */
/*
 * layout_classic.c - the textbook layout: k bits anywhere in the m bits,
 * by the classic sequence (scattered.c). A lookup costs up to k misses, so
 * blocked is the default; classic is for sizes and rates that follow the
 * textbook exactly, and for tools that expect them.
 */
#include "layout.h"

#include "model.h"
#include "popcount.h"
#include "scattered.h"

/* The probes of a batch, prefetched (scattered_prepare_fn). */
static void classic_prepare(const struct filter *f, const struct line *keys, const uint64_t *h,
			    size_t n, struct scattered_batch *b)
{
	(void)keys;
	for (size_t i = 0; i < n; i++) {
		scattered_classic_probes(f, h + 2 * i, &b->pr[i], 0);
		scattered_prefetch(f, &b->pr[i]);
	}
}

static void classic_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	scattered_add(f, keys, h, n, classic_prepare);
}

static void classic_test(const struct filter *f, const struct line *keys, const uint64_t *h,
			 size_t n, unsigned char *present)
{
	scattered_test(f, keys, h, n, present, classic_prepare);
}

static size_t classic_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
				   size_t n, unsigned char *present)
{
	return scattered_test_and_add(f, keys, h, n, present, classic_prepare);
}

static void classic_add_shared(struct filter *f, const struct line *keys, const uint64_t *h,
			       size_t n)
{
	scattered_add_shared(f, keys, h, n, classic_prepare);
}

static void classic_positions(const struct filter *f, const struct line *key, const uint64_t h[2],
			      uint64_t *positions)
{
	struct scattered_probes pr;

	(void)key;
	scattered_classic_probes(f, h, &pr, 0);
	scattered_positions(f, &pr, 0, positions);
}

const struct layout_ops layout_classic = {
	.id = FILTER_CLASSIC,
	.name = "classic",
	.unit = "bits",
	.position_bits = 1,
	.traits = LAYOUT_SAVED,
	.check = layout_check_whole_m,
	.probed = scattered_probed_m,
	.add = classic_add,
	.test = classic_test,
	.test_and_add = classic_test_and_add,
	.add_shared = classic_add_shared,
	.remove = NULL,
	.positions = classic_positions,
	.ready = NULL,
	.set = popcount_words,
	.word_set = layout_word_bits,
	.saturated = NULL,
	.current_fpr = scattered_current_fpr,
	.fpr = model_classic_fpr,
	.estimate = model_classic_estimate,
	.estimate_sd = model_classic_estimate_sd,
	.unite = layout_or_words,
	.intersect = layout_and_words,
};
