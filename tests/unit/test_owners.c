/* SPDX-License-Identifier: MIT */
/*
 * test_owners.c - region owners (lib/sets/owners.c) give exactly what
 * one thread gives: for 1, 2, 3, 4, 8 and 16 regions, the same answers
 * per key, the same fresh counts, byte-identical stages, the same
 * insertion counts, a growing cascade that adds each stage at the same
 * key, and a stage refused for memory at the same key. Every run is
 * compared with cascade_test_and_add_hashed on a twin cascade fed the
 * same calls.
 */
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "owners.h"
#include "window.h"
#include "sizing.h"
#include "unit.h"

static const unsigned char owners_key[16] = "owners-unit-key!";

/* n keys drawn with repeats from `distinct` values, fixed seed; text holds their bytes. */
static struct line *repeating_keys(size_t n, uint64_t distinct, uint64_t seed, char **text)
{
	struct line *keys = malloc(n * sizeof *keys);
	char *p = *text = malloc(n * 24);

	for (size_t i = 0; keys && p && i < n; i++) {
		int len = snprintf(p, 24, "k%llu",
				   (unsigned long long)(unit_splitmix64(&seed) % distinct));

		keys[i].data = p;
		keys[i].len = (size_t)len;
		p += len;
	}
	return keys;
}

static struct filter_params blocked_params(uint64_t capacity)
{
	struct filter_params p = { 0 };

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.capacity = capacity;
	p.target_p = 1e-3;
	memcpy(p.key, owners_key, sizeof p.key);
	return p;
}

/* A fixed filter (growing 0) or a growing cascade from 1000 keys. */
static struct cascade *make_cascade(int growing, int count_new_only)
{
	struct filter_params p = blocked_params(growing ? 1000 : 50000);
	const char *why;
	struct cascade *c;

	if (growing) {
		c = cascade_new_growing(&p, 1e-3, CASCADE_GROWTH_DEFAULT, CASCADE_TIGHTEN_DEFAULT,
					&why);
	} else {
		if (sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, &why) < 0)
			return NULL;
		c = cascade_new_fixed(&p, &why);
	}
	if (c != NULL)
		c->count_new_only = count_new_only;
	return c;
}

/* Whether a and b hold the same stages, bit for bit, and the same counts. */
static int same_cascade(const struct cascade *a, const struct cascade *b)
{
	if (a->nstages != b->nstages || a->newest_keys != b->newest_keys)
		return 0;
	for (size_t s = 0; s < a->nstages; s++) {
		const struct filter *x = a->stages[s], *y = b->stages[s];

		if (x->params.m != y->params.m || x->insertions != y->insertions ||
		    memcmp(x->words, y->words, filter_bytes(x)) != 0)
			return 0;
	}
	return 1;
}

/*
 * What owners_presort is asked before each call, if anything: for the
 * very batch (then used), for one key fewer, or for other keys of the
 * same length (then sorted again at the split).
 */
enum presort_kind { PRESORT_NONE, PRESORT_SAME, PRESORT_SHORTER, PRESORT_OTHER_KEYS };

static void presort_ahead(struct owners *o, const struct cascade *c, enum presort_kind ahead,
			  const uint64_t *h, size_t done, size_t len)
{
	const struct filter *newest = c->stages[c->nstages - 1];

	if (ahead == PRESORT_SAME)
		owners_presort(o, 0, newest, h + 2 * done, len);
	else if (ahead == PRESORT_SHORTER)
		owners_presort(o, 0, newest, h + 2 * done, len - 1);
	else if (ahead == PRESORT_OTHER_KEYS)	/* the keys at the start, as many */
		owners_presort(o, 0, newest, done > 0 ? h : h + 2 * len, len);
}

/*
 * Feed n keys to a one-thread twin and to owners of `regions`, in calls of
 * irregular lengths (1 .. 9000, so some are too short to share and some
 * cross a stage's end), each presorted as `ahead` says; 1 when every
 * answer, count and bit agrees.
 */
