/* SPDX-License-Identifier: MIT */
/*
 * test_cov_window.c - the refusals of lib/sets/window.c that the programs
 * cannot reach, because cmd/ checks the same things first: window
 * parameters out of range, generations of a layout a window cannot hold,
 * merges of windows that differ in one setting each, and a key supplied
 * to a window whose key is kept outside. Found unreached by make coverage.
 */
#include <string.h>

#include "window.h"
#include "unit.h"

static const unsigned char cov_key[16] = "coverage-key-16!";

static struct filter_params cov_shape(enum filter_layout layout)
{
	struct filter_params p = { 0 };

	p.layout = layout;
	p.hash = FILTER_SIPHASH_1_3;
	memcpy(p.key, cov_key, sizeof p.key);
	return p;
}

/* Whether window_params_check refuses wp with exactly msg. */
static int refused(struct window_params wp, const char *msg)
{
	const char *why = NULL;

	return window_params_check(&wp, &why) == -1 && why != NULL && strcmp(why, msg) == 0;
}

static void test_params_out_of_range(void)
{
	const struct window_params count = { WINDOW_COUNT, 1000, 8, 0, 1000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	const struct window_params time = { WINDOW_TIME, 60, 8, 0, 5000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct window_params wp;
	const char *why;

	CHECK(window_params_check(&count, &why) == 0 && window_params_check(&time, &why) == 0);
	wp = count, wp.kind = (enum window_kind)7;
	CHECK(refused(wp, "unknown window kind"));
	wp = count, wp.generations = 1;
	CHECK(refused(wp, "generations out of range 2..64"));
	wp = count, wp.generations = 65;
	CHECK(refused(wp, "generations out of range 2..64"));
	wp = count, wp.flags = 0x80;
	CHECK(refused(wp, "unknown window flags"));
	wp = count, wp.size = 0;
	CHECK(refused(wp, "window size out of range"));
	wp = time, wp.size = WINDOW_SECONDS_MAX + 1;
	CHECK(refused(wp, "window size out of range"));
	wp = count, wp.size = wp.expected = FILTER_M_MAX + 1;
	CHECK(refused(wp, "window size out of range"));
	wp = time, wp.expected = 0;
	CHECK(refused(wp, "expected keys per window out of range"));
	wp = count, wp.expected = 999;
	CHECK(refused(wp, "a count window expects its own size"));
	wp = count, wp.target_p = 1.0;
	CHECK(refused(wp, "window rate not in (0, 1)"));
}

static void test_layouts_refused(void)
{
	const struct window_params wp = { WINDOW_COUNT, 1000, 8, 0, 1000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params counting = cov_shape(FILTER_COUNTING);
	const char *why = NULL;

	CHECK(window_new(&wp, &counting, &why) == NULL);
	CHECK(why != NULL && strcmp(why, "a window's generations are blocked or classic filters") == 0);
}

/* Merging a window into one that differs in a single setting: refused, naming it. */
static int merge_refused(struct window_params wb, struct filter_params pb, const char *msg)
{
	const struct window_params wa = { WINDOW_TIME, 60, 8, 0, 5000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params pa = cov_shape(FILTER_BLOCKED);
	const char *why = NULL;
	struct window *a = window_new(&wa, &pa, &why), *b = window_new(&wb, &pb, &why);
	int ok = a != NULL && b != NULL && window_merge(a, b, &why) == -1 &&
		 strcmp(why, msg) == 0;

	if (!ok)
		printf("# merge: expected '%s', got '%s'\n", msg, why ? why : "(none)");
	window_free(a);
	window_free(b);
	return ok;
}

static void test_merge_refusals(void)
{
	const struct window_params base = { WINDOW_TIME, 60, 8, 0, 5000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = cov_shape(FILTER_BLOCKED), q;
	struct window_params w;

	w = base, w.size = 120;
	CHECK(merge_refused(w, p, "window size"));
	w = base, w.generations = 4;
	CHECK(merge_refused(w, p, "generations"));
	w = base, w.flags = WINDOW_REFRESH;
	CHECK(merge_refused(w, p, "refresh"));
	w = base, w.expected = 9000;
	CHECK(merge_refused(w, p, "size"));
	q = p, q.hash = FILTER_SIPHASH_2_4;
	CHECK(merge_refused(base, q, "hash function"));
	q = p, q.key[0] ^= 1;
	CHECK(merge_refused(base, q, "key"));
	q = p, q.flags = FILTER_FOLD_CASE;
	CHECK(merge_refused(base, q, "normalisation"));
}

/* A window whose key is kept outside takes it once given, and only the right one. */
static void test_supply_key(void)
{
	const struct window_params wp = { WINDOW_COUNT, 1000, 4, 0, 1000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = cov_shape(FILTER_BLOCKED), outside;
	unsigned char wrong[16];
	const char *why;
	struct window *w;

	outside = p;
	outside.flags = FILTER_KEY_EXTERNAL;
	outside.fingerprint = filter_key_fingerprint(cov_key);
	memset(outside.key, 0, sizeof outside.key);
	w = window_new(&wp, &outside, &why);
	CHECK(w != NULL);
	CHECK(window_needs_key(w));
	memcpy(wrong, cov_key, sizeof wrong);
	wrong[15] ^= 1;
	CHECK(window_supply_key(w, wrong, &why) == -1);
	CHECK(window_supply_key(w, cov_key, &why) == 0);
	CHECK(!window_needs_key(w));
	window_free(w);
}

/* Merging into an empty window copies the other's generations, keys and all. */
static void test_merge_into_empty(void)
{
	const struct window_params wp = { WINDOW_COUNT, 1000, 4, 0, 1000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = cov_shape(FILTER_BLOCKED);
	struct line key = { "merged", 6 };
	unsigned char present = 2;
	const char *why;
	struct window *a = window_new(&wp, &p, &why), *b = window_new(&wp, &p, &why);

	CHECK(a != NULL && b != NULL);
	CHECK(window_test_and_add_hashed(b, &key, NULL, 1, NULL, 0, &present, NULL, &why) == 0);
	CHECK(present == 0 && b->ngen == 1 && a->ngen == 0);
	CHECK(window_merge(a, b, &why) == 0);
	CHECK(a->ngen == 1 && a->gen[0] != b->gen[0]);
	present = 2;
	CHECK(window_test_hashed(a, &key, NULL, 1, 0, &present) == 0 && present == 1);
	window_free(a);
	window_free(b);
}

void suite_cov_window(void)
{
	unit_run("window: merging into an empty window copies the generations", test_merge_into_empty);
	unit_run("window: parameters out of range are refused, each naming what", test_params_out_of_range);
	unit_run("window: counting generations are refused", test_layouts_refused);
	unit_run("window: merges refused naming the one setting that differs", test_merge_refusals);
	unit_run("window: a key kept outside is taken once given, the wrong one refused",
		 test_supply_key);
}
