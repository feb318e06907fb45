/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - the batch pipeline over N threads (see pipeline.h).
 *
 * Why this split: per line, reading and splitting cost ~10-20 ns, SipHash
 * ~20 ns, probing a filter ~10-40 ns (more once it is far bigger than the
 * caches), output a few ns. Adding to a growing filter and writing output
 * must happen in input order (a repeat must meet the first copy), but
 * hashing, testing against a filter nobody changes, and OR-ing bits into
 * a fixed one can run anywhere, in any order. So:
 *
 *   reader   (1 thread)   fills the ring in input order; every moment it
 *                         is not reading it takes work off waiting slots
 *   workers  (T - 2)      only take work off filled slots, oldest first
 *   caller   (1 thread)   does whatever work of its current slot is left,
 *                         then consumes it, in input order
 *
 * That balances itself: when reading is cheap (page cache) the others hash
 * most keys; when it is slow (a slow pipe) the caller hashes everything.
 * The bytes of the result never depend on who did which piece: work only
 * writes per-unit results, or ORs bits (commutative), and everything
 * ordered happens in consume.
 *
 * Work is claimed in chunks of CHUNK units by a compare-and-swap on the
 * slot's `next`, which carries the slot's fill generation in its top bits:
 * a worker that picked a slot and was then descheduled while the slot was
 * consumed and filled again finds the generation changed and claims
 * nothing, instead of a chunk of a batch it did not look at. Finished
 * units are counted in `done`; the caller waits (yielding) only for chunks
 * others have claimed and not yet finished. Everything else is one mutex
 * and one condition variable, touched once per batch of thousands of
 * lines.
 *
 * Early stop (bfgrep -q on `tail -f`): the reader may be blocked in read(2)
 * for ever, so it runs with cancellation disabled except inside fill, and
 * the calling thread cancels it there before joining. Workers never block
 * but on the condition variable, and are woken to leave.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"

/* Units (keys) claimed at a time: big enough for SIMD hashing and few atomics, small enough to share. */
#define CHUNK 256

/* `next` is generation << INDEX_BITS | first unit not yet claimed. */
#define INDEX_BITS 40
#define INDEX_MASK ((UINT64_C(1) << INDEX_BITS) - 1)

#define STRING(x) #x
#define DIGITS(x) STRING(x)

struct slot {
	atomic_size_t units;		/* written by fill, read by claimants */
	atomic_uint_least64_t next;	/* generation, first unit not yet claimed */
	atomic_size_t done;		/* units finished */
	uint64_t gen;			/* fills of this slot so far; under mu */
};