static int agrees_with_one_thread(int growing, int count_new_only, unsigned regions,
				  enum presort_kind ahead, const struct line *keys, size_t n,
				  size_t *stages)
{
	struct cascade *one = make_cascade(growing, count_new_only);
	struct cascade *many = make_cascade(growing, count_new_only);
	const char *why;
	struct owners *o = owners_new(regions, 1, &why);
	uint64_t *h = malloc(2 * n * sizeof *h), seed = 99;
	unsigned char *want = malloc(n), *got = malloc(n);
	int ok = one && many && o && h && want && got && owners_usable(many) &&
		 filter_hash(cascade_hasher(one), keys, n, h) == 0;

	for (size_t done = 0, len; ok && done < n; done += len) {
		size_t fresh_one, fresh_many;

		len = 1 + (size_t)(unit_splitmix64(&seed) % 9000);
		len = len < n - done ? len : n - done;
		presort_ahead(o, many, ahead, h, done, len);
		ok = cascade_test_and_add_hashed(one, keys + done, h + 2 * done, len, want,
						 &fresh_one, &why) == 0 &&
		     owners_test_and_add(o, many, keys + done, h + 2 * done, len, got,
					 &fresh_many, &why) == 0 &&
		     fresh_one == fresh_many && memcmp(want, got, len) == 0;
	}
	ok = ok && same_cascade(one, many);
	*stages = ok ? many->nstages : 0;
	owners_free(o);
	cascade_free(one);
	cascade_free(many);
	free(h);
	free(want);
	free(got);
	return ok;
}

#define KEYS_AHEAD 100000
#define DISTINCT_AHEAD 40000

static void test_a_batch_sorted_ahead_is_used_only_for_itself(void)
{
	char *text;
	struct line *keys = repeating_keys(KEYS_AHEAD, DISTINCT_AHEAD, 11, &text);

	CHECK(keys != NULL && text != NULL);
	for (int growing = 0; keys != NULL && growing <= 1; growing++)
		for (unsigned r = 1; r <= 16; r *= 4)
			for (int kind = PRESORT_SAME; kind <= PRESORT_OTHER_KEYS; kind++) {
				size_t stages;

				CHECKF(agrees_with_one_thread(growing, 1, r, (enum presort_kind)kind,
							      keys, KEYS_AHEAD, &stages),
				       "growing %d, %u regions, presort kind %d", growing, r, kind);
			}
	free(keys);
	free(text);
}

static const unsigned region_counts[] = { 1, 2, 3, 4, 8, 16 };

/* 200,000 keys over 60,000 values: about 58,000 distinct, most keys repeats. */
#define KEYS 200000
#define DISTINCT 60000

static void run_all(int growing, int count_new_only, size_t min_stages)
{
	char *text;
	struct line *keys = repeating_keys(KEYS, DISTINCT, 7, &text);
	size_t stages = 0, i = 0;
	int ok = keys != NULL && text != NULL;

	for (; ok && i < sizeof region_counts / sizeof region_counts[0]; i++)
		ok = agrees_with_one_thread(growing, count_new_only, region_counts[i], PRESORT_NONE,
					    keys, KEYS, &stages) &&
		     stages >= min_stages;
	free(keys);
	free(text);
	CHECKF(ok, "regions %u: stages %zu (at least %zu wanted)", region_counts[i - 1], stages,
	       min_stages);
}

static void test_fixed_filter_matches_one_thread_for_every_region_count(void)
{
	run_all(0, 1, 1);
	run_all(0, 0, 1);
}

/*
 * From 1000 keys doubling, ~58,000 distinct keys need stages of 1000,
 * 2000, ... 32000 (63,000 in all): 6 stages, so five turn over mid-call.
 */
static void test_growing_cascade_adds_each_stage_at_the_same_key(void)
{
	run_all(1, 1, 6);
	run_all(1, 0, 6);
}

