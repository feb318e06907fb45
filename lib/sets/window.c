/* SPDX-License-Identifier: MIT */
/*
 * window.c - a sliding-window Bloom filter made of G generations.
 *
 * A plain Bloom filter cannot forget: a key once added stays, and the
 * filter fills without end on an endless stream. A window forgets keys
 * older than N keys (a count window) or W seconds (a time window), so
 * memory is bounded by what the window holds, not by the stream.
 *
 * Design: a ring of G generations (default 8, 2..64), each a cascade
 * (cascade.h) sharing one hash, key and normalisation, so each key is
 * hashed once for all of them. The clock (keys offered so far, or the
 * latest time seen, in ms) gives the generation number of the present:
 *
 *     count window N:  g = ceil(N / (G - 1)) keys,   number = floor(t / g)
 *     time window W:   tau = W / (G - 1) seconds,    number = floor(t / tau)
 *                      computed exactly as floor(t_ms (G - 1) / (1000 W))
 *
 * The live generations are those whose number is > current - G; new keys
 * go into the newest (number = current), which is created when the clock
 * first reaches its number, and the ones that fall out are freed. A time
 * window's numbers are aligned to absolute time (Unix epoch), not to when
 * the filter began, so shards built apart on the same W and G have equal
 * numbers for the same periods and merge exactly (window_merge).
 *
 * The guarantee and its slack. A key added at t lies in generation
 * a = floor(t / g), which stays live while the clock is below (a + G) g.
 * Since t < (a + 1) g, it stays at least (G - 1) g >= N (count) or
 * (G - 1) tau = W (time) after t: no false negative within the window.
 * Since t >= a g, it is gone by t + G g: a key older than
 *
 *     G / (G - 1) window   (slack 1 / (G - 1): 14% for G = 8, 33% for 4)
 *
 * is certainly forgotten; between 1 and G / (G - 1) windows it may or may
 * not be. More generations mean less slack but one more probe per absent
 * key each (below).
 *
 * Sizing. Each generation gets rate P / G, so the compounded rate
 * 1 - prod(1 - p_i) <= sum p_i = P holds with all G generations live.
 * A count generation takes at most g keys (a key offered counts once
 * towards the clock whether new or not), so it is one fixed filter sized
 * for g keys at P / G. A time generation takes however many keys arrive
 * in tau seconds, so it is a growing cascade whose first stage takes
 * n / (G - 1) keys (n: expected keys per window) at rate P / G: a burst
 * grows the generation, with its own geometric series of rates below
 * P / G, instead of saturating it or rotating early. Memory, count
 * window, blocked layout: G g bits(P / G) ~ N G/(G - 1) (bits(P) +
 * 1.44 log2 G), about 1.4x one filter of N keys at P for G = 8, P = 1e-4.
 *
 * Refresh. By default (no refresh) a key's age counts from its first
 * sighting within the window: a repeat found in an older generation is
 * not added again, so a key lives in exactly one generation (estimates
 * are a plain sum) and a key seen steadily passes once per window or so.
 * With WINDOW_REFRESH a repeat found only in an older generation is also
 * added to the newest, so a key passes again only after a whole window
 * without it.
 *
 * Order of probes: with no refresh, the older generations are tested
 * newest first on a shrinking subset (a key found stops there), then the
 * keys left are test-and-added into the newest; with refresh, the newest
 * is test-and-added first and only its new keys are tested against the
 * older ones. Either way an absent key costs one probe per live
 * generation: G cache misses where one filter costs one. Each call
 * batches its keys, so the misses of a batch overlap (filter.c); where
 * every generation is one blocked filter of the same size (count
 * windows), a key's block is at the same word in each, found once and
 * prefetched in all of them a chunk ahead (take_segment_blocks).
 *
 * Expected loss (window_track_loss, bfuniq -v). A fresh key, not within
 * the window, is lost when some live stage says present: with stage rates
 * r_s, at 1 - prod(1 - r_s). Stages that no longer change give r_s from
 * their bits; the newest gives the model's rate for its load, averaged
 * over the run of keys (account_loss). Against the losses measured on
 * 200,000 distinct keys (count windows of 2,000 to 1e5 at 1e-3 to 0.05,
 * refresh, G = 3, classic, a time window through a burst) it came within
 * 2 standard deviations, and within 2% on average over four keys.
 *
 * Related work. Age-Partitioned Bloom Filters (Shtul, Baquero & Almeida
 * 2020, arXiv 2001.03147) keep k + l slices of one filter, one probe per
 * slice, and shift one slice per generation: k + l accesses per absent
 * key (fewer: a lookup stops early) and a finer slack, at best-in-class
 * memory. The Time-limited Bloom Filter (Rodrigues et al., SAC 2023,
 * arXiv 2306.06742) stores a timestamp per cell, so it forgets exactly at
 * W, with no slack, at the cost of a timestamp (tens of bits) per cell
 * instead of a bit. Generations of blocked filters trade slack for speed:
 * one cache line per live generation and whole-filter sizing from the
 * existing sizing code.
 *
 * Deliberately absent: counting layouts (a generation is dropped whole,
 * keys are never removed) and any thread of its own.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "filter.h"
#include "layout.h"
#include "merge.h"
#include "sizing.h"
#include "window.h"

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

int window_params_check(const struct window_params *wp, const char **errstr)
{
	if (wp->kind != WINDOW_COUNT && wp->kind != WINDOW_TIME)
		return bad(errstr, "unknown window kind");
	if (wp->generations < WINDOW_GENERATIONS_MIN || wp->generations > WINDOW_GENERATIONS_MAX)
		return bad(errstr, "generations out of range 2..64");
	if (wp->flags & ~WINDOW_FLAGS_KNOWN)
		return bad(errstr, "unknown window flags");
	if (wp->size < 1 || (wp->kind == WINDOW_TIME && wp->size > WINDOW_SECONDS_MAX))
		return bad(errstr, "window size out of range");
	if (wp->kind == WINDOW_COUNT && wp->size > FILTER_M_MAX)
		return bad(errstr, "window size out of range");
	if (wp->expected < 1 || wp->expected > FILTER_M_MAX)
		return bad(errstr, "expected keys per window out of range");
	if (wp->kind == WINDOW_COUNT && wp->expected != wp->size)
		return bad(errstr, "a count window expects its own size");
	if (!(wp->target_p > 0.0 && wp->target_p < 1.0))
		return bad(errstr, "window rate not in (0, 1)");
	if (wp->clock > WINDOW_CLOCK_FIELD || (wp->kind == WINDOW_COUNT && wp->clock != 0))
		return bad(errstr, "unknown window clock");
	if ((wp->clock == WINDOW_CLOCK_FIELD) != (wp->time_field != 0))
		return bad(errstr, "a window's time field comes with a clock read from it");
	return 0;
}

void window_generation_plan(const struct window_params *wp, uint64_t *capacity, double *rate,
			    unsigned *growth, unsigned *tighten)
{
	uint64_t per = wp->generations - 1;

	*capacity = wp->expected / per + (wp->expected % per != 0);
	*rate = wp->target_p / wp->generations;
	*growth = wp->kind == WINDOW_TIME ? CASCADE_GROWTH_DEFAULT : 0;
	*tighten = wp->kind == WINDOW_TIME ? CASCADE_TIGHTEN_DEFAULT : 0;
}

uint64_t window_generation_of(const struct window_params *wp, uint64_t t)
{
	uint64_t per = wp->generations - 1;

	if (wp->kind == WINDOW_COUNT)
		return t / (wp->size / per + (wp->size % per != 0));
	/* t < 2^53, per < 2^6: the product fits; so does 1000 W < 2^50 */
	return t * per / (wp->size * 1000);
}

