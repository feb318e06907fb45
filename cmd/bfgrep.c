/* SPDX-License-Identifier: MIT */
/*
 * bfgrep - print the lines whose key may be in a Bloom filter.
 *
 * Like grep -F -x -f LIST, with the list replaced by one or more filter
 * files: no false negatives, false positives at the filters' rates, memory
 * the size of the filters whatever the size of the list. Each filter's
 * recorded key normalisation is applied to the keys tested against it.
 * Exit status as grep: 0 a line was selected, 1 none, 2 trouble.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cascade.h"
#include "filter.h"
#include "cli_window.h"
#include "keys.h"

static const char usage[] =
	"Usage: bfgrep -f FILTER [-f FILTER...] [-v] [-c] [-q] [-w] [-k N] [-t C] [-z] [--line-buffered] [--now T] [FILE...]\n"
	"Print the lines of FILEs (or standard input) whose key may be in a filter.\n"
	"\n"
	"  -f, --filter=FILTER   a filter file made by bfbuild (repeatable; - is stdin)\n"
	"  -v, --invert-match    print the lines whose key is surely in no filter\n"
	"  -c, --count           print only the number of selected lines\n"
	"  -q, --quiet, --silent print nothing; exit 0 at the first selected line\n"
	"  -w, --words           select a line if any word of its key is in a filter\n"
	"  -k, --field=N         key on the Nth field of each line\n"
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n"
	"  -z, --null-data       records end with NUL, not newline\n"
	"      --line-buffered   flush output after every line\n"
	"      --now=T           a windowed filter answers as of time T (default: now)\n"
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"Exit status: 0 if a line was selected, 1 if none, 2 on trouble.\n";

enum { OPT_LINE_BUFFERED = 256, OPT_NOW };

static const struct option long_options[] = {
	{ "filter", required_argument, NULL, 'f' },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "count", no_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "silent", no_argument, NULL, 'q' },
	{ "words", no_argument, NULL, 'w' },
	{ "field", required_argument, NULL, 'k' },
	{ "separator", required_argument, NULL, 't' },
	{ "null-data", no_argument, NULL, 'z' },
	{ "line-buffered", no_argument, NULL, OPT_LINE_BUFFERED },
	{ "now", required_argument, NULL, OPT_NOW },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	const char **filters;
	size_t nfilters;
	int invert, count, quiet, line_buffered;
	struct key_spec spec;
	struct cli_window win;	/* --now only */
	char delim;
	char **inputs;
	int ninputs;
};

static void parse_option(struct options *opt, int c, const char *arg)
{
	switch (c) {
	case 'f': opt->filters[opt->nfilters++] = arg; break;
	case 'v': opt->invert = 1; break;
	case 'c': opt->count = 1; break;
	case 'q': opt->quiet = 1; break;
	case 'w': opt->spec.words = 1; break;
	case 'k': cli_field_option(&opt->spec, arg); break;
	case 't': cli_separator_option(&opt->spec, arg); break;
	case 'z': opt->delim = '\0'; break;
	case OPT_LINE_BUFFERED: opt->line_buffered = 1; break;
	case OPT_NOW: cli_window_now(&opt->win, arg); break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default:
		if (!cli_common_option(c, arg))
			cli_usage_error("unknown option");
	}
}

