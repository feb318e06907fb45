/* SPDX-License-Identifier: MIT */
/*
 * scattered.c - the probing and statistics the layouts that probe
 * anywhere share (scattered.h): classic, counting and DCSO.
 *
 * The classic sequence (enhanced double hashing, Dillinger & Manolios
 * 2004):
 *
 *   x = h1 mod m, y = h2 mod m
 *   for i in 0..k-1: probe x; x = (x + y) mod m; y = (y + i) mod m
 *
 * The i term keeps the sequence from cycling early when y shares a factor
 * with m, so no prime m or odd h2 is needed.
 */
#include "scattered.h"

#include <math.h>

void scattered_classic_probes(const struct filter *f, const uint64_t h[2],
			      struct scattered_probes *pr, int counters)
{
	uint64_t m = f->params.m;
	uint64_t x = h[0] % m, y = h[1] % m;

	for (uint32_t i = 0; i < f->params.k; i++) {
		scattered_place(pr, i, x, counters);
		/* x, y < m <= 2^46, so the sums cannot overflow */
		x += y;
		if (x >= m)
			x -= m;
		y += i;
		if (y >= m)
			y -= m;
	}
}

void scattered_prefetch(const struct filter *f, const struct scattered_probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++)
		__builtin_prefetch(&f->words[pr->word[j]], 1, 0);
}

void scattered_positions(const struct filter *f, const struct scattered_probes *pr, int counters,
			 uint64_t *positions)
{
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t low = (uint64_t)__builtin_ctzll(pr->mask[i]);

		positions[i] = counters ? pr->word[i] * 16 + low / 4 : pr->word[i] * 64 + low;
	}
}

/*
 * A key never added is a false positive when all k of its probes hit set
 * positions. Probes are independent and uniform over their range, so with
 * a fraction q of the range set the chance is q^k.
 */
double scattered_current_fpr(const struct filter *f)
{
	const struct layout_ops *l = layout_of(f->params.layout);
	uint64_t set = l->set(f->words, f->params.m / 64 * l->position_bits);

	return pow((double)set / (double)l->probed(&f->params), f->params.k);
}

uint64_t scattered_probed_m(const struct filter_params *p)
{
	return p->m;
}

void scattered_set(struct filter *f, const struct scattered_probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++)
		f->words[pr->word[j]] |= pr->mask[j];
}

void scattered_or_shared(struct filter *f, const struct scattered_probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++)
		layout_word_or_shared(&f->words[pr->word[j]], pr->mask[j]);
}

size_t scattered_test_and_set(struct filter *f, const struct scattered_batch *b, size_t n,
			      unsigned char *present)
{
	size_t fresh = 0;

	/* in order, so a repeat later in the batch sees the earlier key */
	for (size_t i = 0; i < n; i++) {
		int seen = scattered_all_set(f, &b->pr[i]);

		present[i] = (unsigned char)seen;
		if (!seen) {
			scattered_set(f, &b->pr[i]);
			fresh++;
		}
	}
	return fresh;
}

void scattered_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n,
		   scattered_prepare_fn prepare)
{
	struct scattered_batch b;

	prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++)
		scattered_set(f, &b.pr[i]);
}

void scattered_test(const struct filter *f, const struct line *keys, const uint64_t *h,
		    size_t n, unsigned char *present, scattered_prepare_fn prepare)
{
	struct scattered_batch b;

	prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++)
		present[i] = (unsigned char)scattered_all_set(f, &b.pr[i]);
}

size_t scattered_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
			      size_t n, unsigned char *present, scattered_prepare_fn prepare)
{
	struct scattered_batch b;

	prepare(f, keys, h, n, &b);
	return scattered_test_and_set(f, &b, n, present);
}

void scattered_add_shared(struct filter *f, const struct line *keys, const uint64_t *h,
			  size_t n, scattered_prepare_fn prepare)
{
	struct scattered_batch b;

	prepare(f, keys, h, n, &b);
	for (size_t i = 0; i < n; i++)
		scattered_or_shared(f, &b.pr[i]);
}
