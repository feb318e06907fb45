/* SPDX-License-Identifier: MIT */
/*
 * bfbuild - add every input line to a Bloom filter and write the filter.
 *
 * A new filter is sized from -n/-p for its layout (or shaped by -m/-K),
 * an existing one is extended in place with -f, and --like copies another
 * filter's shape and key so shards built apart can be OR-ed by bfmerge.
 * The filter is written atomically to -o FILE (or back over -f FILTER,
 * holding its lock from load to rename so that concurrent runs take
 * turns), or streamed to stdout when that is not a terminal; --format dcso writes it
 * in the DCSO bloom format instead (dcso.h), sized from -n/-p as DCSO's
 * own tool sizes it. --layout counting builds a counting filter, from which
 * -f FILTER --remove deletes the input lines again.
 *
 * With --remove, keys that were surely not in the filter (a counter at 0)
 * change nothing; they are counted and reported, and the exit status is 1,
 * as grep's is when it selects nothing: the filter is written all the
 * same, but a script learns that its idea of the filter's contents and
 * the filter disagree. That matters, because removing a key that was never
 * added and tests present (a false positive) takes counts from other keys:
 * the keys reported are the detectable sign of such mistakes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_fields.h"
#include "cli_shape.h"
#include "cli_window.h"
#include "cascade.h"
#include "dcso.h"
#include "filter.h"
#include "keys.h"
#include "layout.h"
#include "owners.h"
#include "sizing.h"

#define DEFAULT_CAPACITY 1000000
#define DEFAULT_RATE 0.001

static const char usage[] =
	"Usage: bfbuild [-n N] [-p P] [-o FILE] [-f FILTER] [--remove] [--like FILTER] [--layout blocked|classic|counting] [-m BITS] [-K HASHES] [--key HEX] [--hash siphash13|siphash24] [--format bftools|dcso|dcso-gzip] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [--window W] [--generations G] [--refresh] [--time-field F] [--bad-time error|skip] [--now T] [--no-wait] [--checkpoint INTERVAL] [FILE...]\n"
	"Add every input line (FILEs, or standard input) to a Bloom filter.\n"
	"\n"
	"  -n, --capacity=N      distinct keys to size for (default 1000000)\n"
	"  -p, --rate=P          false-positive rate at N keys (default 0.001)\n"
	"  -o, --output=FILE     write the filter to FILE (atomically), not stdout\n"
	"  -f, --filter=FILTER   add to an existing filter and replace it\n"
	"      --remove          remove the input lines from -f FILTER (counting only)\n"
	"      --layout=LAYOUT   blocked (default: one cache line per key), classic,\n"
	"                        or counting (4-bit counters: keys can be removed)\n"
	CLI_SHAPE_EXACT_HELP
	CLI_SHAPE_KEY_HELP
	"      --format=FORMAT   bftools (default), or dcso or dcso-gzip: the DCSO\n"
	"                        bloom format, plain or gzipped (with -n, -p only)\n"
	CLI_KEY_HELP
	CLI_KEY_CASE_HELP
	"  -v, --verbose         report lines, keys, fill and rate on stderr\n"
	CLI_REPORT_HELP;

/* The rest of --help: one string would pass the 4095 bytes C99 promises. */
static const char usage_more[] =
	CLI_WINDOW_HELP
	CLI_WINDOW_REFRESH_HELP
	"      --checkpoint=INTERVAL  with -f, also save FILTER every INTERVAL (30s,\n"
	"                        10m, 1h, or a line count such as 1e6)\n"
	CLI_NO_WAIT_HELP
	CLI_FORMAT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"Counts take 1000000, 1e6, 1M; rates take 0.001, 1e-3, 0.1%.\n"
	"With --layout counting, -m counts counters of 4 bits each. With a time\n"
	"--window, -n is the keys expected per window. -i is recorded in the filter.\n"
	"Exit status: 0 when written; with --remove, 1 when some keys were not in\n"
	"the filter (it is written all the same); 2 on trouble.\n";

enum { OPT_FORMAT = 256, OPT_REMOVE, OPT_CHECKPOINT };

