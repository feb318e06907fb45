/* SPDX-License-Identifier: MIT */
/*
 * bftop - the most frequent keys of a stream, and how often any key
 * occurred, in memory fixed in advance.
 *
 * The answer of `sort | uniq -c | sort -rn | head`, in its format, from a
 * heavy-hitter summary (topk.h): Space-Saving, whose every count comes
 * with a guaranteed interval and which keeps every key above EPS times
 * the stream, beside a count-min sketch with conservative update for the
 * frequency of any key (-q). The summary outlives the process as a file
 * (topk_file.h): -o saves it, -s loads it (and adds the FILEs given),
 * bfmerge merges summaries of parallel jobs, bfinfo shows one. -o onto
 * one of the -s summaries is an update: its lock (lock.h) is held from
 * before it is read until the new one is renamed into place, so
 * concurrent updates of one summary take turns instead of losing counts.
 *
 * What is listed is what the summary can vouch for, as DataSketches'
 * frequent items list it: by default the keys surely above the error
 * bound (NO_FALSE_POSITIVES), with --bounds every key that may be
 * (NO_FALSE_NEGATIVES), marked (topk_frequent). A count is printed only
 * where the bounds meet; elsewhere the range LOWER-UPPER, never the upper
 * bound alone, which on a tail of distinct keys is mostly the error. No
 * key surely frequent is grep's "nothing selected": exit status 1.
 *
 * Threads: -j N reads, splits and hashes keys on N threads, but the
 * summary is updated on one, in input order. Its updates depend on the
 * order (which key is evicted, which cells conservative update raises),
 * so per-thread summaries merged at the end would print different
 * counts for different N; one ordered updater prints the same for every
 * N, and costs little: an update is a hash-table probe, a heap step and
 * `depth` cell writes, against SipHash and key splitting, which are the
 * work spread out.
 *
 * --window: the top of the last N keys or W seconds, from a ring of
 * summaries, one per generation of the window (topk_window.h), merged at
 * the end; bfuniq's window options, their slack and their generations.
 * A windowed summary is not saved or loaded (-o, -s, -q refuse it).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_fields.h"
#include "cli_window.h"
#include "json_out.h"
#include "keys.h"
#include "numparse.h"
#include "topk.h"
#include "topk_file.h"
#include "topk_window.h"

static const char usage[] =
	"Usage: bftop [-n N] [-e EPS] [--confidence C] [-v] [--json] [-o SUMMARY] [-s SUMMARY...] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [-i] [-z] [-w] [--shard I/N --shard-key HEX] [FILE...]\n"
	"   or: bftop -q -s SUMMARY [-v] [--json] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [-i] [-z] [-w] [--shard I/N --shard-key HEX] [FILE...]\n"
	"   or: bftop --window W [--generations G] [--time-field F] [--bad-time error|skip] [--now T] [-n N] [-e EPS] [-v] [--json] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [-i] [-z] [-w] [--shard I/N --shard-key HEX] [FILE...]\n"
	"Print the frequent keys of FILEs (or standard input), most frequent first,\n"
	"each after its count as uniq(1) counts (\"%7llu KEY\"), from a summary of\n"
	"fixed size: the keys that surely occurred more often than its error bound,\n"
	"each with its exact count or, where that is not known, its range\n"
	"LOWER-UPPER (\"1841-1844 KEY\"). No such key: nothing printed, a line on\n"
	"standard error, exit status 1.\n"
	"\n"
	"  -n, --top=N           print the N most frequent keys (default 10; 0: all)\n"
	"  -e, --error=EPS       additive error, a fraction of the stream: every key\n"
	"                        above EPS times the stream is kept (default 1e-4)\n"
	"      --confidence=C    probability of the count-min bound (default 0.999)\n"
	"  -v, --bounds          also the keys that may be frequent: print the lower and\n"
	"                        upper bounds, + (surely frequent) or ? (maybe; - with\n"
	"                        -q: not frequent), the key\n"
	"      --json            print a JSON array of {key, count (null unless exact),\n"
	"                        lower, upper, guaranteed}\n"
	"      --report=json     the same as --json, spelled as in every program\n"
	"  -q, --query           print each input key's count or range (needs -s)\n"
	"  -o, --output=SUMMARY  save the summary to SUMMARY (atomically)\n"
	"  -s, --summary=SUMMARY start from saved summaries (repeatable: merged);\n"
	"                        the FILEs given are added, standard input only as -\n";
/* The rest of --help: one string would pass the 4095 bytes C99 promises. */
static const char usage_more[] =
	CLI_KEY_HELP
	CLI_KEY_CASE_HELP
	CLI_KEY_WORDS_HELP
	CLI_FORMAT_HELP
	CLI_WINDOW_HELP
	CLI_COMMON_HELP_NO_KEY_FILE
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_CONFIDENCE = 256 };

