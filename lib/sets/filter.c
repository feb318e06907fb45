/* SPDX-License-Identifier: MIT */
/*
 * filter.c - the Bloom filter core: memory, keys, hashing, batching,
 * statistics; the probing itself is the layout's (layout.h).
 *
 * One keyed SipHash-128 per key gives two 64-bit halves h1, h2, and every
 * probe position is derived from them, never from another hash: how is
 * each layout's own business (layout_blocked.c, layout_classic.c,
 * layout_counting.c; layout_dcso.c alone hashes the key bytes its own way,
 * as DCSO's files require). This file finds the layout's table and calls
 * through it, a batch of up to LAYOUT_BATCH keys at a time: hashed here
 * (many at once, SIMD lanes where the CPU has them) unless the caller
 * brought the hashes, then probed by the layout, which touches every cache
 * line of the batch before probing any, so the misses of a batch overlap
 * instead of queueing one after another: most of the speed of a big filter.
 *
 * Memory comes from an anonymous mmap: untouched pages are never backed, so
 * a filter sized for 1e9 keys costs only what the data actually touches.
 * Huge pages (fewer TLB misses) are asked for at once by big filters that
 * are not made ready (classic, counting: k probes anywhere soon touch
 * every span), and by a big blocked one only once it is dense
 * (FILTER_DENSE_KEYS_PER_SPAN, layout_blocked.c; or filter_expect_dense,
 * for a filter about to be loaded with many keys): a huge page for each
 * of a thousand keys was 2 GB for nothing (issue 33). Until then a new
 * one keeps its blocks in a table, not in pages (filter_stage, staged.h).
 */
#include "filter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "layout.h"
#include "staged.h"

#define HUGE_PAGE_MIN (UINT64_C(2) << 20)

const char filter_err_nomem[] = "cannot allocate memory for the filter";
const char filter_err_limit[] = "filter exceeds the memory limit";

/* Process-wide bookkeeping of bit-array memory (see filter.h). */
static uint64_t memory_limit, memory_in_use, refused_bytes;

void filter_set_memory_limit(uint64_t bytes)
{
	memory_limit = bytes;
}

uint64_t filter_memory_limit(void)
{
	return memory_limit;
}

uint64_t filter_memory_in_use(void)
{
	return memory_in_use;
}

uint64_t filter_refused_bytes(void)
{
	return refused_bytes;
}

int filter_memory_allows(uint64_t bytes)
{
	if (memory_limit == 0 || (bytes <= memory_limit && memory_in_use <= memory_limit - bytes))
		return 1;
	refused_bytes = bytes;
	return 0;
}

/*
 * The table of f's layout. filter_new refuses unknown layouts, so for a
 * filter it is never NULL.
 */
static const struct layout_ops *layout(const struct filter *f)
{
	return layout_of(f->params.layout);
}

/* The checks every layout shares, in the order their messages promise. */
static const char *params_fault(const struct filter_params *p, const struct layout_ops *l)
{
	if (l == NULL)
		return "unknown layout";
	if (p->hash != FILTER_SIPHASH_2_4 && p->hash != FILTER_SIPHASH_1_3 && p->hash != FILTER_FNV1)
		return "unknown hash function";
	if (!(l->traits & LAYOUT_KEYLESS) != (p->hash != FILTER_FNV1))
		return "the DCSO layout goes with the FNV-1 hash and nothing else";
	if (p->flags & ~FILTER_FLAGS_KNOWN)
		return "unknown key-normalisation flags";
	if ((l->traits & LAYOUT_KEYLESS) && p->flags != 0)
		return "a DCSO filter has no key and no key normalisation";
	if (p->k < 1 || p->k > FILTER_K_MAX)
		return "number of hashes (k) out of range 1..64";
	if (p->m < FILTER_BLOCK_BITS || p->m > FILTER_M_MAX)
		return "size (m) out of range 512..2^46 bits";
	if (p->m % FILTER_BLOCK_BITS != 0)
		return "size (m) not a multiple of 512";
	if (p->capacity < 1)
		return "capacity must be at least 1";
	if (!(p->target_p > 0.0 && p->target_p < 1.0))
		return "target rate out of range (0, 1)";
	return NULL;
}

