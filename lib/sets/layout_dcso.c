/* SPDX-License-Identifier: MIT */
/*
 * layout_dcso.c - the layout of a filter read from, or to be written as, a
 * DCSO bloom file (dcso.h): no key, FNV-1 and DCSO's own probe sequence
 * over the file's own m (probe_bits), for interoperation only.
 *
 * Probes of a key x, in uint64 arithmetic (products wrap modulo 2^64):
 *
 *   P = 2^64 - 59, the largest prime below 2^64;  g = 2^64 - 1469
 *   h = FNV-1-64(x) mod P
 *   for i in 0 .. k-1:   h = (h * g) mod P;   probe bit h mod m
 *
 * The reference's comment speaks of h * g mod P, a multiplicative sequence
 * modulo a prime, but its Go code multiplies in uint64, which wraps: the
 * product is reduced modulo 2^64 before modulo P. Files are what the code
 * makes, so that is what we compute (a bit set by `bloom insert` for "foo"
 * in a 47-bit filter with k = 4 is a known-answer unit test).
 *
 * The positions are bits anywhere, so everything else is classic's
 * (scattered.c): the probes become words and masks, the statistics count
 * bits, the models are classic's over probe_bits.
 */
#include "layout_dcso.h"

#include "layout.h"
#include "model.h"
#include "popcount.h"
#include "scattered.h"

#define FNV1_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV1_PRIME UINT64_C(0x100000001b3)
#define SEQUENCE_MODULUS (UINT64_MAX - 58)	/* 2^64 - 59 */
#define SEQUENCE_MULTIPLIER (UINT64_MAX - 1468)	/* 2^64 - 1469 */

uint64_t dcso_fnv1_64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = FNV1_OFFSET;

	for (size_t i = 0; i < len; i++) {
		h *= FNV1_PRIME;
		h ^= p[i];
	}
	return h;
}

void dcso_probe_positions(const void *key, size_t len, uint64_t probe_bits, uint32_t k,
			  uint64_t *positions)
{
	uint64_t h = dcso_fnv1_64(key, len) % SEQUENCE_MODULUS;

	for (uint32_t i = 0; i < k; i++) {
		h = h * SEQUENCE_MULTIPLIER % SEQUENCE_MODULUS;	/* wraps first: see above */
		positions[i] = h % probe_bits;
	}
}

/* probe_bits: DCSO's m, which the array (a multiple of 512) holds in its last block. */
static int dcso_check(const struct filter_params *p, const char **errstr)
{
	if (p->probe_bits >= 1 && p->probe_bits <= p->m && p->m - p->probe_bits < FILTER_BLOCK_BITS)
		return 0;
	*errstr = "probed bits not 0, or for DCSO not within the last 512 bits of m";
	return -1;
}

static uint64_t dcso_probed(const struct filter_params *p)
{
	return p->probe_bits;
}

static void dcso_key_probes(const struct filter *f, const struct line *key,
			    struct scattered_probes *pr)
{
	uint64_t positions[FILTER_K_MAX];

	dcso_probe_positions(key->data, key->len, f->params.probe_bits, f->params.k, positions);
	for (uint32_t i = 0; i < f->params.k; i++)
		scattered_place(pr, i, positions[i], 0);
}

/* The probes of a batch, from the key bytes, prefetched (scattered_prepare_fn). */
static void dcso_prepare(const struct filter *f, const struct line *keys, const uint64_t *h,
			 size_t n, struct scattered_batch *b)
{
	(void)h;
	for (size_t i = 0; i < n; i++) {
		dcso_key_probes(f, &keys[i], &b->pr[i]);
		scattered_prefetch(f, &b->pr[i]);
	}
}

static void dcso_add(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	scattered_add(f, keys, h, n, dcso_prepare);
}

static void dcso_test(const struct filter *f, const struct line *keys, const uint64_t *h,
		      size_t n, unsigned char *present)
{
	scattered_test(f, keys, h, n, present, dcso_prepare);
}

static size_t dcso_test_and_add(struct filter *f, const struct line *keys, const uint64_t *h,
				size_t n, unsigned char *present)
{
	return scattered_test_and_add(f, keys, h, n, present, dcso_prepare);
}

static void dcso_add_shared(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	scattered_add_shared(f, keys, h, n, dcso_prepare);
}

static void dcso_positions(const struct filter *f, const struct line *key, const uint64_t h[2],
			   uint64_t *positions)
{
	(void)h;
	dcso_probe_positions(key->data, key->len, f->params.probe_bits, f->params.k, positions);
}

const struct layout_ops layout_dcso = {
	.id = FILTER_DCSO,
	.name = "dcso",
	.unit = "bits",
	.position_bits = 1,
	.traits = LAYOUT_KEYLESS | LAYOUT_FOREIGN,
	.check = dcso_check,
	.probed = dcso_probed,
	.add = dcso_add,
	.test = dcso_test,
	.test_and_add = dcso_test_and_add,
	.add_shared = dcso_add_shared,
	.remove = NULL,
	.positions = dcso_positions,
	.ready = NULL,
	.set = popcount_words,
	.word_set = layout_word_bits,
	.saturated = NULL,
	.current_fpr = scattered_current_fpr,
	.fpr = model_classic_fpr,
	.estimate = model_classic_estimate,
	.estimate_sd = model_classic_estimate_sd,
	.unite = layout_or_words,
	.intersect = layout_and_words,
};