/* What the filter is written as. */
enum output_format { FORMAT_BFTOOLS, FORMAT_DCSO, FORMAT_DCSO_GZIP };
static const char *const format_names[] = { "bftools", "dcso", "dcso-gzip" };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "filter", required_argument, NULL, 'f' },
	{ "remove", no_argument, NULL, OPT_REMOVE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_SHAPE_OPTIONS,
	CLI_SHAPE_EXACT_OPTIONS,
	CLI_KEY_OPTIONS,
	CLI_KEY_CASE_OPTION,
	CLI_WINDOW_OPTIONS,
	CLI_WINDOW_REFRESH_OPTION,
	CLI_REPORT_OPTIONS,
	CLI_NO_WAIT_OPTION,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	struct cli_shape shape;		/* -n, -p, --layout, -m, -K, --key, --hash, --like */
	const char *output, *filter;
	enum output_format format;
	const char *not_dcso;		/* first option a DCSO filter has no use for */
	int remove;			/* --remove: take the keys out of -f FILTER */
	int checkpoint_given;
	struct cli_checkpoint checkpoint;	/* --checkpoint's interval */
	struct cli_keys_given keys;
	struct cli_window win;		/* kind 0: no --window */
	int verbose;
	char **inputs;
	int ninputs;
};

static void note_not_dcso(struct options *opt, const char *name)
{
	if (opt->not_dcso == NULL)
		opt->not_dcso = name;
}

static enum output_format parse_format(const char *arg)
{
	for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
		if (strcmp(arg, format_names[i]) == 0)
			return (enum output_format)i;
	cli_usage_error("invalid format '%s': expected 'bftools', 'dcso' or 'dcso-gzip'", arg);
}

/* Options that shape a filter DCSO's format cannot record: noted for the conflict check. */
static void note_shape_only(struct options *opt, int c)
{
	static const struct { int c; const char *name; } named[] = {
		{ CLI_OPT_LAYOUT, "--layout" }, { 'm', "-m" }, { 'K', "-K" },
		{ CLI_OPT_KEY, "--key" }, { CLI_OPT_HASH, "--hash" }, { 'i', "-i" },
	};

	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].c == c)
			note_not_dcso(opt, named[i].name);
}