static int reads_stdin(char *const *inputs, int n)
{
	if (n == 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (strcmp(inputs[i], "-") == 0)
			return 1;
	return 0;
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	size_t stdin_filters = 0;
	int c;

	memset(opt, 0, sizeof *opt);
	opt->spec.separator = -1;
	opt->delim = '\n';
	cli_window_init(&opt->win);
	/* every -f takes an argument, so there are fewer than argc of them */
	opt->filters = calloc((size_t)argc, sizeof *opt->filters);
	if (opt->filters == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	while ((c = cli_getopt(argc, argv, ":f:vcqwk:t:j:zhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	if (opt->nfilters == 0)
		cli_usage_error("no filter given (use -f FILTER)");
	stdin_filters = cli_stdin_uses((char *const *)opt->filters, opt->nfilters);
	if (stdin_filters > 1 || (stdin_filters && reads_stdin(opt->inputs, opt->ninputs)))
		cli_usage_error("standard input can be read only once (a filter or the input)");
}

/*
 * A batch's keys as the filters want them: folded for filters built with
 * -i, as they are for the others (the same keys in the same order, so one
 * index serves both), and per key whether any filter holds it.
 */
struct grep_slot {
	struct keyset keys[2];	/* [0] as read, [1] case-folded; built when some filter wants it */
	unsigned char *hit;
	size_t hit_cap;
};

struct grep {
	const struct options *opt;
	struct cascade **filters;	/* NULL where windows[j] is not */
	struct window **windows;	/* windowed filters (window.h) */
	uint64_t now;			/* the time windows answer as of, ms */
	int wants_fold[2];	/* some filter wants keys as read / folded */
	struct grep_slot slots[CLI_SLOTS];
	unsigned char *selected;
	size_t selected_cap;
	uint64_t matches;
	struct writer out;
};

static int filter_folds(const struct grep *g, size_t j)
{
	const struct filter_params *p = g->windows[j] ? window_params_of(g->windows[j])
						      : cascade_params(g->filters[j]);

	return (p->flags & FILTER_FOLD_CASE) != 0;
}

/* Filter j's answers for keys (hashes h, or NULL): a window's as of g->now. */
static void test_filter(const struct grep *g, size_t j, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present)
{
	/* the key, if kept outside, was supplied on loading: these cannot fail */
	if (g->windows[j])
		(void)window_test_hashed(g->windows[j], keys, h, n, g->now, present);
	else
		(void)cascade_test_hashed(g->filters[j], keys, h, n, present);
}

/* Reader thread: the keys each kind of filter wants, and room for the answers. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct grep *g = ctx;
	struct grep_slot *s = &g->slots[slot];
	size_t count = 0;

	for (int fold = 0; fold < 2; fold++) {
		struct key_spec spec = g->opt->spec;

		if (!g->wants_fold[fold])
			continue;
		spec.fold_case = fold;
		if (keyset_build(&s->keys[fold], &spec, records, n) < 0)
			return -1;
		count = s->keys[fold].count;
	}
	if (count > s->hit_cap) {
		unsigned char *bigger = realloc(s->hit, count);

		if (bigger == NULL)
			return -1;
		s->hit = bigger;
		s->hit_cap = count;
	}
	*units = count;
	return 0;
}

/* Either thread: the filters only answer questions, so any key at any time. */
static void test_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	enum { PIECE = 256 };
	struct grep *g = ctx;
	struct grep_slot *s = &g->slots[slot];
	unsigned char present[PIECE];
	uint64_t h[2 * PIECE];

	memset(s->hit + from, 0, to - from);
	for (size_t j = 0; j < g->opt->nfilters; j++) {
		const struct keyset *ks = &s->keys[filter_folds(g, j)];
		const struct filter *hasher = g->windows[j] ? window_hasher(g->windows[j])
							    : cascade_hasher(g->filters[j]);

		for (size_t i = from; i < to; i += PIECE) {
			size_t len = to - i < PIECE ? to - i : PIECE;

			/* a piece hashed at once: the SIMD lanes fill better than 32 at a time */
			if (hasher)
				filter_hash(hasher, ks->keys + i, len, h);
			test_filter(g, j, ks->keys + i, hasher ? h : NULL, len, present);
			for (size_t x = 0; x < len; x++)
				s->hit[i + x] |= present[x];
		}
	}
}

/* Calling thread, in input order: mark the records, write the selected. */
static int select_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct grep *g = ctx;
	const struct options *opt = g->opt;
	const struct grep_slot *s = &g->slots[slot];
	const struct keyset *ks = &s->keys[g->wants_fold[0] ? 0 : 1];

	memset(cli_flags(&g->selected, &g->selected_cap, n), 0, n);
	for (size_t i = 0; i < ks->count; i++)
		g->selected[ks->record[i]] |= s->hit[i];
	for (size_t r = 0; r < n; r++) {
		if (g->selected[r] == opt->invert)
			continue;
		g->matches++;
		if (opt->quiet)
			return 1;
		if (!opt->count && writer_record(&g->out, records[r], opt->delim) < 0)
			cli_write_error(errno);
	}
	return 0;
}

static int select_lines(struct grep *g)
{
	static const struct cli_stage stage = { prepare_keys, test_keys, select_batch };

	for (size_t j = 0; j < g->opt->nfilters; j++)
		g->wants_fold[filter_folds(g, j)] = 1;
	return cli_each_batch(g->opt->inputs, g->opt->ninputs, g->opt->delim, &stage, g);
}

static void print_count(struct grep *g)
{
	char text[32];
	int len = snprintf(text, sizeof text, "%llu\n", (unsigned long long)g->matches);

	if (writer_put(&g->out, text, (size_t)len) < 0)
		cli_write_error(errno);
}

static void release(struct grep *g, struct options *opt)
{
	for (size_t j = 0; j < opt->nfilters; j++) {
		cascade_free(g->filters[j]);
		window_free(g->windows[j]);
	}
	free(g->filters);
	free(g->windows);
	free(g->selected);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		keyset_free(&g->slots[i].keys[0]);
		keyset_free(&g->slots[i].keys[1]);
		free(g->slots[i].hit);
	}
	free(opt->filters);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct grep g = { 0 };
	int input_status, status;

	cli_init(argv[0]);
	cli_dcso_readable();	/* a DCSO file is only tested: nothing is saved */
	parse_options(&opt, argc, argv);
	g.opt = &opt;
	g.filters = calloc(opt.nfilters, sizeof *g.filters);
	g.windows = calloc(opt.nfilters, sizeof *g.windows);
	if (g.filters == NULL || g.windows == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	for (size_t j = 0; j < opt.nfilters; j++)
		cli_load_any(opt.filters[j], &g.filters[j], &g.windows[j], NULL);
	g.now = cli_window_clock(&opt.win);
	cli_stdout_init(&g.out, opt.line_buffered);
	input_status = select_lines(&g);
	if (opt.count && !opt.quiet)
		print_count(&g);
	cli_stdout_finish(&g.out);
	/* as grep: -q with a selected line is success whatever else happened */
	if (opt.quiet && g.matches > 0)
		status = 0;
	else if (input_status < 0)
		status = EXIT_TROUBLE;
	else
		status = g.matches > 0 ? 0 : EXIT_NONE;
	release(&g, &opt);
	return status;
}