static const struct option long_options[] = {
	{ "top", required_argument, NULL, 'n' },
	{ "error", required_argument, NULL, 'e' },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "bounds", no_argument, NULL, 'v' },
	{ "query", no_argument, NULL, 'q' },
	{ "output", required_argument, NULL, 'o' },
	{ "summary", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_KEY_OPTIONS,
	CLI_KEY_CASE_OPTION,
	CLI_KEY_WORDS_OPTION,
	CLI_WINDOW_OPTIONS,
	CLI_REPORT_OPTIONS,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	struct cli_keys_given keys;
	uint64_t top;
	double eps, confidence;
	int sized;		/* -e or --confidence given */
	int bounds, json, query;
	int top_given;		/* -n */
	const char *output;
	const char **summaries;	/* -s */
	size_t nsummaries;
	char **inputs;
	int ninputs;
	struct cli_window win;	/* kind 0: no --window */
};

/*
 * A number in [min, max], as every option's value is refused: "invalid
 * OPTION 'ARG': WHY", the range said in words (range) whatever side of it
 * the value fell, within (0, 1) or not.
 */
static double fraction(const char *option, const char *arg, double min, double max,
		       const char *range)
{
	const char *why;
	double v;

	if (numparse_rate(arg, &v, &why) < 0 &&
	    (strcmp(why, "not a number") == 0 || strcmp(why, "empty") == 0))
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	if (why != NULL || !(v >= min && v <= max))
		cli_usage_error("invalid %s '%s': must be %s", option, arg, range);
	return v;
}

