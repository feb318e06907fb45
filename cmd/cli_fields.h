/* SPDX-License-Identifier: MIT */
/*
 * cli_fields.h - the key group of options (-k, -t, -z, -i, -w, --header,
 * --csv, --jsonl, --bad-line, --no-decompress), field lists (-k 1,3, -k url)
 * and --header, for the programs that take key options.
 *
 * With --header the first record of each input is its header: never a
 * key, never counted as a line without one. cli.c's input loop takes it
 * out of the input's first batch on the reader thread (cli_header_take),
 * where field names in -k are resolved against it before that batch's
 * keys are built, and hands it to the program on the calling thread, in
 * input order, before the input's first lines (cli_header_pass). Inputs
 * with a header are never read in ranges: only the reader at the start of
 * a file knows which record is its first. Nor are CSV inputs: a range
 * cannot know whether it begins inside a quoted field, and reading them
 * in order is the simplest answer that is always right.
 *
 * Not here: parsing the list (lib/fieldlist.c) or cutting keys out of
 * records (lib/keys.c); reading inputs (cli.c, which calls in here).
 */
#ifndef BFTOOLS_CLI_FIELDS_H
#define BFTOOLS_CLI_FIELDS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "line.h"
#include "lines.h"
#include "partition.h"

/*
 * The key group: the options that say what a line's key is and how the
 * inputs are read, one table and one parser for every program that reads
 * keys (bfbuild, bfgrep, bfuniq, bfcount, bftop), so that no program lacks
 * one or reads it differently, and a line's key is the same in each.
 *
 *   -k LIST  -t C  -z  --header  --csv  --jsonl  --bad-line  --no-decompress
 *   --shard  --shard-key
 *   and, where the program takes them, -i (CLI_KEY_CASE_OPTION) and -w
 *   (CLI_KEY_WORDS_OPTION).
 *
 * A program puts CLI_KEY_OPTIONS (and the two where they apply) in its
 * option table, CLI_KEY_LETTERS (and "i", "w") in its optstring, holds a
 * struct cli_keys_given, passes every option to cli_key_option first, and
 * calls cli_key_options_finish after the options. --help: CLI_KEY_HELP,
 * CLI_KEY_CASE_HELP and CLI_KEY_WORDS_HELP where they apply, and
 * CLI_FORMAT_HELP. A new key option is one entry here, one case in
 * cli_key_option and its help line.
 */
enum {
	CLI_OPT_HEADER = 1100, CLI_OPT_CSV, CLI_OPT_JSONL, CLI_OPT_BAD_LINE,
	CLI_OPT_JSON_INPUT,	/* --json where it is no report: renamed --jsonl */
	CLI_OPT_SHARD, CLI_OPT_SHARD_KEY,
};
#define CLI_KEY_LETTERS "k:t:z"
#define CLI_KEY_OPTIONS                                                      \
	{ "field", required_argument, NULL, 'k' },                          \
	{ "separator", required_argument, NULL, 't' },                      \
	{ "null-data", no_argument, NULL, 'z' },                            \
	{ "header", no_argument, NULL, CLI_OPT_HEADER },                    \
	{ "csv", no_argument, NULL, CLI_OPT_CSV },                          \
	{ "jsonl", no_argument, NULL, CLI_OPT_JSONL },                      \
	{ "bad-line", required_argument, NULL, CLI_OPT_BAD_LINE },          \
	{ "no-decompress", no_argument, NULL, CLI_OPT_NO_DECOMPRESS },      \
	CLI_SHARD_OPTIONS
/* --shard and --shard-key; bfsplit takes --shard-key alone. */
#define CLI_SHARD_OPTIONS                                                    \
	{ "shard", required_argument, NULL, CLI_OPT_SHARD },                \
	{ "shard-key", required_argument, NULL, CLI_OPT_SHARD_KEY }
#define CLI_KEY_CASE_OPTION { "ignore-case", no_argument, NULL, 'i' }
#define CLI_KEY_WORDS_OPTION { "words", no_argument, NULL, 'w' }
/*
 * For a program that prints no report (bfgrep): --json is not its option,
 * but the old spelling of --jsonl is met with a message that names the new
 * one, not "unrecognized option".
 */
#define CLI_KEY_JSON_RENAMED_OPTION { "json", no_argument, NULL, CLI_OPT_JSON_INPUT }

#define CLI_KEY_HELP                                                         \
	"  -k, --field=LIST      key on fields LIST (N, N,M, N-M, N-; N digits only) of each line;\n" \
	"                        a list keys its fields joined by one separator\n" \
	"  -t, --separator=C     fields are separated by C (default: runs of blanks)\n" \
	"  -z, --null-data       records end with NUL, not newline\n"
#define CLI_KEY_CASE_HELP                                                    \
	"  -i, --ignore-case     fold ASCII case of keys\n"
#define CLI_KEY_WORDS_HELP                                                   \
	"  -w, --words           each word of a key is a key\n"
#define CLI_FORMAT_HELP                                                      \
	"      --header          the first line of each input is a header: not\n" \
	"                        a key; -k may name its fields (-k host,path)\n" \
	"      --csv             the input is CSV (RFC 4180; -t defaults to ','):\n" \
	"                        quoted fields may hold separators and newlines,\n" \
	"                        keys are the unquoted values\n"              \
	"      --jsonl           each line is JSON (JSON Lines): -k takes paths as\n" \
	"                        jq does (.user.id, .tags[0], .[\"odd key\"], .a,.b)\n" \
	"      --bad-line=error|skip  a line that is not JSON: stop with an error\n" \
	"                        (the default), or pass it on without a key\n" \
	CLI_DECOMPRESS_HELP                                                  \
	CLI_SHARD_HELP
