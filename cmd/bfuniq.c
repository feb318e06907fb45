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
#include "cli_shape.h"
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
	"Usage: bfuniq [-n N] [-p P] [-f STATE] [-d [--once]] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [--shard I/N --shard-key HEX] [-i] [-z] [-v] [--json] [--layout blocked|classic] [--key HEX] [--line-buffered] [--window W] [--generations G] [--refresh] [--time-field F] [--bad-time error|skip] [--now T] [--no-wait] [--checkpoint INTERVAL] [FILE...]\n"
	"Write each line of FILEs (or standard input) the first time its key is seen.\n"
	"\n"
	"  -n, --capacity=N      size one filter for N distinct keys (default: grow)\n"
	"  -p, --rate=P          chance of dropping a first-seen line (default 1e-6)\n"
	"  -f, --state=STATE     load the seen keys from STATE, save them back at the end\n"
	"  -d, --repeated        print only lines whose key was seen before\n"
	"      --once            with -d: each repeated key once, at its second sighting\n"
	CLI_KEY_HELP
	CLI_KEY_CASE_HELP
	"  -v, --verbose         report lines, repeats and expected losses on stderr\n"
	CLI_REPORT_HELP
	"      --layout=LAYOUT   blocked (default) or classic\n"
	CLI_SHAPE_KEY_HELP
	"      --line-buffered   flush output after every line\n"
	CLI_WINDOW_HELP
	CLI_WINDOW_REFRESH_HELP
	"      --checkpoint=INTERVAL  with -f, also save STATE every INTERVAL (30s,\n"
	"                        10m, 1h, or a line count such as 1e6)\n"
	CLI_NO_WAIT_HELP
	CLI_FORMAT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_LINE_BUFFERED = 256, OPT_CHECKPOINT, OPT_ONCE };

static const struct option long_options[] = {
	{ "state", required_argument, NULL, 'f' },
	{ "repeated", no_argument, NULL, 'd' },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "line-buffered", no_argument, NULL, OPT_LINE_BUFFERED },
	{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_SHAPE_OPTIONS,
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
	struct cli_shape shape;	/* -n (0: grow), -p, --layout, --key */
	const char *state;
	int repeated, once, verbose, line_buffered, checkpoint_given;
	struct cli_checkpoint checkpoint;
	struct cli_keys_given keys;
	struct cli_window win;	/* kind 0: no --window */
	char **inputs;
	int ninputs;
};