uint64_t window_generation_start(const struct window_params *wp, uint64_t no)
{
	uint64_t per = wp->generations - 1, len, num;

	if (wp->kind == WINDOW_COUNT) {
		len = wp->size / per + (wp->size % per != 0);
		return no > UINT64_MAX / len ? UINT64_MAX : no * len;
	}
	len = wp->size * 1000;	/* the start is ceil(no * len / per) */
	if (no > (UINT64_MAX - per) / len)
		return UINT64_MAX;
	num = no * len;
	return num / per + (num % per != 0);
}

static int needs_key(const struct filter_params *p)
{
	static const unsigned char none[16];

	return (p->flags & FILTER_KEY_EXTERNAL) && memcmp(p->key, none, sizeof none) == 0;
}

/* The smallest filter there is, kept only for its hash and key. */
int window_layout_allowed(enum filter_layout layout)
{
	/* saved in the bftools format, of bits: generations are ORed and aged out */
	return layout_has(layout, LAYOUT_SAVED) && !layout_has(layout, LAYOUT_COUNTERS);
}

static struct filter *new_hasher(const struct filter_params *shape, const char **errstr)
{
	struct filter_params p = *shape;

	p.layout = FILTER_BLOCKED;
	p.k = 1;
	p.m = FILTER_BLOCK_BITS;
	p.capacity = 1;
	p.target_p = 0.5;
	p.probe_bits = 0;
	return filter_new(&p, errstr);
}

