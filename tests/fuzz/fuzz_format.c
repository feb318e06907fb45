/* SPDX-License-Identifier: MIT */
/*
 * fuzz_format.c - libFuzzer harness for loading the files bftools reads
 * (format.h): filters of every format, layout and stage count (ours,
 * fixed, growing and counting; DCSO's, plain or gzip), windowed filters
 * (format version 2, window.h) and sketches (sketch.h). What a loaded
 * file then does (saving, adding, merging) is fuzz_roundtrip.c's.
 *
 * An input is a file, or a file's content that the harness gzips
 * (fuzz_filters.h). Each is loaded every way a program may: format_load,
 * format_load_any, sketch_load, and the streaming API
 * (format_open/read/close) over a file, a pipe or a socket delivering
 * short reads, in pieces whose sizes are drawn from the input. Checked:
 *
 *   - the ways agree: format_load_any loads the filters format_load
 *     loads and the sketches sketch_load loads (the same registers), and
 *     nothing else but windowed filters; streaming succeeds exactly when
 *     loading does, and the streamed payload equals the loaded bits byte
 *     for byte;
 *   - a failure always comes with a message; a plain (uncompressed) file
 *     never loads;
 *   - a loaded cascade is consistent: shared hash, key and flags, valid
 *     params, counts and rates that are numbers in range; cascade_test
 *     agrees with testing every stage by hand;
 *   - a filter whose key is kept outside refuses a wrong key and takes
 *     its own (the seeds use the key 00 01 .. 0f), and is only asked
 *     about keys once it has it;
 *   - a loaded window holds valid parameters, at most G generations with
 *     rising numbers, each a consistent cascade of the window's hashing,
 *     and answers queries; a loaded sketch counts a number in range.
 */
#define _GNU_SOURCE	/* memfd_create */

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_filters.h"
#include "pipeline.h"

#define PIECE_MAX ((size_t)64 << 10)

/* ---- streaming ------------------------------------------------------- */

/* Byte j of a stage's array in file order (bit i is bit i%8 of byte i/8; counters: filter.h). */
FUZZ_UNTRACED static uint8_t stage_byte(const struct filter *f, uint64_t j)
{
	return (uint8_t)(f->words[j / 8] >> (8 * (j % 8)));
}

/*
 * The streamed bytes buf[0..len), at payload offset pos, against the loaded
 * bits: the stage found once per run of bytes inside it, not per byte.
 */
FUZZ_UNTRACED static void compare_payload(const struct cascade *c, uint64_t pos, const uint8_t *buf, size_t len)
{
	size_t s = 0, i = 0;
	uint64_t at = pos;

	while (i < len) {
		uint64_t end;

		for (; s < c->nstages && at >= filter_array_bytes(&c->stages[s]->params); s++)
			at -= filter_array_bytes(&c->stages[s]->params);
		fuzz_check(s < c->nstages, "payload longer than the loaded stages");
		end = filter_array_bytes(&c->stages[s]->params);
		for (; i < len && at < end; i++, at++)
			fuzz_check(buf[i] == stage_byte(c->stages[s], at), "streamed bits equal loaded bits");
	}
}

/* The shape from format_open against the loaded cascade (when there is one). */
static uint64_t check_shape(const struct cascade *shape, const struct cascade *c)
{
	uint64_t total = 0;

	fuzz_check(shape->nstages >= 1 && shape->nstages <= CASCADE_STAGES_MAX, "stage count");
	for (size_t i = 0; i < shape->nstages; i++) {
		fuzz_check(shape->stages[i]->words == NULL, "a shape has no bit arrays");
		total += filter_array_bytes(&shape->stages[i]->params);
	}
	if (c == NULL)
		return total;
	fuzz_check(shape->nstages == c->nstages && shape->growth == c->growth
		   && shape->tighten == c->tighten && shape->capacity == c->capacity,
		   "shape and loaded cascade agree");
	for (size_t i = 0; i < shape->nstages; i++)
		fuzz_check(params_equal(&shape->stages[i]->params, &c->stages[i]->params)
			   && shape->stages[i]->insertions == c->stages[i]->insertions,
			   "shape stage equals loaded stage");
	return total;
}

/* Small pieces first (the awkward sizes), then big ones so bombs end quickly. */
static size_t next_piece(uint64_t *state, unsigned n, uint64_t left)
{
	uint64_t piece = n < 32 ? fuzz_range(state, 1, 70) : fuzz_range(state, 1, PIECE_MAX);

	return (size_t)(piece < left ? piece : left);
}

