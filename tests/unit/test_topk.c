/* SPDX-License-Identifier: MIT */
/*
 * test_topk.c - the heavy-hitter summary (topk.h) and its file
 * (topk_file.h): on Zipf streams every interval holds against exact
 * counts, kept or not, every key above N / C is kept, and the floor is
 * at most N / C; merged summaries keep their intervals and list every key
 * above 2 N / C; keys longer than TOPK_KEY_MAX are counted apart by
 * their full hash and shown truncated; the same stream gives the same
 * summary; files round-trip byte for byte and damage is refused.
 *
 * Streams come from splitmix64 with fixed seeds: the same every run.
 * The guarantees tested are deterministic (Space-Saving's), so no
 * statistical slack is needed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "pgzip.h"
#include "topk.h"
#include "topk_file.h"
#include "unit.h"

#define DISTINCT 2000u
#define STREAM 200000u

/* ---- helpers ------------------------------------------------------------- */

/* Ranks 0..distinct-1 drawn with probability proportional to 1/(rank+1)^s. */
static void zipf_stream(double s, uint64_t seed, uint32_t distinct, uint32_t *out, size_t n)
{
	double *cdf = malloc(distinct * sizeof *cdf), sum = 0.0;

	for (uint32_t r = 0; r < distinct; r++)
		cdf[r] = (sum += pow(r + 1.0, -s));
	for (size_t i = 0; i < n; i++) {
		double u = (double)(unit_splitmix64(&seed) >> 11) / 9007199254740992.0 * sum;
		uint32_t lo = 0, hi = distinct - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		out[i] = lo;
	}
	free(cdf);
}

static struct topk *new_summary(uint64_t capacity)
{
	struct topk_params p = { capacity, 4 * capacity, 4 };
	const char *why;

	return topk_new(&p, FILTER_SIPHASH_1_3, 0, topk_default_key, &why);
}

/* The key of a rank: its decimal digits. */
static struct line rank_key(uint32_t rank, char *buf)
{
	struct line l = { buf, (size_t)sprintf(buf, "%u", (unsigned)rank) };

	return l;
}

static void hash_one(const struct topk *t, struct line key, uint64_t h[2])
{
	topk_hash(t, &key, 1, h);
}

/* Add ranks[0..n) to t, one key at a time, and count them exactly into exact[]. */
static void add_ranks(struct topk *t, const uint32_t *ranks, size_t n, uint64_t *exact)
{
	for (size_t i = 0; i < n; i++) {
		char buf[16];
		struct line key = rank_key(ranks[i], buf);
		uint64_t h[2];

		hash_one(t, key, h);
		topk_add_hashed(t, &key, h, 1);
		exact[ranks[i]]++;
	}
}

/* Every rank's query interval contains its exact count; kept ones have their key bytes. */
static int intervals_hold(const struct topk *t, const uint64_t *exact, uint32_t distinct)
{
	for (uint32_t r = 0; r < distinct; r++) {
		char buf[16];
		uint64_t h[2], lower, upper;

		hash_one(t, rank_key(r, buf), h);
		topk_query(t, h, &lower, &upper);
		if (lower > exact[r] || upper < exact[r]) {
			printf("# rank %u: exact %llu outside [%llu, %llu]\n", (unsigned)r,
			       (unsigned long long)exact[r], (unsigned long long)lower,
			       (unsigned long long)upper);
			return 0;
		}
	}
	return 1;
}

/* Whether the key of rank r is among t's items. */
static int is_kept(const struct topk *t, uint32_t r)
{
	char buf[16];
	uint64_t h[2];
	struct topk_item *items = malloc((t->kept + 1) * sizeof *items);
	size_t n = topk_items(t, items);
	int found = 0;

	hash_one(t, rank_key(r, buf), h);
	for (size_t i = 0; i < n; i++)
		found |= items[i].hash[0] == h[0] && items[i].hash[1] == h[1];
	free(items);
	return found;
}

/* ---- the summary ---------------------------------------------------------- */

static void zipf_bounds(double s)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *t = new_summary(200);

	zipf_stream(s, 42, DISTINCT, ranks, STREAM);
	add_ranks(t, ranks, STREAM, exact);
	free(ranks);
	CHECK(t->total == STREAM && t->kept == 200);
	/* Space-Saving: the counts sum to N, so the smallest is at most N / C */
	CHECK(topk_floor(t) <= STREAM / 200);
	CHECK(intervals_hold(t, exact, DISTINCT));
	for (uint32_t r = 0; r < DISTINCT; r++)
		CHECKF(exact[r] <= STREAM / 200 || is_kept(t, r), "rank %u (%llu) not kept",
		       (unsigned)r, (unsigned long long)exact[r]);
	free(exact);
	topk_free(t);
}

