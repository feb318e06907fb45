/* SPDX-License-Identifier: MIT */
/*
 * test_cascade.c - fixed filters and growing cascades: no false negatives,
 * the compounded rate holds far past the first stage, stages fill exactly
 * to their capacity and follow the growth plan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
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

void suite_cascade(void)
{
	unit_run("cascade: growing keeps its rate over 100x its first stage, no false negatives", growing_keeps_its_rate_over_100x_its_first_stage);
	unit_run("cascade: stages follow the growth plan and their rates sum below P", stages_follow_the_growth_plan);
	unit_run("cascade: repeats and keys in older stages take no capacity", repeats_take_no_capacity);
	unit_run("cascade: a fixed cascade is one filter that never grows", fixed_cascade_is_one_filter);
	unit_run("cascade: like copies shape, key and growth but not contents", like_copies_shape_and_key_but_not_contents);
	unit_run("cascade: bad growth parameters are refused", bad_growth_is_refused);
	unit_run("cascade: a loaded fixed filter is counted only on request", loaded_stages_estimate_the_newest_count);
}
