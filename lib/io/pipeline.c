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
 * units are counted in the slot's `units_worked`; the thread finishing
 * the last runs fns->worked, if any, and only then sets `done`, which is
 * what the calling thread looks at. For chunks others have claimed and
 * not yet finished (a whole range of a file, it may be) the caller takes
 * other work or sleeps on the condition `worked`, which that thread
 * signals. Everything else is one mutex and two condition variables,
 * touched once per batch of thousands of lines.
 *
 * Ordered parts (pipeline_fns.parts): each part is a lane, worked batch
 * after batch by whichever thread holds it. A lane's `next` is the batch
 * (its fill number) whose part is due; it is done once the calling thread
 * has split that batch (`split_upto`, which only the calling thread
 * moves), and a thread takes a lane by setting its `busy` flag, does its
 * parts that are due, in order, and lets it go; then it looks again,
 * since a split may have come meanwhile (so no part is left with nobody
 * to do it). A slot's `tag` says which batch it holds and how that was
 * split, in one word, so a lane can tell a batch done whole (or gone, and
 * the slot filled again) from one of its own to do. The thread that does
 * a batch's last part (counted in `parts_worked`) runs its finish, if
 * any, with the lane let go so that the lane's later parts go on
 * elsewhere, then marks the parts done and wakes the calling thread,
 * which may be waiting for it to consume.
 *
 * Early stop (bfgrep -q on `tail -f`): the reader may be blocked in read(2)
 * for ever, so it runs with cancellation disabled except inside fill, and
 * the calling thread cancels it there before joining. Workers never block
 * but on the condition variable, and are woken to leave.
 *
 * Halting (pipeline_halt): a program that exits from inside consume (a
 * write error) must not leave the other threads running while exit(3)
 * runs its handlers: gcov's, for one, writes counters that those threads
 * are still updating, and derives negative counts from them. Each run
 * links itself into a list kept per calling thread (thread-local, as only
 * the thread that started a run can stop and join its threads), and the
 * halt stops and joins them exactly as the end of the run would.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"
#include "stopwatch.h"

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
	atomic_size_t units_worked;	/* units finished */
	atomic_size_t done;		/* units, once finished and fns->worked has run */
	uint64_t gen;			/* fills of this slot so far; under mu */
	atomic_uint_least64_t tag;	/* batch number << 2 | SPLIT_* (parts only) */
	atomic_uint parts_worked;	/* of its batch's parts */
	atomic_uint parts_done;		/* parts, once worked and finished (fns->finish) */
};

/* How a batch was split (the low bits of a slot's tag). */
enum { SPLIT_NOT_YET, SPLIT_PARTS, SPLIT_WHOLE };

/* One part's lane (see "Ordered parts" above), on a cache line of its own. */
struct lane {
	_Alignas(64) atomic_uint_least64_t next;	/* the batch whose part is due */
	atomic_int busy;			/* a thread is doing its parts */
};

struct pipeline {
	const struct pipeline_fns *fns;
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t changed;
	pthread_cond_t worked;	/* a slot's last unit is done: for the calling thread */
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
	/* the threads of the run, for stop_threads; joined: reaped (by a halt, maybe) */
	pthread_t reader, *workers;
	int nworkers;
	int joined;
	/* ordered parts (fns->parts > 0) */
	struct lane *lanes;			/* [fns->parts] */
	atomic_uint_least64_t fills;		/* batches filled so far */
	atomic_uint_least64_t split_upto;	/* batches split so far: the calling thread's */
	uint64_t consumed;			/* batches consumed so far: the calling thread's */
	atomic_uint threads_started;		/* for each thread's first lane */
};

/* A run in progress on this thread, innermost first (see "Halting" above). */
struct run_link {
	void (*halt)(void *run);
	void *run;
	struct run_link *outer;
};

static _Thread_local struct run_link *runs;

/* The lane a thread looks at first: each its own, so each keeps to a region's pages. */
static _Thread_local unsigned first_lane;

static void link_run(struct run_link *l, void (*halt)(void *), void *run)
{
	l->halt = halt;
	l->run = run;
	l->outer = runs;
	runs = l;
}

static void unlink_run(const struct run_link *l)
{
	runs = l->outer;
}

void pipeline_halt(void)
{
	for (struct run_link *l = runs; l != NULL; l = l->outer)
		l->halt(l->run);
}

