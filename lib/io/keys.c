/* SPDX-License-Identifier: MIT */
/*
 * keys.c - from input records to the keys that are hashed.
 *
 * Fields: with blanks as separator (-1) a field is a maximal run of bytes
 * other than space and tab, so leading, trailing and repeated blanks never
 * make empty fields and a record of blanks has none. With a separator byte
 * every occurrence ends a field, so "a,,b" has three fields, "a," two (the
 * second empty) and the empty record one (empty), as cut(1) and sort -t see
 * them.
 *
 * Memory: a key is a span pointing into its record, so the common case (the
 * whole record, no folding) copies nothing. Folded keys need their own bytes;
 * ks->folded is sized once per keyset_build, before any key is made, to the
 * sum of the record lengths (every key is a part of one record), so it never
 * moves while key pointers into it exist. Arrays grow geometrically and are
 * kept between calls: in steady state a batch allocates nothing.
 *
 * Field lists: the selected fields are copied into ks->folded, joined by
 * one byte. The copy is never longer than its record (the fields are in
 * record order, each once, and every joining byte stands for a separator
 * or run of blanks at least one byte long), so the sizing above holds, and
 * folding then works on the copy in place.
 *
 * CSV keys are copied the same way: unquoting only shrinks a field, and
 * the separators between the fields are in the record too.
 *
 * Deliberately absent: locale-aware case folding or word breaking (bytes
 * >= 0x80 are always word bytes and never folded).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "partition.h"

/* Bytes that end a word in words mode: blanks and the wrappers of addresses. */
static const unsigned char word_break[256] = {
	[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1,
	['<'] = 1, ['>'] = 1, ['('] = 1, [')'] = 1, ['['] = 1, [']'] = 1,
	['{'] = 1, ['}'] = 1, [','] = 1, [';'] = 1, [':'] = 1, ['"'] = 1,
	['\''] = 1, ['='] = 1,
};

#define KEYSET_MIN_CAP 64

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int field_by_blanks(struct line rec, unsigned long field, struct line *key)
{
	const char *p = rec.data;
	const char *end = rec.data + rec.len;

	for (unsigned long i = 1;; i++) {
		const char *start;

		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			return 0;
		start = p;
		while (p < end && !is_blank(*p))
			p++;
		if (i == field) {
			key->data = start;
			key->len = (size_t)(p - start);
			return 1;
		}
	}
}

/* memchr that accepts an empty span with a null pointer. */
static const char *find_byte(const char *p, unsigned char c, size_t len)
{
	return len ? memchr(p, c, len) : NULL;
}

static int field_by_byte(struct line rec, unsigned long field, unsigned char sep,
			 struct line *key)
{
	const char *p = rec.data;
	size_t left = rec.len;
	const char *stop;

	for (unsigned long i = 1; i < field; i++) {
		stop = find_byte(p, sep, left);
		if (!stop)
			return 0;
		left -= (size_t)(stop + 1 - p);
		p = stop + 1;
	}
	stop = find_byte(p, sep, left);
	key->data = p;
	key->len = stop ? (size_t)(stop - p) : left;
	return 1;
}

/* Walks a record's fields left to right, as field_by_blanks/_by_byte count them. */
struct field_walk {
	const char *p, *end;
	int separator;
	int done;
};

static int next_field(struct field_walk *w, struct line *field)
{
	const char *stop;

	if (w->separator >= 0) {
		if (w->done)
			return 0;
		stop = find_byte(w->p, (unsigned char)w->separator, (size_t)(w->end - w->p));
		field->data = w->p;
		field->len = (size_t)((stop ? stop : w->end) - w->p);
		w->done = stop == NULL;
		w->p = stop ? stop + 1 : w->end;
		return 1;
	}
	while (w->p < w->end && is_blank(*w->p))
		w->p++;
	if (w->p == w->end)
		return 0;
	field->data = w->p;
	while (w->p < w->end && !is_blank(*w->p))
		w->p++;
	field->len = (size_t)(w->p - field->data);
	return 1;
}

/*
 * The fields of the list, joined into dst (room for record.len bytes).
 * Returns 1, or 0 when the record lacks a field the list needs.
 */
static int list_key(const struct key_spec *spec, struct line record, char *dst,
		    struct line *key)
{
	const struct fieldlist *f = spec->fields;
	struct field_walk w = { record.data, record.data + record.len, spec->separator, 0 };
	char joiner = spec->separator < 0 ? ' ' : (char)spec->separator;
	struct line field;
	uint64_t i = 0, taken = 0;
	size_t r = 0, len = 0;

	while (r < f->nranges && next_field(&w, &field)) {
		i++;
		if (i < f->ranges[r].first)
			continue;
		if (taken++ > 0)
			dst[len++] = joiner;
		if (field.len > 0)
			memcpy(dst + len, field.data, field.len);
		len += field.len;
		if (i == f->ranges[r].last)
			r++;
	}
	if (i < f->need || f->nranges == 0)
		return 0;
	key->data = dst;
	key->len = len;
	return 1;
}

/* A CSV record's fields, left to right, as values (unquoted). */
struct csv_walk {
	const char *p, *end;
	unsigned char sep;
	int done;
};

static struct csv_walk csv_walk_of(const struct key_spec *spec, struct line record)
{
	struct csv_walk w = { record.data, record.data + record.len,
			      (unsigned char)spec->separator, 0 };

	if (w.end > w.p && w.end[-1] == '\r')
		w.end--;
	return w;
}

/* Appends [from, to) to dst at *len. */
static void append(char *dst, size_t *len, const char *from, const char *to)
{
	if (to > from) {
		memcpy(dst + *len, from, (size_t)(to - from));
		*len += (size_t)(to - from);
	}
}

/* The next field's value written at dst (its length in *len): 1, or 0 past the last. */
static int csv_next(struct csv_walk *w, char *dst, size_t *len)
{
	const char *stop;

	*len = 0;
	if (w->done)
		return 0;
	if (w->p < w->end && *w->p == '"') {
		for (w->p++;;) {
			const char *q = find_byte(w->p, '"', (size_t)(w->end - w->p));

			append(dst, len, w->p, q ? q : w->end);
			w->p = q ? q + 1 : w->end;
			if (q == NULL || w->p == w->end || *w->p != '"')
				break;
			dst[(*len)++] = '"';	/* a doubled quote is one */
			w->p++;
		}
	}
	stop = find_byte(w->p, w->sep, (size_t)(w->end - w->p));
	append(dst, len, w->p, stop ? stop : w->end);
	w->done = stop == NULL;
	w->p = stop ? stop + 1 : w->end;
	return 1;
}

/* Whether field i (from 1) is in spec's key; *last: no later field is. */
static int selected(const struct key_spec *spec, uint64_t i, size_t *r, int *last)
{
	const struct fieldlist *f = spec->fields;

	*last = 0;
	if (f == NULL) {
		*last = spec->field != 0 && i >= spec->field;
		return spec->field == 0 || i == spec->field;
	}
	while (*r < f->nranges && f->ranges[*r].last < i)
		++*r;
	*last = *r == f->nranges || (*r + 1 == f->nranges && f->ranges[*r].last == i);
	return *r < f->nranges && i >= f->ranges[*r].first;
}

/* A CSV record's key into dst (room for record.len bytes): 1, or 0 without it. */
static int csv_key(const struct key_spec *spec, struct line record, char *dst,
		   struct line *key)
{
	struct csv_walk w = csv_walk_of(spec, record);
	uint64_t i = 0, taken = 0;
	uint64_t need = spec->fields ? spec->fields->need : spec->field ? spec->field : 1;
	size_t len = 0, r = 0, n;
	int last = 0;

	if (spec->fields && spec->fields->nranges == 0)
		return 0;
	while (!last && csv_next(&w, dst + len + (taken > 0), &n)) {
		if (!selected(spec, ++i, &r, &last))
			continue;
		if (taken++ > 0)
			dst[len++] = (char)spec->separator;
		len += n;
	}
	if (i < need)
		return 0;
	key->data = dst;
	key->len = len;
	return 1;
}

size_t keys_split(const struct key_spec *spec, struct line record, struct line *fields,
		  size_t max, char *copy)
{
	struct field_walk w = { record.data, record.data + record.len, spec->separator, 0 };
	struct line field;
	size_t n = 0;

	if (spec->csv) {
		struct csv_walk cw = csv_walk_of(spec, record);
		size_t used = 0, len;

		for (; csv_next(&cw, copy + used, &len); n++) {
			if (n < max)
				fields[n] = (struct line){ copy + used, len };
			used += len;
		}
		return n;
	}
	while (next_field(&w, &field)) {
		if (n < max)
			fields[n] = field;
		n++;
	}
	return n;
}

/* keys_field's body, static so the batch loops below can inline it. */
static inline int field_key(const struct key_spec *spec, struct line record,
			    struct line *key)
{
	if (spec->field == 0) {
		*key = record;
		return 1;
	}
	if (spec->separator < 0)
		return field_by_blanks(record, spec->field, key);
	return field_by_byte(record, spec->field, (unsigned char)spec->separator, key);
}

int keys_field(const struct key_spec *spec, struct line record, struct line *key)
{
	return field_key(spec, record, key);
}

/* A JSON record's key into dst: 1, 0 without one, -1 when not JSON (*why). */
static int json_key(const struct key_spec *spec, struct line record, char *dst,
		    struct line *key, const char **why)
{
	const struct json_paths *paths = spec->json;
	struct line values[JSON_PATHS_MAX];
	char joiner = spec->separator < 0 ? '\t' : (char)spec->separator;
	size_t len = 0;
	int rc = json_find(record, paths, values, why);

	if (rc <= 0)
		return rc;
	for (size_t i = 0; i < paths->n; i++) {
		if (values[i].data == NULL)
			return 0;
		if (i > 0)
			dst[len++] = joiner;
		len += json_key_text(values[i], dst + len);
	}
	key->data = dst;
	key->len = len;
	return 1;
}

/* Notes record i as not JSON; -1 when out of memory. */
static int note_bad(struct keyset *ks, size_t i, const char *why)
{
	if (ks->nbad == ks->bad_cap) {
		size_t cap = ks->bad_cap ? 2 * ks->bad_cap : 16;
		size_t *bigger = realloc(ks->bad, cap * sizeof *bigger);

		if (bigger == NULL)
			return -1;
		ks->bad = bigger;
		ks->bad_cap = cap;
	}
	if (ks->nbad == 0)
		ks->bad_why = why;
	ks->bad[ks->nbad++] = i;
	return 0;
}

/*
 * A record's key, a field list's copied to copy (which then holds it):
 * 1, 0 without one, -1 when the record is not JSON (*why).
 */
static inline int record_key(const struct key_spec *spec, struct line record, char *copy,
			     struct line *key, const char **why)
{
	if (spec->json)
		return json_key(spec, record, copy, key, why);
	if (spec->csv)
		return csv_key(spec, record, copy, key);
	if (spec->fields)
		return list_key(spec, record, copy, key);
	return field_key(spec, record, key);
}

/* Makes room for at least want keys; contents are kept. */
static int reserve_keys(struct keyset *ks, size_t want)
{
	size_t cap = ks->cap ? ks->cap : KEYSET_MIN_CAP;
	struct line *keys;
	size_t *record;

	if (want <= ks->cap)
		return 0;
	while (cap < want) {
		if (cap > SIZE_MAX / 2 / sizeof *ks->keys) {
			errno = ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	keys = realloc(ks->keys, cap * sizeof *keys);
	if (!keys)
		return -1;
	ks->keys = keys;
	record = realloc(ks->record, cap * sizeof *record);
	if (!record)
		return -1;	/* ks->keys is merely larger than ks->cap says */
	ks->record = record;
	ks->cap = cap;
	return 0;
}

/*
 * Sizes ks->folded for every byte of every record, times copies, before
 * any key uses it (JSON keys may hold a value once per path, and a byte
 * between them: copies is the number of paths, each taking
 * JSON_KEY_ROOM(len) + 1, since a number's key text may be longer than
 * its spelling).
 */
/*
 * The room one record of len bytes takes: its copies (JSON paths), each
 * JSON_KEY_ROOM(len) and a joining byte where there are several; 0 when
 * that does not fit in a size_t.
 */
static size_t record_room(size_t len, size_t copies, int json)
{
	if (json && len > (SIZE_MAX - 17) / 4)
		return 0;
	len = json ? JSON_KEY_ROOM(len) : len;
	if (copies > 1 && len == SIZE_MAX)
		return 0;
	len = copies > 1 ? len + 1 : len;
	return len > SIZE_MAX / copies ? 0 : len * copies;
}

static int reserve_folded(struct keyset *ks, const struct line *records, size_t n,
			  size_t copies, int json)
{
	size_t total = 0;
	char *folded;

	for (size_t i = 0; i < n; i++) {
		size_t room = record_room(records[i].len, copies, json);

		if ((room == 0 && records[i].len > 0) || room > SIZE_MAX - total) {
			errno = ENOMEM;
			return -1;
		}
		total += room;
	}
	if (total == 0)
		total = 1;	/* never a null buffer: keys point into it, even empty ones */
	if (total <= ks->folded_cap)
		return 0;
	if (total < ks->folded_cap * 2 && ks->folded_cap <= SIZE_MAX / 2)
		total = ks->folded_cap * 2;
	/* The old contents are dead: free + malloc saves realloc's copy. */
	folded = malloc(total);
	if (!folded)
		return -1;
	free(ks->folded);
	ks->folded = folded;
	ks->folded_cap = total;
	return 0;
}

/*
 * Eight bytes at a time, without branches (compilers do not vectorise the
 * byte loop at -O2). For each byte b, with h = b & 0x7f, the per-byte sums
 * h + (0x80 - 'A') and h + (0x80 - 'Z' - 1) stay below 0x100, so no carry
 * crosses into the next byte, and their top bits say h >= 'A' and h > 'Z'.
 * An upper-case byte is one with the first, not the second, and b < 0x80;
 * its top bit shifted down by two is 0x20, the case bit.
 */
static uint64_t fold_word(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u;
	const uint64_t high = 0x80 * ones;
	uint64_t h = w & ~high;
	uint64_t at_least_a = h + (0x80 - 'A') * ones;
	uint64_t past_z = h + (0x80 - 'Z' - 1) * ones;
	uint64_t upper = at_least_a & ~past_z & ~w & high;

	return w | (upper >> 2);
}

static void fold8(char *dst, const char *src)
{
	uint64_t w;

	memcpy(&w, src, 8);	/* memcpy: no unaligned pointer casts */
	w = fold_word(w);
	memcpy(dst, &w, 8);
}

/*
 * Keys of 8 bytes or more end with one word that overlaps the one before:
 * folding reads only src, so folding a byte twice is harmless, and the
 * variable-length byte loop (a mispredicted branch per key) is gone.
 */
static struct line fold_into(char *dst, struct line key)
{
	size_t i = 0;

	if (key.len < 8) {
		for (; i < key.len; i++) {
			unsigned char c = (unsigned char)key.data[i];

			dst[i] = (char)((unsigned)(c - 'A') < 26u ? c + ('a' - 'A') : c);
		}
		return (struct line){ .data = dst, .len = key.len };
	}
	for (; i + 8 <= key.len; i += 8)
		fold8(dst + i, key.data + i);
	if (i < key.len)
		fold8(dst + key.len - 8, key.data + key.len - 8);
	return (struct line){ .data = dst, .len = key.len };
}

/*
 * The loops below keep the key count in a local: ks->count is a size_t, as
 * are the ks->record[] slots, so the compiler must otherwise reload it after
 * every store. Spans are stored field by field for the same kind of reason
 * (a whole-struct copy through the stack stalls store forwarding).
 */
static int add_words(struct keyset *ks, struct line key, size_t record)
{
	const unsigned char *p = (const unsigned char *)key.data;
	const unsigned char *end = p + key.len;
	size_t count = ks->count;
	int rc = 0;

	while (p < end) {
		const unsigned char *start;

		while (p < end && word_break[*p])
			p++;
		if (p == end)
			break;
		start = p;
		while (p < end && !word_break[*p])
			p++;
		if (count == ks->cap && reserve_keys(ks, count + 1) < 0) {
			rc = -1;
			break;
		}
		ks->keys[count].data = (const char *)start;
		ks->keys[count].len = (size_t)(p - start);
		ks->record[count++] = record;
	}
	ks->count = count;
	return rc;
}

/* The hot default (every record is its own key): a straight copy of spans. */
static void whole_records(struct keyset *ks, const struct line *records, size_t n)
{
	if (n > 0)
		memcpy(ks->keys, records, n * sizeof *records);
	for (size_t i = 0; i < n; i++)
		ks->record[i] = i;
	ks->count = n;
}

/* At most one key per record, so the n slots reserved by the caller do. */
static int field_keys(struct keyset *ks, const struct key_spec *spec,
		       const struct line *records, size_t n)
{
	struct line *keys = ks->keys;
	size_t *from = ks->record;
	char *folded = ks->folded;
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		struct line key;
		const char *why = NULL;	/* set where record_key says -1 */
		int found = record_key(spec, records[i], folded, &key, &why);

		if (found < 0 && note_bad(ks, i, why) < 0)
			return -1;
		if (found <= 0)
			continue;
		/* An empty key has nothing to fold. */
		if (spec->fold_case && key.len > 0)
			key = fold_into(folded, key);
		if (key.data == folded)
			folded += key.len;
		keys[count].data = key.data;
		keys[count].len = key.len;
		from[count++] = i;
	}
	ks->count = count;
	return 0;
}

/*
 * Words from slot `from` on: only those of partition spec->shard_index
 * kept (--shard with -w: each word is tested or added in its own
 * partition, as bfsplit would send it there).
 */
static void keep_shard_words(struct keyset *ks, const struct key_spec *spec, size_t from)
{
	size_t kept = from;

	for (size_t j = from; j < ks->count; j++)
		if (partition_of(spec->shard, ks->keys[j].data, ks->keys[j].len) == spec->shard_index)
			ks->keys[kept++] = ks->keys[j];
	ks->count = kept;
}

static int word_keys(struct keyset *ks, const struct key_spec *spec,
		     const struct line *records, size_t n)
{
	char *folded = ks->folded;
	size_t before;

	for (size_t i = 0; i < n; i++) {
		struct line key;
		const char *why = NULL;	/* set where record_key says -1 */
		int found = record_key(spec, records[i], folded, &key, &why);

		if (found < 0 && note_bad(ks, i, why) < 0)
			return -1;
		if (found <= 0)
			continue;
		if (spec->fold_case && key.len > 0)
			key = fold_into(folded, key);
		if (key.data == folded)
			folded += key.len;
		before = ks->count;
		if (add_words(ks, key, i) < 0)
			return -1;
		if (spec->shard != NULL)
			keep_shard_words(ks, spec, before);
	}
	return 0;
}

int keyset_build(struct keyset *ks, const struct key_spec *spec,
		 const struct line *records, size_t n)
{
	ks->count = 0;
	ks->nbad = 0;
	ks->deferred = 0;
	if ((spec->fold_case || spec->fields || spec->csv || spec->json) &&
	    reserve_folded(ks, records, n, spec->json ? spec->json->n : 1, spec->json != NULL) < 0)
		return -1;
	if (reserve_keys(ks, n) < 0)
		return -1;
	if (spec->words) {
		if (word_keys(ks, spec, records, n) == 0)
			return 0;
		ks->count = 0;
		return -1;
	}
	if (spec->field == 0 && !spec->fields && !spec->csv && !spec->json && !spec->fold_case) {
		whole_records(ks, records, n);
		return 0;
	}
	if (field_keys(ks, spec, records, n) == 0)
		return 0;
	ks->count = 0;
	return -1;
}

void keyset_free(struct keyset *ks)
{
	free(ks->keys);
	free(ks->record);
	free(ks->folded);
	free(ks->bad);
	memset(ks, 0, sizeof *ks);
}

/*
 * Deferred building. Between keyset_defer and keyset_cut, ks->record[i]
 * holds where slot i's bytes start in ks->folded (each record has room
 * for what keyset_build would give it there: len, or (len + 1) per JSON
 * path); keyset_cut replaces it with what the slot holds: i for a key,
 * or one of the marks below. A bad record's key is empty and its data
 * is the reason, so that compaction needs nothing beside the slots.
 */
#define SLOT_NO_KEY SIZE_MAX
#define SLOT_BAD (SIZE_MAX - 1)

int keyset_deferrable(const struct key_spec *spec)
{
	return !spec->words && (spec->json || spec->csv || spec->fields || spec->fold_case);
}

/*
 * Room for n bad records: compaction, on the ordered thread, cannot fail.
 * Called after reserve_keys(n), whose n keys are larger than n indexes,
 * so n * sizeof *bad cannot overflow.
 */
static int reserve_bad(struct keyset *ks, size_t n)
{
	size_t *bad;

	if (n <= ks->bad_cap)
		return 0;
	bad = realloc(ks->bad, n * sizeof *bad);
	if (bad == NULL)
		return -1;
	ks->bad = bad;
	ks->bad_cap = n;
	return 0;
}

int keyset_defer(struct keyset *ks, const struct key_spec *spec, const struct line *records,
		 size_t n)
{
	size_t copies = spec->json ? spec->json->n : 1;
	size_t at = 0;

	ks->count = 0;
	ks->nbad = 0;
	ks->deferred = 0;
	if (reserve_folded(ks, records, n, copies, spec->json != NULL) < 0 || reserve_keys(ks, n) < 0 ||
	    reserve_bad(ks, n) < 0)
		return -1;
	/* reserve_folded has checked that these sums fit */
	for (size_t i = 0; i < n; i++) {
		ks->record[i] = at;
		at += record_room(records[i].len, copies, spec->json != NULL);
	}
	ks->spec = spec;
	ks->records = records;
	ks->count = n;
	ks->deferred = 1;
	return 0;
}

void keyset_cut(struct keyset *ks, size_t from, size_t to)
{
	const struct key_spec *spec = ks->spec;

	for (size_t i = from; i < to; i++) {
		char *slot = ks->folded + ks->record[i];
		struct line key = { .data = slot, .len = 0 };
		const char *why = "";	/* set where record_key says -1 */
		int found = record_key(spec, ks->records[i], slot, &key, &why);

		if (found > 0 && spec->fold_case && key.len > 0)
			key = fold_into(slot, key);
		else if (found <= 0)
			key = (struct line){ .data = found < 0 ? why : slot, .len = 0 };
		ks->keys[i].data = key.data;
		ks->keys[i].len = key.len;
		ks->record[i] = found > 0 ? i : found < 0 ? SLOT_BAD : SLOT_NO_KEY;
	}
}

void keyset_compact(struct keyset *ks)
{
	size_t n = ks->count;
	size_t count = 0;

	if (!ks->deferred)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t r = ks->record[i];

		if (r == SLOT_BAD) {
			if (ks->nbad == 0)
				ks->bad_why = ks->keys[i].data;
			ks->bad[ks->nbad++] = i;
		}
		if (r != i)
			continue;
		ks->keys[count].data = ks->keys[i].data;
		ks->keys[count].len = ks->keys[i].len;
		ks->record[count++] = i;
	}
	ks->count = count;
	ks->deferred = 0;
	ks->spec = NULL;
	ks->records = NULL;
}

void keyset_truncate(struct keyset *ks, size_t n)
{
	size_t count = ks->count, nbad = ks->nbad;

	while (count > 0 && ks->record[count - 1] >= n)
		count--;
	while (nbad > 0 && ks->bad[nbad - 1] >= n)
		nbad--;
	ks->count = count;
	ks->nbad = nbad;
	if (nbad == 0)
		ks->bad_why = NULL;
}