int filter_params_check(const struct filter_params *p, const char **errstr)
{
	const struct layout_ops *l = layout_of(p->layout);
	const char *fault = params_fault(p, l);

	if (fault == NULL)
		return l->check(p, errstr);
	*errstr = fault;
	return -1;
}

uint64_t filter_array_bytes(const struct filter_params *p)
{
	const struct layout_ops *l = layout_of(p->layout);

	return p->m / 8 * (l ? l->position_bits : 1);
}

size_t filter_bytes(const struct filter *f)
{
	return (size_t)filter_array_bytes(&f->params);
}

/* The array's 64-bit words (m is a multiple of 512). */
static uint64_t array_words(const struct filter *f)
{
	return filter_array_bytes(&f->params) / 8;
}

static int key_is_unknown(const unsigned char key[16])
{
	static const unsigned char none[16];

	return memcmp(key, none, sizeof none) == 0;
}

/*
 * A zeroed bit array: an anonymous mapping; or, in a build with
 * -DBFTOOLS_FILTER_HEAP=BYTES, heap memory aligned to a cache line for
 * arrays up to BYTES. The fuzz harnesses are built so: AddressSanitizer
 * guards heap blocks with redzones, so a step past a small array is a
 * report, where in a mapping it lands unseen in the rest of the page; and
 * loading a small filter then costs no mmap and munmap. (back_spans'
 * madvise refuses unaligned spans, and then stops asking.)
 */
#ifdef BFTOOLS_FILTER_HEAP
#define ON_HEAP(bytes) ((bytes) <= (uint64_t)(BFTOOLS_FILTER_HEAP))
#else
#define ON_HEAP(bytes) 0
#endif

/*
 * An anonymous mapping of bytes that begins on a FILTER_BACK_SPAN (2 MiB)
 * boundary when it is that big: mapped a span longer, then trimmed. The
 * spans that filter_ready_hashed backs and collapses are counted from the
 * array's start, and the kernel makes a huge page only of an aligned
 * 2 MiB: at mmap's own (4 KiB) alignment every span straddled two, so no
 * span was ever backed, and each key's first test mapped the zero page
 * that its set then replaced (do_wp_page), a TLB shootdown sent to every
 * CPU the process runs on: a fifth of bfuniq's CPU at -j 4, and it grows
 * with the threads. (mmap aligns by itself only lengths that are whole
 * huge pages: the -n 1e9 filter of issue 33 is not one.)
 */
static void *aligned_mapping(uint64_t bytes)
{
	size_t len = (size_t)bytes, extra = bytes >= HUGE_PAGE_MIN ? (size_t)FILTER_BACK_SPAN : 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), used;
	char *map, *start;

	if (len > SIZE_MAX - extra - page)
		return NULL;
	map = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (extra == 0)
		return map;
	used = (len + page - 1) / page * page;
	start = map + (FILTER_BACK_SPAN - (uintptr_t)map % FILTER_BACK_SPAN) % FILTER_BACK_SPAN;
	if (start > map)
		(void)munmap(map, (size_t)(start - map));
	/* the tail from the page after the array's end (munmap wants a page boundary) */
	if (map + len + extra > start + used)
		(void)munmap(start + used, (size_t)(map + len + extra - (start + used)));
	return start;
}

static void *array_alloc(uint64_t bytes)
{
	void *bits;

	if (ON_HEAP(bytes))
		return posix_memalign(&bits, 64, (size_t)bytes) == 0 ? memset(bits, 0, (size_t)bytes) : NULL;
	return aligned_mapping(bytes);
}

static void array_free(void *bits, uint64_t bytes)
{
	if (ON_HEAP(bytes))
		free(bits);
	else
		munmap(bits, (size_t)bytes);
}

