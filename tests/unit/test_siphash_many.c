/* SPDX-License-Identifier: MIT */
/*
 * test_siphash_many.c - the batch hashes against the scalar ones.
 *
 * Every test runs under each implementation this CPU can use (selected by
 * name, the best one reselected at the end) and asks for exactly the scalar
 * siphash_1_3_128 / siphash_2_4_128 words for every message: over all short
 * lengths, batch sizes around the lane counts, mixed and huge lengths,
 * misaligned data, and data that ends at the end of its allocation or at an
 * unmapped page (so a read past a message faults or trips ASan). Random
 * data comes from a fixed-seed splitmix64, so every run is the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "siphash.h"
#include "unit.h"

static const char *const impl_names[] = { "avx512", "avx2", "portable" };

/* Why the last comparison failed, for the CHECKF message. */
static char why[200];

static void fill_random(unsigned char *p, size_t len, uint64_t *state)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)unit_splitmix64(state);
}

static void test_key(struct siphash_key *key)
{
	static const unsigned char bytes[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

	siphash_key_from_bytes(key, bytes);
}

/* One variant over the batch: 0 if every message got the scalar words. */
static int compare_variant(const struct siphash_key *key, const struct line *msgs, size_t n,
			   int wide_rounds, uint64_t *got)
{
	const char *variant = wide_rounds ? "2-4" : "1-3";

	memset(got, 0xa5, (2 * n + 2) * sizeof *got);
	if (wide_rounds)
		siphash_2_4_128_many(key, msgs, n, got);
	else
		siphash_1_3_128_many(key, msgs, n, got);
	for (size_t i = 0; i < n; i++) {
		uint64_t want[2];

		if (wide_rounds)
			siphash_2_4_128(key, msgs[i].data, msgs[i].len, want);
		else
			siphash_1_3_128(key, msgs[i].data, msgs[i].len, want);
		if (got[2 * i] == want[0] && got[2 * i + 1] == want[1])
			continue;
		snprintf(why, sizeof why, "%s: %s message %zu of %zu (len %zu) differs",
			 siphash_many_impl(), variant, i, n, msgs[i].len);
		return -1;
	}
	if (got[2 * n] != UINT64_C(0xa5a5a5a5a5a5a5a5)) {
		snprintf(why, sizeof why, "%s: %s wrote past out[2n]", siphash_many_impl(), variant);
		return -1;
	}
	return 0;
}

/* Both variants over the batch: 0 if all agree with the scalar functions. */
static int same_as_scalar(const struct siphash_key *key, const struct line *msgs, size_t n)
{
	uint64_t *got = malloc((2 * n + 2) * sizeof *got);
	int rc;

	if (!got) {
		snprintf(why, sizeof why, "out of memory");
		return -1;
	}
	rc = compare_variant(key, msgs, n, 0, got);
	if (rc == 0)
		rc = compare_variant(key, msgs, n, 1, got);
	free(got);
	return rc;
}

/*
 * Runs body under every implementation the CPU has, then reselects the
 * best; 0 if body passed under all of them (why says which failed).
 */
static int for_each_impl(int (*body)(void))
{
	int rc = 0, tried = 0;

	for (size_t i = 0; i < sizeof impl_names / sizeof impl_names[0] && rc == 0; i++) {
		if (siphash_many_select(impl_names[i]) != 0)
			continue;
		tried++;
		rc = body();
	}
	siphash_many_select(NULL);
	if (rc == 0 && tried == 0) {
		snprintf(why, sizeof why, "no implementation could be selected");
		rc = -1;
	}
	return rc;
}

/* n messages with the given lengths, each in its own exact-size allocation. */
static struct line *alloc_batch(const size_t *lens, size_t n, uint64_t *rng)
{
	struct line *msgs = calloc(n ? n : 1, sizeof *msgs);

	for (size_t i = 0; msgs && i < n; i++) {
		unsigned char *p = lens[i] ? malloc(lens[i]) : NULL;

		if (lens[i] && !p)
			abort();
		if (rng)
			fill_random(p, lens[i], rng);
		for (size_t j = 0; !rng && j < lens[i]; j++)
			p[j] = (unsigned char)j;
		msgs[i].data = (const char *)p;
		msgs[i].len = lens[i];
	}
	return msgs;
}

static void free_batch(struct line *msgs, size_t n)
{
	for (size_t i = 0; msgs && i < n; i++)
		free((void *)(uintptr_t)msgs[i].data);
	free(msgs);
}

/* Lengths 0..300, the i-th message of length i, ending at its allocation's end. */
static int lengths_0_to_300(int random_bytes)
{
	size_t lens[301];
	uint64_t rng = 42;
	struct siphash_key key;
	struct line *msgs;
	int rc;

	test_key(&key);
	for (size_t i = 0; i < 301; i++)
		lens[i] = i;
	msgs = alloc_batch(lens, 301, random_bytes ? &rng : NULL);
	rc = msgs ? same_as_scalar(&key, msgs, 301) : -1;
	/* and each length alone, so no group hides a lane's mistake */
	for (size_t i = 0; rc == 0 && i < 301; i++)
		rc = same_as_scalar(&key, msgs + i, 1);
	free_batch(msgs, 301);
	return rc;
}

static int counting_bytes(void)
{
	return lengths_0_to_300(0);
}

static int random_bytes(void)
{
	return lengths_0_to_300(1);
}

static void test_lengths_0_to_300_counting_bytes(void)
{
	CHECKF(for_each_impl(counting_bytes) == 0, "%s", why);
}

static void test_lengths_0_to_300_random_bytes(void)
{
	CHECKF(for_each_impl(random_bytes) == 0, "%s", why);
}

/* n random messages of random lengths 0..130 (1 to 17 words). */
/* Messages of these lengths (NULL: out of memory, -1), hashed both ways: 0 when alike. */
static int same_for_lengths(const size_t *lens, size_t n, uint64_t *seed)
{
	struct siphash_key key;
	struct line *msgs;
	int rc = -1;

	test_key(&key);
	msgs = lens ? alloc_batch(lens, n, seed) : NULL;
	if (msgs)
		rc = same_as_scalar(&key, msgs, n);
	free_batch(msgs, n);
	return rc;
}

static int random_batch(size_t n, uint64_t seed)
{
	size_t *lens = malloc((n ? n : 1) * sizeof *lens);
	int rc;

	for (size_t i = 0; lens && i < n; i++)
		lens[i] = (size_t)(unit_splitmix64(&seed) % 131);
	rc = same_for_lengths(lens, n, &seed);
	free(lens);
	return rc;
}

static int batch_sizes(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 511, 512, 513, 4096 };
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof sizes / sizeof sizes[0]; i++)
		rc = random_batch(sizes[i], 1000 + i);
	return rc;
}