static uint64_t gen_bits(uint64_t gen)
{
	return gen << INDEX_BITS;
}

static void wake_caller(struct pipeline *p)
{
	pthread_mutex_lock(&p->mu);
	pthread_cond_signal(&p->worked);
	pthread_mutex_unlock(&p->mu);
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
	/* the slot's last units: the calling thread may be asleep waiting to consume it */
	if (atomic_fetch_add(&s->units_worked, to - from) + (to - from) == units) {
		if (p->fns->worked != NULL)
			p->fns->worked(p->ctx, slot);
		atomic_store(&s->done, units);
		wake_caller(p);
	}
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
	/*
	 * Close the slot under the new generation before units changes: a
	 * claimant that read the old `next` and then the new `units` would
	 * otherwise claim units of this batch as the old one's, and count
	 * them done twice. Then units and done before next opens it: a
	 * claimant that sees the new generation sees them.
	 */
	s->gen = (s->gen + 1) & (UINT64_MAX >> INDEX_BITS);
	atomic_store(&s->next, gen_bits(s->gen) | INDEX_MASK);
	atomic_store(&s->units, p->fill_units);
	atomic_store(&s->units_worked, 0);
	atomic_store(&s->done, 0);
	atomic_store(&s->parts_worked, 0);
	atomic_store(&s->parts_done, 0);
	atomic_store(&s->tag, atomic_load(&p->fills) << 2 | SPLIT_NOT_YET);
	atomic_fetch_add(&p->fills, 1);
	atomic_store(&s->next, gen_bits(s->gen));
	p->head = (slot + 1) % p->nslots;
	p->filled++;
	pthread_cond_broadcast(&p->changed);
	return 1;
}

static void wake_all(struct pipeline *p)
{
	pthread_mutex_lock(&p->mu);
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
}

/* Whether lane l has a part due that nobody is doing. */
static int lane_ready(const struct pipeline *p, const struct lane *l)
{
	return !atomic_load(&l->busy) && atomic_load(&l->next) < atomic_load(&p->split_upto);
}

static int parts_ready(const struct pipeline *p)
{
	for (unsigned i = 0; i < p->fns->parts; i++)
		if (lane_ready(p, &p->lanes[i]))
			return 1;
	return 0;
}

/* Slot's batch has all its parts done and finished: the calling thread may wait to consume it. */
static void parts_finished(struct pipeline *p, unsigned slot)
{
	atomic_store(&p->slots[slot].parts_done, p->fns->parts);
	wake_caller(p);		/* no one else waits on parts done */
}

/*
 * Lane i's due part of batch seq, in its slot unless that batch was done
 * whole (or is gone: the slot holds a later batch); then the lane moves
 * on. Returns the slot when that was the batch's last part and it has a
 * finish still to run, else -1.
 */
static int lane_step(struct pipeline *p, unsigned i, uint64_t seq)
{
	unsigned slot = (unsigned)(seq % p->nslots);
	struct slot *s = &p->slots[slot];
	int finish = -1;

	if (atomic_load(&s->tag) == (seq << 2 | SPLIT_PARTS)) {
		p->fns->part(p->ctx, slot, i);
		if (atomic_fetch_add(&s->parts_worked, 1) + 1 == p->fns->parts) {
			if (p->fns->finish != NULL)
				finish = (int)slot;
			else
				parts_finished(p, slot);
		}
	}
	atomic_store(&p->lanes[i].next, seq + 1);
	return finish;
}

/*
 * Take lane i if free and do its due parts, until none is due; 1 when any
 * was done. A batch's finish runs with the lane let go, so that its later
 * parts go on meanwhile on other threads.
 */
static int lane_work(struct pipeline *p, unsigned i)
{
	struct lane *l = &p->lanes[i];
	int did = 0;

	/* looked at again after letting go: a split may have come in between */
	while (lane_ready(p, l) && !atomic_exchange(&l->busy, 1)) {
		uint64_t seq;
		int finish = -1;

		while (finish < 0 && (seq = atomic_load(&l->next)) < atomic_load(&p->split_upto)) {
			finish = lane_step(p, i, seq);
			did = 1;
		}
		atomic_store(&l->busy, 0);
		if (finish >= 0) {
			p->fns->finish(p->ctx, (unsigned)finish);
			parts_finished(p, (unsigned)finish);
		}
	}
	return did;
}

