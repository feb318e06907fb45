/* SPDX-License-Identifier: MIT */
/*
 * window.h - a sliding-window Bloom filter: "seen within the last N keys"
 * or "seen within the last W seconds", in memory bounded by the window.
 *
 * A window is a ring of G generations (window.c draws the design, the
 * formulas and the slack). Each generation is a cascade (cascade.h); all
 * share hash, key and normalisation, so a key is hashed once for all of
 * them. A key is present when a live generation has it; new keys go to the
 * newest; when the clock moves into a new generation number, the oldest
 * generations fall out of the ring.
 *
 * Times are Unix milliseconds (uint64_t, below WINDOW_TIME_MAX). The
 * library never prints or exits: failures return NULL/-1 with a static
 * message in *errstr.
 */
#ifndef BFTOOLS_WINDOW_H
#define BFTOOLS_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "cascade.h"
#include "filter.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

enum window_kind {
	WINDOW_COUNT = 1,	/* the last N keys offered */
	WINDOW_TIME = 2,	/* the last W seconds */
};

#define WINDOW_GENERATIONS_DEFAULT 8u
#define WINDOW_GENERATIONS_MIN 2u
#define WINDOW_GENERATIONS_MAX 64u
/* A repeat found only in an older generation is added to the newest. */
#define WINDOW_REFRESH 0x1u
#define WINDOW_FLAGS_KNOWN WINDOW_REFRESH
/* Stages over all generations that a window (and its file) may hold. */
#define WINDOW_STAGES_MAX 256u
/* Times from 0 to just under 2^53 ms (year 287396): products stay in 64 bits. */
#define WINDOW_TIME_MAX (UINT64_C(1) << 53)
/* A key with this time is left alone: neither tested nor added. */
#define WINDOW_TIME_NONE UINT64_MAX
/* Seconds in a time window, at most 2^40 (some 34,000 years). */
#define WINDOW_SECONDS_MAX (UINT64_C(1) << 40)

/*
 * What a time window's clock reads, recorded in its file so that every
 * run that adds to it, and every program that reads it, keeps one time:
 * each key's time from a field of its line (the clock is then the
 * latest time seen), or the wall clock (--now stands in for it). A count
 * window has none; a file saved before it was recorded says
 * UNRECORDED, read as the wall clock, and takes the clock of the next
 * run that adds to it.
 */
enum window_clock {
	WINDOW_CLOCK_UNRECORDED = 0,
	WINDOW_CLOCK_WALL = 1,
	WINDOW_CLOCK_FIELD = 2,
};

/* What defines a window; recorded in its file. */
struct window_params {
	enum window_kind kind;
	uint64_t size;		/* COUNT: N keys; TIME: W seconds */
	unsigned generations;	/* G, 2..64 */
	uint32_t flags;		/* WINDOW_REFRESH */
	/*
	 * Keys expected within one window: COUNT: N (each generation is sized
	 * for N / (G - 1)); TIME: n, so each generation's first stage takes
	 * n / (G - 1) keys before it grows.
	 */
	uint64_t expected;
	double target_p;	/* the rate promised for the whole window, P */
	enum window_clock clock;	/* TIME: what its clock reads; COUNT: UNRECORDED */
	uint32_t time_field;	/* WINDOW_CLOCK_FIELD: the field, from 1; else 0 */
};

