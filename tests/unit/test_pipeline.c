/* SPDX-License-Identifier: MIT */
/*
 * test_pipeline.c - the batch pipeline over N threads (lib/io/pipeline.c).
 *
 * Each contract test runs with threads = 1, 2 (caller and reader), 3, 4
 * and 8 (workers besides; 8 is more than this machine's CPUs, so threads
 * are descheduled holding chunks). The batches
 * come from a fixed-seed generator, so every run sees the same sizes. The
 * callbacks never CHECK (they may run on the reader thread): they note the
 * first broken promise in the context, and the test checks it afterwards.
 *
 * Data flows through plain (non-atomic) per-slot arrays: fill writes each
 * unit's input, work turns it into an output, consume reads the outputs.
 * Only the per-unit work counters are atomic, so that a unit worked twice
 * at once is counted, not lost. So under -fsanitize=thread these tests also
 * check the header's promise that each step's memory effects are visible to
 * the next.
 *
 * The cancellation test runs the pipeline in a forked child and waits for
 * it with a timeout, so a fill that is never cancelled fails the test
 * instead of hanging the run.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline.h"
#include "unit.h"

#define MAX_UNITS 3000

/* Batch sizes 0..MAX_UNITS; one batch in eight is empty, so empties are certain. */
static size_t batch_size(uint64_t *state)
{
	uint64_t r = unit_splitmix64(state);

	if ((r >> 32) % 8 == 0)
		return 0;
	return (size_t)(r % (MAX_UNITS + 1));
}

/* What work makes of a unit's input: any mix that a skipped unit would not match. */
static uint64_t work_of(uint64_t in)
{
	return in * UINT64_C(0x2545f4914f6cdd1d) + 1;
}

enum slot_state { SLOT_FREE, SLOT_FILLED };

struct slot_data {
	uint64_t seq;			/* which batch fill put here */
	size_t units;
	uint64_t in[MAX_UNITS];		/* written by fill */
	uint64_t out[MAX_UNITS];	/* written by work */
	atomic_uint worked[MAX_UNITS];	/* times each unit was worked */
	atomic_int state;		/* enum slot_state */
};

struct run {
	uint64_t batches;		/* how many batches fill makes */
	uint64_t fill_rng;		/* fill's size stream */
	uint64_t filled;		/* batches filled (fill's thread only) */
	uint64_t consume_rng;		/* the same stream, replayed by consume */
	uint64_t consumed;		/* batches consumed (calling thread only) */
	uint64_t empty_batches;
	uint64_t stop_at;		/* consume returns stop_value at this batch */
	int stop_value;
	uint64_t work_spin;		/* extra busy work per unit */
	pthread_t caller;
	atomic_ulong caller_chunks, other_chunks;
	pthread_mutex_t seen_mu;	/* the distinct threads that ran work, up to 16 */
	pthread_t seen[16];
	int nseen;
	atomic_int broken;		/* set once: the first broken promise is in why */
	const char *why;
	uint64_t why_seq;
	struct slot_data slots[PIPELINE_SLOTS];
};

static void note_broken(struct run *r, const char *why, uint64_t seq)
{
	if (atomic_exchange(&r->broken, 1) == 0) {
		r->why = why;
		r->why_seq = seq;
	}
}

static struct run *run_new(uint64_t batches, uint64_t seed)
{
	struct run *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->batches = batches;
	r->fill_rng = r->consume_rng = seed;
	r->stop_at = UINT64_MAX;
	r->caller = pthread_self();
	pthread_mutex_init(&r->seen_mu, NULL);
	for (unsigned s = 0; s < PIPELINE_SLOTS; s++)
		atomic_init(&r->slots[s].state, SLOT_FREE);
	return r;
}

