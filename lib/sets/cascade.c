/* SPDX-License-Identifier: MIT */
/*
 * cascade.c - fixed filters and growing cascades of filters behind one API.
 *
 * The growth rule and the rate series are explained in cascade.h. Two
 * details matter here:
 *
 * - A growing cascade must never let its newest stage take more distinct
 *   keys than it was sized for, or the series bound breaks. So a batch is
 *   cut into pieces no longer than the newest stage's remaining room: at
 *   most that many keys can be new, and the stage fills exactly.
 *
 * - A key already in an older stage is not added to the newest one (that
 *   would spend capacity on a repeat). Keys are tested against the older
 *   stages first; only the rest are tested-and-added to the newest.
 *
 * newest_keys, the newest stage's distinct count, is kept exactly while a
 * cascade is in memory and estimated from the fill when one is loaded.
 *
 * Counting stages (filter.h) need nothing of their own here: they add and
 * test as bit stages do. Only removal asks for more, a key's one stage,
 * which only a fixed filter gives (cascade_remove).
 */
#include "cascade.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "sizing.h"

#define PIECE 4096

static struct cascade *cascade_alloc(const char **errstr)
{
	struct cascade *c = calloc(1, sizeof *c);

	if (c == NULL || (c->stages = calloc(CASCADE_STAGES_MAX, sizeof *c->stages)) == NULL) {
		free(c);
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	return c;
}

struct cascade *cascade_new_fixed(const struct filter_params *p, const char **errstr)
{
	struct cascade *c = cascade_alloc(errstr);

	if (c == NULL)
		return NULL;
	c->stages[0] = filter_new(p, errstr);
	if (c->stages[0] == NULL) {
		cascade_free(c);
		return NULL;
	}
	filter_stage(c->stages[0]);	/* new, to be added to */
	c->nstages = 1;
	c->capacity = p->capacity;
	c->target_p = p->target_p;
	return c;
}

/* Stage i's capacity and rate; 0 capacity when it would overflow. */
static void stage_plan(const struct cascade *c, size_t i, uint64_t *capacity, double *rate)
{
	double first_rate = c->target_p * -expm1(-(double)c->tighten * M_LN2);
	uint64_t cap = c->capacity;

	for (size_t j = 0; j < i && cap != 0; j++)
		cap = cap > UINT64_MAX / c->growth ? 0 : cap * c->growth;
	*capacity = cap;
	*rate = ldexp(first_rate, -(int)(c->tighten * i));
}

/* Append stage number c->nstages, sized by the plan. */
static int add_stage(struct cascade *c, const struct filter_params *like, const char **errstr)
{
	struct filter_params p = *like;
	struct filter *f;

	if (c->nstages == CASCADE_STAGES_MAX) {
		*errstr = "growing filter has reached its 64 stages";
		return -1;
	}
	stage_plan(c, c->nstages, &p.capacity, &p.target_p);
	if (p.capacity == 0 || p.capacity > FILTER_M_MAX ||
	    sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, errstr) < 0) {
		*errstr = "growing filter cannot grow further (next stage too large)";
		return -1;
	}
	f = filter_new(&p, errstr);
	if (f == NULL)
		return -1;
	filter_stage(f);	/* new, to be added to */
	c->stages[c->nstages++] = f;
	c->newest_keys = 0;
	return 0;
}

struct cascade *cascade_new_growing(const struct filter_params *first, double p,
				    unsigned growth, unsigned tighten, const char **errstr)
{
	struct cascade *c;

	if (growth < 2 || growth > CASCADE_GROWTH_MAX || tighten < 1 || tighten > CASCADE_TIGHTEN_MAX) {
		*errstr = "growth factor or tightening out of range";
		return NULL;
	}
	if (!(p > 0.0 && p < 1.0) || first->capacity < 1) {
		*errstr = "bad capacity or rate for a growing filter";
		return NULL;
	}
	c = cascade_alloc(errstr);
	if (c == NULL)
		return NULL;
	c->growth = growth;
	c->tighten = tighten;
	c->capacity = first->capacity;
	c->target_p = p;
	if (add_stage(c, first, errstr) < 0) {
		cascade_free(c);
		return NULL;
	}
	return c;
}

