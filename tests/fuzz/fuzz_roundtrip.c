/* SPDX-License-Identifier: MIT */
/*
 * fuzz_roundtrip.c - libFuzzer harness for what the programs do with a
 * file once it has loaded: save it, load it back, add keys, merge. The
 * inputs are fuzz_format.c's (fuzz_filters.h): any file, or a file's
 * content that the harness gzips; those that load through
 * format_load_any are worked with here. Checked:
 *
 *   - a loaded filter of ours saves; the saved file loads back identical
 *     (params, counts, bits), and saving that gives the same bytes again;
 *   - an empty copy (bfbuild --like) has the same kind, hashing and key;
 *   - after adding keys (which may grow a cascade) every key tests
 *     present, insertions rose by the number of keys, and it still saves;
 *   - a filter whose key is kept outside saves without it, and is added
 *     to only once it has it (the seeds' key, 00 01 .. 0f);
 *   - a DCSO filter saves in its own format, plain and gzipped, and loads
 *     back with the same bits;
 *   - a sketch saves, loads back the same (registers, phase, counts, key)
 *     and saves to the same bytes again, merges with itself and with its
 *     empty copy without changing its count, and, once it has its key,
 *     counts keys added to it;
 *   - a windowed filter saves and loads back the same (parameters, clock,
 *     generations and their bits) and saves to the same bytes again,
 *     merges with its copy without changing, and takes keys (at times
 *     drawn from the input, for a time window) and still saves.
 */
#define _GNU_SOURCE	/* memfd_create */

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcso.h"
#include "fuzz.h"
#include "fuzz_filters.h"
#include "pipeline.h"

/* Cascades bigger than this (grown by the harness) are not saved again: time. */
#define RESAVE_MAX ((uint64_t)16 << 20)

/* ---- filters of ours ---------------------------------------------------- */

FUZZ_UNTRACED static void check_same(const struct cascade *a, const struct cascade *b)
{
	const char *what = NULL;

	fuzz_check(a->nstages == b->nstages && a->growth == b->growth && a->tighten == b->tighten
		   && a->capacity == b->capacity
		   && memcmp(&a->target_p, &b->target_p, sizeof a->target_p) == 0,
		   "reloaded cascade equals the saved one");
	for (size_t i = 0; i < a->nstages; i++) {
		const struct filter *f = a->stages[i], *g = b->stages[i];

		fuzz_check(params_equal(&f->params, &g->params) && f->insertions == g->insertions,
			   "reloaded stage params equal");
		fuzz_check(memcmp(f->words, g->words, filter_bytes(f)) == 0,
			   "reloaded stage bits equal");
	}
	fuzz_check(cascade_compatible(a, b, &what) == 1, "a filter is compatible with its copy");
}

/* Save c; the bytes in a new buffer. Saving a loaded filter must succeed. */
static uint8_t *save(const struct cascade *c, size_t *size)
{
	const char *err = NULL;
	int fd = fuzz_file(NULL, 0);
	uint8_t *bytes;

	fuzz_check(format_save(c, fd, &err) == 0, err ? err : "format_save");
	bytes = fuzz_slurp(fd, size);
	close(fd);
	return bytes;
}

/* Save, load back, compare; save the copy and expect the same bytes. */
static struct cascade *round_trip(const struct cascade *c)
{
	const char *err = NULL;
	size_t size, size2;
	uint8_t *bytes = save(c, &size), *bytes2;
	struct cascade *copy = load(bytes, size);

	fuzz_check(copy != NULL, "a saved filter loads");
	check_same(c, copy);
	if (cascade_needs_key(copy) && !cascade_needs_key(c))
		fuzz_check(cascade_supply_key(copy, cascade_params(c)->key, &err) == 0,
			   "the key a filter was loaded with fits its saved copy");
	bytes2 = save(copy, &size2);
	fuzz_check(size == size2 && memcmp(bytes, bytes2, size) == 0,
		   "the same filter saves to the same bytes");
	free(bytes);
	free(bytes2);
	return copy;
}

