/* SPDX-License-Identifier: MIT */
/*
 * topk_window.c - heavy-hitter summaries over a sliding window: one
 * summary per generation, numbered as window.c numbers its filters
 * (window_generation_of), so the slack is the same: a key counted at t
 * stays while the window covers t, and is gone G / (G - 1) windows later.
 *
 * A time window takes times out of order within the live generations: a
 * key whose generation is live but not the newest goes into that one
 * (made when missing); one older than every live generation is dropped
 * and counted in too_old. The clock only moves forward.
 */
#include "topk_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

struct topk_window *topk_window_new(const struct window_params *wp, const struct topk *model,
				    const char **errstr)
{
	struct topk_window *w;

	if (window_params_check(wp, errstr) < 0)
		return NULL;
	w = calloc(1, sizeof *w);
	if (w == NULL) {
		bad(errstr, strerror(ENOMEM));
		return NULL;
	}
	w->wp = *wp;
	w->model = model;
	return w;
}

void topk_window_free(struct topk_window *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->ngen; i++)
		topk_free(w->gen[i]);
	free(w);
}

/* The first generation number live when the present is number current. */
static uint64_t first_live(const struct topk_window *w, uint64_t current)
{
	return current + 1 >= w->wp.generations ? current + 1 - w->wp.generations : 0;
}

/* Drop the generations older than first. */
static void drop_before(struct topk_window *w, uint64_t first)
{
	size_t dead = 0;

	while (dead < w->ngen && w->gen_no[dead] < first)
		topk_free(w->gen[dead++]);
	memmove(w->gen, w->gen + dead, (w->ngen - dead) * sizeof *w->gen);
	memmove(w->gen_no, w->gen_no + dead, (w->ngen - dead) * sizeof *w->gen_no);
	w->ngen -= dead;
}

/* The summary of generation no (live), made in its place when missing; NULL when out of memory. */
static struct topk *generation(struct topk_window *w, uint64_t no, const char **errstr)
{
	size_t at = w->ngen;
	struct topk *t;

	if (at > 0 && w->gen_no[at - 1] == no)
		return w->gen[at - 1];	/* the usual case: the newest */
	while (at > 0 && w->gen_no[at - 1] > no)
		at--;
	if (at > 0 && w->gen_no[at - 1] == no)
		return w->gen[at - 1];
	t = topk_new_like(w->model, errstr);
	if (t == NULL)
		return NULL;
	memmove(w->gen + at + 1, w->gen + at, (w->ngen - at) * sizeof *w->gen);
	memmove(w->gen_no + at + 1, w->gen_no + at, (w->ngen - at) * sizeof *w->gen_no);
	w->gen[at] = t;
	w->gen_no[at] = no;
	w->ngen++;
	return t;
}

/* Count one key at time t (a count window: the key's index). */
static int add_one(struct topk_window *w, const struct line *key, const uint64_t hash[2],
		   uint64_t t, const char **errstr)
{
	uint64_t no = window_generation_of(&w->wp, t), current, first;
	struct topk *g;

	if (t > w->clock || w->wp.kind == WINDOW_COUNT)
		w->clock = w->wp.kind == WINDOW_COUNT ? t + 1 : t;
	current = window_generation_of(&w->wp, w->wp.kind == WINDOW_COUNT ? t : w->clock);
	first = first_live(w, current);
	if (no < first) {
		w->too_old++;
		return 0;
	}
	drop_before(w, first);
	g = generation(w, no, errstr);
	if (g == NULL)
		return -1;
	topk_add_hashed(g, key, hash, 1);
	return 0;
}

int topk_window_add(struct topk_window *w, const struct line *keys, const uint64_t *hashes,
		    const uint64_t *times, size_t n, const char **errstr)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t = w->wp.kind == WINDOW_COUNT ? w->clock : times[i];

		if (t == WINDOW_TIME_NONE)
			continue;
		if (add_one(w, &keys[i], hashes + 2 * i, t, errstr) < 0)
			return -1;
	}
	return 0;
}

struct topk *topk_window_summary(const struct topk_window *w, uint64_t now, const char **errstr)
{
	uint64_t at = w->wp.kind == WINDOW_COUNT ? (now > 0 ? now - 1 : 0) : now;
	uint64_t first = first_live(w, window_generation_of(&w->wp, at));
	const struct topk *live[WINDOW_GENERATIONS_MAX];
	struct topk *t = topk_new_like(w->model, errstr);
	size_t n = 0;

	if (t == NULL)
		return NULL;
	for (size_t i = 0; i < w->ngen; i++)
		if (w->gen_no[i] >= first)
			live[n++] = w->gen[i];
	if (n > 0 && topk_merge_many(t, live, n, errstr) < 0) {
		topk_free(t);
		return NULL;
	}
	return t;
}
