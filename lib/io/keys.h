/* SPDX-License-Identifier: MIT */
/*
 * keys.h - from input records to the keys that are hashed.
 *
 * A key is the whole record, or its Nth field (-k N) split at runs of blanks
 * (space, tab; leading blanks skipped, as awk and sort do) or at every
 * occurrence of one separator byte (-t C). With words mode (-w) each word of
 * the key is a key of its own, words being split at blanks and at the
 * punctuation that wraps addresses in logs: < > ( ) [ ] { } , ; : " ' =
 * Case folding (-i, recorded in filters) maps ASCII A-Z to a-z only.
 */
#ifndef BFTOOLS_KEYS_H
#define BFTOOLS_KEYS_H

#include <stddef.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

struct key_spec {
	unsigned long field;	/* 1-based field number; 0 = the whole record */
	int separator;		/* byte value, or -1 for runs of blanks */
	int words;		/* each word of the key is a key */
	int fold_case;		/* ASCII case folding */
};

/* The key of one record. Returns 1, or 0 when the record has no such field. */
int keys_field(const struct key_spec *spec, struct line record, struct line *key);

/* A batch of keys drawn from a batch of records. */
struct keyset {
	struct line *keys;
	size_t *record;		/* index of the record each key came from */
	size_t count, cap;
	char *folded;		/* storage for case-folded copies */
	size_t folded_cap;
};

/*
 * Replace ks's contents with the keys of records[0..n). Records without the
 * field give no key; in words mode a record gives one key per word. Keys
 * point into the records, or into ks->folded when folding. Returns 0, or -1
 * when out of memory.
 */
int keyset_build(struct keyset *ks, const struct key_spec *spec,
		 const struct line *records, size_t n);
void keyset_free(struct keyset *ks);

#ifdef __cplusplus
}
#endif

#endif