static void parse_option(struct options *opt, int c, const char *arg)
{
	note_shape_only(opt, c);
	if (cli_shape_option(c, arg, &opt->shape) || cli_key_option(c, arg, &opt->keys) ||
	    cli_window_option(c, arg, &opt->win) || cli_report_option(c, arg) ||
	    cli_common_option(c, arg))
		return;
	switch (c) {
	case 'o': opt->output = arg; break;
	case 'f': opt->filter = arg; break;
	case OPT_REMOVE: opt->remove = 1; break;
	case OPT_CHECKPOINT: cli_checkpoint_option(&opt->checkpoint, arg); opt->checkpoint_given = 1; break;
	case OPT_FORMAT: opt->format = parse_format(arg); break;
	case 'v': opt->verbose = 1; break;
	case 'h': fputs(usage, stdout); cli_help(usage_more);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

/* A DCSO filter is new, sized from -n/-p only, keyless, without normalisation. */
static void check_dcso_conflicts(const struct options *opt)
{
	const char *name = format_names[opt->format];

	if (opt->filter || opt->shape.like)
		cli_usage_error("%s cannot be used with --format %s: DCSO filters are built new",
				opt->filter ? "-f" : "--like", name);
	if (opt->not_dcso || cli_key_file)
		cli_usage_error("%s cannot be used with --format %s: DCSO filters have no such setting",
				opt->not_dcso ? opt->not_dcso : "--key-file", name);
}

static void check_conflicts(const struct options *opt)
{
	if (opt->format != FORMAT_BFTOOLS)
		check_dcso_conflicts(opt);
	if (opt->filter && opt->shape.like)
		cli_usage_error("-f and --like cannot be used together");
	if (opt->remove && !opt->filter)
		cli_usage_error("--remove needs -f FILTER, the filter to remove the keys from");
	if (opt->checkpoint_given && (!opt->filter || strcmp(opt->filter, "-") == 0))
		cli_usage_error("--checkpoint saves the filter in place: it needs -f FILTER, a file");
	if (opt->shape.key_given && cli_key_file)
		cli_usage_error("--key and --key-file cannot be used together");
	/* any two fix the third: a rate -m and -n miss was ignored in silence */
	if (opt->shape.bits && opt->shape.capacity_given && opt->shape.rate_given)
		cli_usage_error("-m, -n and -p cannot all be given: any two of them fix the third");
	if ((opt->filter || opt->shape.like) && opt->shape.first)
		cli_usage_error("%s cannot be used with %s: the filter's shape is fixed",
				opt->shape.first, opt->filter ? "-f" : "--like");
	for (int i = 0; i < opt->ninputs; i++)
		if (strcmp(opt->inputs[i], "-") == 0 &&
		    ((opt->filter && strcmp(opt->filter, "-") == 0) ||
		     (opt->shape.like && strcmp(opt->shape.like, "-") == 0)))
			cli_usage_error("standard input cannot be both the filter and the input");
	if (opt->ninputs == 0 && ((opt->filter && strcmp(opt->filter, "-") == 0) ||
				  (opt->shape.like && strcmp(opt->shape.like, "-") == 0)))
		cli_usage_error("the filter is read from standard input, so name the input FILEs");
}

/* A window is a new bftools filter of blocked or classic generations, sized by itself. */
static void check_window_conflicts(struct options *opt)
{
	if (opt->win.wp.kind == 0)
		return;
	if (opt->format != FORMAT_BFTOOLS || opt->remove || opt->shape.like || opt->shape.bits || opt->shape.hashes)
		cli_usage_error("--window cannot be used with --format, --remove, --like, -m or -K");
	if (!window_layout_allowed(opt->shape.params.layout))
		cli_usage_error("--window cannot be used with --layout counting: generations are dropped whole");
	cli_window_finish(&opt->win, opt->shape.capacity_given ? opt->shape.capacity : 0, opt->shape.rate,
			  opt->keys.spec.separator);
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->shape.capacity = DEFAULT_CAPACITY;
	opt->shape.rate = DEFAULT_RATE;
	opt->shape.params.layout = FILTER_BLOCKED;
	opt->shape.params.hash = FILTER_SIPHASH_1_3;
	opt->shape.counting = 1;
	cli_key_options_init(&opt->keys);
	cli_window_init(&opt->win);
	while ((c = cli_getopt(argc, argv, ":" CLI_SHAPE_LETTERS CLI_SHAPE_EXACT_LETTERS
			       CLI_KEY_LETTERS "io:f:j:vhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->verbose |= cli_reports_json();	/* the report as JSON is the report */
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	cli_key_options_finish(&opt->keys, NULL);
	check_conflicts(opt);
	check_window_conflicts(opt);
	cli_no_wait_needs(opt->filter != NULL, "-f FILTER");
}

/* The k that lets m bits hold the most keys at rate p. */
static uint32_t best_k_for_size(enum filter_layout layout, uint64_t m, double p)
{
	uint32_t best = 1;
	uint64_t most = 0;

	for (uint32_t k = 1; k <= FILTER_K_MAX; k++) {
		uint64_t n = sizing_capacity(layout, m, k, p);

		if (n > most) {
			most = n;
			best = k;
		}
	}
	return best;
}

/*
 * -m: the size is given. Without -n the capacity is what it holds at the
 * rate; with -n (never with -p too: check_conflicts) the filter promises
 * the rate it gives at n.
 */
static void shape_from_size(struct options *opt, struct filter_params *p)
{
	double expected;

	p->m = sizing_round_bits(opt->shape.bits);
	if (!opt->shape.capacity_given) {
		p->k = opt->shape.hashes ? opt->shape.hashes : best_k_for_size(p->layout, p->m, opt->shape.rate);
		opt->shape.capacity = sizing_capacity(p->layout, p->m, p->k, opt->shape.rate);
		/* too small for even one key at the rate: the user's call; -v and the warning say so */
		if (opt->shape.capacity == 0)
			opt->shape.capacity = 1;
		p->target_p = opt->shape.rate;
		return;
	}
	p->k = opt->shape.hashes ? opt->shape.hashes : sizing_best_k(p->layout, opt->shape.capacity, p->m);
	expected = sizing_fpr(p->layout, opt->shape.capacity, p->m, p->k);
	p->target_p = expected > 0.0 && expected < 1.0 ? expected : opt->shape.rate;
}

/* m and k for a new filter: from -n/-p, or as forced by -m and -K. */
static void choose_shape(struct options *opt, struct filter_params *p)
{
	const char *why = NULL;
	int r;

	if (opt->shape.bits) {
		shape_from_size(opt, p);
		return;
	}
	if (opt->shape.hashes) {
		p->k = opt->shape.hashes;
		r = sizing_bits_for_k(p->layout, opt->shape.capacity, opt->shape.rate, p->k, &p->m, &why);
	} else {
		r = sizing_choose(p->layout, opt->shape.capacity, opt->shape.rate, &p->m, &p->k, &why);
	}
	if (r < 0)
		cli_usage_error("cannot size a filter for %llu keys at rate %g: %s",
				(unsigned long long)opt->shape.capacity, opt->shape.rate, why);
	p->target_p = opt->shape.rate;
}

/* What a layout's m counts. */
static const char *positions_name(enum filter_layout layout)
{
	return layout_of(layout)->unit;
}

static struct cascade *new_filter(struct options *opt)
{
	struct filter_params p = opt->shape.params;
	const char *why;
	struct cascade *c;

	choose_shape(opt, &p);
	p.capacity = opt->shape.capacity;
	p.flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	if (!opt->shape.key_given)
		p.flags |= cli_new_key(p.key);
	c = cascade_new_fixed(&p, &why);
	if (c == NULL)
		cli_fatal("cannot create a filter of %llu %s: %s", (unsigned long long)p.m,
			  positions_name(p.layout), cli_explain(why));
	return c;
}

/* A new DCSO filter, sized from -n and -p as DCSO's own tool sizes it. */
static struct cascade *new_dcso_filter(const struct options *opt)
{
	struct filter_params p;
	const char *why;
	struct cascade *c;

	if (dcso_params(opt->shape.capacity, opt->shape.rate, &p, &why) < 0)
		cli_usage_error("cannot size a DCSO filter for %llu keys at rate %g: %s",
				(unsigned long long)opt->shape.capacity, opt->shape.rate, why);
	c = cascade_new_fixed(&p, &why);
	if (c == NULL)
		cli_fatal("cannot create a filter of %llu bits: %s", (unsigned long long)p.m, cli_explain(why));
	return c;
}

static struct cascade *empty_like(const char *path)
{
	struct cascade *model = cli_load_filter(path);
	const char *why;
	struct cascade *c = cascade_new_like(model, &why);

	if (c == NULL)
		cli_fatal("%s: %s", path, cli_explain(why));
	cascade_free(model);
	return c;
}

/* The filter to add to: an existing one, an empty copy of one, or new. */
/* -i against a loaded filter's normalisation flags; the filter's rule holds. */
static void agree_on_case(struct options *opt, uint32_t flags)
{
	if (opt->keys.spec.fold_case && !(flags & FILTER_FOLD_CASE))
		cli_fatal("%s: filter was built without -i; its keys are case-sensitive",
			  opt->filter ? opt->filter : opt->shape.like);
	opt->keys.spec.fold_case = (flags & FILTER_FOLD_CASE) != 0;
}

/* A new window (--window): key and flags as new_filter gives them. */
static struct window *new_window(struct options *opt)
{
	struct filter_params p = opt->shape.params;

	p.flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	if (!opt->shape.key_given)
		p.flags |= cli_new_key(p.key);
	return cli_window_new(&opt->win, &p);
}

/* The filter to add to, or NULL with *w the window (--window, or -f naming one). */
static struct cascade *acquire_filter(struct options *opt, struct window **w)
{
	struct cascade *c;

	*w = NULL;
	if (opt->format != FORMAT_BFTOOLS)
		return new_dcso_filter(opt);
	if (opt->win.wp.kind != 0 && opt->filter == NULL) {
		*w = new_window(opt);
		return NULL;
	}
	if (opt->filter == NULL && opt->shape.like == NULL)
		return new_filter(opt);
	if (opt->filter)
		cli_load_any(opt->filter, &c, w, NULL);
	else
		c = empty_like(opt->shape.like);
	if (*w != NULL) {
		cli_window_agrees(&opt->win, *w, opt->filter);
		cli_window_clock_agrees(&opt->win, *w, opt->filter);
		agree_on_case(opt, window_params_of(*w)->flags);
		return NULL;
	}
	if (opt->win.wp.kind != 0)
		cli_fatal("%s: not a windowed filter: it was made without --window", opt->filter);
	agree_on_case(opt, cascade_params(c)->flags);
	return c;
}

/* The keys of the inputs into window w, saved to dest (cli_window.h). */
static int build_window(const struct options *opt, struct window *w, const char *dest)
{
	struct cli_window_counts n;
	char size[32];

	cli_window_check_use(&opt->win, w);
	if (opt->remove)
		cli_usage_error("--remove cannot be used with a windowed filter");
	if (opt->checkpoint_given)
		cli_usage_error("--checkpoint cannot be used with a windowed filter in bfbuild (bfuniq --window has it)");
	if (cli_window_add_lines(w, &opt->win, &opt->keys.spec, opt->inputs, opt->ninputs, opt->keys.delim,
				 &n) < 0 && !cli_inputs_cut())
		cli_fatal("no filter written: an input could not be read");
	if (opt->verbose && cli_reports_json())
		cli_report_object("\"lines\":%llu,\"keys\":%llu,\"new_keys\":%llu,\"bad_times\":%llu,"
				  "\"generations\":%zu,\"estimated_keys\":%.0f,\"bytes\":%llu",
				  (unsigned long long)n.lines, (unsigned long long)n.keys,
				  (unsigned long long)n.fresh, (unsigned long long)n.bad_times, w->ngen,
				  window_estimate_count(w, w->clock), (unsigned long long)window_bytes(w));
	else if (opt->verbose)
		cli_warn("lines read: %llu, keys: %llu (%llu new within the window, %llu lines with no readable time); %zu generations, about %.0f keys, %s",
			 (unsigned long long)n.lines, (unsigned long long)n.keys,
			 (unsigned long long)n.fresh, (unsigned long long)n.bad_times, w->ngen,
			 window_estimate_count(w, w->clock), cli_human_bytes(window_bytes(w), size));
	cli_save_window(w, dest);
	cli_unlock();
	window_free(w);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();
	return cli_inputs_cut() ? EXIT_TROUBLE : 0;	/* the lines before the cut saved */
}

static const char *layout_name(enum filter_layout layout)
{
	const struct layout_ops *l = layout_of(layout);

	if (l == NULL)
		return "?";
	return l->traits & LAYOUT_FOREIGN ? "DCSO" : l->name;	/* the other format's own name */
}

/* --remove: refuse, before any input is read, a filter keys cannot be removed from. */
static void check_removable(struct cascade *c, const char *path)
{
	const char *why;

	if (layout_of(cascade_params(c)->layout)->remove == NULL) {
		const char *layout = layout_name(cascade_params(c)->layout);

		cascade_free(c);
		cli_fatal("%s: --remove needs a counting filter (built with --layout counting), and this one is %s",
			  path, layout);
	}
	if (cascade_remove(c, NULL, 0, NULL, &why) < 0) {
		cascade_free(c);
		cli_fatal("%s: %s", path, why);
	}
}

/* Where the filter goes: -o, back over -f, or stdout (NULL). */
static const char *destination(const struct options *opt)
{
	if (opt->output) {
		cli_check_destination(opt->output);
		return opt->output;
	}
	if (opt->filter && strcmp(opt->filter, "-") != 0) {
		cli_check_state(opt->filter);
		return opt->filter;
	}
	if (isatty(STDOUT_FILENO))
		cli_fatal("refusing to write a filter to a terminal (use -o FILE or a redirection)");
	return NULL;
}

struct build {
	struct cascade *filter;
	const struct key_spec *spec;
	const struct filter *hasher;	/* cascade_hasher, or NULL to hash when adding */
	struct cli_keys keys[CLI_SLOTS];
	uint64_t records;
	uint64_t keyed;
	int count_new;			/* DCSO: count keys that set a new bit (its N) */
	int remove;			/* --remove: the keys come out, not in */
	uint64_t absent;		/* --remove: keys surely not in the filter */
	const char *checkpoint_path;	/* -f FILTER with --checkpoint, else NULL */
	struct cli_checkpoint checkpoint;
	int shared;			/* every thread adds (cascade_add_shared) */
	struct owners *owners;		/* ordered adds shared out by region (owners.h), or NULL */
	/* inputs read in ranges (cli_each_input_ranged): counted by every thread */
	atomic_uint_least64_t ranged_records, ranged_keyed;
	pthread_mutex_t adding;		/* ranges without shared adds: one adder at a time */
	unsigned char *present;		/* test-and-add's answers, unused */
	size_t present_cap;
	unsigned char *slot_present[CLI_SLOTS];	/* the same, of batches split by region */
	size_t slot_present_cap[CLI_SLOTS];
	unsigned char in_regions[CLI_SLOTS];	/* split by region (owners_split) */
};

/* Test-and-add counts the keys that set a new bit, as DCSO's N wants; add does not. */
static int add_keys(struct build *b, const struct cli_keys *k, const char **why)
{
	size_t n = k->set.count, absent;

	if (b->remove) {
		if (cascade_remove(b->filter, k->set.keys, n, &absent, why) < 0)
			return -1;
		b->absent += absent;
		return 0;
	}
	if (!b->count_new)
		return cascade_add_hashed(b->filter, k->set.keys, b->hasher ? k->hashes : NULL, n, why);
	return cascade_test_and_add(b->filter, k->set.keys, n,
				    cli_flags(&b->present, &b->present_cap, n), NULL, why);
}

/* Reader thread: the batch's keys, and room for their hashes. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct build *b = ctx;
	struct cli_keys *k = &b->keys[slot];

	/* shared adds set bits in the work step, which must then see real keys only */
	k->cut_in_work = !b->shared;
	k->ready_later = b->owners != NULL;	/* the regions fetch their own lines */
	if (cli_keys_prepare(k, b->spec, b->hasher, records, n) < 0)
		return -1;
	*units = k->set.count;
	return 0;
}

/*
 * Any thread: hashing does not depend on what the filter holds; nor, in
 * a fixed filter, does setting bits (an OR), so shared adds happen here.
 */
static void hash_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct build *b = ctx;
	struct cli_keys *k = &b->keys[slot];

	cli_keys_hash(k, b->hasher, from, to);
	if (b->shared)
		cascade_add_shared(b->filter, k->set.keys + from, k->hashes + 2 * from, to - from);
}

/*
 * Calling thread, between batches: a snapshot of FILTER if one is due;
 * also while the input is quiet (cli_checkpoint_when_idle).
 */
static void checkpoint(void *ctx)
{
	struct build *b = ctx;

	if (b->checkpoint_path)
		cli_checkpoint_due(&b->checkpoint, b->filter, NULL, b->checkpoint_path, NULL, b->records);
}

/*
 * Calling thread, in input order, after hashing: the ordered adds shared
 * out by region (owners.h), unless the batch must go whole.
 */
static int split_keys(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct build *b = ctx;

	(void)records;
	(void)n;
	b->in_regions[slot] = (unsigned char)cli_keys_split(&b->keys[slot], b->owners, slot, b->filter,
							    &b->slot_present[slot],
							    &b->slot_present_cap[slot]);
	return b->in_regions[slot];
}

/* Any thread: one region's keys of the batch, after the same region of every batch before. */
static void region_keys(void *ctx, unsigned slot, unsigned region)
{
	struct build *b = ctx;

	owners_region(b->owners, slot, region);
}

/* Calling thread, before split or consume: the batch cut at its first line not JSON. */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct build *b = ctx;

	(void)records;
	return cli_keys_cut(&b->keys[slot], n, why, why_len);
}

/* Calling thread: the ordered adds (growing, counting, removing), and the counts. */
static int add_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct build *b = ctx;
	const struct cli_keys *k = &b->keys[slot];
	const char *why;

	(void)records;
	cli_keys_settle(&b->keys[slot]);
	(void)cli_bad_lines(&k->set);
	if (b->shared)
		cascade_count_added(b->filter, k->set.count);
	else if (b->in_regions[slot])
		(void)owners_finish(b->owners, slot);
	else if (add_keys(b, k, &why) < 0)
		cli_fatal("%s", cli_explain(why));
	b->in_regions[slot] = 0;
	b->records += n;
	b->keyed += k->set.count;
	checkpoint(b);
	return 0;
}

/*
 * Any thread, on its own ranges: only the adding is shared. With shared
 * adds, work has set the bits (an OR, in any order) and the keys are
 * counted once at the end (add_lines); else the threads take turns to
 * add, which orders the bits' memory without an atomic per word.
 */
static int add_ranged(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct build *b = ctx;
	const struct cli_keys *k = &b->keys[slot];
	const char *why;
	int rc = 0;

	(void)records;
	cli_keys_settle(&b->keys[slot]);
	atomic_fetch_add_explicit(&b->ranged_records, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->ranged_keyed, k->set.count, memory_order_relaxed);
	if (b->shared)
		return 0;
	pthread_mutex_lock(&b->adding);
	rc = cascade_add_hashed(b->filter, k->set.keys, k->hashes, k->set.count, &why);
	pthread_mutex_unlock(&b->adding);
	(void)rc;	/* a fixed filter, not counting: adding cannot fail */
	return 0;
}

/* The build under way, for the progress line. */
static struct build *building;

/*
 * Calling thread. Other threads may be adding: atomically (shared, which
 * the sampling's relaxed loads allow), or in turns, so take a turn.
 */
static void build_progress(char *buf, size_t len)
{
	const struct cascade *c = building->filter;
	uint64_t keyed = building->keyed +
			 atomic_load_explicit(&building->ranged_keyed, memory_order_relaxed);
	double fill;

	if (!building->shared)
		pthread_mutex_lock(&building->adding);
	fill = filter_sampled_fill(c->stages[c->nstages - 1], 4096);
	if (!building->shared)
		pthread_mutex_unlock(&building->adding);
	snprintf(buf, len, "%llu keys, fill ~%.1f%%", (unsigned long long)keyed, 100.0 * fill);
}

/*
 * The adds that stay in input order (a growing filter, whose stages fill
 * at a given key; a fixed one with checkpoints, whose snapshots fall
 * between batches) shared out by region of blocks, as bfuniq does: the
 * same bits and counts as one thread. Counting, classic and DCSO filters
 * and --remove keep them on the ordered thread.
 */
static struct owners *share_out(const struct build *b)
{
	int threads = pipeline_threads();
	const char *why;

	if (threads < 2 || b->shared || b->hasher == NULL || b->remove || b->count_new ||
	    !owners_usable(b->filter))
		return NULL;
	return owners_new((unsigned)threads, CLI_SLOTS, &why);
}

static void add_lines(struct build *b, const struct options *opt)
{
	struct cli_stage stage = { .prepare = prepare_keys, .work = hash_keys, .consume = add_batch,
				   .cut = cut_batch };
	static const struct cli_stage ranged = {
		.prepare = prepare_keys, .work = hash_keys, .consume = add_ranged
	};
	int status;

	building = b;
	cli_progress_detail = build_progress;
	b->spec = &opt->keys.spec;
	/* removing and DCSO's counting hash as they go: nothing to do ahead */
	b->hasher = b->remove || b->count_new ? NULL : cascade_hasher(b->filter);
	/*
	 * From 3 threads on, every thread sets bits in a fixed filter. With 2
	 * the reader hashes and the caller adds, which keeps both busy without
	 * the atomic fetch-ors (a locked instruction per word: on 2 cores
	 * measured at ~35 ns a key more CPU). Not with checkpoints: a snapshot
	 * forked between batches would catch later batches' bits half set, and
	 * the file would depend on timing. Nor where a line not JSON cuts
	 * the input: a cut is known only after the work step.
	 */
	b->shared = b->hasher != NULL && cascade_can_add_shared(b->filter) &&
		    pipeline_threads() > 2 && b->checkpoint_path == NULL && !cli_bad_lines_cut_on();
	atomic_init(&b->ranged_records, 0);
	atomic_init(&b->ranged_keyed, 0);
	pthread_mutex_init(&b->adding, NULL);
	/*
	 * Where the bits do not depend on the order of the keys (a fixed
	 * filter, not counting), a regular file is read in ranges by every
	 * thread, with no single reader or ordered adder in the way; the
	 * filter is the same, and the count of keys a sum.
	 */
	if (b->checkpoint_path != NULL)
		cli_checkpoint_when_idle(&b->checkpoint, checkpoint);
	cli_expect_inputs(b->filter, opt->inputs, opt->ninputs, opt->keys.delim);
	if (b->hasher != NULL && cascade_can_add_shared(b->filter) && b->checkpoint_path == NULL) {
		status = cli_each_input_ranged(opt->inputs, opt->ninputs, opt->keys.delim, &stage, &ranged,
					       NULL, b);
	} else {
		/* an ordered run: its calling thread is the ceiling past 8 (pipeline.h) */
		pipeline_set_default_max(PIPELINE_THREADS_ORDERED_MAX);
		b->owners = share_out(b);
		/*
		 * Regions of a batch never run beside the consume before it:
		 * that consume may write a checkpoint, or progress sample the
		 * bits, and a filter cut short by a signal is never written.
		 */
		if (b->owners != NULL) {
			stage.split = split_keys;
			stage.part = region_keys;
			stage.parts = (unsigned)pipeline_threads();
		}
		status = cli_each_batch_ranged(opt->inputs, opt->ninputs, opt->keys.delim, &stage, b);
		owners_free(b->owners);
	}
	pthread_mutex_destroy(&b->adding);
	b->records += atomic_load(&b->ranged_records);
	b->keyed += atomic_load(&b->ranged_keyed);
	if (b->shared && atomic_load(&b->ranged_keyed) > 0)
		cascade_count_added(b->filter, atomic_load(&b->ranged_keyed));
	if (status < 0 && !cli_inputs_cut())
		cli_fatal("no filter written: an input could not be read");
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		cli_keys_free(&b->keys[i]);
	free(b->present);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		free(b->slot_present[i]);
}

static uint64_t bits_set(const struct cascade *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->nstages; i++)
		total += filter_bits_set(c->stages[i]);
	return total;
}

