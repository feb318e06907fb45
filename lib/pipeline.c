/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - the two-thread batch pipeline (see pipeline.h).
 *
 * Why two threads and this split: on the 2-core machines bftools is
 * measured on, one thread cannot keep up with a pipe. Per line, reading
 * and splitting cost ~10-20 ns, SipHash ~20 ns, probing the filter ~10-40
 * ns, output a few ns. Adding to a filter and writing output must happen
 * in input order (a repeat must meet the first copy), but hashing, and
 * testing against a filter nobody changes, can run anywhere. So the reader
 * thread reads ahead, and every moment it is not reading it takes work off
 * the slots waiting to be consumed; the calling thread does whatever work
 * of its current slot is left, then consumes it. That balances itself:
 * when reading is cheap (page cache) the reader hashes most keys; when it
 * is slow (a slow pipe) the calling thread hashes everything.
 *
 * Work is claimed in chunks of CHUNK units by an atomic fetch-add on the
 * slot's `next`, and reported finished through its `done`; the consumer
 * waits (yielding) only for a chunk the reader has claimed and not yet
 * finished, a few microseconds at most. Everything else is one mutex and
 * one condition variable, touched once per batch of thousands of lines.
 *
 * Early stop (bfgrep -q on `tail -f`): the reader may be blocked in read(2)
 * for ever, so it runs with cancellation disabled except inside fill, and
 * the calling thread cancels it there before joining.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"

/* Units (keys) claimed at a time: big enough for SIMD hashing and few atomics, small enough to share. */
#define CHUNK 256

struct slot {
	size_t units;
	atomic_size_t next;	/* first unit not yet claimed */
	atomic_size_t done;	/* units finished */
};

struct pipeline {
	const struct pipeline_fns *fns;
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	struct slot slots[PIPELINE_SLOTS];
	unsigned head;		/* next slot to fill */
	unsigned tail;		/* next slot to consume */
	unsigned filled;	/* slots filled and not yet consumed */
	int end;		/* fill reported the end */
	int stop;		/* the consumer stopped early */
	int in_fill;		/* the reader is inside fill (cancellable) */
	/*
	 * The reader's out-parameters live here, not in its stack frames: a
	 * thread cancelled with address-taken locals in its frames trips a
	 * false report in gcc's AddressSanitizer when it exits
	 * (google/sanitizers#1399), and `make asan` runs under it.
	 */
	size_t fill_units;
	int cancel_state;
};

/* Claim and do one chunk of s's work; 0 when none was left to claim. */
static int work_chunk(struct pipeline *p, unsigned slot)
{
	struct slot *s = &p->slots[slot];
	size_t from = atomic_fetch_add(&s->next, CHUNK);
	size_t to;

	if (from >= s->units)
		return 0;
	to = s->units - from < CHUNK ? s->units : from + CHUNK;
	p->fns->work(p->ctx, slot, from, to);
	atomic_fetch_add(&s->done, to - from);
	return 1;
}

/* The oldest filled slot with work left to claim, or -1. Called locked. */
static int slot_with_work(const struct pipeline *p)
{
	for (unsigned i = 0; i < p->filled; i++) {
		unsigned slot = (p->tail + i) % PIPELINE_SLOTS;
		const struct slot *s = &p->slots[slot];

		if (atomic_load(&s->next) < s->units)
			return (int)slot;
	}
	return -1;
}

/* Fill the next slot; 0 at the end of input. Called locked, returns locked. */
static int reader_fill(struct pipeline *p)
{
	unsigned slot = p->head;
	int filled;

	p->in_fill = 1;
	p->fill_units = 0;
	pthread_mutex_unlock(&p->mu);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &p->cancel_state);
	filled = p->fns->fill(p->ctx, slot, &p->fill_units);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &p->cancel_state);
	pthread_mutex_lock(&p->mu);
	p->in_fill = 0;
	if (!filled) {
		p->end = 1;
		pthread_cond_broadcast(&p->changed);
		return 0;
	}
	p->slots[slot].units = p->fill_units;
	atomic_store(&p->slots[slot].next, 0);
	atomic_store(&p->slots[slot].done, 0);
	p->head = (slot + 1) % PIPELINE_SLOTS;
	p->filled++;
	pthread_cond_broadcast(&p->changed);
	return 1;
}