static struct window *window_alloc(const struct window_params *wp,
				   const struct filter_params *shape, const char **errstr)
{
	struct window *w;

	if (window_params_check(wp, errstr) < 0)
		return NULL;
	if (!window_layout_allowed(shape->layout)) {
		*errstr = "a window's generations are blocked or classic filters";
		return NULL;
	}
	w = calloc(1, sizeof *w);
	if (w == NULL) {
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	w->wp = *wp;
	w->layout = shape->layout;
	w->hasher = new_hasher(shape, errstr);
	if (w->hasher == NULL) {
		free(w);
		return NULL;
	}
	return w;
}

struct window *window_new(const struct window_params *wp, const struct filter_params *shape,
			  const char **errstr)
{
	return window_alloc(wp, shape, errstr);
}

/* Generation i against the plan and the hasher: its stages' shapes. */
static int generation_fits(const struct window *w, const struct cascade *c, const char **errstr)
{
	const struct filter_params *h = &w->hasher->params;
	uint64_t capacity;
	double rate;
	unsigned growth, tighten;

	window_generation_plan(&w->wp, &capacity, &rate, &growth, &tighten);
	if (c->capacity != capacity || c->target_p != rate || c->growth != growth ||
	    c->tighten != tighten)
		return bad(errstr, "a generation does not follow the window's plan");
	for (size_t s = 0; s < c->nstages; s++) {
		const struct filter_params *p = &c->stages[s]->params;

		if (p->layout != w->layout)
			return bad(errstr, "generations disagree on layout");
		if (p->hash != h->hash || p->flags != h->flags || p->fingerprint != h->fingerprint)
			return bad(errstr, "generations disagree on hash, key or normalisation");
	}
	return 0;
}

/* The numbers strictly increasing, all live at clock. */
static int numbers_fit(const struct window_params *wp, uint64_t clock, const uint64_t *nos,
		       size_t n, const char **errstr)
{
	uint64_t current = window_generation_of(wp, clock);

	for (size_t i = 0; i < n; i++) {
		if (i > 0 && nos[i] <= nos[i - 1])
			return bad(errstr, "generation numbers not increasing");
		if (nos[i] > current || nos[i] + wp->generations <= current)
			return bad(errstr, "a generation is not live at the window's clock");
	}
	return 0;
}

struct window *window_from_generations(const struct window_params *wp, uint64_t clock,
				       struct cascade **gens, const uint64_t *nos, size_t n,
				       const struct filter_params *shape, const char **errstr)
{
	struct window *w;

	if (wp->kind == WINDOW_TIME && clock >= WINDOW_TIME_MAX)
		return bad(errstr, "window clock out of range"), NULL;
	if (window_params_check(wp, errstr) < 0 || numbers_fit(wp, clock, nos, n, errstr) < 0)
		return NULL;
	w = window_alloc(wp, shape, errstr);
	if (w == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (generation_fits(w, gens[i], errstr) < 0) {
			w->ngen = 0;	/* not ours until success */
			window_free(w);
			return NULL;
		}
		w->gen[i] = gens[i];
		w->gen_no[i] = nos[i];
	}
	w->ngen = n;
	w->clock = clock;
	return w;
}

void window_free(struct window *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->ngen; i++)
		cascade_free(w->gen[i]);
	filter_free(w->hasher);
	free(w->sub_keys);
	free(w->sub_hash);
	free(w->sub_index);
	free(w->sub_present);
	free(w);
}

const struct filter *window_hasher(const struct window *w)
{
	return needs_key(&w->hasher->params) ? NULL : w->hasher;
}

int window_needs_key(const struct window *w)
{
	return needs_key(&w->hasher->params);
}

int window_supply_key(struct window *w, const unsigned char key[16], const char **errstr)
{
	if (filter_supply_key(w->hasher, key, errstr) < 0)
		return -1;
	for (size_t i = 0; i < w->ngen; i++)
		if (cascade_supply_key(w->gen[i], key, errstr) < 0)
			return -1;
	return 0;
}

const struct filter_params *window_params_of(const struct window *w)
{
	return &w->hasher->params;
}

size_t window_live_from(const struct window *w, uint64_t now)
{
	uint64_t current;
	size_t i = 0;

	if (w->wp.kind == WINDOW_COUNT)
		return 0;
	current = window_generation_of(&w->wp, now > w->clock ? now : w->clock);
	while (i < w->ngen && w->gen_no[i] + w->wp.generations <= current)
		i++;
	return i;
}

uint64_t window_read_time(const struct window *w, uint64_t wall_ms)
{
	if (w->wp.kind != WINDOW_TIME || w->wp.clock == WINDOW_CLOCK_FIELD)
		return w->clock;
	return wall_ms;
}

const char *window_clock_words(const struct window_params *wp, char buf[64])
{
	if (wp->kind == WINDOW_COUNT)
		snprintf(buf, 64, "the keys offered");
	else if (wp->clock == WINDOW_CLOCK_FIELD)
		snprintf(buf, 64, "time field %lu", (unsigned long)wp->time_field);
	else
		snprintf(buf, 64, "the wall clock%s",
			 wp->clock == WINDOW_CLOCK_UNRECORDED ? " (not recorded: a file from before)" : "");
	return buf;
}

/* An empty generation by the window's plan. */
static struct cascade *new_generation(struct window *w, const char **errstr)
{
	struct filter_params p = w->hasher->params;
	unsigned growth, tighten;

	p.layout = w->layout;
	window_generation_plan(&w->wp, &p.capacity, &p.target_p, &growth, &tighten);
	if (growth != 0)
		return cascade_new_growing(&p, p.target_p, growth, tighten, errstr);
	/* sizing takes microseconds (lgamma, exp): once per window, not per generation */
	if (w->gen_m == 0 && sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, errstr) < 0)
		return NULL;
	if (w->gen_m == 0) {
		w->gen_m = p.m;
		w->gen_k = p.k;
	}
	p.m = w->gen_m;
	p.k = w->gen_k;
	return cascade_new_fixed(&p, errstr);
}