/* Positions (bits, or counters) over all stages; a DCSO filter's own m, not its rounded array. */
static uint64_t positions(const struct cascade *c)
{
	uint64_t total = 0;

	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;

		total += layout_of(p->layout)->probed(p);
	}
	return total;
}

static void report_lines(const struct build *b)
{
	unsigned long long lines = b->records, keys = b->keyed, keyless = b->records - b->keyed;

	if (b->remove)
		cli_warn("%llu lines read, %llu keys removed, %llu not in the filter, %llu lines without a key",
			 lines, keys - (unsigned long long)b->absent, (unsigned long long)b->absent, keyless);
	else
		cli_warn("%llu lines read, %llu keys added, %llu lines without a key", lines, keys, keyless);
}

/* "N of M bits set (x%)", or for counting "N of M counters non-zero (x%), S saturated". */
static void report_fill(const struct cascade *c)
{
	const struct filter_params *p = cascade_params(c);
	uint64_t set = bits_set(c), m = positions(c), saturated = 0;
	char size[32];

	for (size_t i = 0; i < c->nstages; i++)
		saturated += filter_saturated(c->stages[i]);
	if (layout_has(p->layout, LAYOUT_COUNTERS))
		cli_warn("%llu of %llu counters non-zero (%.2f%%), %llu saturated, k = %u, counting layout, %zu stage%s, %s",
			 (unsigned long long)set, (unsigned long long)m, 100.0 * (double)set / (double)m,
			 (unsigned long long)saturated, p->k, c->nstages, c->nstages == 1 ? "" : "s",
			 cli_human_bytes(cascade_bytes(c), size));
	else
		cli_warn("%llu of %llu bits set (%.2f%%), k = %u, %s layout, %zu stage%s, %s",
			 (unsigned long long)set, (unsigned long long)m, 100.0 * (double)set / (double)m,
			 p->k, layout_name(p->layout), c->nstages, c->nstages == 1 ? "" : "s",
			 cli_human_bytes(cascade_bytes(c), size));
}

