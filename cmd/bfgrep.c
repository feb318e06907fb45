/* SPDX-License-Identifier: MIT */
/*
 * bfgrep - print the lines whose key may be in a Bloom filter.
 *
 * Like grep -F -x -f LIST, with the list replaced by one or more filter
 * files: no false negatives, false positives at the filters' rates, memory
 * the size of the filters whatever the size of the list. Each filter's
 * recorded key normalisation is applied to the keys tested against it.
 * Exit status as grep: 0 a line was selected, 1 none, 2 trouble.
 *
 * grep's output options mean what they mean in grep (-c -l -L -q -o -n
 * -H -h -m -s -Z -r --label), compared byte for byte with GNU grep in the
 * tests. Everything per input (line numbers, counts, names, -m) is kept
 * in struct grep_input, reset at each input's begin and answered at its
 * end (cli_each_input), which arrive in input order whichever thread read
 * the batches.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_fields.h"
#include "cascade.h"
#include "filter.h"
#include "cli_window.h"
#include "keys.h"

static const char usage[] =
	"Usage: bfgrep -f FILTER [-f FILTER...] [-v] [-c|-l|-L|-q] [-w] [-o] [-n] [-H|-h] [-m NUM] [-s] [-Z] [-r] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-z] [--label=LABEL] [--line-buffered] [--now T] [FILE...]\n"
	"Print the lines of FILEs (or standard input) whose key may be in a filter.\n"
	"\n"
	"  -f, --filter=FILTER   a filter file made by bfbuild (repeatable; - is stdin)\n"
	"  -v, --invert-match    print the lines whose key is surely in no filter\n"
	"  -c, --count           print only the number of selected lines, per FILE\n"
	"  -l, --files-with-matches\n"
	"                        print only the names of FILEs with a selected line\n"
	"  -L, --files-without-match\n"
	"                        print only the names of FILEs without one\n"
	"  -q, --quiet, --silent print nothing; exit 0 at the first selected line\n"
	"  -w, --words, --word-regexp\n"
	"                        select a line if any word of its key is in a filter\n"
	"  -o, --only-matching   print only the key (with -w: each word in a filter)\n"
	"  -n, --line-number     put the line number before each line\n"
	"  -H, --with-filename   put the file name before each line (default: with\n"
	"                        several FILEs)\n"
	"  -h, --no-filename     never put file names before lines\n"
	"  -m, --max-count=NUM   stop reading a FILE after NUM selected lines\n"
	"  -s, --no-messages     say nothing about FILEs that cannot be read\n"
	"  -Z, --null            end file names with NUL, not ':' or newline\n"
	"      --label=LABEL     the name of standard input in the output\n"
	"  -r, --recursive       search the files under directories (no FILE: .)\n"
	CLI_KEY_HELP
	"      --line-buffered   flush output after every line\n"
	CLI_NOW_HELP
	CLI_FORMAT_HELP
	CLI_COMMON_HELP
	"      --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"Exit status: 0 if a line was selected, 1 if none, 2 on trouble.\n";

enum { OPT_LINE_BUFFERED = 256, OPT_LABEL, OPT_HELP };

static const struct option long_options[] = {
	{ "filter", required_argument, NULL, 'f' },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "count", no_argument, NULL, 'c' },
	{ "files-with-matches", no_argument, NULL, 'l' },
	{ "files-without-match", no_argument, NULL, 'L' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "silent", no_argument, NULL, 'q' },
	CLI_KEY_WORDS_OPTION,
	{ "word-regexp", no_argument, NULL, 'w' },
	{ "only-matching", no_argument, NULL, 'o' },
	{ "line-number", no_argument, NULL, 'n' },
	{ "with-filename", no_argument, NULL, 'H' },
	{ "no-filename", no_argument, NULL, 'h' },
	{ "max-count", required_argument, NULL, 'm' },
	{ "no-messages", no_argument, NULL, 's' },
	{ "null", no_argument, NULL, 'Z' },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "recursive", no_argument, NULL, 'r' },
	{ "line-buffered", no_argument, NULL, OPT_LINE_BUFFERED },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, 'V' },
	CLI_KEY_OPTIONS,
	CLI_KEY_JSON_RENAMED_OPTION,
	CLI_NOW_OPTION,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

/* -l and -L: what is printed of an input is its name, or nothing. */
enum list_files { LIST_NONE, LIST_MATCHING, LIST_NONMATCHING };