static int test_fill(void *ctx, unsigned slot, size_t *units)
{
	struct run *r = ctx;
	struct slot_data *d;

	if (r->filled == r->batches)
		return 0;
	if (slot >= PIPELINE_SLOTS) {
		note_broken(r, "fill was given a slot out of range", r->filled);
		return 0;
	}
	d = &r->slots[slot];
	if (atomic_load(&d->state) != SLOT_FREE)
		note_broken(r, "fill was given a slot not yet consumed", r->filled);
	d->seq = r->filled++;
	d->units = batch_size(&r->fill_rng);
	for (size_t i = 0; i < d->units; i++) {
		d->in[i] = d->seq * MAX_UNITS + i;
		atomic_store_explicit(&d->worked[i], 0, memory_order_relaxed);
	}
	atomic_store(&d->state, SLOT_FILLED);
	*units = d->units;
	return 1;
}

/* Count the thread running this chunk among those seen. */
static void note_thread(struct run *r)
{
	int i;

	pthread_mutex_lock(&r->seen_mu);
	for (i = 0; i < r->nseen; i++)
		if (pthread_equal(r->seen[i], pthread_self()))
			break;
	if (i == r->nseen && r->nseen < 16)
		r->seen[r->nseen++] = pthread_self();
	pthread_mutex_unlock(&r->seen_mu);
}

/* Busy work, a few hundred nanoseconds per unit when asked, so chunks overlap in time. */
static void spin(uint64_t rounds)
{
	volatile uint64_t v = rounds;

	for (uint64_t i = 0; i < rounds; i++)
		v = v * 6364136223846793005u + 1442695040888963407u;
}

static void test_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct run *r = ctx;
	struct slot_data *d;

	if (slot >= PIPELINE_SLOTS) {
		note_broken(r, "work was given a slot out of range", 0);
		return;
	}
	d = &r->slots[slot];
	if (atomic_load(&d->state) != SLOT_FILLED || from >= to || to > d->units) {
		note_broken(r, "work was given a slot not filled, or a bad range", d->seq);
		return;
	}
	for (size_t i = from; i < to; i++) {
		spin(r->work_spin);
		d->out[i] = work_of(d->in[i]);
		atomic_fetch_add_explicit(&d->worked[i], 1, memory_order_relaxed);
	}
	if (pthread_equal(pthread_self(), r->caller))
		atomic_fetch_add(&r->caller_chunks, 1);
	else
		atomic_fetch_add(&r->other_chunks, 1);
	note_thread(r);
}

/* Whether every unit of d was worked exactly once, with the right output. */
static int batch_complete(const struct slot_data *d)
{
	for (size_t i = 0; i < d->units; i++) {
		if (atomic_load_explicit(&d->worked[i], memory_order_relaxed) != 1)
			return 0;
		if (d->out[i] != work_of(d->seq * MAX_UNITS + i))
			return 0;
	}
	return 1;
}

static int test_consume(void *ctx, unsigned slot)
{
	struct run *r = ctx;
	struct slot_data *d;
	size_t want_units = batch_size(&r->consume_rng);

	if (!pthread_equal(pthread_self(), r->caller))
		note_broken(r, "consume ran on another thread", r->consumed);
	if (slot >= PIPELINE_SLOTS) {
		note_broken(r, "consume was given a slot out of range", r->consumed);
		return -1;
	}
	d = &r->slots[slot];
	if (atomic_load(&d->state) != SLOT_FILLED)
		note_broken(r, "consume was given a slot not filled", r->consumed);
	else if (d->seq != r->consumed || d->units != want_units)
		note_broken(r, "batches were consumed out of order", r->consumed);
	else if (!batch_complete(d))
		note_broken(r, "a batch was consumed before all its work was done once", d->seq);
	r->empty_batches += d->units == 0;
	atomic_store(&d->state, SLOT_FREE);
	return r->consumed++ == r->stop_at ? r->stop_value : 0;
}

static const struct pipeline_fns test_fns = {
	.fill = test_fill, .work = test_work, .consume = test_consume
};

#define CHECK_RUN(r)                                                                       \
	CHECKF(!atomic_load(&(r)->broken), "%s (batch %llu)", (r)->why,                   \
	       (unsigned long long)(r)->why_seq)

static void every_unit_worked_once_and_batches_consumed_in_order(int threads)
{
	struct run *r = run_new(10000, 42);
	int got;

	CHECK(r != NULL);
	got = pipeline_run(&test_fns, r, threads);
	CHECK_RUN(r);
	CHECK(got == 0);
	CHECKF(r->consumed == 10000, "%llu consumed", (unsigned long long)r->consumed);
	CHECK(r->empty_batches > 0);
	free(r);
}

