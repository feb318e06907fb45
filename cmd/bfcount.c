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
 *
 * The HyperLogLog of a stream outlives the process as a sketch file
 * (sketch.h): -o saves it, -s loads sketches and counts their union (and
 * any input given), and -s SKETCH --add adds the input to a sketch and
 * replaces it, load, add, atomic save. Sketches are keyed like filters
 * (--key, --key-file, --like), so those of other runs and machines
 * combine; by default with the public key streams were always counted
 * with, so a count is the same whether it is saved or not.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cascade.h"
#include "cli.h"
#include "cli_fields.h"
#include "cli_window.h"
#include "hll.h"
#include "keys.h"
#include "merge.h"
#include "pipeline.h"
#include "sizing.h"
#include "sketch.h"

/* Sets of filters beyond this make inclusion-exclusion (2^N unions) too slow. */
#define INTERSECT_MAX 12

static const char usage[] =
	"Usage: bfcount [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [FILE...]\n"
	"   or: bfcount -f FILTER [-f FILTER...] [-v] [--json] [FILTER...]\n"
	"   or: bfcount --union|--intersection|--jaccard [-v] [--json] [-f FILTER...] FILTER...\n"
	"   or: bfcount [-s SKETCH...] [--add] [-o SKETCH] [--precision P] [--key HEX] [--like SKETCH] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [FILE...]\n"
	"Print the estimated number of distinct keys in the input, or in filters,\n"
	"or in HyperLogLog sketches saved by -o.\n"
	"\n"
	CLI_KEY_HELP
	CLI_KEY_CASE_HELP
	"  -f, --filter=FILTER   count the elements of filters instead (repeatable;\n"
	"                        the operands are then filters too)\n"
	"      --union           the number of elements in the union of the filters\n"
	"                        (the operands are filters, -f or not)\n"
	"      --intersection    the number of elements in their intersection\n"
	"      --jaccard         intersection over union, from 0 to 1\n"
	"  -o, --output=SKETCH   also save the count's sketch to SKETCH (atomically)\n"
	"  -s, --sketch=SKETCH   count the union of sketches (repeatable), and of\n"
	"                        the FILEs given\n"
	"      --add             add the input (FILEs, or standard input) to -s SKETCH\n"
	"                        and replace it (or write -o)\n"
	"      --precision=P     2^P registers in a new sketch, 4..18 (default 16)\n"
	"      --key=HEX         128-bit SipHash key of a new sketch, 32 hex digits\n"
	"                        (default: bfcount's own, public key)\n"
	"      --like=SKETCH     a new sketch with SKETCH's key and precision\n"
	"  -v, --verbose         also report the standard error on stderr\n"
	"      --json            print the count as a JSON object: {\"count\": N}, with\n"
	"                        \"file\" for each of several filters (JSON Lines);\n"
	"                        also spelled --report=json\n"
	CLI_FORMAT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_UNION = 256, OPT_INTERSECTION, OPT_JACCARD, OPT_ADD, OPT_PRECISION, OPT_KEY, OPT_LIKE };
enum set_op { COUNT_EACH, UNION, INTERSECTION, JACCARD };

static const struct option long_options[] = {
	{ "filter", required_argument, NULL, 'f' },
	{ "union", no_argument, NULL, OPT_UNION },
	{ "intersection", no_argument, NULL, OPT_INTERSECTION },
	{ "jaccard", no_argument, NULL, OPT_JACCARD },
	{ "output", required_argument, NULL, 'o' },
	{ "sketch", required_argument, NULL, 's' },
	{ "add", no_argument, NULL, OPT_ADD },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "like", required_argument, NULL, OPT_LIKE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_KEY_OPTIONS,
	CLI_KEY_CASE_OPTION,
	CLI_REPORT_OPTIONS,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	struct cli_keys_given keys;	/* given: they shape stream keys, refused with -f */
	int verbose;
	enum set_op op;
	const char **filters;	/* -f arguments, then operands in filter mode */
	size_t nfilters;
	char **inputs;
	int ninputs;
	struct sketch_options {
		const char **paths;	/* -s */
		size_t n;
		const char *output;	/* -o */
		const char *like;	/* --like */
		int add;		/* --add */
		unsigned precision;	/* --precision, 0 = default */
		unsigned char key[16];	/* --key */
		int key_given;
		const char *first;	/* the first sketch option given, for conflicts */
	} sk;
};

