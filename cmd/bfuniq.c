/* SPDX-License-Identifier: MIT */
/*
 * bfuniq - write each line the first time its key is seen, in input order,
 * in bounded memory.
 *
 * awk '!seen[$0]++' holds every distinct line; sort -u needs the whole
 * stream before it writes anything. bfuniq holds a Bloom filter: lines are
 * written as they arrive (so it works on endless streams), a repeat is
 * never written twice, and the price is that a first-seen line is dropped,
 * as a false positive, with probability at most the target rate.
 *
 * With -n the filter is sized once; without it, it grows (cascade.h) so the
 * rate holds however many keys arrive. With --window the seen-set forgets
 * keys older than a count of keys or a duration (window.h). -f STATE
 * carries the seen-set, window and clock included, from one run to the
 * next; runs on one STATE take turns (its lock is held from before it is
 * read until it is saved), so none writes a line another already wrote.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade.h"
#include "cli.h"
#include "cli_fields.h"
#include "cli_window.h"
#include "filter.h"
#include "keys.h"
#include "layout.h"
#include "owners.h"
#include "pipeline.h"
#include "sizing.h"

#define DEFAULT_RATE 1e-6
#define GROWING_FIRST_CAPACITY 100000

static const char usage[] =
	"Usage: bfuniq [-n N] [-p P] [-f STATE] [-d] [-k LIST] [-t C] [--header] [--csv] [--json] [--bad-line error|skip] [-i] [-z] [-v] [--layout blocked|classic] [--key HEX] [--line-buffered] [--window W] [--generations G] [--refresh] [--time-field F] [--bad-time error|skip] [--now T] [--no-wait] [--checkpoint INTERVAL] [FILE...]\n"
	"Write each line of FILEs (or standard input) the first time its key is seen.\n"
	"\n"
	"  -n, --capacity=N      size one filter for N distinct keys (default: grow)\n"
	"  -p, --rate=P          chance of dropping a first-seen line (default 1e-6)\n"
	"  -f, --state=STATE     load the seen keys from STATE, save them back at the end\n"
	"  -d, --repeated        print only lines whose key was seen before\n"
	"  -k, --field=LIST      key on fields LIST (N, N,M, N-M, N-) of each line;\n"
	"                        a list keys its fields joined by one separator\n"
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n"
	"  -i, --ignore-case     fold ASCII case of keys\n"
	"  -z, --null-data       records end with NUL, not newline\n"
	CLI_DECOMPRESS_HELP
	"  -v, --verbose         report lines, repeats and expected losses on stderr\n"
	"      --layout=LAYOUT   blocked (default) or classic\n"
	"      --key=HEX         128-bit SipHash key, 32 hex digits (default: random)\n"
	"      --line-buffered   flush output after every line\n"
	"      --window=W        forget keys after W keys (10M) or W of time (90s, 10m, 24h, 7d)\n"
	"      --generations=G   the window's generations, 2..64 (default 8; slack 1/(G-1))\n"
	"      --refresh         a repeat within the window restarts its key's age\n"
	"      --time-field=F    a line's time is its Fth field (Unix seconds or RFC 3339)\n"
	"      --bad-time=WHAT   a line whose time cannot be read: error (default) or skip\n"
	"      --now=T           the time of a time window without --time-field (default: now)\n"
	"      --checkpoint=INTERVAL  with -f, also save STATE every INTERVAL (30s,\n"
	"                        10m, 1h, or a line count such as 1e6)\n"
	CLI_NO_WAIT_HELP
	CLI_FORMAT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum {
	OPT_LAYOUT = 256, OPT_KEY, OPT_LINE_BUFFERED,
	OPT_WINDOW, OPT_GENERATIONS, OPT_REFRESH, OPT_TIME_FIELD, OPT_BAD_TIME, OPT_NOW, OPT_CHECKPOINT,
};

static const struct option long_options[] = {
	{ "capacity", required_argument, NULL, 'n' },
	{ "rate", required_argument, NULL, 'p' },
	{ "state", required_argument, NULL, 'f' },
	{ "repeated", no_argument, NULL, 'd' },
	{ "field", required_argument, NULL, 'k' },
	{ "separator", required_argument, NULL, 't' },
	{ "ignore-case", no_argument, NULL, 'i' },
	{ "null-data", no_argument, NULL, 'z' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "line-buffered", no_argument, NULL, OPT_LINE_BUFFERED },
	{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "generations", required_argument, NULL, OPT_GENERATIONS },
	{ "refresh", no_argument, NULL, OPT_REFRESH },
	{ "time-field", required_argument, NULL, OPT_TIME_FIELD },
	{ "bad-time", required_argument, NULL, OPT_BAD_TIME },
	{ "now", required_argument, NULL, OPT_NOW },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_NO_WAIT_OPTION,
	CLI_DECOMPRESS_OPTION,
	CLI_FORMAT_OPTIONS,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	uint64_t capacity;	/* 0: grow */
	double rate;
	const char *state;
	struct filter_params shape;	/* layout and key */
	int key_given, repeated, verbose, line_buffered, checkpoint_given;
	struct cli_checkpoint checkpoint;
	struct key_spec spec;
	struct cli_window win;	/* kind 0: no --window */
	int header;	/* --header */
	char delim;
	char **inputs;
	int ninputs;
};