static int stages_share_hashing(struct filter *const *stages, size_t n, const char **errstr)
{
	const struct filter_params *p0 = &stages[0]->params;

	for (size_t i = 1; i < n; i++) {
		const struct filter_params *p = &stages[i]->params;

		if (p->hash != p0->hash || p->flags != p0->flags ||
		    memcmp(p->key, p0->key, sizeof p->key) != 0) {
			*errstr = "stages disagree on hash, key or normalisation";
			return 0;
		}
	}
	return 1;
}

struct cascade *cascade_from_stages(struct filter **stages, size_t n, unsigned growth,
				    unsigned tighten, uint64_t capacity, double target_p,
				    const char **errstr)
{
	struct cascade *c;

	if (n < 1 || n > CASCADE_STAGES_MAX || (growth == 0 && n != 1)) {
		*errstr = "bad number of stages";
		return NULL;
	}
	if (!stages_share_hashing(stages, n, errstr))
		return NULL;
	c = cascade_alloc(errstr);
	if (c == NULL)
		return NULL;
	memcpy(c->stages, stages, n * sizeof *stages);
	c->nstages = n;
	c->growth = growth;
	c->tighten = tighten;
	c->capacity = capacity;
	c->target_p = target_p;
	/*
	 * Only a growing cascade needs the newest stage's count (for its room)
	 * right away; counting a fixed filter's bits would cost every reader a
	 * pass over the whole array. A shape from format_open has no bits.
	 */
	if (growth != 0 && stages[n - 1]->words != NULL)
		cascade_refresh_count(c);
	return c;
}

void cascade_refresh_count(struct cascade *c)
{
	const struct filter *newest = c->stages[c->nstages - 1];
	double estimate;

	/*
	 * A DCSO file records its N exactly, adds keep it (the keys that set
	 * a new bit) and its tools count by it: kept (merge.c sets a join's).
	 */
	if (layout_has(newest->params.layout, LAYOUT_FOREIGN))
		return;
	estimate = filter_estimate_count(newest);

	/* a saturated stage counts as full: the next new key starts a stage */
	c->newest_keys = isfinite(estimate) && estimate < (double)newest->params.capacity
				 ? (uint64_t)llround(estimate)
				 : newest->params.capacity;
}

struct cascade *cascade_new_like(const struct cascade *model, const char **errstr)
{
	struct filter_params first = model->stages[0]->params;
	struct cascade *c;

	if (model->growth == 0) {
		c = cascade_new_fixed(&first, errstr);
		if (c != NULL)
			c->dcso_gzip = model->dcso_gzip;	/* written as the model was */
		return c;
	}
	return cascade_new_growing(&first, model->target_p, model->growth, model->tighten, errstr);
}

void cascade_expect_adds(struct cascade *c, uint64_t n)
{
	for (size_t i = 0; i < c->nstages; i++)
		filter_expect_adds(c->stages[i], n);
}

void cascade_free(struct cascade *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nstages; i++)
		filter_free(c->stages[i]);
	free(c->stages);
	free(c->dcso_data);
	free(c);
}

int cascade_supply_key(struct cascade *c, const unsigned char key[16], const char **errstr)
{
	for (size_t i = 0; i < c->nstages; i++)
		if (filter_supply_key(c->stages[i], key, errstr) < 0)
			return -1;
	return 0;
}

int cascade_needs_key(const struct cascade *c)
{
	static const unsigned char none[16];
	const struct filter_params *p = cascade_params(c);

	return (p->flags & FILTER_KEY_EXTERNAL) && memcmp(p->key, none, sizeof none) == 0;
}

const struct filter_params *cascade_params(const struct cascade *c)
{
	return &c->stages[0]->params;
}

const char cascade_err_no_key[] = "the filter's key is kept in a key file and was not supplied";

int cascade_test(const struct cascade *c, const struct line *keys, size_t n,
		 unsigned char *present)
{
	return cascade_test_hashed(c, keys, NULL, n, present);
}

const struct filter *cascade_hasher(const struct cascade *c)
{
	if (cascade_needs_key(c) || layout_has(cascade_params(c)->layout, LAYOUT_KEYLESS))
		return NULL;
	return c->stages[0];
}