static void test_zipf_08_intervals_hold_and_heavy_keys_kept(void) { zipf_bounds(0.8); }
static void test_zipf_10_intervals_hold_and_heavy_keys_kept(void) { zipf_bounds(1.0); }
static void test_zipf_12_intervals_hold_and_heavy_keys_kept(void) { zipf_bounds(1.2); }

static void test_items_come_most_frequent_first_in_a_total_order(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *t = new_summary(100);
	struct topk_item items[100];
	size_t n;

	zipf_stream(1.0, 7, DISTINCT, ranks, STREAM);
	add_ranks(t, ranks, STREAM, exact);
	n = topk_items(t, items);
	CHECK(n == 100);
	for (size_t i = 1; i < n; i++)
		CHECK(items[i - 1].upper >= items[i].upper);
	/* rank 0 is by far the most frequent (1/H of the stream, about 12%) */
	CHECK(items[0].len == 1 && items[0].key[0] == '0');
	free(ranks);
	free(exact);
	topk_free(t);
}

static void test_the_same_stream_gives_the_same_summary(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *a = new_summary(50), *b = new_summary(50);
	struct topk_item ia[50], ib[50];

	zipf_stream(0.8, 3, DISTINCT, ranks, STREAM);
	add_ranks(a, ranks, STREAM, exact);
	add_ranks(b, ranks, STREAM, exact);
	CHECK(topk_items(a, ia) == 50 && topk_items(b, ib) == 50);
	for (size_t i = 0; i < 50; i++)
		CHECK(ia[i].hash[0] == ib[i].hash[0] && ia[i].count == ib[i].count
		      && ia[i].error == ib[i].error && ia[i].upper == ib[i].upper);
	CHECK(memcmp(a->cells, b->cells, 8 * a->params.width * a->params.depth) == 0);
	free(ranks);
	free(exact);
	topk_free(a);
	topk_free(b);
}

static void test_merged_summaries_keep_intervals_and_keys_above_2n_over_c(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *a = new_summary(150), *b = new_summary(150);
	const char *why;

	/* two different streams: different skews and seeds */
	zipf_stream(1.0, 11, DISTINCT, ranks, STREAM);
	add_ranks(a, ranks, STREAM, exact);
	zipf_stream(0.8, 12, DISTINCT, ranks, STREAM / 2);
	add_ranks(b, ranks, STREAM / 2, exact);
	CHECK(topk_merge(a, b, &why) == 0);
	CHECK(a->total == STREAM + STREAM / 2 && a->kept == 150);
	CHECK(intervals_hold(a, exact, DISTINCT));
	for (uint32_t r = 0; r < DISTINCT; r++)
		CHECKF(exact[r] <= 2 * a->total / 150 || is_kept(a, r), "rank %u not kept",
		       (unsigned)r);
	/* and it goes on counting, its intervals still holding */
	zipf_stream(1.2, 13, DISTINCT, ranks, STREAM);
	add_ranks(a, ranks, STREAM, exact);
	CHECK(intervals_hold(a, exact, DISTINCT));
	free(ranks);
	free(exact);
	topk_free(a);
	topk_free(b);
}

static void test_a_merge_of_four_keeps_intervals_and_keys_above_2n_over_c(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *t[4];
	const char *why;

	for (int i = 0; i < 4; i++) {
		t[i] = new_summary(120);
		zipf_stream(0.8 + 0.1 * i, 21 + (uint64_t)i, DISTINCT, ranks, STREAM / 4);
		add_ranks(t[i], ranks, STREAM / 4, exact);
	}
	CHECK(topk_merge_many(t[0], (const struct topk *const *)t + 1, 3, &why) == 0);
	CHECK(t[0]->total == STREAM && t[0]->kept == 120);
	CHECK(intervals_hold(t[0], exact, DISTINCT));
	for (uint32_t r = 0; r < DISTINCT; r++)
		CHECKF(exact[r] <= 2 * STREAM / 120 || is_kept(t[0], r), "rank %u not kept", (unsigned)r);
	free(ranks);
	free(exact);
	for (int i = 0; i < 4; i++)
		topk_free(t[i]);
}

