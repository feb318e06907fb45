/* SPDX-License-Identifier: MIT */
/*
 * test_filter.c - the filter core: no false negatives ever, false positives
 * at the rate the formulas promise, batch semantics, fill statistics, and
 * bit indexes past 2^32.
 *
 * Everything uses fixed keys and inputs, so each run is identical; the
 * statistical bounds are chosen so that a correct implementation would fail
 * them with negligible probability over the choice of key (arithmetic at
 * each bound). The split calls (filter_hash, then the _hashed calls) must
 * give the plain calls' answers and bits exactly, word for word.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dcso.h"
#include "filter.h"
#include "sizing.h"
#include "unit.h"

static const unsigned char fixed_key[16] = {
	0x62, 0x66, 0x74, 0x6f, 0x6f, 0x6c, 0x73, 0x2d,
	0x75, 0x6e, 0x69, 0x74, 0x2d, 0x6b, 0x65, 0x79,
};

static struct filter *sized_filter(enum filter_layout layout, uint64_t n, double p)
{
	struct filter_params params = { 0 };
	const char *why;

	params.layout = layout;
	params.hash = FILTER_SIPHASH_1_3;
	params.capacity = n;
	params.target_p = p;
	memcpy(params.key, fixed_key, sizeof fixed_key);
	if (sizing_choose(layout, n, p, &params.m, &params.k, &why) < 0)
		return NULL;
	return filter_new(&params, &why);
}

/* Keys "key-<i>" with i in [from, from + n), written into one buffer. */
struct keybuf {
	struct line *keys;
	char *text;
};

static int make_keys(struct keybuf *kb, uint64_t from, size_t n)
{
	char *p;

	kb->keys = malloc(n * sizeof *kb->keys);
	kb->text = malloc(n * 24);
	if (kb->keys == NULL || kb->text == NULL)
		return -1;
	p = kb->text;
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(p, 24, "key-%llu", (unsigned long long)(from + i));

		kb->keys[i].data = p;
		kb->keys[i].len = (size_t)len;
		p += len;
	}
	return 0;
}

static void free_keys(struct keybuf *kb)
{
	free(kb->keys);
	free(kb->text);
}

static size_t count_present(const struct filter *f, const struct keybuf *kb, size_t n)
{
	unsigned char *present = malloc(n);
	size_t hits = 0;

	filter_test(f, kb->keys, n, present);
	for (size_t i = 0; i < n; i++)
		hits += present[i];
	free(present);
	return hits;
}

/*
 * Insert N = 1e6 keys into a filter sized for exactly N at rate p, query
 * N other keys. Every inserted key must test present. The absent keys are
 * Bernoulli trials with success probability q = sizing_fpr(N, m, k) (<= p);
 * the count X has mean Nq and standard deviation below sqrt(Nq). We accept
 * |X - Nq| <= 6 sqrt(Nq) + 6: for Nq >= 100 the normal tail beyond 6 sigma
 * is 2e-9, and the +6 covers the Poisson-like tail when Nq is small. So
 * the test checks the rate both ways: not worse than promised, and not
 * suspiciously better (which would mean the formula or the probes are off).
 */
static void check_rate(enum filter_layout layout, double p)
{
	const size_t n = 1000000;
	struct filter *f = sized_filter(layout, n, p);
	struct keybuf in, out;
	double q, expected, slack;
	size_t found, false_pos;

	CHECK(f != NULL);
	CHECK(make_keys(&in, 0, n) == 0 && make_keys(&out, n, n) == 0);
	filter_add(f, in.keys, n);
	found = count_present(f, &in, n);
	false_pos = count_present(f, &out, n);
	q = sizing_fpr(layout, n, f->params.m, f->params.k);
	expected = (double)n * q;
	slack = 6.0 * sqrt(expected) + 6.0;
	free_keys(&in);
	free_keys(&out);
	filter_free(f);
	CHECKF(found == n, "false negatives: %zu of %zu found", found, n);
	CHECK(q <= p);
	CHECKF(fabs((double)false_pos - expected) <= slack,
	       "false positives %zu, expected %.1f +- %.1f (p = %g)", false_pos, expected, slack, p);
}

static void blocked_1e2(void) { check_rate(FILTER_BLOCKED, 1e-2); }
static void blocked_1e3(void) { check_rate(FILTER_BLOCKED, 1e-3); }
static void blocked_1e4(void) { check_rate(FILTER_BLOCKED, 1e-4); }
static void classic_1e2(void) { check_rate(FILTER_CLASSIC, 1e-2); }
static void classic_1e3(void) { check_rate(FILTER_CLASSIC, 1e-3); }
static void classic_1e4(void) { check_rate(FILTER_CLASSIC, 1e-4); }

