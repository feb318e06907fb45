/* SPDX-License-Identifier: MIT */
/*
 * bfcount - how many distinct keys: in a stream, or in filters.
 *
 * On a stream it counts with HyperLogLog (hll.h), not a Bloom filter: a
 * filter needs about 10 bits per key to count, HyperLogLog 64 KiB whatever
 * the count, exact for small counts and within 2% at the 95th percentile
 * beyond. With -f it reads the count off filters' fill instead, and
 * combines filters: --union (the OR of the bits), --intersection (by
 * inclusion-exclusion over unions), --jaccard (intersection over union).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "cli.h"
#include "cli_window.h"
#include "hll.h"
#include "keys.h"
#include "merge.h"
#include "siphash.h"
#include "sizing.h"

/* Sets of filters beyond this make inclusion-exclusion (2^N unions) too slow. */
#define INTERSECT_MAX 12

static const char usage[] =
	"Usage: bfcount [-k N] [-t C] [-i] [-z] [-v] [FILE...]\n"
	"   or: bfcount -f FILTER [-f FILTER...] [--union|--intersection|--jaccard] [-v] [FILTER...]\n"
	"Print the estimated number of distinct keys in the input, or in filters.\n"
	"\n"
	"  -k, --field=N         key on the Nth field of each line\n"
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n"
	"  -i, --ignore-case     fold ASCII case of keys\n"
	"  -z, --null-data       records end with NUL, not newline\n"
	"  -f, --filter=FILTER   count the elements of filters instead (repeatable;\n"
	"                        the operands are then filters too)\n"
	"      --union           the number of elements in the union of the filters\n"
	"      --intersection    the number of elements in their intersection\n"
	"      --jaccard         intersection over union, from 0 to 1\n"
	"  -v, --verbose         also report the standard error on stderr\n"
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_UNION = 256, OPT_INTERSECTION, OPT_JACCARD };
enum set_op { COUNT_EACH, UNION, INTERSECTION, JACCARD };

static const struct option long_options[] = {
	{ "field", required_argument, NULL, 'k' },
	{ "separator", required_argument, NULL, 't' },
	{ "ignore-case", no_argument, NULL, 'i' },
	{ "null-data", no_argument, NULL, 'z' },
	{ "filter", required_argument, NULL, 'f' },
	{ "union", no_argument, NULL, OPT_UNION },
	{ "intersection", no_argument, NULL, OPT_INTERSECTION },
	{ "jaccard", no_argument, NULL, OPT_JACCARD },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	struct key_spec spec;
	char delim;
	int verbose, key_options;
	enum set_op op;
	const char **filters;	/* -f arguments, then operands in filter mode */
	size_t nfilters;
	char **inputs;
	int ninputs;
};

static void set_op(struct options *opt, enum set_op op)
{
	if (opt->op != COUNT_EACH && opt->op != op)
		cli_usage_error("choose one of --union, --intersection and --jaccard");
	opt->op = op;
}

static void parse_option(struct options *opt, int c, const char *arg)
{
	switch (c) {
	case 'k': cli_field_option(&opt->spec, arg); opt->key_options = 1; break;
	case 't': cli_separator_option(&opt->spec, arg); opt->key_options = 1; break;
	case 'i': opt->spec.fold_case = 1; opt->key_options = 1; break;
	case 'z': opt->delim = '\0'; opt->key_options = 1; break;
	case 'f': opt->filters[opt->nfilters++] = arg; break;
	case OPT_UNION: set_op(opt, UNION); break;
	case OPT_INTERSECTION: set_op(opt, INTERSECTION); break;
	case OPT_JACCARD: set_op(opt, JACCARD); break;
	case 'v': opt->verbose = 1; break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default:
		if (!cli_common_option(c, arg))
			cli_usage_error("unknown option");
	}
}

