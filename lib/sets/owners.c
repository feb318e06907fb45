/* SPDX-License-Identifier: MIT */
/*
 * owners.c - ordered test-and-add in regions (see owners.h).
 *
 * One batch:
 *
 *   split    blocks of the batch's keys in the newest stage (one multiply
 *            a key), region of each block, a stable counting sort of key
 *            indexes by region, kept in the slot's piece
 *   region r its keys in input order, CHUNK at a time: gather their
 *            hashes, test them against the older stages, prefetch the
 *            newest stage's lines of those still absent, test-and-set
 *            them (filter_blocks_test_and_set), scatter the answers
 *   finish   sums the regions' fresh counts into the cascade's counts,
 *            as cascade.c's add_piece would
 *
 * Block b of B goes to region floor(b R / B): consecutive ranges, so the
 * pages a region's thread touches are its own, and a block (one cache
 * line) is never written by two threads. The answers land in present[]
 * at distinct bytes; the regions' fresh counts sit a cache line apart.
 */
#include "owners.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "window.h"

/* Keys a region gathers at a time: its scratch stays on its stack and in L1. */
#define CHUNK 256

/*
 * A batch shorter than this many keys per region goes whole: sorting and
 * handing out its regions would cost more than they share. Any length
 * gives the same results (owners.h), so this only moves work.
 */
#define MIN_PER_REGION 16

/* One region's result, a cache line of its own. */
struct tally {
	size_t fresh;
	struct window_counts counts;	/* a window's */
	char pad[64 - sizeof(size_t) - sizeof(struct window_counts)];
};

/* The batch split in a slot: of a cascade, or of a window. */
struct piece {
	struct cascade *c;
	struct window *w;
	const uint64_t *h;		/* the batch's hashes, two words a key */
	unsigned char *present;		/* its answers */
	size_t n;
	int split;			/* split and not yet finished */
	uint64_t *base;			/* each key's block in the newest stage (a word index) */
	size_t *order;			/* key indexes grouped by region, input order within */
	uint32_t *region_of;
	size_t cap;
	size_t *start;			/* region r's keys: order[start[r] .. start[r + 1]) */
	struct tally *tally;		/* [regions] */
	/* what base, order and start were sorted for ahead (owners_presort), or NULL */
	const struct filter *sorted_for;
	const uint64_t *sorted_h;
	size_t sorted_n;
};

struct owners {
	unsigned regions, slots;
	struct piece *pieces;		/* [slots] */
	uint64_t pending;		/* keys split and not yet finished */
};

/* The most regions (owners_new): a sort's cursors fit on its stack. */
#define REGIONS_MAX 256

/*
 * chunk_work with one stage: gather, get the lines ready and test-and-set.
 * The lines are fetched here, by the thread that probes them, not ahead
 * by the hashing threads: a line loaded on another core costs a second
 * miss (the caller hashes with cli_keys.ready_later, say).
 */
static size_t newest_only(const struct piece *j, struct filter *newest, const size_t *idx,
			  size_t n)
{
	uint64_t hh[2 * CHUNK], bb[CHUNK];
	unsigned char more[CHUNK];
	size_t fresh;

	if (n == 0)
		return 0;	/* and gcc -O1 then sees hh written before it is read */
	for (size_t i = 0; i < n; i++) {
		hh[2 * i] = j->h[2 * idx[i]];
		hh[2 * i + 1] = j->h[2 * idx[i] + 1];
		bb[i] = j->base[idx[i]];
	}
	filter_ready_hashed(newest, hh, n);
	fresh = filter_blocks_test_and_set(newest, bb, hh, n, more);
	for (size_t i = 0; i < n; i++)
		j->present[idx[i]] = more[i];
	return fresh;
}

