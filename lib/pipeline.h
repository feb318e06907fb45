/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h - a stream of batches over two threads: a reader thread fills
 * batches (slots of a small ring) in input order, both threads share the
 * work each batch needs that can run in any order (hashing keys, testing
 * them against a filter that does not change), and the calling thread
 * finishes each batch in input order (adding to a filter, writing output).
 *
 * The caller keeps its per-batch state in arrays indexed by slot
 * (0 .. PIPELINE_SLOTS-1). The pipeline guarantees: fill(slot) happens
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

/* Batches in flight: enough to ride out uneven batches, few enough to stay in cache. */
#define PIPELINE_SLOTS 4

struct pipeline_fns {
	/*
	 * Reader thread: put the next batch in slot and set *units to how many
	 * pieces of work it holds (keys; 0 is fine). Returns 1, or 0 when there
	 * is nothing more (slot unused). May block in read(2): if the calling
	 * thread stops early, fill is cancelled at its next cancellation point
	 * (pthread_cancel), so it must leave shared state usable at those points.
	 */
	int (*fill)(void *ctx, unsigned slot, size_t *units);
	/* Either thread: do units [from, to) of slot. Calls on one slot may overlap (disjoint ranges). */
	void (*work)(void *ctx, unsigned slot, size_t from, size_t to);
	/* Calling thread, in input order, after all of slot's work: 0 to go on, else stop. */
	int (*consume)(void *ctx, unsigned slot);
};

/*
 * Run until fill reports the end or consume asks to stop. threads is 1 (all
 * on the calling thread: fill, work, consume in turn) or 2 (a reader
 * thread beside it; falls back to 1 if the thread cannot start). Signals
 * are blocked on the reader thread, so handlers run on the calling thread.
 * Returns 0, or the nonzero value consume stopped with.
 */
int pipeline_run(const struct pipeline_fns *fns, void *ctx, int threads);

/*
 * How many threads to use: 2 where there is more than one CPU online, else
 * 1; the environment variable BFTOOLS_THREADS=1 or 2 overrides (tests, and
 * users who want one core left alone).
 */
int pipeline_threads(void);

/*
 * Override pipeline_threads for this process: 1 or 2, or 0 to choose as
 * above again. For a fork()ed child, which must start no thread.
 */
void pipeline_set_threads(int threads);

#ifdef __cplusplus
}
#endif

#endif