static void test_batch_sizes(void)
{
	CHECKF(for_each_impl(batch_sizes) == 0, "%s", why);
}

/*
 * One batch mixing everything: empty messages with NULL data, short ones,
 * lengths around the point where long messages go to the scalar path, and
 * a 100 KB message, spread so that they share groups with short ones.
 */
static int mixed_lengths(void)
{
	static const size_t special[] = { 0, 100000, 7, 8, 9, 0, 504, 511, 512, 513, 520, 1000,
					  0, 63, 64, 65, 100000, 1, 4095, 4096, 4097, 0, 23 };
	size_t nspecial = sizeof special / sizeof special[0], n = 3 * nspecial + 600;
	size_t *lens = malloc(n * sizeof *lens);
	uint64_t seed = 7;
	int rc;

	for (size_t i = 0; lens && i < n; i++)
		lens[i] = i % 4 == 1 ? special[(i / 4) % nspecial] : 20 + (size_t)(unit_splitmix64(&seed) % 81);
	rc = same_for_lengths(lens, n, &seed);
	free(lens);
	return rc;
}

static void test_mixed_lengths(void)
{
	CHECKF(for_each_impl(mixed_lengths) == 0, "%s", why);
}

/* Lengths 0..100 at every offset 0..15 from a 16-byte aligned buffer, in one batch. */
static int misaligned(void)
{
	enum { MAXLEN = 100, OFFSETS = 16 };
	static struct line msgs[(MAXLEN + 1) * OFFSETS];
	unsigned char *buf = malloc((MAXLEN + 1) * OFFSETS * (MAXLEN + OFFSETS) + 16);
	unsigned char *base = buf + (16 - (uintptr_t)buf % 16) % 16;
	uint64_t seed = 99;
	struct siphash_key key;
	size_t n = 0;
	int rc;

	if (!buf)
		return -1;
	test_key(&key);
	for (size_t len = 0; len <= MAXLEN; len++) {
		for (size_t off = 0; off < OFFSETS; off++, n++) {
			unsigned char *p = base + n * (MAXLEN + OFFSETS) + off;

			fill_random(p, len, &seed);
			msgs[n].data = (const char *)p;
			msgs[n].len = len;
		}
	}
	rc = same_as_scalar(&key, msgs, n);
	free(buf);
	return rc;
}