struct window {
	struct window_params wp;
	enum filter_layout layout;	/* of every generation: blocked or classic */
	uint64_t clock;		/* COUNT: keys offered so far; TIME: latest time seen (ms) */
	struct cascade *gen[WINDOW_GENERATIONS_MAX];	/* oldest first */
	uint64_t gen_no[WINDOW_GENERATIONS_MAX];	/* strictly increasing */
	size_t ngen;
	/* hash, key and flags of every generation; never dropped (window_hasher) */
	struct filter *hasher;
	uint64_t gen_m;		/* a count generation's m and k, once sized */
	uint32_t gen_k;
	/* generations count only the keys new to them (window_count_new_only) */
	int count_new_only;
	/* the model's expected loss, kept once window_track_loss is called */
	int track_loss;
	double expected_lost;
	double lost_before_newest;	/* expected_lost when the newest stage began */
	double older_miss;	/* chance a fresh key passes every stage but the newest */
	uint64_t model_oldest, model_newest;	/* generation numbers older_miss was read at */
	size_t model_stages;	/* and the newest generation's stages then */
	int model_read;
	/* scratch for the keys still in question during a batch */
	struct line *sub_keys;
	uint64_t *sub_hash;
	size_t *sub_index;
	unsigned char *sub_present;
	size_t sub_cap;
};

/* Check a parameter set; 0, or -1 naming what is wrong. */
int window_params_check(const struct window_params *wp, const char **errstr);

/* Whether a window's generations may have this layout (blocked or classic). */
int window_layout_allowed(enum filter_layout layout);

/*
 * A new, empty window. shape gives layout (blocked or classic), hash,
 * flags, key and fingerprint; capacity, rate, m and k are the window's.
 */
struct window *window_new(const struct window_params *wp, const struct filter_params *shape,
			  const char **errstr);

/*
 * Wrap generations read from a file: gens[i] with number nos[i], oldest
 * first. Takes ownership of gens on success. Checks that they share hash,
 * key and flags, follow the window's plan, and are live at clock.
 */
struct window *window_from_generations(const struct window_params *wp, uint64_t clock,
				       struct cascade **gens, const uint64_t *nos, size_t n,
				       const struct filter_params *shape, const char **errstr);

void window_free(struct window *w);

/* Each generation's plan: its cascade's first capacity, rate, growth and tighten. */
void window_generation_plan(const struct window_params *wp, uint64_t *capacity, double *rate,
			    unsigned *growth, unsigned *tighten);

/* The generation number of clock value t (keys offered, or ms). */
uint64_t window_generation_of(const struct window_params *wp, uint64_t t);

/*
 * The first clock value of generation number no (ms for TIME, key index
 * for COUNT), saturating at UINT64_MAX. For showing generations.
 */
uint64_t window_generation_start(const struct window_params *wp, uint64_t no);

/* How many generations are live as of clock value now (all, for COUNT). */
size_t window_live_from(const struct window *w, uint64_t now);

/*
 * The clock value every program reads window w at, the suite's one rule
 * (bftools(7)): a count window and a window clocked by a time field at
 * their own clock, which only their keys move; a wall-clock window (or
 * one from before clocks were recorded) at wall_ms, the time now in ms.
 */
uint64_t window_read_time(const struct window *w, uint64_t wall_ms);

/* What the clock of a window with params wp reads, in words, into buf. */
const char *window_clock_words(const struct window_params *wp, char buf[64]);

/* The filter to hash keys with (see cascade_hasher); NULL when the key is missing. */
const struct filter *window_hasher(const struct window *w);
int window_needs_key(const struct window *w);
int window_supply_key(struct window *w, const unsigned char key[16], const char **errstr);
const struct filter_params *window_params_of(const struct window *w);

/*
 * Test and add, in order, as filter_test_and_add over the whole window:
 * present[i] says whether keys[i] was within the window (counting the
 * earlier keys of the batch). h as in filter.h (may be NULL). For TIME,
 * times[i] is key i's time in ms (WINDOW_TIME_NONE: skipped, present 0),
 * or times is NULL and every key is at now; a time older than the clock
 * counts as the clock. *fresh (may be NULL): keys not within the window.
 * Returns 0, or -1 with *errstr (out of memory, too many stages, key
 * not supplied).
 */
int window_test_and_add_hashed(struct window *w, const struct line *keys, const uint64_t *h,
			       size_t n, const uint64_t *times, uint64_t now,
			       unsigned char *present, size_t *fresh, const char **errstr);

