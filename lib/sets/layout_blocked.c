/* SPDX-License-Identifier: MIT */
/*
 * layout_blocked.c - the blocked layout (Putze, Sanders & Singler 2007): all
 * k probes of a key fall inside one 512-bit block (one cache line), so a
 * lookup costs one memory miss instead of k. It needs a little more memory
 * for the same rate (model.c says how much), and it is the default.
 *
 *   block = floor(h1 * B / 2^64), B = m / 512 blocks ("fastrange":
 *   a multiply instead of a division, uniform for any B)
 *   for i in 0..k-1: probe bit (h2 * C[i]) >> 55 of the block
 *   C[i] = the i-th output of splitmix64 seeded with 0, lowest
 *   bit set (table below). Each probe is a multiplicative hash of
 *   all 64 bits of h2. A linear sequence such as the top bits of
 *   x + i*y would be cheaper, but its top 9 bits depend almost
 *   only on the top bits of x and y: keys sharing a block would
 *   share whole probe patterns, and the measured false-positive
 *   rate at p = 1e-4 came out near 5e-4. The k multiplies are
 *   independent of each other, so they pipeline.
 *
 * A key is its block's first word plus either its bits as a mask over the
 * block's 8 words (to add: 8 word operations on one cache line) or, for a
 * batch that is only tested, its SipHash halves, from which the bits are
 * derived as they are tested: the test stops at the first bit clear, so an
 * absent key costs one or two probes on average, not k. Tests run eight
 * probes at a time where the CPU has AVX-512 (blocked_simd.c).
 *
 * A big blocked filter can have the pages its next keys land in backed,
 * and their blocks loaded into cache, by the thread that hashed them
 * (layout.ready, filter_ready_hashed).
 *
 * Because a key touches one block only, keys of different blocks never
 * meet: regions of blocks can be owned by different threads, in order
 * within each (LAYOUT_ONE_BLOCK).
 */
#include "layout.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blocked_simd.h"
#include "model.h"
#include "pipeline.h"
#include "popcount.h"
#include "staged.h"
#include "untouched.h"

#define BLOCK_WORDS (FILTER_BLOCK_BITS / 64)

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
static inline uint64_t mul_high(uint64_t a, uint64_t b)
{
	return (uint64_t)(((u128)a * b) >> 64);
}
#else
static inline uint64_t mul_high(uint64_t a, uint64_t b)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;

	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
#endif

/*
 * A batch's keys: block first words, and the masks when they are to be
 * added (see the file comment).
 */
struct blocked_batch {
	uint64_t base[LAYOUT_BATCH];
	_Alignas(64) uint64_t block[LAYOUT_BATCH][BLOCK_WORDS];
};

/* Odd multipliers for the in-block probes (see the file comment). */
static const uint64_t probe_multiplier[FILTER_K_MAX] = {
	UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f5), UINT64_C(0x06c45d188009454f),
	UINT64_C(0xf88bb8a8724c81ed), UINT64_C(0x1b39896a51a8749b), UINT64_C(0x53cb9f0c747ea2eb),
	UINT64_C(0x2c829abe1f4532e1), UINT64_C(0xc584133ac916ab3d), UINT64_C(0x3ee5789041c98ac3),
	UINT64_C(0xf3b8488c368cb0a7), UINT64_C(0x657eecdd3cb13d09), UINT64_C(0xc2d326e0055bdef7),
	UINT64_C(0x8621a03fe0bbdb7b), UINT64_C(0x8e1f7555983aa92f), UINT64_C(0xb54e0f1600cc4d19),
	UINT64_C(0x84bb3f97971d80ab), UINT64_C(0x7d29825c75521255), UINT64_C(0xc3cf17102b7f7f87),
	UINT64_C(0x3466e9a083914f65), UINT64_C(0xd81a8d2b5a4485ad), UINT64_C(0xdb01602b100b9ed7),
	UINT64_C(0xa9038a921825f10d), UINT64_C(0xedf5f1d90dca2f6b), UINT64_C(0x54496ad67bd2634d),
	UINT64_C(0xdd7c01d4f5407269), UINT64_C(0x935e82f1db4c4f7b), UINT64_C(0x69b82ebc92233301),
	UINT64_C(0x40d29eb57de1d511), UINT64_C(0xa2f09dabb45c6317), UINT64_C(0xee521d7a0f4d3873),
	UINT64_C(0xf16952ee72f3454f), UINT64_C(0x377d35dea8e40225), UINT64_C(0x0c7de8064963bab1),
	UINT64_C(0x05582d37111ac529), UINT64_C(0xd254741f599dc6f7), UINT64_C(0x69630f7593d108c3),
	UINT64_C(0x417ef96181daa383), UINT64_C(0x3c3c41a3b43343a1), UINT64_C(0x6e19905dcbe531df),
	UINT64_C(0x4fa9fa7324851729), UINT64_C(0x84eb4454a792922b), UINT64_C(0x134f7096918175cf),
	UINT64_C(0x07dc930b302278a9), UINT64_C(0x12c015a97019e937), UINT64_C(0xcc06c31652ebf439),
	UINT64_C(0xecee65630a691e37), UINT64_C(0x3e84ecb1763e79ad), UINT64_C(0x690ed476743aae49),
	UINT64_C(0x774615d7b1a1f2e1), UINT64_C(0x22b353f04f4f52db), UINT64_C(0xe3ddd86ba71a5eb1),
	UINT64_C(0xdf268adeb6513357), UINT64_C(0x2098eb73d4367d77), UINT64_C(0x03d6845323ce3c71),
	UINT64_C(0xc952c5620043c715), UINT64_C(0x9b196bca844f1705), UINT64_C(0x30260345dd9e0ec1),
	UINT64_C(0xcf448a5882bb9699), UINT64_C(0xf4a578dccbc87657), UINT64_C(0xbfdeaed9a17b3c8f),
	UINT64_C(0xed79402d1d5c5d7b), UINT64_C(0x55f070ab1cbbf171), UINT64_C(0x3e00a34929a88f1d),
	UINT64_C(0xe255b237b8bb18fb),
};