#define CLI_SHARD_HELP                                                       \
	CLI_SHARD_KEY_HELP                                                   \
	"      --shard=I/N       only lines whose key is in partition I of N\n" \
	"                        (0 to N-1; bf(5)); the others are skipped\n"
/* --shard-key alone, for bfsplit, which partitions every line. */
#define CLI_SHARD_KEY_HELP                                                   \
	"      --shard-key=HEX   the partitioning key, 32 hex digits: the same\n" \
	"                        on every machine\n"

/* The key group's options as given: what a line's key is, and its records' end. */
struct cli_keys_given {
	struct key_spec spec;
	char delim;		/* '\n', or '\0' with -z */
	int header;		/* --header */
	int given;		/* some option of the group was given */
};

/* Defaults: the whole line is the key, fields split at runs of blanks. */
void cli_key_options_init(struct cli_keys_given *kg);
/* Handle option c of the key group; 1 when it was one, 0 otherwise. */
int cli_key_option(int c, const char *arg, struct cli_keys_given *kg);
/*
 * After the options: cli_fields_check, then with --header
 * cli_header_inputs(spec, pass) (pass NULL: the program writes no header).
 */
void cli_key_options_finish(struct cli_keys_given *kg, void (*pass)(void *ctx, struct line header));

/*
 * After the options: field names in -k need --header (header nonzero);
 * --csv takes ',' as the separator unless -t gave one, and makes every
 * input be read as CSV records (lines_csv); --jsonl reads -k as paths.
 * --json (the report) with what only JSON Lines input takes (a path in -k,
 * --bad-line) is the old spelling of --jsonl: refused, naming it.
 */
void cli_fields_check(struct key_spec *spec, int header);

/*
 * Calling thread, before a batch's split or consume (cli_stage.cut): with
 * --bad-line=error (the default) and a record of ks that is not JSON,
 * ks keeps what the records before the first gave (keyset_truncate), why
 * says what is wrong, and that record's index is returned; else n.
 * ks must be compacted.
 */
size_t cli_bad_lines_cut(struct keyset *ks, size_t n, char *why, size_t why_len);
/*
 * Calling thread, during consume: the records of ks that are not JSON,
 * with --bad-line=skip counted and their number returned (ks->bad lists
 * them). With error there are none left (cli_bad_lines_cut).
 */
uint64_t cli_bad_lines(const struct keyset *ks);
/* Whether a line that is not JSON cuts the input (--jsonl, --bad-line=error). */
int cli_bad_lines_cut_on(void);
/* For -v: how many lines were not JSON, if any. */
void cli_bad_lines_report(void);

/*
 * --shard I/N and --shard-key (shard.c): cli_fields_check refuses one
 * without the other and, with both, has every batch's records of other
 * partitions taken out before the program's prepare (cli_shard_batch,
 * called by the input loops). cli_shard_splits: the program (bfsplit)
 * partitions every line itself: --shard-key is needed, --shard is not
 * its own. cli_shard_partition: the partition of count under the key.
 * cli_shard_fold_case: partition keys case-folded (bfgrep, whose filters
 * fold), whatever the spec says.
 */
void cli_shard_option(int c, const char *arg);
void cli_shard_splits(void);
void cli_shard_check(struct key_spec *spec);
int cli_shard_on(void);
void cli_shard_fold_case(void);
void cli_shard_partition(struct partition *p, uint64_t count);
/* Reader threads: b's records of other partitions taken out. 0, or -1 with errno (ENOMEM). */
int cli_shard_batch(struct lines_batch *b);

/* At the end: free what cli_field_option and cli_fields_check gave spec. */
void cli_fields_release(struct key_spec *spec);

/* The CSV separator when inputs are CSV, else -1. */
int cli_csv_separator(void);
/* Whether inputs must be read in order, never in ranges (--header, --csv). */
int cli_fields_in_order(void);
/*
 * Whether inputs must be read by one stream from their start, never cut
 * in ranges even when consumed in order (--header: the first line is the
 * header; --csv: a range cannot know whether it begins inside quotes).
 * --jsonl inputs may be: their bad lines are numbered in consume order.
 */
int cli_fields_one_stream(void);

/*
 * From now on every input starts with a header. Names in spec's field
 * list are resolved against each input's own header. pass, when not NULL,
 * is given each header (with the program's context), on the calling
 * thread, before the input's lines.
 */
void cli_header_inputs(struct key_spec *spec, void (*pass)(void *ctx, struct line header));
/* Whether cli_header_inputs was called. */
int cli_header_on(void);

/*
 * Reader thread, an input's first batch (b->n > 0): take the header out
 * of b into *header (its bytes stay in b) and resolve the -k names. 0, or
 * -1 with a message in why (an input whose header lacks a named field).
 */
int cli_header_take(struct lines_batch *b, struct line *header, char *why, size_t why_len);
/* Calling thread: hand a header taken to the program. */
void cli_header_pass(void *ctx, struct line header);

#endif