static void parse_option(struct options *opt, int c, const char *arg)
{
	switch (c) {
	case 'n': opt->capacity = cli_count("capacity", arg, 1, FILTER_M_MAX); break;
	case 'p': opt->rate = cli_rate("rate", arg); break;
	case 'f': opt->state = arg; break;
	case 'd': opt->repeated = 1; break;
	case 'k': cli_field_option(&opt->spec, arg); break;
	case CLI_OPT_CSV: opt->spec.csv = 1; break;
	case CLI_OPT_JSON: case CLI_OPT_BAD_LINE: cli_fields_option(c, arg); break;
	case CLI_OPT_HEADER: opt->header = 1; break;
	case 't': cli_separator_option(&opt->spec, arg); break;
	case 'i': opt->spec.fold_case = 1; break;
	case 'z': opt->delim = '\0'; break;
	case 'v': opt->verbose = 1; break;
	case OPT_LAYOUT: opt->shape.layout = cli_layout(arg); break;
	case OPT_KEY: cli_hex_key("key", arg, opt->shape.key); opt->key_given = 1; break;
	case OPT_LINE_BUFFERED: opt->line_buffered = 1; break;
	case OPT_CHECKPOINT: cli_checkpoint_option(&opt->checkpoint, arg); opt->checkpoint_given = 1; break;
	case OPT_WINDOW: cli_window_size(&opt->win, arg); break;
	case OPT_GENERATIONS: cli_window_generations(&opt->win, arg); break;
	case OPT_REFRESH: opt->win.wp.flags |= WINDOW_REFRESH; break;
	case OPT_TIME_FIELD: cli_window_time_field(&opt->win, arg); break;
	case OPT_BAD_TIME: cli_window_bad_time(&opt->win, arg); break;
	case OPT_NOW: cli_window_now(&opt->win, arg); break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default:
		if (!cli_common_option(c, arg))
			cli_usage_error("unknown option");
	}
}

