/* SPDX-License-Identifier: MIT */
/*
 * test_cascade.c - fixed filters and growing cascades: no false negatives,
 * the compounded rate holds far past the first stage, stages fill exactly
 * to their capacity and follow the growth plan; with hashes made ahead
 * (cascade_hasher, the _hashed calls) a cascade grows exactly as without.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "dcso.h"
#include "sizing.h"
#include "unit.h"

static const unsigned char cascade_key[16] = "cascade-test-key";

static struct filter_params first_stage(uint64_t capacity)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.capacity = capacity;
	memcpy(p.key, cascade_key, sizeof p.key);
	return p;
}

/* n keys "c<i>" for i in [from, from + n). */
static struct line *number_keys(uint64_t from, size_t n, char **text)
{
	struct line *keys = malloc(n * sizeof *keys);
	char *p = *text = malloc(n * 24);

	for (size_t i = 0; keys && p && i < n; i++) {
		int len = snprintf(p, 24, "c%llu", (unsigned long long)(from + i));

		keys[i].data = p;
		keys[i].len = (size_t)len;
		p += len;
	}
	return keys;
}

static size_t count_present(const struct cascade *c, const struct line *keys, size_t n)
{
	unsigned char *present = malloc(n);
	size_t hits = 0;

	cascade_test(c, keys, n, present);
	for (size_t i = 0; i < n; i++)
		hits += present[i];
	free(present);
	return hits;
}

/*
 * The proof: a growing filter whose first stage holds 1e4 keys
 * takes 1e6 (100x) and keeps its promised rate P = 1e-3. Its stages hold
 * 1e4, 2e4, 4e4, ... (7 stages reach 1.27e6), at rates P/2, P/4, ..., so
 * the compounded rate is below P. N = 1e6 absent keys give X false
 * positives with mean <= N*P = 1000 and sd < 32: X <= NP + 6 sqrt(NP) + 6
 * fails with probability ~1e-9 for a correct cascade. A cascade that
 * stopped growing (one stage at 100x capacity) would report nearly all.
 */
static void growing_keeps_its_rate_over_100x_its_first_stage(void)
{
	const size_t n = 1000000;
	const double target = 1e-3;
	struct filter_params first = first_stage(10000);
	const char *why;
	struct cascade *c = cascade_new_growing(&first, target, 2, 1, &why);
	char *in_text, *out_text;
	struct line *in = number_keys(0, n, &in_text), *out = number_keys(n, n, &out_text);
	size_t found, false_pos;
	double bound = n * target + 6.0 * sqrt(n * target) + 6.0;

	CHECK(c != NULL && in != NULL && out != NULL);
	CHECK(cascade_add(c, in, n, &why) == 0);
	found = count_present(c, in, n);
	false_pos = count_present(c, out, n);
	CHECKF(c->nstages == 7, "%zu stages", c->nstages);
	free(in), free(in_text), free(out), free(out_text);
	cascade_free(c);
	CHECKF(found == n, "false negatives: %zu of %zu found", found, n);
	CHECKF(false_pos <= bound, "%zu false positives, bound %.0f", false_pos, bound);
}

/* Stage i: capacity n0 * g^i, rate P (1 - 2^-t) 2^(-t i); the rates sum below P. */
static void stages_follow_the_growth_plan(void)
{
	struct filter_params first = first_stage(1000);
	const char *why;
	struct cascade *c = cascade_new_growing(&first, 1e-4, 4, 2, &why);
	char *text;
	struct line *keys = number_keys(0, 30000, &text);
	double sum = 0.0;

	CHECK(c != NULL && keys != NULL);
	CHECK(cascade_add(c, keys, 30000, &why) == 0);
	/* 1000 + 4000 + 16000 = 21000 < 30000 <= 21000 + 64000 */
	CHECKF(c->nstages == 4, "%zu stages", c->nstages);
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;
		double rate = 1e-4 * 0.75 * pow(0.25, (double)i);

		CHECKF(p->capacity == 1000 * (uint64_t)pow(4, (double)i), "stage %zu capacity", i);
		CHECKF(fabs(p->target_p - rate) < 1e-12 * rate, "stage %zu rate %g", i, p->target_p);
		CHECK(sizing_fpr(p->layout, p->capacity, p->m, p->k) <= p->target_p);
		sum += p->target_p;
	}
	CHECK(sum < 1e-4);
	/*
	 * Keys that test present by chance (rate < 1e-4, so about 3 of the
	 * 30000 expected) are not added: the newest stage holds just under
	 * 9000. Allow 30, ten times the expectation.
	 */
	CHECKF(c->newest_keys <= 9000 && c->newest_keys >= 9000 - 30, "newest %llu",
	       (unsigned long long)c->newest_keys);
	free(keys), free(text);
	cascade_free(c);
}