int cascade_test_hashed(const struct cascade *c, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present)
{
	unsigned char more[PIECE];

	if (cascade_needs_key(c))
		return -1;
	filter_test_hashed(c->stages[0], keys, h, n, present);
	for (size_t s = 1; s < c->nstages; s++) {
		for (size_t done = 0; done < n; done += PIECE) {
			size_t len = n - done < PIECE ? n - done : PIECE;

			filter_test_hashed(c->stages[s], keys + done, h ? h + 2 * done : NULL, len,
					   more);
			for (size_t i = 0; i < len; i++)
				present[done + i] |= more[i];
		}
	}
	return 0;
}

/*
 * Test-and-add keys[0..n) with the newest stage, after the older stages:
 * keys the older stages hold are marked present and left out.
 */
static size_t add_piece(struct cascade *c, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present)
{
	struct filter *newest = c->stages[c->nstages - 1];
	struct line fresh_keys[PIECE];
	uint64_t fresh_h[2 * PIECE];
	unsigned char fresh_present[PIECE];
	size_t idx[PIECE], nfresh = 0, added;

	memset(present, 0, n);
	for (size_t s = 0; s + 1 < c->nstages; s++) {
		unsigned char older[PIECE];

		filter_test_hashed(c->stages[s], keys, h, n, older);
		for (size_t i = 0; i < n; i++)
			present[i] |= older[i];
	}
	for (size_t i = 0; i < n; i++)
		if (!present[i]) {
			idx[nfresh] = i;
			if (h) {
				fresh_h[2 * nfresh] = h[2 * i];
				fresh_h[2 * nfresh + 1] = h[2 * i + 1];
			}
			fresh_keys[nfresh++] = keys[i];
		}
	added = filter_test_and_add_hashed(newest, fresh_keys, h ? fresh_h : NULL, nfresh,
					   fresh_present);
	if (c->count_new_only)
		newest->insertions -= nfresh - added;	/* it counted all it was offered */
	else
		newest->insertions += n - nfresh;	/* repeats count as insertions too */
	for (size_t j = 0; j < nfresh; j++)
		/* idx[0..nfresh) was written by the loop that counted nfresh;
		 * cppcheck does not tie the count to the writes (a false report) */
		/* cppcheck-suppress uninitvar */
		present[idx[j]] = fresh_present[j];
	return added;
}

static size_t room_in_newest(const struct cascade *c)
{
	uint64_t cap = c->stages[c->nstages - 1]->params.capacity;
	uint64_t room = cap > c->newest_keys ? cap - c->newest_keys : 0;

	if (c->growth == 0)
		return PIECE;	/* a fixed filter never grows: no limit */
	return room < PIECE ? (size_t)room : PIECE;
}

int cascade_test_and_add(struct cascade *c, const struct line *keys, size_t n,
			 unsigned char *present, size_t *fresh, const char **errstr)
{
	return cascade_test_and_add_hashed(c, keys, NULL, n, present, fresh, errstr);
}

int cascade_test_and_add_hashed(struct cascade *c, const struct line *keys, const uint64_t *h,
				size_t n, unsigned char *present, size_t *fresh,
				const char **errstr)
{
	const struct filter_params *first = cascade_params(c);
	size_t done = 0, total = 0;
	int status = 0;

	if (cascade_needs_key(c)) {
		*errstr = cascade_err_no_key;
		return -1;
	}
	while (done < n) {
		size_t len = room_in_newest(c), added;

		if (len == 0) {
			if (add_stage(c, first, errstr) < 0) {
				status = -1;
				break;
			}
			continue;
		}
		if (len > n - done)
			len = n - done;
		added = add_piece(c, keys + done, h ? h + 2 * done : NULL, len, present + done);
		c->newest_keys += added;
		total += added;
		done += len;
	}
	if (fresh)
		*fresh = total;
	return status;
}

int cascade_add(struct cascade *c, const struct line *keys, size_t n, const char **errstr)
{
	return cascade_add_hashed(c, keys, NULL, n, errstr);
}