static void check_filter_mode(struct options *opt)
{
	if (opt->key_options)
		cli_usage_error("-k, -t, -i and -z apply to streams, not to filters (-f)");
	cli_keys_optional();	/* counts come from the bits: fingerprints suffice */
	for (int i = 0; i < opt->ninputs; i++)
		opt->filters[opt->nfilters++] = opt->inputs[i];
	if (cli_stdin_uses((char *const *)opt->filters, opt->nfilters) > 1)
		cli_usage_error("standard input can be read only once");
	if (opt->op != COUNT_EACH && opt->nfilters < 2)
		cli_usage_error("--union, --intersection and --jaccard need two or more filters");
	if ((opt->op == INTERSECTION || opt->op == JACCARD) && opt->nfilters > INTERSECT_MAX)
		cli_usage_error("--intersection and --jaccard take at most %d filters", INTERSECT_MAX);
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->spec.separator = -1;
	opt->delim = '\n';
	opt->filters = calloc((size_t)argc, sizeof *opt->filters);
	if (opt->filters == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	while ((c = cli_getopt(argc, argv, ":k:t:izf:vhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	if (opt->nfilters > 0)
		check_filter_mode(opt);
	else if (opt->op != COUNT_EACH)
		cli_usage_error("--union, --intersection and --jaccard work on filters (-f)");
}

/* ---- stream mode ---------------------------------------------------- */

/* A fixed key: counts are reproducible, and nobody is fed an adversary's filter. */
static const unsigned char count_key[16] = "bfcount-hll-key1";

struct counter {
	const struct options *opt;
	struct hll *hll;
	struct siphash_key key;
	struct count_slot {
		struct keyset keys;
		uint64_t *hashes;	/* one per key */
		size_t hashes_cap;
	} slots[CLI_SLOTS];
};

/* Reader thread: the batch's keys, and room for their hashes. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct counter *c = ctx;
	struct count_slot *s = &c->slots[slot];

	if (keyset_build(&s->keys, &c->opt->spec, records, n) < 0)
		return -1;
	if (s->keys.count > s->hashes_cap) {
		free(s->hashes);
		s->hashes_cap = 0;
		s->hashes = malloc(s->keys.count * sizeof *s->hashes);
		if (s->hashes == NULL)
			return -1;
		s->hashes_cap = s->keys.count;
	}
	*units = s->keys.count;
	return 0;
}

/* Either thread: the hashes are the expensive part. */
static void hash_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct counter *c = ctx;
	struct count_slot *s = &c->slots[slot];

	for (size_t i = from; i < to; i++) {
		uint64_t h[2];

		siphash_1_3_128(&c->key, s->keys.keys[i].data, s->keys.keys[i].len, h);
		s->hashes[i] = h[0];
	}
}

/* Calling thread: the counter has one writer. */
static int count_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct counter *c = ctx;

	(void)records;
	(void)n;
	hll_add_many(c->hll, c->slots[slot].hashes, c->slots[slot].keys.count);
	return 0;
}

/* The counter under way, for the progress line. */
static const struct hll *counting;

static void count_progress(char *buf, size_t len)
{
	snprintf(buf, len, "about %.0f distinct", hll_estimate(counting));
}

static int count_stream(const struct options *opt, struct writer *out)
{
	static const struct cli_stage stage = { prepare_keys, hash_keys, count_batch };
	struct counter c = { .opt = opt, .hll = hll_new(HLL_PRECISION_DEFAULT) };
	int status;
	double estimate;
	char text[32];

	if (c.hll == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	siphash_key_from_bytes(&c.key, count_key);
	counting = c.hll;
	cli_progress_detail = count_progress;
	status = cli_each_batch(opt->inputs, opt->ninputs, opt->delim, &stage, &c);
	estimate = hll_estimate(c.hll);
	snprintf(text, sizeof text, "%.0f\n", estimate);
	if (writer_put(out, text, strlen(text)) < 0)
		cli_write_error(errno);
	if (opt->verbose && hll_is_exact(c.hll))
		cli_warn("exact count (below the HyperLogLog threshold)");
	else if (opt->verbose)
		cli_warn("HyperLogLog estimate: standard error %.2f%% (about %.0f); 95%% within +-%.0f",
			 100.0 * hll_relative_error(c.hll), estimate * hll_relative_error(c.hll),
			 1.96 * estimate * hll_relative_error(c.hll));
	hll_free(c.hll);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		keyset_free(&c.slots[i].keys);
		free(c.slots[i].hashes);
	}
	return status;
}

/* ---- filter mode ---------------------------------------------------- */

static double standard_error(const struct cascade *c)
{
	double var = 0.0;

	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;
		double sd = sizing_estimate_sd(p->layout, p->m, p->k,
					       filter_estimate_count(c->stages[i]));

		var += sd * sd;
	}
	return sqrt(var);
}

/* Print a count; with label, as "COUNT<TAB>LABEL". what names it in errors. */
static void put_count(struct writer *out, double value, const char *label, const char *what)
{
	char text[64];

	/* infinite (a full filter), or an intersection made of infinities */
	if (!isfinite(value))
		cli_fatal("%s: every bit is set: too many keys to estimate", what);
	if (value < 0.0)	/* an estimated intersection of near-disjoint sets */
		value = 0.0;
	snprintf(text, sizeof text, label ? "%.0f\t" : "%.0f\n", value);
	if (writer_put(out, text, strlen(text)) < 0 ||
	    (label && (writer_put(out, label, strlen(label)) < 0 || writer_put(out, "\n", 1) < 0)))
		cli_write_error(errno);
}

/*
 * A windowed filter's keys within its window as of its clock: without
 * --refresh each key is in one generation, so the sum of the live
 * generations' estimates counts it once.
 */
static void count_window(const struct options *opt, size_t i, struct window *w,
			 struct writer *out)
{
	put_count(out, window_estimate_count(w, w->clock),
		  opt->nfilters > 1 ? opt->filters[i] : NULL, opt->filters[i]);
	window_free(w);
}

static void count_each(const struct options *opt, struct writer *out)
{
	for (size_t i = 0; i < opt->nfilters; i++) {
		struct cascade *c;
		struct window *w;
		double estimate;

		cli_load_any(opt->filters[i], &c, &w);
		if (w != NULL) {
			count_window(opt, i, w, out);
			continue;
		}
		estimate = cascade_estimate_count(c);

		put_count(out, estimate, opt->nfilters > 1 ? opt->filters[i] : NULL, opt->filters[i]);
		if (opt->verbose)
			cli_warn("%s: standard error about %.0f (95%% within +-%.0f)", opt->filters[i],
				 standard_error(c), 1.96 * standard_error(c));
		cascade_free(c);
	}
}

/* The union of filters[0..n) as a new cascade (the OR of their bits). */
static struct cascade *union_of(struct cascade *const *filters, size_t n, const char *const *names)
{
	const char *why;
	struct cascade *acc = cascade_new_like(filters[0], &why);

	if (acc == NULL)
		cli_fatal("%s", cli_explain(why));
	for (size_t i = 0; i < n; i++) {
		if (!cascade_compatible(acc, filters[i], &why))
			cli_fatal("%s: cannot be combined with %s: different %s", names[i], names[0], why);
		if (merge_into(acc, filters[i], MERGE_OR, &why) < 0)
			cli_fatal("%s: %s", names[i], cli_explain(why));
	}
	return acc;
}

/*
 * |A1 ∩ ... ∩ An| = sum over non-empty subsets S of (-1)^(|S|+1) |∪S|,
 * each union estimated from the OR of its members' bits.
 */
static double intersection_of(struct cascade *const *filters, size_t n, const char *const *names,
			      double *variance)
{
	struct cascade *subset[INTERSECT_MAX] = { 0 };
	const char *subset_names[INTERSECT_MAX] = { 0 };
	double total = 0.0;

	*variance = 0.0;
	for (unsigned long mask = 1; mask < (1ul << n); mask++) {
		size_t members = 0;
		struct cascade *u;

		for (size_t i = 0; i < n; i++)
			if (mask & (1ul << i)) {
				subset_names[members] = names[i];
				subset[members++] = filters[i];
			}
		u = union_of(subset, members, subset_names);
		total += (members % 2 ? 1.0 : -1.0) * cascade_estimate_count(u);
		*variance += pow(standard_error(u), 2);
		cascade_free(u);
	}
	return total;
}

static void put_jaccard(struct writer *out, double intersection, double union_count)
{
	char text[32];
	double value = union_count > 0.0 ? fmax(intersection, 0.0) / union_count : 0.0;

	snprintf(text, sizeof text, "%.4f\n", fmin(value, 1.0));
	if (writer_put(out, text, strlen(text)) < 0)
		cli_write_error(errno);
}

/*
 * The errors of the unions an intersection is made of are correlated (they
 * share keys); we add their variances as if independent, which is what -v
 * reports as an approximate standard error.
 */
static void report_combined(enum set_op op, double intersection, double variance,
			    double union_count, double union_sd)
{
	double sd = sqrt(variance);

	if (op == UNION)
		cli_warn("standard error about %.0f (95%% within +-%.0f)", union_sd, 1.96 * union_sd);
	else if (op == INTERSECTION)
		cli_warn("standard error about %.0f (95%% within +-%.0f; approximate, from the unions' errors)",
			 sd, 1.96 * sd);
	else if (intersection > 0.0 && union_count > 0.0)
		cli_warn("standard error about %.4f (approximate, from the intersection's and union's errors)",
			 intersection / union_count *
				 sqrt(pow(sd / intersection, 2) + pow(union_sd / union_count, 2)));
	else
		cli_warn("standard error about %.4f (approximate: the intersection is near 0)",
			 union_count > 0.0 ? sd / union_count : 0.0);
}

static void count_combined(const struct options *opt, struct writer *out)
{
	struct cascade **filters = calloc(opt->nfilters, sizeof *filters);
	struct cascade *u;
	double union_count, union_sd, intersection = 0.0, variance = 0.0;

	if (filters == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	for (size_t i = 0; i < opt->nfilters; i++) {
		filters[i] = cli_load_filter(opt->filters[i]);
		/*
		 * OR-ing stage by stage keeps every key (bfmerge does it), but a
		 * key lands in whichever stage was newest when it arrived, so it
		 * can sit in different stages of two filters and count twice.
		 */
		if (filters[i]->growth != 0)
			cli_fatal("%s: cannot count unions or intersections of growing filters (a key may sit in different stages of each)",
				  opt->filters[i]);
	}
	u = union_of(filters, opt->nfilters, opt->filters);
	union_count = cascade_estimate_count(u);
	if (!isfinite(union_count))
		cli_fatal("union: every bit is set: too many keys to estimate");
	union_sd = standard_error(u);
	if (opt->op != UNION)
		intersection = intersection_of(filters, opt->nfilters, opt->filters, &variance);
	if (opt->op == UNION)
		put_count(out, union_count, NULL, "union");
	else if (opt->op == INTERSECTION)
		put_count(out, intersection, NULL, "intersection");
	else
		put_jaccard(out, intersection, union_count);
	if (opt->verbose)
		report_combined(opt->op, intersection, variance, union_count, union_sd);
	cascade_free(u);
	for (size_t i = 0; i < opt->nfilters; i++)
		cascade_free(filters[i]);
	free(filters);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct writer out;
	int status = 0;

	cli_init(argv[0]);
	parse_options(&opt, argc, argv);
	cli_stdout_init(&out, 0);
	if (opt.nfilters == 0)
		status = count_stream(&opt, &out);
	else if (opt.op == COUNT_EACH)
		count_each(&opt, &out);
	else
		count_combined(&opt, &out);
	cli_stdout_finish(&out);
	free(opt.filters);
	return status < 0 ? EXIT_TROUBLE : 0;
}
