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
 * rate holds however many keys arrive. -f STATE carries the seen-set from
 * one run to the next; runs on one STATE take turns (its lock is held from
 * before it is read until it is saved), so none writes a line another
 * already wrote.
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
#include "filter.h"
#include "keys.h"
#include "sizing.h"

#define DEFAULT_RATE 1e-6
#define GROWING_FIRST_CAPACITY 100000

static const char usage[] =
	"Usage: bfuniq [-n N] [-p P] [-f STATE] [-d] [-k N] [-t C] [-i] [-z] [-v] [--layout blocked|classic] [--key HEX] [--line-buffered] [--no-wait] [--checkpoint INTERVAL] [FILE...]\n"
	"Write each line of FILEs (or standard input) the first time its key is seen.\n"
	"\n"
	"  -n, --capacity=N      size one filter for N distinct keys (default: grow)\n"
	"  -p, --rate=P          chance of dropping a first-seen line (default 1e-6)\n"
	"  -f, --state=STATE     load the seen keys from STATE, save them back at the end\n"
	"  -d, --repeated        print only lines whose key was seen before\n"
	"  -k, --field=N         key on the Nth field of each line\n"
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n"
	"  -i, --ignore-case     fold ASCII case of keys\n"
	"  -z, --null-data       records end with NUL, not newline\n"
	"  -v, --verbose         report lines, repeats and expected losses on stderr\n"
	"      --layout=LAYOUT   blocked (default) or classic\n"
	"      --key=HEX         128-bit SipHash key, 32 hex digits (default: random)\n"
	"      --line-buffered   flush output after every line\n"
	"      --checkpoint=INTERVAL  with -f, also save STATE every INTERVAL (30s,\n"
	"                        10m, 1h, or a line count such as 1e6)\n"
	CLI_NO_WAIT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_LAYOUT = 256, OPT_KEY, OPT_LINE_BUFFERED, OPT_CHECKPOINT };

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
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_NO_WAIT_OPTION,
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
	case 't': cli_separator_option(&opt->spec, arg); break;
	case 'i': opt->spec.fold_case = 1; break;
	case 'z': opt->delim = '\0'; break;
	case 'v': opt->verbose = 1; break;
	case OPT_LAYOUT: opt->shape.layout = cli_layout(arg); break;
	case OPT_KEY: cli_hex_key("key", arg, opt->shape.key); opt->key_given = 1; break;
	case OPT_LINE_BUFFERED: opt->line_buffered = 1; break;
	case OPT_CHECKPOINT: cli_checkpoint_option(&opt->checkpoint, arg); opt->checkpoint_given = 1; break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default:
		if (!cli_common_option(c, arg))
			cli_usage_error("unknown option");
	}
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->rate = DEFAULT_RATE;
	opt->shape.layout = FILTER_BLOCKED;
	opt->shape.hash = FILTER_SIPHASH_1_3;
	opt->spec.separator = -1;
	opt->delim = '\n';
	while ((c = cli_getopt(argc, argv, ":n:p:f:dk:t:izvhV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
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

/* The seen-set: from STATE when it exists, else new (and STATE created at the end). */
static struct cascade *acquire_seen_set(struct options *opt)
{
	struct stat st;
	struct cascade *c;
	uint32_t flags;

	if (opt->state == NULL || stat(opt->state, &st) < 0)
		return new_seen_set(opt);
	c = cli_load_filter(opt->state);
	cascade_refresh_count(c);	/* how full it is, for the capacity warning */
	flags = cascade_params(c)->flags;
	if (opt->spec.fold_case && !(flags & FILTER_FOLD_CASE)) {
		cascade_free(c);
		cli_fatal("%s: state was built without -i; its keys are case-sensitive", opt->state);
	}
	opt->spec.fold_case = (flags & FILTER_FOLD_CASE) != 0;
	return c;
}

struct uniq {
	const struct options *opt;
	struct cli_checkpoint checkpoint;	/* the snapshots under way (--checkpoint) */
	struct cascade *seen;
	const struct filter *hasher;	/* see cascade_hasher */
	struct cli_keys keys[CLI_SLOTS];
	unsigned char *present, *state;
	size_t present_cap, state_cap;
	struct writer out;
	uint64_t lines, written, repeats, keyless, fresh;
	double expected_lost;
	double lost_before_newest;	/* expected_lost when the newest stage began */
	size_t stages_seen;
	int warned;
};

enum { NO_KEY, FIRST_SEEN, SEEN_BEFORE };

/*
 * The model's rate (cascade_model_fpr) halfway through a batch that just
 * took fresh new keys: the rate rises within a batch, and at 8,000 keys a
 * batch, taking it at the batch's start undercounted the loss of a run of
 * 2e5 keys by a quarter. The newest stage has been offered the keys it
 * took and, about, the ones it lost: the expected loss since it began.
 * Only computed under -v, where it feeds the expected-loss figure.
 */
static double model_rate(struct uniq *u, size_t fresh)
{
	const struct cascade *c = u->seen;
	double offered;

	if (c->nstages != u->stages_seen) {
		u->stages_seen = c->nstages;
		u->lost_before_newest = u->expected_lost;
	}
	offered = (double)c->newest_keys - (double)fresh / 2.0 +
		  (u->expected_lost - u->lost_before_newest);
	return cascade_model_fpr(c, offered > 0.0 ? (uint64_t)llround(offered) : 0);
}

static void warn_over_capacity(struct uniq *u)
{
	const struct cascade *c = u->seen;
	const struct filter_params *p = &c->stages[0]->params;

	if (u->warned || c->growth != 0 || c->newest_keys <= p->capacity)
		return;
	u->warned = 1;
	cli_warn("warning: filter over capacity: %llu distinct keys, capacity %llu: estimated false-positive rate %.3g exceeds target %g and is rising",
		 (unsigned long long)c->newest_keys, (unsigned long long)p->capacity,
		 sizing_fpr(p->layout, c->newest_keys, p->m, p->k), c->target_p);
}

/* Reader thread: the batch's keys, and room for their hashes. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct uniq *u = ctx;
	struct cli_keys *k = &u->keys[slot];

	if (cli_keys_prepare(k, &u->opt->spec, u->hasher, records, n) < 0)
		return -1;
	*units = k->set.count;
	return 0;
}

/* Either thread: hashing does not depend on what the filter holds. */
static void hash_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct uniq *u = ctx;

	cli_keys_hash(&u->keys[slot], u->hasher, from, to);
}

/* Classify each record of the batch as NO_KEY, FIRST_SEEN or SEEN_BEFORE. */
static void classify(struct uniq *u, const struct cli_keys *k, size_t n)
{
	const char *why;
	size_t fresh;
	const uint64_t *hashes = u->hasher ? k->hashes : NULL;

	cli_flags(&u->present, &u->present_cap, k->set.count);
	if (cascade_test_and_add_hashed(u->seen, k->set.keys, hashes, k->set.count, u->present,
					&fresh, &why) < 0)
		cli_fatal("%s", cli_explain(why));
	memset(cli_flags(&u->state, &u->state_cap, n), NO_KEY, n);
	for (size_t i = 0; i < k->set.count; i++)
		u->state[k->set.record[i]] = u->present[i] ? SEEN_BEFORE : FIRST_SEEN;
	u->fresh += fresh;
	/* each new key ran the model's risk of testing present and being lost */
	if (u->opt->verbose)
		u->expected_lost += (double)fresh * model_rate(u, fresh);
}

/* Calling thread, in input order: a repeat must meet the first copy. */
static int emit_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct uniq *u = ctx;
	int wanted = u->opt->repeated ? SEEN_BEFORE : FIRST_SEEN;

	classify(u, &u->keys[slot], n);
	u->lines += n;
	for (size_t r = 0; r < n; r++) {
		u->repeats += u->state[r] == SEEN_BEFORE;
		u->keyless += u->state[r] == NO_KEY;
		if (u->state[r] != wanted)
			continue;
		u->written++;
		if (writer_record(&u->out, records[r], u->opt->delim) < 0)
			cli_write_error(errno);
	}
	warn_over_capacity(u);
	if (u->opt->checkpoint_given)
		cli_checkpoint_due(&u->checkpoint, u->seen, u->opt->state, &u->out, u->lines);
	return 0;
}

static void report(const struct uniq *u)
{
	char size[32];

	cli_warn("lines read: %llu (first seen %llu, repeats %llu, without a key %llu); written: %llu",
		 (unsigned long long)u->lines, (unsigned long long)(u->lines - u->repeats - u->keyless),
		 (unsigned long long)u->repeats, (unsigned long long)u->keyless,
		 (unsigned long long)u->written);
	cli_warn("%llu new distinct keys, about %.0f distinct keys in the filter (%zu stage%s, %s)",
		 (unsigned long long)u->fresh, cascade_estimate_count(u->seen), u->seen->nstages,
		 u->seen->nstages == 1 ? "" : "s", cli_human_bytes(cascade_bytes(u->seen), size));
	cli_warn("expected distinct lines lost to false positives: %.3g (target rate %g)",
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

	snprintf(buf, len, "%llu new keys, %zu stage%s, fill ~%.1f%%",
		 (unsigned long long)running->fresh, c->nstages, c->nstages == 1 ? "" : "s",
		 100.0 * filter_sampled_fill(c->stages[c->nstages - 1], 4096));
}

int main(int argc, char **argv)
{
	static const struct cli_stage stage = { prepare_keys, hash_keys, emit_batch };
	struct options opt;
	struct uniq u = { 0 };
	int input_status;

	cli_init(argv[0]);
	parse_options(&opt, argc, argv);
	u.opt = &opt;
	u.checkpoint = opt.checkpoint;
	if (opt.state) {
		cli_check_destination(opt.state);
		cli_lock_update(opt.state);	/* until saved: runs on one STATE take turns */
		cli_stop_on_signals();	/* after the lock: while waiting, a signal just ends it */
	}
	u.seen = acquire_seen_set(&opt);
	cli_stdout_init(&u.out, opt.line_buffered);
	running = &u;
	cli_progress_detail = uniq_progress;
	u.hasher = cascade_hasher(u.seen);
	input_status = cli_each_batch(opt.inputs, opt.ninputs, opt.delim, &stage, &u);
	cli_stdout_finish(&u.out);
	cli_checkpoint_finish(&u.checkpoint);
	if (opt.verbose)
		report(&u);
	if (opt.state)
		cli_save_filter(u.seen, opt.state);
	cli_unlock();
	cascade_free(u.seen);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		cli_keys_free(&u.keys[i]);
	free(u.present);
	free(u.state);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();	/* cut short, all of it saved */
	return input_status < 0 ? EXIT_TROUBLE : 0;
}