static void test_and_add_sees_earlier_keys_of_the_batch(void)
{
	struct filter *f = sized_filter(FILTER_BLOCKED, 1000, 1e-6);
	struct line keys[5] = {
		{ "a", 1 }, { "b", 1 }, { "a", 1 }, { "", 0 }, { "", 0 },
	};
	unsigned char present[5];
	size_t fresh;

	CHECK(f != NULL);
	fresh = filter_test_and_add(f, keys, 5, present);
	CHECK(fresh == 3);
	CHECK(present[0] == 0 && present[1] == 0 && present[2] == 1);
	CHECK(present[3] == 0 && present[4] == 1);
	CHECK(f->insertions == 5);
	fresh = filter_test_and_add(f, keys, 2, present);
	CHECK(fresh == 0 && present[0] == 1 && present[1] == 1);
	filter_free(f);
}

static void an_empty_filter_contains_nothing(void)
{
	struct filter *f = sized_filter(FILTER_CLASSIC, 1000, 1e-3);
	struct keybuf kb;

	CHECK(f != NULL && make_keys(&kb, 0, 1000) == 0);
	CHECK(count_present(f, &kb, 1000) == 0);
	CHECK(filter_bits_set(f) == 0);
	CHECK(filter_current_fpr(f) == 0.0);
	CHECK(filter_estimate_count(f) == 0.0);
	free_keys(&kb);
	filter_free(f);
}

/*
 * The estimate from the fill: with n = 1e5 keys at capacity the bits set
 * have a standard deviation of a few hundred, so the estimate's relative
 * error is well under 1%; we allow 2%. The current rate computed from the
 * fill must match the formula's expectation within 10%.
 */
static void fill_gives_count_and_rate(enum filter_layout layout)
{
	const size_t n = 100000;
	struct filter *f = sized_filter(layout, n, 1e-2);
	struct keybuf kb;
	double estimate, rate, expected;

	CHECK(f != NULL && make_keys(&kb, 0, n) == 0);
	filter_add(f, kb.keys, n);
	estimate = filter_estimate_count(f);
	rate = filter_current_fpr(f);
	expected = sizing_fpr(layout, n, f->params.m, f->params.k);
	free_keys(&kb);
	filter_free(f);
	CHECKF(fabs(estimate - (double)n) <= 0.02 * (double)n, "estimate %.0f for %zu", estimate, n);
	CHECKF(fabs(rate - expected) <= 0.1 * expected, "rate %g, expected %g", rate, expected);
}

static void blocked_fill(void) { fill_gives_count_and_rate(FILTER_BLOCKED); }
static void classic_fill(void) { fill_gives_count_and_rate(FILTER_CLASSIC); }

static void repeats_do_not_change_the_bits(void)
{
	struct filter *f = sized_filter(FILTER_BLOCKED, 1000, 1e-3);
	struct keybuf kb;
	uint64_t once;

	CHECK(f != NULL && make_keys(&kb, 0, 500) == 0);
	filter_add(f, kb.keys, 500);
	once = filter_bits_set(f);
	filter_add(f, kb.keys, 500);
	CHECK(filter_bits_set(f) == once);
	CHECK(f->insertions == 1000);
	free_keys(&kb);
	filter_free(f);
}

static void bad_params_are_rejected_with_the_field_named(void)
{
	struct filter_params p = { FILTER_BLOCKED, FILTER_SIPHASH_1_3, 0, 7, 1024, 10, 0.01, { 0 }, 0, 0 };
	const char *why = NULL;

	CHECK(filter_params_check(&p, &why) == 0);
	p.k = 0;
	CHECK(filter_new(&p, &why) == NULL && strstr(why, "(k)") != NULL);
	p.k = 65;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "(k)") != NULL);
	p.k = 7, p.m = 1000;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "multiple of 512") != NULL);
	p.m = UINT64_C(1) << 62;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "(m)") != NULL);
	p.m = 1024, p.flags = 4;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "normalisation") != NULL);
	p.flags = 0, p.target_p = 1.0;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "rate") != NULL);
	p.target_p = 0.01, p.layout = 9;
	CHECK(filter_params_check(&p, &why) < 0 && strstr(why, "layout") != NULL);
}

static void compatibility_names_the_first_difference(void)
{
	struct filter *a = sized_filter(FILTER_BLOCKED, 1000, 1e-3);
	struct filter *b = sized_filter(FILTER_BLOCKED, 1000, 1e-3);
	const char *what = NULL;

	CHECK(a != NULL && b != NULL);
	CHECK(filter_compatible(a, b, &what) == 1);
	/* keys are compared by fingerprint, so no key file is needed to merge */
	b->params.fingerprint ^= 1;
	CHECK(filter_compatible(a, b, &what) == 0 && strcmp(what, "key") == 0);
	b->params.fingerprint ^= 1;
	b->params.flags = FILTER_FOLD_CASE;
	CHECK(filter_compatible(a, b, &what) == 0 && strcmp(what, "normalisation") == 0);
	b->params.k++;
	CHECK(filter_compatible(a, b, &what) == 0 && strcmp(what, "hashes") == 0);
	filter_free(a);
	filter_free(b);
}

