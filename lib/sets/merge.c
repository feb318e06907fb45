/* SPDX-License-Identifier: MIT */
/*
 * merge.c - OR and AND of filters in memory, and the steps a streamed merge
 * of a file (merge_stream.c) shares with it.
 *
 * Stage i of one cascade combines with stage i of the other, word by word.
 * Why stage by stage works for OR: a key lives in exactly the stage that
 * took it, and every stage of both cascades hashes it the same way (same
 * hash, key, normalisation; same m and k at the same index, which
 * cascade_compatible checks), so OR-ing stage i with stage i gives a stage
 * that holds both stages' keys. Stages only one side has are carried over.
 * AND needs a key to be in the same stage on both sides, which only a
 * fixed filter (one stage) guarantees.
 *
 * Everything that can be refused is checked before a single bit changes:
 * compatibility, AND of growing filters, insertion counts overflowing, and
 * the capacity the carried-over stages get. Carried-over stages are
 * labelled with into's plan (capacity times growth, rate divided by
 * 2^tighten, per stage after into's newest), so the result keeps into's
 * header and saves as a valid file.
 *
 * Streaming (merge_stream.c) checks, combines and finishes with the same
 * steps, reading the other file's payload a piece at a time.
 *
 * Each layout combines its own positions (layout.h unite and intersect):
 * bits OR and AND; counters add, saturating, and take the smaller.
 * Either way a page of zeros on the right side changes nothing (OR: the
 * other's page of zeros; AND: into's), so such pages are skipped unread
 * and unwritten: merging shards of a filter sized for 1e9 keys that hold
 * a thousand each touched all 2.75 GB of it (issue 33).
 *
 * Deliberately absent: XOR or difference (a Bloom filter cannot remove a
 * key; a counting filter removes keys with bfbuild --remove), and combining
 * filters whose sizes differ (folding a filter in half would change every
 * probe position).
 */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "filter.h"
#include "layout.h"
#include "untouched.h"

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static size_t smaller(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * The summed insertions of every stage, and their total, fit in 64 bits;
 * so do the summed removals (counting stages).
 */
static int insertions_fit(const struct cascade *a, const struct cascade *b)
{
	size_t n = a->nstages > b->nstages ? a->nstages : b->nstages;
	uint64_t total = 0, removed = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nstages ? a->stages[i]->insertions : 0;
		uint64_t y = i < b->nstages ? b->stages[i]->insertions : 0;
		uint64_t rx = i < a->nstages ? a->stages[i]->removals : 0;
		uint64_t ry = i < b->nstages ? b->stages[i]->removals : 0;

		if (x > UINT64_MAX - y || x + y > UINT64_MAX - total)
			return 0;
		if (rx > UINT64_MAX - ry || rx + ry > UINT64_MAX - removed)
			return 0;
		total += x + y;
		removed += rx + ry;
	}
	return 1;
}

/*
 * Params for a stage into will get at index j (>= into->nstages): model's
 * bits (layout, m, k, hashing) under into's plan for that index.
 */
static int carried_params(const struct cascade *into, const struct filter *model, size_t j,
			  struct filter_params *p, const char **errstr)
{
	const struct filter_params *newest = &into->stages[into->nstages - 1]->params;
	size_t steps = j + 1 - into->nstages;

	*p = model->params;
	p->capacity = newest->capacity;
	for (size_t s = 0; s < steps; s++) {
		if (into->growth == 0 || p->capacity > UINT64_MAX / into->growth)
			return fail(errstr, "growing filter cannot grow further (next stage too large)");
		p->capacity *= into->growth;
	}
	/* a power of two: exact, as cascade.c's own plan is */
	p->target_p = ldexp(newest->target_p, -(int)(into->tighten * steps));
	return 0;
}

/* Everything that can be refused, checked before any bit changes. */
int merge_check(const struct cascade *into, const struct cascade *other, enum merge_op op,
		       const char **errstr)
{
	struct filter_params p;
	const char *what;

	if (op == MERGE_AND && (into->growth != 0 || other->growth != 0))
		return fail(errstr, "cannot intersect growing filters");
	if (!cascade_compatible(into, other, &what))
		return fail(errstr, what);
	if (!insertions_fit(into, other))
		return fail(errstr, "insertion counts overflow");
	for (size_t j = into->nstages; j < other->nstages; j++)
		if (carried_params(into, other->stages[j], j, &p, errstr) < 0)
			return -1;
	return 0;
}

/* An empty stage for index j of into, shaped like model, with model's insertions. */
struct filter *merge_carried_stage(const struct cascade *into, const struct filter *model,
				   size_t j, const char **errstr)
{
	struct filter_params p;
	struct filter *f;

	if (carried_params(into, model, j, &p, errstr) < 0 || (f = filter_new(&p, errstr)) == NULL)
		return NULL;
	f->insertions = model->insertions;
	f->removals = model->removals;
	return f;
}

#define PAGE_WORDS (UNTOUCHED_PAGE / 8)
#define SPAN_WORDS (UNTOUCHED_SPAN / 8)

