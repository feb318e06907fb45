/* SPDX-License-Identifier: MIT */
/*
 * test_parts.c - the pipeline's ordered parts (pipeline_fns.parts,
 * lib/io/pipeline.c): a model of region owners that checks every promise
 * pipeline.h makes about split, part and consume.
 *
 * Each batch has units of work and, unless split says "whole", `parts`
 * parts. Each part p is a lane with a running digest of the batches it
 * saw, in order: part p of batch s folds s into lane p, and consume of a
 * batch done whole folds it into every lane itself. At the end each lane's
 * digest must be the one a single thread makes, so a part skipped, done
 * twice or done out of order shows. Beside that the callbacks note the
 * first broken promise (they may run on any thread, so they never CHECK):
 * work on more units than the batch has (a unit claimed twice), split
 * before the batch's work was finished, or out of order, or (without
 * overlap) before the batch before was consumed; a part of a batch not
 * split in parts, or before a whole batch before it was consumed; a
 * consume before all of its batch's parts. With the finish and worked
 * steps: a finish of a batch not split in parts, before all its parts,
 * or twice; a batch split in parts consumed unfinished; worked before all
 * of a batch's work, twice, for no units, or after the split. Batches are 0..400 units and
 * one in eight is empty; one in five is done whole, so parts of the
 * batches after a whole one must wait for its consume.
 *
 * A run that hangs (a lost wake-up) would hang the suite: each runs in a
 * forked child with a time limit, as the cancellation tests do.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline.h"
#include "unit.h"

#define MAX_UNITS 400
#define MAX_PARTS 8

/* How a batch was split, as the model saw it. */
enum { NOT_SPLIT, IN_PARTS, WHOLE };

struct batch {
	uint64_t seq;
	size_t units;
	atomic_uint worked;		/* units worked */
	atomic_int split;		/* NOT_SPLIT, IN_PARTS, WHOLE */
	atomic_uint parts_done;
	atomic_uint finished;		/* finish calls */
	atomic_uint hooked;		/* worked calls */
};

struct model {
	uint64_t batches, filled;	/* fill's */
	uint64_t rng;			/* fill's sizes */
	unsigned parts;
	int overlap;
	int finishing;			/* a finish step given */
	atomic_uint_least64_t finishes;
	pthread_t caller;
	uint64_t split_next;		/* the caller's: the batch split comes next */
	atomic_uint_least64_t consumed;	/* batches consumed */
	atomic_uint_least64_t last_whole_plus1;	/* the latest batch done whole, + 1 (0: none) */
	uint64_t lane[MAX_PARTS];	/* each part's digest; lane p only by its part */
	atomic_int broken;
	const char *why;
	struct batch slots[PIPELINE_SLOTS];
};

static void broken(struct model *m, const char *why)
{
	if (atomic_exchange(&m->broken, 1) == 0)
		m->why = why;
}

/* The digest step: order matters, so a swap or a repeat changes it. */
static uint64_t fold(uint64_t digest, uint64_t seq)
{
	return (digest ^ (seq + 1)) * UINT64_C(0x100000001b3) + 7;
}

static int whole_batch(uint64_t seq)
{
	return seq % 5 == 3;
}

static int parts_fill(void *ctx, unsigned slot, size_t *units)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];
	uint64_t r;

	if (m->filled == m->batches)
		return 0;
	r = unit_splitmix64(&m->rng);
	b->seq = m->filled++;
	b->units = (r >> 32) % 8 == 0 ? 0 : (size_t)(r % (MAX_UNITS + 1));
	atomic_store(&b->worked, 0);
	atomic_store(&b->split, NOT_SPLIT);
	atomic_store(&b->parts_done, 0);
	atomic_store(&b->finished, 0);
	atomic_store(&b->hooked, 0);
	*units = b->units;
	return 1;
}

static void parts_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];
	unsigned before = atomic_fetch_add(&b->worked, (unsigned)(to - from));

	/* beyond the batch: a unit claimed twice, or one of another batch's */
	if (to > b->units || before + (to - from) > b->units)
		broken(m, "work ran on more units than its batch has");
}

static void parts_worked(void *ctx, unsigned slot)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];

	if (atomic_load(&b->worked) != b->units || b->units == 0)
		broken(m, "worked ran before all of a batch's work, or for a batch of no units");
	if (atomic_load(&b->split) != NOT_SPLIT)
		broken(m, "worked ran after the batch was split");
	if (atomic_fetch_add(&b->hooked, 1) != 0)
		broken(m, "worked ran twice for a batch");
}

static int parts_split(void *ctx, unsigned slot)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];

	if (m->finishing && atomic_load(&b->hooked) != (b->units > 0))
		broken(m, "a batch was split before worked ran, or worked ran for no units");

	if (!pthread_equal(pthread_self(), m->caller))
		broken(m, "split ran on another thread than the caller");
	if (atomic_load(&b->worked) != b->units)
		broken(m, "split came before the batch's work was done");
	if (b->seq != m->split_next++)
		broken(m, "batches were split out of order");
	if (!m->overlap && atomic_load(&m->consumed) != b->seq)
		broken(m, "without overlap, a batch was split before the one before was consumed");
	if (b->seq > 0 && atomic_load(&m->consumed) < b->seq && whole_batch(b->seq - 1))
		broken(m, "a batch was split before the one before, done whole, was consumed");
	atomic_store(&b->split, whole_batch(b->seq) ? WHOLE : IN_PARTS);
	return !whole_batch(b->seq);
}