static void random_keys_differ(void)
{
	unsigned char a[16], b[16];

	CHECK(filter_random_key(a) == 0 && filter_random_key(b) == 0);
	CHECK(memcmp(a, b, 16) != 0);
}

/*
 * Filters just over 4 GiB (2^35 + 512 bits), both layouts: a 32-bit index
 * anywhere would fold probes into the low bits. Each key's probe positions
 * must lie in range, be set, and 7/8 of them (uniform over the range) lie
 * beyond bit 2^32; we require more than half. The mapping is lazy, so only
 * the pages the probes touch cost memory.
 */
static void indexes_beyond_2_32(enum filter_layout layout)
{
	struct filter_params p = { layout, FILTER_SIPHASH_1_3, 0, 4,
				   (UINT64_C(1) << 35) + 512, 64, 1e-9, { 0 }, 0, 0 };
	const char *why;
	struct filter *f = filter_new(&p, &why);
	struct keybuf kb;
	uint64_t pos[4], high = 0, in_range = 0, set = 0;

	CHECK(f != NULL && make_keys(&kb, 0, 64) == 0);
	filter_add(f, kb.keys, 64);
	for (size_t i = 0; i < 64; i++) {
		filter_positions(f, kb.keys[i], pos);
		for (int j = 0; j < 4; j++) {
			in_range += pos[j] < p.m;
			high += pos[j] >= UINT64_C(1) << 32;
			set += pos[j] < p.m && (f->words[pos[j] / 64] >> (pos[j] % 64) & 1);
		}
	}
	CHECK(count_present(f, &kb, 64) == 64);
	free_keys(&kb);
	filter_free(f);
	CHECK(in_range == 256 && set == 256);
	CHECKF(high > 128, "%llu of 256 probes beyond bit 2^32", (unsigned long long)high);
}

static void blocked_beyond_2_32(void) { indexes_beyond_2_32(FILTER_BLOCKED); }
static void classic_beyond_2_32(void) { indexes_beyond_2_32(FILTER_CLASSIC); }

static void fingerprints_tell_keys_apart(void)
{
	unsigned char other[16];

	memcpy(other, fixed_key, 16);
	other[15] ^= 0x80;
	CHECK(filter_key_fingerprint(fixed_key) == filter_key_fingerprint(fixed_key));
	CHECK(filter_key_fingerprint(fixed_key) != filter_key_fingerprint(other));
	CHECK(filter_key_fingerprint(fixed_key) != 0);
}

/*
 * The count estimate's standard error: 40 filters with different fixed
 * keys, 5000 keys each in 50176 bits (k = 7). The sample sd of 40 draws
 * lies within [0.71, 1.27] of the true sd with probability ~0.999 (chi^2
 * with 39 degrees of freedom); we allow [0.6, 1.5].
 */
static void estimate_spread(enum filter_layout layout)
{
	struct filter_params p = { layout, FILTER_SIPHASH_1_3, 0, 7, 50176, 5000, 0.01, { 0 }, 0, 0 };
	struct keybuf kb;
	double sum = 0.0, sumsq = 0.0, sd, model;
	const char *why;

	CHECK(make_keys(&kb, 0, 5000) == 0);
	for (int i = 0; i < 40; i++) {
		struct filter *f;
		double e;

		p.key[0] = (unsigned char)i;
		f = filter_new(&p, &why);
		CHECK(f != NULL);
		filter_add(f, kb.keys, 5000);
		e = filter_estimate_count(f);
		sum += e;
		sumsq += e * e;
		filter_free(f);
	}
	free_keys(&kb);
	sd = sqrt((sumsq - sum * sum / 40) / 39);
	model = sizing_estimate_sd(layout, p.m, p.k, 5000);
	printf("# sd %.2f model %.2f\n", sd, model);
	CHECKF(sd / model > 0.6 && sd / model < 1.5, "sample sd %.2f, model %.2f", sd, model);
}

static void blocked_estimate_spread(void) { estimate_spread(FILTER_BLOCKED); }
static void classic_estimate_spread(void) { estimate_spread(FILTER_CLASSIC); }