/* s as a JSON string: '"' and '\\' escaped, bytes below 0x20 as \u00XX. */
static void put_json_string(struct writer *out, const char *s)
{
	char esc[8];

	if (writer_put(out, "\"", 1) < 0)
		cli_write_error(errno);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int n = c == '"' || c == '\\' ? snprintf(esc, sizeof esc, "\\%c", c)
			: c < 0x20 ? snprintf(esc, sizeof esc, "\\u%04x", c)
			: snprintf(esc, sizeof esc, "%c", c);

		if (writer_put(out, esc, (size_t)n) < 0)
			cli_write_error(errno);
	}
	if (writer_put(out, "\"", 1) < 0)
		cli_write_error(errno);
}

/* "{" and, with a label, its "file" member: a JSON report's opening. */
static void open_report(struct writer *out, const char *label)
{
	if (writer_put(out, "{", 1) < 0)
		cli_write_error(errno);
	if (label == NULL)
		return;
	if (writer_put(out, "\"file\":", 7) < 0)
		cli_write_error(errno);
	put_json_string(out, label);
	if (writer_put(out, ",", 1) < 0)
		cli_write_error(errno);
}

static void set_op(struct options *opt, enum set_op op)
{
	if (opt->op != COUNT_EACH && opt->op != op)
		cli_usage_error("choose one of --union, --intersection and --jaccard");
	opt->op = op;
}

/* -o, -s, --add, --precision, --key, --like: the sketch a stream is counted into. */
static void sketch_option(struct sketch_options *sk, int c, const char *arg)
{
	static const struct { int c; const char *name; } named[] = {
		{ 'o', "-o" }, { 's', "-s" }, { OPT_ADD, "--add" }, { OPT_PRECISION, "--precision" },
		{ OPT_KEY, "--key" }, { OPT_LIKE, "--like" },
	};

	for (size_t i = 0; sk->first == NULL && i < sizeof named / sizeof named[0]; i++)
		if (named[i].c == c)
			sk->first = named[i].name;
	switch (c) {
	case 'o': sk->output = arg; break;
	case 's': sk->paths[sk->n++] = arg; break;
	case OPT_ADD: sk->add = 1; break;
	case OPT_PRECISION:
		sk->precision = (unsigned)cli_count("precision", arg, HLL_PRECISION_MIN, HLL_PRECISION_MAX);
		break;
	case OPT_KEY: cli_hex_key("key", arg, sk->key); sk->key_given = 1; break;
	case OPT_LIKE: sk->like = arg; break;
	}
}