static void order_1(void) { every_unit_worked_once_and_batches_consumed_in_order(1); }
static void order_2(void) { every_unit_worked_once_and_batches_consumed_in_order(2); }
static void order_3(void) { every_unit_worked_once_and_batches_consumed_in_order(3); }
static void order_4(void) { every_unit_worked_once_and_batches_consumed_in_order(4); }
static void order_8(void) { every_unit_worked_once_and_batches_consumed_in_order(8); }

/* Stopping at batch `at` of 1000: that batch is the last consumed. */
static void consume_nonzero_stops(int threads)
{
	static const uint64_t stops[] = { 0, 1, 3, 4, 5, 517, 999 };

	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
		struct run *r = run_new(1000, 7 + i);
		int got;

		CHECK(r != NULL);
		r->stop_at = stops[i];
		r->stop_value = 40 + (int)i;
		got = pipeline_run(&test_fns, r, threads);
		CHECK_RUN(r);
		CHECKF(got == 40 + (int)i, "stop at %llu returned %d", (unsigned long long)stops[i],
		       got);
		CHECKF(r->consumed == stops[i] + 1, "stop at %llu, %llu consumed",
		       (unsigned long long)stops[i], (unsigned long long)r->consumed);
		free(r);
	}
	/* a negative value is a value like any other */
	{
		struct run *r = run_new(10, 1);

		CHECK(r != NULL);
		r->stop_at = 2;
		r->stop_value = -1;
		CHECK(pipeline_run(&test_fns, r, threads) == -1 && r->consumed == 3);
		free(r);
	}
}

static void stop_1(void) { consume_nonzero_stops(1); }
static void stop_2(void) { consume_nonzero_stops(2); }
static void stop_3(void) { consume_nonzero_stops(3); }
static void stop_8(void) { consume_nonzero_stops(8); }

static void fill_ending_at_once(int threads)
{
	struct run *r = run_new(0, 1);

	CHECK(r != NULL);
	CHECK(pipeline_run(&test_fns, r, threads) == 0);
	CHECK_RUN(r);
	CHECK(r->consumed == 0 && r->filled == 0);
	CHECK(atomic_load(&r->caller_chunks) + atomic_load(&r->other_chunks) == 0);
	free(r);
}

static void empty_1(void) { fill_ending_at_once(1); }
static void empty_2(void) { fill_ending_at_once(2); }
static void empty_8(void) { fill_ending_at_once(8); }

/*
 * Slot bookkeeping on its own: fill tags the slot it is given with the
 * batch number, work and consume must be given a slot carrying the tag of
 * a batch not yet consumed, consume the tag of the very next batch.
 */
struct tags {
	uint64_t tag[PIPELINE_SLOTS];
	uint64_t filled, consumed;
	atomic_int bad;
};

static int tag_fill(void *ctx, unsigned slot, size_t *units)
{
	struct tags *t = ctx;

	if (t->filled == 2000)
		return 0;
	if (slot >= PIPELINE_SLOTS) {
		atomic_store(&t->bad, 1);
		return 0;
	}
	t->tag[slot] = ++t->filled;	/* 0 means "never filled" */
	*units = (size_t)(t->filled % 700);
	return 1;
}

static void tag_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct tags *t = ctx;

	if (slot >= PIPELINE_SLOTS || t->tag[slot] == 0 || to > t->tag[slot] % 700 || from >= to)
		atomic_store(&t->bad, 1);
}

static int tag_consume(void *ctx, unsigned slot)
{
	struct tags *t = ctx;

	if (slot >= PIPELINE_SLOTS || t->tag[slot] != ++t->consumed)
		atomic_store(&t->bad, 1);
	return 0;
}

static void slot_is_the_one_filled(int threads)
{
	static const struct pipeline_fns fns = {
		.fill = tag_fill, .work = tag_work, .consume = tag_consume
	};
	struct tags t;

	memset(&t, 0, sizeof t);
	atomic_init(&t.bad, 0);
	CHECK(pipeline_run(&fns, &t, threads) == 0);
	CHECK(!atomic_load(&t.bad));
	CHECK(t.consumed == 2000);
}

