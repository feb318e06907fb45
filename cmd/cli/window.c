/* SPDX-License-Identifier: MIT */
/*
 * window.c - the window options and files, shared by the programs that
 * read windowed filters (cli_window.h). Option values become a struct
 * window_params; the window itself (generations, slack, sizing) is
 * lib/window.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cli.h"
#include "../cli_fields.h"
#include "../cli_window.h"
#include "format.h"
#include "numparse.h"
#include "owners.h"

void cli_window_init(struct cli_window *cw)
{
	memset(cw, 0, sizeof *cw);
	cw->wp.generations = WINDOW_GENERATIONS_DEFAULT;
	cw->time.separator = -1;
}

/* How a window is spelled, said after every refusal of one. */
#define WINDOW_TIMES "90s, 10m, 1h30m, 1.5h, 7d, 1w"
#define WINDOW_SPELLINGS "keys: 1000keys, 10Mkeys; time: " WINDOW_TIMES

/*
 * A window of keys says "keys"; a window of time has lower-case units. A
 * bare number, or a count such as 10M, could mean either (ten million
 * keys, or ten minutes mistyped), so it is refused with both readings.
 */
void cli_window_size(struct cli_window *cw, const char *arg)
{
	size_t len = strlen(arg);
	const char *why;
	uint64_t n;

	if (len > 4 && strcmp(arg + len - 4, "keys") == 0) {
		char *count = strndup(arg, len - 4);
		int rc;

		if (count == NULL)
			cli_fatal("%s", strerror(errno));
		rc = numparse_count(count, 1, FILTER_M_MAX, &cw->wp.size, &why);
		free(count);
		if (rc < 0)
			cli_usage_error("invalid window '%s': %s (%s)", arg, why, WINDOW_SPELLINGS);
		cw->wp.kind = WINDOW_COUNT;
		return;
	}
	if (numparse_duration(arg, 1, WINDOW_SECONDS_MAX, &cw->wp.size, &why) == 0) {
		cw->wp.kind = WINDOW_TIME;
		return;
	}
	if (numparse_count(arg, 0, UINT64_MAX, &n, NULL) == 0)
		cli_usage_error("invalid window '%s': keys or time? say %skeys for keys, "
				"or a time in lower-case units (" WINDOW_TIMES ")", arg, arg);
	if (strcmp(why, NUMPARSE_DURATION_SHAPE) == 0)
		why = "neither keys nor time";
	cli_usage_error("invalid window '%s': %s (%s)", arg, why, WINDOW_SPELLINGS);
}

void cli_window_generations(struct cli_window *cw, const char *arg)
{
	cw->wp.generations = (unsigned)cli_count("generations", arg, WINDOW_GENERATIONS_MIN,
						 WINDOW_GENERATIONS_MAX);
}

void cli_window_time_field(struct cli_window *cw, const char *arg)
{
	cw->time.field = (unsigned long)cli_field_number("time field", arg, 1, UINT32_MAX);
}

void cli_window_bad_time(struct cli_window *cw, const char *arg)
{
	if (strcmp(arg, "skip") == 0)
		cw->skip_bad_time = 1;
	else if (strcmp(arg, "error") == 0)
		cw->skip_bad_time = 0;
	else
		cli_usage_error("invalid --bad-time '%s': expected error or skip", arg);
}

void cli_window_now(struct cli_window *cw, const char *arg)
{
	const char *why;

	if (numparse_time(arg, strlen(arg), &cw->now, &why) < 0)
		cli_usage_error("invalid --now '%s': %s", arg, why);
	cw->now_given = 1;
}

int cli_window_option(int c, const char *arg, struct cli_window *cw)
{
	switch (c) {
	case CLI_OPT_WINDOW: cli_window_size(cw, arg); return 1;
	case CLI_OPT_REFRESH: cw->wp.flags |= WINDOW_REFRESH; return 1;
	case CLI_OPT_GENERATIONS: cli_window_generations(cw, arg); break;
	case CLI_OPT_TIME_FIELD: cli_window_time_field(cw, arg); break;
	case CLI_OPT_BAD_TIME: cli_window_bad_time(cw, arg); break;
	case CLI_OPT_NOW: cli_window_now(cw, arg); break;
	default: return 0;
	}
	cw->shaped = 1;
	return 1;
}