static void report(const struct build *b, int verbose)
{
	const struct cascade *c = b->filter;
	double rate = cascade_current_fpr(c);
	char text[64];

	if (verbose && cli_reports_json()) {
		cli_report_object("\"lines\":%llu,\"%s\":%llu,\"not_in_filter\":%llu,\"keyless\":%llu,"
				  "\"estimated_keys\":%.0f,\"capacity\":%llu,\"positions\":%llu,"
				  "\"positions_set\":%llu,\"stages\":%zu,\"bytes\":%llu,\"rate\":%.3g,"
				  "\"target_rate\":%g",
				  (unsigned long long)b->records, b->remove ? "keys_removed" : "keys_added",
				  (unsigned long long)(b->keyed - b->absent), (unsigned long long)b->absent,
				  (unsigned long long)(b->records - b->keyed), cascade_estimate_count(c),
				  (unsigned long long)c->capacity, (unsigned long long)positions(c),
				  (unsigned long long)bits_set(c), c->nstages,
				  (unsigned long long)cascade_bytes(c), rate, c->target_p);
	} else if (verbose) {
		report_lines(b);
		cli_bad_lines_report();
		cli_warn("%s (capacity %llu)", cli_distinct_keys(cascade_estimate_count(c), text),
			 (unsigned long long)c->capacity);
		report_fill(c);
		cli_warn("estimated false-positive rate %.3g (target %g)", rate, c->target_p);
	}
	cli_warn_over_capacity(c, rate);
}