static void slot_1(void) { slot_is_the_one_filled(1); }
static void slot_2(void) { slot_is_the_one_filled(2); }
static void slot_4(void) { slot_is_the_one_filled(4); }
static void slot_8(void) { slot_is_the_one_filled(8); }

/*
 * Slow work (a spin per unit) in full batches: while the calling thread
 * works through one slot, the reader has filled the ring and must take
 * chunks off it. A run on a loaded machine may still go one-sided, so we
 * allow up to 20 runs of 40 batches; a pipeline whose reader never works
 * fails all of them.
 */
static void work_runs_on_both_threads(void)
{
	int both = 0;

	for (int attempt = 0; attempt < 20 && !both; attempt++) {
		struct run *r = run_new(40, 99);

		CHECK(r != NULL);
		r->work_spin = 200;
		CHECK(pipeline_run(&test_fns, r, 2) == 0);
		CHECK_RUN(r);
		both = atomic_load(&r->caller_chunks) > 0 && atomic_load(&r->other_chunks) > 0;
		free(r);
	}
	CHECK(both);
}

/*
 * With 4 threads the two workers take chunks too: work runs on more than
 * the caller and the reader. Retried as above, for a loaded machine.
 */
static void work_runs_on_the_workers_too(void)
{
	int seen = 0;

	for (int attempt = 0; attempt < 20 && seen < 3; attempt++) {
		struct run *r = run_new(40, 99);

		CHECK(r != NULL);
		r->work_spin = 200;
		CHECK(pipeline_run(&test_fns, r, 4) == 0);
		CHECK_RUN(r);
		seen = r->nseen;
		free(r);
	}
	CHECKF(seen >= 3, "work ran on %d threads of 4", seen);
}

/* threads = 1 is all on the calling thread: no chunk may run elsewhere. */
static void one_thread_works_on_the_caller_only(void)
{
	struct run *r = run_new(200, 5);

	CHECK(r != NULL);
	CHECK(pipeline_run(&test_fns, r, 1) == 0);
	CHECK_RUN(r);
	CHECK(atomic_load(&r->other_chunks) == 0 && atomic_load(&r->caller_chunks) > 0);
	free(r);
}

/*
 * The cancellation scenario (bfgrep -q on tail -f): three batches come at
 * once, the fourth fill blocks in read(2) on a pipe whose writer stays
 * open. consume stops at the third batch, once the fourth fill has begun.
 */
struct blocker {
	int fd;
	unsigned fills, consumed;
	atomic_int blocking;
	char byte;	/* read's buffer: not on fill's stack (see below) */
	int halt;	/* halt_consume: halt at the third batch instead of stopping */
	int threads_left;	/* and the threads of the process after the halt */
	int threads_before;	/* before the run */
};

static int block_fill(void *ctx, unsigned slot, size_t *units)
{
	struct blocker *b = ctx;

	(void)slot;
	if (b->fills++ < 3) {
		*units = 300;
		return 1;
	}
	atomic_store(&b->blocking, 1);
	while (read(b->fd, &b->byte, 1) < 0 && errno == EINTR)
		;
	return 0;	/* never reached while the writer is open */
}

static void block_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	(void)ctx, (void)slot, (void)from, (void)to;
}

/*
 * The threads of this process (entries of /proc/self/task), or -1. Compared
 * with the count before a run, not with 1: a sanitizer's runtime may have
 * a thread of its own (ThreadSanitizer does).
 */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The threads once those joined have left: a thread can stay listed in
 * /proc/self/task for a moment after pthread_join returns (the kernel
 * wakes the joiner as it clears the thread's ID, before its exit is
 * complete), so count again, up to 2 s, until the count falls to want.
 * A thread not joined stays, and the count stays above want.
 */
static int count_threads_settled(int want)
{
	struct timespec tick = { 0, 1000000 };
	int n = count_threads();

	for (int i = 0; i < 2000 && n > want; i++) {
		nanosleep(&tick, NULL);
		n = count_threads();
	}
	return n;
}

