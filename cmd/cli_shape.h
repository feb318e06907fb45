/* SPDX-License-Identifier: MIT */
/*
 * cli_shape.h - the filter-shape group of options, for the programs that
 * make filters (bfbuild, bfuniq): one table and one parser, so that -n,
 * -p, --layout and --key are read alike wherever they are taken.
 *
 *   -n N  -p P  --layout L  --key HEX      CLI_SHAPE_OPTIONS, CLI_SHAPE_LETTERS
 *   -m BITS  -K HASHES  --hash H  --like F CLI_SHAPE_EXACT_OPTIONS, CLI_SHAPE_EXACT_LETTERS
 *
 * Not here: what a program does with the shape (sizing, a state's shape
 * agreeing with the options: bfbuild.c, bfuniq.c); the values' parsing
 * (cli_count, cli_rate, cli_hex_key, cli_hash in cli.h).
 */
#ifndef BFTOOLS_CLI_SHAPE_H
#define BFTOOLS_CLI_SHAPE_H

#include <getopt.h>
#include <stdint.h>

#include "filter.h"

enum { CLI_OPT_LAYOUT = 1400, CLI_OPT_KEY, CLI_OPT_HASH, CLI_OPT_LIKE };
#define CLI_SHAPE_LETTERS "n:p:"
#define CLI_SHAPE_OPTIONS                                                    \
	{ "capacity", required_argument, NULL, 'n' },                       \
	{ "rate", required_argument, NULL, 'p' },                           \
	{ "layout", required_argument, NULL, CLI_OPT_LAYOUT },              \
	{ "key", required_argument, NULL, CLI_OPT_KEY }
#define CLI_SHAPE_EXACT_LETTERS "m:K:"
#define CLI_SHAPE_EXACT_OPTIONS                                              \
	{ "bits", required_argument, NULL, 'm' },                           \
	{ "hashes", required_argument, NULL, 'K' },                         \
	{ "hash", required_argument, NULL, CLI_OPT_HASH },                  \
	{ "like", required_argument, NULL, CLI_OPT_LIKE }

/* --help: the program's own -n and -p lines (their defaults differ), then these. */
#define CLI_SHAPE_KEY_HELP                                                   \
	"      --key=HEX         128-bit SipHash key, 32 hex digits (default: random)\n"
#define CLI_SHAPE_EXACT_HELP                                                 \
	"  -m, --bits=BITS       filter size in bits (rounded up to a multiple of 512)\n" \
	"  -K, --hashes=HASHES   number of hash probes per key (1..64)\n"   \
	"      --hash=HASH       siphash13 (default) or siphash24\n"        \
	"      --like=FILTER     start empty, with FILTER's shape, key and hash\n"

/* The shape as the options give it; the program sets the defaults first. */
struct cli_shape {
	uint64_t capacity;		/* -n */
	double rate;			/* -p */
	struct filter_params params;	/* --layout, --hash, --key */
	uint64_t bits;			/* -m, 0: from sizing */
	uint32_t hashes;		/* -K, 0: from sizing */
	const char *like;		/* --like */
	int capacity_given, rate_given, layout_given, key_given;
	int counting;			/* --layout counting is taken (bfbuild) */
	const char *first;		/* the first option given that shapes bits, for conflicts */
};

/* Handle an option of the shape group into s; 1 when c was one. */
int cli_shape_option(int c, const char *arg, struct cli_shape *s);

#endif
