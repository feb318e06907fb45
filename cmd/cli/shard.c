/* SPDX-License-Identifier: MIT */
/*
 * shard.c - --shard I/N and --shard-key HEX: a program considers only the
 * records whose key falls in partition I of N (lib/hash/partition.h), for
 * a cluster where every worker reads the whole stream and holds 1/N of
 * the seen-set. bfsplit takes --shard-key alone and reads the partition
 * here too, so both forms put a key in the same place.
 *
 * The records of other partitions are taken out of each batch before the
 * program's prepare sees it (cli_shard_batch), on whichever thread read
 * the batch, so they are neither tested, counted nor written, whatever
 * the program and its -j. Their keys are cut by the program's own spec:
 * the partition of a line is the one its key, as the program would hash
 * it, has. With -w a record stays when one of its words is in the
 * partition, and lib/io/keys.c drops the words of other partitions.
 *
 * The partitioning key is never drawn at random nor taken from a filter:
 * every machine must agree on it, so --shard without --shard-key is
 * refused, as --shard-key where nothing partitions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "../cli_fields.h"

#include "partition.h"

#define SHARDS_MAX (UINT64_C(1) << 20)

static int shard_given, key_given, splitting;
static uint64_t shard_index, shard_count;
static unsigned char shard_key[16];
static struct partition shard_partition;
static const struct key_spec *shard_spec;	/* NULL: every record is considered */

static int shard_fold;	/* bfgrep: its filters fold case */

/* "I/N", digits only, I < N. */
static void parse_shard(const char *arg)
{
	const char *slash = strchr(arg, '/');
	const char *count = slash != NULL ? slash + 1 : "";
	size_t len = slash != NULL ? (size_t)(slash - arg) : 0;
	char index[32];

	if (len == 0 || len >= sizeof index || strspn(arg, "0123456789") != len ||
	    *count == '\0' || count[strspn(count, "0123456789")] != '\0')
		cli_usage_error("invalid --shard '%s': expected I/N, such as 3/16 (I from 0 to N-1)", arg);
	if (count[strspn(count, "0")] == '\0')
		cli_usage_error("invalid --shard '%s': N, the number of partitions, is at least 1", arg);
	snprintf(index, sizeof index, "%.*s", (int)len, arg);
	shard_count = cli_count("--shard", count, 1, SHARDS_MAX);
	shard_index = cli_count("--shard", index, 0, SHARDS_MAX - 1);
	if (shard_index >= shard_count)
		cli_usage_error("invalid --shard '%s': partitions are numbered 0 to %llu", arg,
				(unsigned long long)(shard_count - 1));
	shard_given = 1;
}

void cli_shard_option(int c, const char *arg)
{
	if (c == CLI_OPT_SHARD) {
		parse_shard(arg);
		return;
	}
	cli_hex_key("--shard-key", arg, shard_key);
	key_given = 1;
}

void cli_shard_splits(void)
{
	splitting = 1;
}

void cli_shard_check(struct key_spec *spec)
{
	if (splitting && !key_given)
		cli_usage_error("--shard-key is needed: every machine must partition with the same key");
	if (splitting || (!shard_given && !key_given))
		return;
	if (!shard_given)
		cli_usage_error("--shard-key partitions for --shard: give --shard I/N too");
	if (!key_given)
		cli_usage_error("--shard needs --shard-key: every machine must partition with the same key");
	partition_init(&shard_partition, shard_key, shard_count);
	spec->shard = spec->words ? &shard_partition : NULL;
	spec->shard_index = shard_index;
	shard_spec = spec;
}

int cli_shard_on(void)
{
	return shard_spec != NULL;
}

void cli_shard_fold_case(void)
{
	shard_fold = 1;
}

void cli_shard_partition(struct partition *p, uint64_t count)
{
	partition_init(p, shard_key, count);
}

/* A batch's keys, walked in step with its records as lines_batch_keep asks about them. */
struct shard_walk {
	const struct keyset *ks;
	size_t j;	/* the first key slot of the record asked about next */
};

/* Whether record r, whose keys are the walk's slots from j on, is in the shard. */
static int in_shard(void *ctx, size_t r)
{
	struct shard_walk *w = ctx;
	const struct keyset *ks = w->ks;
	int keyed = 0, in = 0;

	for (; w->j < ks->count && ks->record[w->j] == r; w->j++) {
		keyed = 1;
		in |= partition_of(&shard_partition, ks->keys[w->j].data, ks->keys[w->j].len) == shard_index;
	}
	return keyed ? in : shard_index == 0;	/* a record without a key is partition 0's */
}

int cli_shard_batch(struct lines_batch *b)
{
	struct keyset ks;
	struct key_spec spec;
	struct shard_walk walk = { &ks, 0 };
	int rc;

	if (shard_spec == NULL)
		return 0;
	memset(&ks, 0, sizeof ks);
	spec = *shard_spec;
	spec.shard = NULL;	/* every word: a record is kept when one is the shard's */
	spec.fold_case |= shard_fold;
	if (keyset_build(&ks, &spec, b->records, b->n) < 0) {
		keyset_free(&ks);
		errno = ENOMEM;
		return -1;
	}
	/* asked in record order, so the walk needs no array of answers; where
	   each kept record was read is kept: line numbers count every line */
	rc = lines_batch_keep(b, in_shard, &walk);
	keyset_free(&ks);
	return rc;
}