static void write_header(void *ctx, struct line header);

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->rate = DEFAULT_RATE;
	opt->shape.layout = FILTER_BLOCKED;
	opt->shape.hash = FILTER_SIPHASH_1_3;
	opt->spec.separator = -1;
	opt->delim = '\n';
	cli_window_init(&opt->win);
	while ((c = cli_getopt(argc, argv, ":n:p:f:dk:t:j:izvhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	cli_fields_check(&opt->spec, opt->header);
	if (opt->header)
		cli_header_inputs(&opt->spec, write_header);
	cli_window_finish(&opt->win, opt->capacity, opt->rate, opt->spec.separator);
	if (opt->key_given && cli_key_file)
		cli_usage_error("--key and --key-file cannot be used together");
	if (opt->state && strcmp(opt->state, "-") == 0)
		cli_usage_error("the state must be a file (it is written back at the end)");
	if (opt->checkpoint_given && !opt->state)
		cli_usage_error("--checkpoint saves the state: it needs -f STATE");
}

static struct cascade *new_seen_set(struct options *opt)
{
	struct filter_params p = opt->shape;
	const char *why;
	struct cascade *c;

	p.flags = opt->spec.fold_case ? FILTER_FOLD_CASE : 0;
	p.target_p = opt->rate;
	if (!opt->key_given)
		p.flags |= cli_new_key(p.key);
	if (opt->capacity == 0) {
		p.capacity = GROWING_FIRST_CAPACITY;
		c = cascade_new_growing(&p, opt->rate, CASCADE_GROWTH_DEFAULT,
					CASCADE_TIGHTEN_DEFAULT, &why);
	} else {
		p.capacity = opt->capacity;
		if (sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, &why) < 0)
			cli_usage_error("cannot size a filter for %llu keys at rate %g: %s",
					(unsigned long long)p.capacity, p.target_p, why);
		c = cascade_new_fixed(&p, &why);
	}
	if (c == NULL)
		cli_fatal("cannot create the filter: %s", cli_explain(why));
	return c;
}

/* A new window (--window): key and flags as new_seen_set gives a filter. */
static struct window *new_window(struct options *opt)
{
	struct filter_params p = opt->shape;

	p.flags = opt->spec.fold_case ? FILTER_FOLD_CASE : 0;
	if (!opt->key_given)
		p.flags |= cli_new_key(p.key);
	return cli_window_new(&opt->win, &p);
}

/* -i against the state's normalisation flags; the state's rule holds. */
static void agree_on_case(struct options *opt, uint32_t flags)
{
	if (opt->spec.fold_case && !(flags & FILTER_FOLD_CASE))
		cli_fatal("%s: state was built without -i; its keys are case-sensitive", opt->state);
	opt->spec.fold_case = (flags & FILTER_FOLD_CASE) != 0;
}

/*
 * The seen-set, a filter (*c) or a window (*w): from STATE when it exists,
 * else new (and STATE created at the end).
 */
static void acquire_seen_set(struct options *opt, struct cascade **c, struct window **w)
{
	struct stat st;

	*c = NULL;
	*w = NULL;
	if (opt->state == NULL || stat(opt->state, &st) < 0) {
		if (opt->win.wp.kind != 0)
			*w = new_window(opt);
		else
			*c = new_seen_set(opt);
		return;
	}
	cli_load_any(opt->state, c, w, NULL);
	if (*w != NULL) {
		cli_window_agrees(&opt->win, *w, opt->state);
		agree_on_case(opt, window_params_of(*w)->flags);
		return;
	}
	if (opt->win.wp.kind != 0)
		cli_fatal("%s: not a windowed filter: it was made without --window", opt->state);
	cascade_refresh_count(*c);	/* how full it is, for the capacity warning */
	agree_on_case(opt, cascade_params(*c)->flags);
}

struct uniq {
	const struct options *opt;
	struct cli_checkpoint checkpoint;	/* the snapshots under way (--checkpoint) */
	struct cascade *seen;	/* NULL when window is not */
	struct window *window;
	uint64_t *record_times, *key_times;	/* --time-field */
	size_t record_times_cap, key_times_cap;
	uint64_t bad_times;	/* lines passed through for --bad-time=skip */
	const struct filter *hasher;	/* see cascade_hasher */
	struct owners *owners;	/* a blocked seen-set's regions on threads, or NULL */
	struct cli_keys keys[CLI_SLOTS];
	unsigned char *present[CLI_SLOTS];	/* each batch's test-and-add answers */
	size_t present_cap[CLI_SLOTS];
	unsigned char in_regions[CLI_SLOTS];	/* split by region (owners_split) */
	unsigned char *state;
	size_t state_cap;
	struct writer out;
	uint64_t lines, written, repeats, keyless, fresh;
	size_t batch_fresh;	/* keys the batch just classified added */
	double expected_lost;
	double lost_before_newest;	/* expected_lost when the newest stage began */
	double older_miss;		/* chance a new key passes every older stage */
	size_t stages_seen;
	int warned;
};

enum { NO_KEY, FIRST_SEEN, SEEN_BEFORE, BAD_TIME };

/*
 * The model's rate halfway through a batch that just took fresh new keys:
 * the rate rises within a batch, and at 8,000 keys a batch, taking it at
 * the batch's start undercounted the loss of a run of 2e5 keys by a
 * quarter. The newest stage has been offered the keys it took and, about,
 * the ones it lost: the expected loss since it began (cascade_model_fpr).
 * Older stages no longer change, so their rate is read off their bits
 * once, when a stage is added: they too were offered more keys than their
 * capacity (the lost ones), which the model at capacity undercounted by
 * 1% at 1e-2. Only computed under -v, where it feeds the expected loss.
 */
static double model_rate(struct uniq *u, size_t fresh)
{
	const struct cascade *c = u->seen;
	const struct filter *newest = c->stages[c->nstages - 1];
	double offered;

	if (c->nstages != u->stages_seen) {
		u->stages_seen = c->nstages;
		u->lost_before_newest = u->expected_lost;
		u->older_miss = 1.0;
		for (size_t i = 0; i + 1 < c->nstages; i++)
			u->older_miss *= 1.0 - filter_current_fpr(c->stages[i]);
	}
	offered = (double)c->newest_keys - (double)fresh / 2.0 +
		  (u->expected_lost - u->lost_before_newest);
	return 1.0 - u->older_miss * (1.0 - sizing_fpr(newest->params.layout,
						       offered > 0.0 ? (uint64_t)llround(offered) : 0,
						       newest->params.m, newest->params.k));
}

/*
 * Once, when a fixed seen-set (-n) takes its capacity's next key: the line
 * that brought it, found among the batch's first-seen records (each added
 * one key), so the warning says the same for every way the input came
 * (a pipe's batches end where its reads did, a file's where its ranges do).
 */
static void warn_over_capacity(struct uniq *u, size_t n, size_t fresh)
{
	const struct cascade *c = u->seen;
	uint64_t capacity, before, line;
	size_t r = 0;

	if (c == NULL || u->warned || c->growth != 0 || c->newest_keys <= c->stages[0]->params.capacity)
		return;
	capacity = c->stages[0]->params.capacity;
	before = c->newest_keys - fresh;
	for (uint64_t seen = before; r < n; r++)
		if (u->state[r] == FIRST_SEEN && ++seen > capacity)
			break;
	line = u->lines - n + (r < n ? r : n - 1) + 1;
	u->warned = 1;
	cli_warn("warning: filter over capacity: line %llu brought distinct key %llu, capacity %llu: from there the false-positive rate exceeds target %g and is rising",
		 (unsigned long long)line, (unsigned long long)(before < capacity ? capacity + 1 : before + 1),
		 (unsigned long long)capacity, c->target_p);
}

/* Reader thread: the batch's keys (or room for them), and room for their hashes. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct uniq *u = ctx;
	struct cli_keys *k = &u->keys[slot];

	k->cut_in_work = 1;	/* work only hashes: costly keys are cut there too */
	k->ready_later = u->owners != NULL;	/* the regions fetch their own lines */
	if (cli_keys_prepare(k, &u->opt->spec, u->hasher, records, n) < 0)
		return -1;
	*units = k->set.count;
	return 0;
}