static inline uint64_t blocked_base(const struct filter *f, const uint64_t h[2])
{
	return mul_high(h[0], f->params.m / FILTER_BLOCK_BITS) * 8;
}

static inline uint64_t blocked_bit(const uint64_t h[2], uint32_t i)
{
	return (h[1] * probe_multiplier[i]) >> 55;
}

static void blocked_probes(const struct filter *f, const uint64_t h[2],
			   uint64_t block[FILTER_BLOCK_BITS / 64])
{
	memset(block, 0, FILTER_BLOCK_BITS / 8);
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i);

		block[bit >> 6] |= UINT64_C(1) << (bit & 63);
	}
}

/* Are all of the key's bits set in its block? Stops at the first that is not. */
static int blocked_all_set(const struct filter *f, const uint64_t *w, const uint64_t h[2])
{
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i);

		if (!(w[bit >> 6] & UINT64_C(1) << (bit & 63)))
			return 0;
	}
	return 1;
}

/*
 * Set bits in a word of a blocked filter. One thread adds, but another may
 * be loading the same words ahead of it (filter_ready_hashed), so both
 * sides use relaxed atomic accesses: a plain store beside an atomic load
 * is a data race, undefined behaviour in C11. Relaxed loads and stores
 * order nothing and compile to the plain moves on x86-64 and arm64; the
 * read-modify-write need not be atomic, as only the adding thread writes.
 */
static inline void word_set_bits(uint64_t *w, uint64_t bits)
{
	__atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) | bits, __ATOMIC_RELAXED);
}

/* Set the key's bits in its block w; were they all set already? */
static int blocked_test_and_set(const struct filter *f, uint64_t *w, const uint64_t h[2])
{
	uint64_t missing = 0;

	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i), mask = UINT64_C(1) << (bit & 63);

		missing |= mask & ~w[bit >> 6];
		word_set_bits(&w[bit >> 6], mask);
	}
	return missing == 0;
}

/*
 * Staging (staged.h): a fresh big filter's blocks live in a table until
 * the filter goes dense (the table holds a block per 4 KiB page of the
 * array: dense_blocks) or its array is needed (layout_blocked_settle).
 * Every probe of a staged filter reads and writes the table's copy of the
 * block, under the table's lock, with the same bit operations as on the
 * array, so that the bits are the same wherever they live.
 */

/* Whether the filter's bits are in its table (a hint: stage_enter decides under the lock). */
static int staged_now(const struct filter *f)
{
	return f->staged != NULL && __atomic_load_n(&f->staged->active, __ATOMIC_ACQUIRE);
}

/*
 * A staged block into the array: an atomic OR, which is a write, so the
 * page is backed by one write fault (a load first would fault it in for
 * reading, and the store fault again: twice the faults of a settle).
 */
static void write_block(const struct filter *f, uint64_t base, const uint64_t *block)
{
	for (unsigned j = 0; j < BLOCK_WORDS; j++)
		if (block[j] != 0)
			(void)__atomic_fetch_or(&f->words[base + j], block[j], __ATOMIC_RELAXED);
}