static void test_misaligned_data(void)
{
	CHECKF(for_each_impl(misaligned) == 0, "%s", why);
}

/*
 * Pages laid out guard, data, guard, data, ..., guard; message i of length
 * i starts at the start of its data page (even i) or ends at its end (odd
 * i). Any read outside a message touches a PROT_NONE page and faults, even
 * where ASan does not look (SIMD gathers).
 */
static int guard_pages(void)
{
	enum { N = 301 };
	static struct line msgs[N];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (2 * N + 1) * page;
	unsigned char *map = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t seed = 5;
	struct siphash_key key;
	int rc = -1;

	if (map == MAP_FAILED)
		return -1;
	test_key(&key);
	for (size_t i = 0; i < N; i++) {
		unsigned char *data = map + (2 * i + 1) * page;
		unsigned char *p = i % 2 ? data + page - i : data;

		if (mprotect(data, page, PROT_READ | PROT_WRITE) != 0)
			goto out;
		fill_random(p, i, &seed);
		msgs[i].data = (const char *)p;
		msgs[i].len = i;
	}
	rc = same_as_scalar(&key, msgs, N);
out:
	munmap(map, size);
	return rc;
}

static void test_guard_pages(void)
{
	CHECKF(for_each_impl(guard_pages) == 0, "%s", why);
}

/* Random keys over one batch of random messages. */
static int different_keys(void)
{
	enum { N = 200 };
	size_t lens[N];
	uint64_t seed = 31337;
	struct line *msgs;
	int rc = 0;

	for (size_t i = 0; i < N; i++)
		lens[i] = (size_t)(unit_splitmix64(&seed) % 150);
	msgs = alloc_batch(lens, N, &seed);
	if (!msgs)
		return -1;
	for (int k = 0; rc == 0 && k < 8; k++) {
		struct siphash_key key = { unit_splitmix64(&seed), unit_splitmix64(&seed) };

		rc = same_as_scalar(&key, msgs, N);
	}
	free_batch(msgs, N);
	return rc;
}

static void test_different_keys(void)
{
	CHECKF(for_each_impl(different_keys) == 0, "%s", why);
}

static void test_unknown_name_is_refused(void)
{
	const char *before = siphash_many_impl();

	CHECK(siphash_many_select("no-such-impl") == -1);
	CHECK(siphash_many_select("") == -1);
	CHECK(strcmp(siphash_many_impl(), before) == 0);
}

static void test_impl_names_the_selection(void)
{
	const char *best;

	CHECK(siphash_many_select(NULL) == 0);
	best = siphash_many_impl();
	CHECK(best != NULL);
	for (size_t i = 0; i < sizeof impl_names / sizeof impl_names[0]; i++) {
		if (siphash_many_select(impl_names[i]) != 0)
			continue;
		CHECKF(strcmp(siphash_many_impl(), impl_names[i]) == 0, "selected %s, got %s",
		       impl_names[i], siphash_many_impl());
	}
	CHECK(siphash_many_select(NULL) == 0);
	CHECK(strcmp(siphash_many_impl(), best) == 0);
}

static void test_portable_always_available(void)
{
	CHECK(siphash_many_select("portable") == 0);
	CHECK(strcmp(siphash_many_impl(), "portable") == 0);
	CHECK(siphash_many_select(NULL) == 0);
}

void suite_siphash_many(void)
{
	unit_run("siphash_many: every implementation equals the scalar hash for lengths 0..300 (bytes 00..len-1)",
		 test_lengths_0_to_300_counting_bytes);
	unit_run("siphash_many: every implementation equals the scalar hash for lengths 0..300 (random bytes)",
		 test_lengths_0_to_300_random_bytes);
	unit_run("siphash_many: batches of 0, 1, 7, 8, 9, ... 4096 messages hash like the scalar function",
		 test_batch_sizes);
	unit_run("siphash_many: empty NULL messages and 100 KB messages mixed with short ones",
		 test_mixed_lengths);
	unit_run("siphash_many: data at every alignment hashes like the scalar function", test_misaligned_data);
	unit_run("siphash_many: never reads outside a message (data between unmapped pages)", test_guard_pages);
	unit_run("siphash_many: equals the scalar hash under different keys", test_different_keys);
	unit_run("siphash_many: an unknown implementation name is refused with -1", test_unknown_name_is_refused);
	unit_run("siphash_many: siphash_many_impl names what was selected, NULL restores the best",
		 test_impl_names_the_selection);
	unit_run("siphash_many: the portable implementation is available on every CPU",
		 test_portable_always_available);
}