void window_count_new_only(struct window *w)
{
	w->count_new_only = 1;
	for (size_t g = 0; g < w->ngen; g++)
		w->gen[g]->count_new_only = 1;
}

/* Free the generations that are no longer live when number no is the present. */
static void drop_before(struct window *w, uint64_t no)
{
	size_t drop = 0;

	while (drop < w->ngen && w->gen_no[drop] + w->wp.generations <= no)
		cascade_free(w->gen[drop++]);
	memmove(w->gen, w->gen + drop, (w->ngen - drop) * sizeof *w->gen);
	memmove(w->gen_no, w->gen_no + drop, (w->ngen - drop) * sizeof *w->gen_no);
	w->ngen -= drop;
}

/* Make generation number no the newest: drop those it pushes out, add it. */
static int advance(struct window *w, uint64_t no, const char **errstr)
{
	struct cascade *c;

	if (w->ngen > 0 && w->gen_no[w->ngen - 1] == no)
		return 0;
	drop_before(w, no);
	c = new_generation(w, errstr);
	if (c == NULL)
		return -1;
	c->count_new_only = w->count_new_only;
	w->gen[w->ngen] = c;
	w->gen_no[w->ngen++] = no;
	return 0;
}

static int scratch(struct window *w, size_t n, const char **errstr)
{
	size_t cap = w->sub_cap;
	void *k, *h, *x, *p;

	if (n <= cap)
		return 0;
	while (cap < n)
		cap = cap ? 2 * cap : 8192;
	k = realloc(w->sub_keys, cap * sizeof *w->sub_keys);
	if (k != NULL)
		w->sub_keys = k;
	h = realloc(w->sub_hash, 2 * cap * sizeof *w->sub_hash);
	if (h != NULL)
		w->sub_hash = h;
	x = realloc(w->sub_index, cap * sizeof *w->sub_index);
	if (x != NULL)
		w->sub_index = x;
	p = realloc(w->sub_present, cap);
	if (p != NULL)
		w->sub_present = p;
	if (k == NULL || h == NULL || x == NULL || p == NULL)
		return bad(errstr, strerror(ENOMEM));
	w->sub_cap = cap;
	return 0;
}

/* Gather the keys (and hashes) named by sub_index[0..m) into the scratch arrays. */
static void gather(struct window *w, const struct line *keys, const uint64_t *h, size_t m)
{
	for (size_t j = 0; j < m; j++) {
		size_t i = w->sub_index[j];

		w->sub_keys[j] = keys[i];
		if (h != NULL) {
			w->sub_hash[2 * j] = h[2 * i];
			w->sub_hash[2 * j + 1] = h[2 * i + 1];
		}
	}
}

/*
 * Test the m keys of sub_index against generations [from, to), newest
 * first; mark those found present and keep the rest. Returns how many
 * are left.
 */
static size_t test_older(struct window *w, const struct line *keys, const uint64_t *h,
			 size_t m, size_t from, size_t to, unsigned char *present)
{
	for (size_t g = to; g-- > from && m > 0;) {
		size_t left = 0;

		gather(w, keys, h, m);
		cascade_test_hashed(w->gen[g], w->sub_keys, h ? w->sub_hash : NULL, m,
				    w->sub_present);
		for (size_t j = 0; j < m; j++) {
			if (w->sub_present[j])
				present[w->sub_index[j]] = 1;
			else
				w->sub_index[left++] = w->sub_index[j];
		}
		m = left;
	}
	return m;
}

/* Keys [a, b), all of the newest generation's time: test, and add the new ones. */
static int take_segment(struct window *w, const struct line *keys, const uint64_t *h, size_t a,
			size_t b, unsigned char *present, size_t *fresh, const char **errstr)
{
	struct cascade *newest = w->gen[w->ngen - 1];
	size_t m = 0, added;

	if (w->wp.flags & WINDOW_REFRESH) {
		if (cascade_test_and_add_hashed(newest, keys + a, h ? h + 2 * a : NULL, b - a,
						present + a, &added, errstr) < 0)
			return -1;
		for (size_t i = a; i < b; i++)
			if (!present[i])
				w->sub_index[m++] = i;
		*fresh += test_older(w, keys, h, m, 0, w->ngen - 1, present);
		return 0;
	}
	for (size_t i = a; i < b; i++) {
		present[i] = 0;
		w->sub_index[m++] = i;
	}
	m = test_older(w, keys, h, m, 0, w->ngen - 1, present);
	gather(w, keys, h, m);
	if (cascade_test_and_add_hashed(newest, w->sub_keys, h ? w->sub_hash : NULL, m,
					w->sub_present, &added, errstr) < 0)
		return -1;
	for (size_t j = 0; j < m; j++)
		present[w->sub_index[j]] = w->sub_present[j];
	*fresh += added;
	return 0;
}