/*
 * Read the payload through format_read up to stop (of total bytes), into
 * buf. Returns 0, or -1 when a read failed (and then format_close must).
 */
static int read_pieces(struct format_reader *r, uint64_t stop, uint64_t *state,
		       const struct cascade *c, uint8_t *buf)
{
	const char *err = NULL;
	uint64_t pos = 0;

	for (unsigned n = 0; pos < stop; n++) {
		size_t piece = next_piece(state, n, stop - pos);

		if (format_read(r, buf, piece, &err) < 0) {
			fuzz_check(err != NULL, "a failed read says why");
			fuzz_check(n % 2 || format_read(r, buf, 1, &err) < 0,
				   "a broken stream stays broken");
			fuzz_check(format_close(r, &err) < 0, "close fails after a failed read");
			return -1;
		}
		if (c != NULL)
			compare_payload(c, pos, buf, piece);
		pos += piece;
	}
	return 0;
}

/* Returns 1 (read and closed cleanly), 0 (failed), or -1 (stopped early on purpose). */
static int stream(const uint8_t *file, size_t size, uint64_t *state, const struct cascade *c,
		  uint8_t *buf)
{
	uint64_t pick = fuzz_next(state), total, stop;
	struct cascade *shape = NULL;
	const char *err = NULL;
	struct format_reader *r;
	struct feed f;
	int verdict;

	feed_open(&f, (enum feed_kind)(pick % 3), file, size, fuzz_next(state),
		  pick >> 8 & 1 ? 16 : 4096);
	r = format_open(f.fd, &shape, &err);
	if (r == NULL) {
		fuzz_check(shape == NULL && err != NULL, "a failed open says why, and gives no shape");
		feed_close(&f);
		return 0;
	}
	total = check_shape(shape, c);
	stop = (pick >> 4) % 8 == 0 ? fuzz_range(state, 0, total) : total;
	if (read_pieces(r, stop, state, c, buf) < 0) {
		verdict = 0;
	} else if (stop < total) {
		verdict = -1;
		if (pick >> 12 & 1)
			format_abandon(r);
		else
			fuzz_check(format_close(r, &err) < 0, "closing before the end fails");
	} else {
		if (pick >> 13 & 1)
			fuzz_check(format_read(r, buf, 1, &err) < 0, "reading past the end fails");
		verdict = format_close(r, &err) == 0;
		fuzz_check(verdict || err != NULL, "a failed close says why");
	}
	cascade_free(shape);
	feed_close(&f);
	return verdict;
}

/* ---- what loaded ------------------------------------------------------ */

/* A filter of ours: consistent, and asked about keys once it has its key. */
static void check_filter(struct cascade *c, const uint8_t *data, size_t size, uint64_t *state)
{
	struct line keys[NKEYS];

	check_cascade(c);
	check_numbers(c);
	if (!supply_key(c))
		return;
	make_keys(data, size, state, keys);
	check_test(c, keys);
}

/* A DCSO filter answers queries with numbers in range, and needs no key. */
static void check_dcso(const struct cascade *c)
{
	static const struct line keys[3] = { { "", 0 }, { "a", 1 }, { "example.com", 11 } };
	unsigned char present[3];

	fuzz_check(cascade_test(c, keys, 3, present) == 0, "a DCSO filter needs no key");
	fuzz_check(cascade_current_fpr(c) >= 0.0 && cascade_current_fpr(c) <= 1.0, "rate in [0, 1]");
}

/* A window: its parameters, generations and hashing hang together. */
static void check_window(struct window *w, const uint8_t *data, size_t size, uint64_t *state)
{
	const struct filter_params *p = window_params_of(w);
	const char *err = NULL;
	struct line keys[NKEYS];
	unsigned char present[NKEYS];
	size_t stages = 0;
	double count;

	fuzz_check(window_params_check(&w->wp, &err) == 0, "a loaded window's parameters are valid");
	fuzz_check(w->ngen <= w->wp.generations, "no more generations than G");
	for (size_t i = 0; i < w->ngen; i++) {
		const struct filter_params *g = cascade_params(w->gen[i]);

		fuzz_check(i == 0 || w->gen_no[i] > w->gen_no[i - 1], "generation numbers rise");
		fuzz_check(g->hash == p->hash && g->flags == p->flags && g->fingerprint == p->fingerprint,
			   "every generation hashes as the window");
		check_cascade(w->gen[i]);
		stages += w->gen[i]->nstages;
	}
	fuzz_check(stages == window_stages(w) && stages <= WINDOW_STAGES_MAX, "stage count");
	count = window_estimate_count(w, w->clock);
	fuzz_check(!isnan(count) && count >= 0.0, "a window's count is a number >= 0");
	if (window_needs_key(w) && window_supply_key(w, seed_key, &err) < 0)
		return;
	make_keys(data, size, state, keys);
	fuzz_check(window_test_hashed(w, keys, NULL, NKEYS, w->clock, present) == 0,
		   "a window with its key answers");
}

