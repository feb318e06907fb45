/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the progress line on stderr: lines, bytes and speed while
 * inputs are read, a bar with an ETA when their size is known, the share of
 * a filter file loaded or saved. Redrawn in place on a terminal, a line
 * per report elsewhere (--progress), throttled.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"

int cli_progress_mode = -1;
void (*cli_progress_detail)(char *buf, size_t len);

#define PROGRESS_INTERVAL 0.25	/* seconds between updates */
#define PROGRESS_DELAY 0.5	/* on a terminal, quick jobs show nothing */

static struct {
	int tty, drawn;
	double start, last;
	uint64_t lines, bytes, total;	/* total 0: size unknown */
	const char *label;		/* file being loaded or saved */
} progress;

double cli_seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether stderr is a terminal, asked once: a big load reports hundreds of steps. */
static int stderr_is_tty(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

static int progress_wanted(void)
{
	return cli_progress_mode == 1 || (cli_progress_mode < 0 && stderr_is_tty());
}

static void progress_start(uint64_t total, const char *label)
{
	progress.tty = stderr_is_tty();
	progress.start = progress.last = cli_seconds_now();
	progress.lines = progress.bytes = 0;
	progress.total = total;
	progress.label = label;
}

/* On a terminal the line is redrawn in place; elsewhere each is a new line. */
static void progress_show(const char *text)
{
	if (progress.tty)
		fprintf(stderr, "\r%s: %s\033[K", cli_progname, text);
	else
		fprintf(stderr, "%s: %s\n", cli_progname, text);
	progress.drawn = 1;
}

static void progress_finish(void)
{
	if (progress.drawn && progress.tty)
		fputs("\r\033[K", stderr);
	progress.drawn = 0;
}

static const char *human_count(uint64_t n, char buf[32])
{
	if (n < 10000)
		snprintf(buf, 32, "%llu", (unsigned long long)n);
	else if (n < 1000000)
		snprintf(buf, 32, "%.1fk", (double)n / 1e3);
	else if (n < UINT64_C(1000000000))
		snprintf(buf, 32, "%.1fM", (double)n / 1e6);
	else
		snprintf(buf, 32, "%.2fG", (double)n / 1e9);
	return buf;
}

/* " [=====>     ] 45% ETA 0:12" when the total is known, else "". */
static void progress_bar(char *out, size_t len, uint64_t done, uint64_t total, double elapsed)
{
	double share = total ? (double)done / (double)total : 0.0;
	char bar[21];
	int filled = (int)(share * 20.0), eta;

	if (total == 0 || done == 0) {
		*out = '\0';
		return;
	}
	if (share > 1.0)
		share = 1.0, filled = 20;
	memset(bar, ' ', 20);
	memset(bar, '=', (size_t)filled);
	bar[20] = '\0';
	eta = (int)(elapsed * (1.0 - share) / share);
	snprintf(out, len, " [%s] %3.0f%% ETA %d:%02d", bar, share * 100.0, eta / 60, eta % 60);
}

/* Whether to draw now: throttled, and on a terminal not before the delay. */
static int progress_due(int final)
{
	double now = cli_seconds_now();

	if (!progress_wanted())
		return 0;
	if (final)
		return progress.tty ? 0 : 1;
	if (now - progress.last < PROGRESS_INTERVAL ||
	    (progress.tty && now - progress.start < PROGRESS_DELAY))
		return 0;
	progress.last = now;
	return 1;
}

static void input_progress(int final)
{
	char text[256], lines[32], size[32], speed[32], bar[64], detail[96] = "";
	double elapsed = cli_seconds_now() - progress.start;
	double rate = elapsed > 0 ? (double)progress.bytes / elapsed : 0.0;

	if (!progress_due(final))
		return;
	if (cli_progress_detail)
		cli_progress_detail(detail, sizeof detail);
	progress_bar(bar, sizeof bar, progress.bytes, progress.total, elapsed);
	snprintf(text, sizeof text, "%s lines, %s (%s/s)%s%s%s", human_count(progress.lines, lines),
		 cli_human_bytes(progress.bytes, size), cli_human_bytes((uint64_t)rate, speed),
		 *detail ? ", " : "", detail, bar);
	progress_show(text);
}

/* format_progress_fn: share of a filter file loaded or saved. */
static void file_progress(void *ctx, int saving, uint64_t done, uint64_t total)
{
	char text[256], size[32], bar[64];
	double elapsed = cli_seconds_now() - progress.start;

	(void)ctx;
	if (!progress_due(done == total))
		return;
	progress_bar(bar, sizeof bar, done, total, elapsed);
	snprintf(text, sizeof text, "%s %s: %s%s", saving ? "saving" : "loading",
		 progress.label ? progress.label : "filter", cli_human_bytes(total, size), bar);
	progress_show(text);
}

/* Total size of the inputs when all are regular files, else 0. */
uint64_t cli_progress_inputs_size(char *const *paths, int npaths)
{
	uint64_t total = 0;
	struct stat st;

	for (int i = 0; i < npaths; i++) {
		int r = strcmp(paths[i], "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(paths[i], &st);

		if (r < 0 || !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

void cli_progress_file(const char *label)
{
	progress_start(0, label);
	format_set_progress(file_progress, NULL);
}

void cli_progress_loading(const char *name)
{
	cli_progress_file(name);
}

void cli_progress_done(void)
{
	progress_finish();
}

void cli_progress_inputs(uint64_t total)
{
	progress_start(total, NULL);
}

void cli_progress_set(uint64_t lines, uint64_t bytes)
{
	progress.lines = lines;
	progress.bytes = bytes;
}

void cli_progress_at(uint64_t lines, uint64_t bytes)
{
	cli_progress_set(lines, bytes);
	input_progress(0);
}

uint64_t cli_progress_lines(void)
{
	return progress.lines;
}

void cli_progress_inputs_end(void)
{
	input_progress(1);
	progress_finish();
}
