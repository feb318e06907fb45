/* SPDX-License-Identifier: MIT */
/*
 * bfsplit - split lines into N files by their key's partition, in one
 * pass, each file in input order.
 *
 * De-duplication does not merge by OR as filters do: which copy of a key
 * comes first depends on every earlier line with that key. So a seen-set
 * too big for one machine is cut by key, as crawlers cut theirs (Mercator,
 * IRLbot): every copy of a key goes to the one partition that holds it,
 * and bfuniq on partition I sees its keys' copies in input order. The
 * partition is lib/hash/partition.c's function of the key as the other
 * programs cut it and of --shard-key, so `bfsplit` then `bfuniq` on file
 * I is `bfuniq --shard I/N` on the whole stream.
 *
 * Every output is written to a temporary file beside it and renamed into
 * place at the end, all N of them, so a run that fails leaves none of
 * them half written (and the old ones, if any, as they were); fsynced
 * first, unless --no-sync (pieces that a run after a crash writes again).
 * Not here: the partition function (lib/hash/partition.c), cutting keys
 * (lib/io/keys.c).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "cli.h"
#include "cli_fields.h"
#include "keys.h"
#include "partition.h"
#include "writer.h"

#define PARTITIONS_MAX 65536
#define DEFAULT_PATTERN "part-%03d"

static const char usage[] =
	"Usage: bfsplit -N N --shard-key HEX [-o PATTERN] [-k LIST] [-t C] [--header] [--csv] [--jsonl] [--bad-line error|skip] [-i] [-z] [--no-sync] [FILE...]\n"
	"Write each line of FILEs (or standard input) to the file of its key's partition.\n"
	"\n"
	"  -N, --partitions=N    split into N files, partitions 0 to N-1 (up to 65536)\n"
	"  -o, --output=PATTERN  the files' names: PATTERN with its one %d (or %03d,\n"
	"                        zero-padded) the partition (default part-%03d)\n"
	CLI_SHARD_KEY_HELP
	"  -k, --field=LIST      key on fields LIST (N, N,M, N-M, N-; N digits only) of each line\n"
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n"
	"  -i, --ignore-case     fold ASCII case of keys\n"
	"  -z, --null-data       records end with NUL, not newline\n"
	"      --header          the first line of each input is a header: written\n"
	"                        at the top of every output; -k may name its fields\n"
	"      --csv             the input is CSV (RFC 4180; -t defaults to ',')\n"
	"      --jsonl           each line is JSON (JSON Lines): -k takes paths as jq does\n"
	"      --bad-line=error|skip  a line that is not JSON: stop with an error\n"
	"                        (the default), or send it to partition 0\n"
	"      --no-sync         rename the outputs into place without fsync: for\n"
	"                        pieces a run after a crash writes again\n"
	CLI_DECOMPRESS_HELP
	CLI_COMMON_HELP_NO_KEY_FILE
	"  -h, --help            show this help and exit\n"
	"  -V, --version         show the version and exit\n";

enum { OPT_NO_SYNC = 256 };

static const struct option long_options[] = {
	{ "partitions", required_argument, NULL, 'N' },
	{ "no-sync", no_argument, NULL, OPT_NO_SYNC },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	CLI_KEY_OPTIONS,
	CLI_KEY_CASE_OPTION,
	CLI_KEY_JSON_RENAMED_OPTION,
	CLI_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

/* An output name's pattern, cut at its one conversion: prefix, number, suffix. */
struct pattern {
	const char *text;
	size_t prefix_len;	/* bytes before the '%' */
	const char *suffix;	/* after the 'd' */
	int width;		/* digits, zero-padded; 0: as wide as the number */
};

struct options {
	uint64_t partitions;
	struct pattern pattern;
	struct cli_keys_given keys;
	char **inputs;
	int ninputs;
	int no_sync;		/* outputs renamed into place, not made durable */
};