struct pipeline {
	const struct pipeline_fns *fns;
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	struct slot slots[PIPELINE_SLOTS];
	unsigned nslots;	/* slots this run uses */
	unsigned head;		/* next slot to fill */
	unsigned tail;		/* next slot to consume */
	unsigned filled;	/* slots filled and not yet consumed */
	int end;		/* fill reported the end */
	int stop;		/* the consumer stopped early, or the run is over */
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

static uint64_t gen_bits(uint64_t gen)
{
	return gen << INDEX_BITS;
}

/* Claim and do one chunk of slot's fill number gen; 0 when none was left to claim. */
static int work_chunk(struct pipeline *p, unsigned slot, uint64_t gen)
{
	struct slot *s = &p->slots[slot];
	uint_least64_t cur = atomic_load(&s->next);
	size_t from, to, units;

	do {
		if ((cur & ~INDEX_MASK) != gen_bits(gen))
			return 0;	/* consumed and filled again meanwhile */
		from = (size_t)(cur & INDEX_MASK);
		units = atomic_load(&s->units);
		if (from >= units)
			return 0;
		to = units - from < CHUNK ? units : from + CHUNK;
	} while (!atomic_compare_exchange_weak(&s->next, &cur, gen_bits(gen) | to));
	p->fns->work(p->ctx, slot, from, to);
	atomic_fetch_add(&s->done, to - from);
	return 1;
}

/* The oldest filled slot with work left to claim, or -1; *gen its fill. Called locked. */
static int slot_with_work(const struct pipeline *p, uint64_t *gen)
{
	for (unsigned i = 0; i < p->filled; i++) {
		unsigned slot = (p->tail + i) % p->nslots;
		const struct slot *s = &p->slots[slot];

		if ((atomic_load(&s->next) & INDEX_MASK) < atomic_load(&s->units)) {
			*gen = s->gen;
			return (int)slot;
		}
	}
	return -1;
}

/* Fill the next slot; 0 at the end of input. Called locked, returns locked. */
static int reader_fill(struct pipeline *p)
{
	unsigned slot = p->head;
	struct slot *s = &p->slots[slot];
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
	/* units and done before next: a claimant that sees the new generation sees them */
	s->gen = (s->gen + 1) & (UINT64_MAX >> INDEX_BITS);
	atomic_store(&s->units, p->fill_units);
	atomic_store(&s->done, 0);
	atomic_store(&s->next, gen_bits(s->gen));
	p->head = (slot + 1) % p->nslots;
	p->filled++;
	pthread_cond_broadcast(&p->changed);
	return 1;
}

/* Take work off the oldest slots until none is left to claim; 0 when there was none. Locked. */
static int help_locked(struct pipeline *p)
{
	uint64_t gen;
	int slot = slot_with_work(p, &gen);

	if (slot < 0)
		return 0;
	pthread_mutex_unlock(&p->mu);
	while (work_chunk(p, (unsigned)slot, gen))
		;
	pthread_mutex_lock(&p->mu);
	return 1;
}

/* Read ahead while there is room; otherwise help with queued work; else wait. */
static void *reader_main(void *arg)
{
	struct pipeline *p = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &p->cancel_state);
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		if (p->filled < p->nslots && !p->end) {
			if (!reader_fill(p))
				break;
			continue;
		}
		if (!help_locked(p))
			pthread_cond_wait(&p->changed, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* A worker: help with queued work until the run is over. */
static void *worker_main(void *arg)
{
	struct pipeline *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop)
		if (!help_locked(p))
			pthread_cond_wait(&p->changed, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The next slot to consume and its fill, or -1 at the end of input. */
static int next_full_slot(struct pipeline *p, uint64_t *gen)
{
	int slot = -1;

	pthread_mutex_lock(&p->mu);
	while (p->filled == 0 && !p->end)
		pthread_cond_wait(&p->changed, &p->mu);
	if (p->filled > 0) {
		slot = (int)p->tail;
		*gen = p->slots[slot].gen;
	}
	pthread_mutex_unlock(&p->mu);
	return slot;
}

/* Finish slot's work (others may hold chunks of it), then consume it. */
static int finish_and_consume(struct pipeline *p, unsigned slot, uint64_t gen)
{
	struct slot *s = &p->slots[slot];

	while (work_chunk(p, slot, gen))
		;
	while (atomic_load(&s->done) < atomic_load(&s->units))
		sched_yield();
	return p->fns->consume(p->ctx, slot);
}

static void release_slot(struct pipeline *p, int stop)
{
	pthread_mutex_lock(&p->mu);
	p->tail = (p->tail + 1) % p->nslots;
	p->filled--;
	p->stop = stop;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
}

/* Stop every thread, cancelling the reader if it may be blocked reading, and reap them. */
static void stop_threads(struct pipeline *p, pthread_t reader, const pthread_t *workers,
			 int nworkers)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->changed);
	if (p->in_fill)
		pthread_cancel(reader);
	pthread_mutex_unlock(&p->mu);
	pthread_join(reader, NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
}

static int run_threaded(struct pipeline *p)
{
	int slot, stop = 0;
	uint64_t gen = 0;

	while (!stop && (slot = next_full_slot(p, &gen)) >= 0) {
		stop = finish_and_consume(p, (unsigned)slot, gen);
		release_slot(p, stop != 0);
	}
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

/*
 * Start the reader and up to nworkers workers with every signal blocked;
 * how many workers started, or -1 if the reader did not.
 */
static int start_threads(struct pipeline *p, pthread_t *reader, pthread_t *workers, int nworkers)
{
	sigset_t all, old;
	int started = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(reader, NULL, reader_main, p) != 0)
		started = -1;
	while (started >= 0 && started < nworkers &&
	       pthread_create(&workers[started], NULL, worker_main, p) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return started;
}

static void pipeline_init(struct pipeline *p, const struct pipeline_fns *fns, void *ctx,
			  int threads)
{
	memset(p, 0, sizeof *p);
	p->fns = fns;
	p->ctx = ctx;
	p->nslots = threads <= 2 ? 4 : threads + 2 < PIPELINE_SLOTS ? (unsigned)threads + 2
								      : PIPELINE_SLOTS;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->changed, NULL);
	for (unsigned i = 0; i < PIPELINE_SLOTS; i++) {
		atomic_init(&p->slots[i].units, 0);
		atomic_init(&p->slots[i].next, 0);
		atomic_init(&p->slots[i].done, 0);
	}
}

int pipeline_run(const struct pipeline_fns *fns, void *ctx, int threads)
{
	static const int most = PIPELINE_THREADS_MAX - 2;
	struct pipeline p;
	pthread_t reader, *workers;
	int nworkers, stop;

	if (threads < 2)
		return run_inline(fns, ctx);
	nworkers = threads - 2 < most ? threads - 2 : most;
	workers = nworkers > 0 ? malloc((size_t)nworkers * sizeof *workers) : NULL;
	if (workers == NULL)
		nworkers = 0;
	pipeline_init(&p, fns, ctx, threads);
	nworkers = start_threads(&p, &reader, workers, nworkers);
	if (nworkers < 0) {
		stop = run_inline(fns, ctx);
	} else {
		stop = run_threaded(&p);
		stop_threads(&p, reader, workers, nworkers);
	}
	free(workers);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.mu);
	return stop;
}

/*
 * Order-free runs (pipeline_run_free): no ring, no reader; each thread
 * loops on its own slot. The only shared state is the first stop value.
 */
struct free_run {
	const struct pipeline_free_fns *fns;
	void *ctx;
	atomic_int stop;
};

struct free_thread {
	struct free_run *run;
	unsigned slot;
};

static void *free_main(void *arg)
{
	const struct free_thread *t = arg;
	struct free_run *run = t->run;
	size_t units;

	while (atomic_load_explicit(&run->stop, memory_order_relaxed) == 0 &&
	       run->fns->fill(run->ctx, t->slot, &units)) {
		int rc, none = 0;

		if (units > 0)
			run->fns->work(run->ctx, t->slot, 0, units);
		rc = run->fns->consume(run->ctx, t->slot);
		if (rc != 0)
			atomic_compare_exchange_strong(&run->stop, &none, rc);
	}
	return NULL;
}

int pipeline_run_free(const struct pipeline_free_fns *fns, void *ctx, int threads)
{
	struct free_run run = { fns, ctx, 0 };
	struct free_thread each[PIPELINE_SLOTS] = { { NULL, 0 } };	/* [0] always, the rest as used */
	pthread_t ids[PIPELINE_SLOTS];
	sigset_t all, old;
	unsigned n = threads < 1 ? 1 : threads > PIPELINE_SLOTS ? PIPELINE_SLOTS : (unsigned)threads;
	unsigned started = 1;

	atomic_init(&run.stop, 0);
	for (unsigned i = 0; i < n; i++)
		each[i] = (struct free_thread){ &run, i };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started < n && pthread_create(&ids[started], NULL, free_main, &each[started]) == 0)
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free_main(&each[0]);
	for (unsigned i = 1; i < started; i++)
		pthread_join(ids[i], NULL);
	return atomic_load(&run.stop);
}

