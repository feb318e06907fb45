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
 *
 * A field list (fieldlist.h: -k 1,3, -k 2-4, -k 3-, field names with a
 * header) makes the key the selected fields in the order they stand in the
 * record, each once, joined by one byte: the separator, or one space when
 * fields are split at blanks. A record has a key only when it has every
 * field the list names (for an open range N-, field N).
 *
 * JSON keys (json set: --json, NDJSON): json.h's paths; the key is the
 * value's key text (json.h), several values joined by one byte (the
 * separator, or a tab when fields would be split at blanks). A record
 * without a path's value, or of whitespace only, has no key; a record
 * that is not JSON has none either and is noted in the keyset as bad.
 *
 * With shard set (--shard with -w), a word of another partition than
 * shard_index (partition.h) is no key. Only words mode reads it: otherwise
 * a record has one key and the CLI drops the records of other partitions
 * before their keys are built.
 *
 * CSV keys (csv set; records from a CSV reader, lines.h): fields are
 * separated by the separator byte outside quotes, and a field's key is its
 * value: a quoted field without its quotes and with each doubled quote
 * made one (bytes after the closing quote are kept, as Python's csv
 * does). A carriage return ending the record (CRLF files) is not data. A
 * CSV key with no field given is the record's values joined as a list
 * joins them, so "a",b and a,b key alike.
 */
#ifndef BFTOOLS_KEYS_H
#define BFTOOLS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "fieldlist.h"
#include "json.h"
#include "line.h"
#include "partition.h"

#ifdef __cplusplus
extern "C" {
#endif

struct key_spec {
	unsigned long field;	/* 1-based field number; 0 = the whole record */
	struct fieldlist *fields;	/* a field list, or NULL; when set, field is 0 */
	int separator;		/* byte value, or -1 for runs of blanks */
	int csv;		/* records are CSV (separator is then a byte) */
	const struct json_paths *json;	/* records are JSON: key on these paths */
	int words;		/* each word of the key is a key */
	int fold_case;		/* ASCII case folding */
	/* words mode: only the words of partition shard_index are keys (NULL: all) */
	const struct partition *shard;
	uint64_t shard_index;
};

/*
 * The key of one record, for a spec without a field list. Returns 1, or 0
 * when the record has no such field.
 */
int keys_field(const struct key_spec *spec, struct line record, struct line *key);

/*
 * Split record into fields as keys are split (for headers): fields[i] is
 * field i + 1, up to max of them. CSV values are written to copy (room
 * for record.len bytes; unused otherwise). Returns how many fields it has.
 */
size_t keys_split(const struct key_spec *spec, struct line record, struct line *fields,
		  size_t max, char *copy);

/* A batch of keys drawn from a batch of records. */
struct keyset {
	struct line *keys;
	size_t *record;		/* index of the record each key came from */
	size_t count, cap;
	char *folded;		/* storage for case-folded copies */
	size_t folded_cap;
	size_t *bad;		/* JSON: the records that are not JSON */
	size_t nbad, bad_cap;
	const char *bad_why;	/* what is wrong with the first of them */
	/* keyset_defer's batch, until keyset_compact */
	const struct key_spec *spec;
	const struct line *records;
	int deferred;
};

/*
 * Replace ks's contents with the keys of records[0..n). Records without the
 * field give no key (nor do bad JSON records, listed in ks->bad); in
 * words mode a record gives one key per word. Keys
 * point into the records, or into ks->folded when folding. Returns 0, or -1
 * when out of memory.
 */
int keyset_build(struct keyset *ks, const struct key_spec *spec,
		 const struct line *records, size_t n);
void keyset_free(struct keyset *ks);

/*
 * Keys built in pieces, on several threads, for specs whose keys cost
 * more to cut than to copy (JSON, CSV, field lists, folding): the ordered
 * reader only sizes the batch, workers cut disjoint ranges of records,
 * and the ordered consumer compacts. The result is keyset_build's, key
 * for key, bad record for bad record.
 *
 * keyset_deferrable: 1 when spec suits this (never in words mode, where
 * a record gives any number of keys, nor for whole records as they are,
 * which cost nothing to cut).
 *
 * keyset_defer: room for records[0..n) and one slot per record: ks->count
 * is n, slot i being record i's. records and spec must stay valid until
 * keyset_compact. 0, or -1 when out of memory.
 *
 * keyset_cut: any thread, slots [from, to) (disjoint ranges may be cut at
 * once): ks->keys[i] becomes record i's key, or an empty key when it has
 * none (the slot is dropped later; hashing it is harmless).
 *
 * keyset_compact: after every slot is cut: the keys of the records that
 * have one, moved down in record order, with ks->record[j] the slot key j
 * came from (so arrays kept beside the slots, such as hashes, compact by
 * it), and the bad records listed as keyset_build lists them. Does nothing
 * to a keyset not deferred, or compacted already.
 */
int keyset_deferrable(const struct key_spec *spec);
int keyset_defer(struct keyset *ks, const struct key_spec *spec, const struct line *records,
		 size_t n);
void keyset_cut(struct keyset *ks, size_t from, size_t to);
void keyset_compact(struct keyset *ks);

/*
 * Keep only what records[0..n) gave: their keys (a prefix, records being
 * in order) and their bad records. For a batch cut short at its record n
 * (the first bad one). ks must not be deferred (keyset_compact first).
 */
void keyset_truncate(struct keyset *ks, size_t n);

#ifdef __cplusplus
}
#endif

#endif