int cascade_add_hashed(struct cascade *c, const struct line *keys, const uint64_t *h, size_t n,
		       const char **errstr)
{
	unsigned char present[PIECE];

	if (cascade_needs_key(c)) {
		*errstr = cascade_err_no_key;
		return -1;
	}
	if (c->growth == 0) {
		filter_add_hashed(c->stages[0], keys, h, n);
		return 0;
	}
	for (size_t done = 0; done < n; done += PIECE) {
		size_t len = n - done < PIECE ? n - done : PIECE;

		if (cascade_test_and_add_hashed(c, keys + done, h ? h + 2 * done : NULL, len,
						present, NULL, errstr) < 0)
			return -1;
	}
	return 0;
}

int cascade_can_add_shared(const struct cascade *c)
{
	return c->growth == 0 && c->nstages == 1 && !cascade_needs_key(c) &&
	       layout_of(cascade_params(c)->layout)->add_shared != NULL;
}

void cascade_add_shared(struct cascade *c, const struct line *keys, const uint64_t *h, size_t n)
{
	(void)filter_add_shared(c->stages[0], keys, h, n);	/* cascade_can_add_shared: cannot fail */
}

void cascade_count_added(struct cascade *c, uint64_t n)
{
	c->stages[0]->insertions += n;
}

int cascade_remove(struct cascade *c, const struct line *keys, size_t n, size_t *absent,
		   const char **errstr)
{
	size_t missing;

	if (layout_of(cascade_params(c)->layout)->remove == NULL) {
		*errstr = "only a counting filter can remove keys";
		return -1;
	}
	if (c->growth != 0 || c->nstages != 1) {
		*errstr = "cannot remove keys from a growing filter (which stage holds a key is not known)";
		return -1;
	}
	if (cascade_needs_key(c)) {
		*errstr = cascade_err_no_key;
		return -1;
	}
	missing = filter_remove(c->stages[0], keys, n);
	if (absent)
		*absent = missing;
	return 0;
}

uint64_t cascade_insertions(const struct cascade *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->nstages; i++)
		total += c->stages[i]->insertions;
	return total;
}

double cascade_estimate_count(const struct cascade *c)
{
	double total = 0.0;

	for (size_t i = 0; i < c->nstages; i++)
		total += filter_estimate_count(c->stages[i]);
	return total;
}

double cascade_current_fpr(const struct cascade *c)
{
	double miss_all = 1.0;

	for (size_t i = 0; i < c->nstages; i++)
		miss_all *= 1.0 - filter_current_fpr(c->stages[i]);
	return 1.0 - miss_all;
}

double cascade_stats_estimate(const struct cascade *c, const struct filter_stats *stats)
{
	double total = 0.0;

	for (size_t i = 0; i < c->nstages; i++)
		total += filter_stats_estimate(&c->stages[i]->params, &stats[i]);
	return total;
}

double cascade_stats_fpr(const struct cascade *c, const struct filter_stats *stats)
{
	double miss_all = 1.0;

	for (size_t i = 0; i < c->nstages; i++)
		miss_all *= 1.0 - stats[i].rate;
	return 1.0 - miss_all;
}

double cascade_model_fpr(const struct cascade *c, uint64_t newest_offered)
{
	double miss_all = 1.0;

	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;
		uint64_t keys = i + 1 == c->nstages ? newest_offered : p->capacity;

		miss_all *= 1.0 - sizing_fpr(p->layout, keys, p->m, p->k);
	}
	return 1.0 - miss_all;
}

uint64_t cascade_bytes(const struct cascade *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->nstages; i++)
		total += filter_array_bytes(&c->stages[i]->params);
	return total;
}

int cascade_compatible(const struct cascade *a, const struct cascade *b, const char **what)
{
	size_t common = a->nstages < b->nstages ? a->nstages : b->nstages;

	if (a->growth != b->growth || a->tighten != b->tighten) {
		*what = "growth";
		return 0;
	}
	for (size_t i = 0; i < common; i++)
		if (!filter_compatible(a->stages[i], b->stages[i], what))
			return 0;
	if (!layout_has(cascade_params(a)->layout, LAYOUT_FOREIGN))
		return 1;
	/* the reference's join refuses other dimensions, though the bits would combine */
	if (a->capacity != b->capacity)
		*what = "capacity";
	else if (a->target_p != b->target_p)
		*what = "rate";
	else
		return 1;
	return 0;
}