/* Repeats and keys already in older stages take no room in the newest. */
static void repeats_take_no_capacity(void)
{
	struct filter_params first = first_stage(100);
	const char *why;
	struct cascade *c = cascade_new_growing(&first, 1e-6, 2, 1, &why);
	char *text;
	struct line *keys = number_keys(0, 150, &text);
	unsigned char present[150];
	size_t fresh;

	CHECK(c != NULL && keys != NULL);
	CHECK(cascade_test_and_add(c, keys, 150, present, &fresh, &why) == 0);
	CHECK(fresh == 150 && c->nstages == 2 && c->newest_keys == 50);
	CHECK(cascade_test_and_add(c, keys, 150, present, &fresh, &why) == 0);
	CHECK(fresh == 0 && c->nstages == 2 && c->newest_keys == 50);
	for (size_t i = 0; i < 150; i++)
		CHECK(present[i] == 1);
	CHECK(cascade_insertions(c) == 300);
	free(keys), free(text);
	cascade_free(c);
}

static void fixed_cascade_is_one_filter(void)
{
	struct filter_params p = first_stage(1000);
	const char *why;
	struct cascade *c;
	char *text;
	struct line *keys = number_keys(0, 2000, &text);

	CHECK(sizing_choose(p.layout, 1000, 1e-3, &p.m, &p.k, &why) == 0);
	p.target_p = 1e-3;
	c = cascade_new_fixed(&p, &why);
	CHECK(c != NULL && keys != NULL);
	CHECK(cascade_add(c, keys, 2000, &why) == 0);	/* twice its capacity: no growth */
	CHECK(c->nstages == 1 && c->growth == 0);
	CHECK(count_present(c, keys, 2000) == 2000);
	CHECK(cascade_current_fpr(c) > 1e-3);
	CHECK(cascade_bytes(c) == p.m / 8);
	free(keys), free(text);
	cascade_free(c);
}

static void like_copies_shape_and_key_but_not_contents(void)
{
	struct filter_params first = first_stage(100);
	const char *why, *what;
	struct cascade *c = cascade_new_growing(&first, 1e-3, 2, 1, &why), *like;
	char *text;
	struct line *keys = number_keys(0, 500, &text);

	CHECK(c != NULL && keys != NULL && cascade_add(c, keys, 500, &why) == 0);
	like = cascade_new_like(c, &why);
	CHECK(like != NULL && like->nstages == 1 && like->growth == 2);
	CHECK(count_present(like, keys, 500) == 0);
	CHECK(cascade_compatible(c, like, &what) == 1);
	like->tighten = 2;
	CHECK(cascade_compatible(c, like, &what) == 0 && strcmp(what, "growth") == 0);
	free(keys), free(text);
	cascade_free(c);
	cascade_free(like);
}

static void bad_growth_is_refused(void)
{
	struct filter_params first = first_stage(100);
	const char *why = NULL;

	CHECK(cascade_new_growing(&first, 1e-3, 1, 1, &why) == NULL && why != NULL);
	CHECK(cascade_new_growing(&first, 1e-3, 17, 1, &why) == NULL);
	CHECK(cascade_new_growing(&first, 1e-3, 2, 0, &why) == NULL);
	CHECK(cascade_new_growing(&first, 1.0, 2, 1, &why) == NULL);
}

/* Stages from a file: the newest stage's count is estimated from its fill. */
static void loaded_stages_estimate_the_newest_count(void)
{
	struct filter_params p = first_stage(10000);
	const char *why;
	struct filter *stages[1];
	struct cascade *c;
	char *text;
	struct line *keys = number_keys(0, 5000, &text);

	CHECK(sizing_choose(p.layout, 10000, 1e-3, &p.m, &p.k, &why) == 0);
	p.target_p = 1e-3;
	stages[0] = filter_new(&p, &why);
	CHECK(stages[0] != NULL && keys != NULL);
	filter_add(stages[0], keys, 5000);
	c = cascade_from_stages(stages, 1, 0, 0, 10000, 1e-3, &why);
	CHECK(c != NULL);
	/* a fixed filter is not counted on load: readers do not pay for it */
	CHECK(c->newest_keys == 0);
	cascade_refresh_count(c);
	CHECKF(fabs((double)c->newest_keys - 5000) < 100, "newest_keys %llu",
	       (unsigned long long)c->newest_keys);
	CHECK(cascade_from_stages(stages, 2, 0, 0, 10000, 1e-3, &why) == NULL);
	free(keys), free(text);
	cascade_free(c);
}