void cli_window_finish(struct cli_window *cw, uint64_t capacity, double rate, int separator)
{
	struct window_params *wp = &cw->wp;
	const char *why;

	cw->time.separator = separator;
	if (wp->kind == 0)	/* a window may come from a file: cli_window_check_use */
		return;
	if (wp->kind == WINDOW_COUNT && (cw->time.field || cw->now_given))
		cli_usage_error("--time-field and --now need a time window (such as --window 10m)");
	if (wp->kind == WINDOW_COUNT && capacity != 0)
		cli_usage_error("-n sizes a time window; a count window is its own capacity");
	wp->expected = wp->kind == WINDOW_COUNT ? wp->size
			: capacity != 0 ? capacity : CLI_WINDOW_EXPECTED;
	wp->target_p = rate;
	if (wp->kind == WINDOW_TIME) {	/* recorded in the file: every later run keeps it */
		wp->clock = cw->time.field ? WINDOW_CLOCK_FIELD : WINDOW_CLOCK_WALL;
		wp->time_field = (uint32_t)cw->time.field;
	}
	if (window_params_check(wp, &why) < 0)
		cli_usage_error("invalid window: %s", why);
}

void cli_window_check_use(const struct cli_window *cw, const struct window *w)
{
	if (w == NULL && (cw->time.field || cw->skip_bad_time || cw->now_given ||
			  (cw->wp.flags & WINDOW_REFRESH) || cw->wp.generations != WINDOW_GENERATIONS_DEFAULT))
		cli_usage_error("--generations, --refresh, --time-field, --bad-time and --now need --window");
	if (w != NULL && w->wp.kind == WINDOW_COUNT && (cw->time.field || cw->now_given))
		cli_usage_error("--time-field and --now need a time window (such as --window 10m)");
}

uint64_t *cli_window_times(uint64_t **times, size_t *cap, size_t n)
{
	if (n > *cap) {
		size_t want = n > 2 * *cap ? n : 2 * *cap;
		uint64_t *p = realloc(*times, want * sizeof *p);

		if (p == NULL)
			cli_fatal("out of memory");
		*times = p;
		*cap = want;
	}
	return *times;
}

uint64_t cli_window_clock(const struct cli_window *cw)
{
	struct timespec ts;

	if (cw->now_given)
		return cw->now;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The time of one record: 0, or -1 with why (WINDOW_TIME_NONE when skipping). */
static int record_time(const struct cli_window *cw, struct line record, uint64_t *ms,
		       const char **why)
{
	struct line field;

	*why = "no such field";
	if (keys_field(&cw->time, record, &field) &&
	    numparse_time(field.data, field.len, ms, why) == 0)
		return 0;
	*ms = WINDOW_TIME_NONE;
	return cw->skip_bad_time ? 0 : -1;
}

size_t cli_window_record_times(const struct cli_window *cw, const struct line *records,
			       size_t n, uint64_t *times, uint64_t *skipped, char *why,
			       size_t why_len)
{
	const char *wrong;

	for (size_t r = 0; r < n; r++) {
		if (record_time(cw, records[r], &times[r], &wrong) < 0) {
			snprintf(why, why_len, "time field %lu: %s", cw->time.field, wrong);
			return r;
		}
		*skipped += times[r] == WINDOW_TIME_NONE;
	}
	return n;
}

struct window *cli_window_new(const struct cli_window *cw, const struct filter_params *shape)
{
	const char *why;
	struct window *w = window_new(&cw->wp, shape, &why);

	if (w == NULL)
		cli_fatal("cannot create the window: %s", cli_explain(why));
	return w;
}


void cli_window_agrees(const struct cli_window *cw, const struct window *w, const char *path)
{
	char want[48], have[48];

	if (cw->wp.kind == 0)
		return;
	if (cw->wp.kind != w->wp.kind || cw->wp.size != w->wp.size ||
	    cw->wp.generations != w->wp.generations || cw->wp.flags != w->wp.flags)
		cli_fatal("%s: a window of %s, %u generations%s, not the %s, %u generations%s asked for",
			  path, cli_window_describe(&w->wp, have), w->wp.generations,
			  w->wp.flags & WINDOW_REFRESH ? ", refreshed" : "",
			  cli_window_describe(&cw->wp, want), cw->wp.generations,
			  cw->wp.flags & WINDOW_REFRESH ? ", refreshed" : "");
}

/* "time field 2", "the wall clock": what a clock reads, in words. */
static const char *clock_words(enum window_clock clock, uint32_t field, char buf[48])
{
	if (clock == WINDOW_CLOCK_FIELD)
		snprintf(buf, 48, "time field %lu", (unsigned long)field);
	else
		snprintf(buf, 48, "the wall clock");
	return buf;
}

void cli_window_clock_agrees(const struct cli_window *cw, struct window *w, const char *path)
{
	enum window_clock asked = cw->time.field ? WINDOW_CLOCK_FIELD : WINDOW_CLOCK_WALL;
	char have[48], want[48];

	if (w->wp.kind != WINDOW_TIME)
		return;
	if (w->wp.clock == WINDOW_CLOCK_UNRECORDED) {	/* saved before clocks were recorded */
		w->wp.clock = asked;
		w->wp.time_field = (uint32_t)cw->time.field;
		return;
	}
	if (w->wp.clock == asked && w->wp.time_field == cw->time.field)
		return;
	if (w->wp.clock == WINDOW_CLOCK_FIELD)
		cli_fatal("%s: a window clocked by %s, not by %s as asked (give --time-field %lu)",
			  path, clock_words(w->wp.clock, w->wp.time_field, have),
			  clock_words(asked, (uint32_t)cw->time.field, want),
			  (unsigned long)w->wp.time_field);
	cli_fatal("%s: a window clocked by %s, not by %s as asked (leave out --time-field)", path,
		  clock_words(w->wp.clock, w->wp.time_field, have),
		  clock_words(asked, (uint32_t)cw->time.field, want));
}

/* A time in ms as RFC 3339 UTC, to the second. */
static const char *time_words(uint64_t ms, char buf[48])
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&secs, &tm) == NULL || strftime(buf, 48, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, 48, "%llu ms", (unsigned long long)ms);
	return buf;
}