static void check_sketch(const struct sketch *s)
{
	double count = sketch_estimate(s);

	fuzz_check(!isnan(count) && count >= 0.0, "a count is a number >= 0");
	fuzz_check(sketch_registers_nonzero(s) <= (UINT64_C(1) << sketch_precision(s)), "registers in range");
}

/*
 * The figures of a file, as bfinfo asks for them (format_load_described):
 * verified, they are the bits' or the load fails; from the headers alone,
 * a file whose bits loaded gives the same verdict, and any figures given
 * fit their stages.
 */
static void check_described(const uint8_t *file, size_t size, int loaded, uint64_t *state)
{
	static struct format_stats st;
	enum format_figures how = (enum format_figures)(fuzz_next(state) % 3);
	struct cascade *c = NULL;
	struct window *w = NULL;
	struct sketch *sk = NULL;
	const char *err = NULL;
	int fd = fuzz_file(file, size), rc = format_load_described(fd, &c, &w, &sk, how, &st, &err);

	close(fd);
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a failed description says why");
	fuzz_check(how != FORMAT_BITS || (rc == 0) == loaded, "reading bits, described as loaded");
	fuzz_check(rc < 0 || how != FORMAT_FIGURES_VERIFIED || loaded, "verified only what loads");
	for (size_t i = 0; rc == 0 && i < st.nstages; i++)
		fuzz_check(st.stage[i].saturated <= st.stage[i].bits_set && st.stage[i].rate >= 0.0 &&
			   st.stage[i].rate <= 1.0, "figures in range");
	cascade_free(c);
	window_free(w);
	sketch_free(sk);
}

/* A plain file never loads, whatever it holds. */
static void refuse_plain(const uint8_t *data, size_t size)
{
	struct cascade *c = NULL;
	struct window *w = NULL;
	struct sketch *sk = NULL;

	fuzz_check(load(data, size) == NULL, "a plain, uncompressed file never loads");
	fuzz_check(load_any(data, size, &c, &w, &sk) < 0, "a plain, uncompressed file never loads");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[PIECE_MAX];
	uint64_t state = fuzz_seed(data, size);
	const uint8_t *file = data;
	uint8_t *wrapped = NULL;
	size_t file_size = size;
	struct cascade *c, *any = NULL;
	struct window *w = NULL;
	struct sketch *sk = NULL, *direct;
	int verdict;

	pipeline_set_threads(1);
	if (is_content(data, size)) {
		refuse_plain(data, size);
		file = wrapped = wrap_gzip(data, size, &state, &file_size);
	}
	c = load(file, file_size);
	load_any(file, file_size, &any, &w, &sk);
	fuzz_check((any != NULL) == (c != NULL), "format_load_any loads the filters format_load loads");
	check_described(file, file_size, any != NULL || w != NULL || sk != NULL, &state);
	cascade_free(any);
	direct = load_sketch(file, file_size, sk != NULL);
	fuzz_check(sk == NULL || same_sketch(sk, direct), "both ways load the same sketch");
	sketch_free(direct);
	if (c == NULL || cascade_params(c)->layout != FILTER_DCSO) {
		/* DCSO loads only: streaming and our format refuse it */
		verdict = stream(file, file_size, &state, c, buf);
		fuzz_check(verdict < 0 || verdict == (c != NULL), "streaming and loading agree");
	}
	if (c != NULL && cascade_params(c)->layout == FILTER_DCSO)
		check_dcso(c);
	else if (c != NULL)
		check_filter(c, data, size, &state);
	if (w != NULL)
		check_window(w, data, size, &state);
	if (sk != NULL)
		check_sketch(sk);
	cascade_free(c);
	window_free(w);
	sketch_free(sk);
	free(wrapped);
	return 0;
}