static void parts_part(void *ctx, unsigned slot, unsigned part)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];

	if (part >= m->parts) {
		broken(m, "a part number out of range");
		return;
	}
	if (atomic_load(&b->split) != IN_PARTS)
		broken(m, "a part of a batch not split in parts");
	if (atomic_load(&m->last_whole_plus1) > b->seq &&
	    atomic_load(&m->consumed) < atomic_load(&m->last_whole_plus1))
		broken(m, "a part ran before the batch done whole before it was consumed");
	m->lane[part] = fold(m->lane[part], b->seq);
	atomic_fetch_add(&b->parts_done, 1);
}

static void parts_finish(void *ctx, unsigned slot)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];

	if (atomic_load(&b->split) != IN_PARTS)
		broken(m, "a batch not split in parts was finished");
	if (atomic_load(&b->parts_done) != m->parts)
		broken(m, "a batch was finished before all its parts were done");
	if (atomic_fetch_add(&b->finished, 1) != 0)
		broken(m, "a batch was finished twice");
	atomic_fetch_add(&m->finishes, 1);
}

static int parts_consume(void *ctx, unsigned slot)
{
	struct model *m = ctx;
	struct batch *b = &m->slots[slot];
	int split = atomic_load(&b->split);

	if (b->seq != atomic_load(&m->consumed))
		broken(m, "batches were consumed out of order");
	if (split == NOT_SPLIT)
		broken(m, "a batch was consumed without being split");
	if (split == IN_PARTS && atomic_load(&b->parts_done) != m->parts)
		broken(m, "a batch was consumed before all its parts were done");
	if (m->finishing && split == IN_PARTS && atomic_load(&b->finished) != 1)
		broken(m, "a batch split in parts was consumed before its finish");
	if (split == WHOLE) {
		atomic_store(&m->last_whole_plus1, b->seq + 1);
		for (unsigned p = 0; p < m->parts; p++)
			m->lane[p] = fold(m->lane[p], b->seq);
	}
	atomic_fetch_add(&m->consumed, 1);
	return 0;
}

/* One run; 0 when every promise held and every lane's digest is one thread's. */
static int run_parts(int threads, unsigned parts, int overlap, int finishing, uint64_t batches)
{
	struct pipeline_fns fns = { .fill = parts_fill, .work = parts_work,
				    .consume = parts_consume, .split = parts_split,
				    .part = parts_part, .parts = parts, .overlap = overlap,
				    .finish = finishing ? parts_finish : NULL,
				    .worked = finishing ? parts_worked : NULL };
	struct model *m = calloc(1, sizeof *m);
	uint64_t want = 0, in_parts = 0;
	int ok;

	if (m == NULL)
		return 1;
	m->finishing = finishing;
	m->batches = batches;
	m->rng = 1234 + (uint64_t)threads;
	m->parts = parts;
	m->overlap = overlap;
	m->caller = pthread_self();
	ok = pipeline_run(&fns, m, threads) == 0 && !atomic_load(&m->broken) &&
	     atomic_load(&m->consumed) == batches;
	for (uint64_t s = 0; s < batches; s++) {
		want = fold(want, s);
		in_parts += !whole_batch(s);
	}
	if (ok && atomic_load(&m->finishes) != (finishing ? in_parts : 0))
		broken(m, "not every batch split in parts was finished once");
	ok = ok && !atomic_load(&m->broken);
	for (unsigned p = 0; ok && p < parts; p++)
		ok = m->lane[p] == want;
	if (atomic_load(&m->broken))	/* in the child: the parent says which run */
		printf("#   %s\n", m->why);
	free(m);
	return ok ? 0 : 1;
}

/* run_parts in a child with a limit of `seconds`: 0 ok, 1 failed, 2 hung. */
static int run_parts_limited(int threads, unsigned parts, int overlap, int finishing,
			     uint64_t batches, int seconds)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 1;
	if (pid == 0) {
		int rc = run_parts(threads, parts, overlap, finishing, batches);

		fflush(stdout);
		_exit(rc);
	}
	for (int waited = 0; waited < seconds * 100; waited++) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };

		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) != 0 : 1;
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 2;
}

static void every_promise_holds(int overlap, int finishing)
{
	static const int threads[] = { 1, 2, 3, 4, 8 };
	static const unsigned parts[] = { 1, 2, 3, 7 };

	for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
		for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
			/* 2000 batches take milliseconds: a minute is a hang */
			int rc = run_parts_limited(threads[t], parts[p], overlap, finishing, 2000, 60);

			CHECKF(rc == 0, "%d threads, %u parts, overlap %d, finish %d: %s", threads[t],
			       parts[p], overlap, finishing, rc == 2 ? "hung" : "a promise broken");
		}
}

static void without_overlap(void) { every_promise_holds(0, 0); }
static void with_overlap(void) { every_promise_holds(1, 0); }
static void finishing_without_overlap(void) { every_promise_holds(0, 1); }
static void finishing_with_overlap(void) { every_promise_holds(1, 1); }

void suite_parts(void)
{
	unit_run("pipeline parts: 1-8 threads, 1-7 parts, no overlap: every part once, in each lane's order, after split and before consume; whole batches hold later parts back",
		 without_overlap);
	unit_run("pipeline parts: 1-8 threads, 1-7 parts, overlap: the same promises, a batch split before the one before is consumed",
		 with_overlap);
	unit_run("pipeline parts: with finish and worked steps, no overlap: each batch worked once after its work and before its split, each split in parts finished once, after its parts, before its consume",
		 finishing_without_overlap);
	unit_run("pipeline parts: with finish and worked steps, and overlap: the same",
		 finishing_with_overlap);
}
