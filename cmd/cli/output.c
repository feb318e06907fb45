/* SPDX-License-Identifier: MIT */
/*
 * output.c - standard output through a writer, a write error fatal
 * (a full disk is an error, not silent loss), per-batch flag arrays, and
 * distinct-key estimates in words (never "inf").
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_stdout_init(struct writer *w, int line_buffered)
{
	if (writer_init(w, STDOUT_FILENO, 1 << 17) < 0)
		cli_fatal("%s", strerror(ENOMEM));
	w->line_buffered = line_buffered;
}

/* stdout's writer while it writes on a thread of its own, for cli_stdout_halt */
static struct writer *async_out;

void cli_stdout_async(struct writer *w)
{
	/* if the thread cannot start, output stays on this thread: the same bytes */
	if (!w->line_buffered && pipeline_threads() >= CLI_ASYNC_THREADS && writer_async(w) == 0)
		async_out = w;
}

void cli_stdout_halt(void)
{
	if (async_out != NULL)
		writer_sync(async_out);
	async_out = NULL;
}

static const char *kept_path, *kept_holds;

void cli_write_error_keeps(const char *path, const char *holds)
{
	kept_path = path;
	kept_holds = holds;
}

void cli_write_error(int err)
{
	if (kept_path != NULL)
		cli_fatal("write error: %s (%s not saved: it holds %s)", strerror(err), kept_path,
			  kept_holds);
	cli_fatal("write error: %s", strerror(err));
}

void cli_stdout_finish(struct writer *w)
{
	if (w == async_out)
		async_out = NULL;
	if (writer_finish(w) < 0)
		cli_write_error(errno);
	cli_stdio_finish();
}

const char *cli_distinct_keys(double estimate, char text[64])
{
	if (!isfinite(estimate))
		return "every bit set: too many keys to estimate";
	snprintf(text, 64, "about %.0f distinct keys", estimate);
	return text;
}

unsigned char *cli_flags(unsigned char **flags, size_t *cap, size_t n)
{
	if (n > *cap) {
		unsigned char *grown = realloc(*flags, n);

		if (grown == NULL)
			cli_fatal("%s", strerror(ENOMEM));
		*flags = grown;
		*cap = n;
	}
	return *flags;
}