/*
 * The fast path, for windows whose live generations are all one blocked
 * stage of the same m and k with the newest fixed (every count window
 * with the blocked layout): a key's block is then at the same word in
 * every generation, found once from its one hash. The keys go through in
 * chunks; before a chunk is probed, the next one's blocks are prefetched
 * in every generation, so a new key's G misses overlap with each other
 * and with the work on the chunk before, instead of each generation's
 * batch waiting for its own. Answers, bits and counts are those of
 * take_segment, probe for probe.
 *
 * Measured (bfuniq --window 1e7 -p 1e-4, 10M lines, AMD EPYC, user
 * time): a fifth less than take_segment. Chunks of 16 keys prefetched
 * into L2 (locality 1) did best; 32 or more, or prefetches to L1, queue
 * more misses than the core keeps in flight and stall the prefetching.
 */
#define CHUNK 16

static int blocks_enabled = 1;

void window_blocks_enable(int on)
{
	blocks_enabled = on;
}

static int blocks_align(const struct window *w)
{
	const struct filter *newest = w->gen[w->ngen - 1]->stages[0];

	if (!blocks_enabled || !layout_has(w->layout, LAYOUT_ONE_BLOCK) || w->gen[w->ngen - 1]->growth != 0)
		return 0;
	for (size_t g = 0; g < w->ngen; g++) {
		const struct filter *f = w->gen[g]->stages[0];

		if (w->gen[g]->nstages != 1 || f->params.m != newest->params.m ||
		    f->params.k != newest->params.k)
			return 0;
	}
	return 1;
}

/* Find the blocks of keys h[0..n) and prefetch them in every generation. */
static void ready_chunk(const struct window *w, const uint64_t *h, size_t n, uint64_t *base)
{
	const uint64_t *words = w->gen[w->ngen - 1]->stages[0]->words;

	filter_blocks_of(w->gen[w->ngen - 1]->stages[0], h, n, base);
	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(words + base[i], 1, 1);
	for (size_t g = w->ngen - 1; g-- > 0;) {
		words = w->gen[g]->stages[0]->words;
		for (size_t i = 0; i < n; i++)
			__builtin_prefetch(words + base[i], 0, 1);
	}
}

/* A chunk's keys still in question: their places in it, blocks and hashes. */
struct undecided {
	size_t n;
	size_t at[CHUNK];
	uint64_t base[CHUNK];
	uint64_t h[2 * CHUNK];
};

static void undecided_put(struct undecided *u, size_t i, uint64_t base, const uint64_t *h)
{
	u->at[u->n] = i;
	u->base[u->n] = base;
	u->h[2 * u->n] = h[2 * i];
	u->h[2 * u->n + 1] = h[2 * i + 1];
	u->n++;
}

/* The older generations, newest first, on the keys of u: found ones are present and leave u. */
static void blocks_older(const struct window *w, struct undecided *u, unsigned char *present)
{
	for (size_t g = w->ngen - 1; g-- > 0 && u->n > 0;) {
		/*
		 * found is a local of its own, not a member of u: clang's analyser
		 * keeps the contents of a struct whose members also go in as const
		 * pointers, and then took found for never written.
		 */
		unsigned char found[CHUNK];
		size_t left = 0;

		filter_blocks_test(w->gen[g]->stages[0], u->base, u->h, u->n, found);
		/* keep the keys not found, in place: left <= j throughout */
		for (size_t j = 0; j < u->n; j++) {
			if (found[j]) {
				present[u->at[j]] = 1;
				continue;
			}
			u->at[left] = u->at[j];
			u->base[left] = u->base[j];
			u->h[2 * left] = u->h[2 * j];
			u->h[2 * left + 1] = u->h[2 * j + 1];
			left++;
		}
		u->n = left;
	}
}

/*
 * One chunk of n keys, blocks ready: as take_segment, with what it did to
 * the newest generation's counts added to *counts, not to the counts
 * themselves (window_region_chunk runs beside other regions).
 */
static void blocks_chunk_counted(const struct window *w, const uint64_t *base, const uint64_t *h,
				 size_t n, unsigned char *present, struct window_counts *counts)
{
	struct filter *newest = w->gen[w->ngen - 1]->stages[0];
	struct undecided u;
	unsigned char found[CHUNK];	/* not in u: see blocks_older */
	size_t added;

	u.n = 0;
	if (w->wp.flags & WINDOW_REFRESH) {
		added = filter_blocks_test_and_set(newest, base, h, n, present);
		for (size_t i = 0; i < n; i++)
			if (!present[i])
				undecided_put(&u, i, base[i], h);
		blocks_older(w, &u, present);
		counts->offered += n;
		counts->added += added;
		counts->fresh += u.n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		present[i] = 0;
		undecided_put(&u, i, base[i], h);
	}
	blocks_older(w, &u, present);
	added = filter_blocks_test_and_set(newest, u.base, u.h, u.n, found);
	for (size_t j = 0; j < u.n; j++)
		present[u.at[j]] = found[j];
	counts->offered += u.n;
	counts->added += added;
	counts->fresh += added;
}

/* What a run of chunks did, into the newest generation's counts: as filter_blocks_test_and_add. */
static void count_into_newest(struct window *w, const struct window_counts *counts)
{
	struct cascade *newest = w->gen[w->ngen - 1];

	newest->stages[0]->insertions += newest->count_new_only ? counts->added : counts->offered;
	newest->newest_keys += counts->added;
}

