/* SPDX-License-Identifier: MIT */
/*
 * bfinfo - say what is in a filter file: every header field and the
 * figures derived from the bits (fill, estimated keys, the false-positive
 * rate as it is now), as an aligned text block or as one JSON object per
 * file (JSON Lines). A file stores those figures in its header (format.h),
 * so bfinfo reads no further; --verify reads the bits too, and checks the
 * stored figures against them. A file written before they were stored is
 * read whole, its figures counted.
 *
 * It shows a fingerprint of the SipHash key, never the key: whoever knows
 * the key can craft keys that collide in the filter. A DCSO bloom filter
 * (dcso.h) is described by its own header fields: it has no key. With
 * --verify, or where it must count, it reads each file whole, like any
 * other reader, so a corrupt file is reported the same way bfgrep would
 * report it; a bad file does not stop the others.
 * A counting stage (filter.h) is described in counters: its non-zero ones
 * stand where a bit stage's set bits do, and its saturated counters and
 * removals are added. A HyperLogLog sketch (bfcount -o, sketch.h), told
 * apart by its magic, is described by its own fields: precision, hash,
 * key fingerprint, the distinct count and the registers in use. A bftop
 * summary (topk_file.h), told apart by its magic read ahead with pread
 * (so from a file, not a pipe), by its sizes, key, the keys counted and
 * kept, and the bound on every key not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cascade.h"
#include "cli.h"
#include "cli_window.h"
#include "dcso.h"
#include "filter.h"
#include "format.h"
#include "hll.h"
#include "json_out.h"
#include "layout.h"
#include "sketch.h"
#include "topk.h"
#include "topk_file.h"
#include "writer.h"

/* Text output: values start in this column. */
#define LABEL_WIDTH 22

static const char usage[] =
	"Usage: bfinfo [--json | --brief] [--verify] FILTER...\n"
	"Show the header fields and estimated contents of filter files (bftools' or DCSO's)\n"
	"of HyperLogLog sketch files (bfcount's) and of summaries (bftop's).\n"
	"\n"
	"      --json            one JSON object per file and line (JSON Lines)\n"
	"      --report=json     the same as --json, spelled as in every program\n"
	"      --brief           a header, then one line per file: kind, keys, fill,\n"
	"                        rate now, target rate, size on disk, file\n"
	"      --verify          read every bit and check the figures the header\n"
	"                        stores against them (else the header is read alone)\n"
	CLI_COMMON_HELP
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n"
	"\n"
	"A FILTER of - is read from standard input. A FILTER may be a sketch or a summary.\n"
	"Exit status: 0 if every filter was described, 2 on trouble.\n";

enum { OPT_BRIEF = 256, OPT_VERIFY };

static const struct option long_options[] = {
	{ "brief", no_argument, NULL, OPT_BRIEF },
	CLI_REPORT_OPTIONS,
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

struct options {
	int json, brief, verify;
	char **filters;
	int nfilters;
};

/* What is shown of one stage, beyond its params. */
struct stage_figures {
	uint64_t bits_set;	/* counting: counters non-zero */
	uint64_t saturated;	/* counting: counters at 15 */
	double fill, estimate, rate;
};

/* The size of a filter file; unknown for standard input. */
struct disk_size {
	int known;
	uint64_t bytes;
};

/* Everything shown about one file. */
struct info {
	const char *name;	/* as given; "-" is standard input */
	const struct cascade *c;
	struct disk_size disk;
	struct stage_figures stages[CASCADE_STAGES_MAX];
	uint64_t bits, bits_set, memory_bytes;
	int over_capacity;
	double fill, estimate, rate;
};

static void parse_option(struct options *opt, int c)
{
	if (cli_report_option(c, optarg) || cli_common_option(c, optarg))
		return;
	switch (c) {
	case OPT_BRIEF: opt->brief = 1; break;
	case OPT_VERIFY: opt->verify = 1; break;
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default: cli_usage_error("unknown option");
	}
}

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	while ((c = cli_getopt(argc, argv, ":j:hV", long_options)) != -1)
		parse_option(opt, c);
	opt->json = cli_reports_json();
	opt->filters = argv + optind;
	opt->nfilters = argc - optind;
	if (opt->nfilters == 0)
		cli_usage_error("no filter given");
	if (opt->brief && opt->json)
		cli_usage_error("--brief and --json cannot be used together");
	if (cli_stdin_uses(opt->filters, (size_t)opt->nfilters) > 1)
		cli_usage_error("standard input can be read only once");
}

/* ------------------------------------------------------------ loading */

/*
 * What one file holds: a filter, a window or a sketch (the others NULL),
 * all NULL when it could not be read. A filter's or window's figures are
 * in stats: its bits may not have been read (format_load_described).
 */
struct loaded {
	struct cascade *filter;
	struct window *window;
	struct sketch *sketch;
	struct format_stats stats;
};

/* The key file against what was loaded: NULL when it agrees or none was given. */
static const char *key_file_problem(const struct loaded *l)
{
	if (l->sketch)
		return cli_sketch_key_file_disagrees(l->sketch);
	if (l->window)
		return NULL;	/* bfinfo shows a window's key fingerprint; it hashes nothing */
	return cli_key_file_disagrees(l->filter);
}

static void unload(struct loaded *l)
{
	cascade_free(l->filter);
	window_free(l->window);
	sketch_free(l->sketch);
	l->filter = NULL;
	l->window = NULL;
	l->sketch = NULL;
}