/* A filter whose key is kept outside takes its key only if the fingerprint agrees. */
static void an_external_key_must_match_the_fingerprint(void)
{
	struct filter_params p = { FILTER_BLOCKED, FILTER_SIPHASH_1_3, FILTER_KEY_EXTERNAL, 7, 1024,
				   10, 0.01, { 0 }, 0, 0 };
	unsigned char other[16];
	const char *why;
	struct filter *f;

	p.fingerprint = filter_key_fingerprint(fixed_key);
	f = filter_new(&p, &why);
	CHECK(f != NULL && f->params.fingerprint == filter_key_fingerprint(fixed_key));
	memcpy(other, fixed_key, 16);
	other[0] ^= 1;
	CHECK(filter_supply_key(f, other, &why) < 0 && strstr(why, "fingerprint") != NULL);
	CHECK(filter_supply_key(f, fixed_key, &why) == 0);
	CHECK(memcmp(f->params.key, fixed_key, 16) == 0);
	filter_free(f);
	/* a new filter with a known key: the fingerprint comes from the key */
	memcpy(p.key, fixed_key, 16);
	p.fingerprint = 12345;
	f = filter_new(&p, &why);
	CHECK(f != NULL && f->params.fingerprint == filter_key_fingerprint(fixed_key));
	filter_free(f);
}

/*
 * The memory policy: a limit refuses a new bit array that would take the
 * live total past it, names the size, and counts frees.
 */
static void memory_limit_refuses_and_counts(void)
{
	struct filter_params p = { FILTER_BLOCKED, FILTER_SIPHASH_1_3, 0, 7, 8192, 10, 0.01, { 0 }, 0, 0 };
	uint64_t before = filter_memory_in_use();
	const char *why;
	struct filter *a, *b;

	filter_set_memory_limit(before + 1024 + 512);
	a = filter_new(&p, &why);	/* 1024 bytes */
	b = filter_new(&p, &why);	/* another 1024: over */
	CHECK(a != NULL && b == NULL && why == filter_err_limit);
	CHECK(filter_refused_bytes() == 1024);
	CHECK(filter_memory_in_use() == before + 1024);
	filter_free(a);
	CHECK(filter_memory_in_use() == before);
	b = filter_new(&p, &why);
	CHECK(b != NULL);
	filter_free(b);
	filter_set_memory_limit(0);
}

/*
 * The split calls. For each layout and hash, three filters with the same
 * params take the same keys: one through the plain calls, one through the
 * _hashed calls with hashes from filter_hash, one through the _hashed
 * calls with h = NULL. Answers, counts and every word of the arrays must
 * agree. 3000 keys with repeats (1900 distinct, 0 to 130 bytes long) span
 * many of the core's internal batches, so a misplaced hash offset would show.
 */
#define SPLIT_N 3000

static int same_words(const struct filter *a, const struct filter *b)
{
	return filter_bytes(a) == filter_bytes(b) &&
	       memcmp(a->words, b->words, filter_bytes(a)) == 0 &&
	       a->insertions == b->insertions;
}

static struct filter *split_filter(enum filter_layout layout, enum filter_hash hash)
{
	struct filter_params p = { 0 };
	const char *why;

	p.layout = layout;
	p.hash = hash;
	p.capacity = 2000;
	p.target_p = 1e-2;
	memcpy(p.key, fixed_key, sizeof fixed_key);
	if (sizing_choose(layout, p.capacity, p.target_p, &p.m, &p.k, &why) < 0)
		return NULL;
	return filter_new(&p, &why);
}

/*
 * Distinct keys 0..n): key 0 is empty, key j is "k<j>-" padded to j % 131
 * bytes, so lengths cover every tail a hash loop may handle specially.
 */
static int make_varied_keys(struct keybuf *kb, size_t n)
{
	char *p;

	kb->keys = malloc(n * sizeof *kb->keys);
	kb->text = p = malloc(n * 160);
	if (kb->keys == NULL || kb->text == NULL)
		return -1;
	for (size_t j = 0; j < n; j++) {
		size_t len = j == 0 ? 0 : (size_t)snprintf(p, 24, "k%zu-", j);

		for (; len < j % 131; len++)
			p[len] = (char)('a' + (j + len) % 26);
		kb->keys[j] = (struct line){ p, len };
		p += len;
	}
	return 0;
}

/* keys[i] = distinct key i % 1900: the last 1100 repeat earlier keys. */
static int make_split_keys(struct keybuf *kb)
{
	struct keybuf uniq;

	if (make_varied_keys(&uniq, 1900) < 0)
		return -1;
	kb->text = uniq.text;
	kb->keys = malloc(SPLIT_N * sizeof *kb->keys);
	if (!kb->keys) {
		free(uniq.keys);
		return -1;
	}
	for (size_t i = 0; i < SPLIT_N; i++)
		kb->keys[i] = uniq.keys[i % 1900];
	free(uniq.keys);
	return 0;
}

struct split_state {
	struct filter *plain, *hashed, *nulled;
	unsigned char want[SPLIT_N], got[SPLIT_N], got_null[SPLIT_N];
	uint64_t h[2 * SPLIT_N];
};