/* A literal '%' in PATTERN is "%%"; the one conversion is %d or %0Wd (W up to 20). */
static void parse_pattern(struct pattern *p, const char *text)
{
	const char *at = text, *c = text;
	size_t conversions = 0;

	p->text = text;
	while ((c = strchr(c, '%')) != NULL) {
		if (c[1] == '%') {
			c += 2;
			continue;
		}
		at = c++;	/* a '%' at the very end is one too, refused below */
		conversions++;
	}
	if (conversions == 0)
		cli_usage_error("invalid -o '%s': it needs a %%d for the partition (part-%%03d)", text);
	if (conversions > 1)
		cli_usage_error("invalid -o '%s': it must have one %%d, not more", text);
	p->prefix_len = (size_t)(at - text);
	p->width = 0;
	if (at[1] == '0') {
		char *end;

		p->width = (int)strtol(at + 2, &end, 10);
		at = end - 1;
		if (p->width < 1 || p->width > 20)
			cli_usage_error("invalid -o '%s': the width of %%0Wd is 1 to 20", text);
	}
	if (at[1] != 'd')
		cli_usage_error("invalid -o '%s': the partition is %%d or %%0Wd (such as %%03d)", text);
	p->suffix = at + 2;
}

/* Text with each "%%" made '%', appended to out. */
static void put_literal(char *out, size_t *len, const char *text, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[(*len)++] = text[i];
		if (text[i] == '%' && i + 1 < n && text[i + 1] == '%')
			i++;
	}
}