/*
 * The split calls. cascade_hasher is NULL when hashes cannot be made
 * ahead: a key kept outside and not supplied, or DCSO.
 */
static void hasher_is_null_without_a_usable_key(void)
{
	struct filter_params p = first_stage(1000), d;
	const char *why;
	struct cascade *c, *dc;
	struct line key = { "x", 1 };
	uint64_t h[2] = { 0, 0 };
	unsigned char present[1];
	size_t fresh = 99;

	CHECK(sizing_choose(p.layout, 1000, 1e-3, &p.m, &p.k, &why) == 0);
	p.target_p = 1e-3;
	p.flags = FILTER_KEY_EXTERNAL;
	p.fingerprint = filter_key_fingerprint(cascade_key);
	memset(p.key, 0, sizeof p.key);
	c = cascade_new_fixed(&p, &why);
	CHECK(c != NULL && cascade_needs_key(c));
	CHECK(cascade_hasher(c) == NULL);
	CHECK(cascade_test_hashed(c, &key, h, 1, present) == -1);
	why = NULL;
	CHECK(cascade_test_and_add_hashed(c, &key, h, 1, present, &fresh, &why) == -1);
	CHECK(why == cascade_err_no_key);
	why = NULL;
	CHECK(cascade_add_hashed(c, &key, h, 1, &why) == -1 && why == cascade_err_no_key);
	CHECK(cascade_insertions(c) == 0);
	CHECK(cascade_supply_key(c, cascade_key, &why) == 0);
	CHECK(cascade_hasher(c) == c->stages[0]);
	cascade_free(c);
	CHECK(dcso_params(1000, 1e-3, &d, &why) == 0);
	dc = cascade_new_fixed(&d, &why);
	CHECK(dc != NULL && cascade_hasher(dc) == NULL);
	cascade_free(dc);
}

/* Whether a and b hold the same stages, bit for bit, and the same counts. */
static int same_cascade(const struct cascade *a, const struct cascade *b)
{
	if (a->nstages != b->nstages || a->newest_keys != b->newest_keys ||
	    cascade_insertions(a) != cascade_insertions(b))
		return 0;
	for (size_t s = 0; s < a->nstages; s++) {
		const struct filter *fa = a->stages[s], *fb = b->stages[s];
		const struct filter_params *pa = &fa->params, *pb = &fb->params;

		if (pa->layout != pb->layout || pa->m != pb->m || pa->k != pb->k ||
		    pa->capacity != pb->capacity || pa->target_p != pb->target_p ||
		    fa->insertions != fb->insertions || filter_bytes(fa) != filter_bytes(fb) ||
		    memcmp(fa->words, fb->words, filter_bytes(fa)) != 0)
			return 0;
	}
	return 1;
}

/*
 * 24,000 keys, 6000 distinct (each seen four times, interleaved), in
 * batches of 1 to 4999 keys, into two growing cascades whose first stage
 * holds 100: 100 + 200 + ... + 3200 = 6300 covers 6000 in 6 stages, so
 * batches straddle five growths. One cascade takes cascade_test_and_add;
 * the other cascade_test_and_add_hashed with hashes from the hasher
 * fetched once before the first key (it must stay put). After every batch
 * the answers and fresh counts agree; at the end the stages do.
 */
static int growing_split_agrees(struct cascade *plain, struct cascade *split,
				const struct line *keys, size_t n)
{
	const struct filter *hasher = cascade_hasher(split);
	unsigned char *want = malloc(n), *got = malloc(n);
	uint64_t *h = malloc(2 * n * sizeof *h);
	size_t done = 0, step = 1, fresh_plain, fresh_split;
	const char *why;
	int ok = want && got && h && hasher && filter_hash(hasher, keys, n, h) == 0;

	while (ok && done < n) {
		size_t len = n - done < step ? n - done : step;

		ok = cascade_test_and_add(plain, keys + done, len, want, &fresh_plain, &why) == 0 &&
		     cascade_test_and_add_hashed(split, keys + done, h + 2 * done, len, got,
						 &fresh_split, &why) == 0 &&
		     fresh_plain == fresh_split && memcmp(want, got, len) == 0;
		done += len;
		step = step * 7 % 4999 + 1;
	}
	ok = ok && cascade_hasher(split) == hasher;
	if (ok) {
		ok = cascade_test(plain, keys, n, want) == 0 &&
		     cascade_test_hashed(split, keys, h, n, got) == 0 && memcmp(want, got, n) == 0 &&
		     memchr(got, 0, n) == NULL;
		ok = ok && cascade_test_hashed(split, keys, NULL, n, got) == 0 &&
		     memcmp(want, got, n) == 0;
	}
	free(want), free(got), free(h);
	return ok;
}