/*
 * A batch of a window's test-and-add cut into regions of blocks (owners.h
 * does the cutting), in input order per region.
 * window_regions_take: 1 when n keys of time now (no per-key times) all
 *     fall in the newest generation as it stands, every live generation
 *     with the same one-block shape; the clock then moves past them. 0:
 *     the batch must go to window_test_and_add_hashed (after every batch
 *     taken before it is done).
 * window_region_chunk: keys of one region, in input order (h and base: a
 *     key's hash and its block in the newest generation, filter_blocks_of),
 *     answers as window_test_and_add_hashed's, counts added to *counts,
 *     the generations' own counts untouched (regions run side by side).
 * window_regions_done: after every region of a batch, in input order: the
 *     counts into the newest generation (and the expected loss); how many
 *     keys were new.
 */
struct window_counts {
	size_t offered;		/* keys offered to the newest generation */
	size_t added;		/* of them, keys that set a bit there */
	size_t fresh;		/* keys new to the window */
};
int window_regions_take(struct window *w, size_t n, uint64_t now);
void window_region_chunk(const struct window *w, const uint64_t *base, const uint64_t *h,
			 size_t n, unsigned char *present, struct window_counts *counts);
size_t window_regions_done(struct window *w, const struct window_counts *counts);

/*
 * present[i] = 1 if keys[i] may have been seen within the window as of
 * now (TIME: ms, generations too old for now are ignored, as are times
 * before the clock: the window's own clock is at least as late; COUNT:
 * now is ignored). Returns 0, or -1 when the key was not supplied.
 */
int window_test_hashed(const struct window *w, const struct line *keys, const uint64_t *h,
		       size_t n, uint64_t now, unsigned char *present);

/*
 * From now on, have every test-and-add add to w->expected_lost the
 * model's expected number of fresh keys (keys not within the window) that
 * tested present and were lost: each run of keys of one generation adds
 * its fresh keys times the rate a fresh key meets halfway through it,
 * 1 - prod(1 - r_s) over every stage of every live generation. A stage
 * that no longer changes gives r_s from its bits (filter_current_fpr),
 * read when the generations or the newest's stages change; the newest
 * stage gives the model's rate (sizing_fpr) for the keys it took plus
 * those lost since it began (see cascade_model_fpr), as bfuniq does for
 * a filter. window.c says how close this comes.
 */
void window_track_loss(struct window *w);

/*
 * From now on each generation's insertions count only the keys that were
 * new to it (cascade's count_new_only), as bfuniq's seen-set wants: a
 * repeat within a generation is not an insertion. Without it every key
 * offered to a generation counts, repeats included, as bfbuild's do.
 */
void window_count_new_only(struct window *w);

/*
 * For tests: 0 has every window take the general path (each generation
 * tested as a batch of its own), 1 (the default) lets count windows of
 * blocked generations take the fast one; both give the same answers and
 * bits (window.c). Not for use while another thread tests and adds.
 */
void window_blocks_enable(int on);

/* Sum of the live generations' estimated distinct keys as of now. */
double window_estimate_count(const struct window *w, uint64_t now);

/*
 * The same from the stages' figures (filter.h), stats holding every
 * stage of every generation, oldest first, for a window whose bits were
 * not read.
 */
double window_stats_estimate(const struct window *w, uint64_t now, const struct filter_stats *stats);

/* Bytes of all bit arrays. */
uint64_t window_bytes(const struct window *w);

/* Stages over all generations. */
size_t window_stages(const struct window *w);

/*
 * OR b into a, generation-wise: same kind, size, G, flags, clock (where
 * both recorded theirs; a takes b's where it has none), hash, key and
 * shapes. Generations with the same number are OR-ed (stage by stage, as
 * cascade_compatible); the union of numbers is kept, the newest G, and the
 * clock is the later one. Returns 0, or -1 with *errstr: naming what
 * differs ("window size", "generations", "refresh", "size", "key", ...;
 * a is then unchanged), or out of memory (a is then partly merged, to be
 * discarded).
 */
int window_merge(struct window *a, const struct window *b, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