static void parse_option(struct options *opt, int c, const char *arg)
{
	if (cli_key_option(c, arg, &opt->keys) || cli_report_option(c, arg) || cli_common_option(c, arg))
		return;
	switch (c) {
	case 'f': opt->filters[opt->nfilters++] = arg; break;
	case OPT_UNION: set_op(opt, UNION); break;
	case OPT_INTERSECTION: set_op(opt, INTERSECTION); break;
	case OPT_JACCARD: set_op(opt, JACCARD); break;
	case 'o': case 's': case OPT_ADD: case OPT_PRECISION: case OPT_KEY: case OPT_LIKE:
		sketch_option(&opt->sk, c, arg);
		break;
	case 'v': opt->verbose = 1; break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

static void check_filter_mode(struct options *opt)
{
	if (opt->keys.given)
		cli_usage_error("the key options (-k, -t, -i, -z, --header, --csv, --jsonl, --bad-line) and --no-decompress apply to streams, not to filters (-f)");
	cli_keys_optional();	/* counts come from the bits: fingerprints suffice */
	cli_dcso_readable();	/* and DCSO filters have bits too */
	cli_warn_overfull_loads();
	for (int i = 0; i < opt->ninputs; i++)
		opt->filters[opt->nfilters++] = opt->inputs[i];
	if (cli_stdin_uses((char *const *)opt->filters, opt->nfilters) > 1)
		cli_usage_error("standard input can be read only once");
	if (opt->op != COUNT_EACH && opt->nfilters < 2)
		cli_usage_error("--union, --intersection and --jaccard need two or more filters");
	if ((opt->op == INTERSECTION || opt->op == JACCARD) && opt->nfilters > INTERSECT_MAX)
		cli_usage_error("--intersection and --jaccard take at most %d filters", INTERSECT_MAX);
}

/* Whether the stream is read: always without -s; with -s, for FILEs or --add. */
static int reads_input(const struct options *opt)
{
	return opt->sk.n == 0 || opt->sk.add || opt->ninputs > 0;
}

/* Where the sketch is saved: -o, over the one -s with --add, or nowhere (NULL). */
static const char *sketch_destination(const struct options *opt)
{
	if (opt->sk.output)
		return opt->sk.output;
	return opt->sk.add ? opt->sk.paths[0] : NULL;
}

static void check_sketch_stdin(const struct options *opt)
{
	const struct sketch_options *sk = &opt->sk;
	size_t uses = cli_stdin_uses((char *const *)sk->paths, sk->n)
		      + (sk->like != NULL && strcmp(sk->like, "-") == 0);

	if (uses > 1)
		cli_usage_error("standard input can be read only once");
	if (uses == 1 && reads_input(opt)
	    && (opt->ninputs == 0 || cli_stdin_uses(opt->inputs, (size_t)opt->ninputs) > 0))
		cli_usage_error("standard input cannot be both a sketch and the input");
}

static void check_sketch_options(const struct options *opt)
{
	const struct sketch_options *sk = &opt->sk;
	const char *dest = sketch_destination(opt);

	if (sk->add && sk->n == 0)
		cli_usage_error("--add needs -s SKETCH, the sketch to add to");
	if (sk->add && sk->output == NULL && (sk->n > 1 || strcmp(sk->paths[0], "-") == 0))
		cli_usage_error("--add with %s needs -o FILE, where the result goes",
				sk->n > 1 ? "several sketches" : "-s -");
	if (sk->n > 0 && sk->like)
		cli_usage_error("--like cannot be used with -s: the sketches are the model");
	if ((sk->n > 0 || sk->like) && (sk->key_given || sk->precision))
		cli_usage_error("%s cannot be used with %s: the sketch's key and precision are fixed",
				sk->key_given ? "--key" : "--precision", sk->n > 0 ? "-s" : "--like");
	if (sk->key_given && cli_key_file)
		cli_usage_error("--key and --key-file cannot be used together");
	if (dest && strcmp(dest, "-") == 0)
		cli_usage_error("-o -: a sketch does not go to standard output, which carries the count");
	check_sketch_stdin(opt);
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	cli_key_options_init(&opt->keys);
	opt->filters = calloc((size_t)argc, sizeof *opt->filters);
	opt->sk.paths = calloc((size_t)argc, sizeof *opt->sk.paths);
	if (opt->filters == NULL || opt->sk.paths == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	cli_repeatable_options("fs");	/* filters and sketches, each counted or merged */
	while ((c = cli_getopt(argc, argv, ":" CLI_KEY_LETTERS "ij:f:o:s:vhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	cli_key_options_finish(&opt->keys, NULL);
	if (opt->nfilters > 0 && opt->sk.first)
		cli_usage_error("%s works on streams and sketches, not with filters (-f)", opt->sk.first);
	if (opt->op != COUNT_EACH && opt->sk.first)
		cli_usage_error("%s works on streams and sketches, not with --union, --intersection or --jaccard (filters)",
				opt->sk.first);
	/* set operations are on filters: nothing else can be meant */
	if (opt->nfilters > 0 || opt->op != COUNT_EACH)
		check_filter_mode(opt);
	else
		check_sketch_options(opt);
}

/* ---- stream mode ---------------------------------------------------- */

/* A new sketch: --precision, and --key, --key-file or bfcount's own key. */
static struct sketch *new_sketch(const struct options *opt)
{
	unsigned precision = opt->sk.precision ? opt->sk.precision : HLL_PRECISION_DEFAULT;
	uint32_t flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	unsigned char key[16];
	struct sketch *s;
	const char *why;

	if (opt->sk.key_given)
		memcpy(key, opt->sk.key, sizeof key);
	else if (cli_key_file)
		flags |= cli_new_key(key);
	else
		memcpy(key, sketch_default_key, sizeof key);
	s = sketch_new(precision, FILTER_SIPHASH_1_3, flags, key, &why);
	if (s == NULL)
		cli_fatal("%s", why);
	return s;
}

/* --like: an empty sketch that combines with the model. */
static struct sketch *empty_like(const struct options *opt)
{
	struct sketch *model = cli_load_sketch(opt->sk.like, reads_input(opt));
	const char *why;
	struct sketch *s = sketch_new_like(model, &why);

	sketch_free(model);
	if (s == NULL)
		cli_fatal("%s", why);
	return s;
}

/* -s: the union of the sketches, in the first one. */
static struct sketch *union_of_sketches(const struct options *opt)
{
	const char *const *paths = opt->sk.paths;
	struct sketch *acc = cli_load_sketch(paths[0], reads_input(opt));

	for (size_t i = 1; i < opt->sk.n; i++) {
		struct sketch *s = cli_load_sketch(paths[i], 0);
		const char *what;
		char difference[96];

		if (!sketch_compatible(acc, s, &what)) {
			cli_sketch_difference(s, acc, what, difference, sizeof difference);
			sketch_free(s);
			sketch_free(acc);
			cli_fatal("%s: cannot be combined with %s: different %s",
				  cli_display_name(paths[i]), cli_display_name(paths[0]), difference);
		}
		if (sketch_merge(acc, s, &what) < 0) {
			sketch_free(s);
			sketch_free(acc);
			cli_fatal("%s: %s", cli_display_name(paths[i]), what);
		}
		sketch_free(s);
	}
	return acc;
}

/* The sketch the input is counted into; the keys normalised as it says. */
static struct sketch *acquire_sketch(struct options *opt)
{
	const char *from = opt->sk.n > 0 ? opt->sk.paths[0] : opt->sk.like;
	struct sketch *s;

	if (opt->sk.n > 0)
		s = union_of_sketches(opt);
	else if (opt->sk.like)
		s = empty_like(opt);
	else
		return new_sketch(opt);
	if (opt->keys.spec.fold_case && !(s->flags & FILTER_FOLD_CASE)) {
		sketch_free(s);
		cli_fatal("%s: the sketch was made without -i: its keys are case-sensitive",
			  cli_display_name(from));
	}
	opt->keys.spec.fold_case = (s->flags & FILTER_FOLD_CASE) != 0;
	return s;
}

/*
 * Every thread counts: keys are hashed and added where the batch is
 * worked on, into partial counters merged into the sketch at the end
 * (sketch_shards), which gives the sketch counting them in order would.
 */
struct counter {
	const struct options *opt;
	struct sketch *sketch;
	struct sketch_shards *shards;
	struct keyset keys[CLI_SLOTS];
	uint64_t inputs_read;	/* inputs opened and read, to their end or a clean cut */
};

/* Reader thread: the batch's keys. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct counter *c = ctx;

	if (keyset_build(&c->keys[slot], &c->opt->keys.spec, records, n) < 0)
		return -1;
	*units = c->keys[slot].count;
	return 0;
}

/* Hashed this many keys at a time, on the stack: the pipeline's chunks are as big. */
#define COUNT_CHUNK 256

/* Any thread: hash keys [from, to) and count them in a partial. */
static void count_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct counter *c = ctx;
	const struct line *keys = c->keys[slot].keys;
	uint64_t hashes[COUNT_CHUNK];

	while (from < to) {
		size_t n = to - from < COUNT_CHUNK ? to - from : COUNT_CHUNK;

		sketch_hash(c->sketch, keys + from, n, hashes);
		sketch_shards_add(c->shards, hashes, n);
		from += n;
	}
}

/* Nothing: where a line may cut the batch, its keys are counted after the cut. */
static void count_later(void *ctx, unsigned slot, size_t from, size_t to)
{
	(void)ctx;
	(void)slot;
	(void)from;
	(void)to;
}

/* Calling thread, in input order: the batch cut at its first line not JSON (cli_stage.cut). */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct counter *c = ctx;

	(void)records;
	return cli_bad_lines_cut(&c->keys[slot], n, why, why_len);
}

/* Calling thread, in input order, after the cut: the keys of the lines before it counted. */
static int count_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct counter *c = ctx;

	count_keys(c, slot, 0, c->keys[slot].count);
	(void)cli_bad_lines(&c->keys[slot]);
	(void)records;
	(void)n;
	return 0;
}

/* Calling thread: lines that are not JSON (--json); the counts are all in the partials. */
static int batch_counted(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	const struct counter *c = ctx;

	(void)cli_bad_lines(&c->keys[slot]);
	(void)records;
	(void)n;
	return 0;
}

/* The partials under way, for the progress line. */
static struct sketch_shards *counting;

static void count_progress(char *buf, size_t len)
{
	double estimate = sketch_shards_estimate(counting);

	if (!isnan(estimate))
		snprintf(buf, len, "about %.0f distinct", estimate);
}

/* The count on stdout, and with -v its precision (and the sketch saved) on stderr. */
static void put_estimate(const struct options *opt, const struct sketch *s, const char *saved,
			 struct writer *out)
{
	double estimate = sketch_estimate(s), error = sketch_relative_error(s);
	char text[160];

	if (cli_reports_json())
		snprintf(text, sizeof text, "{\"count\":%.0f,\"exact\":%s,\"relative_error\":%.6g}\n",
			 estimate, sketch_is_exact(s) ? "true" : "false", sketch_is_exact(s) ? 0.0 : error);
	else
		snprintf(text, sizeof text, "%.0f\n", estimate);
	if (writer_put(out, text, strlen(text)) < 0)
		cli_write_error(errno);
	if (!opt->verbose)
		return;
	cli_bad_lines_report();
	if (sketch_is_exact(s))
		cli_warn("exact count (below the HyperLogLog threshold)");
	else
		cli_warn("HyperLogLog estimate: standard error %.2f%% (about %.0f); 95%% within +-%.0f",
			 100.0 * error, estimate * error, 1.96 * estimate * error);
	if (saved)
		cli_warn("%s: sketch saved: precision %u, %llu keys added in all", saved,
			 sketch_precision(s), (unsigned long long)s->insertions);
}

/* Calling thread: nothing to do before an input. */
static void input_begin(void *ctx, const char *path)
{
	(void)ctx;
	(void)path;
}

/* Calling thread: an input was opened and read (one that could not be opened has no end). */
static int input_read(void *ctx, const char *path)
{
	struct counter *c = ctx;
	struct stat st;

	/* a directory ends too (EISDIR), but it is no input: nothing was read */
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	c->inputs_read++;
	return 0;
}

/* Count the input into c->sketch on every thread; cli_each_input_ranged's status. */
static int count_input(struct counter *c)
{
	static const struct cli_stage stage = {
		.prepare = prepare_keys, .work = count_keys, .consume = batch_counted
	};
	/*
	 * Where a line not JSON cuts the input (--bad-line=error), nothing
	 * of a batch is counted before the cut is known: the lines after it
	 * never are. Such input is read in order (cli_fields_in_order).
	 */
	static const struct cli_stage cut = {
		.prepare = prepare_keys, .work = count_later, .consume = count_batch, .cut = cut_batch
	};
	static const struct cli_input_events events = { .begin = input_begin, .end = input_read };
	const struct cli_stage *ordered = cli_bad_lines_cut_on() ? &cut : &stage;
	const char *why;
	int status;

	c->shards = sketch_shards_new(c->sketch, (unsigned)pipeline_threads(), &why);
	if (c->shards == NULL)
		cli_fatal("%s", why);
	counting = c->shards;
	cli_progress_detail = count_progress;
	/*
	 * Nothing here depends on the order of the keys, so a big regular
	 * file is read in ranges by every thread (cli_each_input_ranged), each
	 * counting its own batches into the partials as above.
	 */
	status = cli_each_input_ranged(c->opt->inputs, c->opt->ninputs, c->opt->keys.delim, ordered, &stage,
				       &events, c);
	cli_progress_detail = NULL;
	sketch_shards_merge(c->shards);
	sketch_shards_free(c->shards);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		keyset_free(&c->keys[i]);
	return status;
}

static int count_stream(struct options *opt, struct writer *out)
{
	const char *dest = sketch_destination(opt);
	struct counter c = { .opt = opt };
	int status = 0;

	if (dest)
		cli_check_destination(dest);
	for (size_t i = 0; dest && i < opt->sk.n; i++)
		if (cli_same_file(dest, opt->sk.paths[i]))
			cli_lock_update(dest);	/* --add in place: read, then replaced */
	c.sketch = acquire_sketch(opt);
	if (reads_input(opt))
		status = count_input(&c);
	/* a clean cut: the lines before it are whole, and saved */
	if (dest && status < 0 && !cli_inputs_cut())
		cli_warn("no sketch written: an input could not be read");
	else if (dest)
		cli_save_sketch(c.sketch, dest);
	cli_unlock();
	/*
	 * As grep -c prints counts only for files it read: when every input
	 * failed to open and no sketch was loaded, nothing was counted, and a
	 * 0 beside the error would read as an answer.
	 */
	if (status < 0 && c.inputs_read == 0 && opt->sk.n == 0) {
		sketch_free(c.sketch);
		return status;
	}
	put_estimate(opt, c.sketch, status < 0 && !cli_inputs_cut() ? NULL : dest, out);
	sketch_free(c.sketch);
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
	if (cli_reports_json()) {
		open_report(out, label);
		snprintf(text, sizeof text, "\"count\":%.0f}\n", value);
		if (writer_put(out, text, strlen(text)) < 0)
			cli_write_error(errno);
		return;
	}
	snprintf(text, sizeof text, label ? "%.0f\t" : "%.0f\n", value);
	if (writer_put(out, text, strlen(text)) < 0 ||
	    (label && (writer_put(out, label, strlen(label)) < 0 || writer_put(out, "\n", 1) < 0)))
		cli_write_error(errno);
}

/*
 * A windowed filter's keys within its window at the time every program reads it
 * (cli_window_read_time: its clock, or the wall clock): without
 * --refresh each key is in one generation, so the sum of the live
 * generations' estimates counts it once.
 */
static void count_window(const struct options *opt, size_t i, struct window *w,
			 struct writer *out)
{
	struct cli_window at;	/* no --now here: the window's own rule (cli_window.h) */

	cli_window_init(&at);
	put_count(out, window_estimate_count(w, cli_window_read_time(&at, w, opt->filters[i])),
		  opt->nfilters > 1 ? opt->filters[i] : NULL, opt->filters[i]);
	window_free(w);
}

static void count_each(const struct options *opt, struct writer *out)
{
	for (size_t i = 0; i < opt->nfilters; i++) {
		struct cascade *c;
		struct window *w;
		double estimate;

		cli_load_any(opt->filters[i], &c, &w, NULL);
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

	snprintf(text, sizeof text, cli_reports_json() ? "{\"jaccard\":%.4f}\n" : "%.4f\n", fmin(value, 1.0));
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

/* Stage at of c, taken out of it (c keeps the others, to be freed). */
static struct filter *take_stage(struct cascade *c, size_t at)
{
	struct filter *f = c->stages[at];

	memmove(&c->stages[at], &c->stages[at + 1], (c->nstages - at - 1) * sizeof *c->stages);
	c->nstages--;
	return f;
}

/* Stage f as a fixed filter of its own (f is freed on failure). */
static struct cascade *as_fixed(struct filter *f, const char *name)
{
	const char *why;
	struct cascade *c = cascade_from_stages(&f, 1, 0, 0, f->params.capacity,
						f->params.target_p, &why);

	if (c == NULL) {
		filter_free(f);
		cli_fatal("%s: %s", name, cli_explain(why));
	}
	return c;
}

/*
 * OR the stages of c that hold keys into *acc (NULL: the first becomes
 * it); all must have one shape.
 */
static void flatten_into(struct cascade **acc, struct cascade *c, const char *name)
{
	const char *why;

	for (size_t i = 0; i < c->nstages;) {
		struct cascade *one;

		if (filter_bits_set(c->stages[i]) == 0) {
			i++;
			continue;
		}
		if (*acc != NULL && !filter_compatible((*acc)->stages[0], c->stages[i], &why))
			cli_fatal("%s: its keys sit in stages of different sizes (a growing filter past its first stage, or a window whose generations grew): a key it shares with another filter may sit in a stage of another size there, and stages of different sizes cannot be compared bit by bit, so no union or intersection can be estimated",
				  name);
		one = as_fixed(take_stage(c, i), name);
		if (*acc == NULL) {
			*acc = one;
			continue;
		}
		if (merge_into(*acc, one, MERGE_OR, &why) < 0)
			cli_fatal("%s: %s", name, cli_explain(why));
		cascade_free(one);
	}
}

/*
 * A filter as one plain Bloom filter, for unions and intersections. A
 * fixed filter is one already. A growing filter's key sits in the stage
 * that was newest when it arrived, so a key two filters share can sit in
 * stage 0 of one and stage 2 of the other, and stages of different sizes
 * cannot be compared bit by bit: it would count twice in a union and never
 * in an intersection. Where all of its keys sit in stages of one shape
 * (one stage: it has not outgrown its first) the OR of those stages is
 * the filter. The same holds for a window: its live generations' stages
 * (as of its clock) are OR-ed when they share one shape, which they do
 * until a generation grows past its first stage. Anything else is
 * refused, saying why.
 */
static struct cascade *flattened(const char *name)
{
	struct cascade *c, *acc = NULL;
	struct window *w;
	struct cli_window at;	/* no --now here: the window's own rule (cli_window.h) */

	cli_load_any(name, &c, &w, NULL);
	if (c != NULL) {
		if (c->growth == 0)
			return c;
		flatten_into(&acc, c, name);
		/* no keys: the stage they would go to is the shape */
		if (acc == NULL)
			acc = as_fixed(take_stage(c, 0), name);
		cascade_free(c);
		return acc;
	}
	cli_window_init(&at);
	for (size_t g = window_live_from(w, cli_window_read_time(&at, w, name)); g < w->ngen; g++)
		flatten_into(&acc, w->gen[g], name);
	if (acc == NULL && w->ngen > 0)
		acc = as_fixed(take_stage(w->gen[w->ngen - 1], 0), name);
	window_free(w);
	if (acc == NULL)
		cli_fatal("%s: a window that has no generation yet: no filter to combine", name);
	return acc;
}

static void count_combined(const struct options *opt, struct writer *out)
{
	struct cascade **filters = calloc(opt->nfilters, sizeof *filters);
	struct cascade *u;
	double union_count, union_sd, intersection = 0.0, variance = 0.0;

	if (filters == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	for (size_t i = 0; i < opt->nfilters; i++)
		filters[i] = flattened(opt->filters[i]);
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
	free(opt.sk.paths);
	cli_fields_release(&opt.keys.spec);
	return status < 0 ? EXIT_TROUBLE : 0;
}