/*
 * Stop at the third batch, after giving the fourth fill up to 5 s to
 * block; or, with b->halt, halt there as a program exiting on a write
 * error does, note the threads left, and return as if to go on.
 */
static int block_consume(void *ctx, unsigned slot)
{
	struct blocker *b = ctx;
	struct timespec tick = { 0, 1000000 };

	(void)slot;
	if (++b->consumed < 3)
		return 0;
	for (int i = 0; i < 5000 && !atomic_load(&b->blocking); i++)
		nanosleep(&tick, NULL);
	tick.tv_nsec = 20000000;	/* and time to enter read(2) */
	nanosleep(&tick, NULL);
	if (!b->halt)
		return 9;
	pipeline_halt();
	b->threads_left = count_threads_settled(b->threads_before);
	return 0;
}

/*
 * In the child: 0 when pipeline_run on threads came back as promised;
 * with halt, when the halt left the calling thread alone and the run
 * consumed nothing more.
 */
static int run_blocked_pipeline(int threads, int halt)
{
	static const struct pipeline_fns fns = {
		.fill = block_fill, .work = block_work, .consume = block_consume
	};
	struct blocker b;
	int fds[2], got;

	if (pipe(fds) < 0)
		return 2;
	memset(&b, 0, sizeof b);
	b.fd = fds[0];
	b.halt = halt;
	b.threads_before = count_threads();
	atomic_init(&b.blocking, 0);
	got = pipeline_run(&fns, &b, threads);
	if (b.consumed != 3 || !atomic_load(&b.blocking))
		return 3;
	if (halt)
		return b.threads_before > 0 && b.threads_left == b.threads_before ? 0 : 4;
	return got == 9 ? 0 : 3;	/* fds[1] stays open until the child exits */
}

/* Wait up to seconds for child; on timeout kill it. Its exit status, or -1. */
static int wait_with_timeout(pid_t child, int seconds)
{
	struct timespec tick = { 0, 10000000 };
	int status;

	for (int i = 0; i < seconds * 100; i++) {
		pid_t got = waitpid(child, &status, WNOHANG);

		if (got == child)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (got < 0 && errno != EINTR)
			return -2;
		nanosleep(&tick, NULL);
	}
	kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return -1;
}

static void blocked_fill_is_cancelled_on_stop(int threads, int halt)
{
	pid_t child;
	int status;

	fflush(stdout);
	child = fork();
	CHECK(child >= 0);
	if (child == 0)
		_exit(run_blocked_pipeline(threads, halt));
	status = wait_with_timeout(child, 10);
	CHECKF(status != -1, "pipeline_run still blocked after 10 s: the fill was not cancelled");
	CHECKF(status == 0, "child ended with status %d (3: wrong result, 4: threads left)", status);
}

static void cancel_2(void) { blocked_fill_is_cancelled_on_stop(2, 0); }
static void cancel_4(void) { blocked_fill_is_cancelled_on_stop(4, 0); }
static void halt_2(void) { blocked_fill_is_cancelled_on_stop(2, 1); }
static void halt_4(void) { blocked_fill_is_cancelled_on_stop(4, 1); }

/*
 * An order-free run halted from the calling thread's consume: the other
 * threads, whose fills never end by themselves, are stopped and joined.
 */
struct endless {
	atomic_uint_least64_t batches;
	unsigned consumed0;
	int threads_left, threads_before;
};

static int endless_fill(void *ctx, unsigned slot, size_t *units)
{
	struct endless *e = ctx;

	(void)slot;
	atomic_fetch_add(&e->batches, 1);
	*units = 10;
	return 1;
}

static int endless_consume(void *ctx, unsigned slot)
{
	struct endless *e = ctx;

	if (slot != 0 || ++e->consumed0 < 3)
		return 0;
	pipeline_halt();
	e->threads_left = count_threads_settled(e->threads_before);
	return 0;
}

