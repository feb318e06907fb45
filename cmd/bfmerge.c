/* SPDX-License-Identifier: MIT */
/*
 * bfmerge - combine filters built apart (parallel jobs, shards, days) into
 * one.
 *
 * OR of the bits is exactly the filter of the union of the inputs' keys, so
 * shards built with bfbuild --like from one template merge into the filter
 * a serial build would have made, bit for bit. AND (--intersect) keeps
 * every key of the intersection but also keys that merely collide, so its
 * false-positive rate is higher than that of a filter built from the
 * intersection. The first input is loaded; each further one is streamed
 * into it chunk by chunk, so memory stays at about one filter. -o onto one
 * of the inputs is an update: its lock is held from before any input is
 * read until the result is renamed into place.
 *
 * HyperLogLog sketches (bfcount -o) merge the same way, told apart by
 * their magic: the register-wise maximum is exactly the sketch of the
 * union, so a week's distinct count is the merge of seven days'. A sketch
 * and a filter do not merge, and sketches have no intersection.
 *
 * Heavy-hitter summaries (bftop -o) merge as Agarwal et al. 2012 merge
 * them (topk_merge): counters add, kept keys combine, the largest stay;
 * every interval still holds, and every key above 2 EPS N is still kept.
 * Told apart by their magic, read ahead with pread, which a pipe does
 * not allow: a summary is merged from files, not from standard input.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade.h"
#include "cli.h"
#include "cli_window.h"
#include "dcso.h"
#include "format.h"
#include "layout.h"
#include "merge_stream.h"
#include "sketch.h"
#include "sketch_file.h"
#include "topk.h"
#include "topk_file.h"

static const char usage[] =
	"Usage: bfmerge [-o FILE] [--intersect] [-v] [--no-wait] FILTER...\n"
	"Combine filters of the same shape and key into one: OR (union) or AND;\n"
	"or HyperLogLog sketches of the same precision and key into their union;\n"
	"or bftop summaries of the same size into the summary of both streams.\n"
	"\n"
	"  -o, --output=FILE     write the result to FILE (atomically), not stdout\n"
	"      --intersect       AND the filters instead of OR-ing them\n"
	"  -v, --verbose         report the result's fill and estimates on stderr\n"
	CLI_NO_WAIT_HELP
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"Each FILTER (or sketch) may be - (standard input) once.\n";

enum { OPT_INTERSECT = 256 };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "intersect", no_argument, NULL, OPT_INTERSECT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_NO_WAIT_OPTION,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	const char *output;
	enum merge_op op;
	int verbose;
	char **inputs;
	int ninputs;
};

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	opt->op = MERGE_OR;
	while ((c = cli_getopt(argc, argv, ":o:j:vhV", long_options)) != -1) {
		switch (c) {
		case 'o': opt->output = optarg; break;
		case OPT_INTERSECT: opt->op = MERGE_AND; break;
		case 'v': opt->verbose = 1; break;
		case 'h': cli_help(usage);
		case 'V': cli_version();
		default:
			if (!cli_common_option(c, optarg))
				cli_usage_error("unknown option");
		}
	}
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	if (opt->ninputs == 0)
		cli_usage_error("no filter given");
	if (cli_stdin_uses(opt->inputs, (size_t)opt->ninputs) > 1)
		cli_usage_error("standard input can be read only once");
	cli_no_wait_needs(opt->output != NULL, "-o FILTER");
}

/* Say what differs, with the values where they are not secret. */
static void describe_difference(const struct cascade *a, const struct cascade *b,
				const char *what, char *out, size_t len)
{
	const struct filter_params *p = cascade_params(a), *q = cascade_params(b);

	if (strcmp(what, "size") == 0 && layout_has(p->layout, LAYOUT_FOREIGN))	/* its own m, not the array's */
		snprintf(out, len, "size (m = %llu vs %llu bits)", (unsigned long long)p->probe_bits,
			 (unsigned long long)q->probe_bits);
	else if (strcmp(what, "size") == 0)
		snprintf(out, len, "size (%llu vs %llu %s)", (unsigned long long)p->m,
			 (unsigned long long)q->m, layout_of(p->layout)->unit);
	else if (strcmp(what, "hashes") == 0)
		snprintf(out, len, "hashes (k = %u vs %u)", p->k, q->k);
	else if (strcmp(what, "growth") == 0)
		snprintf(out, len, "growth (%u/%u vs %u/%u)", a->growth, a->tighten,
			 b->growth, b->tighten);
	else if (strcmp(what, "capacity") == 0)	/* DCSO filters only */
		snprintf(out, len, "capacity (n = %llu vs %llu)", (unsigned long long)a->capacity,
			 (unsigned long long)b->capacity);
	else if (strcmp(what, "rate") == 0)
		snprintf(out, len, "rate (p = %g vs %g)", a->target_p, b->target_p);
	else
		snprintf(out, len, "%s", what);
}

/* Refuse other unless it combines with result (the message leads with other's values). */
static void check_compatible(const struct cascade *result, const char *first,
			     struct cascade *other, const char *path, void (*undo)(void *), void *ctx)
{
	const char *what;
	char difference[96];