uint64_t cli_window_read_time(const struct cli_window *cw, const struct window *w,
			      const char *path)
{
	char clock[48], at[48];
	uint64_t t;
	int held = 0;

	if (w->wp.kind != WINDOW_TIME)
		return w->clock;
	if (cw->now_given)
		t = cw->now;
	else
		t = window_read_time(w, w->wp.clock == WINDOW_CLOCK_FIELD ? 0 : cli_window_clock(cw));
	for (size_t g = 0; g < w->ngen; g++)
		held |= cascade_insertions(w->gen[g]) > 0;
	if (held && window_live_from(w, t) == w->ngen)
		cli_warn("%s: the window has expired everything it held: its clock is %s, read at %s (%s)",
			 cli_display_name(path), time_words(w->clock, clock), time_words(t, at),
			 cw->now_given ? "--now" : "the wall clock");
	return t;
}

void cli_save_window(const struct window *w, const char *path)
{
	const char *why;

	cli_progress_loading(path ? path : "(standard output)");
	if (path == NULL && format_save_window(w, STDOUT_FILENO, &why) < 0)
		cli_fatal("write error: %s", why);
	if (path != NULL && format_save_window_path(w, path, &why) < 0)
		cli_fatal("%s: %s", path, why);
	cli_progress_done();
}