static int run_endless_free(int threads)
{
	static const struct pipeline_free_fns fns = { endless_fill, block_work, endless_consume };
	struct endless e;

	memset(&e, 0, sizeof e);
	atomic_init(&e.batches, 0);
	e.threads_before = count_threads();
	pipeline_run_free(&fns, &e, threads);
	return e.consumed0 == 3 && e.threads_before > 0 && e.threads_left == e.threads_before ? 0 : 4;
}

static void free_run_halts_from_consume(void)
{
	pid_t child;
	int status;

	fflush(stdout);
	child = fork();
	CHECK(child >= 0);
	if (child == 0)
		_exit(run_endless_free(4));
	status = wait_with_timeout(child, 10);
	CHECKF(status != -1, "pipeline_run_free still running 10 s after the halt");
	CHECKF(status == 0, "child ended with status %d (4: threads left or consumed on)", status);
}

/* A thread that started no run has nothing to halt: pipeline_halt returns. */
static void halt_without_a_run_does_nothing(void)
{
	int before = count_threads();

	pipeline_halt();
	CHECK(before > 0 && count_threads() == before);
}

/* Sets or unsets BFTOOLS_THREADS; value NULL unsets. */
static void set_threads_env(const char *value)
{
	if (value)
		setenv("BFTOOLS_THREADS", value, 1);
	else
		unsetenv("BFTOOLS_THREADS");
}

static void threads_follow_the_environment(void)
{
	const char *old = getenv("BFTOOLS_THREADS");
	char *saved = old ? strdup(old) : NULL;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int cpus = online < 1 ? 1 : online < PIPELINE_THREADS_DEFAULT_MAX ? (int)online
									 : PIPELINE_THREADS_DEFAULT_MAX;
	int one, seven, unset, junk, zero, huge, set;

	CHECK(old == NULL || saved != NULL);
	set_threads_env("1");
	one = pipeline_threads();
	set_threads_env("7");
	seven = pipeline_threads();
	pipeline_set_threads(3);
	set = pipeline_threads();
	pipeline_set_threads(0);
	set_threads_env(NULL);
	unset = pipeline_threads();
	set_threads_env("abc");
	junk = pipeline_threads();
	set_threads_env("0");
	zero = pipeline_threads();
	set_threads_env("100000");
	huge = pipeline_threads();
	set_threads_env(saved);
	free(saved);
	CHECK(one == 1);
	CHECK(seven == 7);
	CHECKF(set == 3, "pipeline_set_threads(3) over BFTOOLS_THREADS=7 gives %d", set);
	CHECKF(unset == cpus, "unset gives %d with %ld CPU(s) online", unset, online);
	CHECKF(junk == cpus && zero == cpus && huge == cpus,
	       "abc, 0, 100000 give %d, %d, %d, not the CPU default %d", junk, zero, huge, cpus);
}

/* A lower default ceiling (bfuniq's 8) caps the CPU default only; -j and BFTOOLS_THREADS still choose. */
static void a_default_ceiling_caps_only_the_default(void)
{
	const char *old = getenv("BFTOOLS_THREADS");
	char *saved = old ? strdup(old) : NULL;
	int capped, env, set, back;

	CHECK(old == NULL || saved != NULL);
	set_threads_env(NULL);
	pipeline_set_default_max(1);
	capped = pipeline_threads();
	set_threads_env("5");
	env = pipeline_threads();
	pipeline_set_threads(6);
	set = pipeline_threads();
	pipeline_set_threads(0);
	set_threads_env(NULL);
	pipeline_set_default_max(PIPELINE_THREADS_DEFAULT_MAX + 100);	/* never above the ceiling */
	back = pipeline_threads();
	set_threads_env(saved);
	free(saved);
	CHECKF(capped == 1, "a ceiling of 1 gives %d", capped);
	CHECK(env == 5 && set == 6);
	CHECKF(back >= 1 && back <= PIPELINE_THREADS_DEFAULT_MAX, "%d threads", back);
}

