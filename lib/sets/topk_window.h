/* SPDX-License-Identifier: MIT */
/*
 * topk_window.h - the most frequent keys of the last N keys or W seconds
 * (bftop --window): a ring of heavy-hitter summaries (topk.h), one per
 * generation of the window's plan (window.h: the same generation numbers,
 * the same slack), merged in one pass when asked.
 *
 * A key is counted in the summary of its generation; a generation that
 * falls out of the window is dropped whole. The summary of the window is
 * topk_merge_many of the live generations, so every interval it gives
 * holds for the keys of the live generations, which cover at least the
 * last N keys (W seconds) and at most G / (G - 1) times that, and every
 * key that occurred more than 2 N' / C times in them is kept (N' the keys
 * they hold). Memory: up to G summaries, and one more while merging.
 *
 * Keys go in in order on one thread, as for topk_add_hashed. No I/O: a
 * windowed summary is not saved.
 */
#ifndef BFTOOLS_TOPK_WINDOW_H
#define BFTOOLS_TOPK_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "line.h"
#include "topk.h"
#include "window.h"

#ifdef __cplusplus
extern "C" {
#endif

struct topk_window {
	struct window_params wp;	/* kind, size and generations are used */
	const struct topk *model;	/* parameters, hash and key of every generation */
	struct topk *gen[WINDOW_GENERATIONS_MAX];	/* oldest first */
	uint64_t gen_no[WINDOW_GENERATIONS_MAX];	/* strictly increasing */
	size_t ngen;
	uint64_t clock;		/* COUNT: keys offered; TIME: the latest time seen (ms) */
	uint64_t too_old;	/* keys whose time was before the window: not counted */
};

/* An empty ring; model is borrowed and must outlive it. NULL with *errstr. */
struct topk_window *topk_window_new(const struct window_params *wp, const struct topk *model,
				    const char **errstr);
void topk_window_free(struct topk_window *w);

/*
 * Count keys[0..n) (hashes as topk_hash made them) in order; for a time
 * window times[i] is key i's time in ms (WINDOW_TIME_NONE: not counted),
 * for a count window times is NULL. 0, or -1 with *errstr (no memory).
 */
int topk_window_add(struct topk_window *w, const struct line *keys, const uint64_t *hashes,
		    const uint64_t *times, size_t n, const char **errstr);

/*
 * A new summary of the generations live at clock value now (w->clock for
 * a count window): their merge. NULL with *errstr.
 */
struct topk *topk_window_summary(const struct topk_window *w, uint64_t now, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