/*
 * The table's blocks written WRITE_AHEAD behind their prefetch: the table
 * is read in its own order, so every block lands somewhere else in the
 * array, and each atomic OR waited for its line alone (672,000 blocks of
 * a -n 1e9 filter going dense: 0.15 s on one thread, the others waiting).
 * A prefetch of a page not backed yet does nothing, and the write faults.
 */
#define WRITE_AHEAD 16

struct block_writer {
	const struct filter *f;
	unsigned pending, next;
	uint64_t base[WRITE_AHEAD];
	const uint64_t *block[WRITE_AHEAD];
};

static void write_block_ahead(void *ctx, uint64_t base, const uint64_t *block)
{
	struct block_writer *w = ctx;
	unsigned slot = w->next;

	__builtin_prefetch(&w->f->words[base], 1, 3);
	if (w->pending == WRITE_AHEAD)
		write_block(w->f, w->base[slot], w->block[slot]);
	else
		w->pending++;
	w->base[slot] = base;
	w->block[slot] = block;
	w->next = (slot + 1) % WRITE_AHEAD;
}

static void write_blocks(const struct filter *f, const struct staged *s)
{
	struct block_writer w = { .f = f };

	staged_each(s, write_block_ahead, &w);
	for (unsigned i = 0; i < w.pending; i++) {
		unsigned slot = (w.next + WRITE_AHEAD - w.pending + i) % WRITE_AHEAD;

		write_block(f, w.base[slot], w.block[slot]);
	}
}

static void make_dense(const struct filter *f);

#define POPULATE_THREADS_MAX 8

/* The spans still to back, handed out one at a time (populate_all). */
struct populate_job {
	const struct filter *f;
	uint64_t spans;
	uint64_t next;		/* the next span to claim, atomically */
};

#ifdef MADV_POPULATE_WRITE
/* Back span i of the array, 2 MiB (less at its end): madvise's answer. */
static int populate_span(const struct filter *f, uint64_t i)
{
	uint64_t bytes = f->params.m / 8, start = i * FILTER_BACK_SPAN;
	uint64_t len = bytes - start < FILTER_BACK_SPAN ? bytes - start : FILTER_BACK_SPAN;

	return madvise((char *)f->words + start, (size_t)len, MADV_POPULATE_WRITE);
}
#endif

/*
 * Claim spans and back them, a call each, until none is left. A span a
 * call: on this machine one call over a thread's half of a 2.75 GB array
 * took 0.25-0.28 s, and up to 5 s in one run of four, where the same spans
 * a call each took 0.15-0.20 s every time (a test program of four ways to
 * back it, alternating, 2026-12-02; issue 33). Claimed, not dealt out:
 * how long a span takes is the host's to say (memory it took back costs
 * a host fault a page), and with every other span dealt to each of two
 * threads one finished its half in 0.65 s and the other in 1.85 s while
 * the pipeline waited (perf, a pipe of 25M lines, 2026-12-02). Failing,
 * the writes fault instead.
 */
static void *populate_claimed(void *arg)
{
#ifdef MADV_POPULATE_WRITE
	struct populate_job *job = arg;

	for (uint64_t i; (i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED)) < job->spans;)
		(void)populate_span(job->f, i);
#else
	(void)arg;
#endif
	return NULL;
}

/*
 * Going dense from the table: the whole array backed now, in huge pages,
 * on as many threads as the run has (at most 8), before the blocks are
 * written in. A dense filter's spans are all written soon anyway, and the
 * other threads wait on the table's lock meanwhile: one thread faulting
 * 1,300 spans of 2 MiB one after another was most of what a pipe of 1e8
 * lines into -n 1e9 lost against a filter dense from the start. The spans
 * are marked backed, for back_spans to skip.
 */