/*
 * Load one file, a filter, a window or a sketch; nothing (reported) when it cannot
 * be. The size on disk is taken from the descriptor the file is read
 * from, so both describe the same file even if the name is replaced
 * meanwhile. Returns 0, or -1 when nothing was loaded.
 */
static int load_file(const char *path, int verify, struct disk_size *disk, struct loaded *l)
{
	enum format_figures how = verify ? FORMAT_FIGURES_VERIFIED : FORMAT_FIGURES;
	struct stat st;
	const char *why;
	int fd, ret;

	disk->known = 0;
	disk->bytes = 0;
	cli_progress_loading(cli_display_name(path));
	if (strcmp(path, "-") == 0) {
		ret = format_load_described(STDIN_FILENO, &l->filter, &l->window, &l->sketch, how,
					    &l->stats, &why);
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		ret = -1;
		why = strerror(errno);
	} else {
		ret = format_load_described(fd, &l->filter, &l->window, &l->sketch, how, &l->stats, &why);
		disk->known = ret == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		disk->bytes = disk->known ? (uint64_t)st.st_size : 0;
		close(fd);	/* read-only: nothing to lose */
	}
	cli_progress_done();
	if (ret < 0) {
		cli_warn("%s: %s", cli_display_name(path), cli_explain(why));
		return -1;
	}
	if ((why = key_file_problem(l)) != NULL) {
		cli_warn("%s: %s", cli_display_name(path), why);
		unload(l);
		return -1;
	}
	return 0;
}

static double ratio(uint64_t part, uint64_t whole)
{
	return whole == 0 ? 0.0 : (double)part / (double)whole;
}

static int is_dcso(const struct cascade *c)
{
	return layout_has(cascade_params(c)->layout, LAYOUT_FOREIGN);
}

/* The filter's bits: m, or a DCSO file's own m (its array is rounded up to 512). */
static uint64_t stage_bits(const struct filter *f)
{
	return filter_probed(&f->params);
}

/* Work out every derived figure of c from its stages' figures st. */
static void measure(struct info *in, const struct cascade *c, const struct filter_stats *st)
{
	in->c = c;
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter *f = c->stages[i];
		struct stage_figures *s = &in->stages[i];

		s->bits_set = st[i].bits_set;
		s->saturated = st[i].saturated;
		s->fill = ratio(s->bits_set, stage_bits(f));
		s->estimate = filter_stats_estimate(&f->params, &st[i]);
		s->rate = st[i].rate;
		in->bits += stage_bits(f);
		in->bits_set += s->bits_set;
	}
	in->fill = ratio(in->bits_set, in->bits);
	in->estimate = cascade_stats_estimate(c, st);
	in->rate = cascade_stats_fpr(c, st);
	in->over_capacity = in->rate > CASCADE_OVER_CAPACITY_SLACK * c->target_p;
	in->memory_bytes = cascade_bytes(c);
}

/* ------------------------------------------------------------ output */

static void put(struct writer *w, const char *data, size_t len)
{
	if (writer_put(w, data, len) < 0)
		cli_write_error(errno);
}

static void vputf(struct writer *w, const char *fmt, va_list ap)
{
	char text[256];
	int len = vsnprintf(text, sizeof text, fmt, ap);

	if (len < 0)
		cli_fatal("%s", strerror(errno));
	put(w, text, (size_t)len < sizeof text ? (size_t)len : sizeof text - 1);
}

static void putf(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vputf(w, fmt, ap);
	va_end(ap);
}

static const char *hash_name(enum filter_hash hash)
{
	return hash == FILTER_SIPHASH_2_4 ? "SipHash-2-4-128" : "SipHash-1-3-128";
}

static const char *layout_name(enum filter_layout layout)
{
	return layout_of(layout)->name;
}

static int is_counting(const struct filter *f)
{
	return layout_has(f->params.layout, LAYOUT_COUNTERS);
}

static int key_external(const struct cascade *c)
{
	return (cascade_params(c)->flags & FILTER_KEY_EXTERNAL) != 0;
}

static int folds_case(const struct cascade *c)
{
	return (cascade_params(c)->flags & FILTER_FOLD_CASE) != 0;
}

/* ------------------------------------------------------------ text */

