/* SPDX-License-Identifier: MIT */
/*
 * owners.c - region owners for ordered test-and-add (see owners.h).
 *
 * One call, piece by piece:
 *
 *   caller   blocks of the piece's keys in the newest stage (one multiply
 *            a key), region of each block, a stable counting sort of key
 *            indexes by region; then it wakes the owners and works region
 *            0 (and any region whose thread did not start) itself
 *   owner r  its keys in input order, CHUNK at a time: gather their
 *            hashes, test them against the older stages, prefetch the
 *            newest stage's lines of those still absent, test-and-set
 *            them (filter_blocks_test_and_set), scatter the answers
 *   caller   waits for every owner, then sums the fresh counts into the
 *            cascade's counts, as cascade.c's add_piece would
 *
 * Block b of B goes to region floor(b R / B): consecutive ranges, so the
 * pages an owner touches are its own, and a block (one cache line) is
 * never written by two threads. The answers land in present[] at distinct
 * bytes; the owners' fresh counts sit a cache line apart.
 *
 * The handover is one mutex and two condition variables, used twice per
 * piece of thousands of keys; an owner sleeps between pieces, so idle
 * owners cost no CPU beside the pipeline's threads.
 */
#include "owners.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* Keys an owner gathers at a time: its scratch stays on its stack and in L1. */
#define CHUNK 256

/*
 * A piece shorter than this many keys per region is done on the calling
 * thread: waking the owners would cost more than it saves. Any piece
 * length gives the same results (owners.h), so this only moves work.
 */
#define MIN_PER_REGION 64

/* The piece the owners are working. */
struct job {
	struct cascade *c;
	const uint64_t *h;		/* the piece's hashes, two words a key */
	const uint64_t *base;		/* each key's block in the newest stage (a word index) */
	const size_t *order;		/* key indexes grouped by region, input order within */
	const size_t *start;		/* region r's keys: order[start[r] .. start[r + 1]) */
	unsigned char *present;		/* the piece's answers */
};

/* One region's result, a cache line of its own. */
struct tally {
	size_t fresh;
	char pad[64 - sizeof(size_t)];
};

struct owner_arg {
	struct owners *o;
	unsigned region;
};

struct owners {
	unsigned regions;
	unsigned started;		/* threads running: regions 1 .. started */
	pthread_t *threads;
	struct owner_arg *args;
	pthread_mutex_t mu;
	pthread_cond_t go, idle;
	uint64_t round;			/* pieces handed out; under mu */
	unsigned busy;			/* owners still on this round; under mu */
	int quit;			/* under mu */
	struct job job;
	struct tally *tally;		/* [regions] */
	size_t *start, *cursor;		/* [regions + 1], [regions] */
	uint64_t *base;			/* scratch for a piece: [cap] */
	size_t *order;
	uint32_t *region_of;
	size_t cap;
};

/* Test-and-set n keys of a region, given by index into the piece; how many were new. */
static size_t chunk_work(const struct job *j, const size_t *idx, size_t n)
{
	const struct cascade *c = j->c;
	struct filter *newest = c->stages[c->nstages - 1];
	uint64_t hh[2 * CHUNK], bb[CHUNK], ob[CHUNK];
	unsigned char pres[CHUNK], more[CHUNK];
	size_t pos[CHUNK], nf = 0, fresh;

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
	for (size_t i = 0; i < nf; i++)
		__builtin_prefetch(newest->words + bb[i], 1);
	fresh = filter_blocks_test_and_set(newest, bb, hh, nf, more);
	for (size_t i = 0; i < nf; i++)
		/* pos[0 .. nf) was filled by the compacting loop above */
		/* cppcheck-suppress uninitvar */
		j->present[pos[i]] = more[i];
	return fresh;
}

static void region_work(struct owners *o, unsigned r)
{
	const struct job *j = &o->job;
	size_t fresh = 0;

	for (size_t from = j->start[r]; from < j->start[r + 1]; from += CHUNK) {
		size_t left = j->start[r + 1] - from;

		fresh += chunk_work(j, j->order + from, left < CHUNK ? left : CHUNK);
	}
	o->tally[r].fresh = fresh;
}

/* An owner thread: one region of every piece, until owners_free. */
static void *owner_main(void *arg)
{
	const struct owner_arg *a = arg;
	struct owners *o = a->o;
	uint64_t seen = 0;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->quit && o->round == seen)
			pthread_cond_wait(&o->go, &o->mu);
		if (o->quit)
			break;
		seen = o->round;
		pthread_mutex_unlock(&o->mu);
		region_work(o, a->region);
		pthread_mutex_lock(&o->mu);
		if (--o->busy == 0)
			pthread_cond_signal(&o->idle);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* Hand the job out, work the caller's regions, wait for the rest. */
static void run_round(struct owners *o)
{
	pthread_mutex_lock(&o->mu);
	o->round++;
	o->busy = o->started;
	pthread_cond_broadcast(&o->go);
	pthread_mutex_unlock(&o->mu);
	region_work(o, 0);
	for (unsigned r = o->started + 1; r < o->regions; r++)
		region_work(o, r);
	pthread_mutex_lock(&o->mu);
	while (o->busy > 0)
		pthread_cond_wait(&o->idle, &o->mu);
	pthread_mutex_unlock(&o->mu);
}

/*
 * order[] = 0 .. n-1 grouped by the region of each key's block, input
 * order within a region. The region is any fixed function of the block
 * (results do not depend on it, owners.h); the floating multiply spares
 * a division per key, and the clamp keeps rounding inside the range.
 */