/* What a run that stops at a refused stage leaves: where it stopped, what it counted, its bits. */
struct stopped_run {
	size_t failed_at;	/* the first key of the call that failed; SIZE_MAX: none did */
	size_t fresh;
	size_t stages;
	uint64_t digest;	/* FNV-1a over every stage's words and insertion count */
};

static uint64_t cascade_digest(const struct cascade *c)
{
	uint64_t d = UINT64_C(14695981039346656037);

	for (size_t s = 0; s < c->nstages; s++) {
		const unsigned char *b = (const unsigned char *)c->stages[s]->words;

		for (size_t i = 0; i < filter_bytes(c->stages[s]); i++)
			d = (d ^ b[i]) * UINT64_C(1099511628211);
		d = (d ^ c->stages[s]->insertions) * UINT64_C(1099511628211);
	}
	return d ^ c->newest_keys;
}

/* Growing, in calls of 5000 keys, until one fails: on one thread (regions 0) or owners. */
static int run_until_refused(unsigned regions, const struct line *keys, const uint64_t *h,
			     size_t n, struct stopped_run *r)
{
	struct cascade *c = make_cascade(1, 1);
	const char *why;
	struct owners *o = regions > 0 ? owners_new(regions, 1, &why) : NULL;
	unsigned char *present = malloc(5000);
	int ok = c != NULL && present != NULL && (regions == 0 || o != NULL);

	r->failed_at = SIZE_MAX;
	r->fresh = 0;
	for (size_t done = 0; ok && done < n && r->failed_at == SIZE_MAX; done += 5000) {
		size_t len = n - done < 5000 ? n - done : 5000, fresh = 0;
		int rc = o != NULL ? owners_test_and_add(o, c, keys + done, h + 2 * done, len, present,
							 &fresh, &why)
				   : cascade_test_and_add_hashed(c, keys + done, h + 2 * done, len,
								 present, &fresh, &why);

		r->fresh += fresh;
		if (rc < 0)
			r->failed_at = done;
	}
	if (ok) {
		r->stages = c->nstages;
		r->digest = cascade_digest(c);
	}
	owners_free(o);
	cascade_free(c);
	free(present);
	return ok;
}

/* The bytes of a growing cascade's first three stages (1000, 2000, 4000 keys); 0 on failure. */
static uint64_t three_stages_bytes(const struct line *keys, const uint64_t *h, size_t n)
{
	struct cascade *c = make_cascade(1, 1);
	unsigned char present[1000];
	const char *why;
	uint64_t bytes = 0;

	for (size_t done = 0; c != NULL && c->nstages < 4 && done + 1000 <= n; done += 1000)
		if (cascade_test_and_add_hashed(c, keys + done, h + 2 * done, 1000, present, NULL,
						&why) < 0)
			break;
	if (c != NULL && c->nstages == 4)
		bytes = cascade_bytes(c) - filter_bytes(c->stages[3]);
	cascade_free(c);
	return bytes;
}

/*
 * Under a memory limit that holds three stages (the fourth, twice the
 * third, does not fit), owners fail at the same call as one thread, having
 * added the same keys before the failing one: same count, same bits.
 */
static void test_a_refused_stage_stops_owners_where_it_stops_one_thread(void)
{
	char *text;
	struct line *keys = repeating_keys(KEYS, DISTINCT, 11, &text);
	uint64_t *h = malloc(2 * KEYS * sizeof *h), three = 0;
	struct cascade *hasher = make_cascade(1, 1);
	struct stopped_run one = { 0 }, many;
	int ok = keys && text && h && hasher &&
		 filter_hash(cascade_hasher(hasher), keys, KEYS, h) == 0;

	if (ok)
		three = three_stages_bytes(keys, h, KEYS);
	cascade_free(hasher);
	/* room for three stages and a quarter more: the fourth (twice the third) is refused */
	filter_set_memory_limit(three + three / 4);
	ok = ok && three > 0 && run_until_refused(0, keys, h, KEYS, &one);
	for (unsigned i = 0; ok && i < sizeof region_counts / sizeof region_counts[0]; i++)
		ok = run_until_refused(region_counts[i], keys, h, KEYS, &many) &&
		     many.failed_at == one.failed_at && many.fresh == one.fresh &&
		     many.stages == one.stages && many.digest == one.digest;
	filter_set_memory_limit(0);
	free(keys);
	free(text);
	free(h);
	CHECK(ok);
	CHECKF(one.failed_at != SIZE_MAX && one.stages == 3, "failed at %zu, %zu stages",
	       one.failed_at, one.stages);
}