/* One chunk of n keys, blocks ready: as take_segment. Returns how many were new. */
static size_t blocks_chunk(struct window *w, const uint64_t *base, const uint64_t *h, size_t n,
			   unsigned char *present)
{
	struct window_counts counts = { 0, 0, 0 };

	blocks_chunk_counted(w, base, h, n, present, &counts);
	count_into_newest(w, &counts);
	return counts.fresh;
}

/* Keys [a, b) as take_segment does, through the fast path; h may be NULL. */
static int take_segment_blocks(struct window *w, const struct line *keys, const uint64_t *h,
			       size_t a, size_t b, unsigned char *present, size_t *fresh)
{
	uint64_t base[2][CHUNK];
	size_t n = b - a, len = n < CHUNK ? n : CHUNK;

	if (h != NULL)
		h += 2 * a;
	else if (filter_hash(w->hasher, keys + a, n, w->sub_hash) == 0)
		h = w->sub_hash;
	else
		return -1;
	present += a;
	ready_chunk(w, h, len, base[0]);
	for (size_t c = 0, t = 0; c < n; c += CHUNK, t ^= 1) {
		size_t next = c + CHUNK;

		len = n - c < CHUNK ? n - c : CHUNK;
		if (next < n)
			ready_chunk(w, h + 2 * next, n - next < CHUNK ? n - next : CHUNK, base[t ^ 1]);
		*fresh += blocks_chunk(w, base[t], h + 2 * c, len, present + c);
	}
	return 0;
}

/* The time of key i: the clock when it is earlier (or a count window's position). */
static uint64_t key_time(const struct window *w, const uint64_t *times, uint64_t now, size_t i)
{
	uint64_t t = times != NULL ? times[i] : now;

	if (w->wp.kind == WINDOW_COUNT || t < w->clock)
		return w->clock;
	return t >= WINDOW_TIME_MAX ? WINDOW_TIME_MAX - 1 : t;
}

/* The end of the run of keys from a that share key a's generation no; moves the clock. */
static size_t segment_end(struct window *w, const uint64_t *times, uint64_t now, size_t a,
			  size_t n, uint64_t no)
{
	size_t b = a;

	if (w->wp.kind == WINDOW_COUNT) {
		uint64_t left = window_generation_start(&w->wp, no + 1) - w->clock;

		b = n - a < left ? n : a + (size_t)left;
		w->clock += b - a;
		return b;
	}
	while (b < n && (times == NULL || times[b] != WINDOW_TIME_NONE)) {
		uint64_t t = key_time(w, times, now, b);

		if (window_generation_of(&w->wp, t) != no)
			break;
		w->clock = t;
		b++;
	}
	return b;
}

static void account_loss(struct window *w, size_t fresh);

/*
 * Whether n keys of time `now` (no per-key times) all fall in the newest
 * generation as it stands, with the fast path's shapes (blocks_align):
 * then window_region_chunk can take them in any split by block. When so,
 * the clock moves past them here, as window_test_and_add_hashed would
 * move it, so the next batch is judged where this one ends. A count
 * window must keep room after them: a batch that ends on a generation's
 * boundary goes the whole way, which drops the oldest.
 */
int window_regions_take(struct window *w, size_t n, uint64_t now)
{
	uint64_t no, t;

	if (w->ngen == 0 || window_needs_key(w) || !blocks_align(w) || n == 0)
		return 0;
	t = key_time(w, NULL, now, 0);
	no = window_generation_of(&w->wp, t);
	if (no != w->gen_no[w->ngen - 1])
		return 0;
	if (w->wp.kind == WINDOW_COUNT) {
		if ((uint64_t)n >= window_generation_start(&w->wp, no + 1) - w->clock)
			return 0;
		w->clock += n;
		return 1;
	}
	w->clock = t;
	return 1;
}

void window_region_chunk(const struct window *w, const uint64_t *base, const uint64_t *h,
			 size_t n, unsigned char *present, struct window_counts *counts)
{
	uint64_t ready[CHUNK];

	for (size_t c = 0; c < n; c += CHUNK) {
		size_t len = n - c < CHUNK ? n - c : CHUNK;

		ready_chunk(w, h + 2 * c, len, ready);
		blocks_chunk_counted(w, base + c, h + 2 * c, len, present + c, counts);
	}
}

size_t window_regions_done(struct window *w, const struct window_counts *counts)
{
	count_into_newest(w, counts);
	if (w->track_loss)
		account_loss(w, counts->fresh);
	return counts->fresh;
}

void window_track_loss(struct window *w)
{
	w->track_loss = 1;
}

/*
 * The chance that a fresh key passes every stage but the newest: they no
 * longer change, so it is read off their bits once each time the
 * generations or the newest generation's stages change. A new newest
 * stage starts its own count of losses.
 */