/* The backed-pages bitmap of a filter its layout makes ready (filter_ready_hashed), else NULL. */
static uint64_t *new_backed_map(const struct filter_params *p, uint64_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	uint64_t spans = (bytes + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;

	if (layout_of(p->layout)->ready != NULL && bytes >= FILTER_READY_MIN)	/* NULL: not served */
		return calloc(FILTER_BACKED_HEAD + (size_t)((spans + 63) / 64), sizeof(uint64_t));
#endif
	(void)p, (void)bytes;
	return NULL;
}

struct filter *filter_new(const struct filter_params *p, const char **errstr)
{
	struct filter *f;
	void *bits;
	uint64_t bytes;

	if (filter_params_check(p, errstr) < 0)
		return NULL;
	bytes = filter_array_bytes(p);
	if (bytes > SIZE_MAX) {
		*errstr = "filter too large for this machine";
		return NULL;
	}
	if (!filter_memory_allows(bytes)) {
		*errstr = filter_err_limit;
		return NULL;
	}
	f = calloc(1, sizeof *f);
	if (f == NULL) {
		*errstr = strerror(errno);
		return NULL;
	}
	bits = array_alloc(bytes);
	if (bits == NULL) {
		refused_bytes = bytes;
		*errstr = filter_err_nomem;
		free(f);
		return NULL;
	}
	memory_in_use += bytes;
	f->params = *p;
	/* a key kept outside and not supplied is all zero: keep the file's fingerprint */
	if (!(p->flags & FILTER_KEY_EXTERNAL) || !key_is_unknown(p->key))
		f->params.fingerprint = filter_key_fingerprint(p->key);
	f->words = bits;
	siphash_key_from_bytes(&f->sipkey, p->key);
	f->backed = new_backed_map(p, bytes);
#ifdef MADV_HUGEPAGE
	if (bytes >= HUGE_PAGE_MIN && f->backed == NULL)
		(void)madvise(bits, (size_t)bytes, MADV_HUGEPAGE);
#endif
	return f;
}

void filter_stage(struct filter *f)
{
	if (f->backed != NULL && f->staged == NULL)
		f->staged = staged_new();	/* no memory: the array from the start, as before */
}

void filter_settle(const struct filter *f)
{
	if (f->staged != NULL)
		layout_blocked_settle(f);
}

int filter_staged_blocks(const struct filter *f, struct filter_block **blocks, size_t *n)
{
	*blocks = NULL;
	*n = 0;
	return f->staged != NULL && layout_blocked_staged_blocks(f, blocks, n);
}

void filter_expect_dense(struct filter *f)
{
	if (f->backed != NULL)
		layout_blocked_dense(f);
}

void filter_expect_adds(struct filter *f, uint64_t n)
{
	uint64_t spans = (filter_bytes(f) + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;

	if (f->backed != NULL && n / FILTER_DENSE_KEYS_PER_SPAN >= spans)
		filter_expect_dense(f);
}

void filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	if (f->words != NULL) {	/* a shape read by format_open has no bits */
		array_free(f->words, filter_bytes(f));
		memory_in_use -= filter_bytes(f);
	}
	free(f->backed);
	staged_free(f->staged);
	free(f);
}

int filter_random_key(unsigned char key[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t r = getrandom(key + got, 16 - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

uint64_t filter_key_fingerprint(const unsigned char key[16])
{
	static const char message[] = "bftools key fingerprint v1";
	struct siphash_key sk;

	siphash_key_from_bytes(&sk, key);
	return siphash_2_4_64(&sk, message, sizeof message - 1);
}

int filter_supply_key(struct filter *f, const unsigned char key[16], const char **errstr)
{
	if (filter_key_fingerprint(key) != f->params.fingerprint) {
		*errstr = "the key does not match the filter's key fingerprint";
		return -1;
	}
	memcpy(f->params.key, key, sizeof f->params.key);
	siphash_key_from_bytes(&f->sipkey, key);
	return 0;
}

static void hash_key(const struct filter *f, const struct line *key, uint64_t h[2])
{
	if (f->params.hash == FILTER_SIPHASH_2_4)
		siphash_2_4_128(&f->sipkey, key->data, key->len, h);
	else
		siphash_1_3_128(&f->sipkey, key->data, key->len, h);
}

int filter_hash(const struct filter *f, const struct line *keys, size_t n, uint64_t *h)
{
	if (layout(f)->traits & LAYOUT_KEYLESS)
		return -1;
	/* many at once: SIMD lanes where the CPU has them (siphash_many.c) */
	if (f->params.hash == FILTER_SIPHASH_2_4)
		siphash_2_4_128_many(&f->sipkey, keys, n, h);
	else
		siphash_1_3_128_many(&f->sipkey, keys, n, h);
	return 0;
}

/*
 * Keys [done, done + len) of a call: their hashes, from the caller's h or
 * computed into own; NULL for a keyless layout.
 */
static const uint64_t *batch_hashes(const struct filter *f, const struct line *keys,
				    const uint64_t *h, size_t done, size_t len,
				    uint64_t own[2 * LAYOUT_BATCH])
{
	if (h != NULL)
		return h + 2 * done;
	return filter_hash(f, keys + done, len, own) == 0 ? own : NULL;
}

/* The batch of keys from done on: at most LAYOUT_BATCH. */
static size_t batch_len(size_t n, size_t done)
{
	return n - done < LAYOUT_BATCH ? n - done : LAYOUT_BATCH;
}

void filter_add(struct filter *f, const struct line *keys, size_t n)
{
	filter_add_hashed(f, keys, NULL, n);
}

void filter_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	const struct layout_ops *l = layout(f);
	uint64_t own[2 * LAYOUT_BATCH];

	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = batch_len(n, done);

		l->add(f, keys + done, batch_hashes(f, keys, h, done, len, own), len);
	}
	f->insertions += n;
}

int filter_add_shared(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	const struct layout_ops *l = layout(f);
	uint64_t own[2 * LAYOUT_BATCH];

	if (l->add_shared == NULL)
		return -1;
	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = batch_len(n, done);

		l->add_shared(f, keys + done, batch_hashes(f, keys, h, done, len, own), len);
	}
	return 0;
}

size_t filter_remove(struct filter *f, const struct line *keys, size_t n)
{
	const struct layout_ops *l = layout(f);
	uint64_t own[2 * LAYOUT_BATCH];
	size_t absent = 0;

	if (l->remove == NULL)
		return n;
	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = batch_len(n, done);

		absent += l->remove(f, keys + done, batch_hashes(f, keys, NULL, done, len, own), len);
	}
	f->removals += n - absent;
	return absent;
}

