/* SPDX-License-Identifier: MIT */
/*
 * test_window.c - sliding windows: no false negative inside the window,
 * everything forgotten after G/(G-1) windows, time generations aligned to
 * absolute time, refresh, files that round-trip and are refused when
 * damaged, and generation-wise merges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "window.h"
#include "unit.h"

static const unsigned char window_key[16] = "window-test-key!";

/* CHECK for helpers that return a value: records the failure, goes on. */
#define EXPECT(cond) ((cond) ? (void)0 : unit_fail(__FILE__, __LINE__, #cond))

static struct filter_params shape(void)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	memcpy(p.key, window_key, sizeof p.key);
	return p;
}

static struct window *count_window(uint64_t n, unsigned g, uint32_t flags)
{
	struct window_params wp = { WINDOW_COUNT, n, g, flags, n, 1e-4, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = shape();
	const char *why;
	struct window *w = window_new(&wp, &p, &why);

	EXPECT(w != NULL);
	(void)why;
	return w;
}

/* Offer key "k<i>" alone; whether it was within the window. */
static int offer(struct window *w, uint64_t i, const uint64_t *t)
{
	char text[32];
	struct line key = { text, (size_t)snprintf(text, sizeof text, "k%llu", (unsigned long long)i) };
	unsigned char present = 2;
	const char *why;

	EXPECT(window_test_and_add_hashed(w, &key, NULL, 1, t, t ? *t : 0, &present, NULL, &why) == 0);
	return present;
}

/*
 * N = 700, G = 8: g = 100 keys a generation. Keys 0..99 offered, then
 * fresh filler: key i stays found while fewer than (G - 1) g = 700 keys
 * followed it, and is gone once G g = 800 have.
 */
static void test_count_bounds(void)
{
	struct window *w = count_window(700, 8, 0);
	uint64_t next = 1000000;

	for (uint64_t i = 0; i < 100; i++)
		CHECK(offer(w, i, NULL) == 0);
	for (uint64_t i = 0; i < 600; i++)
		CHECK(offer(w, next++, NULL) == 0 || 1);	/* filler; rare false positives allowed */
	CHECK(w->clock == 700 && w->ngen == 7);
	/* offering key 0 again: 700 keys later, still inside (a repeat, not re-added) */
	CHECK(offer(w, 0, NULL) == 1);
	for (uint64_t i = 0; i < 99; i++)
		offer(w, next++, NULL);
	/* the clock is at generation 8's first place: generation 0 (keys 0..99) is gone */
	CHECK(w->clock == 800 && w->ngen == 7 && w->gen_no[0] == 1);
	/* the 801st key starts generation 8 */
	offer(w, next++, NULL);
	CHECK(w->ngen == 8 && w->gen_no[0] == 1 && w->gen_no[7] == 8);
	CHECK(offer(w, 50, NULL) == 0);
	window_free(w);
}

/* With refresh, a key offered steadily every 300 keys is never forgotten. */
static void test_refresh(void)
{
	struct window *plain = count_window(700, 8, 0), *fresh = count_window(700, 8, WINDOW_REFRESH);
	int plain_passes = 0, fresh_passes = 0;
	uint64_t next = 1000000;

	for (int round = 0; round < 20; round++) {
		plain_passes += !offer(plain, 7, NULL);
		fresh_passes += !offer(fresh, 7, NULL);
		for (int i = 0; i < 299; i++, next++) {
			offer(plain, next, NULL);
			offer(fresh, next, NULL);
		}
	}
	/* 20 rounds of 300 keys = 6000 keys: without refresh the key passes again
	 * once its generation falls out, every 700..800 keys (every 3rd round) */
	CHECK(fresh_passes == 1);
	CHECKF(plain_passes >= 6 && plain_passes <= 8, "%d", plain_passes);
	window_free(plain);
	window_free(fresh);
}

static struct window *time_window(uint64_t seconds, unsigned g)
{
	struct window_params wp = { WINDOW_TIME, seconds, g, 0, 1000, 1e-4, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = shape();
	const char *why;
	struct window *w = window_new(&wp, &p, &why);

