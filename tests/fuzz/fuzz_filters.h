/* SPDX-License-Identifier: MIT */
/*
 * fuzz_filters.h - what the harnesses over filter, window and sketch files
 * share (fuzz_format.c loads them every way, fuzz_roundtrip.c works with
 * what loaded): turning an input into a file, loading it, the checks any
 * loaded filter must pass, and keys cut from the input.
 *
 * An input is one of two things:
 *
 *   - a file as it lies on disk (gzip, or any bytes at all), loaded as it
 *     is;
 *   - a file's uncompressed content, recognised by the "\x89BFT" (filter,
 *     windowed filter) or "\x89BFS" (sketch) magic, which the harness
 *     gzips itself (level, strategy and gzip header options drawn from
 *     the input) before loading. Mutating a gzip file almost always breaks
 *     its CRC, so without this the fuzzer would rarely get past the
 *     trailer check; this way every header field and payload bit is
 *     reachable with a valid CRC, and loads succeed.
 *
 * Static functions in a header, as fuzz.h; include fuzz.h first.
 */
#ifndef BFTOOLS_FUZZ_FILTERS_H
#define BFTOOLS_FUZZ_FILTERS_H

#define ZLIB_CONST

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "hll.h"
#include "sketch.h"
#include "sketch_file.h"
#include "window.h"

#define NKEYS 16
#define KEY_MAX 48

static const uint8_t content_magic[4] = { 0x89, 'B', 'F', 'T' };
static const uint8_t sketch_content_magic[4] = { 0x89, 'B', 'F', 'S' };
/* The key every seed with a key kept outside was made with. */
static const unsigned char seed_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static inline int is_content(const uint8_t *data, size_t size)
{
	return size >= sizeof content_magic && (memcmp(data, content_magic, sizeof content_magic) == 0
						|| memcmp(data, sketch_content_magic, sizeof content_magic) == 0);
}

/* The content gzipped here, with options drawn from state; a new buffer. */
static inline uint8_t *wrap_gzip(const uint8_t *data, size_t size, uint64_t *state, size_t *out_size)
{
	static const int levels[] = { 0, 1, 6, 9 };
	static const int strategies[] = { Z_DEFAULT_STRATEGY, Z_RLE, Z_FILTERED, Z_HUFFMAN_ONLY };
	static unsigned char name[] = "filter.bf";
	uint64_t pick = fuzz_next(state);
	z_stream zs;
	gz_header gzh;
	uint8_t *out;
	size_t cap;

	memset(&zs, 0, sizeof zs);
	memset(&gzh, 0, sizeof gzh);
	gzh.os = 3;
	gzh.hcrc = (int)(pick >> 4 & 1);
	gzh.name = pick >> 5 & 1 ? name : NULL;
	fuzz_check(deflateInit2(&zs, levels[pick & 3], Z_DEFLATED, 15 + 16, 8,
				strategies[pick >> 2 & 3]) == Z_OK, "deflateInit2");
	fuzz_check(deflateSetHeader(&zs, &gzh) == Z_OK, "deflateSetHeader");
	cap = deflateBound(&zs, size) + 64;
	out = malloc(cap);
	fuzz_check(out != NULL, "out of memory");
	zs.next_in = data;
	zs.avail_in = (uInt)size;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	fuzz_check(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate in one call");
	*out_size = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

static inline struct cascade *load(const uint8_t *file, size_t size)
{
	const char *err = NULL;
	int fd = fuzz_file(file, size);
	struct cascade *c = format_load(fd, &err);

	close(fd);
	fuzz_check(c != NULL || (err != NULL && *err != '\0'), "a failed load says why");
	return c;
}

/*
 * Field by field: doubles compared bit for bit, as the file stores them. A
 * key kept outside is compared by fingerprint only: the file never holds it.
 */
FUZZ_UNTRACED static inline int params_equal(const struct filter_params *a, const struct filter_params *b)
{
	return a->layout == b->layout && a->hash == b->hash && a->flags == b->flags
	       && a->k == b->k && a->m == b->m && a->capacity == b->capacity
	       && memcmp(&a->target_p, &b->target_p, sizeof a->target_p) == 0
	       && a->fingerprint == b->fingerprint
	       && ((a->flags & FILTER_KEY_EXTERNAL) || memcmp(a->key, b->key, sizeof a->key) == 0);
}

static inline void check_cascade(const struct cascade *c)
{
	const struct filter_params *p0 = cascade_params(c);
	const struct filter *newest = c->stages[c->nstages - 1];
	const char *err = NULL;

	fuzz_check(c->nstages >= 1 && c->nstages <= CASCADE_STAGES_MAX, "stage count");
	fuzz_check(c->growth != 0 || c->nstages == 1, "a fixed filter has one stage");
	fuzz_check(p0 == &c->stages[0]->params, "cascade_params is stage 0's");
	/* a fixed filter may take more than its capacity; a growing stage never */
	fuzz_check(c->growth == 0 || c->newest_keys <= newest->params.capacity,
		   "a growing stage holds no more than its capacity");
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;

		fuzz_check(c->stages[i]->words != NULL, "a loaded stage has bits");
		fuzz_check(filter_params_check(p, &err) == 0, "loaded params are valid");
		fuzz_check(p->hash == p0->hash && p->flags == p0->flags
			   && memcmp(p->key, p0->key, sizeof p->key) == 0
			   && p->fingerprint == p0->fingerprint,
			   "stages share hash, flags and key");
		fuzz_check((p->flags & FILTER_KEY_EXTERNAL) || p->fingerprint == filter_key_fingerprint(p->key),
			   "a key in the file has its own fingerprint");
	}
}

static inline void check_numbers(const struct cascade *c)
{
	uint64_t bytes = 0, insertions = 0;
	double count = cascade_estimate_count(c), fpr = cascade_current_fpr(c);

	fuzz_check(!isnan(count) && count >= 0.0, "estimated count is a number >= 0");
	fuzz_check(fpr >= 0.0 && fpr <= 1.0, "current rate in [0, 1]");
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter *f = c->stages[i];
		double sfpr = filter_current_fpr(f), scount = filter_estimate_count(f);

		fuzz_check(filter_bits_set(f) <= f->params.m, "bits set <= m");
		fuzz_check(sfpr >= 0.0 && sfpr <= 1.0, "stage rate in [0, 1]");
		fuzz_check(!isnan(scount) && scount >= 0.0, "stage count is a number >= 0");
		bytes += filter_bytes(f);	/* a counting stage: m / 2 */
		insertions += f->insertions;
	}
	fuzz_check(cascade_bytes(c) == bytes, "cascade_bytes is the sum of the stages");
	fuzz_check(cascade_insertions(c) == insertions, "insertions sum the stages'");
}