/* Test-and-set n keys of a region, given by index into the piece; how many were new. */
static size_t chunk_work(const struct piece *j, const size_t *idx, size_t n)
{
	const struct cascade *c = j->c;
	struct filter *newest = c->stages[c->nstages - 1];
	uint64_t hh[2 * CHUNK], bb[CHUNK], ob[CHUNK];
	unsigned char pres[CHUNK], more[CHUNK];
	size_t pos[CHUNK], nf = 0, fresh;

	if (c->nstages == 1)
		return newest_only(j, newest, idx, n);
	for (size_t i = 0; i < n; i++) {
		hh[2 * i] = j->h[2 * idx[i]];
		hh[2 * i + 1] = j->h[2 * idx[i] + 1];
	}
	memset(pres, 0, n);
	for (size_t s = 0; s + 1 < c->nstages; s++) {
		filter_blocks_of(c->stages[s], hh, n, ob);
		filter_blocks_test(c->stages[s], ob, hh, n, more);
		for (size_t i = 0; i < n; i++)
			pres[i] |= more[i];
	}
	/* compact the keys no older stage holds (nf <= i: in place is safe) */
	for (size_t i = 0; i < n; i++) {
		j->present[idx[i]] = pres[i];
		if (pres[i])
			continue;
		hh[2 * nf] = hh[2 * i];
		hh[2 * nf + 1] = hh[2 * i + 1];
		bb[nf] = j->base[idx[i]];
		pos[nf++] = idx[i];
	}
	filter_ready_hashed(newest, hh, nf);
	fresh = filter_blocks_test_and_set(newest, bb, hh, nf, more);
	for (size_t i = 0; i < nf; i++)
		/* pos[0 .. nf) was filled by the compacting loop above */
		/* cppcheck-suppress uninitvar */
		j->present[pos[i]] = more[i];
	return fresh;
}

/* A window's region: its keys in input order, CHUNK at a time, gathered and scattered. */
static void window_region(struct piece *j, unsigned region)
{
	uint64_t hh[2 * CHUNK], bb[CHUNK];
	unsigned char pres[CHUNK];
	struct window_counts counts = { 0, 0, 0 };

	for (size_t from = j->start[region]; from < j->start[region + 1]; from += CHUNK) {
		size_t left = j->start[region + 1] - from, n = left < CHUNK ? left : CHUNK;
		const size_t *idx = j->order + from;

		for (size_t i = 0; i < n; i++) {
			hh[2 * i] = j->h[2 * idx[i]];
			hh[2 * i + 1] = j->h[2 * idx[i] + 1];
			bb[i] = j->base[idx[i]];
		}
		window_region_chunk(j->w, bb, hh, n, pres, &counts);
		for (size_t i = 0; i < n; i++)
			j->present[idx[i]] = pres[i];
	}
	j->tally[region].counts = counts;
}

void owners_region(struct owners *o, unsigned slot, unsigned region)
{
	struct piece *j = &o->pieces[slot];
	size_t fresh = 0;

	if (j->w != NULL) {
		window_region(j, region);
		return;
	}

	for (size_t from = j->start[region]; from < j->start[region + 1]; from += CHUNK) {
		size_t left = j->start[region + 1] - from;

		fresh += chunk_work(j, j->order + from, left < CHUNK ? left : CHUNK);
	}
	j->tally[region].fresh = fresh;
}

/*
 * order[] = 0 .. n-1 grouped by the region of each key's block, input
 * order within a region. The region is any fixed function of the block
 * (results do not depend on it, owners.h); the floating multiply spares
 * a division per key, and the clamp keeps rounding inside the range.
 */
static void sort_by_region(const struct owners *o, struct piece *j, const struct filter *newest)
{
	double scale = (double)o->regions / (double)(newest->params.m / FILTER_BLOCK_BITS);
	unsigned last = o->regions - 1;
	size_t *start = j->start, cursor[REGIONS_MAX];

	memset(start, 0, (o->regions + 1) * sizeof *start);
	for (size_t i = 0; i < j->n; i++) {
		unsigned r = (unsigned)((double)(j->base[i] / 8) * scale);

		j->region_of[i] = r < last ? r : last;
		start[j->region_of[i] + 1]++;
	}
	for (unsigned r = 0; r < o->regions; r++) {
		start[r + 1] += start[r];
		cursor[r] = start[r];
	}
	for (size_t i = 0; i < j->n; i++)
		j->order[cursor[j->region_of[i]]++] = i;
}