/* Add the keys (growing the cascade if it must); then all of them test present. */
static void check_add(struct cascade *c, const struct line *keys, uint64_t *state)
{
	unsigned char present[NKEYS];
	uint64_t before = cascade_insertions(c);
	const char *err = NULL;
	size_t fresh = 0;
	int rc;

	if (fuzz_next(state) & 1)
		rc = cascade_add(c, keys, NKEYS, &err);
	else
		rc = cascade_test_and_add(c, keys, NKEYS, present, &fresh, &err);
	fuzz_check(fresh <= NKEYS, "no more fresh keys than keys");
	if (rc < 0) {
		fuzz_check(err != NULL, "a failed add says why");
	} else {
		cascade_test(c, keys, NKEYS, present);
		for (size_t i = 0; i < NKEYS; i++)
			fuzz_check(present[i], "an added key tests present");
		fuzz_check(cascade_insertions(c) - before == NKEYS, "insertions count every key");
	}
	check_cascade(c);
	if (cascade_bytes(c) <= RESAVE_MAX)
		cascade_free(round_trip(c));
}

/* An empty cascade like c (bfbuild --like): same kind, hashing and key. */
static void check_like(const struct cascade *c)
{
	const char *err = NULL, *what = NULL;
	struct cascade *like = cascade_new_like(c, &err);

	if (like == NULL) {
		/* a growing filter's first stage is sized again, and may not fit */
		fuzz_check(c->growth != 0 && err != NULL, "a fixed filter can always be copied empty");
		return;
	}
	fuzz_check(like->nstages == 1 && like->growth == c->growth && like->tighten == c->tighten
		   && cascade_insertions(like) == 0, "an empty copy of the same kind");
	fuzz_check(cascade_params(like)->fingerprint == cascade_params(c)->fingerprint
		   && cascade_params(like)->flags == cascade_params(c)->flags
		   && cascade_params(like)->hash == cascade_params(c)->hash, "same hashing and key");
	fuzz_check(c->growth != 0 || cascade_compatible(like, c, &what) == 1,
		   "a fixed filter's empty copy merges with it");
	cascade_free(like);
}

static void exercise(struct cascade *c, const uint8_t *data, size_t size, uint64_t *state)
{
	struct line keys[NKEYS];
	struct cascade *copy;
	int keyed = supply_key(c);

	check_cascade(c);
	check_numbers(c);
	make_keys(data, size, state, keys);
	if (keyed)
		check_test(c, keys);
	check_like(c);
	copy = round_trip(c);
	/* without its key a filter can be saved, not asked */
	if (keyed)
		check_add(copy, keys, state);
	cascade_free(copy);
}

/* ---- sketches -------------------------------------------------------- */

static uint8_t *save_sketch(const struct sketch *s, size_t *size)
{
	const char *err = NULL;
	int fd = fuzz_file(NULL, 0);
	uint8_t *bytes;

	fuzz_check(sketch_save(s, fd, &err) == 0, err ? err : "sketch_save");
	bytes = fuzz_slurp(fd, size);
	close(fd);
	return bytes;
}

/* Save, load back, compare; the copy saves to the same bytes. */
static void sketch_round_trip(const struct sketch *s)
{
	size_t size, size2;
	uint8_t *bytes = save_sketch(s, &size), *bytes2;
	struct sketch *copy = load_sketch(bytes, size, 1);

	fuzz_check(same_sketch(s, copy), "a saved sketch loads back the same");
	fuzz_check(sketch_estimate(s) == sketch_estimate(copy), "the same count");
	bytes2 = save_sketch(copy, &size2);
	fuzz_check(size == size2 && memcmp(bytes, bytes2, size) == 0,
		   "the same sketch saves to the same bytes");
	free(bytes);
	free(bytes2);
	sketch_free(copy);
}

/* Merging with itself and with its empty copy changes no register. */
static void sketch_merges(const struct sketch *s)
{
	const char *err = NULL;
	struct sketch *copy = sketch_new_like(s, &err), *empty = sketch_new_like(s, &err);

	fuzz_check(copy && empty, err ? err : "sketch_new_like");
	fuzz_check(sketch_merge(copy, s, &err) == 0 && sketch_merge(copy, empty, &err) == 0,
		   "a sketch merges with its own kind");
	fuzz_check(copy->insertions == s->insertions && same_sketch(s, copy),
		   "the union with nothing is the sketch");
	if (s->insertions <= UINT64_MAX / 2) {
		fuzz_check(sketch_merge(copy, s, &err) == 0, "a sketch merges with itself");
		fuzz_check(sketch_estimate(copy) == sketch_estimate(s), "the union with itself counts the same");
	}
	sketch_free(copy);
	sketch_free(empty);
}

