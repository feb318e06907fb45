/* SPDX-License-Identifier: MIT */
/*
 * merge.c - OR and AND of filters, from memory or streamed from a file.
 *
 * Stage i of one cascade combines with stage i of the other, word by word.
 * Why stage by stage works for OR: a key lives in exactly the stage that
 * took it, and every stage of both cascades hashes it the same way (same
 * hash, key, normalisation; same m and k at the same index, which
 * cascade_compatible checks), so OR-ing stage i with stage i gives a stage
 * that holds both stages' keys. Stages only one side has are carried over.
 * AND needs a key to be in the same stage on both sides, which only a
 * fixed filter (one stage) guarantees.
 *
 * Everything that can be refused is checked before a single bit changes:
 * compatibility, AND of growing filters, insertion counts overflowing, and
 * the capacity the carried-over stages get. Carried-over stages are
 * labelled with into's plan (capacity times growth, rate divided by
 * 2^tighten, per stage after into's newest), so the result keeps into's
 * header and saves as a valid file.
 *
 * Streaming reads the other file's payload in 1 MiB pieces and combines
 * each piece into into's words at once: the memory is into, one buffer,
 * and whatever stages the other file adds; never a second copy of the
 * stages both have. Payload bytes are little-endian words on every host.
 *
 * Counting filters (4-bit counters, filter.h) combine counter by counter:
 * OR adds them, saturating at 15, which is the counting filter of the two
 * inputs' keys together (a key added to both counts twice, as if added
 * twice), so every key may later be removed as often as it was added; the
 * non-zero counters are exactly the OR of the two filters' non-zero ones.
 * AND takes the smaller of each pair: a key both hold keeps every counter
 * above 0, and a counter never falls below what the keys both hold put in
 * it (their share of each side is at most that side's counter), so the
 * result counts at least the keys held by both, each as often as the side
 * holding it fewer times. A saturated counter stays saturated only where
 * both were. Both work on 16 counters per 64-bit word at once: split into
 * the even and odd nibbles, one counter per byte, where an add or compare
 * of 4-bit values cannot carry into the next byte.
 *
 * Deliberately absent: XOR or difference (a Bloom filter cannot remove a
 * key; a counting filter removes keys with bfbuild --remove), and combining
 * filters whose sizes differ (folding a filter in half would change every
 * probe position).
 */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"

#define CHUNK ((size_t)1 << 20)

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static size_t smaller(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * The summed insertions of every stage, and their total, fit in 64 bits;
 * so do the summed removals (counting stages).
 */
static int insertions_fit(const struct cascade *a, const struct cascade *b)
{
	size_t n = a->nstages > b->nstages ? a->nstages : b->nstages;
	uint64_t total = 0, removed = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nstages ? a->stages[i]->insertions : 0;
		uint64_t y = i < b->nstages ? b->stages[i]->insertions : 0;
		uint64_t rx = i < a->nstages ? a->stages[i]->removals : 0;
		uint64_t ry = i < b->nstages ? b->stages[i]->removals : 0;

		if (x > UINT64_MAX - y || x + y > UINT64_MAX - total)
			return 0;
		if (rx > UINT64_MAX - ry || rx + ry > UINT64_MAX - removed)
			return 0;
		total += x + y;
		removed += rx + ry;
	}
	return 1;
}

/*
 * Params for a stage into will get at index j (>= into->nstages): model's
 * bits (layout, m, k, hashing) under into's plan for that index.
 */
static int carried_params(const struct cascade *into, const struct filter *model, size_t j,
			  struct filter_params *p, const char **errstr)
{
	const struct filter_params *newest = &into->stages[into->nstages - 1]->params;
	size_t steps = j + 1 - into->nstages;

	*p = model->params;
	p->capacity = newest->capacity;
	for (size_t s = 0; s < steps; s++) {
		if (into->growth == 0 || p->capacity > UINT64_MAX / into->growth)
			return fail(errstr, "growing filter cannot grow further (next stage too large)");
		p->capacity *= into->growth;
	}
	/* a power of two: exact, as cascade.c's own plan is */
	p->target_p = ldexp(newest->target_p, -(int)(into->tighten * steps));
	return 0;
}

/* Everything that can be refused, checked before any bit changes. */
static int merge_check(const struct cascade *into, const struct cascade *other, enum merge_op op,
		       const char **errstr)
{
	struct filter_params p;
	const char *what;

	if (op == MERGE_AND && (into->growth != 0 || other->growth != 0))
		return fail(errstr, "cannot intersect growing filters");
	if (!cascade_compatible(into, other, &what))
		return fail(errstr, what);
	if (!insertions_fit(into, other))
		return fail(errstr, "insertion counts overflow");
	for (size_t j = into->nstages; j < other->nstages; j++)
		if (carried_params(into, other->stages[j], j, &p, errstr) < 0)
			return -1;
	return 0;
}