/* Do whatever parts are due, every lane once from `first` on; 1 when any was done. */
static int help_parts(struct pipeline *p, unsigned first)
{
	int did = 0;

	for (unsigned n = 0; n < p->fns->parts; n++)
		did |= lane_work(p, (first + n) % p->fns->parts);
	return did;
}

/*
 * Take work off the oldest slots until none is left to claim, parts first
 * (a consume waits on them); 0 when there was none. Locked; 1 also when
 * it let go of the lock, since what the caller saw before may have
 * changed meanwhile (the reader's room to fill, above all) and its
 * wake-up gone by.
 */
static int help_locked(struct pipeline *p)
{
	uint64_t gen;
	int slot;

	if (p->fns->parts > 0 && parts_ready(p)) {
		pthread_mutex_unlock(&p->mu);
		(void)help_parts(p, first_lane % p->fns->parts);
		pthread_mutex_lock(&p->mu);
		return 1;
	}
	slot = slot_with_work(p, &gen);
	if (slot < 0)
		return 0;
	pthread_mutex_unlock(&p->mu);
	while (work_chunk(p, (unsigned)slot, gen))
		;
	pthread_mutex_lock(&p->mu);
	return 1;
}

/*
 * The calling thread's help while it waits for its oldest batch: parts
 * only once two workers or more share the rest. A unit may be a whole
 * range of a file (8192 lines: half a millisecond), and every batch
 * after waits on the calling thread's split and consume: with 16
 * threads, one unit taken here stalled the ordered step for several
 * batches' worth of the others' work. Locked, as help_locked.
 */
static int help_ordered_locked(struct pipeline *p)
{
	if (p->nworkers < 2)
		return help_locked(p);
	if (p->fns->parts == 0 || !parts_ready(p))
		return 0;
	pthread_mutex_unlock(&p->mu);
	(void)help_parts(p, first_lane % p->fns->parts);
	pthread_mutex_lock(&p->mu);
	return 1;
}

/* Read ahead while there is room; otherwise help with queued work; else wait. */
static void *reader_main(void *arg)
{
	struct pipeline *p = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &p->cancel_state);
	first_lane = atomic_fetch_add(&p->threads_started, 1);
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

	first_lane = atomic_fetch_add(&p->threads_started, 1);
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

	STOPWATCH(LAP_LOCK, pthread_mutex_lock(&p->mu));
	while (p->filled == 0 && !p->end)
		STOPWATCH(LAP_WAIT_BATCH, pthread_cond_wait(&p->changed, &p->mu));
	if (p->filled > 0) {
		slot = (int)p->tail;
		*gen = p->slots[slot].gen;
	}
	pthread_mutex_unlock(&p->mu);
	return slot;
}

/* Whether batch seq (filled, not consumed) has all its work done. */
static int worked(const struct pipeline *p, uint64_t seq)
{
	const struct slot *s = &p->slots[seq % p->nslots];

	return atomic_load(&s->done) >= atomic_load(&s->units);
}

/*
 * Calling thread: split, in input order, the batches that may be split
 * now: their work done, and the batch before consumed, or (overlap) split
 * into parts itself. Wakes the other threads when it made parts.
 */
static void split_ready(struct pipeline *p)
{
	uint64_t seq;
	int made = 0;

	while ((seq = atomic_load(&p->split_upto)) < atomic_load(&p->fills) && worked(p, seq)) {
		struct slot *s = &p->slots[seq % p->nslots];
		int parts;

		if (seq > p->consumed &&
		    (!p->fns->overlap ||
		     atomic_load(&p->slots[(seq - 1) % p->nslots].tag) != ((seq - 1) << 2 | SPLIT_PARTS)))
			break;
		STOPWATCH(LAP_SPLIT, parts = p->fns->split(p->ctx, (unsigned)(seq % p->nslots)) != 0);
		atomic_store(&s->tag, seq << 2 | (parts ? SPLIT_PARTS : SPLIT_WHOLE));
		atomic_store(&p->split_upto, seq + 1);
		made |= parts;
	}
	if (made)
		wake_all(p);
}

/*
 * Calling thread: split slot's batch (the oldest) and see its parts done,
 * doing parts and other work meanwhile; with overlap, split what follows
 * so that its parts go on during the consume.
 */