static void sort_by_region(struct owners *o, const struct filter *newest, size_t n)
{
	double scale = (double)o->regions / (double)(newest->params.m / FILTER_BLOCK_BITS);
	unsigned last = o->regions - 1;

	memset(o->start, 0, (o->regions + 1) * sizeof *o->start);
	for (size_t i = 0; i < n; i++) {
		unsigned r = (unsigned)((double)(o->base[i] / 8) * scale);

		o->region_of[i] = r < last ? r : last;
		o->start[o->region_of[i] + 1]++;
	}
	for (unsigned r = 0; r < o->regions; r++) {
		o->start[r + 1] += o->start[r];
		o->cursor[r] = o->start[r];
	}
	for (size_t i = 0; i < n; i++)
		o->order[o->cursor[o->region_of[i]]++] = i;
}

/* A piece no longer than the newest stage's room, over every region; how many were new. */
static size_t shared_piece(struct owners *o, struct cascade *c, const uint64_t *h, size_t n,
			   unsigned char *present)
{
	struct filter *newest = c->stages[c->nstages - 1];
	size_t added = 0;

	filter_blocks_of(newest, h, n, o->base);
	sort_by_region(o, newest, n);
	o->job = (struct job){ c, h, o->base, o->order, o->start, present };
	run_round(o);
	for (unsigned r = 0; r < o->regions; r++)
		added += o->tally[r].fresh;
	/* as add_piece in cascade.c: new keys only, or every key offered */
	newest->insertions += c->count_new_only ? added : n;
	c->newest_keys += added;
	return added;
}

/* Keys the newest stage may still take as new; SIZE_MAX when it never fills. */
static size_t room_in_newest(const struct cascade *c)
{
	uint64_t cap = c->stages[c->nstages - 1]->params.capacity;
	uint64_t room = cap > c->newest_keys ? cap - c->newest_keys : 0;

	if (c->growth == 0 || room > SIZE_MAX)
		return SIZE_MAX;
	return (size_t)room;
}

/* Room for a piece of n keys; 0 or -1. */
static int reserve(struct owners *o, size_t n)
{
	uint64_t *base;
	size_t *order;
	uint32_t *region_of;

	if (n <= o->cap)
		return 0;
	base = realloc(o->base, n * sizeof *base);
	if (base != NULL)
		o->base = base;
	order = realloc(o->order, n * sizeof *order);
	if (order != NULL)
		o->order = order;
	region_of = realloc(o->region_of, n * sizeof *region_of);
	if (region_of != NULL)
		o->region_of = region_of;
	if (base == NULL || order == NULL || region_of == NULL)
		return -1;
	o->cap = n;
	return 0;
}

int owners_test_and_add(struct owners *o, struct cascade *c, const struct line *keys,
			const uint64_t *h, size_t n, unsigned char *present, size_t *fresh,
			const char **errstr)
{
	size_t done = 0, total = 0, got;

	*fresh = 0;
	if (reserve(o, n) < 0) {
		*errstr = strerror(ENOMEM);
		return -1;
	}
	while (done < n) {
		size_t len = n - done, room = room_in_newest(c);

		if (room < len)
			len = room;
		if (len >= (size_t)o->regions * MIN_PER_REGION && o->regions > 1) {
			total += shared_piece(o, c, h + 2 * done, len, present + done);
			done += len;
			continue;
		}
		/* short, or the newest stage is full: one thread, as -j 1 (it adds the stage) */
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

/* Start the owners of regions 1 .. regions-1 with every signal blocked; how many started. */
static unsigned start_owners(struct owners *o)
{
	sigset_t all, old;
	unsigned started = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started + 1 < o->regions) {
		o->args[started] = (struct owner_arg){ o, started + 1 };
		if (pthread_create(&o->threads[started], NULL, owner_main, &o->args[started]) != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}

struct owners *owners_new(unsigned regions, const char **errstr)
{
	struct owners *o = calloc(1, sizeof *o);

	if (o == NULL || regions < 1 || regions > 256) {
		free(o);
		*errstr = o == NULL ? strerror(ENOMEM) : "region count out of range";
		return NULL;
	}
	o->regions = regions;
	o->threads = calloc(regions, sizeof *o->threads);
	o->args = calloc(regions, sizeof *o->args);
	o->tally = calloc(regions, sizeof *o->tally);
	o->start = calloc(regions + 1, sizeof *o->start);
	o->cursor = calloc(regions, sizeof *o->cursor);
	if (!o->threads || !o->args || !o->tally || !o->start || !o->cursor) {
		owners_free(o);
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->go, NULL);
	pthread_cond_init(&o->idle, NULL);
	o->started = start_owners(o);
	return o;
}

void owners_free(struct owners *o)
{
	if (o == NULL)
		return;
	if (o->threads != NULL && o->args != NULL && o->tally != NULL && o->start != NULL &&
	    o->cursor != NULL) {
		pthread_mutex_lock(&o->mu);
		o->quit = 1;
		pthread_cond_broadcast(&o->go);
		pthread_mutex_unlock(&o->mu);
		for (unsigned i = 0; i < o->started; i++)
			pthread_join(o->threads[i], NULL);
		pthread_cond_destroy(&o->idle);
		pthread_cond_destroy(&o->go);
		pthread_mutex_destroy(&o->mu);
	}
	free(o->threads);
	free(o->args);
	free(o->tally);
	free(o->start);
	free(o->cursor);
	free(o->base);
	free(o->order);
	free(o->region_of);
	free(o);
}