static void exercise_sketch(struct sketch *s, const uint8_t *data, size_t size, uint64_t *state)
{
	struct line keys[NKEYS];
	uint64_t hashes[NKEYS];
	const char *err = NULL;
	double before = sketch_estimate(s);

	fuzz_check(before >= 0.0 && !isnan(before), "a count is a number");
	fuzz_check(sketch_registers_nonzero(s) <= (UINT64_C(1) << sketch_precision(s)), "registers in range");
	sketch_round_trip(s);
	sketch_merges(s);
	if (s->needs_key && sketch_supply_key(s, seed_key, &err) < 0)
		return;	/* without its key a sketch can be saved and merged, not added to */
	make_keys(data, size, state, keys);
	sketch_hash(s, keys, NKEYS, hashes);
	sketch_add_hashed(s, hashes, NKEYS);
	fuzz_check(sketch_is_exact(s) ? sketch_estimate(s) >= before : 1, "an exact count never drops");
	sketch_round_trip(s);
}

/* ---- DCSO ---------------------------------------------------------- */

/* Saved in DCSO's format (plain or gzip), it loads back with the same bits. */
static void exercise_dcso(const struct cascade *c, uint64_t *state)
{
	const char *err = NULL;
	int gzip = (int)(fuzz_next(state) & 1), fd = fuzz_file(NULL, 0);
	struct cascade *copy;
	uint8_t *bytes;
	size_t size;

	fuzz_check(dcso_save(c, fd, gzip, &err) == 0, err ? err : "dcso_save");
	bytes = fuzz_slurp(fd, &size);
	close(fd);
	copy = load(bytes, size);
	fuzz_check(copy != NULL && cascade_params(copy)->layout == FILTER_DCSO, "a saved DCSO filter loads");
	fuzz_check(filter_bytes(copy->stages[0]) == filter_bytes(c->stages[0])
		   && memcmp(copy->stages[0]->words, c->stages[0]->words, filter_bytes(c->stages[0])) == 0,
		   "a DCSO filter loads back with the same bits");
	cascade_free(copy);
	free(bytes);
}

/* ---- windowed filters --------------------------------------------- */

static uint8_t *save_window(const struct window *w, size_t *size)
{
	const char *err = NULL;
	int fd = fuzz_file(NULL, 0);
	uint8_t *bytes;

	fuzz_check(format_save_window(w, fd, &err) == 0, err ? err : "format_save_window");
	bytes = fuzz_slurp(fd, size);
	close(fd);
	return bytes;
}

FUZZ_UNTRACED static void check_same_window(const struct window *a, const struct window *b)
{
	fuzz_check(a->wp.kind == b->wp.kind && a->wp.size == b->wp.size
		   && a->wp.generations == b->wp.generations && a->wp.flags == b->wp.flags
		   && a->wp.expected == b->wp.expected
		   && memcmp(&a->wp.target_p, &b->wp.target_p, sizeof a->wp.target_p) == 0
		   && a->layout == b->layout && a->clock == b->clock && a->ngen == b->ngen,
		   "a reloaded window has the same parameters, clock and generations");
	for (size_t i = 0; i < a->ngen; i++) {
		fuzz_check(a->gen_no[i] == b->gen_no[i], "the same generation numbers");
		check_same(a->gen[i], b->gen[i]);
	}
}

/* The same generations and bits (a merge adds up insertions: those may differ). */
FUZZ_UNTRACED static void same_window_bits(const struct window *a, const struct window *b)
{
	fuzz_check(a->ngen == b->ngen && a->clock == b->clock, "the same generations and clock");
	for (size_t i = 0; i < a->ngen; i++) {
		fuzz_check(a->gen_no[i] == b->gen_no[i] && a->gen[i]->nstages == b->gen[i]->nstages,
			   "the same generation numbers and stages");
		for (size_t j = 0; j < a->gen[i]->nstages; j++) {
			const struct filter *f = a->gen[i]->stages[j], *g = b->gen[i]->stages[j];

			fuzz_check(filter_bytes(f) == filter_bytes(g)
				   && memcmp(f->words, g->words, filter_bytes(f)) == 0, "the same bits");
		}
	}
}

/* Save, load back, compare; the copy saves to the same bytes. Returns the copy. */
static struct window *window_round_trip(const struct window *w)
{
	struct cascade *c = NULL;
	struct window *copy = NULL;
	struct sketch *sk = NULL;
	const char *err = NULL;
	size_t size, size2;
	uint8_t *bytes = save_window(w, &size), *bytes2;