/* Either thread: cutting keys and hashing do not depend on what the filter holds. */
static void hash_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct uniq *u = ctx;

	cli_keys_hash(&u->keys[slot], u->hasher, from, to);
}

/*
 * Calling thread, in input order, after hashing: a blocked seen-set's
 * test-and-add shared out by region (owners.h), unless the batch must go
 * whole (then classify does it).
 */
static int split_keys(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;

	struct cli_keys *k = &u->keys[slot];

	(void)records;
	(void)n;
	if (u->window == NULL) {
		u->in_regions[slot] = (unsigned char)cli_keys_split(k, u->owners, slot, u->seen,
								    &u->present[slot],
								    &u->present_cap[slot]);
		return u->in_regions[slot];
	}
	cli_keys_settle(k);
	u->in_regions[slot] = (unsigned char)owners_split_window(
		u->owners, slot, u->window, k->hashes, k->set.count, cli_window_clock(&u->opt->win),
		cli_flags(&u->present[slot], &u->present_cap[slot], k->set.count));
	return u->in_regions[slot];
}

/* Any thread: one region's keys of the batch, after the same region of every batch before. */
static void region_keys(void *ctx, unsigned slot, unsigned region)
{
	struct uniq *u = ctx;

	owners_region(u->owners, slot, region);
}