/* Keys cut from the input: the empty key, then slices. */
static inline void make_keys(const uint8_t *data, size_t size, uint64_t *state, struct line *keys)
{
	keys[0] = (struct line){ .data = (const char *)data, .len = 0 };
	for (size_t i = 1; i < NKEYS; i++) {
		size_t off = size ? (size_t)fuzz_range(state, 0, size - 1) : 0;
		size_t len = (size_t)fuzz_range(state, 0, KEY_MAX);

		if (len > size - off)
			len = size - off;
		keys[i] = (struct line){ .data = (const char *)data + off, .len = len };
	}
}

/* cascade_test is "present in any stage". */
static inline void check_test(const struct cascade *c, const struct line *keys)
{
	unsigned char present[NKEYS], any[NKEYS] = { 0 }, one[NKEYS];

	cascade_test(c, keys, NKEYS, present);
	for (size_t s = 0; s < c->nstages; s++) {
		filter_test(c->stages[s], keys, NKEYS, one);
		for (size_t i = 0; i < NKEYS; i++)
			any[i] |= one[i];
	}
	for (size_t i = 0; i < NKEYS; i++)
		fuzz_check(present[i] == any[i], "cascade_test ORs the stages");
}

/*
 * A filter whose key is kept outside: a wrong key is refused, the seeds'
 * key (bytes 0..15) fits exactly when the fingerprint is its. Returns
 * whether the filter now has its key.
 */
static inline int supply_key(struct cascade *c)
{
	static const unsigned char wrong_key[16] = { 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8 };
	uint64_t fingerprint = cascade_params(c)->fingerprint;
	const char *err = NULL;
	int rc;

	if (!cascade_needs_key(c))
		return 1;
	fuzz_check(filter_key_fingerprint(wrong_key) == fingerprint
		   || (cascade_supply_key(c, wrong_key, &err) < 0 && err != NULL),
		   "a key that is not the filter's is refused");
	rc = cascade_supply_key(c, seed_key, &err);
	fuzz_check((rc == 0) == (filter_key_fingerprint(seed_key) == fingerprint),
		   "the key that is the filter's fits");
	fuzz_check(rc < 0 || !cascade_needs_key(c), "a filter given its key needs none");
	return rc == 0;
}

/* The file loaded by sketch_load, checked against format_load_any's verdict. */
static inline struct sketch *load_sketch(const uint8_t *file, size_t size, int any_says_sketch)
{
	const char *err = NULL;
	int fd = fuzz_file(file, size);
	struct sketch *s = sketch_load(fd, &err);

	close(fd);
	fuzz_check(s != NULL || (err != NULL && *err != '\0'), "a failed sketch load says why");
	fuzz_check((s != NULL) == any_says_sketch, "sketch_load and format_load_any agree");
	return s;
}

FUZZ_UNTRACED static inline int same_sketch(const struct sketch *a, const struct sketch *b)
{
	static uint8_t ra[1u << HLL_PRECISION_MAX], rb[1u << HLL_PRECISION_MAX];
	size_t m = (size_t)1 << sketch_precision(a);

	if (sketch_precision(a) != sketch_precision(b))
		return 0;
	hll_registers(a->hll, ra);
	hll_registers(b->hll, rb);
	return memcmp(ra, rb, m) == 0 && a->hash == b->hash && a->flags == b->flags
	       && a->fingerprint == b->fingerprint && a->insertions == b->insertions
	       && sketch_is_exact(a) == sketch_is_exact(b);
}

/*
 * Every file through format_load_any: *c, *w or *sk hold what loaded
 * (the others NULL); returns format_load_any's verdict.
 */
static inline int load_any(const uint8_t *file, size_t size, struct cascade **c, struct window **w,
			   struct sketch **sk)
{
	const char *err = NULL;
	int fd = fuzz_file(file, size), rc = format_load_any(fd, c, w, sk, &err);

	close(fd);
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a failed load says why");
	fuzz_check((rc == 0) == (*c != NULL || *w != NULL || *sk != NULL)
		   && (*c != NULL) + (*w != NULL) + (*sk != NULL) <= 1, "one kind loads, or none");
	return rc;
}

#endif
