/* SPDX-License-Identifier: MIT */
/*
 * messages.c - how the programs speak: "PROG: WHAT: WHY" lines on stderr,
 * grep's exit codes, --help and --version, sizes in words.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter.h"
#include "pipeline.h"

const char *cli_progname = "bftools";

const char *cli_explain(const char *why)
{
	static char text[320];
	char need[32], limit[32], used[32];
	uint64_t bytes = filter_refused_bytes();

	if (why == filter_err_limit)
		snprintf(text, sizeof text,
			 "filter needs %s (%llu bytes), over the memory limit of %s with %s already in use (--max-memory or " MEMORY_ENV ")",
			 cli_human_bytes(bytes, need), (unsigned long long)bytes,
			 cli_human_bytes(filter_memory_limit(), limit),
			 cli_human_bytes(filter_memory_in_use(), used));
	else if (why == filter_err_nomem)
		snprintf(text, sizeof text, "cannot allocate %s (%llu bytes) for the filter: out of memory",
			 cli_human_bytes(bytes, need), (unsigned long long)bytes);
	else
		return why;
	return text;
}

static void vreport(const char *fmt, va_list ap)
{
	cli_progress_done();	/* a message never shares a line with progress */
	fprintf(stderr, "%s: ", cli_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

void cli_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	pipeline_halt();	/* called from consume: no other thread may run on in exit(3) */
	cli_stdout_halt();
	exit(EXIT_TROUBLE);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname);
	exit(EXIT_TROUBLE);
}


void cli_stdio_finish(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_write_error(errno);
}

void cli_help(const char *text)
{
	fputs(text, stdout);
	fputs(CLI_OPTIONS_RULE, stdout);
	cli_stdio_finish();
	exit(0);
}

void cli_version(void)
{
	printf("%s (bftools) %s\n"
	       "Copyright (C) 2026 the bftools developers.\n"
	       "License MIT: <https://opensource.org/licenses/MIT>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n",
	       cli_progname, BFTOOLS_VERSION);
	cli_stdio_finish();
	exit(0);
}

const char *cli_human_bytes(uint64_t bytes, char buf[32])
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	double value = (double)bytes;
	size_t u = 0;

	while (value >= 1000.0 && u + 1 < sizeof units / sizeof units[0]) {
		value /= 1000.0;
		u++;
	}
	snprintf(buf, 32, u == 0 ? "%.0f %s" : "%.1f %s", value, units[u]);
	return buf;
}