/*
 * The window's test-and-add, with each key's time from --time-field, the
 * wall clock or --now. Records whose time cannot be read are marked
 * BAD_TIME (--bad-time=skip) and their keys left out.
 */
static size_t test_and_add_window(struct uniq *u, const struct cli_keys *k,
				  const struct line *records, size_t n, unsigned char *present)
{
	const struct cli_window *cw = &u->opt->win;
	const uint64_t *times = NULL;
	const char *why;
	size_t fresh;

	if (cw->time.field && u->window->wp.kind == WINDOW_TIME) {
		uint64_t *rt = cli_window_times(&u->record_times, &u->record_times_cap, n);
		uint64_t *kt = cli_window_times(&u->key_times, &u->key_times_cap, k->set.count);

		cli_window_record_times(cw, records, n, rt, &u->bad_times);
		for (size_t i = 0; i < k->set.count; i++)
			kt[i] = rt[k->set.record[i]];
		times = kt;
	}
	if (window_test_and_add_hashed(u->window, k->set.keys, u->hasher ? k->hashes : NULL,
				       k->set.count, times, cli_window_clock(cw), present,
				       &fresh, &why) < 0)
		cli_fatal("%s", cli_explain(why));
	return fresh;
}

/*
 * Classify each record of the batch in slot as NO_KEY, FIRST_SEEN,
 * SEEN_BEFORE or BAD_TIME: its keys' test-and-add done by region
 * (split_keys), or here.
 */
static void classify(struct uniq *u, unsigned slot, const struct line *records, size_t n)
{
	const struct cli_keys *k = &u->keys[slot];
	const char *why;
	size_t fresh;
	const uint64_t *hashes = u->hasher ? k->hashes : NULL;
	unsigned char *present = cli_flags(&u->present[slot], &u->present_cap[slot], k->set.count);

	if (u->in_regions[slot]) {
		fresh = owners_finish(u->owners, slot);
		u->in_regions[slot] = 0;
	} else if (u->window != NULL) {
		fresh = test_and_add_window(u, k, records, n, present);
	} else if (cascade_test_and_add_hashed(u->seen, k->set.keys, hashes, k->set.count,
					       present, &fresh, &why) < 0) {
		cli_fatal("%s", cli_explain(why));
	}
	memset(cli_flags(&u->state, &u->state_cap, n), NO_KEY, n);
	for (size_t i = 0; i < k->set.count; i++)
		u->state[k->set.record[i]] = present[i] ? SEEN_BEFORE : FIRST_SEEN;
	for (size_t r = 0; u->key_times != NULL && r < n; r++)
		if (u->record_times[r] == WINDOW_TIME_NONE)
			u->state[r] = BAD_TIME;
	u->fresh += fresh;
	u->batch_fresh = fresh;
	/* each new key ran the model's risk of testing present and being lost */
	if (u->opt->verbose && u->seen != NULL)
		u->expected_lost += (double)fresh * model_rate(u, fresh);
}

/*
 * Calling thread, between batches: a snapshot of STATE if one is due. Also
 * called while the input is quiet (cli_checkpoint_when_idle), so a timed
 * checkpoint comes on time after a burst.
 */
static void checkpoint(void *ctx)
{
	struct uniq *u = ctx;

	if (u->opt->checkpoint_given)
		cli_checkpoint_due(&u->checkpoint, u->seen, u->window, u->opt->state, &u->out, u->lines);
}

/* --header: each input's header is written through, before its lines. */
static void write_header(void *ctx, struct line header)
{
	struct uniq *u = ctx;

	if (writer_record(&u->out, header, u->opt->delim) < 0)
		cli_write_error(errno);
}