/*
 * Add the first 500 keys, test all, test-and-add all. Returns 0 when all
 * three filters agree throughout, else the number of the first step that
 * differed. Of the 1900 distinct keys 1400 are new to the test-and-add,
 * less the few that test present by chance: at a fill below 2000 keys
 * the rate is under 1e-2, so about 14 expected; we allow 100.
 */
static int split_disagrees(struct split_state *st, const struct keybuf *kb)
{
	const struct line *keys = kb->keys;
	size_t a, b, c;

	if (filter_hash(st->hashed, keys, SPLIT_N, st->h) != 0)
		return 1;
	filter_add(st->plain, keys, 500);
	filter_add_hashed(st->hashed, keys, st->h, 500);
	filter_add_hashed(st->nulled, keys, NULL, 500);
	if (!same_words(st->plain, st->hashed) || !same_words(st->plain, st->nulled))
		return 2;
	filter_test(st->plain, keys, SPLIT_N, st->want);
	filter_test_hashed(st->hashed, keys, st->h, SPLIT_N, st->got);
	filter_test_hashed(st->nulled, keys, NULL, SPLIT_N, st->got_null);
	if (memcmp(st->want, st->got, SPLIT_N) || memcmp(st->want, st->got_null, SPLIT_N))
		return 3;
	a = filter_test_and_add(st->plain, keys, SPLIT_N, st->want);
	b = filter_test_and_add_hashed(st->hashed, keys, st->h, SPLIT_N, st->got);
	c = filter_test_and_add_hashed(st->nulled, keys, NULL, SPLIT_N, st->got_null);
	if (a != b || a != c || a > 1400 || a < 1300)
		return 4;
	if (memcmp(st->want, st->got, SPLIT_N) || memcmp(st->want, st->got_null, SPLIT_N))
		return 5;
	return same_words(st->plain, st->hashed) && same_words(st->plain, st->nulled) ? 0 : 6;
}

static void split_calls_match(enum filter_layout layout, enum filter_hash hash)
{
	struct split_state *st = calloc(1, sizeof *st);
	struct keybuf kb;
	int step;

	CHECK(st != NULL && make_split_keys(&kb) == 0);
	st->plain = split_filter(layout, hash);
	st->hashed = split_filter(layout, hash);
	st->nulled = split_filter(layout, hash);
	CHECK(st->plain && st->hashed && st->nulled);
	step = split_disagrees(st, &kb);
	if (step == 0 && filter_saturated(st->plain) != filter_saturated(st->hashed))
		step = 7;
	filter_free(st->plain);
	filter_free(st->hashed);
	filter_free(st->nulled);
	free(st);
	free_keys(&kb);
	CHECKF(step == 0, "step %d differs", step);
}

static void split_blocked_13(void) { split_calls_match(FILTER_BLOCKED, FILTER_SIPHASH_1_3); }
static void split_blocked_24(void) { split_calls_match(FILTER_BLOCKED, FILTER_SIPHASH_2_4); }
static void split_classic_13(void) { split_calls_match(FILTER_CLASSIC, FILTER_SIPHASH_1_3); }
static void split_classic_24(void) { split_calls_match(FILTER_CLASSIC, FILTER_SIPHASH_2_4); }
static void split_counting_13(void) { split_calls_match(FILTER_COUNTING, FILTER_SIPHASH_1_3); }
static void split_counting_24(void) { split_calls_match(FILTER_COUNTING, FILTER_SIPHASH_2_4); }

/* filter_hash gives (h1, h2) per key, whatever batch the key comes in, and depends on the hash. */
static void hashes_are_per_key(void)
{
	struct filter *f13 = split_filter(FILTER_BLOCKED, FILTER_SIPHASH_1_3);
	struct filter *f24 = split_filter(FILTER_CLASSIC, FILTER_SIPHASH_2_4);
	struct filter *other = split_filter(FILTER_COUNTING, FILTER_SIPHASH_1_3);
	struct keybuf kb;
	uint64_t all[2 * 300], one[2], again[2 * 300], h24[2];
	int ok = 1;

	CHECK(f13 && f24 && other && make_varied_keys(&kb, 300) == 0);
	CHECK(filter_hash(f13, kb.keys, 300, all) == 0);
	/* the hash depends on hash and key only, not on layout, m or k */
	CHECK(filter_hash(other, kb.keys, 300, again) == 0);
	ok = memcmp(all, again, sizeof all) == 0;
	for (size_t i = 0; ok && i < 300; i++) {
		ok = filter_hash(f13, &kb.keys[i], 1, one) == 0 && one[0] == all[2 * i] &&
		     one[1] == all[2 * i + 1];
		ok = ok && filter_hash(f24, &kb.keys[i], 1, h24) == 0 &&
		     (h24[0] != one[0] || h24[1] != one[1]);
	}
	CHECK(filter_hash(f13, kb.keys, 0, one) == 0);
	free_keys(&kb);
	filter_free(f13);
	filter_free(f24);
	filter_free(other);
	CHECK(ok);
}