/* Read ahead while there is room; otherwise help with queued work; else wait. */
static void *reader_main(void *arg)
{
	struct pipeline *p = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &p->cancel_state);
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		int slot;

		if (p->filled < PIPELINE_SLOTS) {
			if (!reader_fill(p))
				break;
			continue;
		}
		slot = slot_with_work(p);
		if (slot < 0) {
			pthread_cond_wait(&p->changed, &p->mu);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		while (work_chunk(p, (unsigned)slot))
			;
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The next slot to consume, or -1 at the end of input. */
static int next_full_slot(struct pipeline *p)
{
	int slot = -1;

	pthread_mutex_lock(&p->mu);
	while (p->filled == 0 && !p->end)
		pthread_cond_wait(&p->changed, &p->mu);
	if (p->filled > 0)
		slot = (int)p->tail;
	pthread_mutex_unlock(&p->mu);
	return slot;
}

/* Finish slot's work (the reader may hold a chunk of it), then consume it. */
static int finish_and_consume(struct pipeline *p, unsigned slot)
{
	struct slot *s = &p->slots[slot];

	while (work_chunk(p, slot))
		;
	while (atomic_load(&s->done) < s->units)
		sched_yield();
	return p->fns->consume(p->ctx, slot);
}

static void release_slot(struct pipeline *p, int stop)
{
	pthread_mutex_lock(&p->mu);
	p->tail = (p->tail + 1) % PIPELINE_SLOTS;
	p->filled--;
	p->stop = stop;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
}

/* Stop the reader, cancelling it if it may be blocked reading, and reap it. */
static void stop_reader(struct pipeline *p, pthread_t reader)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->changed);
	if (p->in_fill)
		pthread_cancel(reader);
	pthread_mutex_unlock(&p->mu);
	pthread_join(reader, NULL);
}

static int run_threaded(struct pipeline *p, pthread_t reader)
{
	int slot, stop = 0;

	while (!stop && (slot = next_full_slot(p)) >= 0) {
		stop = finish_and_consume(p, (unsigned)slot);
		release_slot(p, stop != 0);
	}
	stop_reader(p, reader);
	return stop;
}

static int run_inline(const struct pipeline_fns *fns, void *ctx)
{
	size_t units;
	int stop = 0;

	while (!stop && fns->fill(ctx, 0, &units)) {
		if (units > 0)
			fns->work(ctx, 0, 0, units);
		stop = fns->consume(ctx, 0);
	}
	return stop;
}

/* Start the reader with every signal blocked; 0, or -1 if it did not start. */
static int start_reader(struct pipeline *p, pthread_t *reader)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(reader, NULL, reader_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err == 0 ? 0 : -1;
}

int pipeline_run(const struct pipeline_fns *fns, void *ctx, int threads)
{
	struct pipeline p;
	pthread_t reader;
	int stop;

	if (threads < 2)
		return run_inline(fns, ctx);
	memset(&p, 0, sizeof p);
	p.fns = fns;
	p.ctx = ctx;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.changed, NULL);
	for (unsigned i = 0; i < PIPELINE_SLOTS; i++) {
		atomic_init(&p.slots[i].next, 0);
		atomic_init(&p.slots[i].done, 0);
	}
	if (start_reader(&p, &reader) < 0)
		stop = run_inline(fns, ctx);
	else
		stop = run_threaded(&p, reader);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.mu);
	return stop;
}

/* pipeline_set_threads: 0 (the default) leaves the choice below. */
static int threads_set;

void pipeline_set_threads(int threads)
{
	threads_set = threads;
}

int pipeline_threads(void)
{
	const char *env = getenv("BFTOOLS_THREADS");

	if (threads_set == 1 || threads_set == 2)
		return threads_set;
	if (env != NULL && strcmp(env, "1") == 0)
		return 1;
	if (env != NULL && strcmp(env, "2") == 0)
		return 2;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
}