/* Thread counts as users write them: digits, 1..PIPELINE_THREADS_MAX. */
static void thread_counts_parse(void)
{
	static const char *const bad[] = { "", "0", "-1", "-0", "+2", " 2", "2 ", "abc", "2x",
					   "0x10", "1e3", "257", "99999999999999999999999" };
	const char *why;
	int t = 0;

	CHECK(pipeline_parse_threads("1", &t, &why) == 0 && t == 1);
	CHECK(pipeline_parse_threads("08", &t, &why) == 0 && t == 8);
	CHECK(pipeline_parse_threads("256", &t, &why) == 0 && t == PIPELINE_THREADS_MAX);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		CHECKF(pipeline_parse_threads(bad[i], &t, &why) == -1 && why != NULL,
		       "'%s' was taken", bad[i]);
	}
}

/*
 * Order-free runs (pipeline_run_free): batches numbered from a shared
 * counter, each slot filled, worked and consumed by its own thread. Plain
 * per-slot arrays carry the data, so under -fsanitize=thread a slot used
 * by two threads is reported.
 */
#define FREE_BATCHES 20000
#define FREE_UNITS 64

struct free_slot {
	uint64_t batch;
	size_t units;
	uint64_t out[FREE_UNITS];
	uint64_t consumed, sum;
	pthread_t owner;
	int owner_set, foreign;	/* another thread used the slot */
};

struct free_ctx {
	atomic_uint_least64_t next;	/* the next batch number */
	atomic_uint_least64_t filled_after_stop;
	atomic_int stopped;
	uint64_t stop_at;		/* consume of this batch returns 9; 0: never */
	struct free_slot slots[PIPELINE_SLOTS];
};

static void note_owner(struct free_slot *s)
{
	if (!s->owner_set) {
		s->owner = pthread_self();
		s->owner_set = 1;
	} else if (!pthread_equal(s->owner, pthread_self())) {
		s->foreign = 1;
	}
}

static int free_fill(void *arg, unsigned slot, size_t *units)
{
	struct free_ctx *c = arg;
	struct free_slot *s = &c->slots[slot];
	uint64_t b = atomic_fetch_add(&c->next, 1) + 1;

	note_owner(s);
	if (b > FREE_BATCHES)
		return 0;
	if (atomic_load(&c->stopped))
		atomic_fetch_add(&c->filled_after_stop, 1);
	s->batch = b;
	s->units = (size_t)(b % (FREE_UNITS + 1));
	*units = s->units;
	return 1;
}

static void free_work(void *arg, unsigned slot, size_t from, size_t to)
{
	struct free_ctx *c = arg;
	struct free_slot *s = &c->slots[slot];

	note_owner(s);
	for (size_t i = from; i < to; i++)
		s->out[i] = s->batch * 1000 + i;
}

static int free_consume(void *arg, unsigned slot)
{
	struct free_ctx *c = arg;
	struct free_slot *s = &c->slots[slot];

	note_owner(s);
	s->consumed++;
	for (size_t i = 0; i < s->units; i++)
		s->sum += s->out[i];
	if (s->batch == c->stop_at) {
		atomic_store(&c->stopped, 1);
		return 9;
	}
	return 0;
}

/* Every batch once, each slot on one thread; with a stop, 9 back and few fills after it. */
static void free_run(int threads, uint64_t stop_at)
{
	static const struct pipeline_free_fns fns = { free_fill, free_work, free_consume };
	struct free_ctx *c = calloc(1, sizeof *c);
	uint64_t consumed = 0, sum = 0, want = 0;
	int rc;

	CHECK(c != NULL);
	c->stop_at = stop_at;
	rc = pipeline_run_free(&fns, c, threads);
	for (unsigned i = 0; i < PIPELINE_SLOTS; i++) {
		CHECKF(!c->slots[i].foreign, "slot %u used by two threads", i);
		CHECKF(i < (unsigned)threads || !c->slots[i].owner_set, "slot %u used with %d threads", i, threads);
		consumed += c->slots[i].consumed;
		sum += c->slots[i].sum;
	}
	for (uint64_t b = 1; b <= FREE_BATCHES; b++)
		for (uint64_t i = 0; i < b % (FREE_UNITS + 1); i++)
			want += b * 1000 + i;
	if (stop_at == 0) {
		CHECKF(rc == 0 && consumed == FREE_BATCHES && sum == want,
		       "%d threads: rc %d, %llu batches consumed", threads, rc, (unsigned long long)consumed);
	} else {
		CHECKF(rc == 9 && consumed < FREE_BATCHES, "%d threads: rc %d, %llu consumed", threads,
		       rc, (unsigned long long)consumed);
		CHECKF(atomic_load(&c->filled_after_stop) < (uint64_t)threads,
		       "%d threads: %llu batches filled after the stop", threads,
		       (unsigned long long)atomic_load(&c->filled_after_stop));
	}
	free(c);
}

