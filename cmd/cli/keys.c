/* SPDX-License-Identifier: MIT */
/*
 * keys.c - the keys of a batch, cut from its records and hashed on the
 * pipeline's workers. Cheap keys are cut on the reader thread; costly ones
 * (JSON, CSV, field lists, folding), for programs that allow it, in the
 * work step beside the hashing, since one reader cutting them all was the
 * ceiling of --json's speed.
 */
#include "internal.h"
#include "../cli_fields.h"

#include "owners.h"

#include <stdint.h>
#include <stdlib.h>

/*
 * A list of field names is resolved again at each input's header, on the
 * reader thread (cli_header_take), while the input before may still have
 * batches being cut: its keys are cut on the reader, before that.
 */
static int cut_in_work(const struct cli_keys *k, const struct key_spec *spec)
{
	return k->cut_in_work && keyset_deferrable(spec) && !(spec->fields && spec->fields->named);
}

int cli_keys_prepare(struct cli_keys *k, const struct key_spec *spec,
		     const struct filter *hasher, const struct line *records, size_t n)
{
	size_t count;
	int rc = cut_in_work(k, spec) ? keyset_defer(&k->set, spec, records, n)
				      : keyset_build(&k->set, spec, records, n);

	if (rc < 0)
		return -1;
	count = k->set.count;
	if (hasher == NULL || count <= k->hashes_cap)
		return 0;
	free(k->hashes);
	k->hashes_cap = 0;
	if (count > SIZE_MAX / (2 * sizeof *k->hashes))
		return -1;
	k->hashes = malloc(2 * count * sizeof *k->hashes);
	if (k->hashes == NULL)
		return -1;
	k->hashes_cap = count;
	return 0;
}

void cli_keys_hash(struct cli_keys *k, const struct filter *hasher, size_t from, size_t to)
{
	if (k->set.deferred)
		keyset_cut(&k->set, from, to);
	if (hasher == NULL)
		return;
	filter_hash(hasher, k->set.keys + from, to - from, k->hashes + 2 * from);
	if (!k->ready_later)
		filter_ready_hashed(hasher, k->hashes + 2 * from, to - from);
}

void cli_keys_settle(struct cli_keys *k)
{
	int hashed = k->set.deferred && k->hashes != NULL;

	keyset_compact(&k->set);
	/* record[j] >= j: moving down in order never overwrites a pair still to move */
	for (size_t j = 0; hashed && j < k->set.count; j++) {
		size_t from = k->set.record[j];

		k->hashes[2 * j] = k->hashes[2 * from];
		k->hashes[2 * j + 1] = k->hashes[2 * from + 1];
	}
}

size_t cli_keys_cut(struct cli_keys *k, size_t n, char *why, size_t why_len)
{
	cli_keys_settle(k);
	return cli_bad_lines_cut(&k->set, n, why, why_len);
}

int cli_keys_split(struct cli_keys *k, struct owners *o, unsigned slot, struct cascade *c,
		   unsigned char **present, size_t *cap)
{
	cli_keys_settle(k);
	return owners_split(o, slot, c, k->hashes, k->set.count,
			    cli_flags(present, cap, k->set.count));
}

void cli_keys_free(struct cli_keys *k)
{
	keyset_free(&k->set);
	free(k->hashes);
	k->hashes = NULL;
	k->hashes_cap = 0;
}