/* --json --bad-line=skip: lines that are not JSON pass on unfiltered, as lines without a time. */
static void mark_bad_lines(struct uniq *u, const struct keyset *ks)
{
	u->keyless += cli_bad_lines(ks);
	for (size_t b = 0; b < ks->nbad; b++)
		u->state[ks->bad[b]] = BAD_TIME;
}

/* Calling thread, in input order: a repeat must meet the first copy. */
static int emit_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;
	int wanted = u->opt->repeated ? SEEN_BEFORE : FIRST_SEEN;

	cli_keys_settle(&u->keys[slot]);	/* done already if split_keys ran */
	classify(u, slot, records, n);
	mark_bad_lines(u, &u->keys[slot].set);
	u->lines += n;
	for (size_t r = 0; r < n; r++) {
		u->repeats += u->state[r] == SEEN_BEFORE;
		u->keyless += u->state[r] == NO_KEY;
		if (u->state[r] != wanted && u->state[r] != BAD_TIME)
			continue;
		u->written++;
		if (writer_record(&u->out, records[r], u->opt->delim) < 0)
			cli_write_error(errno);
	}
	warn_over_capacity(u, n, u->batch_fresh);
	checkpoint(u);
	return 0;
}

static void report_window(const struct uniq *u)
{
	const struct window *w = u->window;
	char size[32], span[48];

	cli_warn("window %s, %u generations%s: %zu live, about %.0f distinct keys within it (%s)",
		 cli_window_describe(&w->wp, span), w->wp.generations,
		 w->wp.flags & WINDOW_REFRESH ? ", refreshed" : "", w->ngen,
		 window_estimate_count(w, w->clock), cli_human_bytes(window_bytes(w), size));
	cli_warn("%llu new keys within the window; %llu lines with no readable time passed through (target rate %g)",
		 (unsigned long long)u->fresh, (unsigned long long)u->bad_times, w->wp.target_p);
	cli_warn("expected distinct lines lost to false positives: %.6g (target rate %g)",
		 w->expected_lost, w->wp.target_p);
}

static void report(const struct uniq *u)
{
	char size[32];

	cli_warn("lines read: %llu (first seen %llu, repeats %llu, without a key %llu); written: %llu",
		 (unsigned long long)u->lines,
		 (unsigned long long)(u->lines - u->repeats - u->keyless - u->bad_times),
		 (unsigned long long)u->repeats, (unsigned long long)u->keyless,
		 (unsigned long long)u->written);
	cli_bad_lines_report();
	if (u->window != NULL) {
		report_window(u);
		return;
	}
	cli_warn("%llu new distinct keys, about %.0f distinct keys in the filter (%zu stage%s, %s)",
		 (unsigned long long)u->fresh, cascade_estimate_count(u->seen), u->seen->nstages,
		 u->seen->nstages == 1 ? "" : "s", cli_human_bytes(cascade_bytes(u->seen), size));
	cli_warn("expected distinct lines lost to false positives: %.6g (target rate %g)",
		 u->expected_lost, u->seen->target_p);
	if (u->opt->checkpoint_given)
		cli_warn("checkpoints: %llu saved, %llu failed", (unsigned long long)u->checkpoint.saved,
			 (unsigned long long)u->checkpoint.failed);
}

/* The run under way, for the progress line. */
static const struct uniq *running;

static void uniq_progress(char *buf, size_t len)
{
	const struct cascade *c = running->seen;

	if (c == NULL) {
		snprintf(buf, len, "%llu new keys, %zu generations", (unsigned long long)running->fresh,
			 running->window->ngen);
		return;
	}
	snprintf(buf, len, "%llu new keys, %zu stage%s, fill ~%.1f%%",
		 (unsigned long long)running->fresh, c->nstages, c->nstages == 1 ? "" : "s",
		 100.0 * filter_sampled_fill(c->stages[c->nstages - 1], 4096));
}