/* One "label:   value" line; indent 2 for a stage's fields. */
static void text_field(struct writer *w, int indent, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void text_field(struct writer *w, int indent, const char *label, const char *fmt, ...)
{
	int pad = LABEL_WIDTH - indent - (int)strlen(label) - 1;
	va_list ap;

	putf(w, "%*s%s:%*s", indent, "", label, pad > 1 ? pad : 1, "");
	va_start(ap, fmt);
	vputf(w, fmt, ap);
	va_end(ap);
	put(w, "\n", 1);
}

static void text_estimate(struct writer *w, int indent, double estimate)
{
	if (isinf(estimate))
		text_field(w, indent, "estimated elements", "too many to estimate (every bit set)");
	else
		text_field(w, indent, "estimated elements", "%.0f", estimate);
}

/*
 * "keys": the distinct keys estimated from the bits set, exactly the figure
 * bfcount -f prints (cascade_estimate_count, window_estimate_count). No
 * exact distinct count is stored: a merge cannot know the overlap of its
 * inputs, and merged shards must stay byte-identical to a serial build.
 */
static void text_keys(struct writer *w, int indent, double estimate)
{
	if (isinf(estimate))
		text_field(w, indent, "keys", "too many to estimate (every bit set)");
	else
		text_field(w, indent, "keys", "%.0f (estimated from the bits set)", estimate);
}

static void text_bytes(struct writer *w, const char *label, uint64_t bytes)
{
	char human[32];

	text_field(w, 0, label, "%s (%llu bytes)", cli_human_bytes(bytes, human),
		   (unsigned long long)bytes);
}

static void text_file_name(struct writer *w, const struct info *in)
{
	/* the name is printed as given, like the names in messages */
	put(w, "file:", 5);
	putf(w, "%*s", LABEL_WIDTH - 5, "");
	put(w, cli_display_name(in->name), strlen(cli_display_name(in->name)));
	put(w, "\n", 1);
}

static void text_header(struct writer *w, const struct info *in)
{
	const struct cascade *c = in->c;

	text_file_name(w, in);
	/* the reader accepts no other version, so this is the file's */
	text_field(w, 0, "format version", "%u", FORMAT_VERSION);
	if (c->growth == 0)
		text_field(w, 0, "kind", "fixed");
	else
		text_field(w, 0, "kind", "growing (growth factor %u, tighten %u)",
			   c->growth, c->tighten);
	text_field(w, 0, "stages", "%zu", c->nstages);
	text_field(w, 0, "hash function", "%s", hash_name(cascade_params(c)->hash));
	text_field(w, 0, "key fingerprint", "%016llx",
		   (unsigned long long)cascade_params(c)->fingerprint);
	text_field(w, 0, "key", "%s", key_external(c) ? "kept in a key file (--key-file)" : "stored in the filter");
	text_field(w, 0, "key normalisation", "%s", folds_case(c) ? "ASCII case folded" : "none");
	text_field(w, 0, "capacity", "%llu%s", (unsigned long long)c->capacity,
		   c->growth == 0 ? "" : " (first stage)");
	text_field(w, 0, "target rate", "%g", c->target_p);
	text_field(w, 0, "insertions", "%llu", (unsigned long long)cascade_insertions(c));
	text_keys(w, 0, in->estimate);
}

static void text_stage(struct writer *w, const struct info *in, size_t i)
{
	const struct filter_params *p = &in->c->stages[i]->params;
	const struct stage_figures *s = &in->stages[i];

	int counting = is_counting(in->c->stages[i]);

	putf(w, "stage %zu of %zu:\n", i + 1, in->c->nstages);
	text_field(w, 2, "layout", "%s", layout_name(p->layout));
	text_field(w, 2, counting ? "counters (m)" : "bits (m)", "%llu", (unsigned long long)p->m);
	text_field(w, 2, "hashes (k)", "%u", (unsigned)p->k);
	text_field(w, 2, "capacity", "%llu", (unsigned long long)p->capacity);
	text_field(w, 2, "target rate", "%g", p->target_p);
	text_field(w, 2, "insertions", "%llu", (unsigned long long)in->c->stages[i]->insertions);
	if (counting)
		text_field(w, 2, "removals", "%llu", (unsigned long long)in->c->stages[i]->removals);
	text_field(w, 2, counting ? "counters non-zero" : "bits set", "%llu",
		   (unsigned long long)s->bits_set);
	if (counting)
		text_field(w, 2, "saturated counters", "%llu", (unsigned long long)s->saturated);
	text_field(w, 2, "fill", "%.2f%%", 100.0 * s->fill);
	text_estimate(w, 2, s->estimate);
	text_field(w, 2, "estimated rate", "%.3g", s->rate);
}

static void text_sizes(struct writer *w, const struct info *in)
{
	text_bytes(w, "size in memory", in->memory_bytes);
	if (in->disk.known)
		text_bytes(w, "size on disk", in->disk.bytes);
	else
		text_field(w, 0, "size on disk", "unknown");
}

static void text_totals(struct writer *w, const struct info *in)
{
	int counting = is_counting(in->c->stages[0]);

	text_field(w, 0, counting ? "total counters" : "total bits", "%llu",
		   (unsigned long long)in->bits);
	text_field(w, 0, counting ? "total non-zero" : "total bits set", "%llu",
		   (unsigned long long)in->bits_set);
	text_field(w, 0, "total fill", "%.2f%%", 100.0 * in->fill);
	text_estimate(w, 0, in->estimate);
	text_field(w, 0, "estimated rate", "%.3g (target %g%s)", in->rate, in->c->target_p,
		   in->over_capacity ? "; over capacity" : "");
	text_sizes(w, in);
}

/* A DCSO filter: its header fields (n, p, k, m, N), then the figures. */
static void text_dcso(struct writer *w, const struct info *in)
{
	const struct cascade *c = in->c;
	const struct filter *f = c->stages[0];

	text_file_name(w, in);
	text_field(w, 0, "format version", "%u (DCSO)", DCSO_VERSION);
	text_field(w, 0, "kind", "DCSO bloom filter");
	text_field(w, 0, "hash function", "FNV-1 64-bit");
	text_field(w, 0, "key", "none: anyone can compute which keys collide");
	text_field(w, 0, "capacity (n)", "%llu", (unsigned long long)c->capacity);
	text_field(w, 0, "target rate (p)", "%g", c->target_p);
	text_field(w, 0, "hashes (k)", "%u", (unsigned)f->params.k);
	text_field(w, 0, "bits (m)", "%llu", (unsigned long long)f->params.probe_bits);
	text_field(w, 0, "elements (N)", "%llu", (unsigned long long)c->newest_keys);
	text_keys(w, 0, in->estimate);
	text_field(w, 0, "bits set", "%llu", (unsigned long long)in->bits_set);
	text_field(w, 0, "fill", "%.2f%%", 100.0 * in->fill);
	text_estimate(w, 0, in->estimate);
	text_field(w, 0, "estimated rate", "%.3g (target %g%s)", in->rate, c->target_p,
		   in->over_capacity ? "; over capacity" : "");
	text_sizes(w, in);
}

static void describe_text(struct writer *w, const struct info *in)
{
	if (is_dcso(in->c)) {
		text_dcso(w, in);
		return;
	}
	text_header(w, in);
	for (size_t i = 0; i < in->c->nstages; i++)
		text_stage(w, in, i);
	text_totals(w, in);
}

/* ------------------------------------------------------------ JSON */

/* A JSON string of any bytes (a file name need not be UTF-8: json_out.h says how). */
static void json_string(struct writer *w, const char *s)
{
	if (json_out_string(w, s, strlen(s)) < 0)
		cli_write_error(errno);
}

/* A double as the shortest text that reads back exactly; null if infinite. */
static void json_double(struct writer *w, double v)
{
	char text[40];

	if (!isfinite(v)) {
		put(w, "null", 4);
		return;
	}
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(text, sizeof text, "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	put(w, text, strlen(text));
}

/* ,"key": for every key after "file", the first. */
static void json_key(struct writer *w, const char *key)
{
	putf(w, ",\"%s\":", key);
}

static void json_u64(struct writer *w, const char *key, uint64_t v)
{
	json_key(w, key);
	putf(w, "%llu", (unsigned long long)v);
}

static void json_u64_or_null(struct writer *w, const char *key, int known, uint64_t v)
{
	if (known) {
		json_u64(w, key, v);
		return;
	}
	json_key(w, key);
	put(w, "null", 4);
}

/* "keys": as text_keys, a whole number, or null when every bit is set. */
static void json_keys(struct writer *w, double estimate)
{
	json_u64_or_null(w, "keys", isfinite(estimate), isfinite(estimate) ? (uint64_t)llround(estimate) : 0);
}

static void json_header(struct writer *w, const struct info *in)
{
	const struct cascade *c = in->c;

	put(w, "{\"file\":", 8);
	json_string(w, in->name);
	json_u64(w, "format_version", FORMAT_VERSION);
	json_key(w, "kind");
	putf(w, "\"%s\"", c->growth == 0 ? "fixed" : "growing");
	json_u64_or_null(w, "growth", c->growth != 0, c->growth);
	json_u64_or_null(w, "tighten", c->growth != 0, c->tighten);
	json_u64(w, "stage_count", c->nstages);
	json_key(w, "hash");
	json_string(w, hash_name(cascade_params(c)->hash));
	json_key(w, "key_fingerprint");
	putf(w, "\"%016llx\"", (unsigned long long)cascade_params(c)->fingerprint);
	json_key(w, "key_external");
	putf(w, "%s", key_external(c) ? "true" : "false");
	json_key(w, "fold_case");
	putf(w, "%s", folds_case(c) ? "true" : "false");
	json_u64(w, "capacity", c->capacity);
	json_key(w, "target_rate");
	json_double(w, c->target_p);
	json_u64(w, "insertions", cascade_insertions(c));
	json_keys(w, in->estimate);
}

static void json_stage(struct writer *w, const struct info *in, size_t i)
{
	const struct filter *f = in->c->stages[i];
	const struct stage_figures *s = &in->stages[i];

	putf(w, "%s{\"layout\":\"%s\"", i == 0 ? "" : ",", layout_name(f->params.layout));
	json_u64(w, "bits", f->params.m);
	json_u64(w, "hashes", f->params.k);
	json_u64(w, "capacity", f->params.capacity);
	json_key(w, "target_rate");
	json_double(w, f->params.target_p);
	json_u64(w, "insertions", f->insertions);
	if (is_counting(f))
		json_u64(w, "removals", f->removals);
	json_u64(w, "bits_set", s->bits_set);
	if (is_counting(f))
		json_u64(w, "saturated_counters", s->saturated);
	json_key(w, "fill");
	json_double(w, s->fill);
	json_key(w, "estimated_elements");
	json_double(w, s->estimate);
	json_key(w, "estimated_rate");
	json_double(w, s->rate);
	put(w, "}", 1);
}

static void json_totals(struct writer *w, const struct info *in)
{
	json_u64(w, "bits", in->bits);
	json_u64(w, "bits_set", in->bits_set);
	json_key(w, "fill");
	json_double(w, in->fill);
	json_key(w, "estimated_elements");
	json_double(w, in->estimate);
	json_key(w, "estimated_rate");
	json_double(w, in->rate);
	json_key(w, "over_capacity");
	putf(w, "%s", in->over_capacity ? "true" : "false");
	json_u64(w, "bytes_in_memory", in->memory_bytes);
	json_u64_or_null(w, "bytes_on_disk", in->disk.known, in->disk.bytes);
}

/* A DCSO filter: its header fields, then the same totals as any filter. */
static void json_dcso(struct writer *w, const struct info *in)
{
	const struct cascade *c = in->c;
	const struct filter *f = c->stages[0];

	put(w, "{\"file\":", 8);
	json_string(w, in->name);
	json_u64(w, "format_version", DCSO_VERSION);
	json_key(w, "kind");
	put(w, "\"dcso\"", 6);
	json_key(w, "hash");
	json_string(w, "FNV-1-64");
	json_u64(w, "capacity", c->capacity);
	json_key(w, "target_rate");
	json_double(w, c->target_p);
	json_u64(w, "hashes", f->params.k);
	json_u64(w, "elements", c->newest_keys);
	json_keys(w, in->estimate);
	json_totals(w, in);
	put(w, "}\n", 2);
}

static void describe_json(struct writer *w, const struct info *in)
{
	if (is_dcso(in->c)) {
		json_dcso(w, in);
		return;
	}
	json_header(w, in);
	json_key(w, "stages");
	put(w, "[", 1);
	for (size_t i = 0; i < in->c->nstages; i++)
		json_stage(w, in, i);
	put(w, "]", 1);
	json_totals(w, in);
	put(w, "}\n", 2);
}

/* ------------------------------------------------------------ windows */

/* A clock value as shown: RFC 3339 UTC for a time window, a key count else. */
static const char *clock_text(const struct window_params *wp, uint64_t t, char buf[64])
{
	time_t secs = (time_t)(t / 1000);
	struct tm tm;

	if (wp->kind == WINDOW_COUNT) {
		snprintf(buf, 64, "%llu keys", (unsigned long long)t);
		return buf;
	}
	if (t == UINT64_MAX || gmtime_r(&secs, &tm) == NULL)
		return strcpy(buf, "-");
	strftime(buf, 64, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), 64 - strlen(buf), ".%03uZ", (unsigned)(t % 1000));
	return buf;
}

/* Generation g's stages' figures, in st's run of every stage, oldest generation first. */
static const struct filter_stats *generation_stats(const struct window *win,
						   const struct format_stats *st, size_t g)
{
	size_t from = 0;

	for (size_t h = 0; h < g; h++)
		from += win->gen[h]->nstages;
	return st->stage + from;
}

static void text_generation(struct writer *w, const struct window *win,
			    const struct format_stats *st, size_t g)
{
	const struct cascade *c = win->gen[g];
	const struct filter_stats *gs = generation_stats(win, st, g);
	const struct filter *newest = c->stages[c->nstages - 1];
	char from[64], human[32];

	putf(w, "generation %llu:\n", (unsigned long long)win->gen_no[g]);
	text_field(w, 2, "starts", "%s", clock_text(&win->wp, window_generation_start(&win->wp, win->gen_no[g]), from));
	text_field(w, 2, "stages", "%zu", c->nstages);
	text_field(w, 2, "insertions", "%llu", (unsigned long long)cascade_insertions(c));
	text_field(w, 2, "fill", "%.4f (newest stage)",
		   ratio(gs[c->nstages - 1].bits_set, stage_bits(newest)));
	text_estimate(w, 2, cascade_stats_estimate(c, gs));
	text_field(w, 2, "memory", "%s", cli_human_bytes(cascade_bytes(c), human));
}

/* The time the window is read at, as every program reads it (cli_window_read_time). */
static uint64_t read_time(const struct window *win, const char *path)
{
	struct cli_window cw;

	cli_window_init(&cw);
	return cli_window_read_time(&cw, win, path);
}

static void describe_window_text(struct writer *w, const char *path, const struct window *win,
				 const struct format_stats *st)
{
	const struct window_params *wp = &win->wp;
	const struct filter_params *p = window_params_of(win);
	char span[48], clock[64], source[64], at_text[64];
	unsigned per = wp->generations - 1;
	uint64_t at = read_time(win, path);
	size_t live = window_live_from(win, at);

	put(w, "file:", 5);
	putf(w, "%*s%s\n", LABEL_WIDTH - 5, "", cli_display_name(path));
	text_field(w, 0, "format version", "%u", FORMAT_VERSION_WINDOW);
	text_field(w, 0, "kind", "window (%s)", wp->kind == WINDOW_TIME ? "time" : "count");
	text_field(w, 0, "window", "%s", cli_window_describe(wp, span));
	text_field(w, 0, "generations", "%u (slack 1/%u: forgotten within %u/%u of the window)",
		   wp->generations, per, wp->generations, per);
	text_field(w, 0, "refresh", "%s", wp->flags & WINDOW_REFRESH ? "yes" : "no");
	text_field(w, 0, "clock", "%s", clock_text(wp, win->clock, clock));
	text_field(w, 0, "clock source", "%s", window_clock_words(wp, source));
	text_field(w, 0, "read at", "%s", clock_text(wp, at, at_text));
	text_field(w, 0, "layout", "%s", layout_name(win->layout));
	text_field(w, 0, "hash function", "%s", hash_name(p->hash));
	text_field(w, 0, "key fingerprint", "%016llx", (unsigned long long)p->fingerprint);
	text_field(w, 0, "key", "%s", p->flags & FILTER_KEY_EXTERNAL ? "kept in a key file (--key-file)" : "stored in the filter");
	text_field(w, 0, "key normalisation", "%s", p->flags & FILTER_FOLD_CASE ? "ASCII case folded" : "none");
	text_field(w, 0, "expected keys", "%llu per window", (unsigned long long)wp->expected);
	text_field(w, 0, "target rate", "%g", wp->target_p);
	text_field(w, 0, "live generations", "%zu", win->ngen - live);
	text_keys(w, 0, window_stats_estimate(win, at, st->stage));
	for (size_t g = live; g < win->ngen; g++)
		text_generation(w, win, st, g);
	text_estimate(w, 0, window_stats_estimate(win, at, st->stage));
	text_bytes(w, "memory", window_bytes(win));
}

static void describe_window_json(struct writer *w, const char *path, const struct window *win,
				 const struct format_stats *st)
{
	const struct window_params *wp = &win->wp;
	char source[64];
	uint64_t at = read_time(win, path);
	size_t live = window_live_from(win, at);

	put(w, "{\"file\":", 8);
	json_string(w, path);
	json_u64(w, "format_version", FORMAT_VERSION_WINDOW);
	json_key(w, "kind");
	json_string(w, wp->kind == WINDOW_TIME ? "time window" : "count window");
	json_u64(w, wp->kind == WINDOW_TIME ? "window_seconds" : "window_keys", wp->size);
	json_u64(w, "generations", wp->generations);
	json_key(w, "refresh");
	put(w, wp->flags & WINDOW_REFRESH ? "true" : "false", wp->flags & WINDOW_REFRESH ? 4 : 5);
	json_u64(w, wp->kind == WINDOW_TIME ? "clock_ms" : "clock_keys", win->clock);
	json_key(w, "clock_source");
	json_string(w, window_clock_words(wp, source));
	json_u64(w, wp->kind == WINDOW_TIME ? "read_at_ms" : "read_at_keys", at);
	json_key(w, "target_rate");
	json_double(w, wp->target_p);
	json_keys(w, window_stats_estimate(win, at, st->stage));
	json_key(w, "live");
	put(w, "[", 1);
	for (size_t g = live; g < win->ngen; g++) {
		putf(w, "%s{\"number\":%llu", g > live ? "," : "", (unsigned long long)win->gen_no[g]);
		json_u64(w, "stages", win->gen[g]->nstages);
		json_u64(w, "insertions", cascade_insertions(win->gen[g]));
		json_u64(w, "bytes", cascade_bytes(win->gen[g]));
		put(w, "}", 1);
	}
	put(w, "]", 1);
	json_key(w, "estimated_elements");
	json_double(w, window_stats_estimate(win, at, st->stage));
	json_u64(w, "bytes", window_bytes(win));
	put(w, "}\n", 2);
}

/* ------------------------------------------------------------ sketches */

/* Everything shown about a sketch beyond its fields. */
struct sketch_info {
	const char *name;
	const struct sketch *s;
	struct disk_size disk;
	uint64_t registers, nonzero, memory_bytes;
	double estimate, error;
};

static void measure_sketch(struct sketch_info *in, const struct sketch *s)
{
	in->s = s;
	in->registers = UINT64_C(1) << sketch_precision(s);
	in->nonzero = sketch_registers_nonzero(s);
	in->estimate = sketch_estimate(s);
	in->error = sketch_relative_error(s);
	in->memory_bytes = sizeof *s + hll_memory(sketch_precision(s));
}

/* Where the key is, and whether it is bfcount's public default. */
static const char *sketch_key_words(const struct sketch *s)
{
	if (s->flags & FILTER_KEY_EXTERNAL)
		return "kept in a key file (--key-file)";
	if (s->fingerprint == filter_key_fingerprint(sketch_default_key))
		return "stored in the sketch (bfcount's default key, public)";
	return "stored in the sketch";
}

static void text_sketch(struct writer *w, const struct sketch_info *in)
{
	const struct sketch *s = in->s;
	struct info file = { .name = in->name };

	text_file_name(w, &file);
	text_field(w, 0, "format version", "%u (sketch)", SKETCH_FORMAT_VERSION);
	text_field(w, 0, "kind", "HyperLogLog sketch");
	text_field(w, 0, "precision", "%u (%llu registers)", sketch_precision(s),
		   (unsigned long long)in->registers);
	text_field(w, 0, "hash function", "%s", hash_name(s->hash));
	text_field(w, 0, "key fingerprint", "%016llx", (unsigned long long)s->fingerprint);
	text_field(w, 0, "key", "%s", sketch_key_words(s));
	text_field(w, 0, "key normalisation", "%s",
		   s->flags & FILTER_FOLD_CASE ? "ASCII case folded" : "none");
	text_field(w, 0, "insertions", "%llu", (unsigned long long)s->insertions);
	text_field(w, 0, "registers non-zero", "%llu of %llu (%.2f%%)", (unsigned long long)in->nonzero,
		   (unsigned long long)in->registers, 100.0 * ratio(in->nonzero, in->registers));
	if (sketch_is_exact(s))
		text_field(w, 0, "distinct keys", "%.0f (exact)", in->estimate);
	else
		text_field(w, 0, "distinct keys", "%.0f (standard error %.2f%%, about %.0f)",
			   in->estimate, 100.0 * in->error, in->error * in->estimate);
	text_bytes(w, "size in memory", in->memory_bytes);
	if (in->disk.known)
		text_bytes(w, "size on disk", in->disk.bytes);
	else
		text_field(w, 0, "size on disk", "unknown");
}

static void json_sketch(struct writer *w, const struct sketch_info *in)
{
	const struct sketch *s = in->s;

	put(w, "{\"file\":", 8);
	json_string(w, in->name);
	json_u64(w, "format_version", SKETCH_FORMAT_VERSION);
	json_key(w, "kind");
	put(w, "\"sketch\"", 8);
	json_u64(w, "precision", sketch_precision(s));
	json_u64(w, "registers", in->registers);
	json_key(w, "hash");
	json_string(w, hash_name(s->hash));
	json_key(w, "key_fingerprint");
	putf(w, "\"%016llx\"", (unsigned long long)s->fingerprint);
	json_key(w, "key_external");
	putf(w, "%s", s->flags & FILTER_KEY_EXTERNAL ? "true" : "false");
	json_key(w, "fold_case");
	putf(w, "%s", s->flags & FILTER_FOLD_CASE ? "true" : "false");
	json_u64(w, "insertions", s->insertions);
	json_u64(w, "registers_nonzero", in->nonzero);
	json_key(w, "exact");
	putf(w, "%s", sketch_is_exact(s) ? "true" : "false");
	json_key(w, "distinct_keys");
	json_double(w, in->estimate);
	json_key(w, "relative_error");
	json_double(w, in->error);
	json_u64(w, "bytes_in_memory", in->memory_bytes);
	json_u64_or_null(w, "bytes_on_disk", in->disk.known, in->disk.bytes);
	put(w, "}\n", 2);
}

static void describe_sketch(struct writer *w, const struct options *opt, const char *path,
			    const struct sketch *s, struct disk_size disk, int first)
{
	struct sketch_info in = { .name = path, .disk = disk };

	measure_sketch(&in, s);
	if (opt->json) {
		json_sketch(w, &in);
		return;
	}
	if (!first)
		put(w, "\n", 1);
	text_sketch(w, &in);
}

/* ------------------------------------------------------------ summaries */

static void text_summary(struct writer *w, const char *path, const struct topk *t,
			 struct disk_size disk)
{
	struct info file = { .name = path };

	text_file_name(w, &file);
	text_field(w, 0, "format version", "%u (summary)", TOPK_FORMAT_VERSION);
	text_field(w, 0, "kind", "heavy-hitter summary (Space-Saving, count-min)");
	text_field(w, 0, "capacity", "%llu keys (error %.3g of the stream)",
		   (unsigned long long)t->params.capacity, 1.0 / (double)t->params.capacity);
	text_field(w, 0, "count-min", "%u rows of %llu counters", t->params.depth,
		   (unsigned long long)t->params.width);
	text_field(w, 0, "hash function", "%s", hash_name(t->hash));
	text_field(w, 0, "key fingerprint", "%016llx", (unsigned long long)t->fingerprint);
	text_field(w, 0, "key", "%s", t->fingerprint == filter_key_fingerprint(topk_default_key)
					      ? "stored in the summary (bftop's default key, public)"
					      : "stored in the summary");
	text_field(w, 0, "key normalisation", "%s",
		   t->flags & FILTER_FOLD_CASE ? "ASCII case folded" : "none");
	text_field(w, 0, "keys counted", "%llu", (unsigned long long)t->total);
	text_field(w, 0, "keys kept", "%llu", (unsigned long long)t->kept);
	text_field(w, 0, "not kept: at most", "%llu times each", (unsigned long long)topk_floor(t));
	text_bytes(w, "size in memory", topk_memory(&t->params));
	if (disk.known)
		text_bytes(w, "size on disk", disk.bytes);
	else
		text_field(w, 0, "size on disk", "unknown");
}

static void json_summary(struct writer *w, const char *path, const struct topk *t,
			 struct disk_size disk)
{
	put(w, "{\"file\":", 8);
	json_string(w, path);
	json_u64(w, "format_version", TOPK_FORMAT_VERSION);
	json_key(w, "kind");
	put(w, "\"summary\"", 9);
	json_u64(w, "capacity", t->params.capacity);
	json_u64(w, "width", t->params.width);
	json_u64(w, "depth", t->params.depth);
	json_key(w, "hash");
	json_string(w, hash_name(t->hash));
	json_key(w, "key_fingerprint");
	putf(w, "\"%016llx\"", (unsigned long long)t->fingerprint);
	json_key(w, "fold_case");
	putf(w, "%s", t->flags & FILTER_FOLD_CASE ? "true" : "false");
	json_u64(w, "total", t->total);
	json_u64(w, "kept", t->kept);
	json_u64(w, "floor", topk_floor(t));
	json_u64(w, "bytes_in_memory", topk_memory(&t->params));
	json_u64_or_null(w, "bytes_on_disk", disk.known, disk.bytes);
	put(w, "}\n", 2);
}

/* Load and describe the summary at path; -1 (reported) when it cannot be loaded. */
static void brief_summary(struct writer *w, const char *path, const struct topk *t,
			  struct disk_size disk);

static int describe_summary(struct writer *w, const struct options *opt, const char *path,
			    int first)
{
	struct disk_size disk = { 0, 0 };
	struct stat st;
	const char *why;
	struct topk *t = topk_file_load_path(path, &why);

	if (t == NULL) {
		cli_warn("%s: %s", cli_display_name(path), why);
		return -1;
	}
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		disk.known = 1;
		disk.bytes = (uint64_t)st.st_size;
	}
	if (opt->brief) {
		brief_summary(w, path, t, disk);
	} else if (opt->json) {
		json_summary(w, path, t, disk);
	} else {
		if (!first)
			put(w, "\n", 1);
		text_summary(w, path, t, disk);
	}
	topk_free(t);
	return 0;
}

