/* SPDX-License-Identifier: MIT */
/*
 * options.c - option values, the options every program takes (-j,
 * --max-memory, --progress, --key-file, --no-wait), the report group
 * (--json, --report=json), and getopt_long with
 * GNU's messages. A bad value is a usage error, exit 2, and so is a value
 * option given twice: the one place that rule lives for every program.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "filter.h"
#include "layout.h"
#include "numparse.h"
#include "pipeline.h"

int cli_no_wait;		/* --no-wait */
int cli_decompress = 1;		/* not --no-decompress */

#define THREADS_ENV "BFTOOLS_THREADS"

static const char *memory_env;	/* BFTOOLS_MAX_MEMORY, until applied */
static int threads_option;	/* -j was given */
static int memory_option;	/* --max-memory was given */
static const char *repeatable;	/* the letters of value options that may repeat */

/* A memory size: SI units, as bfinfo and -v print them (1G = 1e9 bytes). */
static uint64_t memory_size(const char *what, const char *arg)
{
	const char *why;
	uint64_t bytes;

	if (numparse_count(arg, 1, UINT64_MAX, &bytes, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", what, arg, why);
	return bytes;
}

void cli_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');
	const char *limit = getenv(MEMORY_ENV);

	cli_progname = slash ? slash + 1 : progname;
	atomic_remove_on_signals();
	memory_env = limit;
}

/*
 * The environment's limit applies once the options are read, so that a bad
 * value does not stand in the way of --help, and --max-memory overrides it.
 */
static void apply_memory_env(void)
{
	if (memory_env && *memory_env && filter_memory_limit() == 0 && !memory_option)
		filter_set_memory_limit(memory_size(MEMORY_ENV, memory_env));
	memory_env = NULL;
}

/* -j N, or BFTOOLS_THREADS (what names it in the message). */
static int thread_count(const char *what, const char *arg)
{
	const char *why;
	int threads;

	if (pipeline_parse_threads(arg, &threads, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", what, arg, why);
	return threads;
}

/*
 * Like the memory limit: a bad BFTOOLS_THREADS is refused once the options
 * are read (not silently ignored, as a typo would cost a run's speed
 * unnoticed), unless -j overrides it. An empty one is unset.
 */
static void apply_threads_env(void)
{
	const char *env = getenv(THREADS_ENV);

	if (!threads_option && env && *env)
		pipeline_set_threads(thread_count(THREADS_ENV, env));
}

int cli_common_option(int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_THREADS:
		pipeline_set_threads(thread_count("thread count", arg));
		threads_option = 1;
		return 1;
	case CLI_OPT_MAX_MEMORY:
		filter_set_memory_limit(memory_size("memory limit", arg));
		memory_option = 1;
		return 1;
	case CLI_OPT_PROGRESS:
		cli_progress_mode = 1;
		return 1;
	case CLI_OPT_NO_PROGRESS:
		cli_progress_mode = 0;
		return 1;
	case CLI_OPT_KEY_FILE:
		cli_key_file = arg;
		return 1;
	case CLI_OPT_NO_WAIT:
		cli_no_wait = 1;
		return 1;
	default:
		return 0;
	}
}

void cli_no_wait_needs(int updates, const char *needs)
{
	if (cli_no_wait && !updates)
		cli_usage_error("--no-wait needs %s: without it no file is updated in place", needs);
}

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

void cli_repeatable_options(const char *letters)
{
	repeatable = letters;
}

/*
 * How a message names option c: "-o" when it has a letter, else "--name";
 * NULL when c takes no value (a flag given twice is the flag given).
 */
static const char *value_option_name(int c, const char *optstring, const struct option *longopts)
{
	static char letter[3];
	const char *in = c > 0 && c < 256 && c != ':' ? strchr(optstring, c) : NULL;

	if (in != NULL) {
		if (in[1] != ':')
			return NULL;
		letter[0] = '-';
		letter[1] = (char)c;
		return letter;
	}
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c && o->flag == NULL)
			return o->has_arg == required_argument ? o->name : NULL;
	return NULL;
}

/*
 * A value option given twice is refused, not the last one kept in
 * silence (bfbuild -o a.bf -o b.bf wrote only b.bf), unless the program
 * said it may repeat (cli_repeatable_options: bfgrep -f, bftop -s).
 */
static void refuse_repeated(int c, const char *optstring, const struct option *longopts)
{
	static int seen[128];
	static size_t nseen;
	const char *name = value_option_name(c, optstring, longopts);

	if (name == NULL || (c > 0 && c < 256 && repeatable != NULL && strchr(repeatable, c)))
		return;
	for (size_t i = 0; i < nseen; i++)
		if (seen[i] == c)
			cli_usage_error("%s%s given twice: it takes one value", name[0] == '-' ? "" : "--",
					name);
	if (nseen < sizeof seen / sizeof seen[0])
		seen[nseen++] = c;
}

int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c == -1) {
		apply_memory_env();
		apply_threads_env();
	}
	if (c == ':')
		cli_usage_error("option '%s' requires an argument", argv[optind - 1]);
	if (c != '?' && c != -1)
		refuse_repeated(c, optstring, longopts);
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

uint64_t cli_count(const char *option, const char *arg, uint64_t min, uint64_t max)
{
	const char *why;
	uint64_t value;

	if (numparse_count(arg, min, max, &value, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	return value;
}

static int report_json;

int cli_report_option(int c, const char *arg)
{
	if (c != CLI_OPT_REPORT && c != CLI_OPT_REPORT_JSON)
		return 0;
	if (c == CLI_OPT_REPORT && strcmp(arg, "json") != 0)
		cli_usage_error("invalid --report '%s': expected json", arg);
	report_json = 1;
	return 1;
}

int cli_reports_json(void)
{
	return report_json;
}

void cli_report_object(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputc('{', stderr);
	vfprintf(stderr, fmt, ap);
	fputs("}\n", stderr);
	va_end(ap);
}

uint64_t cli_field_number(const char *option, const char *arg, uint64_t min, uint64_t max)
{
	if (arg[strspn(arg, "0123456789")] != '\0')
		cli_usage_error("invalid %s '%s': a field number is a plain integer "
				"(1, 2, 3, ...; no suffix, fraction or exponent)", option, arg);
	return cli_count(option, arg, min, max);
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
	const struct layout_ops *l = layout_named(arg);

	/* the layouts of bits saved in the bftools format */
	if (l != NULL && (l->traits & LAYOUT_SAVED) && !(l->traits & LAYOUT_COUNTERS))
		return l->id;
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
	const char *why = NULL;

	cli_field_text = arg;
	fieldlist_free(spec->fields);
	spec->fields = NULL;
	/* one item that starts like a number is read (and refused) as one */
	if (strpbrk(arg, ",-") == NULL && arg[0] >= '0' && arg[0] <= '9')
		spec->field = (unsigned long)cli_field_number("field number", arg, 1, UINT32_MAX - 1);
	else {
		errno = 0;	/* ENOMEM after: trouble, not a usage error */
		spec->fields = fieldlist_parse(arg, &spec->field, &why);
		if (spec->fields == NULL && errno == ENOMEM)
			cli_fatal("%s", strerror(ENOMEM));
		if (spec->fields == NULL && why)
			cli_usage_error("invalid field list '%s': %s", arg, why);
	}
	if (spec->fields)
		spec->field = 0;
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

const char *cli_display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "(standard input)" : path;
}

size_t cli_stdin_uses(char *const *paths, size_t n)
{
	size_t uses = 0;

	for (size_t i = 0; i < n; i++)
		uses += strcmp(paths[i], "-") == 0;
	return uses;
}