/*
 * Keys the newest stage may still take as new, counting those of batches
 * split and not yet finished as new; SIZE_MAX when it never fills.
 */
static size_t room_in_newest(const struct owners *o, const struct cascade *c)
{
	uint64_t cap = c->stages[c->nstages - 1]->params.capacity;
	uint64_t taken = c->newest_keys + o->pending;
	uint64_t room = cap > taken ? cap - taken : 0;

	if (c->growth == 0 || room > SIZE_MAX)
		return SIZE_MAX;
	return (size_t)room;
}

/* Room in piece j for a batch of n keys; 0 or -1. */
static int reserve(struct piece *j, size_t n)
{
	uint64_t *base;
	size_t *order;
	uint32_t *region_of;

	if (n <= j->cap)
		return 0;
	base = realloc(j->base, n * sizeof *base);
	if (base != NULL)
		j->base = base;
	order = realloc(j->order, n * sizeof *order);
	if (order != NULL)
		j->order = order;
	region_of = realloc(j->region_of, n * sizeof *region_of);
	if (region_of != NULL)
		j->region_of = region_of;
	if (base == NULL || order == NULL || region_of == NULL)
		return -1;
	j->cap = n;
	return 0;
}

/*
 * Piece j takes a batch of n keys (room reserved): blocks in newest,
 * sorted by region, unless owners_presort did that already; c and w
 * cleared, for the caller to set the one it has.
 */
static void sort_piece(struct owners *o, struct piece *j, const struct filter *newest,
		       const uint64_t *h, size_t n, unsigned char *present)
{
	int sorted = j->sorted_for == newest && j->sorted_h == h && j->sorted_n == n;

	j->c = NULL;
	j->w = NULL;
	j->h = h;
	j->present = present;
	j->n = n;
	j->sorted_for = NULL;
	if (!sorted) {
		filter_blocks_of(newest, h, n, j->base);
		sort_by_region(o, j, newest);
	}
	j->split = 1;
}

void owners_presort(struct owners *o, unsigned slot, const struct filter *newest,
		    const uint64_t *h, size_t n)
{
	struct piece *j = &o->pieces[slot];

	j->sorted_for = NULL;
	if (n < (size_t)o->regions * MIN_PER_REGION || reserve(j, n) < 0)
		return;
	j->n = n;
	filter_blocks_of(newest, h, n, j->base);
	sort_by_region(o, j, newest);
	j->sorted_for = newest;
	j->sorted_h = h;
	j->sorted_n = n;
}

int owners_split(struct owners *o, unsigned slot, struct cascade *c, const uint64_t *h, size_t n,
		 unsigned char *present)
{
	struct piece *j = &o->pieces[slot];
	struct filter *newest = c->stages[c->nstages - 1];

	if (n < (size_t)o->regions * MIN_PER_REGION || n > room_in_newest(o, c) ||
	    reserve(j, n) < 0)
		return 0;
	sort_piece(o, j, newest, h, n, present);
	j->c = c;
	o->pending += n;
	return 1;
}

int owners_split_window(struct owners *o, unsigned slot, struct window *w, const uint64_t *h,
			size_t n, uint64_t now, unsigned char *present)
{
	struct piece *j = &o->pieces[slot];
	const struct filter *newest;

	if (n < (size_t)o->regions * MIN_PER_REGION || reserve(j, n) < 0 ||
	    !window_regions_take(w, n, now))
		return 0;
	newest = w->gen[w->ngen - 1]->stages[0];
	sort_piece(o, j, newest, h, n, present);
	j->w = w;
	return 1;
}