/* ------------------------------------------------------------ --brief */

/* The header of --brief, and its columns: a line per file, as ls -l and df -h. */
#define BRIEF_FORMAT "%-8s %14s %6s %9s %9s %8s %s\n"

static void brief_header(struct writer *w)
{
	putf(w, BRIEF_FORMAT, "KIND", "KEYS", "FILL", "RATE", "TARGET", "SIZE", "FILE");
}

/* One line; a figure that does not apply is "-" (a NaN, or no size). */
static void brief_line(struct writer *w, const char *kind, double keys, double fill, double rate,
		       double target, struct disk_size disk, const char *path)
{
	char k[32] = "-", f[16] = "-", r[16] = "-", t[16] = "-", size[32] = "-";

	if (!isnan(keys))
		snprintf(k, sizeof k, isinf(keys) ? "full" : "%.0f", keys);
	if (!isnan(fill))
		snprintf(f, sizeof f, "%.1f%%", 100.0 * fill);
	if (!isnan(rate))
		snprintf(r, sizeof r, "%.2g", rate);
	if (!isnan(target))
		snprintf(t, sizeof t, "%.2g", target);
	if (disk.known) {	/* "3.4 kB" as one column: "3.4kB" */
		char *space = strchr(cli_human_bytes(disk.bytes, size), ' ');

		if (space != NULL)
			memmove(space, space + 1, strlen(space));
	}
	putf(w, BRIEF_FORMAT, kind, k, f, r, t, size, cli_display_name(path));
}

