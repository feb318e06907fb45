/* SPDX-License-Identifier: MIT */
/*
 * cli.c - the shared command-line layer of the bftools programs.
 *
 * Everything here either prints or exits, which is why it is not in lib/:
 * the library reports through return values and static messages, and this
 * file turns them into "PROG: WHAT: WHY" lines and grep's exit codes.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "format.h"
#include "lines.h"
#include "numparse.h"

const char *cli_progname = "bftools";

void cli_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');

	cli_progname = slash ? slash + 1 : progname;
	atomic_remove_on_signals();
}

static void vreport(const char *fmt, va_list ap)
{
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

/* The long option that name (len bytes, maybe an abbreviation) selects. */
static const struct option *long_option_named(const struct option *longopts, const char *name,
					      size_t len)
{
	const struct option *found = NULL;
	size_t matches = 0;

	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		if (strlen(o->name) == len)
			return o;
		found = o;
		matches++;
	}
	return matches == 1 ? found : NULL;	/* an ambiguous prefix selects nothing */
}

int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c == ':')
		cli_usage_error("option '%s' requires an argument", argv[optind - 1]);
	if (c != '?')
		return c;
	/* for long options optopt holds the option's code, not a letter */
	if (strncmp(argv[optind - 1], "--", 2) == 0) {
		const char *arg = argv[optind - 1], *equals = strchr(arg, '=');
		const struct option *o = equals ? long_option_named(longopts, arg + 2,
								    (size_t)(equals - arg - 2)) : NULL;

		if (o && o->has_arg == no_argument)
			cli_usage_error("option '--%s' doesn't allow an argument", o->name);
		cli_usage_error("unrecognized option '%s'", arg);
	}
	cli_usage_error("invalid option -- '%c'", optopt);
}

static void finish_stdio_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_write_error(errno);
}

void cli_help(const char *text)
{
	fputs(text, stdout);
	finish_stdio_stdout();
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
	finish_stdio_stdout();
	exit(0);
}

uint64_t cli_count(const char *option, const char *arg, uint64_t min, uint64_t max)
{
	const char *why;
	uint64_t value;

	if (numparse_count(arg, min, max, &value, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	return value;
}

double cli_rate(const char *option, const char *arg)
{
	const char *why;
	double value;

	if (numparse_rate(arg, &value, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	return value;
}

void cli_hex_key(const char *option, const char *arg, unsigned char key[16])
{
	const char *why;

	if (numparse_hex_key(arg, key, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
}

enum filter_layout cli_layout(const char *arg)
{
	if (strcmp(arg, "blocked") == 0)
		return FILTER_BLOCKED;
	if (strcmp(arg, "classic") == 0)
		return FILTER_CLASSIC;
	cli_usage_error("invalid layout '%s': expected 'blocked' or 'classic'", arg);
}

enum filter_hash cli_hash(const char *arg)
{
	if (strcmp(arg, "siphash13") == 0)
		return FILTER_SIPHASH_1_3;
	if (strcmp(arg, "siphash24") == 0)
		return FILTER_SIPHASH_2_4;
	cli_usage_error("invalid hash '%s': expected 'siphash13' or 'siphash24'", arg);
}

void cli_field_option(struct key_spec *spec, const char *arg)
{
	spec->field = (unsigned long)cli_count("field number", arg, 1, UINT32_MAX);
}

void cli_separator_option(struct key_spec *spec, const char *arg)
{
	if (strcmp(arg, "\\t") == 0)
		spec->separator = '\t';
	else if (strlen(arg) == 1)
		spec->separator = (unsigned char)arg[0];
	else
		cli_usage_error("invalid separator '%s': expected one character", arg);
}

static const char *display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "(standard input)" : path;
}

void cli_check_destination(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	/* the new file is made beside path and renamed over it */
	if (access(dir, W_OK | X_OK) < 0)
		cli_fatal("%s: cannot write here: %s", path, strerror(errno));
}

struct cascade *cli_load_filter(const char *path)
{
	const char *why;
	struct cascade *c = format_load_path(path, &why);

	if (c == NULL)
		cli_fatal("%s: %s", display_name(path), why);
	return c;
}

void cli_save_filter(const struct cascade *f, const char *path)
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

/* Feed one open descriptor's records to fn. 1 = stopped, 0 = done, -1 = error. */
static int each_batch_fd(int fd, const char *name, char delim, cli_batch_fn fn, void *ctx)
{
	struct line records[CLI_BATCH];
	struct lines_reader *r = lines_open(fd, delim);
	long n;
	int stop = 0;

	if (r == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	while (!stop && (n = lines_next_batch(r, records, CLI_BATCH)) > 0)
		stop = fn(ctx, records, (size_t)n);
	if (!stop && n < 0) {
		cli_warn("%s: %s", display_name(name), strerror(errno));
		stop = -1;
	}
	lines_close(r);
	return stop;
}

int cli_each_batch(char *const *paths, int npaths, char delim, cli_batch_fn fn, void *ctx)
{
	static char *const standard_input[] = { "-" };
	int status = 0;

	if (npaths == 0) {
		paths = standard_input;
		npaths = 1;
	}
	for (int i = 0; i < npaths; i++) {
		int is_stdin = strcmp(paths[i], "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(paths[i], O_RDONLY | O_CLOEXEC);
		int r;

		if (fd < 0) {
			cli_warn("%s: %s", paths[i], strerror(errno));
			status = -1;
			continue;
		}
		r = each_batch_fd(fd, paths[i], delim, fn, ctx);
		if (!is_stdin)
			close(fd);
		if (r == 1)
			return status;
		if (r < 0)
			status = -1;
	}
	return status;
}

void cli_stdout_init(struct writer *w, int line_buffered)
{
	if (writer_init(w, STDOUT_FILENO, 1 << 17) < 0)
		cli_fatal("%s", strerror(ENOMEM));
	w->line_buffered = line_buffered;
}

void cli_write_error(int err)
{
	cli_fatal("write error: %s", strerror(err));
}

void cli_stdout_finish(struct writer *w)
{
	if (writer_finish(w) < 0)
		cli_write_error(errno);
	finish_stdio_stdout();
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