static void test_merging_refuses_other_parameters_and_keys(void)
{
	struct topk *a = new_summary(10), *b = new_summary(20), *c;
	struct topk_params p = { 10, 40, 4 };
	unsigned char key[16] = "another-key-0001";
	const char *why;

	CHECK(topk_merge(a, b, &why) < 0 && strcmp(why, "different capacity") == 0);
	c = topk_new(&p, FILTER_SIPHASH_1_3, 0, key, &why);
	CHECK(topk_merge(a, c, &why) < 0 && strcmp(why, "different key") == 0);
	topk_free(a);
	topk_free(b);
	topk_free(c);
}

/* Keys of 1000 bytes that differ only in their last byte, far past the 256 kept. */
static void test_long_keys_count_apart_and_show_truncated(void)
{
	struct topk *t = new_summary(8);
	char buf[4][1000];
	struct line keys[4];
	uint64_t h[8], lower, upper;
	struct topk_item items[8];

	for (int i = 0; i < 4; i++) {
		memset(buf[i], 'x', sizeof buf[i]);
		buf[i][sizeof buf[i] - 1] = (char)('0' + i);
		keys[i].data = buf[i];
		keys[i].len = sizeof buf[i];
	}
	topk_hash(t, keys, 4, h);
	for (int rep = 0; rep <= 3; rep++)
		topk_add_hashed(t, keys + rep, h + 2 * rep, (size_t)(4 - rep));
	CHECK(topk_items(t, items) == 4);
	for (int i = 0; i < 4; i++) {
		CHECK(items[i].truncated && items[i].len == 1000);
		CHECK(memcmp(items[i].key, buf[0], TOPK_KEY_MAX) == 0);
		topk_query(t, h + 2 * i, &lower, &upper);
		CHECK(lower == (uint64_t)i + 1 && upper == (uint64_t)i + 1);
	}
	CHECK(topk_memory(&t->params) < 64 * 1024);
	topk_free(t);
}

/*
 * Two keys kept 5 times each fill a summary of capacity 2; a third key,
 * seen once, has a count-min estimate of 1 (4 rows of 4096 counters:
 * its 4 counters all shared with a or b has odds below 1e-10), at most
 * the smallest count 5, so it is not admitted: a and b stay exact.
 */
static void test_a_key_below_the_floor_is_not_admitted(void)
{
	struct topk_params p = { 2, 4096, 4 };
	const char *why;
	struct topk *t = topk_new(&p, FILTER_SIPHASH_1_3, 0, topk_default_key, &why);
	struct line keys[3] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };
	uint64_t h[6], lower, upper;
	struct topk_item items[2];

	topk_hash(t, keys, 3, h);
	for (int i = 0; i < 5; i++)
		topk_add_hashed(t, keys, h, 2);
	topk_add_hashed(t, keys + 2, h + 4, 1);
	CHECK(topk_items(t, items) == 2);
	CHECK(items[0].count == 5 && items[0].error == 0 && items[1].count == 5 && items[1].error == 0);
	topk_query(t, h + 4, &lower, &upper);
	CHECK(lower == 0 && upper == 1 && t->total == 11 && topk_floor(t) == 5);
	topk_free(t);
}

/*
 * The two listings of topk_frequent against exact counts, on a Zipf
 * stream through a summary of C = 200 (full, floor > 0): no key
 * NO_FALSE_POSITIVES lists occurred floor times or fewer, every key that
 * occurred more is among NO_FALSE_NEGATIVES', each listing in
 * topk_items' order. Deterministic: Space-Saving's bounds hold for any
 * stream, and a Zipf 1.0 stream of 200000 keys has some above the floor.
 */