static void parse_option(struct options *opt, int c, const char *arg)
{
	if (cli_shape_option(c, arg, &opt->shape) || cli_key_option(c, arg, &opt->keys) ||
	    cli_window_option(c, arg, &opt->win) || cli_report_option(c, arg) ||
	    cli_common_option(c, arg))
		return;
	switch (c) {
	case 'f': opt->state = arg; break;
	case 'd': opt->repeated = 1; break;
	case OPT_ONCE: opt->once = 1; break;
	case 'v': opt->verbose = 1; break;
	case OPT_LINE_BUFFERED: opt->line_buffered = 1; break;
	case OPT_CHECKPOINT: cli_checkpoint_option(&opt->checkpoint, arg); opt->checkpoint_given = 1; break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

static void write_header(void *ctx, struct line header);

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->shape.rate = DEFAULT_RATE;
	opt->shape.params.layout = FILTER_BLOCKED;
	opt->shape.params.hash = FILTER_SIPHASH_1_3;
	cli_key_options_init(&opt->keys);
	cli_window_init(&opt->win);
	while ((c = cli_getopt(argc, argv, ":" CLI_SHAPE_LETTERS CLI_KEY_LETTERS "if:dj:vhV",
			       long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->verbose |= cli_reports_json();	/* the report as JSON is the report */
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	cli_key_options_finish(&opt->keys, write_header);
	cli_window_finish(&opt->win, opt->shape.capacity, opt->shape.rate, opt->keys.spec.separator);
	if (opt->shape.key_given && cli_key_file)
		cli_usage_error("--key and --key-file cannot be used together");
	if (opt->state && strcmp(opt->state, "-") == 0)
		cli_usage_error("the state must be a file (it is written back at the end)");
	if (opt->checkpoint_given && !opt->state)
		cli_usage_error("--checkpoint saves the state: it needs -f STATE");
	cli_no_wait_needs(opt->state != NULL, "-f STATE");
	if (opt->once && !opt->repeated)
		cli_usage_error("--once needs -d: it prints each repeated key once");
	if (opt->once && opt->win.wp.kind != 0)
		cli_usage_error("--once cannot be used with --window: a key repeats again once forgotten");
}

static struct cascade *new_seen_set(struct options *opt)
{
	struct filter_params p = opt->shape.params;
	const char *why;
	struct cascade *c;

	p.flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	p.target_p = opt->shape.rate;
	if (!opt->shape.key_given)
		p.flags |= cli_new_key(p.key);
	if (opt->shape.capacity == 0) {
		p.capacity = GROWING_FIRST_CAPACITY;
		c = cascade_new_growing(&p, opt->shape.rate, CASCADE_GROWTH_DEFAULT,
					CASCADE_TIGHTEN_DEFAULT, &why);
	} else {
		p.capacity = opt->shape.capacity;
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
	struct filter_params p = opt->shape.params;

	p.flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	if (!opt->shape.key_given)
		p.flags |= cli_new_key(p.key);
	return cli_window_new(&opt->win, &p);
}

/* -i against the state's normalisation flags; the state's rule holds. */
static void agree_on_case(struct options *opt, uint32_t flags)
{
	if (opt->keys.spec.fold_case && !(flags & FILTER_FOLD_CASE))
		cli_fatal("%s: state was built without -i; its keys are case-sensitive", opt->state);
	opt->keys.spec.fold_case = (flags & FILTER_FOLD_CASE) != 0;
}

/* Rates as the options give them and as a file keeps them (a double): equal to print precision. */
static int same_rate(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

/*
 * An existing STATE keeps its shape: -n, -p, --layout and --key may be
 * given (the command that created it, run again) but must be the state's;
 * one that differs cannot apply and is refused, never ignored.
 */
static void state_agrees(const struct options *opt, const struct filter_params *p, uint64_t capacity,
			 double rate, const char *unsized)
{
	if (opt->shape.capacity != 0 && unsized != NULL)
		cli_fatal("%s: -n %llu cannot apply: %s", opt->state, (unsigned long long)opt->shape.capacity,
			  unsized);
	if (opt->shape.capacity != 0 && opt->shape.capacity != capacity)
		cli_fatal("%s: -n %llu cannot apply: the state's capacity is %llu", opt->state,
			  (unsigned long long)opt->shape.capacity, (unsigned long long)capacity);
	if (opt->shape.rate_given && !same_rate(opt->shape.rate, rate))
		cli_fatal("%s: -p %g cannot apply: the state's rate is %g", opt->state, opt->shape.rate, rate);
	if (opt->shape.layout_given && opt->shape.params.layout != p->layout)
		cli_fatal("%s: --layout %s cannot apply: the state's layout is %s", opt->state,
			  layout_of(opt->shape.params.layout)->name, layout_of(p->layout)->name);
	if (opt->shape.key_given && filter_key_fingerprint(opt->shape.params.key) != p->fingerprint)
		cli_fatal("%s: --key cannot apply: the state has another key", opt->state);
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
		cli_window_clock_agrees(&opt->win, *w, opt->state);
		state_agrees(opt, window_params_of(*w),
			     (*w)->wp.kind == WINDOW_TIME ? (*w)->wp.expected : 0, (*w)->wp.target_p,
			     (*w)->wp.kind == WINDOW_TIME ? NULL
			     : "the state is a count window, its own capacity");
		agree_on_case(opt, window_params_of(*w)->flags);
		return;
	}
	if (opt->win.wp.kind != 0)
		cli_fatal("%s: not a windowed filter: it was made without --window", opt->state);
	state_agrees(opt, cascade_params(*c), (*c)->capacity, (*c)->target_p, 
		     (*c)->growth != 0 ? "the state grows (it was made without -n)" : NULL);
	cascade_refresh_count(*c);	/* how full it is, for the capacity warning */
	agree_on_case(opt, cascade_params(*c)->flags);
}

/*
 * A batch's output made off the ordered thread (build_output): its lines
 * to write, with their delimiters, and its counts.
 */
struct built {
	char *bytes;
	size_t len, cap;
	unsigned char *state;	/* per record, as uniq.state */
	size_t state_cap;
	uint64_t written, repeats, keyless;
	int ready;		/* made for the batch in the slot now */
};

struct uniq {
	const struct options *opt;
	struct cli_checkpoint checkpoint;	/* the snapshots under way (--checkpoint) */
	struct cascade *seen;	/* NULL when window is not */
	struct cascade *printed;	/* -d --once: the repeated keys printed, or NULL */
	struct line *once_keys;	/* a batch's keys of repeats, for printed */
	size_t *once_records;	/* and their records */
	unsigned char *once_present;
	size_t once_cap;
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
	struct built built[CLI_SLOTS];	/* each batch's output, when finish made it */
	unsigned char *state;
	size_t state_cap;
	struct writer out;
	uint64_t lines, written, repeats, keyless, fresh;
	double expected_lost, lost_variance;	/* add_expected_loss */
	double arrived;			/* new keys that reached the newest stage, lost or not */
	size_t batch_fresh;	/* keys the batch just classified added */
	double older_miss;		/* chance a new key passes every older stage */
	size_t stages_seen;
	int warned;
};

enum { NO_KEY, FIRST_SEEN, SEEN_BEFORE, BAD_TIME, REPEAT_PRINTED };

/*
 * The expected loss to false positives, and its variance. Each new
 * distinct key is lost with the rate p(j) of the seen-set when it
 * arrives, j the new keys that arrived before it, lost or not: a lost key
 * sets no bit, but it would have set none anyway (its bits were all set),
 * so the fill after j arrivals is the model's fill after j keys. So
 *
 *     E = sum over arrivals j of p(j),   Var = sum of p(j) (1 - p(j))
 *
 * Lost keys cannot be told from repeats, so arrivals are not counted;
 * what is seen is the keys added, a fraction 1 - p(j) of the arrivals.
 * A batch that added `fresh` keys therefore advanced the arrivals j by
 * dj = dA / (1 - p(j)) for each added dA: that equation is stepped
 * through (LOSS_STEPS steps a batch, p taken at each step's middle), and
 * dj - dA of each step were lost. Under capacity p is tiny and E is the
 * familiar sum of p; over capacity the keys added fall behind the keys
 * that arrived (6,143 added of 6,703 arriving at 6.7 times capacity),
 * which taking the rate at the keys added, once a batch, missed (it
 * expected 62 lost of 560). A full filter (p = 1) takes no key more, so p
 * is held below 1, and the report bounds E and its deviation by the lines
 * that tested present, of which the lost are a part (report_loss).
 *
 * For a growing seen-set j counts the arrivals at the newest stage, those
 * that passed the older ones (older_miss: the chance of that, read off
 * their bits once, when a stage is added); a key the older stages hold
 * is lost there. A growing seen-set stays under capacity, where this is
 * steady. A fixed one is summed at the end instead (fixed_loss): far over
 * capacity each key added stands for many arrivals, and stepping from
 * the keys added multiplies every error of the model by 1/(1 - p), while
 * the bits, read when the run is over, say how many keys arrived.
 * Only computed under -v.
 */
#define LOSS_STEPS 32
#define LOSS_STEPS_END 4096	/* fixed_loss, once */
#define LOSS_P_MAX (1.0 - 1e-12)

static void step_expected_loss(struct uniq *u, const struct cascade *c, size_t fresh)
{
	const struct filter *f = c->stages[c->nstages - 1];
	size_t steps = fresh < LOSS_STEPS ? fresh : LOSS_STEPS;
	double step = (double)fresh / (double)(steps ? steps : 1);

	if (c->nstages != u->stages_seen) {
		double before = (double)c->newest_keys - (double)fresh;

		u->stages_seen = c->nstages;
		u->older_miss = 1.0;
		for (size_t i = 0; i + 1 < c->nstages; i++)
			u->older_miss *= 1.0 - filter_current_fpr(c->stages[i]);
		if (u->older_miss < 1e-12)
			u->older_miss = 1e-12;	/* full older stages: nothing passes them, and no inf */
		/* a stage that began within the batch took its keys from nothing */
		u->arrived = before > 0.0 ? before : 0.0;
	}
	for (size_t i = 0; i < steps; i++) {
		/* p at the step's middle: half the step's arrivals ahead, at the rate at its start */
		double p = sizing_fpr(f->params.layout, (uint64_t)llround(u->arrived), f->params.m,
				      f->params.k);
		double mid = u->arrived + step / (2.0 * (1.0 - (p < LOSS_P_MAX ? p : LOSS_P_MAX)));
		double newest, total, arrivals;

		p = sizing_fpr(f->params.layout, (uint64_t)llround(mid), f->params.m, f->params.k);
		newest = p < LOSS_P_MAX ? p : LOSS_P_MAX;
		u->arrived += step / (1.0 - newest);
		/* every arrival, the older stages' losses among them */
		arrivals = step / (1.0 - newest) / u->older_miss;
		total = 1.0 - u->older_miss * (1.0 - newest);
		u->expected_lost += arrivals - step;
		u->lost_variance += arrivals * total * (1.0 - total);
	}
}

/* A batch of a growing seen-set that added fresh keys to its newest stage. */
static void add_expected_loss(struct uniq *u, size_t fresh)
{
	if (u->seen->growth != 0)
		step_expected_loss(u, u->seen, fresh);
}

/*
 * A fixed seen-set, once the run is over: J, the keys that arrived, is
 * what its bits say it holds (a lost key would have set no bit), so
 *
 *     E = sum of p(j) for j from the keys it held before the run to J,
 *
 * with the variance of that sum, sum p(1 - p), and of J, read off the
 * fill (sizing_estimate_sd), which moves E by p(J) a key. A filter with
 * every bit set has no J: it took nothing after it filled, and E is
 * bounded by the lines that tested present (report_loss).
 */
static void fixed_loss(struct uniq *u)
{
	const struct filter *f = u->seen->stages[0];
	const struct filter_params *p = &f->params;
	double arrived = filter_estimate_count(f), width, sd, rate = 0.0;

	if (u->seen->growth != 0)
		return;
	if (!isfinite(arrived)) {
		u->expected_lost = u->lost_variance = HUGE_VAL;
		return;
	}
	if (arrived <= u->arrived)
		return;
	width = (arrived - u->arrived) / LOSS_STEPS_END;
	for (unsigned i = 0; i < LOSS_STEPS_END; i++) {
		double j = u->arrived + ((double)i + 0.5) * width;

		rate = sizing_fpr(p->layout, (uint64_t)llround(j), p->m, p->k);
		u->expected_lost += width * rate;
		u->lost_variance += width * rate * (1.0 - rate);
	}
	sd = sizing_estimate_sd(p->layout, p->m, p->k, arrived);
	if (isfinite(sd))
		u->lost_variance += rate * rate * sd * sd;
	else
		u->lost_variance = HUGE_VAL;
}

/*
 * Once, when a fixed seen-set (-n) takes its capacity's next key: the line
 * that brought it, found among the batch's first-seen records (each added
 * one key), so the warning says the same for every way the input came
 * (a pipe's batches end where its reads did, a file's where its ranges do).
 */
static void warn_over_capacity(struct uniq *u, const unsigned char *state, size_t n, size_t fresh)
{
	const struct cascade *c = u->seen;
	uint64_t capacity, before, line;
	size_t r = 0;

	if (c == NULL || u->warned || cli_warned_overfull(c) || c->growth != 0 || c->newest_keys <= c->stages[0]->params.capacity)
		return;
	capacity = c->stages[0]->params.capacity;
	before = c->newest_keys - fresh;
	for (uint64_t seen = before; r < n; r++)
		if (state[r] == FIRST_SEEN && ++seen > capacity)
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
	if (cli_keys_prepare(k, &u->opt->keys.spec, u->hasher, records, n) < 0)
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
 * Calling thread, in input order, before split and consume: the batch cut
 * at its first line not JSON or without a time (cli_stage.cut). The
 * times are kept for classify, which comes next: keyed on each line's
 * time, a batch is never split (share_out).
 */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct uniq *u = ctx;
	struct cli_keys *k = &u->keys[slot];
	size_t cut = cli_keys_cut(k, n, why, why_len), timed;

	if (!u->opt->win.time.field || u->window == NULL || u->window->wp.kind != WINDOW_TIME)
		return cut;
	timed = cli_window_record_times(&u->opt->win, records, cut,
					cli_window_times(&u->record_times, &u->record_times_cap, n),
					&u->bad_times, why, why_len);
	if (timed < cut)
		keyset_truncate(&k->set, timed);
	return timed;
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

/*
 * The thread that finished a batch's work (cli_stage.split_ahead): its
 * sort by region, which split_keys then only checks. A fixed seen-set only:
 * a growing one may add a stage on the calling thread meanwhile, and a
 * window's newest generation moves with its clock.
 */
static void sort_ahead(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;
	struct cli_keys *k = &u->keys[slot];

	(void)records;
	(void)n;
	if (u->seen == NULL || u->seen->growth != 0)
		return;
	cli_keys_settle(k);
	owners_presort(u->owners, slot, u->seen->stages[u->seen->nstages - 1], k->hashes,
		       k->set.count);
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

	(void)records;
	(void)n;
	if (cw->time.field && u->window->wp.kind == WINDOW_TIME) {
		const uint64_t *rt = u->record_times;	/* cut_batch's */
		uint64_t *kt = cli_window_times(&u->key_times, &u->key_times_cap, k->set.count);

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
 * Each record's state from its key's answer: NO_KEY, FIRST_SEEN or
 * SEEN_BEFORE, and BAD_TIME for a line not JSON (--bad-line=skip), which
 * passes on unfiltered as lines without a time do.
 */
static void mark_states(unsigned char *state, const struct keyset *ks, const unsigned char *present,
			size_t n)
{
	memset(state, NO_KEY, n);
	for (size_t i = 0; i < ks->count; i++)
		state[ks->record[i]] = present[i] ? SEEN_BEFORE : FIRST_SEEN;
	for (size_t b = 0; b < ks->nbad; b++)
		state[ks->bad[b]] = BAD_TIME;
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
	mark_states(cli_flags(&u->state, &u->state_cap, n), &k->set, present, n);
	for (size_t r = 0; u->key_times != NULL && r < n; r++)
		if (u->record_times[r] == WINDOW_TIME_NONE)
			u->state[r] = BAD_TIME;
	u->fresh += fresh;
	u->batch_fresh = fresh;
	/* each new key ran the model's risk of testing present and being lost */
	if (u->opt->verbose && u->seen != NULL)
		add_expected_loss(u, fresh);
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

	if (writer_record(&u->out, header, u->opt->keys.delim) < 0)
		cli_write_error(errno);
}

/* *array grown to n elements of size bytes; fatal when out of memory. */
static void *grown(void *array, size_t n, size_t size)
{
	void *p = n > SIZE_MAX / size ? NULL : realloc(array, n * size);

	if (p == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	return p;
}

/*
 * -d --once: the set of repeated keys printed, a growing filter at the
 * seen-set's rate with a key of its own. Never saved: once is per run.
 */
static struct cascade *new_printed_set(const struct options *opt)
{
	struct filter_params p = opt->shape.params;
	const char *why;
	struct cascade *c;

	p.layout = FILTER_BLOCKED;
	p.flags = opt->keys.spec.fold_case ? FILTER_FOLD_CASE : 0;
	p.flags |= cli_new_key(p.key);
	p.target_p = opt->shape.rate;
	p.capacity = GROWING_FIRST_CAPACITY;
	c = cascade_new_growing(&p, opt->shape.rate, CASCADE_GROWTH_DEFAULT, CASCADE_TIGHTEN_DEFAULT, &why);
	if (c == NULL)
		cli_fatal("cannot create the filter: %s", cli_explain(why));
	return c;
}

/*
 * -d --once, in input order: a repeat whose key was printed already is
 * REPEAT_PRINTED. The printed set has no false negatives, so no key is
 * printed twice; its false positives can only suppress a key's one line
 * (at most the rate), never print one again.
 */
static void suppress_printed(struct uniq *u, unsigned slot)
{
	const struct keyset *ks = &u->keys[slot].set;
	size_t n = 0;
	const char *why;

	if (ks->count > u->once_cap) {
		size_t cap = ks->count;

		u->once_keys = grown(u->once_keys, cap, sizeof *u->once_keys);
		u->once_records = grown(u->once_records, cap, sizeof *u->once_records);
		u->once_present = grown(u->once_present, cap, 1);
		u->once_cap = cap;
	}
	for (size_t i = 0; i < ks->count; i++)
		if (u->state[ks->record[i]] == SEEN_BEFORE) {
			u->once_keys[n] = ks->keys[i];
			u->once_records[n++] = ks->record[i];
		}
	if (n > 0 && cascade_test_and_add_hashed(u->printed, u->once_keys, NULL, n,
						 u->once_present, NULL, &why) < 0)
		cli_fatal("%s", cli_explain(why));
	for (size_t i = 0; i < n; i++)
		if (u->once_present[i])
			u->state[u->once_records[i]] = REPEAT_PRINTED;
}

/* Whether a record in this state is written: the one wanted, or one passed through. */
static int written_state(const struct uniq *u, unsigned char state)
{
	return state == (u->opt->repeated ? SEEN_BEFORE : FIRST_SEEN) || state == BAD_TIME;
}

/* The batch's repeats and keyless lines by the states. */
static void count_states(const unsigned char *state, size_t n, uint64_t *repeats, uint64_t *keyless)
{
	for (size_t r = 0; r < n; r++) {
		*repeats += state[r] == SEEN_BEFORE || state[r] == REPEAT_PRINTED;
		*keyless += state[r] == NO_KEY;
	}
}

/* b's bytes with room for len more; 0, or -1 when out of memory. */
static int built_room(struct built *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 1 << 16;
	char *bytes;

	if (len <= b->cap - b->len)
		return 0;
	while (cap - b->len < len)
		if ((cap *= 2) < b->cap)
			return -1;
	if ((bytes = realloc(b->bytes, cap)) == NULL)
		return -1;
	b->bytes = bytes;
	b->cap = cap;
	return 0;
}

/*
 * Any thread, once every region of a batch is done (cli_stage.finish):
 * its output made from the regions' answers, so that the ordered thread
 * only counts and hands the bytes on (emit_built). Runs without --once
 * (whose printed set is ordered) and --line-buffered (builds_output); a
 * batch whose output could not be made (out of memory) is made by
 * emit_batch as any other.
 */
static void build_output(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;
	struct built *b = &u->built[slot];
	const struct keyset *ks = &u->keys[slot].set;
	char delim = u->opt->keys.delim;

	b->ready = 0;
	b->len = 0;
	b->written = b->repeats = b->keyless = 0;
	if (n > b->state_cap) {
		unsigned char *state = realloc(b->state, n);

		if (state == NULL)
			return;
		b->state = state;
		b->state_cap = n;
	}
	mark_states(b->state, ks, u->present[slot], n);
	count_states(b->state, n, &b->repeats, &b->keyless);
	for (size_t r = 0; r < n; r++) {
		if (!written_state(u, b->state[r]))
			continue;
		if (built_room(b, records[r].len + 1) < 0)
			return;
		memcpy(b->bytes + b->len, records[r].data, records[r].len);
		b->len += records[r].len;
		b->bytes[b->len++] = delim;
		b->written++;
	}
	b->ready = 1;
}

/* Whether split batches get their output made by build_output. */
static int builds_output(const struct uniq *u)
{
	return u->owners != NULL && u->printed == NULL && !u->opt->line_buffered;
}

/* Calling thread, in input order: a batch whose output build_output made. */
static void emit_built(struct uniq *u, unsigned slot)
{
	struct built *b = &u->built[slot];

	b->ready = 0;
	u->fresh += u->batch_fresh = owners_finish(u->owners, slot);
	u->in_regions[slot] = 0;
	if (u->opt->verbose && u->seen != NULL)
		add_expected_loss(u, u->batch_fresh);
	u->keyless += cli_bad_lines(&u->keys[slot].set);
	u->repeats += b->repeats;
	u->keyless += b->keyless;
	u->written += b->written;
	if (writer_put(&u->out, b->bytes, b->len) < 0)
		cli_write_error(errno);
}

/* Calling thread, in input order: a repeat must meet the first copy. */
static int emit_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;

	cli_keys_settle(&u->keys[slot]);	/* done already if split_keys ran */
	u->lines += n;
	if (u->in_regions[slot] && u->built[slot].ready) {
		emit_built(u, slot);
		warn_over_capacity(u, u->built[slot].state, n, u->batch_fresh);
		checkpoint(u);
		return 0;
	}
	classify(u, slot, records, n);
	u->keyless += cli_bad_lines(&u->keys[slot].set);
	if (u->printed != NULL)
		suppress_printed(u, slot);
	count_states(u->state, n, &u->repeats, &u->keyless);
	for (size_t r = 0; r < n; r++) {
		if (!written_state(u, u->state[r]))
			continue;
		u->written++;
		if (writer_record(&u->out, records[r], u->opt->keys.delim) < 0)
			cli_write_error(errno);
	}
	warn_over_capacity(u, u->state, n, u->batch_fresh);
	checkpoint(u);
	return 0;
}

static void report_window(const struct uniq *u)
{
	const struct window *w = u->window;
	char size[32], span[48], count[64];

	cli_warn("window %s, %u generations%s: %zu live, %s within it (%s)",
		 cli_window_describe(&w->wp, span), w->wp.generations,
		 w->wp.flags & WINDOW_REFRESH ? ", refreshed" : "", w->ngen,
		 cli_distinct_keys(window_estimate_count(w, w->clock), count),
		 cli_human_bytes(window_bytes(w), size));
	cli_warn("%llu new keys within the window; %llu lines with no readable time passed through (target rate %g)",
		 (unsigned long long)u->fresh, (unsigned long long)u->bad_times, w->wp.target_p);
	cli_warn("expected distinct lines lost to false positives: %.6g (target rate %g)",
		 w->expected_lost, w->wp.target_p);
}

/*
 * The expected loss and its standard deviation. The lost are among the
 * lines that tested present (repeats), which bounds both. A filter with
 * every bit set has no estimate (fixed_loss): the bound is what is said.
 */
static void report_loss(struct uniq *u)
{
	double bound, expected, sd, target = u->seen->target_p;

	fixed_loss(u);
	bound = (double)u->repeats;
	expected = u->expected_lost < bound ? u->expected_lost : bound;
	sd = sqrt(u->lost_variance) < bound ? sqrt(u->lost_variance) : bound;
	if (expected == 0.0)
		cli_warn("expected distinct lines lost to false positives: 0 (target rate %g)", target);
	else if (!isfinite(u->expected_lost))
		cli_warn("expected distinct lines lost to false positives: %.0f at most, every line that tested present (every bit of the filter is set; target rate %g)",
			 bound, target);
	else
		cli_warn("expected distinct lines lost to false positives: %.6g (standard deviation %.3g; target rate %g)",
			 expected, sd, target);
}

/* The -v report as one JSON object (--report=json). */
static void report_json(struct uniq *u)
{
	uint64_t first = u->lines - u->repeats - u->keyless - u->bad_times;
	double lost;

	if (u->window != NULL) {
		cli_report_object("\"lines\":%llu,\"first_seen\":%llu,\"repeats\":%llu,\"keyless\":%llu,"
				  "\"written\":%llu,\"new_keys\":%llu,\"bad_times\":%llu,"
				  "\"estimated_keys\":%.0f,\"bytes\":%llu,\"expected_lost\":%.6g,\"target_rate\":%g",
				  (unsigned long long)u->lines, (unsigned long long)first,
				  (unsigned long long)u->repeats, (unsigned long long)u->keyless,
				  (unsigned long long)u->written, (unsigned long long)u->fresh,
				  (unsigned long long)u->bad_times,
				  window_estimate_count(u->window, u->window->clock),
				  (unsigned long long)window_bytes(u->window), u->window->expected_lost,
				  u->window->wp.target_p);
		return;
	}
	fixed_loss(u);
	lost = u->expected_lost < (double)u->repeats ? u->expected_lost : (double)u->repeats;
	cli_report_object("\"lines\":%llu,\"first_seen\":%llu,\"repeats\":%llu,\"keyless\":%llu,"
			  "\"written\":%llu,\"new_keys\":%llu,\"estimated_keys\":%.0f,\"stages\":%zu,"
			  "\"bytes\":%llu,\"expected_lost\":%.6g,\"target_rate\":%g",
			  (unsigned long long)u->lines, (unsigned long long)first,
			  (unsigned long long)u->repeats, (unsigned long long)u->keyless,
			  (unsigned long long)u->written, (unsigned long long)u->fresh,
			  cascade_estimate_count(u->seen), u->seen->nstages,
			  (unsigned long long)cascade_bytes(u->seen), lost, u->seen->target_p);
}

static void report(struct uniq *u)
{
	char size[32], count[64];

	if (cli_reports_json()) {
		report_json(u);
		return;
	}
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
	cli_warn("%llu new distinct keys, %s in the filter (%zu stage%s, %s)",
		 (unsigned long long)u->fresh, cli_distinct_keys(cascade_estimate_count(u->seen), count),
		 u->seen->nstages, u->seen->nstages == 1 ? "" : "s",
		 cli_human_bytes(cascade_bytes(u->seen), size));
	report_loss(u);
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
	struct cli_stage stage = { .prepare = prepare_keys, .work = hash_keys, .consume = emit_batch,
				   .cut = cut_batch };
	struct options opt;
	struct uniq u = { 0 };
	int input_status, unsaved;

	cli_init(argv[0]);
	/* its ordered step is its ceiling: fastest at 8 threads of 16 (pipeline.h) */
	pipeline_set_default_max(PIPELINE_THREADS_ORDERED_MAX);
	cli_dcso_readable();	/* a DCSO STATE is added to and written back as such */
	cli_warn_overfull_loads();
	parse_options(&opt, argc, argv);
	u.opt = &opt;
	u.checkpoint = opt.checkpoint;
	if (opt.state) {
		cli_check_state(opt.state);
		cli_lock_update(opt.state);	/* until saved: runs on one STATE take turns */
	}
	acquire_seen_set(&opt, &u.seen, &u.window);
	if (u.seen != NULL) {
		/* a loaded filter's keys as its bits count them (cascade_refresh_count) */
		u.stages_seen = u.seen->nstages;
		u.arrived = (double)u.seen->newest_keys;
		u.older_miss = 1.0;
		for (size_t i = 0; i + 1 < u.seen->nstages; i++)
			u.older_miss *= 1.0 - filter_current_fpr(u.seen->stages[i]);
	}
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
	if (opt.once && u.window != NULL)	/* a windowed STATE */
		cli_fatal("%s: --once cannot be used with a windowed state", opt.state);
	if (opt.once)
		u.printed = new_printed_set(&opt);
	if (opt.verbose && u.window)
		window_track_loss(u.window);
	cli_stdout_init(&u.out, opt.line_buffered);
	cli_stdout_async(&u.out);
	running = &u;
	cli_progress_detail = uniq_progress;
	u.hasher = u.window ? window_hasher(u.window) : cascade_hasher(u.seen);
	if (u.seen != NULL)
		cli_expect_inputs(u.seen, opt.inputs, opt.ninputs, opt.keys.delim);
	u.owners = share_out(&u);
	if (u.owners != NULL) {
		stage.split = split_keys;
		stage.part = region_keys;
		stage.parts = (unsigned)pipeline_threads();
		stage.overlap = may_overlap(&opt);
		if (builds_output(&u))
			stage.finish = build_output;
		stage.split_ahead = sort_ahead;
	}
	if (opt.checkpoint_given)
		cli_checkpoint_when_idle(&u.checkpoint, checkpoint);
	/* a write error is the cut that cannot be clean: say what STATE holds */
	if (opt.state)
		cli_write_error_keeps(opt.state, opt.checkpoint_given ? "its last checkpoint"
								      : "what it held before this run");
	input_status = cli_each_batch_ranged(opt.inputs, opt.ninputs, opt.keys.delim, &stage, &u);
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
	cascade_free(u.printed);
	free(u.once_keys);
	free(u.once_records);
	free(u.once_present);
	window_free(u.window);
	free(u.record_times);
	free(u.key_times);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		cli_keys_free(&u.keys[i]);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		free(u.present[i]);
		free(u.built[i].bytes);
		free(u.built[i].state);
	}
	free(u.state);
	cli_fields_release(&opt.keys.spec);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();	/* cut short, all of it saved */
	return input_status < 0 ? EXIT_TROUBLE : 0;
}
