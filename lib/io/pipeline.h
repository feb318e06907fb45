/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h - a stream of batches over N threads: a reader thread fills
 * batches (slots of a small ring) in input order, every thread shares the
 * work each batch needs that can run in any order (hashing keys, testing
 * them against a filter that does not change, OR-ing bits into one), and
 * the calling thread finishes each batch in input order (ordered adding,
 * writing output).
 *
 * The caller keeps its per-batch state in arrays indexed by slot
 * (0 .. PIPELINE_SLOTS-1; a run uses the first few, more with more
 * threads). The pipeline guarantees: fill(slot) happens
 * before any work on that slot, all of the slot's work before
 * consume(slot), and consume(slot) before the slot is filled again, with
 * the memory effects of each step visible to the next.
 */
#ifndef BFTOOLS_PIPELINE_H
#define BFTOOLS_PIPELINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Batches in flight, at most: a run with threads T uses 4 slots up to T = 2
 * and T + 2 above, up to this; enough that every worker finds a batch to
 * share while the reader fills the next, few enough to stay in cache.
 */
#define PIPELINE_SLOTS 16

/* The most threads a run takes (-j above this is refused by the programs). */
#define PIPELINE_THREADS_MAX 256

/*
 * The default's ceiling, measured on 16 cores (README, Threads): jobs that
 * share their lines out in any order (bfbuild into a fixed filter, bfgrep
 * -c, bfcount) gained up to 16 threads (10x, 16x, 11x over one); a run
 * whose ordered step is its ceiling (bfuniq, and every run that splits
 * its batches by region) was fastest at 8 and slower past it, so those
 * lower the default to PIPELINE_THREADS_ORDERED_MAX
 * (pipeline_set_default_max).
 */
#define PIPELINE_THREADS_DEFAULT_MAX 16
#define PIPELINE_THREADS_ORDERED_MAX 8

struct pipeline_fns {
	/*
	 * Reader thread: put the next batch in slot and set *units to how many
	 * pieces of work it holds (keys; 0 is fine). Returns 1, or 0 when there
	 * is nothing more (slot unused). May block in read(2): if the calling
	 * thread stops early, fill is cancelled at its next cancellation point
	 * (pthread_cancel), so it must leave shared state usable at those points.
	 */
	int (*fill)(void *ctx, unsigned slot, size_t *units);
	/* Any thread: do units [from, to) of slot. Calls on one slot may overlap (disjoint ranges). */
	void (*work)(void *ctx, unsigned slot, size_t from, size_t to);
	/*
	 * Optional: the thread that did a batch's last units of work, once
	 * all are done and before split or consume see the batch: what the
	 * ordered step can have done ahead with the whole batch's work in
	 * hand (owners_presort, say). Not called for a batch of no units.
	 */
	void (*worked)(void *ctx, unsigned slot);
	/* Calling thread, in input order, after all of slot's work: 0 to go on, else stop. */
	int (*consume)(void *ctx, unsigned slot);
	/*
	 * Optional (parts 0: none): a batch's ordered step cut into `parts`
	 * parts that keep their own order, such as the regions of a filter
	 * that one key's bits never leave (owners.h). Part p of a batch runs
	 * after part p of every earlier batch, on any thread; so the parts of
	 * consecutive batches run beside one another, and no thread waits for
	 * a batch's slowest part before starting the next batch's others.
	 *   split  calling thread, in input order, after all of slot's work:
	 *          1 when slot's ordered step is done in parts, 0 when consume
	 *          does the whole of it (then no part of a later batch starts
	 *          before that consume has returned)
	 *   part   any thread: part `part` of slot, which split said 1 to
	 * consume(slot) comes after all of slot's parts. With overlap 0, a
	 * batch is split only after the batch before it is consumed (consume
	 * then sees nothing of later batches: a checkpoint written there is
	 * that of the input so far). With overlap 1 it may be split as soon
	 * as its work is done and the batch before was split into parts, so
	 * its parts run beside that batch's consume.
	 */
	int (*split)(void *ctx, unsigned slot);
	void (*part)(void *ctx, unsigned slot, unsigned part);
	unsigned parts;
	int overlap;
	/*
	 * Optional, with parts: any thread, once a batch split in parts has
	 * all of them done, before its consume: the rest of its ordered
	 * step that needs only the batch itself (its output assembled from
	 * the parts' answers, say), so that the calling thread, which every
	 * batch waits for, only hands the result on. Batches of consecutive
	 * slots may finish at the same time, on different threads, in any
	 * order. Not for batches done whole.
	 */
	void (*finish)(void *ctx, unsigned slot);
};

