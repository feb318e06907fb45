/* SPDX-License-Identifier: MIT */
/*
 * test_cov_params.c - the library's own refusals of parameters that the
 * programs never pass, because cmd/ parses and checks options first:
 * filter shapes, growing-filter plans, stage lists, removal from the wrong
 * kind of filter, sizes past 2^46 bits and sketch precisions. Each is the
 * library's contract with a C caller; make coverage found them unreached.
 */
#include <string.h>

#include "cascade.h"
#include "filter.h"
#include "hll.h"
#include "sizing.h"
#include "unit.h"

static struct filter_params good_shape(void)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 7;
	p.m = 4096;
	p.capacity = 100;
	p.target_p = 1e-2;
	memcpy(p.key, "params-test-key!", 16);
	return p;
}

/* filter_params_check refuses p with exactly msg. */
static int shape_refused(struct filter_params p, const char *msg)
{
	const char *why = NULL;

	if (filter_params_check(&p, &why) == -1 && why != NULL && strcmp(why, msg) == 0)
		return 1;
	printf("# expected '%s', got '%s'\n", msg, why ? why : "(accepted)");
	return 0;
}

static void test_filter_shapes(void)
{
	struct filter_params p = good_shape();
	const char *why;

	CHECK(filter_params_check(&p, &why) == 0);
	p = good_shape(), p.hash = (enum filter_hash)9;
	CHECK(shape_refused(p, "unknown hash function"));
	p = good_shape(), p.capacity = 0;
	CHECK(shape_refused(p, "capacity must be at least 1"));
	p = good_shape(), p.target_p = 0.0;
	CHECK(shape_refused(p, "target rate out of range (0, 1)"));
	p = good_shape(), p.m = FILTER_M_MAX + FILTER_BLOCK_BITS;
	CHECK(shape_refused(p, "size (m) out of range 512..2^46 bits"));
}

static void test_growing_plans(void)
{
	struct filter_params p = good_shape();
	const char *why = NULL;

	CHECK(cascade_new_growing(&p, 1e-2, 1, 1, &why) == NULL);
	CHECK(strcmp(why, "growth factor or tightening out of range") == 0);
	CHECK(cascade_new_growing(&p, 1e-2, 2, 0, &why) == NULL);
	CHECK(strcmp(why, "growth factor or tightening out of range") == 0);
	CHECK(cascade_new_growing(&p, 1.5, 2, 1, &why) == NULL);
	CHECK(strcmp(why, "bad capacity or rate for a growing filter") == 0);
	p.capacity = 0;
	CHECK(cascade_new_growing(&p, 1e-2, 2, 1, &why) == NULL);
	CHECK(strcmp(why, "bad capacity or rate for a growing filter") == 0);
}

static void test_stage_lists(void)
{
	struct filter_params p = good_shape(), q = good_shape();
	const char *why = NULL;
	struct filter *stages[2];
	struct cascade *c;

	q.flags = FILTER_FOLD_CASE;
	stages[0] = filter_new(&p, &why);
	stages[1] = filter_new(&q, &why);
	CHECK(stages[0] != NULL && stages[1] != NULL);
	CHECK(cascade_from_stages(stages, 0, 2, 1, 100, 1e-2, &why) == NULL);
	CHECK(strcmp(why, "bad number of stages") == 0);
	CHECK(cascade_from_stages(stages, 2, 0, 0, 100, 1e-2, &why) == NULL);
	CHECK(strcmp(why, "bad number of stages") == 0);
	CHECK(cascade_from_stages(stages, 2, 2, 1, 100, 1e-2, &why) == NULL);
	CHECK(strcmp(why, "stages disagree on hash, key or normalisation") == 0);
	/* refused lists leave the stages to the caller; a good one takes them */
	filter_free(stages[1]);
	c = cascade_from_stages(stages, 1, 0, 0, 100, 1e-2, &why);
	CHECK(c != NULL);
	cascade_free(c);
}

static void test_remove_needs_counting(void)
{
	struct filter_params p = good_shape();
	const char *why = NULL;
	struct cascade *c = cascade_new_fixed(&p, &why);
	struct line key = { "x", 1 };
	size_t absent;

	CHECK(c != NULL);
	CHECK(cascade_remove(c, &key, 1, &absent, &why) == -1);
	CHECK(strcmp(why, "only a counting filter can remove keys") == 0);
	cascade_free(c);
}

static void test_limits(void)
{
	uint64_t m = 0;
	const char *why = NULL;

	/* 2^40 keys at 1e-9 with one probe: far past 2^46 bits */
	CHECK(sizing_bits_for_k(FILTER_CLASSIC, UINT64_C(1) << 40, 1e-9, 1, &m, &why) == -1);
	CHECK(why != NULL && strcmp(why, "filter would exceed the 2^46-bit limit") == 0);
	CHECK(hll_new(HLL_PRECISION_MIN - 1) == NULL);
	CHECK(hll_new(HLL_PRECISION_MAX + 1) == NULL);
}

/* The hash 0 is a value like any other: kept while exact, and merged. */
static void test_hll_zero_hash(void)
{
	struct hll *a = hll_new(10), *b = hll_new(10);
	uint8_t regs[1024] = { 0 };
	size_t set = 0;

	CHECK(a != NULL && b != NULL);
	hll_add(a, 0);
	CHECK(hll_is_exact(a) && hll_estimate(a) == 1.0);
	hll_registers(a, regs);
	for (size_t i = 0; i < sizeof regs; i++)
		set += regs[i] != 0;
	CHECK(set == 1);
	hll_add(b, 12345);
	CHECK(hll_merge(b, a) == 0);
	CHECK(hll_estimate(b) == 2.0);
	hll_free(a);
	hll_free(b);
}

static void test_remove_needs_fixed(void)
{
	struct filter_params p = good_shape();
	const char *why = NULL;
	struct cascade *c;
	struct line key = { "x", 1 };
	size_t absent;

	p.layout = FILTER_COUNTING;
	c = cascade_new_growing(&p, 1e-2, 2, 1, &why);
	CHECK(c != NULL);
	CHECK(cascade_remove(c, &key, 1, &absent, &why) == -1);
	CHECK(strstr(why, "growing filter") != NULL);
	cascade_free(c);
}

void suite_cov_params(void)
{
	unit_run("params: the hash 0 counts while exact and survives a merge", test_hll_zero_hash);
	unit_run("params: removing keys needs a fixed counting filter", test_remove_needs_fixed);
	unit_run("params: filter shapes refused, each naming what", test_filter_shapes);
	unit_run("params: growing plans out of range refused", test_growing_plans);
	unit_run("params: stage lists of the wrong length or hashing refused", test_stage_lists);
	unit_run("params: removing keys needs a counting filter", test_remove_needs_counting);
	unit_run("params: sizes past 2^46 bits and sketch precisions out of range", test_limits);
}