/* A window's batch, every region done: its counts, clock and expected loss; how many were new. */
static size_t window_finish(struct owners *o, struct piece *j)
{
	struct window_counts sum = { 0, 0, 0 };

	for (unsigned r = 0; r < o->regions; r++) {
		sum.offered += j->tally[r].counts.offered;
		sum.added += j->tally[r].counts.added;
		sum.fresh += j->tally[r].counts.fresh;
	}
	j->split = 0;
	return window_regions_done(j->w, &sum);
}

size_t owners_finish(struct owners *o, unsigned slot)
{
	struct piece *j = &o->pieces[slot];
	struct cascade *c = j->c;
	struct filter *newest;
	size_t added = 0;

	if (j->w != NULL)
		return window_finish(o, j);
	newest = c->stages[c->nstages - 1];

	for (unsigned r = 0; r < o->regions; r++)
		added += j->tally[r].fresh;
	/* as add_piece in cascade.c: new keys only, or every key offered */
	newest->insertions += c->count_new_only ? added : j->n;
	c->newest_keys += added;
	o->pending -= j->n;
	j->split = 0;
	return added;
}

int owners_test_and_add(struct owners *o, struct cascade *c, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present, size_t *fresh,
			const char **errstr)
{
	size_t done = 0, total = 0, got;

	*fresh = 0;
	while (done < n) {
		size_t len = n - done, room = room_in_newest(o, c);

		if (room < len)
			len = room;
		if (len > 0 && owners_split(o, 0, c, h + 2 * done, len, present + done)) {
			for (unsigned r = 0; r < o->regions; r++)
				owners_region(o, 0, r);
			total += owners_finish(o, 0);
			done += len;
			continue;
		}
		/* short, or the newest stage is full: as one thread (it adds the stage) */
		len = len == 0 ? 1 : len;
		if (cascade_test_and_add_hashed(c, keys + done, h + 2 * done, len, present + done,
						&got, errstr) < 0) {
			*fresh = total + got;
			return -1;
		}
		total += got;
		done += len;
	}
	*fresh = total;
	return 0;
}

int owners_usable(const struct cascade *c)
{
	if (cascade_needs_key(c))
		return 0;
	for (size_t s = 0; s < c->nstages; s++)
		if (!layout_has(c->stages[s]->params.layout, LAYOUT_ONE_BLOCK))
			return 0;
	return 1;
}

int owners_usable_window(const struct window *w)
{
	return !window_needs_key(w) && layout_has(w->layout, LAYOUT_ONE_BLOCK);
}

struct owners *owners_new(unsigned regions, unsigned slots, const char **errstr)
{
	struct owners *o;

	if (regions < 1 || regions > REGIONS_MAX || slots < 1 || slots > OWNERS_SLOTS_MAX) {
		*errstr = regions < 1 || regions > REGIONS_MAX ? "region count out of range"
						      : "slot count out of range";
		return NULL;
	}
	o = calloc(1, sizeof *o);
	if (o != NULL) {
		o->regions = regions;
		o->slots = slots;
		o->pieces = calloc(slots, sizeof *o->pieces);
	}
	for (unsigned i = 0; o != NULL && o->pieces != NULL && i < slots; i++) {
		o->pieces[i].start = calloc(regions + 1, sizeof *o->pieces[i].start);
		o->pieces[i].tally = calloc(regions, sizeof *o->pieces[i].tally);
		if (o->pieces[i].start == NULL || o->pieces[i].tally == NULL)
			break;
		if (i + 1 == slots)
			return o;
	}
	owners_free(o);
	*errstr = strerror(ENOMEM);
	return NULL;
}

void owners_free(struct owners *o)
{
	if (o == NULL)
		return;
	for (unsigned i = 0; o->pieces != NULL && i < o->slots; i++) {
		free(o->pieces[i].base);
		free(o->pieces[i].order);
		free(o->pieces[i].region_of);
		free(o->pieces[i].start);
		free(o->pieces[i].tally);
	}
	free(o->pieces);
	free(o);
}