static void free_runs(void)
{
	static const int counts[] = { 1, 2, 3, 4, 8, 16, 40 };

	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		free_run(counts[i], 0);
		if (unit_failed_check)
			return;
		free_run(counts[i], 777);
		if (unit_failed_check)
			return;
	}
}

void suite_pipeline(void)
{
	unit_run("pipeline: a program's lower default ceiling caps the CPU default, never -j or BFTOOLS_THREADS",
		 a_default_ceiling_caps_only_the_default);
	unit_run("pipeline: order-free runs on 1..16 threads (40 capped to 16): every batch once, each slot on one thread, a stop returned and few fills after it", free_runs);
	unit_run("pipeline: 1 thread: 10,000 batches of 0..3000 units: each unit worked once, batches complete and consumed in order", order_1);
	unit_run("pipeline: 2 threads: 10,000 batches of 0..3000 units: each unit worked once, batches complete and consumed in order", order_2);
	unit_run("pipeline: 1 thread: consume returning nonzero stops at once and pipeline_run returns it", stop_1);
	unit_run("pipeline: 3 threads: each unit worked once, batches consumed in order", order_3);
	unit_run("pipeline: 4 threads: each unit worked once, batches consumed in order", order_4);
	unit_run("pipeline: 8 threads: each unit worked once, batches consumed in order", order_8);
	unit_run("pipeline: 3 threads: consume returning nonzero stops at once", stop_3);
	unit_run("pipeline: 8 threads: consume returning nonzero stops at once", stop_8);
	unit_run("pipeline: 8 threads: a fill ending at once means no work, no consume, 0", empty_8);
	unit_run("pipeline: 4 threads: work and consume get the slot fill filled", slot_4);
	unit_run("pipeline: 8 threads: work and consume get the slot fill filled", slot_8);
	unit_run("pipeline: 4 threads: work runs on the workers too, not only caller and reader", work_runs_on_the_workers_too);
	unit_run("pipeline: thread counts: digits 1..256 only", thread_counts_parse);
	unit_run("pipeline: 2 threads: consume returning nonzero stops at once and pipeline_run returns it", stop_2);
	unit_run("pipeline: 1 thread: a fill ending at once means no work, no consume, 0", empty_1);
	unit_run("pipeline: 2 threads: a fill ending at once means no work, no consume, 0", empty_2);
	unit_run("pipeline: 1 thread: work and consume get the slot fill filled", slot_1);
	unit_run("pipeline: 2 threads: work and consume get the slot fill filled", slot_2);
	unit_run("pipeline: 1 thread: all work runs on the calling thread", one_thread_works_on_the_caller_only);
	unit_run("pipeline: 2 threads: work runs on both the calling and the reader thread", work_runs_on_both_threads);
	unit_run("pipeline: 2 threads: a fill blocked in read(2) is cancelled when consume stops", cancel_2);
	unit_run("pipeline: 4 threads: a fill blocked in read(2) is cancelled when consume stops, the workers woken and joined", cancel_4);
	unit_run("pipeline: 2 threads: a halt from consume cancels the blocked fill and joins the reader; nothing more is consumed", halt_2);
	unit_run("pipeline: 4 threads: a halt from consume leaves the calling thread alone; nothing more is consumed", halt_4);
	unit_run("pipeline: order-free, 4 threads: a halt from the caller's consume stops and joins the others", free_run_halts_from_consume);
	unit_run("pipeline: a halt on a thread that started no run does nothing", halt_without_a_run_does_nothing);
	unit_run("pipeline: BFTOOLS_THREADS=N chooses the threads, pipeline_set_threads overrides it; unset or bad values give the CPUs up to 8", threads_follow_the_environment);
}