const char *cli_window_describe(const struct window_params *wp, char buf[48])
{
	static const struct { char unit; uint64_t seconds; } units[] = {
		{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
	};

	if (wp->kind == WINDOW_COUNT) {
		snprintf(buf, 48, "%llu keys", (unsigned long long)wp->size);
		return buf;
	}
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (wp->size % units[i].seconds == 0) {
			snprintf(buf, 48, "%llu%c", (unsigned long long)(wp->size / units[i].seconds),
				 units[i].unit);
			break;
		}
	return buf;
}

/* cli_window_add_lines' state: the window, and each slot's keys and times. */
struct window_adding {
	struct window *w;
	const struct cli_window *cw;
	const struct key_spec *spec;
	const struct filter *hasher;
	struct cli_keys keys[CLI_SLOTS];
	uint64_t *record_times, *key_times;
	size_t record_times_cap, key_times_cap;
	struct owners *owners;	/* the window's regions on the pipeline's threads, or NULL */
	unsigned char *present[CLI_SLOTS];
	size_t present_cap[CLI_SLOTS];
	unsigned char in_regions[CLI_SLOTS];	/* split by region (owners_split_window) */
	struct cli_window_counts *counts;
};

static int adding_prepare(void *ctx, unsigned slot, const struct line *records, size_t n,
			  size_t *units)
{
	struct window_adding *a = ctx;

	a->keys[slot].cut_in_work = 1;	/* adding_hash only hashes */
	a->keys[slot].ready_later = a->owners != NULL;	/* the regions fetch their own lines */
	if (cli_keys_prepare(&a->keys[slot], a->spec, a->hasher, records, n) < 0)
		return -1;
	*units = a->keys[slot].set.count;
	return 0;
}

static void adding_hash(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct window_adding *a = ctx;

	cli_keys_hash(&a->keys[slot], a->hasher, from, to);
}

/* Calling thread, after hashing: the batch's adds shared out by region, unless it goes whole. */
static int adding_split(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct window_adding *a = ctx;
	struct cli_keys *k = &a->keys[slot];

	(void)records;
	(void)n;
	cli_keys_settle(k);
	a->in_regions[slot] = (unsigned char)owners_split_window(
		a->owners, slot, a->w, k->hashes, k->set.count, cli_window_clock(a->cw),
		cli_flags(&a->present[slot], &a->present_cap[slot], k->set.count));
	return a->in_regions[slot];
}

/* Any thread: one region's keys of the batch, after the same region of every batch before. */
static void adding_region(void *ctx, unsigned slot, unsigned region)
{
	struct window_adding *a = ctx;

	owners_region(a->owners, slot, region);
}

/*
 * Calling thread, before split or consume: the batch cut at its first
 * line not JSON or without a time (cli_stage.cut). The times are kept
 * for adding_consume, which comes next: keyed on each line's time, a
 * batch is never split.
 */
static size_t adding_cut(void *ctx, unsigned slot, const struct line *records, size_t n,
			 char *why, size_t why_len)
{
	struct window_adding *a = ctx;
	struct cli_keys *k = &a->keys[slot];
	size_t cut = cli_keys_cut(k, n, why, why_len), timed;

	if (!a->cw->time.field || a->w->wp.kind != WINDOW_TIME)
		return cut;
	timed = cli_window_record_times(a->cw, records, cut,
					cli_window_times(&a->record_times, &a->record_times_cap, n),
					&a->counts->bad_times, why, why_len);
	if (timed < cut)
		keyset_truncate(&k->set, timed);
	return timed;
}

static int adding_consume(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct window_adding *a = ctx;
	const struct cli_keys *k = &a->keys[slot];
	const uint64_t *times = NULL;
	const char *why;
	size_t fresh;

	(void)records;
	cli_keys_settle(&a->keys[slot]);
	(void)cli_bad_lines(&k->set);
	if (a->in_regions[slot]) {
		fresh = owners_finish(a->owners, slot);
		a->in_regions[slot] = 0;
		a->counts->lines += n;
		a->counts->keys += k->set.count;
		a->counts->fresh += fresh;
		return 0;
	}
	if (a->cw->time.field && a->w->wp.kind == WINDOW_TIME) {
		const uint64_t *rt = a->record_times;	/* adding_cut's */
		uint64_t *kt = cli_window_times(&a->key_times, &a->key_times_cap, k->set.count);

		for (size_t i = 0; i < k->set.count; i++)
			kt[i] = rt[k->set.record[i]];
		times = kt;
	}
	if (window_test_and_add_hashed(a->w, k->set.keys, a->hasher ? k->hashes : NULL,
				       k->set.count, times, cli_window_clock(a->cw),
				       cli_flags(&a->present[slot], &a->present_cap[slot], k->set.count),
				       &fresh, &why) < 0)
		cli_fatal("%s", cli_explain(why));
	a->counts->lines += n;
	a->counts->keys += k->set.count;
	a->counts->fresh += fresh;
	return 0;
}

int cli_window_add_lines(struct window *w, const struct cli_window *cw, const struct key_spec *spec,
			 char *const *inputs, int ninputs, char delim, struct cli_window_counts *counts)
{
	struct cli_stage stage = {
		.prepare = adding_prepare, .work = adding_hash, .consume = adding_consume,
		.cut = adding_cut,
	};
	struct window_adding a = { .w = w, .cw = cw, .spec = spec, .counts = counts };
	int status, threads;
	const char *why;

	/* an ordered run: its calling thread is the ceiling past 8 (pipeline.h) */
	pipeline_set_default_max(PIPELINE_THREADS_ORDERED_MAX);
	threads = pipeline_threads();

	memset(counts, 0, sizeof *counts);
	a.hasher = window_hasher(w);
	/* as bfuniq's: regions from 2 threads, when keys take the batch's time */
	if (threads >= 2 && a.hasher != NULL && owners_usable_window(w) && !cw->time.field)
		a.owners = owners_new((unsigned)threads, CLI_SLOTS, &why);
	if (a.owners != NULL) {
		stage.split = adding_split;
		stage.part = adding_region;
		stage.parts = (unsigned)threads;
	}
	status = cli_each_batch_ranged(inputs, ninputs, delim, &stage, &a);
	owners_free(a.owners);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		cli_keys_free(&a.keys[i]);
	free(a.record_times);
	free(a.key_times);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		free(a.present[i]);
	return status;
}