static void growing_split_matches(enum filter_layout layout)
{
	struct filter_params first = first_stage(100);
	const char *why;
	struct cascade *plain, *split;
	char *text;
	struct line *uniq = number_keys(0, 6000, &text), *keys = malloc(24000 * sizeof *keys);
	int ok;

	first.layout = layout;
	plain = cascade_new_growing(&first, 1e-3, 2, 1, &why);
	split = cascade_new_growing(&first, 1e-3, 2, 1, &why);
	CHECK(plain && split && uniq && keys);
	for (size_t i = 0; i < 24000; i++)
		keys[i] = uniq[(i * 6007) % 6000];	/* 6007 is prime to 6000: each key four times */
	ok = growing_split_agrees(plain, split, keys, 24000);
	CHECKF(plain->nstages == 6, "%zu stages", plain->nstages);
	ok = ok && same_cascade(plain, split);
	free(keys), free(uniq), free(text);
	cascade_free(plain);
	cascade_free(split);
	CHECK(ok);
}

static void growing_split_blocked(void) { growing_split_matches(FILTER_BLOCKED); }
static void growing_split_classic(void) { growing_split_matches(FILTER_CLASSIC); }
static void growing_split_counting(void) { growing_split_matches(FILTER_COUNTING); }

/*
 * cascade_add_hashed against cascade_add, with hashes and with NULL: a
 * fixed cascade (straight adds) and a growing one (test-and-add, growing).
 */
static void add_hashed_matches_add(unsigned growth)
{
	struct filter_params p = first_stage(500);
	const char *why;
	struct cascade *a, *b, *c;
	char *text;
	struct line *keys = number_keys(0, 5000, &text);
	uint64_t *h = malloc(2 * 5000 * sizeof *h);

	CHECK(sizing_choose(p.layout, 500, 1e-3, &p.m, &p.k, &why) == 0);
	p.target_p = 1e-3;
	a = growth ? cascade_new_growing(&p, 1e-3, growth, 1, &why) : cascade_new_fixed(&p, &why);
	b = growth ? cascade_new_growing(&p, 1e-3, growth, 1, &why) : cascade_new_fixed(&p, &why);
	c = growth ? cascade_new_growing(&p, 1e-3, growth, 1, &why) : cascade_new_fixed(&p, &why);
	CHECK(a && b && c && keys && h && cascade_hasher(b) != NULL);
	CHECK(filter_hash(cascade_hasher(b), keys, 5000, h) == 0);
	CHECK(cascade_add(a, keys, 5000, &why) == 0);
	CHECK(cascade_add_hashed(b, keys, h, 5000, &why) == 0);
	CHECK(cascade_add_hashed(c, keys, NULL, 5000, &why) == 0);
	CHECK(growth == 0 || a->nstages > 1);
	CHECK(same_cascade(a, b) && same_cascade(a, c));
	free(keys), free(text), free(h);
	cascade_free(a);
	cascade_free(b);
	cascade_free(c);
}

static void add_hashed_fixed(void) { add_hashed_matches_add(0); }
static void add_hashed_growing(void) { add_hashed_matches_add(4); }

void suite_cascade(void)
{
	unit_run("cascade: growing keeps its rate over 100x its first stage, no false negatives", growing_keeps_its_rate_over_100x_its_first_stage);
	unit_run("cascade: stages follow the growth plan and their rates sum below P", stages_follow_the_growth_plan);
	unit_run("cascade: repeats and keys in older stages take no capacity", repeats_take_no_capacity);
	unit_run("cascade: a fixed cascade is one filter that never grows", fixed_cascade_is_one_filter);
	unit_run("cascade: like copies shape, key and growth but not contents", like_copies_shape_and_key_but_not_contents);
	unit_run("cascade: bad growth parameters are refused", bad_growth_is_refused);
	unit_run("cascade: a loaded fixed filter is counted only on request", loaded_stages_estimate_the_newest_count);
	unit_run("cascade: the hasher is NULL while an external key is missing (the _hashed calls refuse) and for DCSO", hasher_is_null_without_a_usable_key);
	unit_run("cascade: blocked: test-and-add with hashes ahead grows through 6 stages identical to test-and-add", growing_split_blocked);
	unit_run("cascade: classic: test-and-add with hashes ahead grows through 6 stages identical to test-and-add", growing_split_classic);
	unit_run("cascade: counting: test-and-add with hashes ahead grows through 6 stages identical to test-and-add", growing_split_counting);
	unit_run("cascade: fixed: add with hashes ahead, or NULL, gives the bits of add", add_hashed_fixed);
	unit_run("cascade: growing: add with hashes ahead, or NULL, grows and sets bits as add", add_hashed_growing);
}