	if (cascade_compatible(result, other, &what))
		return;
	describe_difference(other, result, what, difference, sizeof difference);
	undo(ctx);
	cascade_free(other);
	cli_fatal("%s: cannot be merged with %s: different %s", cli_display_name(path),
		  cli_display_name(first), difference);
}

static void abandon_reader(void *r)
{
	format_abandon(r);
}

static void nothing(void *ctx)
{
	(void)ctx;
}

/*
 * Into a DCSO result, the other filter loaded whole (the format cannot be
 * streamed): OR is DCSO's join, N summed; the reference also refuses
 * other capacities and rates (cascade_compatible).
 */
static void merge_loaded(struct cascade *result, const char *first, const char *path,
			 enum merge_op op)
{
	struct cascade *other = cli_load_filter(path);
	const char *why;

	check_compatible(result, first, other, path, nothing, NULL);
	if (merge_into(result, other, op, &why) < 0) {
		cascade_free(other);
		cli_fatal("%s: %s", cli_display_name(path), cli_explain(why));
	}
	cascade_free(other);
}

/*
 * Whether the file at path is a DCSO filter, which cannot be streamed:
 * loaded whole, it is then refused for its layout, as any other filter
 * that does not combine. Standard input cannot be looked at twice.
 */
static int is_dcso_file(const char *path)
{
	unsigned char start[DCSO_SNIFF_MAX];
	const char *why;
	size_t len;
	int eof, fd, kind;

	if (strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	kind = dcso_sniff(fd, start, sizeof start, &len, &eof, &why);
	close(fd);
	return kind == 1;
}

/* Stream the filter at path into result, checking compatibility first. */
static void merge_file(struct cascade *result, const char *first, const char *path,
		       enum merge_op op)
{
	int fd;
	struct cascade *shape;
	const char *why;
	struct format_reader *r;

	if (layout_has(cascade_params(result)->layout, LAYOUT_FOREIGN) || is_dcso_file(path)) {
		merge_loaded(result, first, path, op);
		return;
	}
	r = cli_open_filter(path, &shape, &fd);
	check_compatible(result, first, shape, path, abandon_reader, r);
	if (merge_stream(result, r, shape, op, &why) < 0)
		cli_fatal("%s: %s", cli_display_name(path), cli_explain(why));
	cascade_free(shape);
	if (fd != STDIN_FILENO)
		close(fd);
}

/*
 * The result lives until exit. It is kept here, not only in main's frame,
 * so that it stays reachable when a refused input ends the program early
 * (LeakSanitizer would otherwise call it lost).
 */
static struct cascade *merged;
static struct window *merged_window;

/*
 * Windowed filters merge generation by generation (window_merge): same
 * window, generations, refresh, key and shapes; the union of their
 * generations, the newest G kept, the later clock.
 */
static void merge_windows(const struct options *opt)
{
	const char *first = cli_display_name(opt->inputs[0]), *why;

	if (opt->op == MERGE_AND)
		cli_fatal("%s: cannot intersect windowed filters", first);
	for (int i = 1; i < opt->ninputs; i++) {
		const char *name = cli_display_name(opt->inputs[i]);
		struct cascade *c;
		struct window *w;

		cli_load_any(opt->inputs[i], &c, &w, NULL);
		if (c != NULL)
			cli_fatal("%s: cannot be merged with %s: not a windowed filter", name, first);
		if (window_merge(merged_window, w, &why) < 0)
			cli_fatal("%s: cannot be merged with %s: different %s", name, first, why);
		window_free(w);
	}
}

/* The sketch result, when the first input is a sketch; kept for the same reason. */
static struct sketch *merged_sketch;

/* A further input of a sketch merge: a sketch, refused when it is a filter. */
static struct sketch *load_sketch(const char *path)
{
	const char *why, *name = cli_display_name(path);
	struct sketch *s = sketch_load_path(path, &why);

	if (s == NULL && why == sketch_err_filter)
		cli_fatal("%s: %s: sketches and filters cannot be merged", name, why);
	if (s == NULL && why == sketch_err_summary)
		cli_fatal("%s: %s: sketches and summaries cannot be merged", name, why);
	if (s == NULL)
		cli_fatal("%s: %s", name, why);
	cli_sketch_key(s, name, 0);
	return s;
}

/* Sketches are small (256 KiB at most): each further one is loaded whole and merged. */
static void merge_sketches(const struct options *opt)
{
	const char *first = cli_display_name(opt->inputs[0]);

	if (opt->op == MERGE_AND)
		cli_fatal("%s: sketches cannot be intersected (--intersect): only their union is a sketch",
			  first);
	for (int i = 1; i < opt->ninputs; i++) {
		struct sketch *s = load_sketch(opt->inputs[i]);
		const char *what, *name = cli_display_name(opt->inputs[i]);
		char difference[96];

		if (!sketch_compatible(merged_sketch, s, &what)) {
			cli_sketch_difference(s, merged_sketch, what, difference, sizeof difference);
			sketch_free(s);
			cli_fatal("%s: cannot be merged with %s: different %s", name, first, difference);
		}
		if (sketch_merge(merged_sketch, s, &what) < 0) {
			sketch_free(s);
			cli_fatal("%s: %s", name, what);
		}
		sketch_free(s);
	}
}

/* The summary result, when the first input is a bftop summary. */
static struct topk *merged_summary;

static struct topk *load_summary(const char *path)
{
	const char *why;
	struct topk *t = topk_file_load_path(path, &why);

	if (t == NULL)
		cli_fatal("%s: %s", cli_display_name(path), why);
	return t;
}

/* Summaries are a few MB: each is loaded whole and merged into the first. */
static void merge_summaries(const struct options *opt)
{
	const char *first = cli_display_name(opt->inputs[0]);

	if (opt->op == MERGE_AND)
		cli_fatal("%s: summaries cannot be intersected (--intersect)", first);
	merged_summary = load_summary(opt->inputs[0]);
	for (int i = 1; i < opt->ninputs; i++) {
		struct topk *t = load_summary(opt->inputs[i]);
		const char *why;

		if (topk_merge(merged_summary, t, &why) < 0) {
			topk_free(t);
			cli_fatal("%s: cannot be merged with %s: %s", cli_display_name(opt->inputs[i]),
				  first, why);
		}
		topk_free(t);
	}
}

static void save_summary(const struct topk *t, const char *path)
{
	const char *why;
	int ret = path ? topk_file_save_path(t, path, &why) : topk_file_save(t, STDOUT_FILENO, &why);

	if (ret < 0)
		cli_fatal("%s: %s", path ? path : "(standard output)", why);
}

static void merge_files(const struct options *opt)
{
	struct cascade *result;

	if (topk_file_sniff_path(opt->inputs[0])) {
		merge_summaries(opt);
		return;
	}

	cli_load_any(opt->inputs[0], &merged, &merged_window, &merged_sketch);
	if (merged_window != NULL) {
		merge_windows(opt);
		return;
	}
	if (merged_sketch != NULL) {
		merge_sketches(opt);
		return;
	}
	result = merged;
	if (opt->op == MERGE_AND && result->growth != 0)
		cli_fatal("%s: cannot intersect growing filters (a key may sit in different stages)",
			  cli_display_name(opt->inputs[0]));
	for (int i = 1; i < opt->ninputs; i++)
		merge_file(result, opt->inputs[0], opt->inputs[i], opt->op);
}

static void report_sketch(const struct sketch *s)
{
	double estimate = sketch_estimate(s);

	cli_warn("HyperLogLog sketch, precision %u, %llu insertions", sketch_precision(s),
		 (unsigned long long)s->insertions);
	if (sketch_is_exact(s))
		cli_warn("%.0f distinct keys, counted exactly", estimate);
	else
		cli_warn("about %.0f distinct keys, standard error %.2f%% (about %.0f)", estimate,
			 100.0 * sketch_relative_error(s), estimate * sketch_relative_error(s));
}

static void report(const struct cascade *c)
{
	char size[32], count[64];

	cli_warn("%zu stage%s, %s, %llu insertions", c->nstages, c->nstages == 1 ? "" : "s",
		 cli_human_bytes(cascade_bytes(c), size),
		 (unsigned long long)cascade_insertions(c));
	cli_warn("%s, estimated false-positive rate %.3g (target %g)",
		 cli_distinct_keys(cascade_estimate_count(c), count), cascade_current_fpr(c), c->target_p);
}

int main(int argc, char **argv)
{
	struct options opt;

	cli_init(argv[0]);
	cli_keys_optional();	/* never hashes keys: fingerprints suffice */
	cli_dcso_readable();	/* DCSO filters merge with DCSO filters, as their join */
	parse_options(&opt, argc, argv);
	if (opt.output)
		cli_check_destination(opt.output);
	else if (isatty(STDOUT_FILENO))
		cli_fatal("refusing to write a filter to a terminal (use -o FILE or a redirection)");
	for (int i = 0; opt.output && i < opt.ninputs; i++)
		if (cli_same_file(opt.output, opt.inputs[i]))
			cli_lock_update(opt.output);	/* -o onto an input: read, then replaced */
	merge_files(&opt);
	if (merged_summary != NULL) {
		if (opt.verbose)
			cli_warn("heavy-hitter summary, %llu keys counted, %llu kept; every key not kept occurred at most %llu times",
				 (unsigned long long)merged_summary->total,
				 (unsigned long long)merged_summary->kept,
				 (unsigned long long)topk_floor(merged_summary));
		save_summary(merged_summary, opt.output);
		topk_free(merged_summary);
	} else if (merged_window != NULL) {
		cli_save_window(merged_window, opt.output);
		window_free(merged_window);
	} else if (merged_sketch != NULL) {
		if (opt.verbose)
			report_sketch(merged_sketch);
		cli_save_sketch(merged_sketch, opt.output);
		sketch_free(merged_sketch);
	} else {
		if (opt.verbose)
			report(merged);
		/* as bfbuild: shards that fit apart may not fit together */
		cli_warn_over_capacity(merged, cascade_current_fpr(merged));
		cli_save_filter(merged, opt.output);
		cascade_free(merged);
	}
	cli_unlock();
	return 0;
}