static int all_zero(const uint64_t *w, size_t n)
{
	uint64_t any = 0;

	for (size_t i = 0; i < n; i++)
		any |= w[i];
	return any == 0;
}

/* One span: OR skips src's pages of zeros, AND into's; an AND with src's page of zeros clears into's. */
static void merge_span(const struct layout_ops *l, uint64_t *dst, const uint64_t *src, size_t n,
		       enum merge_op op)
{
	unsigned char read_src[UNTOUCHED_PAGES], read_dst[UNTOUCHED_PAGES];

	/* which pages may hold data (untouched.h); all of them where it cannot tell */
	(void)untouched_pages(src, n * 8, read_src);
	if (op != MERGE_OR)
		(void)untouched_pages(dst, n * 8, read_dst);
	for (size_t at = 0, i = 0; at < n; at += PAGE_WORDS, i++) {
		size_t len = n - at < PAGE_WORDS ? n - at : PAGE_WORDS;

		if (op == MERGE_OR) {
			if (read_src[i] && !all_zero(src + at, len))
				l->unite(dst + at, src + at, len);
		} else if (!read_dst[i]) {
			continue;	/* zeros, and zeros they stay */
		} else if (read_src[i]) {
			l->intersect(dst + at, src + at, len);
		} else {
			for (size_t j = at; j < at + len; j++)
				if (dst[j] != 0)
					dst[j] = 0;
		}
	}
}

void merge_words(const struct filter *f, uint64_t *dst, const uint64_t *src, size_t n,
		 enum merge_op op)
{
	const struct layout_ops *l = layout_of(f->params.layout);

	filter_settle(f);	/* dst is f's array: its staged blocks go there first */
	for (size_t at = 0; at < n; at += SPAN_WORDS)
		merge_span(l, dst + at, src + at, n - at < SPAN_WORDS ? n - at : SPAN_WORDS, op);
}

void merge_free_stages(struct filter **stages, size_t n)
{
	for (size_t i = 0; i < n; i++)
		filter_free(stages[i]);
}

/*
 * A DCSO result's N: DCSO's join sums the inputs' (an upper bound when
 * they share keys, its documentation warns); an AND, which DCSO's tools
 * cannot do, gets the estimate from its bits.
 */
static uint64_t dcso_count(const struct cascade *into, uint64_t into_n, uint64_t other_n,
			   enum merge_op op)
{
	double estimate;

	if (op == MERGE_OR)
		return into_n > UINT64_MAX - other_n ? UINT64_MAX : into_n + other_n;
	estimate = filter_estimate_count(into->stages[0]);
	return isfinite(estimate) ? (uint64_t)llround(estimate) : into->capacity;
}

/* Append carried stages and sum insertions: the part that cannot fail. */
void merge_finish(struct cascade *into, const struct cascade *other, enum merge_op op,
		   struct filter **carried, size_t ncarried)
{
	size_t common = smaller(into->nstages, other->nstages);
	uint64_t into_n = into->newest_keys, other_n = other->newest_keys;

	for (size_t i = 0; i < common; i++) {
		into->stages[i]->insertions += other->stages[i]->insertions;
		into->stages[i]->removals += other->stages[i]->removals;
	}
	for (size_t i = 0; i < ncarried; i++)
		into->stages[into->nstages++] = carried[i];
	cascade_refresh_count(into);
	if (layout_has(cascade_params(into)->layout, LAYOUT_FOREIGN))
		into->newest_keys = dcso_count(into, into_n, other_n, op);
}

int merge_into(struct cascade *into, const struct cascade *other, enum merge_op op,
	       const char **errstr)
{
	struct filter *carried[CASCADE_STAGES_MAX];
	size_t n = into->nstages, ncarried = 0;

	if (merge_check(into, other, op, errstr) < 0)
		return -1;
	/* both arrays are read and written as they are, below */
	for (size_t i = 0; i < into->nstages; i++)
		filter_settle(into->stages[i]);
	for (size_t j = 0; j < other->nstages; j++)
		filter_settle(other->stages[j]);
	/* copies first: allocation is the only step left that can fail */
	for (size_t j = n; j < other->nstages; j++, ncarried++) {
		carried[ncarried] = merge_carried_stage(into, other->stages[j], j, errstr);
		if (carried[ncarried] == NULL) {
			merge_free_stages(carried, ncarried);
			return -1;
		}
		/* an OR into the new stage's zeros: a copy that skips the other's empty pages */
		merge_words(carried[ncarried], carried[ncarried]->words, other->stages[j]->words,
			    filter_bytes(other->stages[j]) / 8, MERGE_OR);
	}
	for (size_t i = 0; i < smaller(n, other->nstages); i++)
		merge_words(into->stages[i], into->stages[i]->words, other->stages[i]->words,
			    filter_bytes(into->stages[i]) / 8, op);
	merge_finish(into, other, op, carried, ncarried);
	return 0;
}