static void test_only_blocked_cascades_with_their_key_are_usable(void)
{
	struct filter_params p = blocked_params(1000);
	const char *why;
	struct cascade *blocked, *classic, *keyless;

	CHECK(sizing_choose(FILTER_BLOCKED, 1000, 1e-3, &p.m, &p.k, &why) == 0);
	blocked = cascade_new_fixed(&p, &why);
	p.layout = FILTER_CLASSIC;
	classic = cascade_new_fixed(&p, &why);
	p.layout = FILTER_BLOCKED;
	p.flags = FILTER_KEY_EXTERNAL;
	memset(p.key, 0, sizeof p.key);
	p.fingerprint = 1;
	keyless = cascade_new_fixed(&p, &why);
	CHECK(blocked && classic && keyless);
	CHECK(owners_usable(blocked) == 1);
	CHECK(owners_usable(classic) == 0);
	CHECK(owners_usable(keyless) == 0);
	cascade_free(blocked);
	cascade_free(classic);
	cascade_free(keyless);
}

static void test_region_counts_outside_1_to_256_are_refused(void)
{
	const char *why = NULL;

	CHECK(owners_new(0, 1, &why) == NULL && why != NULL);
	why = NULL;
	CHECK(owners_new(257, 1, &why) == NULL && why != NULL);
}

/*
 * A window of `size` keys (or seconds, when timed) over 4 generations, in
 * the owners' shape; counting only new keys (bfuniq's) unless --refresh
 * (bfbuild's count every key: both ways are covered).
 */
static struct window *make_window(enum window_kind kind, uint64_t size, uint32_t flags)
{
	struct window_params wp = { kind, size, 4, flags, kind == WINDOW_COUNT ? size : 20000, 1e-3, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = blocked_params(1000);
	const char *why;
	struct window *w = window_new(&wp, &p, &why);