static void populate_all(const struct filter *f)
{
	uint64_t spans = (f->params.m / 8 + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;
	struct populate_job job = { f, spans, 0 };
	pthread_t thread[POPULATE_THREADS_MAX];
	int started[POPULATE_THREADS_MAX];
	unsigned parts = (unsigned)pipeline_threads();

	if (parts > POPULATE_THREADS_MAX)
		parts = POPULATE_THREADS_MAX;
	if (parts < 1 || spans < parts)
		parts = 1;
	for (unsigned i = 1; i < parts; i++)
		started[i] = pthread_create(&thread[i], NULL, populate_claimed, &job) == 0;
	populate_claimed(&job);	/* a thread that did not start leaves its spans to this one */
	for (unsigned i = 1; i < parts; i++)
		if (started[i])
			pthread_join(thread[i], NULL);
	for (uint64_t i = 0; i < spans; i++)
		__atomic_fetch_or(&f->backed[FILTER_BACKED_HEAD + i / 64], UINT64_C(1) << (i % 64), __ATOMIC_RELAXED);
}

/*
 * The table's blocks into the array, and the table given up (its lock
 * held): as huge pages when dense (the whole array backed first, when the
 * table's blocks made it dense; lazily, span by span as keys land, when
 * the caller expects it dense: filter_expect_adds counts repeats, which a
 * table of blocks does not), else page by page as the keys would have
 * written them, their count going on to the dense rule (dense_now).
 * The release store makes the blocks visible to every thread that then
 * finds the table inactive.
 */
enum unstage_to { TO_SPARSE, TO_DENSE, TO_DENSE_LAZILY };

static void unstage(const struct filter *f, struct staged *s, enum unstage_to to)
{
	if (to != TO_SPARSE) {
		make_dense(f);
		if (to == TO_DENSE)
			populate_all(f);
	} else
		__atomic_add_fetch(&f->backed[0], s->adds, __ATOMIC_RELAXED);
	write_blocks(f, s);
	staged_clear(s);
	__atomic_store_n(&s->active, 0, __ATOMIC_RELEASE);
}

/*
 * Blocks in the table from which the filter is dense: a block per 4 KiB
 * page of the array on average (FILTER_DENSE_KEYS_PER_SPAN a span), where
 * the page-a-key rule of a filter without a table turned it dense too,
 * but counting blocks, not adds: a stream of a thousand keys repeated
 * forever stays a thousand blocks in the table (a filter without a table
 * backed a 2 MiB span for each).
 */
static uint64_t dense_blocks(const struct filter *f)
{
	return (f->params.m / 8 + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN * FILTER_DENSE_KEYS_PER_SPAN;
}

/*
 * The table of a staged filter, locked, for a batch of n keys (adds: that
 * may add, and count as keys added); NULL when the filter's bits are in
 * its array, which the caller then uses. A batch that could make the
 * table reach dense_blocks, or finds no memory to grow it, unstages it
 * first.
 */
static struct staged *stage_enter(const struct filter *f, size_t n, int adds)
{
	struct staged *s = f->staged;
	int dense;

	if (s == NULL || !__atomic_load_n(&s->active, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (!s->active) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	if (!adds)
		return s;
	dense = s->used + n >= dense_blocks(f);
	if (dense || staged_reserve(s, n) < 0) {
		unstage(f, s, dense ? TO_DENSE : TO_SPARSE);
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	s->adds += n;
	return s;
}

static void stage_leave(struct staged *s)
{
	pthread_mutex_unlock(&s->lock);
}

void layout_blocked_settle(const struct filter *f)
{
	struct staged *s = stage_enter(f, 0, 0);

	if (s == NULL)
		return;
	unstage(f, s, TO_SPARSE);
	stage_leave(s);
}

/* Staged: set the keys' bits, their bases put in base (each batch's room is reserved by stage_enter). */
static void staged_add(const struct filter *f, struct staged *s, const uint64_t *h, size_t n,
		       uint64_t *base)
{
	for (size_t i = 0; i < n; i++)
		base[i] = blocked_base(f, h + 2 * i);
	staged_prefetch(s, base, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t mask[BLOCK_WORDS], *w = staged_block(s, base[i], 1);

		blocked_probes(f, h + 2 * i, mask);
		for (unsigned j = 0; j < BLOCK_WORDS; j++)
			w[j] |= mask[j];
	}
}

/* Staged: are the keys at these bases present? A block not in the table has no bits. */
static void staged_test(const struct filter *f, struct staged *s, const uint64_t *base,
			const uint64_t *h, size_t n, unsigned char *present)
{
	staged_prefetch(s, base, n);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *w = staged_block(s, base[i], 0);

		present[i] = (unsigned char)(w != NULL && blocked_all_set(f, w, h + 2 * i));
	}
}

/* Staged: test and set, in order; the keys that were fresh. */
static size_t staged_test_and_set(const struct filter *f, struct staged *s, const uint64_t *base,
				  const uint64_t *h, size_t n, unsigned char *present)
{
	size_t fresh = 0;

	staged_prefetch(s, base, n);
	for (size_t i = 0; i < n; i++) {
		present[i] = (unsigned char)blocked_test_and_set(f, staged_block(s, base[i], 1), h + 2 * i);
		fresh += !present[i];
	}
	return fresh;
}

/* The bases of n keys, prefetched for writing; their masks too when masks. */
static void blocked_prepare(const struct filter *f, const uint64_t *h, size_t n, int masks,
			    struct blocked_batch *b)
{
	for (size_t i = 0; i < n; i++) {
		b->base[i] = blocked_base(f, h + 2 * i);
		__builtin_prefetch(&f->words[b->base[i]], 1, 0);
		if (masks)
			blocked_probes(f, h + 2 * i, b->block[i]);
	}
}

/* Are all of key i's bits set, by its mask? */
static int mask_all_set(const struct filter *f, const struct blocked_batch *b, size_t i)
{
	const uint64_t *w = f->words + b->base[i];
	uint64_t missing = 0;

	for (unsigned j = 0; j < BLOCK_WORDS; j++)
		missing |= b->block[i][j] & ~w[j];
	return missing == 0;
}

static void mask_set(struct filter *f, const struct blocked_batch *b, size_t i)
{
	uint64_t *w = f->words + b->base[i];

	for (unsigned j = 0; j < BLOCK_WORDS; j++)
		word_set_bits(&w[j], b->block[i][j]);
}

static void blocked_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	struct staged *s = stage_enter(f, n, 1);
	struct blocked_batch b;

	(void)keys;
	if (s != NULL) {
		staged_add(f, s, h, n, b.base);
		stage_leave(s);
		return;
	}
	blocked_prepare(f, h, n, 1, &b);
	for (size_t i = 0; i < n; i++)
		mask_set(f, &b, i);
}

void layout_blocked_test_bases(const struct filter *f, const uint64_t *base, const uint64_t *h,
			       size_t n, unsigned char *present)
{
	struct staged *s = stage_enter(f, n, 0);

	if (s != NULL) {
		staged_test(f, s, base, h, n, present);
		stage_leave(s);
		return;
	}
	if (blocked_test_many(f->words, base, h, n, f->params.k, probe_multiplier, present) == 0)
		return;
	for (size_t i = 0; i < n; i++)
		present[i] = (unsigned char)blocked_all_set(f, f->words + base[i], h + 2 * i);
}

static void blocked_test(const struct filter *f, const struct line *keys, const uint64_t *h,
			 size_t n, unsigned char *present)
{
	struct blocked_batch b;

	(void)keys;
	blocked_prepare(f, h, n, 0, &b);
	layout_blocked_test_bases(f, b.base, h, n, present);
}

/*
 * All tested at once (eight probes at a time where the CPU can), then only
 * the absent set, probe by probe, and asked again as they are, so a repeat
 * later in the batch meets its first copy: a key found present stays
 * present, as adds only set bits. For a filter of gigabytes, where the
 * adding thread waits on every line, this saved a fifth of its time, and on
 * a window's generations a fifth against building every key's mask (whose
 * vector-cleared words stall the loads that read them back). The lines are
 * the caller's to have in cache. Returns how many keys were fresh.
 */
static size_t test_then_set(struct filter *f, const uint64_t *base, const uint64_t *h, size_t n,
			    unsigned char *present)
{
	size_t fresh = 0;

	if (blocked_test_many(f->words, base, h, n, f->params.k, probe_multiplier, present) < 0)
		memset(present, 0, n);
	for (size_t i = 0; i < n; i++) {
		if (present[i])
			continue;
		present[i] = (unsigned char)blocked_test_and_set(f, f->words + base[i], h + 2 * i);
		fresh += !present[i];
	}
	return fresh;
}

size_t layout_blocked_test_and_add_bases(struct filter *f, const uint64_t *base,
					 const uint64_t *h, size_t n, unsigned char *present)
{
	struct staged *s = stage_enter(f, n, 1);
	size_t fresh;

	if (s == NULL)
		return test_then_set(f, base, h, n, present);
	fresh = staged_test_and_set(f, s, base, h, n, present);
	stage_leave(s);
	return fresh;
}

/*
 * Test-and-add: for a filter far bigger than the caches, test then set
 * (measured faster, where the CPU tests eight probes at a time); for one in
 * them, building the masks is quicker.
 */
static size_t blocked_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
				   size_t n, unsigned char *present)
{
	int simd = f->params.m / 8 >= FILTER_READY_MIN && blocked_simd_usable();
	struct blocked_batch b;
	size_t fresh = 0;

	(void)keys;
	if (staged_now(f)) {
		layout_blocked_bases(f, h, n, b.base);
		return layout_blocked_test_and_add_bases(f, b.base, h, n, present);
	}
	blocked_prepare(f, h, n, !simd, &b);
	if (simd)
		return test_then_set(f, b.base, h, n, present);
	/* in order, so a repeat later in the batch sees the earlier key */
	for (size_t i = 0; i < n; i++) {
		int seen = mask_all_set(f, &b, i);

		present[i] = (unsigned char)seen;
		fresh += (size_t)!seen;
		if (!seen)
			mask_set(f, &b, i);
	}
	return fresh;
}

static void blocked_add_shared(struct filter *f, const struct line *keys, const uint64_t *h,
			       size_t n)
{
	struct staged *s = stage_enter(f, n, 1);
	struct blocked_batch b;

	(void)keys;
	if (s != NULL) {
		staged_add(f, s, h, n, b.base);
		stage_leave(s);
		return;
	}
	blocked_prepare(f, h, n, 1, &b);
	for (size_t i = 0; i < n; i++) {
		uint64_t *w = f->words + b.base[i];

		for (unsigned j = 0; j < BLOCK_WORDS; j++)
			if (b.block[i][j] != 0)
				layout_word_or_shared(&w[j], b.block[i][j]);
	}
}

static void blocked_positions(const struct filter *f, const struct line *key, const uint64_t h[2],
			      uint64_t *positions)
{
	(void)key;
	for (uint32_t i = 0; i < f->params.k; i++)
		positions[i] = blocked_base(f, h) * 64 + blocked_bit(h, i);
}

/* Set once a kernel refuses MADV_POPULATE_WRITE (before 5.14): stop asking. */
static int populate_refused;
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25	/* Linux 6.1; libc headers may predate it */
#endif

/* backed[1]: 0 sparse, 1 dense, CHANGING while one thread makes it dense (become_dense) */
#define CHANGING 2

static int take_state(const struct filter *f, uint64_t state)
{
	uint64_t sparse = 0;

	return __atomic_compare_exchange_n(&f->backed[1], &sparse, state, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* Dense from now on: huge pages asked for, once. */
static void make_dense(const struct filter *f)
{
	if (!take_state(f, 1))
		return;
#ifdef MADV_HUGEPAGE
	(void)madvise(f->words, (size_t)(f->params.m / 8), MADV_HUGEPAGE);
#endif
}

void layout_blocked_dense(const struct filter *f)
{
	struct staged *s = stage_enter(f, 0, 0);

	if (s != NULL) {
		unstage(f, s, TO_DENSE_LAZILY);
		stage_leave(s);
		return;
	}
	make_dense(f);
}

/*
 * Keys made the filter dense: the spans they left in 4 KiB pages made
 * huge pages, the pages there copied and the rest zeroed, by this thread
 * alone in one call (Linux 6.1's MADV_COLLAPSE; before it, or where the
 * kernel will not, they stay in 4 KiB pages). One call, as each call first
 * drains every CPU's page lists and waits for it: a call a span, on each
 * thread whose keys landed there, cost from 1 to 13 CPU-seconds a run on
 * this shared machine. Meanwhile other threads go on as sparse
 * (CHANGING). Untouched spans are left to back_spans, a fresh huge page each.
 */
static void become_dense(const struct filter *f)
{
	uint64_t bytes = f->params.m / 8;

	if (!take_state(f, CHANGING))
		return;
#ifdef MADV_HUGEPAGE
	(void)madvise(f->words, (size_t)bytes, MADV_HUGEPAGE);
#endif
#ifdef MADV_COLLAPSE
	(void)madvise(f->words, (size_t)(bytes / FILTER_BACK_SPAN * FILTER_BACK_SPAN), MADV_COLLAPSE);
#endif
	__atomic_store_n(&f->backed[1], 1, __ATOMIC_RELEASE);
}

/* Whether the filter is dense (1); sparse or becoming dense, 0. */
static int dense(const struct filter *f)
{
	return __atomic_load_n(&f->backed[1], __ATOMIC_ACQUIRE) == 1;
}

/*
 * Whether the filter is dense yet, counting these n keys: then huge pages
 * are asked for, once (filter_expect_dense). Sparse, each key's 4 KiB
 * page is all it costs.
 */
static int dense_now(const struct filter *f, size_t n)
{
	uint64_t spans = (f->params.m / 8 + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;

	if (__atomic_load_n(&f->backed[1], __ATOMIC_RELAXED))
		return dense(f);
	if (__atomic_add_fetch(&f->backed[0], n, __ATOMIC_RELAXED) < spans * FILTER_DENSE_KEYS_PER_SPAN)
		return 0;
	become_dense(f);
	return dense(f);
}

/* Once the filter is dense: have the 2 MiB spans the blocks at these words lie in backed, each span once. */
static void back_spans(const struct filter *f, const uint64_t *base, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	if (f->backed == NULL || __atomic_load_n(&populate_refused, __ATOMIC_RELAXED) || !dense_now(f, n))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t span = base[i] * 8 / FILTER_BACK_SPAN;
		uint64_t *word = &f->backed[FILTER_BACKED_HEAD + span / 64], bit = UINT64_C(1) << (span % 64);

		if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
			continue;
		/* both threads may ask for the same span at once: the kernel serves it once */
		if (populate_span(f, span) != 0 && errno == EINVAL) {
			__atomic_store_n(&populate_refused, 1, __ATOMIC_RELAXED);
			return;
		}
		/* ENOMEM and the like: the add will fault it in itself, as without this */
		__atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
	}
#else
	(void)f, (void)base, (void)n;
#endif
}

/*
 * Load the cache line of each block at these words: prefetch them all,
 * then read one word of each, so the misses overlap. Only loads: what this
 * thread takes in is the line (into its caches and the shared L3) and the
 * address translation walk, both of which the adding thread would
 * otherwise wait for. Prefetches alone proved not enough (they do not hide
 * a miss whose translation misses the TLB); real loads are kept by
 * reading into a volatile. The loads are relaxed atomics because another
 * thread may be adding to these words; the values read are thrown away.
 */
static void load_blocks(const struct filter *f, const uint64_t *base, size_t n)
{
	volatile uint64_t sink;
	uint64_t acc = 0;

	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(&f->words[base[i]], 0, 3);
	for (size_t i = 0; i < n; i++)
		acc ^= __atomic_load_n(&f->words[base[i]], __ATOMIC_RELAXED);
	sink = acc;
	(void)sink;
}

/*
 * A sparse filter's blocks at these words, written without being changed
 * (an atomic OR of nothing): each page a key lands in is backed here, by
 * one write fault on this thread. Left to the add, its test would read
 * the page first, mapping the shared zero page, and its set fault a
 * second time to replace it (do_wp_page: a fresh page, cleared, the zero
 * page copied in): two faults a page, on the thread every line waits for.
 */
static void touch_blocks(const struct filter *f, const uint64_t *base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		(void)__atomic_fetch_or((uint64_t *)&f->words[base[i]], 0, __ATOMIC_RELAXED);
}

/* Backed first: a load of a page never written would map the zero page, to be faulted again by the add. */
static void blocked_ready(const struct filter *f, const uint64_t *h, size_t n)
{
	if (f->words == NULL || f->params.m / 8 < FILTER_READY_MIN)
		return;
	/* staged, the array is not written yet: nothing of it to make ready */
	if (staged_now(f))
		return;
	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = n - done < LAYOUT_BATCH ? n - done : LAYOUT_BATCH;
		uint64_t base[LAYOUT_BATCH];

		for (size_t i = 0; i < len; i++)
			base[i] = blocked_base(f, h + 2 * (done + i));
		back_spans(f, base, len);
		/* sparse, a load would map the zero page, and the add fault again to replace it */
		if (f->backed == NULL || dense(f))
			load_blocks(f, base, len);
		else
			touch_blocks(f, base, len);
	}
}

void layout_blocked_bases(const struct filter *f, const uint64_t *h, size_t n, uint64_t *base)
{
	for (size_t i = 0; i < n; i++)
		base[i] = blocked_base(f, h + 2 * i);
}

static void copy_block(void *ctx, uint64_t base, const uint64_t *block)
{
	struct filter_block **next = ctx;

	(*next)->base = base;
	memcpy((*next)->words, block, sizeof (*next)->words);
	++*next;
}

static int by_block_base(const void *a, const void *b)
{
	const struct filter_block *x = a, *y = b;

	return (x->base > y->base) - (x->base < y->base);
}

int layout_blocked_staged_blocks(const struct filter *f, struct filter_block **blocks, size_t *n)
{
	struct staged *s = stage_enter(f, 0, 0);
	struct filter_block *next;
	size_t used;

	*blocks = NULL;
	*n = 0;
	if (s == NULL)
		return 0;
	used = (size_t)s->used;
	if (used > 0 && (*blocks = malloc(used * sizeof **blocks)) == NULL) {
		unstage(f, s, TO_SPARSE);	/* no memory for copies: the array, as it would have been */
		stage_leave(s);
		return 0;
	}
	next = *blocks;
	staged_each(s, copy_block, &next);
	stage_leave(s);
	if (*blocks != NULL) {
		*n = used;
		qsort(*blocks, used, sizeof **blocks, by_block_base);
	}
	return 1;
}

static void add_block_bits(void *ctx, uint64_t base, const uint64_t *block)
{
	(void)base;
	*(uint64_t *)ctx += popcount_words(block, BLOCK_WORDS);
}

int layout_blocked_staged_set(const struct filter *f, uint64_t *set)
{
	struct staged *s = stage_enter(f, 0, 0);

	if (s == NULL)
		return 0;
	*set = 0;
	staged_each(s, add_block_bits, set);
	stage_leave(s);
	return 1;
}

/*
 * A staged filter's bits set and rate, the same numbers to the last bit as
 * blocked_set_and_fpr's pass over the array: the blocks' terms summed in
 * the array's order (a block not in the table adds nothing to either).
 * Returns 0 when the filter is not staged (or there was no memory for the
 * sorted copies: it is settled instead, and the array is the filter).
 */
static int staged_set_and_fpr(const struct filter *f, uint64_t *set, double *fpr)
{
	struct filter_block *blocks;
	size_t n;
	double sum = 0.0;

	if (!layout_blocked_staged_blocks(f, &blocks, &n))
		return 0;
	*set = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = popcount_words(blocks[i].words, BLOCK_WORDS);

		*set += c;
		sum += pow((double)c / FILTER_BLOCK_BITS, f->params.k);
	}
	free(blocks);
	*fpr = sum / (double)(f->params.m / FILTER_BLOCK_BITS);
	return 1;
}

/*
 * A key never added is a false positive when all k of its probes hit set
 * bits of its block: (c/512)^k for a block with c bits set, averaged over
 * the blocks. Each block's count is the bits set too: both in one pass
 * (a save stores both, and a pass over a dense GiB is a tenth of a second).
 */
static void blocked_set_and_fpr(const struct filter *f, uint64_t *set, double *fpr)
{
	const uint64_t per_page = UNTOUCHED_PAGE / 8 / BLOCK_WORDS, per_span = UNTOUCHED_PAGES * per_page;
	uint64_t blocks = f->params.m / FILTER_BLOCK_BITS, total = 0;
	double hit[FILTER_BLOCK_BITS + 1], sum = 0.0;
	unsigned char read[UNTOUCHED_PAGES];

	if (staged_set_and_fpr(f, set, fpr))
		return;
	for (unsigned c = 0; c <= FILTER_BLOCK_BITS; c++)
		hit[c] = pow((double)c / FILTER_BLOCK_BITS, f->params.k);
	memset(read, 1, sizeof read);
	for (uint64_t b = 0; b < blocks; b++) {
		uint64_t c;

		/* pages never written: their blocks have no bits and hit[0] is 0; not read */
		if (b % per_span == 0 && blocks - b >= per_span)
			untouched_pages(f->words + b * BLOCK_WORDS, UNTOUCHED_SPAN, read);
		else if (b % per_span == 0)
			memset(read, 1, sizeof read);
		if (!read[b % per_span / per_page]) {
			b += per_page - 1;
			continue;
		}
		c = popcount_words(f->words + b * BLOCK_WORDS, BLOCK_WORDS);
		total += c;
		sum += hit[c];
	}
	*set = total;
	*fpr = sum / (double)blocks;
}

static double blocked_current_fpr(const struct filter *f)
{
	uint64_t set;
	double fpr;

	blocked_set_and_fpr(f, &set, &fpr);
	return fpr;
}

static uint64_t blocked_probed(const struct filter_params *p)
{
	return p->m;
}

const struct layout_ops layout_blocked = {
	.id = FILTER_BLOCKED,
	.name = "blocked",
	.unit = "bits",
	.position_bits = 1,
	.traits = LAYOUT_ONE_BLOCK | LAYOUT_SAVED,
	.check = layout_check_whole_m,
	.probed = blocked_probed,
	.add = blocked_add,
	.test = blocked_test,
	.test_and_add = blocked_test_and_add,
	.add_shared = blocked_add_shared,
	.remove = NULL,
	.positions = blocked_positions,
	.ready = blocked_ready,
	.set = popcount_words,
	.word_set = layout_word_bits,
	.saturated = NULL,
	.current_fpr = blocked_current_fpr,
	.set_and_fpr = blocked_set_and_fpr,
	.fpr = model_blocked_fpr,
	.estimate = model_blocked_estimate,
	.estimate_sd = model_blocked_estimate_sd,
	.unite = layout_or_words,
	.intersect = layout_and_words,
};