/* Partition i's file name, in memory the caller frees. */
static char *output_name(const struct pattern *p, uint64_t i)
{
	size_t len = 0, suffix_len = strlen(p->suffix);
	char *name = malloc(p->prefix_len + 32 + suffix_len);

	if (name != NULL) {
		put_literal(name, &len, p->text, p->prefix_len);
		len += (size_t)sprintf(name + len, "%0*llu", p->width, (unsigned long long)i);
		put_literal(name, &len, p->suffix, suffix_len);
		name[len] = '\0';
	}
	if (name == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	return name;
}

static void parse_option(struct options *opt, int c, const char *arg)
{
	if (c != CLI_OPT_SHARD && cli_key_option(c, arg, &opt->keys))
		return;
	switch (c) {
	case 'N': opt->partitions = cli_count("partitions", arg, 1, PARTITIONS_MAX); break;
	case 'o': parse_pattern(&opt->pattern, arg); break;
	case OPT_NO_SYNC: opt->no_sync = 1; break;
	case CLI_OPT_SHARD: cli_usage_error("--shard picks one partition; bfsplit writes them all (-N)");
	case 'h': cli_help(usage);
	case 'V': cli_version();
	default:
		if (!cli_common_option(c, arg))
			cli_usage_error("unknown option");
	}
}

struct split;
static void write_header(void *ctx, struct line header);

static void parse_options(struct options *opt, int argc, char **argv)
{
	int c;

	memset(opt, 0, sizeof *opt);
	cli_key_options_init(&opt->keys);
	parse_pattern(&opt->pattern, DEFAULT_PATTERN);
	while ((c = cli_getopt(argc, argv, ":" CLI_KEY_LETTERS "iN:o:j:hV", long_options)) != -1)
		parse_option(opt, c, optarg);
	opt->inputs = argv + optind;
	opt->ninputs = argc - optind;
	if (opt->partitions == 0)
		cli_usage_error("-N is needed: how many partitions to split into");
	if (cli_key_file)
		cli_usage_error("--key-file: bfsplit builds no filter; its key is --shard-key");
	cli_shard_splits();
	cli_key_options_finish(&opt->keys, write_header);
}

/* The N outputs, and per slot the partition of each key of its batch. */
struct split {
	const struct options *opt;
	struct partition partition;
	struct atomic_file *files;
	struct writer *out;
	char **names;
	struct cli_keys keys[CLI_SLOTS];
	int deferred[CLI_SLOTS];	/* keys cut in work: their partitions by record */
	uint32_t *of_key[CLI_SLOTS];	/* partition of each key (or record slot) */
	size_t of_key_cap[CLI_SLOTS];
	uint32_t *of_record;		/* consume's: each record's partition */
	size_t of_record_cap;
	int *sync_error;		/* per output, fsync's errno in sync_in_parallel */
};

static struct split *running;	/* for the exit handler */

/* Every output not renamed into place is removed: no partial output on any exit. */
static void abandon_outputs(void)
{
	for (uint64_t i = 0; running != NULL && i < running->opt->partitions; i++)
		atomic_abort(&running->files[i]);
}

static void open_outputs(struct split *s)
{
	uint64_t n = s->opt->partitions;
	/* 64 KiB buffers up to 256 outputs; beyond, 8 KiB (65536 of them: 512 MiB) */
	size_t cap = n <= 256 ? (size_t)64 << 10 : (size_t)8 << 10;
	const char *why;

	s->files = calloc(n, sizeof *s->files);
	s->out = calloc(n, sizeof *s->out);
	s->names = calloc(n, sizeof *s->names);
	s->sync_error = calloc(n, sizeof *s->sync_error);
	if (s->files == NULL || s->out == NULL || s->names == NULL || s->sync_error == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	running = s;
	atexit(abandon_outputs);
	for (uint64_t i = 0; i < n; i++) {
		s->files[i].temp = NULL;
		s->names[i] = output_name(&s->opt->pattern, i);
		if (atomic_open(&s->files[i], s->names[i], &why) < 0)
			cli_fatal("%s: %s", s->names[i], why);
		if (writer_init(&s->out[i], s->files[i].fd, cap) < 0)
			cli_fatal("%s", strerror(ENOMEM));
	}
}

#define SYNC_THREADS 16

struct syncing {
	struct split *s;
	uint64_t first;		/* this thread's outputs: first, first + SYNC_THREADS, ... */
};

/*
 * A thread's share of the outputs flushed to disk, each failure kept for
 * commit_outputs: Linux reports a writeback error to a descriptor once,
 * so atomic_commit's own fsync after this one would return 0 and the
 * lost data would be renamed into place.
 */
static void *sync_outputs(void *arg)
{
	const struct syncing *job = arg;
	struct split *s = job->s;

	for (uint64_t i = job->first; i < s->opt->partitions; i += SYNC_THREADS)
		if (fsync(s->files[i].fd) < 0 && errno != EINVAL)	/* EINVAL: a FIFO, a tty */
			s->sync_error[i] = errno;
	return NULL;
}

/*
 * Every output's fsync at once, on threads of their own: atomic_commit
 * syncs each before its rename, and one after another they waited for
 * the disk 16 times in a row (0.6 GB in 16 files took longer to sync
 * than to split). Best effort: a thread that cannot start leaves its
 * share to atomic_commit.
 */
static void sync_in_parallel(struct split *s)
{
	pthread_t threads[SYNC_THREADS];
	struct syncing jobs[SYNC_THREADS];
	int started[SYNC_THREADS] = { 0 };

	for (uint64_t t = 0; t < SYNC_THREADS && t < s->opt->partitions; t++) {
		jobs[t] = (struct syncing){ s, t };
		started[t] = pthread_create(&threads[t], NULL, sync_outputs, &jobs[t]) == 0;
	}
	for (unsigned t = 0; t < SYNC_THREADS; t++)
		if (started[t])
			pthread_join(threads[t], NULL);
}

/*
 * All outputs flushed and renamed into place; the first failure is fatal
 * (the rest removed). --no-sync: not made durable, which is what the
 * writing cost beyond the split itself (a map task's 16 pieces spent more
 * wall time in fsync than in splitting), for pieces whose run, after a
 * crash, starts again from its input.
 */
static void commit_outputs(struct split *s)
{
	const char *why;

	for (uint64_t i = 0; i < s->opt->partitions; i++)
		if (writer_finish(&s->out[i]) < 0)
			cli_fatal("%s: write error: %s", s->names[i], strerror(errno));
	if (!s->opt->no_sync)
		sync_in_parallel(s);
	for (uint64_t i = 0; i < s->opt->partitions; i++)
		if (s->sync_error[i] != 0)
			cli_fatal("%s: %s", s->names[i], strerror(s->sync_error[i]));
	for (uint64_t i = 0; i < s->opt->partitions; i++)
		if ((s->opt->no_sync ? atomic_commit_unsynced : atomic_commit)(&s->files[i], &why) < 0)
			cli_fatal("%s: %s", s->names[i], why);
}

/* --header: the first input's header at the top of every output. */
static void write_header(void *ctx, struct line header)
{
	struct split *s = ctx;

	for (uint64_t i = 0; i < s->opt->partitions; i++)
		if (writer_record(&s->out[i], header, s->opt->keys.delim) < 0)
			cli_fatal("%s: write error: %s", s->names[i], strerror(errno));
}

/* *array of at least n entries; fatal when out of memory. */
static uint32_t *room(uint32_t **array, size_t *cap, size_t n)
{
	if (n > *cap) {
		uint32_t *p = n > SIZE_MAX / sizeof *p ? NULL : realloc(*array, n * sizeof *p);

		if (p == NULL)
			cli_fatal("%s", strerror(ENOMEM));
		*array = p;
		*cap = n;
	}
	return *array;
}

/* Reader thread: the batch's keys, or room for them when costly ones are cut in work. */
static int prepare_keys(void *ctx, unsigned slot, const struct line *records, size_t n,
			size_t *units)
{
	struct split *s = ctx;
	struct cli_keys *k = &s->keys[slot];

	k->cut_in_work = 1;
	if (cli_keys_prepare(k, &s->opt->keys.spec, NULL, records, n) < 0)
		return -1;
	s->deferred[slot] = k->set.deferred;
	room(&s->of_key[slot], &s->of_key_cap[slot], k->set.count);
	*units = k->set.count;
	return 0;
}

/* Either thread: cut keys [from, to) where left to work, and take their partitions. */
static void partition_keys(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct split *s = ctx;
	struct cli_keys *k = &s->keys[slot];
	uint32_t *of_key = s->of_key[slot];

	cli_keys_hash(k, NULL, from, to);
	for (size_t i = from; i < to; i++)
		of_key[i] = (uint32_t)partition_of(&s->partition, k->set.keys[i].data,
						   k->set.keys[i].len);
}

/* Calling thread, in input order: the batch cut at its first line not JSON (--bad-line=error). */
static size_t cut_batch(void *ctx, unsigned slot, const struct line *records, size_t n,
			char *why, size_t why_len)
{
	struct split *s = ctx;

	(void)records;
	return cli_keys_cut(&s->keys[slot], n, why, why_len);
}

/* Calling thread, in input order: each record to its partition's file; a keyless one to 0. */
static int split_batch(void *ctx, unsigned slot, const struct line *records, size_t n)
{
	struct split *s = ctx;
	const struct keyset *ks = &s->keys[slot].set;
	const uint32_t *of_key = s->of_key[slot];
	uint32_t *to = room(&s->of_record, &s->of_record_cap, n);

	cli_keys_settle(&s->keys[slot]);
	memset(to, 0, n * sizeof *to);
	/* a deferred batch's partitions were taken by slot, which is the record */
	for (size_t j = 0; j < ks->count; j++)
		to[ks->record[j]] = of_key[s->deferred[slot] ? ks->record[j] : j];
	for (size_t r = 0; r < n; r++)
		if (writer_record(&s->out[to[r]], records[r], s->opt->keys.delim) < 0)
			cli_fatal("%s: write error: %s", s->names[to[r]], strerror(errno));
	return 0;
}

static void release(struct split *s, struct options *opt)
{
	for (uint64_t i = 0; i < opt->partitions; i++)
		free(s->names[i]);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		cli_keys_free(&s->keys[i]);
		free(s->of_key[i]);
	}
	running = NULL;
	free(s->of_record);
	free(s->sync_error);
	free(s->names);
	free(s->out);
	free(s->files);
	cli_fields_release(&opt->keys.spec);
}

int main(int argc, char **argv)
{
	static const struct cli_stage stage = {
		.prepare = prepare_keys, .work = partition_keys, .consume = split_batch,
		.cut = cut_batch,
	};
	/* static: the exit handler reads them after main has returned */
	static struct options opt;
	static struct split s;
	int status;

	cli_init(argv[0]);
	parse_options(&opt, argc, argv);
	s.opt = &opt;
	cli_shard_partition(&s.partition, opt.partitions);
	open_outputs(&s);
	cli_stop_on_signals();	/* so that a signal ends the run through exit, which removes them */
	status = cli_each_batch_ranged(opt.inputs, opt.ninputs, opt.keys.delim, &stage, &s);
	if (cli_stop_signal())
		return 128 + cli_stop_signal();	/* outputs removed on the way out */
	/* an input missing or cut short (said already): no output, as none may be partial */
	if (status < 0)
		return EXIT_TROUBLE;
	commit_outputs(&s);
	release(&s, &opt);
	return 0;
}