static void frequent_lists_hold(const struct topk *t, const uint64_t *exact)
{
	struct topk_item *sure = malloc(t->kept * sizeof *sure);
	struct topk_item *maybe = malloc(t->kept * sizeof *maybe);
	size_t nsure = topk_frequent(t, TOPK_NO_FALSE_POSITIVES, sure);
	size_t nmaybe = topk_frequent(t, TOPK_NO_FALSE_NEGATIVES, maybe), j = 0;
	uint64_t floor = topk_floor(t);

	CHECK(floor > 0 && nsure > 0 && nsure < nmaybe && nmaybe < t->kept);
	for (size_t i = 0; i < nsure; i++) {
		char digits[16] = "";
		uint32_t rank;

		/* the key bytes are not terminated: copy them (a rank is at most 4 digits) */
		CHECK(sure[i].len < sizeof digits);
		memcpy(digits, sure[i].key, (size_t)sure[i].len);
		rank = (uint32_t)strtoul(digits, NULL, 10);
		CHECK(rank < DISTINCT && sure[i].count - sure[i].error > floor && exact[rank] > floor);
		while (j < nmaybe && maybe[j].hash[0] != sure[i].hash[0])
			j++;
		CHECKF(j < nmaybe, "sure key %zu not among the candidates, in order", i);
	}
	for (size_t i = 0; i < nmaybe; i++)
		CHECK(maybe[i].upper > floor && (i == 0 || maybe[i - 1].upper >= maybe[i].upper));
	for (uint32_t r = 0; r < DISTINCT; r++) {
		char buf[16];
		uint64_t h[2];
		size_t i = 0;

		hash_one(t, rank_key(r, buf), h);
		while (i < nmaybe && (maybe[i].hash[0] != h[0] || maybe[i].hash[1] != h[1]))
			i++;
		CHECKF(exact[r] <= floor || i < nmaybe, "rank %u (%llu > floor %llu) not a candidate",
		       (unsigned)r, (unsigned long long)exact[r], (unsigned long long)floor);
	}
	free(sure);
	free(maybe);
}

static void test_frequent_keys_no_false_positives_and_no_false_negatives(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *t = new_summary(200);

	zipf_stream(1.0, 5, DISTINCT, ranks, STREAM);
	add_ranks(t, ranks, STREAM, exact);
	frequent_lists_hold(t, exact);
	free(ranks);
	free(exact);
	topk_free(t);
}

/*
 * How frequent a key is, against the error bound: while the summary is
 * not full the bound is 0 and every key kept is sure; 300 distinct keys
 * once each through C = 100 fill it, and then none is sure (each
 * occurred once, and the bound is at least 1), though some may be.
 */
static void test_frequency_is_judged_against_the_floor(void)
{
	struct topk *t = new_summary(100);
	struct topk_item items[100];
	char buf[16];

	for (uint32_t r = 0; r < 50; r++) {
		struct line key = rank_key(r, buf);
		uint64_t h[2];

		hash_one(t, key, h);
		topk_add_hashed(t, &key, h, 1);
	}
	CHECK(topk_floor(t) == 0 && topk_frequent(t, TOPK_NO_FALSE_POSITIVES, items) == 50);
	CHECK(topk_frequency(t, 1, 1) == TOPK_SURE && topk_frequency(t, 0, 0) == TOPK_INFREQUENT);
	for (uint32_t r = 50; r < 300; r++) {
		struct line key = rank_key(r, buf);
		uint64_t h[2];

		hash_one(t, key, h);
		topk_add_hashed(t, &key, h, 1);
	}
	CHECK(topk_floor(t) >= 1 && topk_frequent(t, TOPK_NO_FALSE_POSITIVES, items) == 0);
	CHECK(topk_frequency(t, topk_floor(t), topk_floor(t) + 1) == TOPK_POSSIBLE);
	CHECK(topk_frequency(t, topk_floor(t) + 1, topk_floor(t) + 1) == TOPK_SURE);
	CHECK(topk_frequency(t, 0, topk_floor(t)) == TOPK_INFREQUENT);
	topk_free(t);
}

static void test_sizing_follows_eps_and_confidence(void)
{
	struct topk_params p;
	const char *why;

	CHECK(topk_size(1e-4, 0.999, &p, &why) == 0);
	CHECK(p.capacity == 10000 && p.width == 27183 && p.depth == 7);
	/* the default summary stays under 16 MB */
	CHECK(topk_memory(&p) < 16000000);
	CHECK(topk_size(0.0, 0.999, &p, &why) < 0);
	CHECK(topk_size(1e-3, 1.0, &p, &why) < 0);
}

/* ---- the file ------------------------------------------------------------------ */