/* DCSO probes are not derived from SipHash: no hashes ahead, but h = NULL works. */
static void dcso_has_no_hashes_ahead(void)
{
	struct filter_params p;
	const char *why;
	struct filter *a, *b;
	struct keybuf kb;
	uint64_t h[2 * 64];
	unsigned char pa[64], pb[64];

	CHECK(dcso_params(1000, 1e-3, &p, &why) == 0);
	a = filter_new(&p, &why);
	b = filter_new(&p, &why);
	CHECK(a && b && make_keys(&kb, 0, 64) == 0);
	CHECK(filter_hash(a, kb.keys, 64, h) == -1);
	filter_add(a, kb.keys, 32);
	filter_add_hashed(b, kb.keys, NULL, 32);
	CHECK(filter_test_and_add(a, kb.keys, 64, pa) ==
	      filter_test_and_add_hashed(b, kb.keys, NULL, 64, pb));
	CHECK(memcmp(pa, pb, 64) == 0 && same_words(a, b));
	filter_test_hashed(b, kb.keys, NULL, 64, pb);
	CHECK(memchr(pb, 0, 64) == NULL);
	free_keys(&kb);
	filter_free(a);
	filter_free(b);
}

/* ---- getting ready ahead (filter_ready_hashed) ----------------------------- */

static struct filter *shaped_filter(enum filter_layout layout, uint64_t bytes)
{
	struct filter_params params = { 0 };
	const char *why;

	params.layout = layout;
	params.hash = FILTER_SIPHASH_1_3;
	params.k = 7;
	params.m = (layout == FILTER_COUNTING ? bytes * 2 : bytes * 8);
	params.capacity = 1000;
	params.target_p = 0.01;
	memcpy(params.key, fixed_key, sizeof fixed_key);
	return filter_new(&params, &why);
}

static uint64_t set_bits(const struct filter *f)
{
	uint64_t total = 0;

	for (size_t i = 0; i < filter_bytes(f) / 8; i++)
		total += (uint64_t)__builtin_popcountll(f->words[i]);
	return total;
}

/*
 * Three keys readied in a 256 MiB blocked filter: while it is sparse,
 * each key's own 4 KiB page is backed ahead, and no more (written, not
 * read: a read would map the zero page, for the add to fault again);
 * once it is dense (filter_expect_dense), their three 2 MiB spans
 * become resident, exactly, and are marked, no bit changes, and asking
 * again changes nothing. The adds after it set exactly the bits they set
 * without it. The array is 12 KiB over a whole number of huge pages, as
 * a -n 1e9 filter's is: mmap would start it anywhere, every span would
 * straddle two huge pages, and neither could be made huge (the span
 * would stay the key's one 4 KiB page).
 */