struct options {
	const char **filters;
	size_t nfilters;
	int invert, count, quiet, line_buffered;
	int with_filename;	/* -1 until decided: names when there are several FILEs */
	int line_number, only_matching, null_after_name, no_messages, recursive;
	enum list_files list;
	uint64_t max_count;	/* selected lines per FILE; UINT64_MAX: no limit */
	const char *label;	/* the name of standard input */
	struct cli_keys_given keys;	/* -w among them */
	struct cli_window win;	/* --now only */
	char **inputs;
	int ninputs;
};

static void parse_option(struct options *opt, int c, const char *arg)
{
	if (cli_key_option(c, arg, &opt->keys) || cli_window_option(c, arg, &opt->win) ||
	    cli_common_option(c, arg))
		return;
	switch (c) {
	case 'f': opt->filters[opt->nfilters++] = arg; break;
	case 'v': opt->invert = 1; break;
	case 'c': opt->count = 1; break;
	case 'l': opt->list = LIST_MATCHING; break;
	case 'L': opt->list = LIST_NONMATCHING; break;
	case 'q': opt->quiet = 1; break;
	case 'o': opt->only_matching = 1; break;
	case 'n': opt->line_number = 1; break;
	case 'H': opt->with_filename = 1; break;
	case 'h': opt->with_filename = 0; break;
	case 'm': opt->max_count = cli_count("max count", arg, 0, UINT64_MAX); break;
	case 's': opt->no_messages = 1; break;
	case 'Z': opt->null_after_name = 1; break;
	case OPT_LABEL: opt->label = arg; break;
	case 'r': opt->recursive = 1; break;
	case OPT_LINE_BUFFERED: opt->line_buffered = 1; break;
	case OPT_HELP: cli_help(usage);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

static int reads_stdin(char *const *inputs, int n, int recursive)
{
	if (n == 0)
		return !recursive;	/* -r with no FILE searches . */
	for (int i = 0; i < n; i++)
		if (strcmp(inputs[i], "-") == 0)
			return 1;
	return 0;
}

/* Whether names go before lines by default: as grep, when there may be several files. */
static int several_files(const struct options *opt)
{
	struct stat st;

	if (opt->ninputs > 1 || (opt->recursive && opt->ninputs == 0))
		return 1;
	/* -r with one FILE: names if it is a directory */
	return opt->recursive && opt->ninputs == 1 && stat(opt->inputs[0], &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void write_header(void *ctx, struct line header);

static void parse_options(struct options *opt, int argc, char **argv)
{
	size_t stdin_filters = 0;
	int c;

	memset(opt, 0, sizeof *opt);
	cli_key_options_init(&opt->keys);
	opt->with_filename = -1;
	opt->max_count = UINT64_MAX;
	cli_window_init(&opt->win);
	/* every -f takes an argument, so there are fewer than argc of them */
	opt->filters = calloc((size_t)argc, sizeof *opt->filters);
	if (opt->filters == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	cli_repeatable_options("f");	/* filters: a line is selected if in any */
	while ((c = cli_getopt(argc, argv, ":" CLI_KEY_LETTERS "f:vclLqwonHhm:sZrj:V", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	cli_key_options_finish(&opt->keys, write_header);
	if (opt->with_filename < 0)
		opt->with_filename = several_files(opt);
	if (opt->nfilters == 0)
		cli_usage_error("no filter given (use -f FILTER)");
	stdin_filters = cli_stdin_uses((char *const *)opt->filters, opt->nfilters);
	if (stdin_filters > 1 ||
	    (stdin_filters && reads_stdin(opt->inputs, opt->ninputs, opt->recursive)))
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
	uint64_t count;		/* read in ranges: lines selected, not yet the input's */
};

/* The input being read: what -c, -l, -L, -m and the prefixes need. */
struct grep_input {
	const char *name;	/* as the output names it: the label, or name_copy */
	char *name_copy;	/* the path lasts only during begin (cli.h) */
	size_t name_cap;
	uint64_t lines;		/* read before the batch at hand */
	uint64_t selected;
};

struct grep {
	const struct options *opt;
	struct cascade **filters;	/* NULL where windows[j] is not */
	struct window **windows;	/* windowed filters (window.h) */
	uint64_t *now;			/* the time window j answers as of, ms */
	int wants_fold[2];	/* some filter wants keys as read / folded */
	struct grep_slot slots[CLI_SLOTS];
	unsigned char *selected;
	size_t selected_cap;
	uint64_t matches;	/* over all inputs */
	struct grep_input input;
	struct writer out;
};

static int filter_folds(const struct grep *g, size_t j)
{
	const struct filter_params *p = g->windows[j] ? window_params_of(g->windows[j])
						      : cascade_params(g->filters[j]);

	return (p->flags & FILTER_FOLD_CASE) != 0;
}

/* Filter j's answers for keys (hashes h, or NULL): a window's as of g->now[j]. */
static void test_filter(const struct grep *g, size_t j, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present)
{
	/* the key, if kept outside, was supplied on loading: these cannot fail */
	if (g->windows[j])
		(void)window_test_hashed(g->windows[j], keys, h, n, g->now[j], present);
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
		struct key_spec spec = g->opt->keys.spec;

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

static void put(struct grep *g, const void *data, size_t len)
{
	if (writer_put(&g->out, data, len) < 0)
		cli_write_error(errno);
}

static void put_record(struct grep *g, struct line record, char delim)
{
	if (writer_record(&g->out, record, delim) < 0)
		cli_write_error(errno);
}

/* "NAME:", or "NAME\0" with -Z, when names are wanted (-H). */
static void put_name(struct grep *g)
{
	if (!g->opt->with_filename)
		return;
	put(g, g->input.name, strlen(g->input.name));
	put(g, g->opt->null_after_name ? "" : ":", 1);
}

/* What goes before a line: the name, then "LINE:" with -n. */
static void put_prefix(struct grep *g, uint64_t line)
{
	put_name(g);
	if (g->opt->line_number) {
		char text[32];
		int len = snprintf(text, sizeof text, "%llu:", (unsigned long long)line);

		put(g, text, (size_t)len);
	}
}

/*
 * -o: the keys of record r that are in a filter, each on a line of its own
 * (the record's one key, or with -w its words). *k is the first key of r
 * or later; keys come in record order.
 */
static void put_matches(struct grep *g, const struct grep_slot *s, const struct keyset *ks,
			size_t r, size_t *k, uint64_t line)
{
	for (; *k < ks->count && ks->record[*k] == r; ++*k) {
		if (!s->hit[*k])
			continue;
		put_prefix(g, line);
		put_record(g, ks->keys[*k], g->opt->keys.delim);
	}
}

/* One selected line: what to print, and whether to read on (0), skip the input or stop. */
static int take_line(struct grep *g, const struct grep_slot *s, const struct keyset *ks,
		     struct line record, size_t r, size_t *k)
{
	const struct options *opt = g->opt;
	uint64_t line = cli_batch_line(r);	/* counts lines --shard took out */

	g->matches++;
	g->input.selected++;
	if (opt->quiet)
		return 1;
	if (opt->list != LIST_NONE)
		return CLI_SKIP_INPUT;	/* the answer for this input is known */
	if (opt->only_matching && !opt->count && !opt->invert)
		put_matches(g, s, ks, r, k, line);
	else if (!opt->count && !opt->only_matching) {
		put_prefix(g, line);
		put_record(g, record, opt->keys.delim);
	}
	return g->input.selected >= opt->max_count ? CLI_SKIP_INPUT : 0;
}

/*
 * --header: each input's header goes out before its lines, prefixed as they
 * are, when lines go out (not with -c, -l, -L, -q or -o). It is line 1.
 */
static void write_header(void *ctx, struct line header)
{
	struct grep *g = ctx;
	const struct options *opt = g->opt;

	g->input.lines = 1;
	if (opt->quiet || opt->count || opt->list != LIST_NONE || opt->only_matching)
		return;
	put_prefix(g, 1);
	put_record(g, header, opt->keys.delim);
}

/*
 * Calling thread, in input order: the batch cut at its first line not
 * JSON (cli_stage.cut), the same in both keysets, which are built alike.
 */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct grep *g = ctx;
	struct grep_slot *s = &g->slots[slot];
	size_t cut = n;

	(void)records;
	for (int fold = 0; fold < 2; fold++)
		if (g->wants_fold[fold])
			cut = cli_bad_lines_cut(&s->keys[fold], n, why, why_len);
	return cut;
}

/* Calling thread, in input order: mark the records, answer for the selected. */
static int select_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct grep *g = ctx;
	const struct options *opt = g->opt;
	const struct grep_slot *s = &g->slots[slot];
	const struct keyset *ks = &s->keys[g->wants_fold[0] ? 0 : 1];
	size_t k = 0;
	int rc = 0;

	(void)cli_bad_lines(ks);	/* no key: never selected, as a line without the field */
	if (g->input.selected >= opt->max_count)	/* -m 0 */
		return CLI_SKIP_INPUT;
	memset(cli_flags(&g->selected, &g->selected_cap, n), 0, n);
	for (size_t i = 0; i < ks->count; i++)
		g->selected[ks->record[i]] |= s->hit[i];
	for (size_t r = 0; r < n && rc == 0; r++) {
		while (k < ks->count && ks->record[k] < r)
			k++;
		if (g->selected[r] != opt->invert)
			rc = take_line(g, s, ks, records[r], r, &k);
	}
	g->input.lines += n;
	return rc;
}

/*
 * Any thread, on its own ranges of an input (-c, -l, -L, -q without -m:
 * answers that do not depend on where the lines are): count the selected
 * lines in the slot; with -q stop, with -l or -L end the input, at the
 * first. Keys come in record order, so a record's hits are adjacent.
 */
static int count_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct grep *g = ctx;
	struct grep_slot *s = &g->slots[slot];
	const struct keyset *ks = &s->keys[g->wants_fold[0] ? 0 : 1];
	size_t hit = 0, last = SIZE_MAX, count;

	(void)records;
	for (size_t i = 0; i < ks->count; i++)
		if (s->hit[i] && ks->record[i] != last) {
			last = ks->record[i];
			hit++;
		}
	count = g->opt->invert ? n - hit : hit;
	s->count += count;
	if (count == 0)
		return 0;
	if (g->opt->quiet)
		return 1;
	return g->opt->list != LIST_NONE ? CLI_SKIP_INPUT : 0;
}

/* The counts of batches read in ranges into the input's and the run's (calling thread). */
static void gather_counts(struct grep *g)
{
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		g->input.selected += g->slots[i].count;
		g->matches += g->slots[i].count;
		g->slots[i].count = 0;
	}
}

static void begin_input(void *ctx, const char *path)
{
	struct grep *g = ctx;
	struct grep_input *in = &g->input;
	size_t len = strlen(path) + 1;

	if (strcmp(path, "-") == 0) {
		in->name = g->opt->label ? g->opt->label : cli_display_name(path);
	} else {
		if (len > in->name_cap) {
			char *bigger = realloc(in->name_copy, len);

			if (bigger == NULL)
				cli_fatal("%s", strerror(ENOMEM));
			in->name_copy = bigger;
			in->name_cap = len;
		}
		in->name = memcpy(in->name_copy, path, len);
	}
	in->lines = 0;
	in->selected = 0;
}

/* -c, -l and -L answer once an input has been read. */
static int end_input(void *ctx, const char *path)
{
	struct grep *g = ctx;
	const struct options *opt = g->opt;
	struct line name = { g->input.name, strlen(g->input.name) };
	char text[32];
	int len;

	(void)path;
	gather_counts(g);
	if (opt->quiet)
		return 0;
	if ((opt->list == LIST_MATCHING && g->input.selected > 0) ||
	    (opt->list == LIST_NONMATCHING && g->input.selected == 0))
		put_record(g, name, opt->null_after_name ? '\0' : '\n');
	if (opt->list != LIST_NONE || !opt->count)
		return 0;
	put_name(g);
	len = snprintf(text, sizeof text, "%llu", (unsigned long long)g->input.selected);
	put_record(g, (struct line){ text, (size_t)len }, '\n');
	return 0;
}

/*
 * --shard: a key's partition is that of the key as the filters hash it,
 * folded when they were built with -i (bfsplit -i and bfuniq -i put it
 * there), so all of them must agree.
 */
static void shard_case(const struct grep *g)
{
	size_t folding = 0;

	for (size_t j = 0; j < g->opt->nfilters; j++)
		folding += (size_t)filter_folds(g, j);
	if (folding > 0 && folding < g->opt->nfilters)
		cli_fatal("--shard: some filters fold case (-i) and some do not: a key has no one partition");
	if (folding > 0)
		cli_shard_fold_case();
}

static int select_lines(struct grep *g)
{
	static const struct cli_stage stage = {
		.prepare = prepare_keys, .work = test_keys, .consume = select_batch,
		.cut = cut_batch,
	};
	static const struct cli_stage ranged = {
		.prepare = prepare_keys, .work = test_keys, .consume = count_batch
	};
	static const struct cli_input_events events = { begin_input, end_input };
	const struct options *opt = g->opt;
	int status;

	for (size_t j = 0; j < g->opt->nfilters; j++)
		g->wants_fold[filter_folds(g, j)] = 1;
	if (cli_shard_on())
		shard_case(g);
	/* -o prints the keys as they were read */
	if (g->opt->only_matching)
		g->wants_fold[0] = 1;
	if (g->opt->no_messages)
		cli_quiet_inputs();
	if (g->opt->recursive)
		cli_recursive_inputs();
	/*
	 * Counts and names depend on which lines are selected, not on where:
	 * then the threads may read a big file in ranges, each on its own.
	 * Lines, -o, -n and -m need them in order.
	 */
	if ((opt->count || opt->quiet || opt->list != LIST_NONE) && opt->max_count == UINT64_MAX)
		status = cli_each_input_ranged(opt->inputs, opt->ninputs, opt->keys.delim, &stage, &ranged,
					       &events, g);
	else
		status = cli_each_input(opt->inputs, opt->ninputs, opt->keys.delim, &stage, &events, g);
	gather_counts(g);	/* -q stops before an input's end */
	return status;
}

static void release(struct grep *g, struct options *opt)
{
	for (size_t j = 0; j < opt->nfilters; j++) {
		cascade_free(g->filters[j]);
		window_free(g->windows[j]);
	}
	free(g->filters);
	free(g->windows);
	free(g->now);
	free(g->selected);
	free(g->input.name_copy);
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
	cli_warn_overfull_loads();
	parse_options(&opt, argc, argv);
	g.opt = &opt;
	g.filters = calloc(opt.nfilters, sizeof *g.filters);
	g.windows = calloc(opt.nfilters, sizeof *g.windows);
	g.now = calloc(opt.nfilters, sizeof *g.now);
	if (g.filters == NULL || g.windows == NULL || g.now == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	for (size_t j = 0; j < opt.nfilters; j++) {
		cli_load_any(opt.filters[j], &g.filters[j], &g.windows[j], NULL);
		if (g.windows[j] != NULL)	/* as every program reads it (cli_window.h) */
			g.now[j] = cli_window_read_time(&opt.win, g.windows[j], opt.filters[j]);
	}
	cli_stdout_init(&g.out, opt.line_buffered);
	cli_stdout_async(&g.out);
	/* as grep: -m 0 reads nothing and selects nothing, but -L lists the FILEs */
	input_status = opt.max_count == 0 && opt.list != LIST_NONMATCHING ? 0 : select_lines(&g);
	cli_stdout_finish(&g.out);
	/* as grep: -q with a selected line is success whatever else happened */
	if (opt.quiet && g.matches > 0)
		status = 0;
	else if (input_status < 0)
		status = EXIT_TROUBLE;
	else
		status = g.matches > 0 ? 0 : EXIT_NONE;
	release(&g, &opt);
	cli_fields_release(&opt.keys.spec);
	return status;
}