/* An empty stage for index j of into, shaped like model, with model's insertions. */
static struct filter *carried_stage(const struct cascade *into, const struct filter *model,
				    size_t j, const char **errstr)
{
	struct filter_params p;
	struct filter *f;

	if (carried_params(into, model, j, &p, errstr) < 0 || (f = filter_new(&p, errstr)) == NULL)
		return NULL;
	f->insertions = model->insertions;
	f->removals = model->removals;
	return f;
}

#define BYTES_LOW_NIBBLE UINT64_C(0x0f0f0f0f0f0f0f0f)
#define BYTES_ONE UINT64_C(0x0101010101010101)
#define BYTES_SIXTEEN UINT64_C(0x1010101010101010)

/* Eight counters a byte apart (0..15 each): their sums, 15 where a sum passes 15. */
static uint64_t lanes_sum(uint64_t a, uint64_t b)
{
	uint64_t sum = a + b;				/* <= 30 a byte: no carry out */
	uint64_t over = (sum >> 4) & BYTES_ONE;		/* bit 4: the sum is 16 or more */

	return (sum | over * 15) & BYTES_LOW_NIBBLE;
}

/* Eight counters a byte apart: the smaller of each pair. */
static uint64_t lanes_min(uint64_t a, uint64_t b)
{
	uint64_t diff = (a | BYTES_SIXTEEN) - b;	/* 16 + a - b, 1..31 a byte: no borrow */
	uint64_t a_larger = ((diff >> 4) & BYTES_ONE) * 15;	/* a >= b: take b */

	return (b & a_larger) | (a & ~a_larger);
}

/* 16 counters of a and b combined: OR adds them (saturating), AND keeps the smaller. */
static uint64_t counters_combine(uint64_t a, uint64_t b, enum merge_op op)
{
	uint64_t (*lanes)(uint64_t, uint64_t) = op == MERGE_OR ? lanes_sum : lanes_min;

	return lanes(a & BYTES_LOW_NIBBLE, b & BYTES_LOW_NIBBLE) |
	       lanes(a >> 4 & BYTES_LOW_NIBBLE, b >> 4 & BYTES_LOW_NIBBLE) << 4;
}

static void combine_words(uint64_t *dst, const uint64_t *src, size_t n, enum merge_op op,
			  int counting)
{
	if (counting) {
		for (size_t i = 0; i < n; i++)
			dst[i] = counters_combine(dst[i], src[i], op);
		return;
	}
	if (op == MERGE_OR)
		for (size_t i = 0; i < n; i++)
			dst[i] |= src[i];
	else
		for (size_t i = 0; i < n; i++)
			dst[i] &= src[i];
}

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof w);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* Combine n words given as file bytes (little-endian) into dst. */
static void combine_bytes(uint64_t *dst, const unsigned char *src, size_t n, enum merge_op op,
			  int counting)
{
	if (counting) {
		for (size_t i = 0; i < n; i++)
			dst[i] = counters_combine(dst[i], load_le64(src + 8 * i), op);
		return;
	}
	if (op == MERGE_OR)
		for (size_t i = 0; i < n; i++)
			dst[i] |= load_le64(src + 8 * i);
	else
		for (size_t i = 0; i < n; i++)
			dst[i] &= load_le64(src + 8 * i);
}

static int is_counting(const struct filter *f)
{
	return f->params.layout == FILTER_COUNTING;
}

static void free_stages(struct filter **stages, size_t n)
{
	for (size_t i = 0; i < n; i++)
		filter_free(stages[i]);
}

/*
 * A DCSO result's N: DCSO's join sums the inputs' (an upper bound when
 * they share keys, its documentation warns); an AND, which DCSO's tools
 * cannot do, gets the estimate from its bits.
 */
static uint64_t dcso_count(const struct cascade *into, uint64_t into_n, uint64_t other_n,
			   enum merge_op op)
{
	double estimate;

	if (op == MERGE_OR)
		return into_n > UINT64_MAX - other_n ? UINT64_MAX : into_n + other_n;
	estimate = filter_estimate_count(into->stages[0]);
	return isfinite(estimate) ? (uint64_t)llround(estimate) : into->capacity;
}

