/* SPDX-License-Identifier: MIT */
/*
 * cli_window.h - what the programs that read windowed filters (window.h)
 * share: the --window, --generations, --time-field, --bad-time and --now
 * options, the time of each input record, and loading and saving either
 * kind of filter. Like cli.h it prints and exits; the window is lib's.
 */
#ifndef BFTOOLS_CLI_WINDOW_H
#define BFTOOLS_CLI_WINDOW_H

#include <stdint.h>

#include "cascade.h"
#include "keys.h"
#include "line.h"
#include "window.h"

/* Keys expected in a time window when -n is not given (first stages n / (G - 1)). */
#define CLI_WINDOW_EXPECTED 1000000u

/* The window options as given; kind 0 when --window was not. */
struct cli_window {
	struct window_params wp;	/* kind, size, generations, flags */
	struct key_spec time;		/* field 0: no --time-field (the wall clock) */
	int skip_bad_time;		/* --bad-time=skip */
	int now_given;
	uint64_t now;			/* --now, ms */
	int shaped;			/* --generations, --time-field, --bad-time or --now given */
};

/*
 * The window group: one table and one parser for the window options.
 * CLI_WINDOW_OPTIONS (--window, --generations, --time-field, --bad-time,
 * --now) for the programs that keep a window (bfbuild, bfuniq, bftop);
 * CLI_WINDOW_REFRESH_OPTION (--refresh) where a repeat can restart a key's
 * age (bfbuild, bfuniq); CLI_NOW_OPTION alone for a program that only
 * reads windows (bfgrep). Their --help lines: CLI_WINDOW_HELP,
 * CLI_WINDOW_REFRESH_HELP, CLI_NOW_HELP. cli_window_option handles each.
 */
enum {
	CLI_OPT_WINDOW = 1300, CLI_OPT_GENERATIONS, CLI_OPT_TIME_FIELD, CLI_OPT_BAD_TIME,
	CLI_OPT_NOW, CLI_OPT_REFRESH,
};
#define CLI_NOW_OPTION { "now", required_argument, NULL, CLI_OPT_NOW }
#define CLI_WINDOW_OPTIONS                                                   \
	{ "window", required_argument, NULL, CLI_OPT_WINDOW },              \
	{ "generations", required_argument, NULL, CLI_OPT_GENERATIONS },    \
	{ "time-field", required_argument, NULL, CLI_OPT_TIME_FIELD },      \
	{ "bad-time", required_argument, NULL, CLI_OPT_BAD_TIME },          \
	CLI_NOW_OPTION
#define CLI_WINDOW_REFRESH_OPTION { "refresh", no_argument, NULL, CLI_OPT_REFRESH }
#define CLI_NOW_HELP                                                         \
	"      --now=T           the time now, for a time window (default: the clock)\n"
#define CLI_WINDOW_HELP                                                      \
	"      --window=W        only the last W keys (10Mkeys) or W of time (90s, 10m,\n" \
	"                        1h30m, 1.5h, 7d, 1w; a bare number is refused)\n" \
	"      --generations=G   the window's generations, 2..64 (default 8; slack 1/(G-1))\n" \
	"      --time-field=F    a line's time is its Fth field (Unix seconds or RFC 3339)\n" \
	"      --bad-time=WHAT   a line whose time cannot be read: error (default) or skip\n" \
	CLI_NOW_HELP
#define CLI_WINDOW_REFRESH_HELP                                              \
	"      --refresh         a repeat within the window restarts its key's age\n"

/* Handle an option of the window group into cw; 1 when c was one. */
int cli_window_option(int c, const char *arg, struct cli_window *cw);

/* Defaults: no window, G = 8, the wall clock. */
void cli_window_init(struct cli_window *cw);
/* --window ARG: a count ("1e7", "10M") or a duration ("90s", "10m", "24h", "7d"). */
void cli_window_size(struct cli_window *cw, const char *arg);
void cli_window_generations(struct cli_window *cw, const char *arg);
void cli_window_time_field(struct cli_window *cw, const char *arg);
void cli_window_bad_time(struct cli_window *cw, const char *arg);
void cli_window_now(struct cli_window *cw, const char *arg);

/*
 * After option parsing: the window's expected keys (capacity, 0 when -n
 * was not given) and rate; checks that the options agree.
 */
void cli_window_finish(struct cli_window *cw, uint64_t capacity, double rate, int separator);

/* The time of now: --now, else the wall clock, in ms. */
uint64_t cli_window_clock(const struct cli_window *cw);

/*
 * times[r] for records[0..n) of a batch: each record's time field in ms.
 * With --bad-time=skip one that cannot be read is WINDOW_TIME_NONE, and
 * *skipped grows. Returns the number of records before the first whose
 * time cannot be read (--bad-time=error), with what is wrong in why; n
 * when all can: a cli_stage's cut (cli.h).
 */
size_t cli_window_record_times(const struct cli_window *cw, const struct line *records,
			       size_t n, uint64_t *times, uint64_t *skipped, char *why,
			       size_t why_len);

/* Grow-on-demand array of n times (cli_flags' sibling). Fatal when out of memory. */
uint64_t *cli_window_times(uint64_t **times, size_t *cap, size_t n);

/*
 * After the filter is known: the time options must suit what was loaded
 * (w NULL: a plain filter; a count window takes no times). Usage error if not.
 */
void cli_window_check_use(const struct cli_window *cw, const struct window *w);

/* A new, empty window of cw's plan with the shape's layout, hash and key. */
struct window *cli_window_new(const struct cli_window *cw, const struct filter_params *shape);

/* State loaded from path must be the window cw asks for (when it asks); fatal if not. */
void cli_window_agrees(const struct cli_window *cw, const struct window *w, const char *path);

/*
 * A run that adds to w, loaded from path: its clock (--time-field F, or
 * the wall clock or --now) must be the one w records (window.h), else
 * fatal, naming both. A window that recorded none takes this run's.
 */
void cli_window_clock_agrees(const struct cli_window *cw, struct window *w, const char *path);

/*
 * The time at which every program reads w (loaded from path): a count
 * window at its clock; a time window at --now when given, else at its
 * own clock when that is read from a time field, else at the wall
 * clock. When w held keys and none of it is live then, says so on
 * stderr, once.
 */
uint64_t cli_window_read_time(const struct cli_window *cw, const struct window *w,
			      const char *path);

/* Save a window to path atomically, or to stdout when path is NULL. */
void cli_save_window(const struct window *w, const char *path);

/*
 * Test-and-add the keys of the inputs (as cli_each_batch reads them) into
 * w, with their times as cw says; counts what was read. Returns
 * cli_each_batch's status.
 */
struct cli_window_counts {
	uint64_t lines, keys, fresh, bad_times;
};
int cli_window_add_lines(struct window *w, const struct cli_window *cw, const struct key_spec *spec,
			 char *const *inputs, int ninputs, char delim, struct cli_window_counts *counts);

/* "7d", "90s", "10000000 keys": how a window is shown. */
const char *cli_window_describe(const struct window_params *wp, char buf[48]);

#endif
