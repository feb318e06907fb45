/* SPDX-License-Identifier: MIT */
/*
 * store.c - filters and sketches loaded and saved with the programs'
 * messages and progress, DCSO filters in their own format, and the lock
 * that makes updates of one file take turns.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "dcso.h"
#include "format.h"
#include "layout.h"
#include "lock.h"
#include "sketch.h"
#include "sketch_file.h"
#include "stopwatch.h"

/*
 * Where path leads, for writing: *stream set when it is written in place
 * (a name of a descriptor, a device, a FIFO: atomic.h), so nothing is
 * renamed over it and nothing need be locked. In memory to free.
 */
static char *leads_to(const char *path, int *stream)
{
	struct stat st;
	int named;
	char *target = atomic_resolve(path, &named);

	if (target == NULL)
		cli_fatal("%s: %s", path, strerror(errno));
	*stream = named >= 0 || (stat(target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
	return target;
}

/* Who reads a bftop summary, said where one is given for another kind of file. */
#define CLI_SUMMARY_READERS "bftop -s, bfmerge and bfinfo read summaries"

void cli_check_destination(const char *path)
{
	int stream;
	char *target = leads_to(path, &stream);
	const char *slash = strrchr(target, '/');
	char dir[4096];

	if (stream) {	/* written through, never replaced: its directory does not matter */
		free(target);
		return;
	}
	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == target)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
	free(target);
	/* the new file is made beside where path leads and renamed over it */
	if (access(dir, W_OK | X_OK) < 0)
		cli_fatal("%s: cannot write here: %s", path, strerror(errno));
}

void cli_check_state(const char *path)
{
	int stream;

	free(leads_to(path, &stream));
	if (stream)
		cli_fatal("%s: not a regular file: a state is read, then replaced, which a device, a FIFO or a descriptor cannot be",
			  path);
	cli_check_destination(path);
}

/* ---- taking turns at updating a file ---------------------------------- */

#define LOCK_NOTICE_DELAY 1.0	/* seconds of waiting before saying so */

static struct lock update_lock = LOCK_INIT;

/*
 * Names that lead to one place (the same lock file) are one file whatever
 * is renamed over it meanwhile: comparing inodes alone, a concurrent
 * update renaming its new file in between the two stats made "s.hll" and
 * "s.hll" two files, so bfcount -s s.hll --add -o s.hll took no lock and
 * one job's keys were lost (locking.bats, under load). Inodes still tell
 * two names of one file (a hard link).
 */
int cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *la = lock_path(a), *lb = lock_path(b);
	int same = la != NULL && lb != NULL && strcmp(la, lb) == 0;

	free(la);
	free(lb);
	if (same)
		return 1;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether path is replaced by rename when saved: a regular file, or none yet. */
static int renamed_over(const char *path)
{
	int stream;

	if (strcmp(path, "-") == 0)
		return 0;
	free(leads_to(path, &stream));
	return !stream;
}

_Noreturn static void lock_failed(const char *path, const char *why)
{
	static char *lock_file;	/* static: still reachable at exit, for LeakSanitizer */

	lock_file = lock_path(path);
	if (lock_file == NULL)
		cli_fatal("%s: cannot lock it for updating: %s", path, why);
	cli_fatal("%s: cannot lock it for updating: %s: %s", path, lock_file, why);
}

void cli_lock_update(const char *path)
{
	const char *why;
	int r;

	if (update_lock.fd >= 0 || !renamed_over(path))
		return;
	r = lock_try(&update_lock, path, &why);
	if (r == 1 && cli_no_wait)
		cli_fatal("%s: another bftools process is updating it (--no-wait: not waiting)", path);
	if (r == 1)
		r = lock_wait(&update_lock, path, LOCK_NOTICE_DELAY, &why);
	if (r == 1) {
		cli_warn("%s: waiting for another bftools process to release it", path);
		r = lock_wait(&update_lock, path, -1.0, &why);
	}
	if (r < 0)
		lock_failed(path, why);
}

void cli_unlock(void)
{
	lock_release(&update_lock);
}

struct cascade *cli_load_filter(const char *path)
{
	const char *why;
	struct cascade *c;

	cli_progress_file(cli_display_name(path));
	c = format_load_path(path, &why);
	cli_progress_done();

	if (c == NULL && why == format_err_sketch)
		cli_fatal("%s: %s (bfcount -s, bfmerge and bfinfo read sketches)", cli_display_name(path), why);
	if (c == NULL && why == format_err_summary)
		cli_fatal("%s: %s (%s)", cli_display_name(path), why, CLI_SUMMARY_READERS);
	if (c == NULL)
		cli_fatal("%s: %s", cli_display_name(path), cli_explain(why));
	return cli_loaded_filter(c, path);
}

struct cascade *cli_loaded_filter(struct cascade *c, const char *path)
{
	const char *why;

	if (!layout_has(cascade_params(c)->layout, LAYOUT_FOREIGN)) {
		cli_apply_key_file(c, cli_display_name(path));
		return c;
	}
	if ((why = cli_dcso_unusable()) != NULL) {
		cascade_free(c);
		cli_fatal("%s: %s", cli_display_name(path), why);
	}
	return c;
}

static int warn_overfull;	/* cli_warn_overfull_loads */
static const struct cascade *warned_overfull;	/* the last filter warned about */

void cli_warn_overfull_loads(void)
{
	warn_overfull = 1;
}

int cli_warned_overfull(const struct cascade *c)
{
	return c != NULL && c == warned_overfull;
}

/*
 * A filter so full that its rate is over CLI_OVERFULL_FACTOR times what
 * it was made for answers "present" for much that it never saw: said once
 * as it is loaded, with the rate its bits give. The file stores that rate
 * (st, format.h); one written before it did has its bits read again.
 */
static void warn_if_overfull(const struct cascade *c, const char *name, const struct format_stats *st)
{
	int stored = st->stored && st->nstages == c->nstages;
	double rate = stored ? cascade_stats_fpr(c, st->stage) : cascade_current_fpr(c);
	char count[64];

	if (!(rate > CLI_OVERFULL_FACTOR * c->target_p))
		return;
	warned_overfull = c;
	cli_warn("%s: warning: filter over-full: false-positive rate %.3g at its fill, over %d times its target %g (%s, capacity %llu)",
		 name, rate, CLI_OVERFULL_FACTOR, c->target_p,
		 cli_distinct_keys(stored ? cascade_stats_estimate(c, st->stage) : cascade_estimate_count(c), count),
		 (unsigned long long)c->capacity);
}

void cli_load_any(const char *path, struct cascade **c, struct window **w, struct sketch **sk)
{
	static struct format_stats st;	/* large: a window's figures */
	const char *why = NULL, *name = cli_display_name(path);
	unsigned char key[16];
	int r;

	cli_progress_file(name);
	r = format_load_described_path(path, c, w, sk, FORMAT_BITS, &st, &why);
	if (r < 0 && why == format_err_sketch)
		cli_fatal("%s: %s (bfcount -s, bfmerge and bfinfo read sketches)", name, why);
	if (*c == NULL && why == format_err_summary)
		cli_fatal("%s: %s (%s)", name, why, CLI_SUMMARY_READERS);
	if (*c == NULL && (w == NULL || *w == NULL) && (sk == NULL || *sk == NULL))
		cli_fatal("%s: %s", name, cli_explain(why));
	cli_progress_done();
	if (sk != NULL && *sk != NULL) {
		cli_sketch_key(*sk, name, 0);
		return;
	}
	if (*c != NULL) {
		*c = cli_loaded_filter(*c, path);
		if (warn_overfull)
			warn_if_overfull(*c, name, &st);
		return;
	}
	if (cli_key_needed(window_params_of(*w), name, key) && window_supply_key(*w, key, &why) < 0)
		cli_fatal("%s: the key in %s is not this filter's key", name, cli_key_file);
}

struct format_reader *cli_open_filter(const char *path, struct cascade **shape, int *fd)
{
	const char *why;
	struct format_reader *r;

	*fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		cli_fatal("%s: %s", path, strerror(errno));
	cli_progress_file(cli_display_name(path));
	r = format_open(*fd, shape, &why);
	if (r == NULL && why == format_err_sketch)	/* bfmerge's first input was a filter */
		cli_fatal("%s: %s: sketches and filters cannot be merged", cli_display_name(path), why);
	if (r == NULL && why == format_err_summary)
		cli_fatal("%s: %s: summaries and filters cannot be merged", cli_display_name(path), why);
	if (r == NULL && why == format_err_windowed)	/* the first input was not windowed */
		cli_fatal("%s: a windowed filter (bfuniq --window): it merges only with windowed filters",
			  cli_display_name(path));
	if (r == NULL)
		cli_fatal("%s: %s", cli_display_name(path), why);
	return r;
}

void cli_warn_over_capacity(const struct cascade *c, double rate)
{
	char count[64];

	if (!(rate > CASCADE_OVER_CAPACITY_SLACK * c->target_p))
		return;
	cli_warn("warning: filter over capacity: estimated false-positive rate %.3g exceeds target %g (%s, capacity %llu)",
		 rate, c->target_p, cli_distinct_keys(cascade_estimate_count(c), count),
		 (unsigned long long)c->capacity);
}

static void save_filter(const struct cascade *f, const char *path)
{
	const char *why;

	if (path == NULL) {
		if (format_save(f, STDOUT_FILENO, &why) < 0)
			cli_fatal("write error: %s", why);
		return;
	}
	if (format_save_path(f, path, &why) < 0)
		cli_fatal("%s: %s", path, why);
}

/* A DCSO filter goes back in its own format, gzipped or not as it came. */
static void save_dcso(const struct cascade *c, const char *path)
{
	const char *why;

	if (path == NULL && dcso_save(c, STDOUT_FILENO, c->dcso_gzip, &why) < 0)
		cli_fatal("write error: %s", why);
	if (path != NULL && dcso_save_path(c, path, c->dcso_gzip, &why) < 0)
		cli_fatal("%s: %s", path, why);
}

void cli_save_filter(const struct cascade *f, const char *path)
{
	if (layout_has(cascade_params(f)->layout, LAYOUT_FOREIGN)) {	/* in its own format */
		save_dcso(f, path);
		return;
	}
	double since = stopwatch_now();

	cli_progress_file(path ? path : "(standard output)");
	save_filter(f, path);
	cli_progress_done();
	stopwatch_report("save", since);
}

struct sketch *cli_load_sketch(const char *path, int need_key)
{
	const char *why, *name = cli_display_name(path);
	struct sketch *s = sketch_load_path(path, &why);

	if (s == NULL && why == sketch_err_filter)
		cli_fatal("%s: %s (bfcount -f counts filters)", name, why);
	if (s == NULL && why == sketch_err_summary)
		cli_fatal("%s: %s (%s)", name, why, CLI_SUMMARY_READERS);
	if (s == NULL)
		cli_fatal("%s: %s", name, why);
	cli_sketch_key(s, name, need_key);
	return s;
}

void cli_sketch_difference(const struct sketch *a, const struct sketch *b, const char *what,
			   char *out, size_t len)
{
	if (strcmp(what, "precision") == 0)
		snprintf(out, len, "precision (%u vs %u)", sketch_precision(a), sketch_precision(b));
	else if (strcmp(what, "normalisation") == 0)
		snprintf(out, len, "normalisation (%s vs %s)",
			 a->flags & FILTER_FOLD_CASE ? "case folded" : "none",
			 b->flags & FILTER_FOLD_CASE ? "case folded" : "none");
	else
		snprintf(out, len, "%s", what);
}

void cli_save_sketch(const struct sketch *s, const char *path)
{
	const char *why;

	if (path == NULL && sketch_save(s, STDOUT_FILENO, &why) < 0)
		cli_fatal("write error: %s", why);
	if (path != NULL && sketch_save_path(s, path, &why) < 0)
		cli_fatal("%s: %s", path, why);
}