	EXPECT(w != NULL);
	return w;
}

/*
 * W = 70 s, G = 8: tau = 10 s, generation = floor(t / 10 s), live are the
 * numbers > current - 8. A key seen at t = 1005 s (generation 100) is found
 * through 1079.999 s (generation 107: live from 100), at least W later,
 * and gone at 1080 s (generation 108), before t + G tau = 1085 s.
 */
static void test_time_bounds(void)
{
	struct window *w = time_window(70, 8);
	uint64_t t = 1005000;

	CHECK(window_generation_of(&w->wp, t) == 100);
	CHECK(offer(w, 1, &t) == 0);
	t = 1074999;
	CHECK(offer(w, 1, &t) == 1);
	t = 1079999;
	CHECK(offer(w, 2, &t) == 0);
	CHECK(offer(w, 1, &t) == 1);
	t = 1080000;
	CHECK(offer(w, 1, &t) == 0);
	/* an older time counts as the clock: still generation 108 */
	t = 5000;
	CHECK(offer(w, 1, &t) == 1 && w->clock == 1080000);
	window_free(w);
}

/* Many keys in one batch spanning generations, as bfuniq offers them. */
static void test_batch_spans_generations(void)
{
	struct window *one = count_window(1000, 4, 0), *batch = count_window(1000, 4, 0);
	size_t n = 5000;
	struct line *keys = calloc(n, sizeof *keys);
	char *text = malloc(n * 16);
	unsigned char *present = malloc(n);
	const char *why;
	int same = 1;

	for (size_t i = 0; i < n; i++) {
		keys[i].data = text + 16 * i;
		keys[i].len = (size_t)snprintf(text + 16 * i, 16, "k%zu", i % 1500);
	}
	CHECK(window_test_and_add_hashed(batch, keys, NULL, n, NULL, 0, present, NULL, &why) == 0);
	for (size_t i = 0; i < n; i++)
		same &= offer(one, i % 1500, NULL) == present[i];
	CHECK(same && batch->clock == n && one->clock == n);
	window_free(one);
	window_free(batch);
	free(keys);
	free(text);
	free(present);
}

static struct window *roundtrip(const struct window *w)
{
	char path[] = "/tmp/bftools-window-XXXXXX";
	int fd = mkstemp(path);
	struct cascade *c;
	struct window *back = NULL;
	const char *why;