/* The most parts a batch may be cut into (pipeline_fns.parts). */
#define PIPELINE_PARTS_MAX 256

/*
 * Run until fill reports the end or consume asks to stop. threads is 1 (all
 * on the calling thread: fill, work, split, parts, consume in turn), 2 (a
 * reader thread beside it, which also works and does parts when the ring
 * is full) or more (threads - 2 workers besides, that only work and do
 * parts, parts first); a thread that cannot start is done
 * without (down to 1), never an error. Signals are blocked on every thread
 * but the calling one, so handlers run there. Returns 0, or the nonzero
 * value consume stopped with.
 */
int pipeline_run(const struct pipeline_fns *fns, void *ctx, int threads);

/*
 * Order-free runs, for work whose result does not depend on the order of
 * the batches (counting, OR-ing bits, yes-or-no questions) and whose
 * batches every thread can get on its own (ranges of a regular file:
 * lines_open_range): every thread fills its own slot, works all of it and
 * consumes it, with no reader or ordered consumer between threads. Thread
 * t uses slot t only, so per-slot state needs no lock; consume runs on
 * any thread, at the same time as other slots' steps.
 */
struct pipeline_free_fns {
	/* The thread's next batch into slot: 1, or 0 when it has no more. Must not block for ever. */
	int (*fill)(void *ctx, unsigned slot, size_t *units);
	/* The same thread: all of the batch's units, [from, to) = [0, units). */
	void (*work)(void *ctx, unsigned slot, size_t from, size_t to);
	/* The same thread, after work: 0 to go on, else stop every thread. */
	int (*consume)(void *ctx, unsigned slot);
};

/*
 * Run threads (at most PIPELINE_SLOTS) each filling, working and
 * consuming slot t until its fill says there is no more, or some consume
 * asks to stop: then the others stop before their next fill (a batch
 * filled is always worked and consumed). The calling thread is slot 0; a
 * thread that cannot start is done without, never an error. Signals are
 * blocked on every thread but the calling one. Returns 0, or the first
 * nonzero value a consume stopped with.
 */
int pipeline_run_free(const struct pipeline_free_fns *fns, void *ctx, int threads);

/*
 * For a program about to exit from inside a run's fill, work or consume
 * (a write error, say): stop and join the other threads of every run the
 * calling thread has started and not finished, so that exit(3) and its
 * handlers (gcov writing its counters, for one) run while no other
 * thread of a run touches anything. The runs must not go on: a halted
 * run returns once its current callback does, its batches unfinished.
 * On a thread that started no run (a worker, or outside any run) it does
 * nothing. Blocks at most as long as a thread's current fill or work
 * (a fill blocked in read(2) is cancelled, as at an early stop).
 */
void pipeline_halt(void);

/*
 * How many threads to use: pipeline_set_threads's choice if any; else the
 * environment variable BFTOOLS_THREADS when it is a whole number
 * 1..PIPELINE_THREADS_MAX (other values are ignored here: the programs
 * refuse them, see pipeline_parse_threads); else the CPUs online, at most
 * PIPELINE_THREADS_DEFAULT_MAX or what pipeline_set_default_max chose.
 */
int pipeline_threads(void);

/*
 * Lower (or raise, up to PIPELINE_THREADS_DEFAULT_MAX) the ceiling of the
 * default thread count for this process; -j and BFTOOLS_THREADS still
 * choose any count. A program calls it before its first pipeline_threads.
 */
void pipeline_set_default_max(int max);

/*
 * Override pipeline_threads for this process: 1..PIPELINE_THREADS_MAX, or
 * 0 to choose as above again. pipeline_set_threads(1) is for a fork()ed
 * child, which must start no thread.
 */
void pipeline_set_threads(int threads);

/*
 * A thread count as written by a user ("4"): decimal digits only, value
 * 1..PIPELINE_THREADS_MAX. 0 with *threads set, or -1 with *errstr saying
 * what is wrong.
 */
int pipeline_parse_threads(const char *text, int *threads, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