static void brief_filter(struct writer *w, const char *path, const struct cascade *c,
			 const struct format_stats *st, struct disk_size disk)
{
	struct info in = { .name = path, .disk = disk };
	char kind[24];

	measure(&in, c, st->stage);
	snprintf(kind, sizeof kind, "%s", c->nstages > 1 || c->growth ? "growing" :
		 layout_name(cascade_params(c)->layout));
	brief_line(w, kind, in.estimate, in.fill, in.rate, c->target_p, disk, path);
}

static void brief_window(struct writer *w, const char *path, const struct window *win,
			 const struct format_stats *st, struct disk_size disk)
{
	brief_line(w, "window", window_stats_estimate(win, read_time(win, path), st->stage), NAN, NAN,
		   win->wp.target_p, disk, path);
}

static void brief_sketch(struct writer *w, const char *path, const struct sketch *s,
			 struct disk_size disk)
{
	struct sketch_info in = { .name = path, .disk = disk };

	measure_sketch(&in, s);
	brief_line(w, "sketch", in.estimate, ratio(in.nonzero, in.registers), NAN, NAN, disk, path);
}

static void brief_summary(struct writer *w, const char *path, const struct topk *t,
			  struct disk_size disk)
{
	brief_line(w, "summary", (double)t->total, NAN, NAN, NAN, disk, path);
}