	if (w != NULL && !(flags & WINDOW_REFRESH))
		window_count_new_only(w);
	if (w != NULL)
		window_track_loss(w);
	return w;
}

/* Whether two windows hold the same generations, bits, counts, clock and expected loss. */
static int same_window(const struct window *a, const struct window *b)
{
	if (a->ngen != b->ngen || a->clock != b->clock || a->expected_lost != b->expected_lost)
		return 0;
	for (size_t g = 0; g < a->ngen; g++)
		if (a->gen_no[g] != b->gen_no[g] || !same_cascade(a->gen[g], b->gen[g]))
			return 0;
	return 1;
}

/*
 * One batch into the many-regions window: split by region when it can
 * be (its regions worked in an order of the seed's choosing: any order
 * must do), else whole, as a run's consume would.
 */
static int window_batch(struct owners *o, unsigned regions, struct window *w,
			const struct line *keys, const uint64_t *h, size_t len, uint64_t now,
			unsigned char *got, size_t *fresh, uint64_t *seed, size_t *split)
{
	const char *why;

	if (!owners_split_window(o, 0, w, h, len, now, got))
		return window_test_and_add_hashed(w, keys, h, len, NULL, now, got, fresh, &why);
	for (unsigned i = 0, first = (unsigned)(unit_splitmix64(seed) % regions); i < regions; i++)
		owners_region(o, 0, (first + i * 5) % regions);	/* 5 is prime to 1-4, 8, 16 */
	*fresh = owners_finish(o, 0);
	(*split)++;
	return 0;
}

/*
 * A window fed in batches of 1..3000 keys, one twin through
 * window_test_and_add_hashed, the other through the owners' regions
 * (timed windows step the clock a second every batch); 1 when every
 * answer, count, bit and the expected loss agree; *split counts the
 * batches that were split by region.
 */
static int window_agrees(enum window_kind kind, uint64_t size, uint32_t flags, unsigned regions,
			 const struct line *keys, size_t n, size_t *split)
{
	struct window *one = make_window(kind, size, flags), *many = make_window(kind, size, flags);
	const char *why;
	struct owners *o = owners_new(regions, 1, &why);
	uint64_t *h = malloc(2 * n * sizeof *h), seed = 7, now = 1700000000000;
	unsigned char *want = malloc(n), *got = malloc(n);
	int ok = one && many && o && h && want && got && owners_usable_window(many) &&
		 filter_hash(window_hasher(one), keys, n, h) == 0;

	for (size_t done = 0, len; ok && done < n; done += len, now += 1000) {
		size_t fresh_one, fresh_many;

		len = 1 + (size_t)(unit_splitmix64(&seed) % 3000);
		len = len < n - done ? len : n - done;
		ok = window_test_and_add_hashed(one, keys + done, h + 2 * done, len, NULL, now,
						want, &fresh_one, &why) == 0 &&
		     window_batch(o, regions, many, keys + done, h + 2 * done, len, now, got,
				  &fresh_many, &seed, split) == 0 &&
		     fresh_one == fresh_many && memcmp(want, got, len) == 0;
	}
	ok = ok && same_window(one, many);
	owners_free(o);
	window_free(one);
	window_free(many);
	free(h);
	free(want);
	free(got);
	return ok;
}

static void test_windows_split_by_region_match_one_thread(void)
{
	char *text;
	struct line *keys = repeating_keys(KEYS, DISTINCT, 31, &text);

	CHECK(keys != NULL && text != NULL);
	for (size_t i = 0; i < sizeof region_counts / sizeof region_counts[0]; i++) {
		unsigned r = region_counts[i];
		size_t plain = 0, refresh = 0, timed = 0;

		CHECKF(window_agrees(WINDOW_COUNT, 40000, 0, r, keys, KEYS, &plain),
		       "count, %u regions", r);
		CHECKF(window_agrees(WINDOW_COUNT, 40000, WINDOW_REFRESH, r, keys, KEYS, &refresh),
		       "count --refresh, %u regions", r);
		/* about 130 batches, a generation every 13,333 keys: most fit in one */
		CHECKF(plain > 50 && refresh > 50, "%zu and %zu batches split", plain, refresh);
		/* a timed window's generations grow: never split, and still the same */
		CHECKF(window_agrees(WINDOW_TIME, 30, 0, r, keys, KEYS, &timed), "30 s, %u regions",
		       r);
		CHECKF(timed == 0, "%zu timed batches split", timed);
	}
	free(keys);
	free(text);
}

void suite_owners(void)
{
	unit_run("owners: windows (count, --refresh, timed) split by region match one thread's answers, bits, clock and loss for 1-16 regions",
		 test_windows_split_by_region_match_one_thread);
	unit_run("owners: a batch sorted by region ahead is used for that batch only, answers and bits as one thread's",
		 test_a_batch_sorted_ahead_is_used_only_for_itself);
	unit_run("owners: a fixed filter gets one thread's answers, bits and counts for 1-16 regions",
		 test_fixed_filter_matches_one_thread_for_every_region_count);
	unit_run("owners: a growing cascade adds each stage at the same key as one thread",
		 test_growing_cascade_adds_each_stage_at_the_same_key);
	unit_run("owners: a stage refused for memory stops owners at one thread's key, bits alike",
		 test_a_refused_stage_stops_owners_where_it_stops_one_thread);
	unit_run("owners: only blocked cascades whose key is known are shared out",
		 test_only_blocked_cascades_with_their_key_are_usable);
	unit_run("owners: region counts outside 1..256 are refused",
		 test_region_counts_outside_1_to_256_are_refused);
}