/* t saved into a new unlinked file, its bytes in *bytes (*len of them); the fd, or -1. */
static int saved(const struct topk *t, unsigned char **bytes, size_t *len)
{
	const char *why;
	int fd = unit_temp_file("", 0);
	off_t size;

	if (fd < 0 || topk_file_save(t, fd, &why) < 0)
		return -1;
	size = lseek(fd, 0, SEEK_END);
	*bytes = malloc((size_t)size + 1);
	*len = (size_t)size;
	if (pread(fd, *bytes, *len, 0) != (ssize_t)*len)
		return -1;
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static struct topk *zipf_summary(void)
{
	uint32_t *ranks = malloc(STREAM * sizeof *ranks);
	uint64_t *exact = calloc(DISTINCT, sizeof *exact);
	struct topk *t = new_summary(64);
	char longkey[600];
	struct line key = { longkey, sizeof longkey };
	uint64_t h[2];

	zipf_stream(1.0, 5, DISTINCT, ranks, STREAM);
	add_ranks(t, ranks, STREAM, exact);
	memset(longkey, 'k', sizeof longkey);
	topk_hash(t, &key, 1, h);
	for (int i = 0; i < 20000; i++)	/* a long key among the heavy ones */
		topk_add_hashed(t, &key, h, 1);
	free(ranks);
	free(exact);
	return t;
}

static void test_files_round_trip_byte_for_byte(void)
{
	struct topk *t = zipf_summary(), *back;
	unsigned char *a, *b;
	size_t la, lb;
	const char *why;
	int fd = saved(t, &a, &la), fd2;

	CHECK(fd >= 0);
	back = topk_file_load(fd, &why);
	close(fd);
	CHECKF(back != NULL, "%s", why);
	CHECK(back->total == t->total && back->kept == t->kept && topk_floor(back) == topk_floor(t));
	CHECK(memcmp(back->cells, t->cells, 8 * t->params.width * t->params.depth) == 0);
	fd2 = saved(back, &b, &lb);
	CHECK(fd2 >= 0 && la == lb && memcmp(a, b, la) == 0);
	CHECK(topk_file_detect(a, la) == 1);
	close(fd2);
	free(a);
	free(b);
	topk_free(back);
	topk_free(t);
}

/* Whether bytes[0..len) load; *why gets the message. */
static int loads(const unsigned char *bytes, size_t len, const char **why)
{
	int fd = unit_temp_file((const char *)bytes, len);
	struct topk *t = topk_file_load(fd, why);

	close(fd);
	topk_free(t);
	return t != NULL;
}

static void test_damaged_files_are_refused(void)
{
	struct topk *t = zipf_summary();
	unsigned char *a, *copy;
	size_t la;
	const char *why;
	int fd = saved(t, &a, &la);

	CHECK(fd >= 0);
	close(fd);
	for (size_t cut = 0; cut < la; cut += la / 97 + 1)
		CHECKF(!loads(a, cut, &why), "truncated at %zu loads", cut);
	copy = malloc(la + 1);
	memcpy(copy, a, la);
	copy[la] = 0x1f;
	CHECK(!loads(copy, la + 1, &why));
	copy[la / 2] ^= 0x40;	/* a flipped bit: gzip's CRC-32 catches it */
	CHECK(!loads(copy, la, &why));
	CHECK(!loads((const unsigned char *)"plain text\n", 11, &why)
	      && strstr(why, "not gzip") != NULL);
	free(copy);
	free(a);
	topk_free(t);
}

/* Parameters and shapes out of range are refused, each saying what. */
static void test_bad_parameters_are_refused(void)
{
	struct topk_params wide = { 8, TOPK_WIDTH_MAX + 1, 4 }, shallow = { 8, 32, 0 };
	struct topk_params good = { 8, 32, 4 }, sized;
	const char *why = NULL;

	CHECK(topk_check_params(&wide, &why) < 0 && strcmp(why, "width out of range 1..3000000") == 0);
	CHECK(topk_check_params(&shallow, &why) < 0 && strcmp(why, "depth out of range 1..16") == 0);
	CHECK(topk_size(1e-3, 0.2, &sized, &why) < 0 &&
	      strcmp(why, "confidence out of range 0.5..0.999999999") == 0);
	CHECK(topk_new(&good, FILTER_FNV1, 0, topk_default_key, &why) == NULL &&
	      strcmp(why, "unknown hash function") == 0);
	CHECK(topk_new(&good, FILTER_SIPHASH_1_3, 0x80, topk_default_key, &why) == NULL &&
	      strcmp(why, "unknown key flags") == 0);
}

/* The content of the one gzip member in gz[0..len) into out (cap bytes); its length, or 0. */
static size_t inflated(const unsigned char *gz, size_t len, unsigned char *out, size_t cap)
{
	z_stream zs;
	size_t got;

	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return 0;
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	got = inflate(&zs, Z_FINISH) == Z_STREAM_END ? cap - zs.avail_out : 0;
	inflateEnd(&zs);
	return got;
}

/* Each header field out of range, in a member whose CRCs are good: refused, saying which. */
static void test_header_fields_are_refused_by_name(void)
{
	static const struct {
		size_t at;
		unsigned char value;
		const char *why;
	} cases[] = {
		{ 8, 2, "unsupported summary format version 2" },
		{ 12, 65, "bad header: header length is not 64" },
		{ 16, 9, "bad header: unknown summary kind" },
		{ 17, 9, "bad header: unknown hash function" },
		{ 18, 0x80, "bad header: unknown key flags" },
		{ 20, 1, "bad header: reserved field not zero" },
		/* the key's bytes 8..15 stay: an external key must be a bare fingerprint */
		{ 18, FILTER_KEY_EXTERNAL, "bad header: key field of an external key not a bare fingerprint" },
		{ 51, 0xff, "bad header: capacity, width or depth out of range" },
		{ 56, 9, "bad header: more keys than the capacity" },
	};
	static unsigned char content[1 << 16], patched[1 << 16];
	struct topk *t = new_summary(8);
	unsigned char *bytes;
	size_t len, clen;
	int fd;

	CHECK(t != NULL);
	fd = saved(t, &bytes, &len);
	CHECK(fd >= 0);
	close(fd);
	clen = inflated(bytes, len, content, sizeof content);
	free(bytes);
	topk_free(t);
	CHECK(clen >= 64);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *why = NULL, *ignored;
		struct topk *back;

		memcpy(patched, content, clen);
		patched[cases[i].at] = cases[i].value;
		fd = unit_temp_file("", 0);
		CHECK(fd >= 0);
		CHECK(pgzip_save_member(fd, patched, 64, patched + 64, clen - 64, 6, &ignored) == 0);
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		back = topk_file_load(fd, &why);
		close(fd);
		CHECKF(back == NULL && why != NULL && strcmp(why, cases[i].why) == 0,
		       "byte %zu = %u: %s", cases[i].at, cases[i].value, why ? why : "(loaded)");
	}
}