/* ------------------------------------------------------------ main */

/* Describe the filter c read from path, after a blank line unless first. */
static void describe(struct writer *w, const struct options *opt, const char *path,
		     const struct cascade *c, const struct format_stats *st, struct disk_size disk,
		     int first)
{
	struct info in = { .name = path, .disk = disk };

	measure(&in, c, st->stage);
	if (opt->json) {
		describe_json(w, &in);
		return;
	}
	if (!first)
		put(w, "\n", 1);
	describe_text(w, &in);
}

/* Describe what l holds, read from path, in opt's form; first: nothing described before. */
static void describe_loaded(struct writer *w, const struct options *opt, const char *path,
			    const struct loaded *l, struct disk_size disk, int first)
{
	if (opt->brief && l->window)
		brief_window(w, path, l->window, &l->stats, disk);
	else if (opt->brief && l->sketch)
		brief_sketch(w, path, l->sketch, disk);
	else if (opt->brief)
		brief_filter(w, path, l->filter, &l->stats, disk);
	if (opt->brief)
		return;
	if (l->window && !opt->json && !first)
		put(w, "\n", 1);
	if (l->window && opt->json)
		describe_window_json(w, path, l->window, &l->stats);
	else if (l->window)
		describe_window_text(w, path, l->window, &l->stats);
	else if (l->sketch)
		describe_sketch(w, opt, path, l->sketch, disk, first);
	else
		describe(w, opt, path, l->filter, &l->stats, disk, first);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct writer out;
	struct disk_size disk;
	int status = 0, described = 0;

	cli_init(argv[0]);
	cli_keys_optional();	/* never hashes keys: fingerprints suffice */
	parse_options(&opt, argc, argv);
	cli_stdout_init(&out, 0);
	if (opt.brief)
		brief_header(&out);
	for (int i = 0; i < opt.nfilters; i++) {
		static struct loaded l;	/* large: a window's figures */

		if (topk_file_sniff_path(opt.filters[i])) {
			if (describe_summary(&out, &opt, opt.filters[i], described == 0) < 0)
				status = EXIT_TROUBLE;
			else
				described++;
			continue;
		}
		if (load_file(opt.filters[i], opt.verify, &disk, &l) < 0) {
			status = EXIT_TROUBLE;
			continue;
		}
		describe_loaded(&out, &opt, opt.filters[i], &l, disk, described++ == 0);
		unload(&l);
		/* a file at a time, so a long list shows progress */
		if (writer_flush(&out) < 0)
			cli_write_error(errno);
	}
	cli_stdout_finish(&out);
	return status;
}
