/* SPDX-License-Identifier: MIT */
/*
 * output.c - standard output through a writer, a write error fatal
 * (a full disk is an error, not silent loss), and per-batch flag arrays.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_stdout_init(struct writer *w, int line_buffered)
{
	if (writer_init(w, STDOUT_FILENO, 1 << 17) < 0)
		cli_fatal("%s", strerror(ENOMEM));
	w->line_buffered = line_buffered;
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
	if (writer_finish(w) < 0)
		cli_write_error(errno);
	cli_stdio_finish();
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