/* pipeline_set_threads: 0 (the default) leaves the choice below. */
static int threads_set;

void pipeline_set_threads(int threads)
{
	threads_set = threads;
}

int pipeline_parse_threads(const char *text, int *threads, const char **errstr)
{
	long value = 0;

	if (*text == '\0') {
		*errstr = "not a number";
		return -1;
	}
	for (const char *c = text; *c; c++) {
		if (*c < '0' || *c > '9') {
			*errstr = *c == '-' && c == text ? "must be at least 1" : "not a number";
			return -1;
		}
		if (value <= PIPELINE_THREADS_MAX)
			value = value * 10 + (*c - '0');
	}
	if (value < 1 || value > PIPELINE_THREADS_MAX) {
		*errstr = value < 1 ? "must be at least 1" : "too many (at most " DIGITS(PIPELINE_THREADS_MAX) ")";
		return -1;
	}
	*threads = (int)value;
	return 0;
}

int pipeline_threads(void)
{
	const char *env = getenv("BFTOOLS_THREADS"), *why;
	long cpus;
	int threads;

	if (threads_set >= 1 && threads_set <= PIPELINE_THREADS_MAX)
		return threads_set;
	if (env != NULL && pipeline_parse_threads(env, &threads, &why) == 0)
		return threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		return 1;
	return cpus < PIPELINE_THREADS_DEFAULT_MAX ? (int)cpus : PIPELINE_THREADS_DEFAULT_MAX;
}