static void finish_parts(struct pipeline *p, unsigned slot)
{
	struct slot *s = &p->slots[slot];

	split_ready(p);
	while ((atomic_load(&s->tag) & 3) == SPLIT_PARTS &&
	       atomic_load(&s->parts_done) < p->fns->parts) {
		int helped;

		STOPWATCH(LAP_HELP, helped = help_parts(p, first_lane));
		if (helped)
			continue;
		/* parts come due only by this thread's split: the last part of s wakes it (lane_step) */
		STOPWATCH(LAP_LOCK, pthread_mutex_lock(&p->mu));
		if (!help_ordered_locked(p) && atomic_load(&s->parts_done) < p->fns->parts &&
		    !parts_ready(p))
			STOPWATCH(LAP_WAIT_PARTS, pthread_cond_wait(&p->worked, &p->mu));
		pthread_mutex_unlock(&p->mu);
		split_ready(p);
	}
	split_ready(p);
	if (parts_ready(p))
		wake_all(p);	/* parts left that this thread will not do while it consumes */
}

/* Finish slot's work (others may hold chunks of it), then consume it. */
static int finish_and_consume(struct pipeline *p, unsigned slot, uint64_t gen)
{
	struct slot *s = &p->slots[slot];
	int stop;

	while (work_chunk(p, slot, gen))
		;
	/*
	 * Others hold the rest of its units (a whole range of a file, it may
	 * be): help with other work meanwhile, else sleep until the last
	 * unit's thread says so (work_chunk), rather than spin.
	 */
	while (atomic_load(&s->done) < atomic_load(&s->units)) {
		STOPWATCH(LAP_LOCK, pthread_mutex_lock(&p->mu));
		if (!help_ordered_locked(p) && atomic_load(&s->done) < atomic_load(&s->units))
			STOPWATCH(LAP_WAIT_WORK, pthread_cond_wait(&p->worked, &p->mu));
		pthread_mutex_unlock(&p->mu);
	}
	if (p->fns->parts > 0)
		finish_parts(p, slot);
	STOPWATCH(LAP_CONSUME, stop = p->fns->consume(p->ctx, slot));
	return stop;
}

static void release_slot(struct pipeline *p, int stop)
{
	p->consumed++;
	STOPWATCH(LAP_LOCK, pthread_mutex_lock(&p->mu));
	p->tail = (p->tail + 1) % p->nslots;
	p->filled--;
	p->stop = stop;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->mu);
}

/*
 * Stop every thread, cancelling the reader if it may be blocked reading,
 * and reap them; once only (a halt may have done it).
 */
static void stop_threads(struct pipeline *p)
{
	if (p->joined)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->changed);
	if (p->in_fill)
		pthread_cancel(p->reader);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->reader, NULL);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i], NULL);
	p->joined = 1;
}

static void halt_ordered(void *run)
{
	stop_threads(run);
}