	fuzz_check(load_any(bytes, size, &c, &copy, &sk) == 0 && copy != NULL, "a saved window loads");
	check_same_window(w, copy);
	if (window_needs_key(copy) && !window_needs_key(w))
		fuzz_check(window_supply_key(copy, window_params_of(w)->key, &err) == 0,
			   "the key a window was loaded with fits its saved copy");
	bytes2 = save_window(copy, &size2);
	fuzz_check(size == size2 && memcmp(bytes, bytes2, size) == 0,
		   "the same window saves to the same bytes");
	free(bytes);
	free(bytes2);
	return copy;
}

/* Keys at the window's clock or later (a time window: up to a day on). */
static void window_add(struct window *w, const uint8_t *data, size_t size, uint64_t *state)
{
	struct line keys[NKEYS];
	uint64_t times[NKEYS], now = w->clock;
	unsigned char present[NKEYS];
	const char *err = NULL;
	size_t fresh = 0;

	make_keys(data, size, state, keys);
	for (size_t i = 0; i < NKEYS; i++) {
		uint64_t step = fuzz_next(state) % 4 == 0 ? fuzz_range(state, 0, 86400000) : 0;

		times[i] = w->wp.kind == WINDOW_TIME && now < WINDOW_TIME_MAX - 1 - step ? now + step : now;
		now = times[i];
	}
	if (window_test_and_add_hashed(w, keys, NULL, NKEYS, w->wp.kind == WINDOW_TIME ? times : NULL,
				       now, present, &fresh, &err) < 0) {
		fuzz_check(err != NULL, "a failed add says why");
		return;
	}
	fuzz_check(fresh <= NKEYS, "no more fresh keys than keys");
	/* the newest key is within the window as of its own time */
	fuzz_check(window_test_hashed(w, &keys[NKEYS - 1], NULL, 1, now, present) == 0 && present[0],
		   "the key just added is in the window");
	if (window_bytes(w) <= RESAVE_MAX)
		window_free(window_round_trip(w));
}

static uint64_t max_insertions(const struct window *w)
{
	uint64_t most = 0;

	for (size_t i = 0; i < w->ngen; i++)
		for (size_t j = 0; j < w->gen[i]->nstages; j++)
			if (w->gen[i]->stages[j]->insertions > most)
				most = w->gen[i]->stages[j]->insertions;
	return most;
}

static void exercise_window(struct window *w, const uint8_t *data, size_t size, uint64_t *state)
{
	struct window *copy = window_round_trip(w);
	const char *err = NULL;
	double before = window_estimate_count(w, w->clock);

	if (!window_needs_key(copy)) {
		int rc = window_merge(copy, w, &err);

		/* twice a count past 2^63 does not fit: the one refusal allowed */
		fuzz_check(rc == 0 || (max_insertions(w) > UINT64_MAX / 2 && err != NULL),
			   err ? err : "a window merges with its copy");
		if (rc < 0) {
			window_free(copy);
			return;
		}
		fuzz_check(window_estimate_count(copy, copy->clock) == before,
			   "a window merged with itself counts the same");
		same_window_bits(w, copy);
	}
	window_free(copy);
	if (window_needs_key(w) && window_supply_key(w, seed_key, &err) < 0)
		return;	/* without its key a window can be saved, not added to */
	window_add(w, data, size, state);
}

/* ---- the entry point ---------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t state = fuzz_seed(data, size);
	const uint8_t *file = data;
	uint8_t *wrapped = NULL;
	size_t file_size = size;
	struct cascade *c = NULL;
	struct window *w = NULL;
	struct sketch *sk = NULL;

	/* one thread saves the same bytes as two, without starting one per save */
	pipeline_set_threads(1);
	if (is_content(data, size))
		file = wrapped = wrap_gzip(data, size, &state, &file_size);
	load_any(file, file_size, &c, &w, &sk);
	if (c != NULL && cascade_params(c)->layout == FILTER_DCSO)
		exercise_dcso(c, &state);
	else if (c != NULL)
		exercise(c, data, size, &state);
	if (w != NULL)
		exercise_window(w, data, size, &state);
	if (sk != NULL)
		exercise_sketch(sk, data, size, &state);
	cascade_free(c);
	window_free(w);
	sketch_free(sk);
	free(wrapped);
	return 0;
}