static void backing_ahead_backs_only_the_keys_spans(void)
{
	const uint64_t bytes = (UINT64_C(256) << 20) + 12288;
	struct filter *f = shaped_filter(FILTER_BLOCKED, bytes), *g = shaped_filter(FILTER_BLOCKED, bytes);
	struct keybuf kb;
	uint64_t h[6], marked = 0, spans = (bytes + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;
	long before, after, again;

	CHECK(f != NULL && g != NULL && f->backed != NULL);
	CHECKF((uintptr_t)f->words % FILTER_BACK_SPAN == 0, "array at %p", (void *)f->words);
	CHECK(make_keys(&kb, 0, 3) == 0);
	CHECK(filter_hash(f, kb.keys, 3, h) == 0);
	before = unit_resident_pages(f->words, bytes);
	filter_ready_hashed(f, h, 3);
	CHECKF(unit_resident_pages(f->words, bytes) >= 1 && unit_resident_pages(f->words, bytes) <= 3,
	       "%ld pages resident while sparse", unit_resident_pages(f->words, bytes));
	filter_expect_dense(f);
	filter_ready_hashed(f, h, 3);
	after = unit_resident_pages(f->words, bytes);
	filter_ready_hashed(f, h, 3);
	again = unit_resident_pages(f->words, bytes);
	for (uint64_t i = 0; i < (spans + 63) / 64; i++)
		marked += (uint64_t)__builtin_popcountll(f->backed[FILTER_BACKED_HEAD + i]);
	CHECKF(before == 0, "%ld pages resident before", before);
	CHECKF(marked >= 1 && marked <= 3, "%llu spans marked", (unsigned long long)marked);
	CHECKF(after == (long)(marked * 512), "%ld pages resident for %llu spans", after, (unsigned long long)marked);
	CHECK(again == after);
	CHECK(set_bits(f) == 0);
	filter_add_hashed(f, kb.keys, h, 3);
	filter_add(g, kb.keys, 3);
	CHECK(memcmp(f->words, g->words, (size_t)bytes) == 0 && set_bits(f) > 0);
	free_keys(&kb);
	filter_free(f);
	filter_free(g);
}

/*
 * filter_expect_adds: a 128 MiB blocked filter turns dense on its own at
 * 64 spans x FILTER_DENSE_KEYS_PER_SPAN adds. Told of one add fewer, it
 * stays sparse (three keys: their three 4 KiB pages); told of that many,
 * it is dense before the first (their 2 MiB spans whole).
 */
static void expected_adds_make_dense_only_past_the_threshold(void)
{
	const uint64_t bytes = UINT64_C(128) << 20, enough = bytes / FILTER_BACK_SPAN * FILTER_DENSE_KEYS_PER_SPAN;
	struct filter *few = shaped_filter(FILTER_BLOCKED, bytes), *many = shaped_filter(FILTER_BLOCKED, bytes);
	struct keybuf kb;
	uint64_t h[6];
	long sparse, dense;

	CHECK(few != NULL && many != NULL && few->backed != NULL);
	CHECK(make_keys(&kb, 0, 3) == 0);
	CHECK(filter_hash(few, kb.keys, 3, h) == 0);
	filter_expect_adds(few, enough - 1);
	filter_expect_adds(many, enough);
	filter_ready_hashed(few, h, 3);
	filter_ready_hashed(many, h, 3);
	sparse = unit_resident_pages(few->words, bytes);
	dense = unit_resident_pages(many->words, bytes);
	CHECKF(sparse >= 1 && sparse <= 3, "%ld pages resident after %llu adds expected", sparse,
	       (unsigned long long)(enough - 1));
	CHECKF(dense >= 512 && dense <= 3 * 512 && dense % 512 == 0, "%ld pages resident after %llu expected",
	       dense, (unsigned long long)enough);
	free_keys(&kb);
	filter_free(few);
	filter_free(many);
}

struct ready_job {
	const struct filter *f;
	const uint64_t *h;
	size_t n;
};

static void *ready_all(void *arg)
{
	const struct ready_job *job = arg;

	for (size_t done = 0; done < job->n; done += 256)
		filter_ready_hashed(job->f, job->h + 2 * done, job->n - done < 256 ? job->n - done : 256);
	return NULL;
}

/*
 * The way bfuniq uses it: one thread gets 200,000 keys ready while another
 * tests and adds them in order. Every answer and every bit must be what
 * the adds alone give on a filter nobody else touched.
 */
static void getting_ready_beside_the_adds_changes_nothing(void)
{
	const uint64_t bytes = UINT64_C(128) << 20;
	const size_t n = 200000;
	struct filter *f = shaped_filter(FILTER_BLOCKED, bytes), *g = shaped_filter(FILTER_BLOCKED, bytes);
	unsigned char *seen_f = malloc(n), *seen_g = malloc(n);
	uint64_t *h = malloc(2 * n * sizeof *h);
	struct keybuf kb;
	struct ready_job job;
	pthread_t helper;
	size_t fresh_f = 0, fresh_g;

	CHECK(f != NULL && g != NULL && seen_f != NULL && seen_g != NULL && h != NULL);
	CHECK(make_keys(&kb, 0, n) == 0);
	/* every fourth key again, so some answers are "seen" */
	for (size_t i = 3; i < n; i += 4)
		kb.keys[i] = kb.keys[i / 4];
	CHECK(filter_hash(f, kb.keys, n, h) == 0);
	job.f = f;
	job.h = h;
	job.n = n;
	CHECK(pthread_create(&helper, NULL, ready_all, &job) == 0);
	for (size_t done = 0; done < n; done += 1000)
		fresh_f += filter_test_and_add_hashed(f, kb.keys + done, h + 2 * done, 1000, seen_f + done);
	CHECK(pthread_join(helper, NULL) == 0);
	fresh_g = filter_test_and_add(g, kb.keys, n, seen_g);
	CHECKF(fresh_f == fresh_g, "%zu fresh beside getting ready, %zu alone", fresh_f, fresh_g);
	CHECK(fresh_g < n && memcmp(seen_f, seen_g, n) == 0);
	CHECK(memcmp(f->words, g->words, (size_t)bytes) == 0);
	free_keys(&kb);
	free(h);
	free(seen_f);
	free(seen_g);
	filter_free(f);
	filter_free(g);
}

/* Small filters and other layouts are never got ready ahead: they touch little, or everywhere. */
static void backing_ahead_serves_only_big_blocked_filters(void)
{
	struct filter *small = shaped_filter(FILTER_BLOCKED, FILTER_READY_MIN - 4096);
	struct filter *classic = shaped_filter(FILTER_CLASSIC, FILTER_READY_MIN);
	struct filter *counting = shaped_filter(FILTER_COUNTING, FILTER_READY_MIN);
	struct keybuf kb;
	uint64_t h[2 * 100];

	CHECK(small != NULL && classic != NULL && counting != NULL);
	CHECK(small->backed == NULL && classic->backed == NULL && counting->backed == NULL);
	CHECK(make_keys(&kb, 0, 100) == 0);
	CHECK(filter_hash(small, kb.keys, 100, h) == 0);
	filter_ready_hashed(small, h, 100);
	CHECK(unit_resident_pages(small->words, filter_bytes(small)) == 0);
	free_keys(&kb);
	filter_free(small);
	filter_free(classic);
	filter_free(counting);
}

void suite_filter(void)
{
	unit_run("filter: blocked, p=1e-2: no false negatives in 1e6, rate as promised", blocked_1e2);
	unit_run("filter: blocked, p=1e-3: no false negatives in 1e6, rate as promised", blocked_1e3);
	unit_run("filter: blocked, p=1e-4: no false negatives in 1e6, rate as promised", blocked_1e4);
	unit_run("filter: classic, p=1e-2: no false negatives in 1e6, rate as promised", classic_1e2);
	unit_run("filter: classic, p=1e-3: no false negatives in 1e6, rate as promised", classic_1e3);
	unit_run("filter: classic, p=1e-4: no false negatives in 1e6, rate as promised", classic_1e4);
	unit_run("filter: test-and-add sees earlier keys of the same batch", test_and_add_sees_earlier_keys_of_the_batch);
	unit_run("filter: an empty filter contains nothing", an_empty_filter_contains_nothing);
	unit_run("filter: blocked fill gives the count within 2% and the rate within 10%", blocked_fill);
	unit_run("filter: classic fill gives the count within 2% and the rate within 10%", classic_fill);
	unit_run("filter: adding repeats changes no bits but counts insertions", repeats_do_not_change_the_bits);
	unit_run("filter: bad parameters are rejected with the field named", bad_params_are_rejected_with_the_field_named);
	unit_run("filter: compatibility check names the first difference", compatibility_names_the_first_difference);
	unit_run("filter: each random key is fresh", random_keys_differ);
	unit_run("filter: key fingerprints tell keys apart", fingerprints_tell_keys_apart);
	unit_run("filter: an external key is accepted only when it matches the fingerprint", an_external_key_must_match_the_fingerprint);
	unit_run("filter: the memory limit refuses, names the size and counts frees", memory_limit_refuses_and_counts);
	unit_run("filter: blocked count estimates spread as sizing_estimate_sd says", blocked_estimate_spread);
	unit_run("filter: classic count estimates spread as sizing_estimate_sd says", classic_estimate_spread);
	unit_run("filter: blocked, SipHash-1-3: the _hashed calls (hashes or NULL) answer and set bits as the plain ones", split_blocked_13);
	unit_run("filter: blocked, SipHash-2-4: the _hashed calls (hashes or NULL) answer and set bits as the plain ones", split_blocked_24);
	unit_run("filter: classic, SipHash-1-3: the _hashed calls (hashes or NULL) answer and set bits as the plain ones", split_classic_13);
	unit_run("filter: classic, SipHash-2-4: the _hashed calls (hashes or NULL) answer and set bits as the plain ones", split_classic_24);
	unit_run("filter: counting, SipHash-1-3: the _hashed calls (hashes or NULL) answer and count as the plain ones", split_counting_13);
	unit_run("filter: counting, SipHash-2-4: the _hashed calls (hashes or NULL) answer and count as the plain ones", split_counting_24);
	unit_run("filter: filter_hash is per key, independent of batch and layout, and follows the hash function", hashes_are_per_key);
	unit_run("filter: DCSO's filter_hash is -1; its _hashed calls with NULL match the plain ones", dcso_has_no_hashes_ahead);
	unit_run("filter: blocked bit indexes beyond 2^32 in a filter over 4 GiB", blocked_beyond_2_32);
	unit_run("filter: classic bit indexes beyond 2^32 in a filter over 4 GiB", classic_beyond_2_32);
	unit_run("filter: getting ready makes only the keys' 2 MiB spans resident and sets no bit",
		 backing_ahead_backs_only_the_keys_spans);
	unit_run("filter: adds expected past its dense threshold make it dense before the first, not fewer",
		 expected_adds_make_dense_only_past_the_threshold);
	unit_run("filter: getting ready beside the adds: same answers, same bits",
		 getting_ready_beside_the_adds_changes_nothing);
	unit_run("filter: getting ready leaves small filters and other layouts alone",
		 backing_ahead_serves_only_big_blocked_filters);
}