void filter_test(const struct filter *f, const struct line *keys, size_t n,
		 unsigned char *present)
{
	filter_test_hashed(f, keys, NULL, n, present);
}

void filter_test_hashed(const struct filter *f, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present)
{
	const struct layout_ops *l = layout(f);
	uint64_t own[2 * LAYOUT_BATCH];

	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = batch_len(n, done);

		l->test(f, keys + done, batch_hashes(f, keys, h, done, len, own), len, present + done);
	}
}

size_t filter_test_and_add(struct filter *f, const struct line *keys, size_t n,
			   unsigned char *present)
{
	return filter_test_and_add_hashed(f, keys, NULL, n, present);
}

size_t filter_test_and_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	const struct layout_ops *l = layout(f);
	uint64_t own[2 * LAYOUT_BATCH];
	size_t fresh = 0;

	for (size_t done = 0; done < n; done += LAYOUT_BATCH) {
		size_t len = batch_len(n, done);

		fresh += l->test_and_add(f, keys + done, batch_hashes(f, keys, h, done, len, own), len,
					 present + done);
	}
	f->insertions += n;
	return fresh;
}

void filter_positions(const struct filter *f, struct line key, uint64_t *positions)
{
	uint64_t h[2] = { 0, 0 };

	if (!(layout(f)->traits & LAYOUT_KEYLESS))
		hash_key(f, &key, h);
	layout(f)->positions(f, &key, h, positions);
}