/* Append carried stages and sum insertions: the part that cannot fail. */
static void finish(struct cascade *into, const struct cascade *other, enum merge_op op,
		   struct filter **carried, size_t ncarried)
{
	size_t common = smaller(into->nstages, other->nstages);
	uint64_t into_n = into->newest_keys, other_n = other->newest_keys;

	for (size_t i = 0; i < common; i++) {
		into->stages[i]->insertions += other->stages[i]->insertions;
		into->stages[i]->removals += other->stages[i]->removals;
	}
	for (size_t i = 0; i < ncarried; i++)
		into->stages[into->nstages++] = carried[i];
	cascade_refresh_count(into);
	if (cascade_params(into)->layout == FILTER_DCSO)
		into->newest_keys = dcso_count(into, into_n, other_n, op);
}

int merge_into(struct cascade *into, const struct cascade *other, enum merge_op op,
	       const char **errstr)
{
	struct filter *carried[CASCADE_STAGES_MAX];
	size_t n = into->nstages, ncarried = 0;

	if (merge_check(into, other, op, errstr) < 0)
		return -1;
	/* copies first: allocation is the only step left that can fail */
	for (size_t j = n; j < other->nstages; j++, ncarried++) {
		carried[ncarried] = carried_stage(into, other->stages[j], j, errstr);
		if (carried[ncarried] == NULL) {
			free_stages(carried, ncarried);
			return -1;
		}
		memcpy(carried[ncarried]->words, other->stages[j]->words, filter_bytes(other->stages[j]));
	}
	for (size_t i = 0; i < smaller(n, other->nstages); i++)
		combine_words(into->stages[i]->words, other->stages[i]->words,
			      filter_bytes(into->stages[i]) / 8, op, is_counting(into->stages[i]));
	finish(into, other, op, carried, ncarried);
	return 0;
}

/* The next stage's payload from r, combined into f piece by piece. */
static int stream_combine(struct format_reader *r, struct filter *f, enum merge_op op,
			  unsigned char *buf, const char **errstr)
{
	size_t bytes = filter_bytes(f);

	for (size_t off = 0; off < bytes; off += CHUNK) {
		size_t len = smaller(CHUNK, bytes - off);	/* m/8 and m/2 are multiples of 64 */

		if (format_read(r, buf, len, errstr) < 0)
			return -1;
		combine_bytes(f->words + off / 8, buf, len / 8, op, is_counting(f));
	}
	return 0;
}

/* The next stage's payload from r, as a new stage for index j of into. */
static struct filter *stream_stage(struct format_reader *r, const struct cascade *into,
				   const struct filter *model, size_t j, const char **errstr)
{
	struct filter *f = carried_stage(into, model, j, errstr);

	if (f == NULL)
		return NULL;
	if (format_read(r, f->words, filter_bytes(f), errstr) < 0) {
		filter_free(f);
		return NULL;
	}
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < filter_bytes(f) / 8; i++)	/* file order to host order */
		f->words[i] = __builtin_bswap64(f->words[i]);
#endif
	return f;
}

/* Every payload from r into into's stages or new ones; r is still open after. */
static int stream_all(struct format_reader *r, struct cascade *into, const struct cascade *shape,
		      enum merge_op op, struct filter **carried, size_t *ncarried,
		      const char **errstr)
{
	size_t n = into->nstages;
	unsigned char *buf = malloc(CHUNK);
	int ret = 0;

	*ncarried = 0;
	if (buf == NULL)
		return fail(errstr, strerror(ENOMEM));
	for (size_t i = 0; ret == 0 && i < smaller(n, shape->nstages); i++)
		ret = stream_combine(r, into->stages[i], op, buf, errstr);
	free(buf);
	for (size_t j = n; ret == 0 && j < shape->nstages; j++) {
		carried[*ncarried] = stream_stage(r, into, shape->stages[j], j, errstr);
		if (carried[*ncarried] == NULL)
			ret = -1;
		else
			++*ncarried;
	}
	return ret;
}

int merge_stream(struct cascade *into, struct format_reader *r, const struct cascade *shape,
		 enum merge_op op, const char **errstr)
{
	struct filter *carried[CASCADE_STAGES_MAX];
	size_t ncarried;

	if (merge_check(into, shape, op, errstr) < 0) {
		format_abandon(r);
		return -1;
	}
	if (stream_all(r, into, shape, op, carried, &ncarried, errstr) < 0) {
		free_stages(carried, ncarried);
		format_abandon(r);
		return -1;
	}
	if (format_close(r, errstr) < 0) {
		free_stages(carried, ncarried);
		return -1;
	}
	finish(into, shape, op, carried, ncarried);
	return 0;
}