/* Write the filter to dest (stdout when NULL) in the format asked for. */
static void save_filter(const struct cascade *c, const char *dest, enum output_format format)
{
	int gzip = format == FORMAT_DCSO_GZIP;
	const char *why;

	if (format == FORMAT_BFTOOLS) {
		cli_save_filter(c, dest);
		return;
	}
	if (dest == NULL && dcso_save(c, STDOUT_FILENO, gzip, &why) < 0)
		cli_fatal("write error: %s", why);
	if (dest != NULL && dcso_save_path(c, dest, gzip, &why) < 0)
		cli_fatal("%s: %s", dest, why);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct build b = { 0 };
	struct window *window;
	const char *dest;

	cli_init(argv[0]);
	cli_dcso_readable();	/* -f x.bloom adds to it as DCSO's insert does */
	parse_options(&opt, argc, argv);
	dest = destination(&opt);
	if (dest && opt.filter && cli_same_file(dest, opt.filter))
		cli_lock_update(dest);	/* -f: read, then replaced */
	b.filter = acquire_filter(&opt, &window);
	/* after the lock and the load: while waiting for those, a signal just ends the run */
	if (opt.filter && strcmp(opt.filter, "-") != 0)
		cli_stop_on_signals();
	if (window != NULL) {
		int rc = build_window(&opt, window, dest);

		cli_fields_release(&opt.keys.spec);
		return rc;
	}
	cli_window_check_use(&opt.win, NULL);
	if (opt.remove)
		check_removable(b.filter, opt.filter);
	/* a new DCSO filter, or -f x.bloom: DCSO's N counts keys that set a new bit */
	b.count_new = opt.format != FORMAT_BFTOOLS || layout_has(cascade_params(b.filter)->layout, LAYOUT_FOREIGN);
	b.remove = opt.remove;
	b.checkpoint = opt.checkpoint;
	b.checkpoint_path = opt.checkpoint_given ? opt.filter : NULL;
	add_lines(&b, &opt);
	report(&b, opt.verbose);
	cli_checkpoint_finish(&b.checkpoint);
	save_filter(b.filter, dest, opt.format);
	cli_unlock();
	cascade_free(b.filter);
	cli_fields_release(&opt.keys.spec);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();	/* cut short, all of it saved */
	if (cli_inputs_cut())
		return EXIT_TROUBLE;	/* the lines before the cut saved */
	if (b.absent == 0)
		return 0;
	cli_warn("%llu key%s to remove %s not in the filter", (unsigned long long)b.absent,
		 b.absent == 1 ? "" : "s", b.absent == 1 ? "was" : "were");
	return EXIT_NONE;
}