static int run_threaded(struct pipeline *p)
{
	int slot, stop = 0;
	uint64_t gen = 0;

	/* joined by a halt: the reader is gone, so no slot may be waited for */
	while (!stop && !p->joined && (slot = next_full_slot(p, &gen)) >= 0) {
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
		if (units > 0) {
			fns->work(ctx, 0, 0, units);
			if (fns->worked != NULL)
				fns->worked(ctx, 0);
		}
		if (fns->parts > 0 && fns->split(ctx, 0)) {
			for (unsigned part = 0; part < fns->parts; part++)
				fns->part(ctx, 0, part);
			if (fns->finish != NULL)
				fns->finish(ctx, 0);
		}
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
	pthread_cond_init(&p->worked, NULL);
	for (unsigned i = 0; i < PIPELINE_SLOTS; i++) {
		atomic_init(&p->slots[i].units, 0);
		atomic_init(&p->slots[i].next, 0);
		atomic_init(&p->slots[i].units_worked, 0);
		atomic_init(&p->slots[i].done, 0);
		atomic_init(&p->slots[i].tag, 0);
		atomic_init(&p->slots[i].parts_worked, 0);
		atomic_init(&p->slots[i].parts_done, 0);
	}
	atomic_init(&p->fills, 0);
	atomic_init(&p->split_upto, 0);
	atomic_init(&p->threads_started, 1);	/* 0 is the calling thread's */
	first_lane = 0;
}

/* The lanes of a run with parts, all at batch 0; NULL when out of memory. */
static struct lane *lanes_new(unsigned parts)
{
	struct lane *lanes = aligned_alloc(_Alignof(struct lane), parts * sizeof *lanes);

	for (unsigned i = 0; lanes != NULL && i < parts; i++) {
		atomic_init(&lanes[i].next, 0);
		atomic_init(&lanes[i].busy, 0);
	}
	return lanes;
}

int pipeline_run(const struct pipeline_fns *fns, void *ctx, int threads)
{
	static const int most = PIPELINE_THREADS_MAX - 2;
	struct pipeline p;
	struct run_link link;
	pthread_t *workers;
	int nworkers, stop;
	double since = stopwatch_now();

	if (threads < 2)
		return run_inline(fns, ctx);
	nworkers = threads - 2 < most ? threads - 2 : most;
	workers = nworkers > 0 ? malloc((size_t)nworkers * sizeof *workers) : NULL;
	if (workers == NULL)
		nworkers = 0;
	pipeline_init(&p, fns, ctx, threads);
	if (fns->parts > 0 && (p.lanes = lanes_new(fns->parts)) == NULL)
		nworkers = -1;	/* no lanes: all on this thread, as with no threads */
	else
		nworkers = start_threads(&p, &p.reader, workers, nworkers);
	if (nworkers < 0) {
		stop = run_inline(fns, ctx);
	} else {
		p.workers = workers;
		p.nworkers = nworkers;
		link_run(&link, halt_ordered, &p);
		stop = run_threaded(&p);
		stop_threads(&p);
		unlink_run(&link);
	}
	free(workers);
	free(p.lanes);
	pthread_cond_destroy(&p.worked);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.mu);
	stopwatch_report("ordered run, calling thread", since);
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
	pthread_t ids[PIPELINE_SLOTS];	/* [1, started): the threads beside the caller */
	unsigned started;
	int joined;
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

/* Reap the threads beside the caller, once; stop: make them stop first (a halt). */
static void join_free(struct free_run *run, int stop)
{
	int none = 0;

	if (run->joined)
		return;
	if (stop)
		atomic_compare_exchange_strong(&run->stop, &none, -1);
	for (unsigned i = 1; i < run->started; i++)
		pthread_join(run->ids[i], NULL);
	run->joined = 1;
}

static void halt_free(void *run)
{
	join_free(run, 1);
}

int pipeline_run_free(const struct pipeline_free_fns *fns, void *ctx, int threads)
{
	struct free_run run = { .fns = fns, .ctx = ctx, .started = 1 };
	struct free_thread each[PIPELINE_SLOTS] = { { NULL, 0 } };	/* [0] always, the rest as used */
	struct run_link link;
	sigset_t all, old;
	unsigned n = threads < 1 ? 1 : threads > PIPELINE_SLOTS ? PIPELINE_SLOTS : (unsigned)threads;
	double since = stopwatch_now();

	atomic_init(&run.stop, 0);
	for (unsigned i = 0; i < n; i++)
		each[i] = (struct free_thread){ &run, i };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (run.started < n &&
	       pthread_create(&run.ids[run.started], NULL, free_main, &each[run.started]) == 0)
		run.started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	link_run(&link, halt_free, &run);
	free_main(&each[0]);
	join_free(&run, 0);
	unlink_run(&link);
	stopwatch_report("order-free run, calling thread", since);
	return atomic_load(&run.stop);
}

/* pipeline_set_threads: 0 (the default) leaves the choice below. */
static int threads_set;
/* pipeline_set_default_max's ceiling */
static int default_max = PIPELINE_THREADS_DEFAULT_MAX;

void pipeline_set_default_max(int max)
{
	default_max = max < 1 ? 1 : max > PIPELINE_THREADS_DEFAULT_MAX ? PIPELINE_THREADS_DEFAULT_MAX : max;
}

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

/*
 * sysconf's count of online CPUs, asked once: glibc reads it from /sys
 * on each call, and a load asks several times (a millisecond each on a
 * virtual machine's file system).
 */
static long online_cpus(void)
{
	static _Atomic long cpus;
	long n = atomic_load_explicit(&cpus, memory_order_relaxed);

	if (n == 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		atomic_store_explicit(&cpus, n < 1 ? -1 : n, memory_order_relaxed);
	}
	return n;
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
	cpus = online_cpus();
	if (cpus < 1)
		return 1;
	return cpus < default_max ? (int)cpus : default_max;
}
