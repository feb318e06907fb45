/* SPDX-License-Identifier: MIT */
/*
 * keys.c - the keys of a batch, cut from its records and hashed on the
 * pipeline's workers.
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

int cli_keys_prepare(struct cli_keys *k, const struct key_spec *spec,
		     const struct filter *hasher, const struct line *records, size_t n)
{
	size_t count;

	if (keyset_build(&k->set, spec, records, n) < 0)
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
	if (hasher == NULL)
		return;
	filter_hash(hasher, k->set.keys + from, to - from, k->hashes + 2 * from);
	filter_ready_hashed(hasher, k->hashes + 2 * from, to - from);
}

void cli_keys_free(struct cli_keys *k)
{
	keyset_free(&k->set);
	free(k->hashes);
	k->hashes = NULL;
	k->hashes_cap = 0;
}