static void read_older(struct window *w)
{
	const struct cascade *newest = w->gen[w->ngen - 1];
	double miss = 1.0;

	if (w->model_read && w->model_oldest == w->gen_no[0] &&
	    w->model_newest == w->gen_no[w->ngen - 1] && w->model_stages == newest->nstages)
		return;
	if (!w->model_read || w->model_newest != w->gen_no[w->ngen - 1] ||
	    w->model_stages != newest->nstages)
		w->lost_before_newest = w->expected_lost;
	for (size_t g = 0; g < w->ngen; g++)
		for (size_t s = 0; s < w->gen[g]->nstages; s++)
			if (g + 1 < w->ngen || s + 1 < newest->nstages)
				miss *= 1.0 - filter_current_fpr(w->gen[g]->stages[s]);
	w->older_miss = miss;
	w->model_oldest = w->gen_no[0];
	w->model_newest = w->gen_no[w->ngen - 1];
	w->model_stages = newest->nstages;
	w->model_read = 1;
}

/*
 * The newest stage's model rate averaged over a run of fresh keys that
 * took its load from x0 to x0 + fresh: the mean of the rates at the
 * middles of 8 equal pieces. The rate grows as about the k-th power of
 * the load, and a batch may fill a small window's generation from empty
 * to full: taken at the run's middle alone, the rate of such a run is
 * 2^k / (k + 1) times too low (about 50 for k = 9), and 8 pieces bring
 * that to under 2% of the newest stage's share.
 */
#define LOSS_PIECES 8

static double newest_rate(const struct filter *f, double x0, size_t fresh)
{
	size_t pieces = fresh < LOSS_PIECES ? fresh : LOSS_PIECES;
	double sum = 0.0;

	for (size_t i = 0; i < pieces; i++) {
		double x = x0 + (double)fresh * ((double)i + 0.5) / (double)pieces;

		sum += sizing_fpr(f->params.layout, x > 0.0 ? (uint64_t)llround(x) : 0, f->params.m,
				  f->params.k);
	}
	return pieces > 0 ? sum / (double)pieces : 0.0;
}

/*
 * fresh keys of one generation's run were not within the window: each ran
 * the risk of testing present, 1 - older_miss (1 - r) with r the newest
 * stage's rate as it fills during the run (linear in r: the mean rate
 * gives the mean risk). The newest stage was offered the keys it took
 * and, about, those lost since it began; counting those lost to older
 * generations too overstates its load by at most P of it.
 */
static void account_loss(struct window *w, size_t fresh)
{
	const struct cascade *c = w->gen[w->ngen - 1];
	double x0, rate;

	read_older(w);
	x0 = (double)c->newest_keys - (double)fresh + (w->expected_lost - w->lost_before_newest);
	rate = newest_rate(c->stages[c->nstages - 1], x0, fresh);
	w->expected_lost += (double)fresh * (1.0 - w->older_miss * (1.0 - rate));
}

int window_test_and_add_hashed(struct window *w, const struct line *keys, const uint64_t *h,
			       size_t n, const uint64_t *times, uint64_t now,
			       unsigned char *present, size_t *fresh, const char **errstr)
{
	size_t a = 0, total = 0;

	if (fresh != NULL)
		*fresh = 0;
	if (window_needs_key(w))
		return bad(errstr, cascade_err_no_key);
	if (scratch(w, n, errstr) < 0)
		return -1;
	while (a < n) {
		uint64_t no;
		size_t b, before = total;

		if (times != NULL && times[a] == WINDOW_TIME_NONE && w->wp.kind == WINDOW_TIME) {
			present[a++] = 0;
			continue;
		}
		no = window_generation_of(&w->wp, key_time(w, times, now, a));
		if (advance(w, no, errstr) < 0)
			return -1;
		b = segment_end(w, times, now, a, n, no);
		if (!blocks_align(w) || take_segment_blocks(w, keys, h, a, b, present, &total) < 0) {
			if (take_segment(w, keys, h, a, b, present, &total, errstr) < 0)
				return -1;
		}
		if (w->track_loss)
			account_loss(w, total - before);
		a = b;
	}
	/*
	 * A count window's clock is the next key's place: a batch that ends on
	 * a generation's boundary has moved the present into a generation not
	 * yet made, and the oldest may have fallen out at it. Drop it now, so
	 * the window (and its file) holds only what is live at the clock.
	 */
	drop_before(w, window_generation_of(&w->wp, w->clock));
	if (fresh != NULL)
		*fresh = total;
	return 0;
}

int window_test_hashed(const struct window *w, const struct line *keys, const uint64_t *h,
		       size_t n, uint64_t now, unsigned char *present)
{
	unsigned char more[4096];
	size_t from = window_live_from(w, now);

	if (window_needs_key(w))
		return -1;
	memset(present, 0, n);
	for (size_t g = w->ngen; g-- > from;) {
		for (size_t done = 0; done < n; done += sizeof more) {
			size_t len = n - done < sizeof more ? n - done : sizeof more;

			cascade_test_hashed(w->gen[g], keys + done, h ? h + 2 * done : NULL, len,
					    more);
			for (size_t i = 0; i < len; i++)
				present[done + i] |= more[i];
		}
	}
	return 0;
}

double window_estimate_count(const struct window *w, uint64_t now)
{
	double total = 0.0;

	for (size_t g = window_live_from(w, now); g < w->ngen; g++)
		total += cascade_estimate_count(w->gen[g]);
	return total;
}