void filter_ready_hashed(const struct filter *f, const uint64_t *h, size_t n)
{
	const struct layout_ops *l = layout(f);

	if (l->ready != NULL)
		l->ready(f, h, n);
}

void filter_blocks_of(const struct filter *f, const uint64_t *h, size_t n, uint64_t *base)
{
	layout_blocked_bases(f, h, n, base);
}

void filter_blocks_test(const struct filter *f, const uint64_t *base, const uint64_t *h,
			size_t n, unsigned char *present)
{
	layout_blocked_test_bases(f, base, h, n, present);
}

size_t filter_blocks_test_and_set(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	return layout_blocked_test_and_add_bases(f, base, h, n, present);
}

size_t filter_blocks_test_and_add(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	f->insertions += n;
	return filter_blocks_test_and_set(f, base, h, n, present);
}

double filter_sampled_fill(const struct filter *f, uint64_t samples)
{
	const struct layout_ops *l = layout(f);
	uint64_t words = array_words(f), step, set = 0, seen = 0;

	if (samples == 0)
		return 0.0;
	/* staged: the exact fill, from the table */
	if (f->staged != NULL && layout_blocked_staged_set(f, &set))
		return (double)set / (double)f->params.m;
	step = words / samples ? words / samples : 1;
	/* relaxed loads: the progress line samples a filter other threads may be adding to */
	for (uint64_t i = 0; i < words; i += step, seen++)
		set += l->word_set(__atomic_load_n(&f->words[i], __ATOMIC_RELAXED));
	return (double)set / (double)(seen * layout_positions_per_word(l));
}

uint64_t filter_bits_set(const struct filter *f)
{
	uint64_t set;

	if (f->staged != NULL && layout_blocked_staged_set(f, &set))
		return set;
	return layout(f)->set(f->words, array_words(f));
}

uint64_t filter_saturated(const struct filter *f)
{
	const struct layout_ops *l = layout(f);

	return l->saturated ? l->saturated(f->words, array_words(f)) : 0;
}

double filter_current_fpr(const struct filter *f)
{
	return layout(f)->current_fpr(f);
}

double filter_stats_estimate(const struct filter_params *p, const struct filter_stats *s)
{
	const struct layout_ops *l = layout_of(p->layout);

	return l->estimate(l->probed(p), p->k, s->bits_set);
}

double filter_estimate_count(const struct filter *f)
{
	struct filter_stats s = { .bits_set = filter_bits_set(f) };

	return filter_stats_estimate(&f->params, &s);
}

void filter_stats_of(const struct filter *f, struct filter_stats *s)
{
	const struct layout_ops *l = layout(f);

	s->saturated = filter_saturated(f);
	if (l->set_and_fpr != NULL) {
		l->set_and_fpr(f, &s->bits_set, &s->rate);
		return;
	}
	s->bits_set = filter_bits_set(f);
	s->rate = filter_current_fpr(f);
}

uint64_t filter_probed(const struct filter_params *p)
{
	return layout_of(p->layout)->probed(p);
}

int filter_compatible(const struct filter *a, const struct filter *b, const char **what)
{
	const struct filter_params *p = &a->params, *q = &b->params;

	if (p->layout != q->layout)
		*what = "layout";
	else if (p->m != q->m || p->probe_bits != q->probe_bits)
		*what = "size";
	else if (p->k != q->k)
		*what = "hashes";
	else if (p->hash != q->hash)
		*what = "hash function";
	else if (p->fingerprint != q->fingerprint)
		*what = "key";
	/* where the key is kept does not matter: the fingerprints agreed */
	else if ((p->flags ^ q->flags) & ~FILTER_KEY_EXTERNAL)
		*what = "normalisation";
	else
		return 1;
	return 0;
}