static void parse_option(struct options *opt, int c, const char *arg)
{
	if (cli_key_option(c, arg, &opt->keys) || cli_window_option(c, arg, &opt->win) ||
	    cli_report_option(c, arg) || cli_common_option(c, arg))
		return;
	switch (c) {
	case 'n': opt->top = cli_count("top", arg, 0, UINT64_MAX); opt->top_given = 1; break;
	case 'e':
		opt->eps = fraction("error bound", arg, TOPK_EPS_MIN, TOPK_EPS_MAX, "from 1e-6 to 0.5");
		opt->sized = 1;
		break;
	case OPT_CONFIDENCE:
		opt->confidence = fraction("confidence", arg, 0.5, 1.0 - 1e-9,
					   "at least 0.5 and below 1 (at most 0.999999999)");
		opt->sized = 1;
		break;
	case 'v': opt->bounds = 1; break;
	case 'q': opt->query = 1; break;
	case 'o': opt->output = arg; break;
	case 's': opt->summaries[opt->nsummaries++] = arg; break;
	case 'h': fputs(usage, stdout); cli_help(usage_more);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

static void check_options(const struct options *opt)
{
	size_t stdin_uses = cli_stdin_uses((char *const *)opt->summaries, opt->nsummaries);

	if (opt->query && opt->nsummaries == 0)
		cli_usage_error("-q needs -s SUMMARY, the summary to query");
	if (opt->query && opt->output)
		cli_usage_error("-q reads the summary, it does not change it: no -o");
	if (opt->query && opt->top_given)
		cli_usage_error("-n chooses the most frequent keys to list; -q prints every input key's count");
	if (opt->sized && opt->nsummaries > 0)
		cli_usage_error("-e and --confidence size a new summary, not one loaded with -s");
	if (opt->output && strcmp(opt->output, "-") == 0)
		cli_usage_error("-o -: a summary does not go to standard output, which carries the keys");
	if (cli_key_file)
		cli_usage_error("--key-file: bftop summaries are keyed with bftop's own key");
	if (stdin_uses > 1 || (stdin_uses == 1 && cli_stdin_uses(opt->inputs, (size_t)opt->ninputs) > 0))
		cli_usage_error("standard input can be read only once");
	if (stdin_uses == 1 && opt->nsummaries > 0 && opt->ninputs == 0 && opt->query)
		cli_usage_error("standard input cannot be both a summary and the input");
	if (opt->win.wp.kind == 0 && opt->win.shaped)
		cli_usage_error("--generations, --time-field, --bad-time and --now need --window");
	if (opt->win.wp.kind != 0 && (opt->output || opt->nsummaries > 0))
		cli_usage_error("--window: a windowed summary is not saved or loaded (-o, -s, -q)");
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	cli_key_options_init(&opt->keys);
	opt->top = 10;
	opt->eps = TOPK_EPS_DEFAULT;
	opt->confidence = TOPK_CONFIDENCE_DEFAULT;
	cli_window_init(&opt->win);
	opt->summaries = calloc((size_t)argc, sizeof *opt->summaries);
	if (opt->summaries == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	cli_repeatable_options("s");	/* summaries, merged */
	while ((c = cli_getopt(argc, argv, ":" CLI_KEY_LETTERS "iwn:e:vqo:s:j:hV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->json = cli_reports_json();
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	check_options(opt);
	cli_key_options_finish(&opt->keys, NULL);	/* a header is not a key; bftop prints none */
	/* the window's rate is a filter's: nothing here uses it, but the plan checks it */
	cli_window_finish(&opt->win, 0, 0.5, opt->keys.spec.separator);
}

/* Whether the stream is read: always without -s; with -s, only the FILEs given. */
static int reads_input(const struct options *opt)
{
	return opt->nsummaries == 0 || opt->ninputs > 0;
}

/* ---- the summary ------------------------------------------------------- */

/* --max-memory: refuse a summary whose parameters need more (a new one before it is allocated). */
static void check_memory(const struct topk_params *p, unsigned copies, const char *name /* or NULL */)
{
	uint64_t need = copies * topk_memory(p), limit = filter_memory_limit();
	char a[32], b[32];

	if (limit != 0 && need > limit)
		cli_fatal("%s%s%s need%s %s (%llu bytes), over the memory limit of %s",
			  name ? name : "", name ? ": " : "",
			  copies > 1 ? "the window's summaries" : "summary", copies > 1 ? "" : "s",
			  cli_human_bytes(need, a), (unsigned long long)need, cli_human_bytes(limit, b));
}

/* Load path; a bad one is fatal, freeing drop (a summary loaded before) first. */
static struct topk *load_summary(const char *path, struct topk *drop)
{
	const char *why;
	struct topk *t = topk_file_load_path(path, &why);

	if (t == NULL) {
		topk_free(drop);
		cli_fatal("%s: %s", cli_display_name(path), why);
	}
	/* cli_fatal above is _Noreturn, which cppcheck takes for a function
	 * that returns (a false report, as in cmd/cli/sipkey.c). */
	/* cppcheck-suppress nullPointerRedundantCheck */
	if (t->needs_key) {
		topk_free(drop);
		topk_free(t);
		cli_fatal("%s: its key is kept in a key file, which bftop does not take",
			  cli_display_name(path));
	}
	if (topk_memory(&t->params) > filter_memory_limit() && filter_memory_limit() != 0) {
		struct topk_params p = t->params;

		topk_free(drop);
		topk_free(t);
		check_memory(&p, 1, cli_display_name(path));	/* fatal */
	}
	return t;
}

/* -s: the merge of the summaries, in the first; else a new one of -e and --confidence. */
static struct topk *acquire_summary(struct options *opt)
{
	struct topk_params p;
	struct topk *t;
	const char *why;

	if (opt->nsummaries == 0) {
		if (topk_size(opt->eps, opt->confidence, &p, &why) < 0)
			cli_fatal("%s", why);
		/* a window holds up to G generations, and their merge */
		check_memory(&p, opt->win.wp.kind != 0 ? opt->win.wp.generations + 1u : 1u, NULL);
		t = topk_new(&p, FILTER_SIPHASH_1_3, opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0,
			     topk_default_key, &why);
		if (t == NULL)
			cli_fatal("%s", why);
		return t;
	}
	t = load_summary(opt->summaries[0], NULL);
	for (size_t i = 1; i < opt->nsummaries; i++) {
		struct topk *more = load_summary(opt->summaries[i], t);

		if (topk_merge(t, more, &why) < 0) {
			topk_free(more);
			topk_free(t);
			cli_fatal("%s: cannot be merged with %s: %s", cli_display_name(opt->summaries[i]),
				  cli_display_name(opt->summaries[0]), why);
		}
		topk_free(more);
	}
	if (opt->keys.spec.fold_case && !(t->flags & FILTER_FOLD_CASE)) {
		topk_free(t);
		cli_fatal("%s: the summary was made without -i: its keys are case-sensitive",
			  cli_display_name(opt->summaries[0]));
	}
	opt->keys.spec.fold_case = (t->flags & FILTER_FOLD_CASE) != 0;
	return t;
}

/* ---- reading the stream ------------------------------------------------------- */

struct counter {
	const struct options *opt;
	struct topk *topk;
	struct writer *out;
	int first;		/* no JSON object written yet (-q --json) */
	struct keyset keys[CLI_SLOTS];
	uint64_t *hashes[CLI_SLOTS];	/* 2 per key */
	size_t hashes_cap[CLI_SLOTS];
	struct topk_window *window;	/* --window */
	uint64_t *record_times, *key_times;	/* a time window's, per batch */
	size_t record_times_cap, key_times_cap;
	uint64_t bad_times;
};

/* Reader thread: the batch's keys, and room for their hashes. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct counter *c = ctx;
	size_t count;

	if (keyset_build(&c->keys[slot], &c->opt->keys.spec, records, n) < 0)
		return -1;
	count = c->keys[slot].count;
	if (count > c->hashes_cap[slot]) {
		uint64_t *grown = realloc(c->hashes[slot], 2 * count * sizeof *grown);

		if (grown == NULL)
			return -1;
		c->hashes[slot] = grown;
		c->hashes_cap[slot] = count;
	}
	*units = count;
	return 0;
}

/* Any thread: hash keys [from, to). */
static void hash_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct counter *c = ctx;

	topk_hash(c->topk, c->keys[slot].keys + from, to - from, c->hashes[slot] + 2 * from);
}

/* Calling thread, in input order: count the batch's keys. */
static int add_keys(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct counter *c = ctx;

	(void)records;
	(void)n;
	(void)cli_bad_lines(&c->keys[slot]);	/* --bad-line=skip: counted for -v */
	topk_add_hashed(c->topk, c->keys[slot].keys, c->hashes[slot], c->keys[slot].count);
	return 0;
}

static void put(struct writer *out, const void *data, size_t len)
{
	if (writer_put(out, data, len) < 0)
		cli_write_error(errno);
}

/* A JSON string of len bytes of a key (need not be UTF-8: json_out.h says how). */
static void put_json_string(struct writer *out, const unsigned char *s, size_t len)
{
	if (json_out_string(out, s, len) < 0)
		cli_write_error(errno);
}

/*
 * A count as a person and a script read it: N when the bounds meet (the
 * exact count, in uniq -c's column), else LOWER-UPPER, which sort -n and
 * awk's $1+0 read as the lower bound. Never an upper bound alone.
 */
static void format_count(char *buf, size_t size, uint64_t lower, uint64_t upper)
{
	if (lower == upper)
		snprintf(buf, size, "%llu", (unsigned long long)lower);
	else
		snprintf(buf, size, "%llu-%llu", (unsigned long long)lower, (unsigned long long)upper);
}

/* --bounds' mark of how frequent a key is: surely, possibly, not (-q only). */
static char frequency_mark(enum topk_frequency f)
{
	return f == TOPK_SURE ? '+' : f == TOPK_POSSIBLE ? '?' : '-';
}

/* One key as a JSON object: its count only when exact, else null. */
static void put_json_key(struct counter *c, const unsigned char *key, size_t len, int truncated,
			 uint64_t lower, uint64_t upper, enum topk_frequency f)
{
	const char *open = c->first ? "[\n  {\"key\": " : ",\n  {\"key\": ";
	char count[24], text[160];

	if (lower == upper)
		format_count(count, sizeof count, lower, upper);
	else
		strcpy(count, "null");
	put(c->out, open, strlen(open));
	put_json_string(c->out, key, len);
	snprintf(text, sizeof text,
		 ", \"count\": %s, \"lower\": %llu, \"upper\": %llu, \"guaranteed\": %s%s}", count,
		 (unsigned long long)lower, (unsigned long long)upper,
		 f == TOPK_SURE ? "true" : "false", truncated ? ", \"truncated\": true" : "");
	put(c->out, text, strlen(text));
	c->first = 0;
}

/*
 * One key with its count, or with --bounds its bounds and how frequent
 * it is (frequency_mark), as text or JSON.
 */
static void put_key(struct counter *c, const unsigned char *key, size_t len, int truncated,
		    uint64_t lower, uint64_t upper)
{
	enum topk_frequency f = topk_frequency(c->topk, lower, upper);
	char count[48], text[96];

	if (c->opt->json) {
		put_json_key(c, key, len, truncated, lower, upper, f);
		return;
	}
	if (c->opt->bounds) {
		snprintf(text, sizeof text, "%7llu %7llu %c ", (unsigned long long)lower,
			 (unsigned long long)upper, frequency_mark(f));
	} else {
		format_count(count, sizeof count, lower, upper);
		snprintf(text, sizeof text, "%7s ", count);
	}
	put(c->out, text, strlen(text));
	put(c->out, key, len);
	/* 256 bytes and "...": longer than any key printed whole, so never one */
	if (truncated)
		put(c->out, "...", 3);
	put(c->out, &c->opt->keys.delim, 1);
}

static void end_json(struct counter *c)
{
	if (c->opt->json)
		put(c->out, c->first ? "[]\n" : "\n]\n", 3);
}

/*
 * Calling thread, in input order, before consume: the batch cut at its
 * first line not JSON (--jsonl, --bad-line=error) or, with --window
 * --time-field, without a time (cli_stage.cut), as bfuniq cuts it. The
 * times are kept for add_keys_windowed, which comes next (no split).
 */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct counter *c = ctx;
	const struct cli_window *cw = &c->opt->win;
	size_t cut = cli_bad_lines_cut(&c->keys[slot], n, why, why_len), timed;

	if (cw->wp.kind != WINDOW_TIME || cw->time.field == 0)
		return cut;
	timed = cli_window_record_times(cw, records, cut,
					cli_window_times(&c->record_times, &c->record_times_cap, n),
					&c->bad_times, why, why_len);
	if (timed < cut)
		keyset_truncate(&c->keys[slot], timed);
	return timed;
}

/* The times of the batch's keys in a time window: their records' (cut_batch), or now for all. */
static const uint64_t *key_times(struct counter *c, const struct keyset *ks,
				 const struct line *records, size_t n)
{
	const struct cli_window *cw = &c->opt->win;
	uint64_t *kt = cli_window_times(&c->key_times, &c->key_times_cap, ks->count);
	uint64_t *rt, now;

	if (cw->wp.kind != WINDOW_TIME)
		return NULL;
	if (cw->time.field == 0) {
		now = cli_window_clock(cw);
		for (size_t i = 0; i < ks->count; i++)
			kt[i] = now;
		return kt;
	}
	(void)records;
	(void)n;
	rt = c->record_times;
	for (size_t i = 0; i < ks->count; i++)
		kt[i] = rt[ks->record[i]];
	return kt;
}

/* Calling thread, in input order (--window): count the batch's keys in their generations. */
static int add_keys_windowed(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct counter *c = ctx;
	const struct keyset *ks = &c->keys[slot];
	const char *why;

	(void)cli_bad_lines(ks);
	if (topk_window_add(c->window, ks->keys, c->hashes[slot], key_times(c, ks, records, n),
			    ks->count, &why) < 0)
		cli_fatal("%s", why);
	return 0;
}

/* Calling thread, in input order (-q): each key's estimate, nothing added. */
static int query_keys(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct counter *c = ctx;
	const struct keyset *ks = &c->keys[slot];

	(void)records;
	(void)n;
	(void)cli_bad_lines(ks);
	for (size_t i = 0; i < ks->count; i++) {
		uint64_t lower, upper;

		topk_query(c->topk, c->hashes[slot] + 2 * i, &lower, &upper);
		put_key(c, (const unsigned char *)ks->keys[i].data, ks->keys[i].len, 0, lower, upper);
	}
	return 0;
}

/* Read every input through stage; cli_each_batch's status. */
static int read_input(struct counter *c, const struct cli_stage *stage)
{
	int status = cli_each_batch(c->opt->inputs, c->opt->ninputs, c->opt->keys.delim, stage, c);

	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		keyset_free(&c->keys[i]);
		free(c->hashes[i]);
	}
	free(c->record_times);
	free(c->key_times);
	return status;
}

/*
 * --window: count the input in a ring of generations, then make c->topk
 * (the empty model until then) the merge of those live at the end: the
 * latest time seen with --time-field, else --now or the wall clock.
 */
static int read_windowed(struct counter *c)
{
	static const struct cli_stage stage = {
		.prepare = prepare_keys, .work = hash_keys, .consume = add_keys_windowed,
		.cut = cut_batch,
	};
	const struct cli_window *cw = &c->opt->win;
	struct topk *merged;
	const char *why;
	uint64_t now;
	int status;

	c->window = topk_window_new(&cw->wp, c->topk, &why);
	if (c->window == NULL)
		cli_fatal("%s", why);
	status = read_input(c, &stage);
	now = cw->wp.kind == WINDOW_COUNT || cw->time.field ? c->window->clock : cli_window_clock(cw);
	merged = topk_window_summary(c->window, now, &why);
	if (merged == NULL)
		cli_fatal("%s", why);
	if (c->window->too_old > 0 || c->bad_times > 0)
		cli_warn("%llu keys before the window and %llu lines without a time were not counted",
			 (unsigned long long)c->window->too_old, (unsigned long long)c->bad_times);
	topk_window_free(c->window);
	c->window = NULL;
	topk_free(c->topk);
	c->topk = merged;
	return status;
}

/* ---- the answer ------------------------------------------------------------------ */

/*
 * The frequent keys, at most -n of them: the sure ones (DataSketches'
 * NO_FALSE_POSITIVES), or with --bounds every one that may be
 * (NO_FALSE_NEGATIVES), marked. Returns how many are sure.
 */
static size_t put_top(struct counter *c)
{
	struct topk_item *items = malloc(((size_t)c->topk->kept + 1) * sizeof *items);
	size_t n, sure = 0;

	if (items == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	n = topk_frequent(c->topk, c->opt->bounds ? TOPK_NO_FALSE_NEGATIVES : TOPK_NO_FALSE_POSITIVES,
			  items);
	for (size_t i = 0; i < n; i++)
		sure += topk_frequency(c->topk, items[i].count - items[i].error, items[i].upper) == TOPK_SURE;
	if (c->opt->top > 0 && c->opt->top < n)
		n = (size_t)c->opt->top;
	for (size_t i = 0; i < n; i++)
		put_key(c, items[i].key, items[i].truncated ? TOPK_KEY_MAX : (size_t)items[i].len,
			items[i].truncated, items[i].count - items[i].error, items[i].upper);
	end_json(c);
	free(items);
	return sure;
}

/* No key is surely frequent: say so, with the bound a key had to be above. */
static void no_frequent_keys(const struct topk *t)
{
	cli_warn("no frequent keys: none of the %llu keys counted surely occurred more than %llu times (the error bound)",
		 (unsigned long long)t->total, (unsigned long long)topk_floor(t));
}

/* Save t to path; fatal (t freed first) when it cannot be. */
static void save_summary(struct topk *t, const char *path)
{
	const char *why;

	if (topk_file_save_path(t, path, &why) < 0) {
		topk_free(t);
		cli_fatal("%s: %s", path, why);
	}
}

/* --bounds: the stream, the summary, and how many keys are surely or possibly frequent. */
static void report(const struct topk *t)
{
	struct topk_item *items = malloc(((size_t)t->kept + 1) * sizeof *items);
	size_t sure, possible;

	if (items == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	sure = topk_frequent(t, TOPK_NO_FALSE_POSITIVES, items);
	possible = topk_frequent(t, TOPK_NO_FALSE_NEGATIVES, items) - sure;
	free(items);
	cli_warn("%llu keys counted; %llu kept of %llu; error bound %llu: %zu keys surely occurred more often, %zu more may have, every other key at most that often",
		 (unsigned long long)t->total, (unsigned long long)t->kept,
		 (unsigned long long)t->params.capacity, (unsigned long long)topk_floor(t), sure,
		 possible);
}

int main(int argc, char **argv)
{
	static const struct cli_stage counting = {
		.prepare = prepare_keys, .work = hash_keys, .consume = add_keys, .cut = cut_batch
	};
	static const struct cli_stage querying = {
		.prepare = prepare_keys, .work = hash_keys, .consume = query_keys, .cut = cut_batch
	};
	struct options opt;
	struct writer out;
	struct counter c = { .first = 1 };
	int status = 0;
	size_t sure = 1;	/* -q selects nothing: its status is 0 */

	cli_init(argv[0]);
	parse_options(&opt, argc, argv);
	if (opt.output)
		cli_check_destination(opt.output);
	for (size_t i = 0; opt.output && i < opt.nsummaries; i++)
		if (cli_same_file(opt.output, opt.summaries[i]))
			cli_lock_update(opt.output);	/* -s T -o T: read, then replaced */
	c.opt = &opt;
	c.out = &out;
	c.topk = acquire_summary(&opt);
	cli_stdout_init(&out, 0);
	if (opt.query) {
		status = read_input(&c, &querying);
		end_json(&c);
	} else if (opt.win.wp.kind != 0) {
		status = read_windowed(&c);
		sure = put_top(&c);
	} else {
		if (reads_input(&opt))
			status = read_input(&c, &counting);
		sure = put_top(&c);
	}
	/* a clean cut: the lines before it are whole, and saved */
	if (opt.output && status < 0 && !cli_inputs_cut())
		cli_warn("no summary written: an input could not be read");
	else if (opt.output)
		save_summary(c.topk, opt.output);
	if (opt.bounds && !opt.json)
		report(c.topk);
	if (opt.bounds)
		cli_bad_lines_report();
	if (sure == 0 && status >= 0)	/* trouble said already what went wrong */
		no_frequent_keys(c.topk);
	cli_unlock();
	cli_stdout_finish(&out);
	topk_free(c.topk);
	cli_fields_release(&opt.keys.spec);
	free(opt.summaries);
	/* grep's: 1 when nothing is selected, here no key surely frequent */
	return status < 0 ? EXIT_TROUBLE : sure == 0 ? EXIT_NONE : 0;
}