double window_stats_estimate(const struct window *w, uint64_t now, const struct filter_stats *stats)
{
	size_t live = window_live_from(w, now);
	double total = 0.0;

	for (size_t g = 0; g < w->ngen; stats += w->gen[g]->nstages, g++)
		if (g >= live)
			total += cascade_stats_estimate(w->gen[g], stats);
	return total;
}

uint64_t window_bytes(const struct window *w)
{
	uint64_t total = 0;

	for (size_t g = 0; g < w->ngen; g++)
		total += cascade_bytes(w->gen[g]);
	return total;
}

size_t window_stages(const struct window *w)
{
	size_t total = 0;

	for (size_t g = 0; g < w->ngen; g++)
		total += w->gen[g]->nstages;
	return total;
}

/* Whether b's window is a's: same plan, layout, hash, key and normalisation. */
static int same_window(const struct window *a, const struct window *b, const char **errstr)
{
	const struct filter_params *p = &a->hasher->params, *q = &b->hasher->params;

	if (a->wp.kind != b->wp.kind || a->wp.size != b->wp.size)
		return bad(errstr, "window size");
	if (a->wp.generations != b->wp.generations)
		return bad(errstr, "generations");
	if (a->wp.flags != b->wp.flags)
		return bad(errstr, "refresh");
	if (a->wp.clock != 0 && b->wp.clock != 0 &&
	    (a->wp.clock != b->wp.clock || a->wp.time_field != b->wp.time_field))
		return bad(errstr, "clock");
	if (a->wp.expected != b->wp.expected || a->wp.target_p != b->wp.target_p ||
	    a->layout != b->layout)
		return bad(errstr, "size");
	if (p->hash != q->hash)
		return bad(errstr, "hash function");
	if (p->fingerprint != q->fingerprint)
		return bad(errstr, "key");
	if (p->flags != q->flags)
		return bad(errstr, "normalisation");
	return 0;
}

/* Index of generation number no in w, or w->ngen. */
static size_t find_generation(const struct window *w, uint64_t no)
{
	size_t i = 0;

	while (i < w->ngen && w->gen_no[i] != no)
		i++;
	return i;
}

/* A copy of c: an empty one of its shape with c OR-ed in. */
static struct cascade *copy_generation(const struct cascade *c, const char **errstr)
{
	struct cascade *copy = cascade_new_like(c, errstr);

	if (copy != NULL && merge_into(copy, c, MERGE_OR, errstr) < 0) {
		cascade_free(copy);
		return NULL;
	}
	return copy;
}

/* Generation number no of the merge: a's, OR-ed with b's where both have it. */
static int merge_one(struct window *a, const struct window *b, uint64_t no,
		     struct cascade **out, const char **errstr)
{
	size_t i = find_generation(a, no), j = find_generation(b, no);

	if (i == a->ngen) {
		*out = copy_generation(b->gen[j], errstr);
		return *out == NULL ? -1 : 0;
	}
	*out = a->gen[i];
	return j == b->ngen ? 0 : merge_into(a->gen[i], b->gen[j], MERGE_OR, errstr);
}

int window_merge(struct window *a, const struct window *b, const char **errstr)
{
	struct cascade *gens[WINDOW_GENERATIONS_MAX];
	uint64_t nos[2 * WINDOW_GENERATIONS_MAX], clock = a->clock > b->clock ? a->clock : b->clock;
	uint64_t current = window_generation_of(&a->wp, clock);
	size_t n = 0;

	if (same_window(a, b, errstr) < 0)
		return -1;
	for (size_t j = 0; j < b->ngen; j++) {
		size_t i = find_generation(a, b->gen_no[j]);

		if (i < a->ngen && !cascade_compatible(a->gen[i], b->gen[j], errstr))
			return -1;
	}
	/* the union of the numbers still live at the later clock, in order */
	for (size_t i = 0, j = 0; i < a->ngen || j < b->ngen;) {
		uint64_t x = i < a->ngen ? a->gen_no[i] : UINT64_MAX;
		uint64_t y = j < b->ngen ? b->gen_no[j] : UINT64_MAX;
		uint64_t no = x < y ? x : y;

		i += x == no;
		j += y == no;
		if (no + a->wp.generations > current)
			nos[n++] = no;
	}
	for (size_t g = 0; g < n; g++)
		if (merge_one(a, b, nos[g], &gens[g], errstr) < 0)
			return -1;	/* a holds what was merged so far: discard it */
	for (size_t i = 0; i < a->ngen; i++)	/* a's generations too old to keep */
		if (a->gen_no[i] + a->wp.generations <= current)
			cascade_free(a->gen[i]);
	memcpy(a->gen, gens, n * sizeof *gens);
	memcpy(a->gen_no, nos, n * sizeof *nos);
	a->ngen = n;
	a->clock = clock;
	if (a->wp.clock == WINDOW_CLOCK_UNRECORDED) {
		a->wp.clock = b->wp.clock;
		a->wp.time_field = b->wp.time_field;
	}
	return 0;
}
