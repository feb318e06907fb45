/* SPDX-License-Identifier: MIT */
/*
 * topk.c - the Space-Saving summary and the count-min sketch of topk.h.
 *
 * Space-Saving keeps C entries (hash, count, error). A key that is kept
 * gets count + 1. A new key takes a free entry with count 1, error 0;
 * once all C are taken it replaces the entry of smallest count m, taking
 * count m + 1 and error m: it may have occurred up to m times before,
 * unseen, since every key not kept occurred at most m times (the
 * evicted ones had count m or less when evicted, and counts never
 * fall). The counts sum to N, so m <= N / C.
 *
 * Admission (Filtered Space-Saving, Homem & Carvalho 2010): a new key
 * whose count-min estimate, this occurrence included, is at most m is
 * not admitted. It occurred at most m times, which is all the summary
 * claims of a key it does not keep, so every bound holds as before; the
 * counts then sum to at most N, so still m <= N / C. On a long tail
 * most new keys are turned away, which saves the eviction (a sift down
 * the heap) and keeps the kept keys' errors smaller.
 *
 * The smallest count is found with a binary min-heap of entry indexes
 * (an increment moves an entry down, an eviction replaces the root),
 * ties broken by hash so that the entry evicted never depends on the
 * heap's layout;
 * heavy keys sink to the leaves, where an increment costs nothing. A
 * hash table of entry indexes (open addressing, linear probing on the
 * hash's first half, deletion by backward shift, at most half full)
 * finds a key's entry.
 *
 * The count-min sketch: depth rows of width 64-bit cells; row i's cell
 * for a key is x * width / 2^32 with x the top 32 bits of h1 + i h2
 * (double hashing, Kirsch & Mitzenmacher 2006, h2 made odd; multiply and
 * shift in place of a modulo, Lemire 2019). Conservative update raises only the
 * key's cells that are below the new estimate min + 1, which keeps
 * every cell an upper bound for each key mapped to it and the estimate
 * tighter than plain count-min.
 *
 * This file keeps no files and prints nothing (topk_file.c saves).
 */
#include "topk.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const unsigned char topk_default_key[16] = "bftop-topk-key01";

struct topk_entry {
	uint64_t hash[2];
	uint64_t count, error;
	uint64_t len;		/* the key's full length */
	uint32_t at;		/* its place in the heap */
};

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- sizing ------------------------------------------------------------ */

int topk_check_params(const struct topk_params *p, const char **errstr)
{
	if (p->capacity < 1 || p->capacity > TOPK_CAPACITY_MAX)
		return bad(errstr, "capacity out of range 1..1000000");
	if (p->width < 1 || p->width > TOPK_WIDTH_MAX)
		return bad(errstr, "width out of range 1..3000000");
	if (p->depth < 1 || p->depth > TOPK_DEPTH_MAX)
		return bad(errstr, "depth out of range 1..16");
	return 0;
}

int topk_size(double eps, double confidence, struct topk_params *p, const char **errstr)
{
	if (!(eps >= TOPK_EPS_MIN && eps <= TOPK_EPS_MAX))
		return bad(errstr, "error out of range 1e-6..0.5");
	if (!(confidence >= 0.5 && confidence <= 1.0 - 1e-9))
		return bad(errstr, "confidence out of range 0.5..0.999999999");
	/* the small slack keeps 1/1e-4 at 10000, not 10001 from rounding */
	p->capacity = (uint64_t)ceil(1.0 / eps - 1e-9);
	p->width = (uint64_t)ceil(exp(1.0) / eps);
	p->depth = (unsigned)ceil(log(1.0 / (1.0 - confidence)) - 1e-9);
	if (p->depth < 1)
		p->depth = 1;
	return topk_check_params(p, errstr);
}

static uint64_t table_slots(uint64_t capacity)
{
	uint64_t n = 16;

	while (n < 2 * capacity)
		n *= 2;
	return n;
}