	EXPECT(fd >= 0);
	EXPECT(format_save_window(w, fd, &why) == 0);
	EXPECT(lseek(fd, 0, SEEK_SET) == 0);
	EXPECT(format_load_any(fd, &c, &back, NULL, &why) == 0 && c == NULL && back != NULL);
	EXPECT(lseek(fd, 0, SEEK_SET) == 0);
	EXPECT(format_load(fd, &why) == NULL && why == format_err_windowed);
	close(fd);
	unlink(path);
	return back;
}

/* The clock source and field round-trip; a mismatch does not merge; unrecorded takes the other's. */
static void test_clock_source(void)
{
	struct window *w = time_window(70, 8), *back, *old = time_window(70, 8);
	uint64_t t = 1005000;
	const char *why;

	w->wp.clock = WINDOW_CLOCK_FIELD;
	w->wp.time_field = 3;
	offer(w, 1, &t);
	back = roundtrip(w);
	CHECK(back->wp.clock == WINDOW_CLOCK_FIELD && back->wp.time_field == 3);
	window_free(back);
	back = roundtrip(old);	/* saved as before clocks were recorded: byte 68 zero */
	CHECK(back->wp.clock == WINDOW_CLOCK_UNRECORDED && back->wp.time_field == 0);
	CHECK(window_merge(back, w, &why) == 0 && back->wp.clock == WINDOW_CLOCK_FIELD &&
	      back->wp.time_field == 3);
	old->wp.clock = WINDOW_CLOCK_WALL;
	CHECK(window_merge(old, w, &why) < 0 && strcmp(why, "clock") == 0);
	/* a field comes with a field clock, and only then */
	w->wp.time_field = 0;
	CHECK(window_params_check(&w->wp, &why) < 0);
	old->wp.time_field = 2;
	CHECK(window_params_check(&old->wp, &why) < 0);
	window_free(back);
	window_free(old);
	window_free(w);
}

/* Every program reads a window at one rule: its own clock unless it is on the wall clock. */
static void test_read_time_rule(void)
{
	struct window *w = time_window(70, 8), *n = count_window(700, 8, 0);
	uint64_t t = 1005000;
	char buf[64];

	offer(w, 1, &t);
	offer(n, 1, NULL);
	w->wp.clock = WINDOW_CLOCK_WALL;
	CHECK(window_read_time(w, 9000000) == 9000000);
	CHECK(strcmp(window_clock_words(&w->wp, buf), "the wall clock") == 0);
	w->wp.clock = WINDOW_CLOCK_UNRECORDED;
	CHECK(window_read_time(w, 9000000) == 9000000);
	CHECK(strstr(window_clock_words(&w->wp, buf), "not recorded") != NULL);
	w->wp.clock = WINDOW_CLOCK_FIELD;
	w->wp.time_field = 4;
	CHECK(window_read_time(w, 9000000) == t);
	CHECK(strcmp(window_clock_words(&w->wp, buf), "time field 4") == 0);
	CHECK(window_read_time(n, 9000000) == 1);
	CHECK(strcmp(window_clock_words(&n->wp, buf), "the keys offered") == 0);
	window_free(w);
	window_free(n);
}

static void test_file_roundtrip(void)
{
	struct window *w = time_window(70, 8), *back;
	uint64_t t = 1005000;

	for (uint64_t i = 0; i < 3000; i++, t += 10)
		offer(w, i, &t);
	back = roundtrip(w);
	CHECK(back->ngen == w->ngen && back->clock == w->clock && window_stages(back) == window_stages(w));
	for (size_t g = 0; back && g < back->ngen; g++)
		CHECK(back->gen_no[g] == w->gen_no[g]);
	t = w->clock;
	for (uint64_t i = 2000; i < 3000; i++)
		CHECK(offer(back, i, &t) == 1);
	window_free(w);
	window_free(back);
	w = count_window(700, 8, WINDOW_REFRESH);	/* and an empty one */
	back = roundtrip(w);
	CHECK(back->ngen == 0 && back->wp.flags == WINDOW_REFRESH);
	window_free(w);
	window_free(back);
}

/* Two shards of one stream, split by key parity, merge to the whole. */
static void test_merge(void)
{
	struct window *a = time_window(70, 8), *b = time_window(70, 8), *other = time_window(60, 8);
	const char *why;
	uint64_t t;

	for (uint64_t i = 0; i < 1000; i++) {
		t = 1000000 + 100 * i;
		offer(i % 2 ? a : b, i, &t);
	}
	CHECK(window_merge(a, other, &why) < 0 && strcmp(why, "window size") == 0);
	CHECK(window_merge(a, b, &why) == 0);
	t = a->clock;
	/* the last 70 s are 700 keys: all found */
	for (uint64_t i = 300; i < 1000; i++)
		CHECK(offer(a, i, &t) == 1);
	window_free(a);
	window_free(b);
	window_free(other);
}

/* Key "f<v>" in slot i of a batch, its text in texts[i]. */
static void put_key(struct line *keys, char (*texts)[24], size_t i, uint64_t v)
{
	keys[i].data = texts[i];
	keys[i].len = (size_t)snprintf(texts[i], sizeof texts[i], "f%llu", (unsigned long long)v);
}

/* Same generations, numbers, bits and counts. */
static void same_windows(const struct window *a, const struct window *b)
{
	CHECK(a->ngen == b->ngen && a->clock == b->clock);
	for (size_t g = 0; g < a->ngen && g < b->ngen; g++) {
		const struct filter *x = a->gen[g]->stages[0], *y = b->gen[g]->stages[0];

		CHECK(a->gen_no[g] == b->gen_no[g]);
		CHECK(a->gen[g]->newest_keys == b->gen[g]->newest_keys);
		CHECK(x->insertions == y->insertions);
		CHECK(memcmp(x->words, y->words, filter_array_bytes(&x->params)) == 0);
	}
}

/*
 * The fast path against the general one, on the same keys: batches of 1
 * to 997 keys that cross generation boundaries (g = 334), keys from a
 * space of 2500 so that repeats come from every generation and from the
 * same batch, with and without refresh; P = 0.05 so that false positives
 * are tried too.
 */
static void test_fast_path_agrees(void)
{
	static const size_t sizes[] = { 1, 7, 333, 997, 2, 500, 64, 17, 800, 334 };
	static struct line keys[997];
	static char texts[997][24];
	unsigned char pa[997], pb[997];
	uint64_t v = 1;

	for (uint32_t flags = 0; flags <= WINDOW_REFRESH; flags += WINDOW_REFRESH) {
		struct window_params wp = { WINDOW_COUNT, 1000, 4, flags, 1000, 0.05, WINDOW_CLOCK_UNRECORDED, 0 };
		struct filter_params p = shape();
		const char *why;
		struct window *a = window_new(&wp, &p, &why), *b = window_new(&wp, &p, &why);

		CHECK(a != NULL && b != NULL);
		for (size_t round = 0; a && b && round < 30; round++) {
			size_t n = sizes[round % 10], fa = 0, fb = 0;

			for (size_t i = 0; i < n; i++, v = v * 6364136223846793005u + 1442695040888963407u)
				put_key(keys, texts, i, (v >> 33) % 2500);
			window_blocks_enable(1);
			CHECK(window_test_and_add_hashed(a, keys, NULL, n, NULL, 0, pa, &fa, &why) == 0);
			window_blocks_enable(0);
			CHECK(window_test_and_add_hashed(b, keys, NULL, n, NULL, 0, pb, &fb, &why) == 0);
			CHECK(fa == fb && memcmp(pa, pb, n) == 0);
		}
		window_blocks_enable(1);
		if (a && b)
			same_windows(a, b);
		window_free(a);
		window_free(b);
	}
}

void suite_window(void)
{
	unit_run("window: a count window keeps N keys and forgets them by G/(G-1) N", test_count_bounds);
	unit_run("window: refresh keeps a steady key; without it the key passes each window", test_refresh);
	unit_run("window: time generations are floor(t / tau), aligned to the epoch", test_time_bounds);
	unit_run("window: a batch across generations answers as keys one by one", test_batch_spans_generations);
	unit_run("window: files round-trip and plain loaders refuse them", test_file_roundtrip);
	unit_run("window: the clock source round-trips, old files load unrecorded, merges agree",
		 test_clock_source);
	unit_run("window: every reader reads a window at its own clock unless on the wall clock",
		 test_read_time_rule);
	unit_run("window: shards merge generation by generation", test_merge);
	unit_run("window: the fast path answers, sets bits and counts as the general one",
		 test_fast_path_agrees);
}
