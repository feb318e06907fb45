/* SPDX-License-Identifier: MIT */
/*
 * test_sketch.c - sketch files: what bfcount -o saves, bfcount -s and
 * bfmerge combine and bfinfo describes. Round trips in both phases (exact
 * hashes, registers) and every precision's extremes; merged shards saved
 * byte for byte as the whole; counted on several threads into partials
 * and merged, the sketch counted in order, in every phase and across the
 * switch between them; the estimate on a million keys within 3
 * standard errors; keys kept outside; every field of a crafted header out
 * of range, every truncation, trailing bytes, and filters and sketches
 * told apart by their magic.
 *
 * Keys are the decimal lines "0", "1", ... hashed as bfcount hashes them
 * (SipHash-1-3-128 under bfcount's default key, h1), so the counts here
 * are the counts bfcount prints for seq. Everything is fixed: every run
 * sees the same hashes.
 */
#define ZLIB_CONST
#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "hll.h"
#include "sketch.h"
#include "sketch_file.h"
#include "unit.h"

#define P16_STDERR (1.04 / 256.0)

/* ---- helpers ---------------------------------------------------------- */

/* A scratch file already unlinked: its descriptor, or -1. */
static int scratch_fd(void)
{
	const char *base = getenv("TMPDIR");
	char path[512];
	int fd;

	snprintf(path, sizeof path, "%s/bftools-sketch-XXXXXX", base && *base ? base : "/tmp");
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* All of fd from the start, in a new buffer of *len bytes. */
static unsigned char *read_back(int fd, size_t *len)
{
	struct stat st;
	unsigned char *buf;

	if (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL || read(fd, buf, (size_t)st.st_size) != (ssize_t)st.st_size) {
		free(buf);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return buf;
}

/* The bytes sketch_save writes for s, or NULL. */
static unsigned char *saved(const struct sketch *s, size_t *len)
{
	const char *why;
	int fd = scratch_fd();
	unsigned char *bytes = NULL;

	if (fd >= 0 && sketch_save(s, fd, &why) == 0)
		bytes = read_back(fd, len);
	if (fd >= 0)
		close(fd);
	return bytes;
}

/* A file of these bytes, positioned at its start: its descriptor, or -1. */
static int file_of(const unsigned char *bytes, size_t len)
{
	int fd = scratch_fd();

	if (fd >= 0 && (write(fd, bytes, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct sketch *load_bytes(const unsigned char *bytes, size_t len, const char **why)
{
	int fd = file_of(bytes, len);
	struct sketch *s;

	*why = "test: no scratch file";
	if (fd < 0)
		return NULL;
	s = sketch_load(fd, why);
	close(fd);
	return s;
}

/* Why these bytes do not load as a sketch; NULL if they do. */
static const char *load_error(const unsigned char *bytes, size_t len)
{
	const char *why = NULL;
	struct sketch *s = load_bytes(bytes, len, &why);

	if (s == NULL)
		return why;
	sketch_free(s);
	return NULL;
}

/* gzip data into a new buffer, as gzip(1) would (no header CRC). */
static unsigned char *gzip_bytes(const unsigned char *data, size_t len, size_t *outlen)
{
	z_stream zs;
	unsigned char *out;
	size_t cap;

	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&zs, len) + 16;
	out = malloc(cap);
	zs.next_in = data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (out == NULL || deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return NULL;
	}
	*outlen = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* Why this content, gzipped, does not load as a sketch; NULL if it does. */
static const char *content_error(const unsigned char *content, size_t len)
{
	size_t glen;
	unsigned char *gz = gzip_bytes(content, len, &glen);
	const char *why;

	if (gz == NULL)
		return "test: gzip failed";
	why = load_error(gz, glen);
	free(gz);
	return why;
}

/* Count the lines "from" .. "to - 1" as bfcount counts them. */
static void add_lines(struct sketch *s, uint64_t from, uint64_t to)
{
	enum { BATCH = 256 };
	char text[BATCH][24];
	struct line keys[BATCH];
	uint64_t hashes[BATCH];

	while (from < to) {
		size_t n = 0;

		for (; n < BATCH && from < to; n++, from++) {
			keys[n].data = text[n];
			keys[n].len = (size_t)snprintf(text[n], sizeof text[n], "%llu",
						       (unsigned long long)from);
		}
		sketch_hash(s, keys, n, hashes);
		sketch_add_hashed(s, hashes, n);
	}
}

static struct sketch *new_default(unsigned precision)
{
	const char *why;

	return sketch_new(precision, FILTER_SIPHASH_1_3, 0, sketch_default_key, &why);
}

/* Whether a and b hold the same counter (registers, phase) and header fields. */
static int same_sketch(const struct sketch *a, const struct sketch *b)
{
	static uint8_t ra[1u << HLL_PRECISION_MAX], rb[1u << HLL_PRECISION_MAX];
	size_t m = (size_t)1 << sketch_precision(a);

	if (sketch_precision(a) != sketch_precision(b))
		return 0;
	hll_registers(a->hll, ra);
	hll_registers(b->hll, rb);
	return memcmp(ra, rb, m) == 0 && a->hash == b->hash && a->flags == b->flags
	       && a->fingerprint == b->fingerprint && a->insertions == b->insertions
	       && sketch_is_exact(a) == sketch_is_exact(b)
	       && sketch_estimate(a) == sketch_estimate(b);
}

/* ---- the sketch ------------------------------------------------------- */

/* bfcount counted with SipHash-1-3 under "bfcount-hll-key1", taking h1; it still does. */
static void hashes_keys_as_bfcount_always_has(void)
{
	struct siphash_key key;
	struct line abc = { "abc", 3 };
	struct sketch *s = new_default(HLL_PRECISION_DEFAULT);
	uint64_t want[2], got;

	CHECK(s != NULL);
	CHECK(memcmp(sketch_default_key, "bfcount-hll-key1", 16) == 0);
	siphash_key_from_bytes(&key, (const unsigned char *)"bfcount-hll-key1");
	siphash_1_3_128(&key, "abc", 3, want);
	sketch_hash(s, &abc, 1, &got);
	CHECK(got == want[0]);
	add_lines(s, 0, 1000);
	add_lines(s, 0, 1000);
	CHECK(sketch_is_exact(s) && sketch_estimate(s) == 1000.0 && s->insertions == 2000);
	sketch_free(s);
}

/*
 * A batch is hashed many keys at a time (siphash_many.c): every key of
 * 700 (more than one group), of lengths 0 to 99, gets the h1 the scalar
 * SipHash gives it, under either hash function.
 */
static void hashes_a_batch_as_one_key_at_a_time(void)
{
	static char text[700][100];
	static struct line keys[700];
	static uint64_t got[700];
	static const enum filter_hash hashes[] = { FILTER_SIPHASH_1_3, FILTER_SIPHASH_2_4 };
	uint64_t state = 17;

	for (size_t i = 0; i < 700; i++) {
		keys[i].data = text[i];
		keys[i].len = i % 100;
		for (size_t b = 0; b < keys[i].len; b++)
			text[i][b] = (char)unit_splitmix64(&state);
	}
	for (size_t h = 0; h < 2; h++) {
		const char *why;
		struct sketch *s = sketch_new(16, hashes[h], 0, sketch_default_key, &why);

		CHECK(s != NULL);
		sketch_hash(s, keys, 700, got);
		for (size_t i = 0; i < 700; i++) {
			uint64_t want[2];

			if (hashes[h] == FILTER_SIPHASH_2_4)
				siphash_2_4_128(&s->sipkey, keys[i].data, keys[i].len, want);
			else
				siphash_1_3_128(&s->sipkey, keys[i].data, keys[i].len, want);
			CHECKF(got[i] == want[0], "hash %zu, key %zu", h, i);
		}
		sketch_free(s);
	}
}

/*
 * 10^6 distinct lines at precision 16: the relative standard error is
 * 1.04 / sqrt(2^16) = 0.406%, so 3 standard errors are 1.22% (12188
 * keys). A fixed input, so the outcome is the same every run; the bound
 * would hold for all but 0.3% of inputs.
 */
static void counts_a_million_lines_within_three_standard_errors(void)
{
	struct sketch *s = new_default(HLL_PRECISION_DEFAULT);
	unsigned char *bytes;
	size_t len = 0;
	double err;

	CHECK(s != NULL);
	add_lines(s, 0, 1000000);
	err = (sketch_estimate(s) - 1e6) / 1e6;
	bytes = saved(s, &len);
	free(bytes);
	printf("# 1e6 lines: estimate %.0f, error %+.3f%% (3 standard errors: %.3f%%), saved in %zu bytes\n",
	       sketch_estimate(s), 100 * err, 300 * P16_STDERR, len);
	CHECK(sketch_relative_error(s) == P16_STDERR);
	sketch_free(s);
	CHECKF(fabs(err) <= 3 * P16_STDERR, "error %.3f%%", 100 * err);
}

static void refuses_bad_precision_hash_and_flags(void)
{
	const char *why = NULL;

	CHECK(sketch_new(3, FILTER_SIPHASH_1_3, 0, sketch_default_key, &why) == NULL && why);
	CHECK(sketch_new(19, FILTER_SIPHASH_1_3, 0, sketch_default_key, &why) == NULL);
	CHECK(strcmp(why, "precision out of range 4..18") == 0);
	CHECK(sketch_new(16, FILTER_FNV1, 0, sketch_default_key, &why) == NULL);
	CHECK(strcmp(why, "unknown hash function") == 0);
	CHECK(sketch_new(16, FILTER_SIPHASH_1_3, 4, sketch_default_key, &why) == NULL);
	CHECK(strcmp(why, "unknown key flags") == 0);
	sketch_free(NULL);
}

/*
 * Counted in 7 overlapping shards (a week of days) and merged, or counted
 * whole: the same counter, insertions included, so the same bytes when
 * saved. Below 8192 distinct keys both are exact; above, both estimate.
 */
static int week_equals_whole(uint64_t per_day, uint64_t overlap, int exact)
{
	struct sketch *week = new_default(HLL_PRECISION_DEFAULT), *whole = new_default(HLL_PRECISION_DEFAULT);
	unsigned char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	const char *why;
	int same = week && whole;

	for (uint64_t day = 0; same && day < 7; day++) {
		struct sketch *one = new_default(HLL_PRECISION_DEFAULT);
		uint64_t from = day * per_day, to = from + per_day + overlap;

		same = one != NULL;
		if (same) {
			add_lines(one, from, to);
			add_lines(whole, from, to);
			same = sketch_merge(week, one, &why) == 0;
		}
		sketch_free(one);
	}
	if (same) {
		a = saved(week, &alen);
		b = saved(whole, &blen);
		same = a && b && same_sketch(week, whole) && alen == blen && memcmp(a, b, alen) == 0
		       && sketch_is_exact(week) == exact;
	}
	free(a);
	free(b);
	sketch_free(week);
	sketch_free(whole);
	return same;
}

static void a_merged_week_saves_as_the_whole_week_byte_for_byte(void)
{
	CHECK(week_equals_whole(500, 100, 1));	/* 3600 keys: exact all along */
	CHECK(week_equals_whole(1500, 300, 0));	/* days of 1800 exact, the week of 10800 not */
	CHECK(week_equals_whole(30000, 5000, 0));	/* estimating all along */
}

static void merging_refuses_sketches_that_differ_and_names_the_field(void)
{
	static const unsigned char other_key[16] = { 1 };
	const char *why;
	struct sketch *base = new_default(16);
	struct sketch *p12 = new_default(12);
	struct sketch *s24 = sketch_new(16, FILTER_SIPHASH_2_4, 0, sketch_default_key, &why);
	struct sketch *key = sketch_new(16, FILTER_SIPHASH_1_3, 0, other_key, &why);
	struct sketch *fold = sketch_new(16, FILTER_SIPHASH_1_3, FILTER_FOLD_CASE, sketch_default_key, &why);

	CHECK(base && p12 && s24 && key && fold);
	add_lines(base, 0, 100);
	CHECK(sketch_merge(base, p12, &why) < 0 && strcmp(why, "different precision") == 0);
	CHECK(sketch_merge(base, s24, &why) < 0 && strcmp(why, "different hash function") == 0);
	CHECK(sketch_merge(base, key, &why) < 0 && strcmp(why, "different key") == 0);
	CHECK(sketch_merge(base, fold, &why) < 0 && strcmp(why, "different normalisation") == 0);
	CHECK(sketch_estimate(base) == 100.0 && base->insertions == 100);
	fold->insertions = UINT64_MAX;
	fold->flags = 0;
	CHECK(sketch_merge(base, fold, &why) < 0 && strcmp(why, "insertion counts overflow") == 0);
	sketch_free(base);
	sketch_free(p12);
	sketch_free(s24);
	sketch_free(key);
	sketch_free(fold);
}

/* ---- files -------------------------------------------------------------- */

/* Save s, load it back: the same sketch, and it saves to the same bytes again. */
static int round_trips(const struct sketch *s)
{
	size_t len, len2;
	unsigned char *bytes = saved(s, &len), *again = NULL;
	const char *why;
	struct sketch *copy = bytes ? load_bytes(bytes, len, &why) : NULL;
	int ok = copy != NULL && same_sketch(s, copy);

	if (ok)
		again = saved(copy, &len2);
	ok = ok && again && len2 == len && memcmp(bytes, again, len) == 0;
	free(bytes);
	free(again);
	sketch_free(copy);
	return ok;
}

static void round_trips_empty_exact_and_estimating_at_every_size(void)
{
	static const unsigned precisions[] = { 4, 10, 16, 18 };

	for (size_t i = 0; i < sizeof precisions / sizeof precisions[0]; i++) {
		unsigned p = precisions[i];
		struct sketch *s = new_default(p);

		CHECK(s != NULL);
		CHECKF(round_trips(s), "p=%u, empty", p);
		add_lines(s, 0, hll_exact_max(p));
		CHECKF(sketch_is_exact(s) && round_trips(s), "p=%u, exact at its fullest", p);
		add_lines(s, 0, 3 * ((uint64_t)1 << p));
		CHECKF(!sketch_is_exact(s) && round_trips(s), "p=%u, estimating", p);
		sketch_free(s);
	}
}

static void round_trips_siphash24_folded_case_and_a_key_kept_outside(void)
{
	static const unsigned char key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	const char *why;
	struct sketch *s24 = sketch_new(12, FILTER_SIPHASH_2_4, FILTER_FOLD_CASE, key, &why);
	struct sketch *ext = sketch_new(16, FILTER_SIPHASH_1_3, FILTER_KEY_EXTERNAL, key, &why);

	CHECK(s24 && ext);
	add_lines(s24, 0, 5000);
	add_lines(ext, 0, 300);
	CHECK(round_trips(s24));
	CHECK(round_trips(ext));
	sketch_free(s24);
	sketch_free(ext);
}

/* A key kept outside: only its fingerprint is written; the loaded sketch needs it to hash. */
static void a_key_kept_outside_is_never_written(void)
{
	static const unsigned char key[16] = { 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xa5 };
	static const unsigned char wrong[16] = { 9 }, zero[16] = { 0 };
	const char *why = NULL;
	struct sketch *s = sketch_new(16, FILTER_SIPHASH_1_3, FILTER_KEY_EXTERNAL, key, &why), *copy;
	struct sketch *stored = sketch_new(16, FILTER_SIPHASH_1_3, 0, key, &why);
	unsigned char *bytes;
	size_t len;

	CHECK(s && stored);
	add_lines(s, 0, 10);
	bytes = saved(s, &len);
	CHECK(bytes != NULL);
	copy = load_bytes(bytes, len, &why);
	free(bytes);
	CHECK(copy != NULL && copy->needs_key && copy->fingerprint == filter_key_fingerprint(key));
	CHECK(memcmp(copy->key, zero, 16) == 0);
	CHECK(sketch_supply_key(copy, wrong, &why) < 0
	      && strcmp(why, "the key is not this sketch's key") == 0 && copy->needs_key);
	CHECK(sketch_merge(stored, copy, &why) == 0 && sketch_estimate(stored) == 10.0);
	CHECK(sketch_supply_key(copy, key, &why) == 0 && !copy->needs_key);
	add_lines(copy, 5, 15);
	CHECK(sketch_estimate(copy) == 15.0);
	sketch_free(copy);
	sketch_free(s);
	sketch_free(stored);
}

static void saving_to_a_path_replaces_the_file_atomically(void)
{
	const char *base = getenv("TMPDIR"), *why = NULL;
	char dir[512], path[600], missing[640];
	struct sketch *s = new_default(16), *back;

	snprintf(dir, sizeof dir, "%s/bftools-sketch-XXXXXX", base && *base ? base : "/tmp");
	CHECK(s != NULL && mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/day.hll", dir);
	snprintf(missing, sizeof missing, "%s/no/such/day.hll", dir);
	add_lines(s, 0, 20);
	CHECK(sketch_save_path(s, path, &why) == 0);
	add_lines(s, 0, 40);
	CHECK(sketch_save_path(s, path, &why) == 0);
	CHECK(sketch_save_path(s, missing, &why) < 0 && why != NULL);
	back = sketch_load_path(path, &why);
	CHECK(back != NULL && same_sketch(s, back));
	sketch_free(back);
	sketch_free(s);
	CHECK(unlink(path) == 0 && rmdir(dir) == 0);	/* no temporary file left behind */
}

/* ---- damage ------------------------------------------------------------- */

/*
 * A valid content by hand: precision 8, exact, three hashes 5 < 7 < 9
 * (n ≤ 256 / 8 = 32), the default key; or, registers, 256 bytes of 1.
 */
#define CRAFT_EXACT_LEN (64 + 3 * 8)
#define CRAFT_REGISTERS_LEN (64 + 256)

static void put_le(unsigned char *p, uint64_t v, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static size_t craft(unsigned char *c, int registers)
{
	static const unsigned char magic[8] = { 0x89, 'B', 'F', 'S', '\r', '\n', 0x1a, '\n' };

	memset(c, 0, CRAFT_REGISTERS_LEN);
	memcpy(c, magic, 8);
	put_le(c + 8, 1, 4);
	put_le(c + 12, 64, 4);
	c[16] = 1;
	c[17] = 8;
	c[18] = 2;
	memcpy(c + 24, sketch_default_key, 16);
	put_le(c + 40, 12, 8);
	if (registers) {
		c[20] = 1;
		put_le(c + 48, 256, 8);
		put_le(c + 56, 256, 8);
		memset(c + 64, 1, 256);
		return CRAFT_REGISTERS_LEN;
	}
	put_le(c + 48, 3, 8);
	put_le(c + 56, 24, 8);
	put_le(c + 64, 5, 8);
	put_le(c + 72, 7, 8);
	put_le(c + 80, 9, 8);
	return CRAFT_EXACT_LEN;
}

/* The crafted content with width bytes at off set to value: why it does not load. */
static const char *crafted_error(int registers, unsigned off, unsigned width, uint64_t value)
{
	unsigned char c[CRAFT_REGISTERS_LEN];
	size_t len = craft(c, registers);

	put_le(c + off, value, width);
	return content_error(c, len);
}

static void crafted_content_loads_as_written(void)
{
	unsigned char c[CRAFT_REGISTERS_LEN];
	size_t len = craft(c, 0), glen;
	unsigned char *gz = gzip_bytes(c, len, &glen);
	const char *why = NULL;
	struct sketch *s = gz ? load_bytes(gz, glen, &why) : NULL;

	free(gz);
	CHECKF(s != NULL, "%s", why);
	CHECK(sketch_precision(s) == 8 && sketch_is_exact(s) && sketch_estimate(s) == 3.0);
	CHECK(s->insertions == 12 && s->hash == FILTER_SIPHASH_1_3 && !s->needs_key);
	sketch_free(s);
	CHECKF(content_error(c, craft(c, 1)) == NULL, "registers: %s", content_error(c, craft(c, 1)));
}

struct field_case {
	int registers;
	unsigned off, width;
	uint64_t value;
	const char *want;
};

static void rejects_each_header_field_out_of_range(void)
{
	static const struct field_case cases[] = {
		{ 0, 0, 1, 0x88, "not a bftools sketch (bad magic)" },
		{ 0, 7, 1, '\r', "not a bftools sketch (bad magic)" },
		{ 0, 3, 1, 'T', "a bftools filter, not a sketch" },
		{ 0, 8, 4, 2, "unsupported sketch format version 2" },
		{ 0, 8, 4, 0, "unsupported sketch format version 0" },
		{ 0, 12, 4, 65, "bad header: header length is not 64" },
		{ 0, 16, 1, 2, "bad header: unknown sketch kind" },
		{ 0, 17, 1, 3, "bad header: precision out of range 4..18" },
		{ 0, 17, 1, 19, "bad header: precision out of range 4..18" },
		{ 0, 18, 1, 3, "bad header: unknown hash function" },
		{ 0, 19, 1, 4, "bad header: unknown key flags" },
		{ 0, 20, 1, 2, "bad header: unknown phase" },
		{ 0, 21, 1, 1, "bad header: reserved field not zero" },
		{ 0, 23, 1, 0x80, "bad header: reserved field not zero" },
		{ 0, 48, 8, 33, "bad header: more exact hashes than 2^precision / 8" },
		{ 0, 48, 8, UINT64_MAX, "bad header: more exact hashes than 2^precision / 8" },
		{ 0, 56, 8, 23, "bad header: payload length is not 8 per exact hash" },
		{ 0, 56, 8, UINT64_MAX, "bad header: payload length is not 8 per exact hash" },
		{ 0, 72, 8, 5, "bad payload: exact hashes not in ascending order" },
		{ 0, 72, 8, 4, "bad payload: exact hashes not in ascending order" },
		{ 1, 48, 8, 255, "bad header: register count is not 2^precision" },
		{ 1, 56, 8, 512, "bad header: payload length is not the register count" },
		{ 1, 64 + 200, 1, 58, "bad payload: register above 65 - precision" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct field_case *f = &cases[i];
		const char *why = crafted_error(f->registers, f->off, f->width, f->value);

		CHECKF(why != NULL && strcmp(why, f->want) == 0, "case %zu: got '%s', want '%s'", i,
		       why ? why : "(loaded)", f->want);
	}
	CHECK(crafted_error(1, 64 + 200, 1, 57) == NULL);	/* 65 - 8: the top a register holds */
	CHECK(crafted_error(0, 40, 8, UINT64_MAX) == NULL);	/* insertions are any count */
}

/* With flag bit 1 the key field is a fingerprint then 8 zero bytes. */
static void rejects_an_outside_key_that_is_not_a_bare_fingerprint(void)
{
	unsigned char c[CRAFT_REGISTERS_LEN];
	size_t len = craft(c, 0);
	const char *why;

	c[19] = FILTER_KEY_EXTERNAL;
	why = content_error(c, len);
	CHECKF(why && strcmp(why, "bad header: key field of an external key not a bare fingerprint") == 0,
	       "%s", why);
	memset(c + 32, 0, 8);
	CHECK(content_error(c, len) == NULL);
}

static void rejects_content_longer_or_shorter_than_its_header(void)
{
	unsigned char c[CRAFT_REGISTERS_LEN + 1];
	size_t len = craft(c, 0);
	const char *why;

	c[len] = 0;
	why = content_error(c, len + 1);
	CHECKF(why && strcmp(why, "trailing data inside the sketch") == 0, "%s", why);
	why = content_error(c, len - 1);
	CHECKF(why && strcmp(why, "truncated") == 0, "%s", why);
	why = content_error(c, 30);
	CHECKF(why && strcmp(why, "truncated") == 0, "%s", why);
	why = content_error(c, 5);
	CHECKF(why && strcmp(why, "not a bftools sketch (bad magic)") == 0, "%s", why);
}

/* Every prefix of a saved file is refused: empty, truncated, or damaged. */
static void rejects_every_truncation_and_trailing_bytes(void)
{
	struct sketch *s = new_default(10);
	unsigned char *bytes;
	size_t len;
	const char *why;

	CHECK(s != NULL);
	add_lines(s, 0, 2000);
	bytes = saved(s, &len);
	sketch_free(s);
	CHECK(bytes != NULL && load_error(bytes, len) == NULL);
	for (size_t cut = 0; cut < len; cut++) {
		why = load_error(bytes, cut);
		CHECKF(why != NULL, "cut at %zu loads", cut);
		CHECKF(strcmp(why, cut == 0 ? "empty file" : "truncated") == 0
		       || strncmp(why, "corrupt: ", 9) == 0, "cut at %zu: %s", cut, why);
	}
	bytes = realloc(bytes, len + 1);
	CHECK(bytes != NULL);
	bytes[len] = '\n';
	why = load_error(bytes, len + 1);
	free(bytes);
	CHECKF(why && strcmp(why, "trailing data after the sketch") == 0, "%s", why);
}

static void rejects_plain_content_and_text(void)
{
	unsigned char c[CRAFT_REGISTERS_LEN];
	size_t len = craft(c, 0);
	const char *why = load_error(c, len);

	CHECKF(why && strcmp(why, "not a bftools sketch (not gzip data)") == 0, "%s", why);
	why = load_error((const unsigned char *)"hello\n", 6);
	CHECKF(why && strcmp(why, "not a bftools sketch (not gzip data)") == 0, "%s", why);
}

/* ---- filters and sketches told apart ------------------------------------ */

static struct cascade *small_filter(void)
{
	struct filter_params p = { 0 };
	const char *why;

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 3;
	p.m = 512;
	p.capacity = 10;
	p.target_p = 0.1;
	return cascade_new_fixed(&p, &why);
}

/* A saved filter: refused as a sketch, loaded by format_load_any as a filter. */
static void a_filter_is_not_a_sketch(void)
{
	struct cascade *c = small_filter(), *filter = NULL;
	struct sketch *sketch = NULL;
	const char *why = NULL;
	int fd = scratch_fd();

	CHECK(c != NULL && fd >= 0 && format_save(c, fd, &why) == 0);
	cascade_free(c);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(sketch_load(fd, &why) == NULL && why == sketch_err_filter);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(format_load_any(fd, &filter, NULL, &sketch, &why) == 0 && filter != NULL && sketch == NULL);
	cascade_free(filter);
	close(fd);
}

/* A saved sketch: refused by the filter readers, loaded by format_load_any, through a pipe too. */
static void a_sketch_is_not_a_filter(void)
{
	struct sketch *s = new_default(16), *sketch = NULL;
	struct cascade *shape = NULL, *filter = NULL;
	unsigned char *bytes;
	const char *why = NULL;
	size_t len;
	int fd, pipefd[2];

	CHECK(s != NULL);
	add_lines(s, 0, 50000);
	bytes = saved(s, &len);
	CHECK(bytes != NULL && (fd = file_of(bytes, len)) >= 0);
	CHECK(format_load(fd, &why) == NULL && why == format_err_sketch);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(format_open(fd, &shape, &why) == NULL && shape == NULL && why == format_err_sketch);
	close(fd);
	CHECK(pipe(pipefd) == 0);
	CHECK(len < 65536 && write(pipefd[1], bytes, len) == (ssize_t)len);	/* a pipe holds 64 KiB */
	close(pipefd[1]);
	free(bytes);
	CHECK(format_load_any(pipefd[0], &filter, NULL, &sketch, &why) == 0 && filter == NULL);
	close(pipefd[0]);
	CHECK(sketch != NULL && same_sketch(s, sketch));
	sketch_free(sketch);
	sketch_free(s);
}

/* ---- counting on several threads (sketch_shards) ------------------------ */

/* The lines "from" .. "to - 1" hashed for s, rounds times over: a new array. */
static uint64_t *hashed_lines(const struct sketch *s, uint64_t from, uint64_t to, unsigned rounds,
			      size_t *n)
{
	size_t distinct = (size_t)(to - from);
	uint64_t *hashes = malloc(distinct * rounds * sizeof *hashes + 1);
	char text[24];

	*n = distinct * rounds;
	for (size_t i = 0; hashes != NULL && i < distinct; i++) {
		struct line key = { text, 0 };

		key.len = (size_t)snprintf(text, sizeof text, "%llu", (unsigned long long)(from + i));
		sketch_hash(s, &key, 1, &hashes[i]);
		for (unsigned r = 1; r < rounds; r++)
			hashes[r * distinct + i] = hashes[i];
	}
	return hashes;
}

/* One thread's share of the hashes: every threads-th run of RUN, from its own. */
struct share {
	struct sketch_shards *shards;
	const uint64_t *hashes;
	size_t n;
	unsigned thread, threads;
};

#define RUN 97	/* odd-sized runs, so no thread's keys line up with another's */

static void *add_share(void *arg)
{
	const struct share *sh = arg;

	for (size_t at = (size_t)sh->thread * RUN; at < sh->n; at += (size_t)sh->threads * RUN)
		sketch_shards_add(sh->shards, sh->hashes + at, sh->n - at < RUN ? sh->n - at : RUN);
	return NULL;
}

/* hashes added to s by threads threads into shards partials, then merged; 0, or -1. */
static int add_on_threads(struct sketch *s, const uint64_t *hashes, size_t n, unsigned threads,
			  unsigned shards, double *estimate)
{
	const char *why;
	struct sketch_shards *sh = sketch_shards_new(s, shards, &why);
	pthread_t tid[8];
	struct share share[8];
	unsigned started = 0;

	if (sh == NULL || threads > 8)
		return -1;
	for (; started < threads; started++) {
		share[started] = (struct share){ sh, hashes, n, started, threads };
		if (pthread_create(&tid[started], NULL, add_share, &share[started]) != 0)
			break;
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	*estimate = sketch_shards_estimate(sh);
	sketch_shards_merge(sh);
	sketch_shards_free(sh);
	return started == threads ? 0 : -1;
}

/* What a test case starts from: a new sketch, or one holding lines base_from .. base_to. */
static struct sketch *starting_sketch(unsigned precision, uint64_t base_from, uint64_t base_to)
{
	struct sketch *s = new_default(precision);

	if (s != NULL)
		add_lines(s, base_from, base_to);
	return s;
}

/*
 * The lines 0 .. distinct - 1, three times over, counted on threads
 * threads into shards partials and merged, against the same counted in
 * order: the same sketch, saved as the same bytes, and the partials'
 * running estimate the final one. *exact: whether the result is exact.
 */
static int threads_equal_order(unsigned precision, uint64_t base_from, uint64_t base_to,
			       uint64_t distinct, unsigned threads, unsigned shards, int *exact)
{
	struct sketch *order = starting_sketch(precision, base_from, base_to);
	struct sketch *parts = starting_sketch(precision, base_from, base_to);
	uint64_t *hashes = NULL;
	unsigned char *a = NULL, *b = NULL;
	size_t n = 0, alen = 0, blen = 0;
	double running = 0.0;
	int same = order && parts && (hashes = hashed_lines(order, 0, distinct, 3, &n)) != NULL;

	if (same) {
		sketch_add_hashed(order, hashes, n);
		same = add_on_threads(parts, hashes, n, threads, shards, &running) == 0;
	}
	if (same) {
		a = saved(order, &alen);
		b = saved(parts, &blen);
		same = a && b && alen == blen && memcmp(a, b, alen) == 0 && same_sketch(order, parts)
		       && running == sketch_estimate(order);
		*exact = sketch_is_exact(order);
	}
	free(a);
	free(b);
	free(hashes);
	sketch_free(order);
	sketch_free(parts);
	return same;
}

/*
 * At precision 16 the exact phase holds 8192 hashes: partials and their
 * union on either side of it, and exactly at it; a sketch that already
 * holds keys, exact or estimating (bfcount -s --add); more threads than
 * partials (some wait); the smallest and largest precisions.
 */
static void counted_on_threads_is_the_sketch_counted_in_order(void)
{
	static const struct {
		unsigned precision;
		uint64_t base_from, base_to, distinct;
		unsigned threads, shards;
		int exact;
	} cases[] = {
		{ 16, 0, 0, 3000, 4, 4, 1 },			/* exact all along */
		{ 16, 0, 0, 8192, 4, 4, 1 },			/* exact at the limit */
		{ 16, 0, 0, 8193, 4, 4, 0 },			/* one past: the merge switches */
		{ 16, 0, 0, 60000, 3, 2, 0 },			/* estimating, threads share partials */
		{ 16, 100000, 105000, 3000, 3, 3, 1 },		/* an exact sketch stays exact */
		{ 16, 100000, 105000, 4000, 3, 3, 0 },		/* an exact sketch switches */
		{ 16, 200000, 260000, 3000, 2, 2, 0 },		/* exact partials into registers */
		{ 16, 200000, 260000, 90000, 8, 8, 0 },		/* registers into registers */
		{ 4, 0, 0, 2, 3, 3, 1 },			/* precision 4 holds 2 hashes */
		{ 4, 0, 0, 3, 3, 3, 0 },
		{ 18, 0, 0, 30000, 4, 4, 1 },			/* precision 18 holds 32768 */
		{ 18, 0, 0, 40000, 4, 4, 0 },
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int exact = -1;

		CHECKF(threads_equal_order(cases[c].precision, cases[c].base_from, cases[c].base_to,
					   cases[c].distinct, cases[c].threads, cases[c].shards, &exact),
		       "case %zu", c);
		CHECKF(exact == cases[c].exact, "case %zu: exact %d", c, exact);
	}
}

/* A loaded sketch near the top of insertions saturates alike, counted either way. */
static void partial_insertions_saturate_as_in_order(void)
{
	struct sketch *order = new_default(12), *parts = new_default(12);
	uint64_t *hashes = NULL;
	size_t n = 0;
	double running;

	CHECK(order && parts && (hashes = hashed_lines(order, 0, 100, 2, &n)) != NULL);
	order->insertions = parts->insertions = UINT64_MAX - 150;
	sketch_add_hashed(order, hashes, n);
	CHECK(add_on_threads(parts, hashes, n, 2, 2, &running) == 0);
	CHECK(order->insertions == UINT64_MAX && parts->insertions == UINT64_MAX);
	CHECK(same_sketch(order, parts));
	free(hashes);
	sketch_free(order);
	sketch_free(parts);
}

/* Any number of partials asked for works: 0 is one, past SKETCH_SHARDS_MAX is that many. */
static void partials_are_clamped_to_one_through_the_most(void)
{
	static const unsigned asked[] = { 0, 1, SKETCH_SHARDS_MAX, SKETCH_SHARDS_MAX + 1, 1000 };

	for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
		struct sketch *s = new_default(10);
		const char *why;
		struct sketch_shards *sh = s ? sketch_shards_new(s, asked[i], &why) : NULL;
		uint64_t hashes[3] = { 1, 2, 3 };

		CHECKF(sh != NULL, "%u partials", asked[i]);
		sketch_shards_add(sh, hashes, 3);
		CHECK(sketch_shards_estimate(sh) == 3.0 && sketch_estimate(s) == 0.0);
		sketch_shards_merge(sh);
		sketch_shards_free(sh);
		CHECK(sketch_estimate(s) == 3.0 && s->insertions == 3);
		sketch_free(s);
	}
}

/* sketch_detect wants more bytes until the magic shows, then says yes or no. */
static void detects_a_sketch_by_its_first_bytes(void)
{
	struct sketch *s = new_default(4);
	struct cascade *c = small_filter();
	unsigned char *bytes;
	size_t len, cut;
	int fd = scratch_fd();
	const char *why;

	CHECK(s && c && fd >= 0 && (bytes = saved(s, &len)) != NULL);
	CHECK(sketch_detect(bytes, 0) == -1 && sketch_detect(bytes, 1) == -1);
	for (cut = 2; cut < len && sketch_detect(bytes, cut) == -1; cut++)
		;
	CHECKF(cut < 40 && sketch_detect(bytes, cut) == 1, "decided at %zu of %zu bytes", cut, len);
	CHECK(sketch_detect(bytes, len) == 1);
	free(bytes);
	CHECK(format_save(c, fd, &why) == 0 && (bytes = read_back(fd, &len)) != NULL);
	CHECK(sketch_detect(bytes, len) == 0);
	CHECK(sketch_detect((const unsigned char *)"hello", 5) == 0);
	free(bytes);
	close(fd);
	cascade_free(c);
	sketch_free(s);
}

void suite_sketch(void)
{
	unit_run("sketch: hashes keys as bfcount always has (SipHash-1-3, its key, h1)",
		 hashes_keys_as_bfcount_always_has);
	unit_run("sketch: hashes a batch as it hashes one key at a time",
		 hashes_a_batch_as_one_key_at_a_time);
	unit_run("sketch: counts 1e6 lines within 3 standard errors",
		 counts_a_million_lines_within_three_standard_errors);
	unit_run("sketch: refuses a bad precision, hash or flags", refuses_bad_precision_hash_and_flags);
	unit_run("sketch: a merged week saves as the whole week, byte for byte",
		 a_merged_week_saves_as_the_whole_week_byte_for_byte);
	unit_run("sketch: counted on threads into partials is the sketch counted in order, in every phase",
		 counted_on_threads_is_the_sketch_counted_in_order);
	unit_run("sketch: partials' insertions saturate as in order",
		 partial_insertions_saturate_as_in_order);
	unit_run("sketch: partials asked for are clamped to 1..SKETCH_SHARDS_MAX",
		 partials_are_clamped_to_one_through_the_most);
	unit_run("sketch: merging refuses sketches that differ, naming the field",
		 merging_refuses_sketches_that_differ_and_names_the_field);
	unit_run("sketch: round-trips empty, exact and estimating at precisions 4 to 18",
		 round_trips_empty_exact_and_estimating_at_every_size);
	unit_run("sketch: round-trips SipHash-2-4, folded case and a key kept outside",
		 round_trips_siphash24_folded_case_and_a_key_kept_outside);
	unit_run("sketch: a key kept outside is never written; the loaded sketch needs it",
		 a_key_kept_outside_is_never_written);
	unit_run("sketch: saving to a path replaces the file atomically",
		 saving_to_a_path_replaces_the_file_atomically);
	unit_run("sketch: hand-made content loads as written, in both phases",
		 crafted_content_loads_as_written);
	unit_run("sketch: each header field out of range is refused, naming it",
		 rejects_each_header_field_out_of_range);
	unit_run("sketch: an outside key's field must be a bare fingerprint",
		 rejects_an_outside_key_that_is_not_a_bare_fingerprint);
	unit_run("sketch: content longer or shorter than its header is refused",
		 rejects_content_longer_or_shorter_than_its_header);
	unit_run("sketch: every truncation and trailing bytes are refused",
		 rejects_every_truncation_and_trailing_bytes);
	unit_run("sketch: plain content and text are not gzip data", rejects_plain_content_and_text);
	unit_run("sketch: a filter is not a sketch, and format_load_any loads it",
		 a_filter_is_not_a_sketch);
	unit_run("sketch: a sketch is not a filter, and format_load_any loads it, from a pipe too",
		 a_sketch_is_not_a_filter);
	unit_run("sketch: a sketch is told by its first bytes", detects_a_sketch_by_its_first_bytes);
}