void suite_topk(void)
{
	unit_run("topk: zipf 0.8: every interval holds, every key above N/C kept",
		 test_zipf_08_intervals_hold_and_heavy_keys_kept);
	unit_run("topk: zipf 1.0: every interval holds, every key above N/C kept",
		 test_zipf_10_intervals_hold_and_heavy_keys_kept);
	unit_run("topk: zipf 1.2: every interval holds, every key above N/C kept",
		 test_zipf_12_intervals_hold_and_heavy_keys_kept);
	unit_run("topk: items come most frequent first", test_items_come_most_frequent_first_in_a_total_order);
	unit_run("topk: the same stream gives the same summary", test_the_same_stream_gives_the_same_summary);
	unit_run("topk: merged summaries keep intervals and every key above 2N/C",
		 test_merged_summaries_keep_intervals_and_keys_above_2n_over_c);
	unit_run("topk: a merge of four keeps intervals and every key above 2N/C",
		 test_a_merge_of_four_keeps_intervals_and_keys_above_2n_over_c);
	unit_run("topk: merging refuses other parameters and keys", test_merging_refuses_other_parameters_and_keys);
	unit_run("topk: long keys count apart by hash and show truncated",
		 test_long_keys_count_apart_and_show_truncated);
	unit_run("topk: a new key whose estimate is at most the floor is not admitted",
		 test_a_key_below_the_floor_is_not_admitted);
	unit_run("topk: frequent keys: no false positives, or no false negatives",
		 test_frequent_keys_no_false_positives_and_no_false_negatives);
	unit_run("topk: a key is frequent against the floor, 0 until the summary is full",
		 test_frequency_is_judged_against_the_floor);
	unit_run("topk: sizing follows eps and confidence", test_sizing_follows_eps_and_confidence);
	unit_run("topk: files round-trip byte for byte", test_files_round_trip_byte_for_byte);
	unit_run("topk: truncated, trailing and damaged files are refused", test_damaged_files_are_refused);
	unit_run("topk: each header field out of range is refused by name", test_header_fields_are_refused_by_name);
	unit_run("topk: parameters, hashes and flags out of range are refused", test_bad_parameters_are_refused);
}