uint64_t topk_memory(const struct topk_params *p)
{
	return sizeof(struct topk) + p->width * p->depth * 8
	       + p->capacity * (sizeof(struct topk_entry) + TOPK_KEY_MAX + 4)
	       + table_slots(p->capacity) * 4;
}

/* ---- life ---------------------------------------------------------------- */

static struct topk *topk_alloc(const struct topk_params *p, enum filter_hash hash, uint32_t flags,
			       const char **errstr)
{
	struct topk *t;

	if (topk_check_params(p, errstr) < 0)
		return NULL;
	if (hash != FILTER_SIPHASH_1_3 && hash != FILTER_SIPHASH_2_4) {
		*errstr = "unknown hash function";
		return NULL;
	}
	if (flags & ~FILTER_FLAGS_KNOWN) {
		*errstr = "unknown key flags";
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (t == NULL)
		goto nomem;
	t->params = *p;
	t->hash = hash;
	t->flags = flags;
	t->nslots = table_slots(p->capacity);
	t->cells = calloc(p->width * p->depth, sizeof *t->cells);
	t->entries = calloc(p->capacity, sizeof *t->entries);
	t->keys = malloc(p->capacity * TOPK_KEY_MAX);
	t->heap = calloc(p->capacity, sizeof *t->heap);
	t->slots = calloc(t->nslots, sizeof *t->slots);
	if (t->cells && t->entries && t->keys && t->heap && t->slots)
		return t;
	topk_free(t);
nomem:
	*errstr = strerror(ENOMEM);
	return NULL;
}

static void set_key(struct topk *t, const unsigned char key[16])
{
	memcpy(t->key, key, 16);
	siphash_key_from_bytes(&t->sipkey, key);
	t->fingerprint = filter_key_fingerprint(key);
	t->needs_key = 0;
}

struct topk *topk_new(const struct topk_params *p, enum filter_hash hash, uint32_t flags,
		      const unsigned char key[16], const char **errstr)
{
	struct topk *t = topk_alloc(p, hash, flags, errstr);

	if (t != NULL)
		set_key(t, key);
	return t;
}

struct topk *topk_new_like(const struct topk *model, const char **errstr)
{
	struct topk *t = topk_alloc(&model->params, model->hash, model->flags, errstr);

	if (t == NULL)
		return NULL;
	memcpy(t->key, model->key, 16);
	t->sipkey = model->sipkey;
	t->fingerprint = model->fingerprint;
	t->needs_key = model->needs_key;
	return t;
}

void topk_free(struct topk *t)
{
	if (t == NULL)
		return;
	free(t->cells);
	free(t->entries);
	free(t->keys);
	free(t->heap);
	free(t->slots);
	free(t);
}

int topk_supply_key(struct topk *t, const unsigned char key[16], const char **errstr)
{
	if (filter_key_fingerprint(key) != t->fingerprint)
		return bad(errstr, "the key is not this summary's key");
	set_key(t, key);
	return 0;
}

#define HASH_GROUP 256

void topk_hash(const struct topk *t, const struct line *keys, size_t n, uint64_t *out)
{
	for (size_t at = 0; at < n; at += HASH_GROUP) {
		size_t group = n - at < HASH_GROUP ? n - at : HASH_GROUP;

		if (t->hash == FILTER_SIPHASH_2_4)
			siphash_2_4_128_many(&t->sipkey, keys + at, group, out + 2 * at);
		else
			siphash_1_3_128_many(&t->sipkey, keys + at, group, out + 2 * at);
	}
}

/* ---- count-min ------------------------------------------------------------ */

/*
 * Row row's counter for a key: the top 32 bits of h1 + row (h2 | 1)
 * scaled to the width (multiply and shift, Lemire 2019), not a modulo:
 * a division per row was most of the time an add took.
 */
static uint64_t cell_index(const struct topk *t, const uint64_t hash[2], unsigned row)
{
	uint64_t h = hash[0] + (uint64_t)row * (hash[1] | 1);

	return (uint64_t)row * t->params.width + (((h >> 32) * t->params.width) >> 32);
}

static uint64_t cm_estimate(const struct topk *t, const uint64_t hash[2])
{
	uint64_t least = UINT64_MAX;

	for (unsigned row = 0; row < t->params.depth; row++) {
		uint64_t v = t->cells[cell_index(t, hash, row)];

		if (v < least)
			least = v;
	}
	return least;
}

/* Conservative update: every cell of the key at least its old estimate + 1, the new estimate. */
static uint64_t cm_add(struct topk *t, const uint64_t hash[2])
{
	uint64_t at[TOPK_DEPTH_MAX], least = UINT64_MAX;

	for (unsigned row = 0; row < t->params.depth; row++) {
		at[row] = cell_index(t, hash, row);
		if (t->cells[at[row]] < least)
			least = t->cells[at[row]];
	}
	least = add_saturating(least, 1);
	for (unsigned row = 0; row < t->params.depth; row++)
		if (t->cells[at[row]] < least)
			t->cells[at[row]] = least;
	return least;
}

/* ---- the heap of counts ------------------------------------------------------ */

/*
 * Heap order: by count, then by hash, a total order, so the entry evicted
 * is the same however the heap happens to be laid out (a summary loaded
 * from a file goes on exactly as the one saved would have).
 */
static int entry_below(const struct topk *t, uint32_t a, uint32_t b)
{
	const struct topk_entry *x = &t->entries[a], *y = &t->entries[b];

	if (x->count != y->count)
		return x->count < y->count;
	if (x->hash[0] != y->hash[0])
		return x->hash[0] < y->hash[0];
	return x->hash[1] < y->hash[1];
}

static void heap_place(struct topk *t, uint64_t i, uint32_t e)
{
	t->heap[i] = e;
	t->entries[e].at = (uint32_t)i;
}

/* Entry at heap place i has grown: move it down below smaller children. */
static void heap_down(struct topk *t, uint64_t i)
{
	uint32_t e = t->heap[i];

	for (;;) {
		uint64_t child = 2 * i + 1;

		if (child >= t->kept)
			break;
		if (child + 1 < t->kept && entry_below(t, t->heap[child + 1], t->heap[child]))
			child++;
		if (!entry_below(t, t->heap[child], e))
			break;
		heap_place(t, i, t->heap[child]);
		i = child;
	}
	heap_place(t, i, e);
}

/* Entry at heap place i is new or smaller: move it up above larger parents. */
static void heap_up(struct topk *t, uint64_t i)
{
	uint32_t e = t->heap[i];

	while (i > 0 && entry_below(t, e, t->heap[(i - 1) / 2])) {
		heap_place(t, i, t->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_place(t, i, e);
}

/* ---- the table of kept keys ---------------------------------------------------- */

/* The slot holding hash, or the empty slot where it would go. */
static uint64_t table_find(const struct topk *t, const uint64_t hash[2])
{
	uint64_t mask = t->nslots - 1, s = hash[0] & mask;

	for (;; s = (s + 1) & mask) {
		uint32_t v = t->slots[s];

		if (v == 0)
			return s;
		if (t->entries[v - 1].hash[0] == hash[0] && t->entries[v - 1].hash[1] == hash[1])
			return s;
	}
}

/* Empty slot s, moving later entries of its run back so that every probe still finds them. */
static void table_delete(struct topk *t, uint64_t s)
{
	uint64_t mask = t->nslots - 1, next = s;

	for (;;) {
		uint64_t home;

		next = (next + 1) & mask;
		if (t->slots[next] == 0)
			break;
		home = t->entries[t->slots[next] - 1].hash[0] & mask;
		/* movable when its home is not in (s, next], cyclically */
		if (((next - home) & mask) >= ((next - s) & mask)) {
			t->slots[s] = t->slots[next];
			s = next;
		}
	}
	t->slots[s] = 0;
}

/* ---- Space-Saving ------------------------------------------------------------------ */

static void store_key(struct topk *t, uint32_t e, const unsigned char *key, uint64_t len)
{
	size_t n = len < TOPK_KEY_MAX ? (size_t)len : TOPK_KEY_MAX;

	t->entries[e].len = len;
	if (n > 0)
		memcpy(t->keys + (size_t)e * TOPK_KEY_MAX, key, n);
}

/* A key not kept: a free entry, or the smallest one's, with its count as error. */
static void ss_take(struct topk *t, uint64_t slot, const uint64_t hash[2], const struct line *key)
{
	uint32_t e;
	uint64_t least = 0;
	int appended = t->kept < t->params.capacity;

	if (appended) {
		e = (uint32_t)t->kept;
		t->heap[t->kept] = e;
		t->entries[e].at = (uint32_t)t->kept++;
	} else {
		e = t->heap[0];
		least = t->entries[e].count;
		table_delete(t, table_find(t, t->entries[e].hash));
		slot = table_find(t, hash);	/* the deletion may have moved the free slot */
	}
	t->slots[slot] = e + 1;
	t->entries[e].hash[0] = hash[0];
	t->entries[e].hash[1] = hash[1];
	t->entries[e].count = add_saturating(least, 1);
	t->entries[e].error = least;
	store_key(t, e, (const unsigned char *)key->data, key->len);
	/* a new leaf of count 1 may sit below larger counts; a new root only grew */
	if (appended)
		heap_up(t, t->entries[e].at);
	else
		heap_down(t, t->entries[e].at);
}

/*
 * estimate: the key's count-min estimate, this occurrence included. A key
 * not kept whose estimate is at most the smallest kept count is not
 * admitted (as in Filtered Space-Saving, Homem & Carvalho 2010): it
 * occurred at most that often, all Space-Saving assumes of a key it does
 * not keep, so every bound still holds, and the counts still sum to at
 * most N. Most keys of a long tail never evict a kept one.
 */
static void ss_add(struct topk *t, const uint64_t hash[2], const struct line *key,
		   uint64_t estimate)
{
	uint64_t slot = table_find(t, hash);
	uint32_t v = t->slots[slot];

	if (v == 0) {
		if (estimate > topk_floor(t))
			ss_take(t, slot, hash, key);
		return;
	}
	t->entries[v - 1].count = add_saturating(t->entries[v - 1].count, 1);
	heap_down(t, t->entries[v - 1].at);
}

void topk_add_hashed(struct topk *t, const struct line *keys, const uint64_t *hashes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t estimate = cm_add(t, hashes + 2 * i);

		ss_add(t, hashes + 2 * i, &keys[i], estimate);
	}
	t->total = add_saturating(t->total, n);
}

uint64_t topk_floor(const struct topk *t)
{
	return t->kept < t->params.capacity ? 0 : t->entries[t->heap[0]].count;
}

void topk_query(const struct topk *t, const uint64_t hash[2], uint64_t *lower, uint64_t *upper)
{
	uint32_t v = t->slots[table_find(t, hash)];
	uint64_t cm = cm_estimate(t, hash);

	if (v == 0) {
		uint64_t floor = topk_floor(t);

		*lower = 0;
		*upper = cm < floor ? cm : floor;
		return;
	}
	*lower = t->entries[v - 1].count - t->entries[v - 1].error;
	*upper = cm < t->entries[v - 1].count ? cm : t->entries[v - 1].count;
}

/* ---- listing ------------------------------------------------------------------------ */

static void fill_item(const struct topk *t, uint32_t e, struct topk_item *it)
{
	const struct topk_entry *en = &t->entries[e];
	uint64_t cm = cm_estimate(t, en->hash);

	it->hash[0] = en->hash[0];
	it->hash[1] = en->hash[1];
	it->count = en->count;
	it->error = en->error;
	it->upper = cm < en->count ? cm : en->count;
	it->len = en->len;
	it->key = t->keys + (size_t)e * TOPK_KEY_MAX;
	it->truncated = en->len > TOPK_KEY_MAX;
}

static int compare_items(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;
	size_t la = a->truncated ? TOPK_KEY_MAX : (size_t)a->len;
	size_t lb = b->truncated ? TOPK_KEY_MAX : (size_t)b->len;
	int c;

	if (a->upper != b->upper)
		return a->upper > b->upper ? -1 : 1;
	if (a->count - a->error != b->count - b->error)
		return a->count - a->error > b->count - b->error ? -1 : 1;
	c = memcmp(a->key, b->key, la < lb ? la : lb);
	if (c != 0 || la != lb)
		return c != 0 ? c : la < lb ? -1 : 1;
	/* equal shown bytes: the full length, then the hash, so the order is total */
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->hash[0] != b->hash[0])
		return a->hash[0] < b->hash[0] ? -1 : 1;
	return a->hash[1] < b->hash[1] ? -1 : a->hash[1] > b->hash[1];
}

size_t topk_items(const struct topk *t, struct topk_item *out)
{
	for (uint64_t e = 0; e < t->kept; e++)
		fill_item(t, (uint32_t)e, &out[e]);
	qsort(out, (size_t)t->kept, sizeof *out, compare_items);
	return (size_t)t->kept;
}

enum topk_frequency topk_frequency(const struct topk *t, uint64_t lower, uint64_t upper)
{
	uint64_t floor = topk_floor(t);

	if (lower > floor)
		return TOPK_SURE;
	return upper > floor ? TOPK_POSSIBLE : TOPK_INFREQUENT;
}

/* topk_items, less the keys type leaves out: those in order, at the front. */
size_t topk_frequent(const struct topk *t, enum topk_error_type type, struct topk_item *out)
{
	enum topk_frequency least = type == TOPK_NO_FALSE_POSITIVES ? TOPK_SURE : TOPK_POSSIBLE;
	size_t n = topk_items(t, out), kept = 0;

	for (size_t i = 0; i < n; i++)
		if (topk_frequency(t, out[i].count - out[i].error, out[i].upper) >= least)
			out[kept++] = out[i];
	return kept;
}

/* ---- loading and merging ---------------------------------------------------------------- */

int topk_restore(struct topk *t, const struct topk_item *item, const char **errstr)
{
	uint64_t slot;
	uint32_t e;

	if (t->kept >= t->params.capacity)
		return bad(errstr, "more keys than the capacity");
	if (item->error > item->count || item->count == 0)
		return bad(errstr, "a key's error above its count, or a count of 0");
	slot = table_find(t, item->hash);
	if (t->slots[slot] != 0)
		return bad(errstr, "a key kept twice");
	e = (uint32_t)t->kept;
	t->heap[t->kept] = e;
	t->entries[e].at = (uint32_t)t->kept++;
	t->slots[slot] = e + 1;
	t->entries[e].hash[0] = item->hash[0];
	t->entries[e].hash[1] = item->hash[1];
	t->entries[e].count = item->count;
	t->entries[e].error = item->error;
	store_key(t, e, item->key, item->len);
	heap_up(t, t->entries[e].at);
	return 0;
}

int topk_compatible(const struct topk *a, const struct topk *b, const char **what)
{
	if (a->params.capacity != b->params.capacity)
		*what = "capacity";
	else if (a->params.width != b->params.width)
		*what = "width";
	else if (a->params.depth != b->params.depth)
		*what = "depth";
	else if (a->hash != b->hash)
		*what = "hash function";
	else if (a->fingerprint != b->fingerprint)
		*what = "key";
	else if ((a->flags ^ b->flags) & ~FILTER_KEY_EXTERNAL)
		*what = "normalisation";
	else
		return 1;
	return 0;
}

static int compare_hashes(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;

	if (a->hash[0] != b->hash[0])
		return a->hash[0] < b->hash[0] ? -1 : 1;
	return a->hash[1] < b->hash[1] ? -1 : a->hash[1] > b->hash[1];
}

static int compare_counts(const void *pa, const void *pb)
{
	const struct topk_item *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return compare_hashes(pa, pb);
}

/*
 * Every key kept by any of t[0..n), with the merged count and error: the
 * sum over the summaries of its count and error where it is kept, and of
 * that summary's floor for both where it is not. As F + sum over the
 * summaries keeping it of (count - floor), with F the sum of the floors,
 * so a key is visited once per summary that keeps it. Largest count
 * first; *len of them.
 */
static struct topk_item *merged_items(const struct topk *const *t, size_t n, size_t *len)
{
	uint64_t floors = 0, total_kept = 0;
	struct topk_item *all;
	size_t out = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		floors = add_saturating(floors, topk_floor(t[i]));
		total_kept += t[i]->kept;
	}
	all = calloc((size_t)total_kept + 1, sizeof *all);
	if (all == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		for (uint64_t e = 0; e < t[i]->kept; e++) {
			fill_item(t[i], (uint32_t)e, &all[k]);
			/* what it adds beyond the floor, which F counts already */
			all[k].count -= topk_floor(t[i]);
			all[k++].upper = topk_floor(t[i]);	/* the floor, taken back from the error */
		}
	qsort(all, k, sizeof *all, compare_hashes);
	for (size_t i = 0; i < k; out++) {
		struct topk_item key = all[i];

		key.count = add_saturating(floors, all[i].count);
		key.error = add_saturating(floors - all[i].upper, all[i].error);
		for (i++; i < k && compare_hashes(&all[i], &key) == 0; i++) {
			key.count = add_saturating(key.count, all[i].count);
			key.error = add_saturating(key.error - all[i].upper, all[i].error);
		}
		all[out] = key;
	}
	qsort(all, out, sizeof *all, compare_counts);
	*len = out;
	return all;
}

/* Move the contents of from into into (same parameters), freeing from. */
static void take_over(struct topk *into, struct topk *from)
{
	struct topk old = *into;

	into->cells = from->cells;
	into->entries = from->entries;
	into->keys = from->keys;
	into->heap = from->heap;
	into->slots = from->slots;
	into->kept = from->kept;
	into->total = from->total;
	from->cells = old.cells;
	from->entries = old.entries;
	from->keys = old.keys;
	from->heap = old.heap;
	from->slots = old.slots;
	topk_free(from);
}

int topk_merge_many(struct topk *into, const struct topk *const *from, size_t n,
		    const char **errstr)
{
	static char message[48];
	const struct topk **all = calloc(n + 1, sizeof *all);
	struct topk *result = topk_new_like(into, errstr);
	struct topk_item *items = NULL;
	uint64_t total = into->total;
	const char *what;
	size_t len = 0;
	int ret = -1;

	if (all == NULL || result == NULL) {
		bad(errstr, strerror(ENOMEM));
		goto out;
	}
	all[0] = into;
	for (size_t i = 0; i < n; i++) {
		if (!topk_compatible(into, from[i], &what)) {
			snprintf(message, sizeof message, "different %s", what);
			bad(errstr, message);
			goto out;
		}
		if (total > UINT64_MAX - from[i]->total) {
			bad(errstr, "counts overflow");
			goto out;
		}
		total += from[i]->total;
		all[i + 1] = from[i];
	}
	items = merged_items(all, n + 1, &len);
	if (items == NULL) {
		bad(errstr, strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < len && i < into->params.capacity; i++)
		topk_restore(result, &items[i], &what);	/* distinct, count >= error: cannot fail */
	for (uint64_t c = 0; c < into->params.width * into->params.depth; c++)
		for (size_t i = 0; i < n; i++)
			result->cells[c] = add_saturating(i == 0 ? into->cells[c] : result->cells[c],
							  from[i]->cells[c]);
	result->total = total;
	take_over(into, result);
	result = NULL;
	ret = 0;
out:
	free(items);
	free(all);
	topk_free(result);
	return ret;
}

int topk_merge(struct topk *into, const struct topk *from, const char **errstr)
{
	return topk_merge_many(into, &from, 1, errstr);
}