/*
 * With two threads or more, a blocked seen-set's test-and-add is shared
 * out by region (owners.h: the same lines and bits as one thread), as
 * parts of the pipeline's ordered step (cli_stage.parts), one region a
 * thread; a blocked window's too, when its keys take the batch's time
 * (no --time-field). Classic, counting and DCSO seen-sets, windows keyed
 * on each line's time, and a key not supplied keep it on the ordered
 * thread; so does a run whose owners cannot be had.
 */
static struct owners *share_out(const struct uniq *u)
{
	int threads = pipeline_threads();
	const char *why;

	if (threads < 2 || u->hasher == NULL)
		return NULL;
	if (u->window != NULL ? !owners_usable_window(u->window) || u->opt->win.time.field
			      : !owners_usable(u->seen))
		return NULL;
	return owners_new((unsigned)threads, CLI_SLOTS, &why);
}

/*
 * Whether a batch's regions may run beside the consume of the batch
 * before: not when that consume may look at the filter's bits (progress
 * samples the fill) or save it (checkpoints; a state saved when a signal
 * cuts the run short must hold no key of a line not written).
 */
static int may_overlap(const struct options *opt)
{
	int progress = cli_progress_mode > 0 || (cli_progress_mode < 0 && isatty(STDERR_FILENO));

	return !progress && !opt->checkpoint_given && opt->state == NULL;
}

int main(int argc, char **argv)
{
	struct cli_stage stage = { .prepare = prepare_keys, .work = hash_keys, .consume = emit_batch };
	struct options opt;
	struct uniq u = { 0 };
	int input_status, unsaved;

	cli_init(argv[0]);
	cli_dcso_readable();	/* a DCSO STATE is added to and written back as such */
	parse_options(&opt, argc, argv);
	u.opt = &opt;
	u.checkpoint = opt.checkpoint;
	if (opt.state) {
		cli_check_state(opt.state);
		cli_lock_update(opt.state);	/* until saved: runs on one STATE take turns */
	}
	acquire_seen_set(&opt, &u.seen, &u.window);
	/* after the lock and the load: while waiting for those, a signal just ends the run */
	if (opt.state)
		cli_stop_on_signals();
	/*
	 * A state's insertions are the keys that were new to it: those passed.
	 * A counting state counts every key it saw, as its counters do, so
	 * that bfbuild --remove can take them out again.
	 */
	if (u.seen != NULL && !layout_has(cascade_params(u.seen)->layout, LAYOUT_COUNTERS))
		u.seen->count_new_only = 1;
	if (u.window != NULL)
		window_count_new_only(u.window);
	cli_window_check_use(&opt.win, u.window);
	if (opt.verbose && u.window)
		window_track_loss(u.window);
	cli_stdout_init(&u.out, opt.line_buffered);
	running = &u;
	cli_progress_detail = uniq_progress;
	u.hasher = u.window ? window_hasher(u.window) : cascade_hasher(u.seen);
	u.owners = share_out(&u);
	if (u.owners != NULL) {
		stage.split = split_keys;
		stage.part = region_keys;
		stage.parts = (unsigned)pipeline_threads();
		stage.overlap = may_overlap(&opt);
	}
	if (opt.checkpoint_given)
		cli_checkpoint_when_idle(&u.checkpoint, checkpoint);
	input_status = cli_each_batch_ranged(opt.inputs, opt.ninputs, opt.delim, &stage, &u);
	owners_free(u.owners);
	cli_stdout_finish(&u.out);
	cli_checkpoint_finish(&u.checkpoint);
	if (opt.verbose)
		report(&u);
	/* the state records only lines the reader took; a signal meanwhile ends it unsaved */
	unsaved = opt.state && cli_await_delivery(STDOUT_FILENO) != 0;
	if (opt.state && !unsaved && u.window)
		cli_save_window(u.window, opt.state);
	else if (opt.state && !unsaved)
		cli_save_filter(u.seen, opt.state);
	cli_unlock();
	cascade_free(u.seen);
	window_free(u.window);
	free(u.record_times);
	free(u.key_times);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		cli_keys_free(&u.keys[i]);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		free(u.present[i]);
	free(u.state);
	cli_fields_release(&opt.spec);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();	/* cut short, all of it saved */
	return input_status < 0 ? EXIT_TROUBLE : 0;
}
