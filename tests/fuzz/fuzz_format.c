/* SPDX-License-Identifier: MIT */
/*
 * fuzz_format.c - libFuzzer harness for loading filter files (format.h),
 * every format and stage count, and for what a loaded filter then does.
 *
 * An input is one of two things:
 *
 *   - a filter file as it lies on disk (gzip, or any bytes at all), loaded
 *     as it is;
 *   - a filter's uncompressed content, recognised by the "\x89BFT" magic,
 *     which the harness gzips itself (level, strategy and gzip header
 *     options drawn from the input) before loading. Mutating a gzip file
 *     almost always breaks its CRC, so without this the fuzzer would
 *     rarely get past the trailer check; this way every header field and
 *     payload bit is reachable with a valid CRC, and loads succeed.
 *
 * For each input the file is loaded whole (format_load from a scratch
 * file), and again through the streaming API (format_open/read/close) over
 * a file, a pipe or a socket delivering short reads, in pieces whose sizes
 * are drawn from the input. Checked:
 *
 *   - the two ways agree: both succeed or both fail, and the streamed
 *     payload equals the loaded bits byte for byte;
 *   - a failure always comes with a message; a plain (uncompressed) file
 *     never loads;
 *   - a loaded cascade is consistent: shared hash, key and flags, valid
 *     params, counts and rates that are numbers in range;
 *   - cascade_test agrees with testing every stage by hand;
 *   - saving succeeds for any loaded filter, the saved file loads back
 *     identical (params, counts, bits), and saving that gives the same
 *     bytes again;
 *   - an empty copy (bfbuild --like) has the same kind, hashing and key;
 *   - after adding keys (which may grow a cascade) every key tests
 *     present, insertions rose by the number of keys, and it still saves;
 *   - a filter whose key is kept outside refuses a wrong key and takes
 *     its own (the seeds use the key 00 01 .. 0f), saves without it, and
 *     is only asked about keys once it has it.
 *
 * Sketch files (sketch.h) share the container and the harness: content
 * with the "\x89BFS" magic is gzipped here too. Every input is also
 * loaded by format_load_any, which must agree with format_load and with
 * sketch_load; a loaded sketch must save, load back the same (registers,
 * phase, counts, key) and save to the same bytes again, merge with
 * itself and with its empty copy without changing its count, and, once
 * it has its key, count keys added to it.
 */
#define _GNU_SOURCE	/* memfd_create */
#define ZLIB_CONST

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cascade.h"
#include "dcso.h"
#include "filter.h"
#include "format.h"
#include "fuzz.h"
#include "hll.h"
#include "sketch.h"

#define NKEYS 16
#define KEY_MAX 48
#define PIECE_MAX ((size_t)64 << 10)
/* Cascades bigger than this (grown by the harness) are not saved again: time. */
#define RESAVE_MAX ((uint64_t)16 << 20)

static const uint8_t content_magic[4] = { 0x89, 'B', 'F', 'T' };
static const uint8_t sketch_content_magic[4] = { 0x89, 'B', 'F', 'S' };

/* ---- getting a file ---------------------------------------------------- */

/* The content gzipped here, with options drawn from state; a new buffer. */
static uint8_t *wrap_gzip(const uint8_t *data, size_t size, uint64_t *state, size_t *out_size)
{
	static const int levels[] = { 0, 1, 6, 9 };
	static const int strategies[] = { Z_DEFAULT_STRATEGY, Z_RLE, Z_FILTERED, Z_HUFFMAN_ONLY };
	static unsigned char name[] = "filter.bf";
	uint64_t pick = fuzz_next(state);
	z_stream zs;
	gz_header gzh;
	uint8_t *out;
	size_t cap;

	memset(&zs, 0, sizeof zs);
	memset(&gzh, 0, sizeof gzh);
	gzh.os = 3;
	gzh.hcrc = (int)(pick >> 4 & 1);
	gzh.name = pick >> 5 & 1 ? name : NULL;
	fuzz_check(deflateInit2(&zs, levels[pick & 3], Z_DEFLATED, 15 + 16, 8,
				strategies[pick >> 2 & 3]) == Z_OK, "deflateInit2");
	fuzz_check(deflateSetHeader(&zs, &gzh) == Z_OK, "deflateSetHeader");
	cap = deflateBound(&zs, size) + 64;
	out = malloc(cap);
	fuzz_check(out != NULL, "out of memory");
	zs.next_in = data;
	zs.avail_in = (uInt)size;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	fuzz_check(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate in one call");
	*out_size = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

static struct cascade *load(const uint8_t *file, size_t size)
{
	const char *err = NULL;
	int fd = fuzz_file(file, size);
	struct cascade *c = format_load(fd, &err);

	close(fd);
	fuzz_check(c != NULL || (err != NULL && *err != '\0'), "a failed load says why");
	return c;
}

/* ---- streaming ------------------------------------------------------- */

/* Byte j of a stage's bits in file order (bit i is bit i%8 of byte i/8). */
static uint8_t stage_byte(const struct filter *f, uint64_t j)
{
	return (uint8_t)(f->words[j / 8] >> (8 * (j % 8)));
}

/* The streamed bytes buf[0..len), at payload offset pos, against the loaded bits. */
static void compare_payload(const struct cascade *c, uint64_t pos, const uint8_t *buf, size_t len)
{
	size_t s = 0;

	for (size_t i = 0; i < len; i++, pos++) {
		uint64_t at = pos;

		for (s = 0; s < c->nstages && at >= c->stages[s]->params.m / 8; s++)
			at -= c->stages[s]->params.m / 8;
		fuzz_check(s < c->nstages, "payload longer than the loaded stages");
		fuzz_check(buf[i] == stage_byte(c->stages[s], at), "streamed bits equal loaded bits");
	}
}

/*
 * Field by field: doubles compared bit for bit, as the file stores them. A
 * key kept outside is compared by fingerprint only: the file never holds it.
 */
static int params_equal(const struct filter_params *a, const struct filter_params *b)
{
	return a->layout == b->layout && a->hash == b->hash && a->flags == b->flags
	       && a->k == b->k && a->m == b->m && a->capacity == b->capacity
	       && memcmp(&a->target_p, &b->target_p, sizeof a->target_p) == 0
	       && a->fingerprint == b->fingerprint
	       && ((a->flags & FILTER_KEY_EXTERNAL) || memcmp(a->key, b->key, sizeof a->key) == 0);
}

/* The shape from format_open against the loaded cascade (when there is one). */
static uint64_t check_shape(const struct cascade *shape, const struct cascade *c)
{
	uint64_t total = 0;

	fuzz_check(shape->nstages >= 1 && shape->nstages <= CASCADE_STAGES_MAX, "stage count");
	for (size_t i = 0; i < shape->nstages; i++) {
		fuzz_check(shape->stages[i]->words == NULL, "a shape has no bit arrays");
		total += shape->stages[i]->params.m / 8;
	}
	if (c == NULL)
		return total;
	fuzz_check(shape->nstages == c->nstages && shape->growth == c->growth
		   && shape->tighten == c->tighten && shape->capacity == c->capacity,
		   "shape and loaded cascade agree");
	for (size_t i = 0; i < shape->nstages; i++)
		fuzz_check(params_equal(&shape->stages[i]->params, &c->stages[i]->params)
			   && shape->stages[i]->insertions == c->stages[i]->insertions,
			   "shape stage equals loaded stage");
	return total;
}

/* Small pieces first (the awkward sizes), then big ones so bombs end quickly. */
static size_t next_piece(uint64_t *state, unsigned n, uint64_t left)
{
	uint64_t piece = n < 32 ? fuzz_range(state, 1, 70) : fuzz_range(state, 1, PIECE_MAX);

	return (size_t)(piece < left ? piece : left);
}

/*
 * Read the payload through format_read up to stop (of total bytes), into
 * buf. Returns 0, or -1 when a read failed (and then format_close must).
 */
static int read_pieces(struct format_reader *r, uint64_t stop, uint64_t *state,
		       const struct cascade *c, uint8_t *buf)
{
	const char *err = NULL;
	uint64_t pos = 0;

	for (unsigned n = 0; pos < stop; n++) {
		size_t piece = next_piece(state, n, stop - pos);

		if (format_read(r, buf, piece, &err) < 0) {
			fuzz_check(err != NULL, "a failed read says why");
			fuzz_check(n % 2 || format_read(r, buf, 1, &err) < 0,
				   "a broken stream stays broken");
			fuzz_check(format_close(r, &err) < 0, "close fails after a failed read");
			return -1;
		}
		if (c != NULL)
			compare_payload(c, pos, buf, piece);
		pos += piece;
	}
	return 0;
}

/* Returns 1 (read and closed cleanly), 0 (failed), or -1 (stopped early on purpose). */
static int stream(const uint8_t *file, size_t size, uint64_t *state, const struct cascade *c,
		  uint8_t *buf)
{
	uint64_t pick = fuzz_next(state), total, stop;
	struct cascade *shape = NULL;
	const char *err = NULL;
	struct format_reader *r;
	struct feed f;
	int verdict;

	feed_open(&f, (enum feed_kind)(pick % 3), file, size, fuzz_next(state),
		  pick >> 8 & 1 ? 16 : 4096);
	r = format_open(f.fd, &shape, &err);
	if (r == NULL) {
		fuzz_check(shape == NULL && err != NULL, "a failed open says why, and gives no shape");
		feed_close(&f);
		return 0;
	}
	total = check_shape(shape, c);
	stop = (pick >> 4) % 8 == 0 ? fuzz_range(state, 0, total) : total;
	if (read_pieces(r, stop, state, c, buf) < 0) {
		verdict = 0;
	} else if (stop < total) {
		verdict = -1;
		if (pick >> 12 & 1)
			format_abandon(r);
		else
			fuzz_check(format_close(r, &err) < 0, "closing before the end fails");
	} else {
		if (pick >> 13 & 1)
			fuzz_check(format_read(r, buf, 1, &err) < 0, "reading past the end fails");
		verdict = format_close(r, &err) == 0;
		fuzz_check(verdict || err != NULL, "a failed close says why");
	}
	cascade_free(shape);
	feed_close(&f);
	return verdict;
}

/* ---- a loaded cascade ------------------------------------------------ */

static void check_cascade(const struct cascade *c)
{
	const struct filter_params *p0 = cascade_params(c);
	const struct filter *newest = c->stages[c->nstages - 1];
	const char *err = NULL;

	fuzz_check(c->nstages >= 1 && c->nstages <= CASCADE_STAGES_MAX, "stage count");
	fuzz_check(c->growth != 0 || c->nstages == 1, "a fixed filter has one stage");
	fuzz_check(p0 == &c->stages[0]->params, "cascade_params is stage 0's");
	/* a fixed filter may take more than its capacity; a growing stage never */
	fuzz_check(c->growth == 0 || c->newest_keys <= newest->params.capacity,
		   "a growing stage holds no more than its capacity");
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;

		fuzz_check(c->stages[i]->words != NULL, "a loaded stage has bits");
		fuzz_check(filter_params_check(p, &err) == 0, "loaded params are valid");
		fuzz_check(p->hash == p0->hash && p->flags == p0->flags
			   && memcmp(p->key, p0->key, sizeof p->key) == 0
			   && p->fingerprint == p0->fingerprint,
			   "stages share hash, flags and key");
		fuzz_check((p->flags & FILTER_KEY_EXTERNAL) || p->fingerprint == filter_key_fingerprint(p->key),
			   "a key in the file has its own fingerprint");
	}
}

static void check_numbers(const struct cascade *c)
{
	uint64_t bytes = 0, insertions = 0;
	double count = cascade_estimate_count(c), fpr = cascade_current_fpr(c);

	fuzz_check(!isnan(count) && count >= 0.0, "estimated count is a number >= 0");
	fuzz_check(fpr >= 0.0 && fpr <= 1.0, "current rate in [0, 1]");
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter *f = c->stages[i];
		double sfpr = filter_current_fpr(f), scount = filter_estimate_count(f);

		fuzz_check(filter_bits_set(f) <= f->params.m, "bits set <= m");
		fuzz_check(sfpr >= 0.0 && sfpr <= 1.0, "stage rate in [0, 1]");
		fuzz_check(!isnan(scount) && scount >= 0.0, "stage count is a number >= 0");
		bytes += f->params.m / 8;
		insertions += f->insertions;
	}
	fuzz_check(cascade_bytes(c) == bytes, "cascade_bytes is the sum of the stages");
	fuzz_check(cascade_insertions(c) == insertions, "insertions sum the stages'");
}

/* Keys cut from the input: the empty key, then slices. */
static void make_keys(const uint8_t *data, size_t size, uint64_t *state, struct line *keys)
{
	keys[0] = (struct line){ .data = (const char *)data, .len = 0 };
	for (size_t i = 1; i < NKEYS; i++) {
		size_t off = size ? (size_t)fuzz_range(state, 0, size - 1) : 0;
		size_t len = (size_t)fuzz_range(state, 0, KEY_MAX);

		if (len > size - off)
			len = size - off;
		keys[i] = (struct line){ .data = (const char *)data + off, .len = len };
	}
}

/* cascade_test is "present in any stage". */
static void check_test(const struct cascade *c, const struct line *keys)
{
	unsigned char present[NKEYS], any[NKEYS] = { 0 }, one[NKEYS];

	cascade_test(c, keys, NKEYS, present);
	for (size_t s = 0; s < c->nstages; s++) {
		filter_test(c->stages[s], keys, NKEYS, one);
		for (size_t i = 0; i < NKEYS; i++)
			any[i] |= one[i];
	}
	for (size_t i = 0; i < NKEYS; i++)
		fuzz_check(present[i] == any[i], "cascade_test ORs the stages");
}

static void check_same(const struct cascade *a, const struct cascade *b)
{
	const char *what = NULL;

	fuzz_check(a->nstages == b->nstages && a->growth == b->growth && a->tighten == b->tighten
		   && a->capacity == b->capacity
		   && memcmp(&a->target_p, &b->target_p, sizeof a->target_p) == 0,
		   "reloaded cascade equals the saved one");
	for (size_t i = 0; i < a->nstages; i++) {
		const struct filter *f = a->stages[i], *g = b->stages[i];

		fuzz_check(params_equal(&f->params, &g->params) && f->insertions == g->insertions,
			   "reloaded stage params equal");
		fuzz_check(memcmp(f->words, g->words, filter_bytes(f)) == 0,
			   "reloaded stage bits equal");
	}
	fuzz_check(cascade_compatible(a, b, &what) == 1, "a filter is compatible with its copy");
}

/* Save c; the bytes in a new buffer. Saving a loaded filter must succeed. */
static uint8_t *save(const struct cascade *c, size_t *size)
{
	const char *err = NULL;
	int fd = fuzz_file(NULL, 0);
	uint8_t *bytes;

	fuzz_check(format_save(c, fd, &err) == 0, err ? err : "format_save");
	bytes = fuzz_slurp(fd, size);
	close(fd);
	return bytes;
}

/* Save, load back, compare; save the copy and expect the same bytes. */
static struct cascade *round_trip(const struct cascade *c)
{
	const char *err = NULL;
	size_t size, size2;
	uint8_t *bytes = save(c, &size), *bytes2;
	struct cascade *copy = load(bytes, size);

	fuzz_check(copy != NULL, "a saved filter loads");
	check_same(c, copy);
	if (cascade_needs_key(copy) && !cascade_needs_key(c))
		fuzz_check(cascade_supply_key(copy, cascade_params(c)->key, &err) == 0,
			   "the key a filter was loaded with fits its saved copy");
	bytes2 = save(copy, &size2);
	fuzz_check(size == size2 && memcmp(bytes, bytes2, size) == 0,
		   "the same filter saves to the same bytes");
	free(bytes);
	free(bytes2);
	return copy;
}

/* Add the keys (growing the cascade if it must); then all of them test present. */
static void check_add(struct cascade *c, const struct line *keys, uint64_t *state)
{
	unsigned char present[NKEYS];
	uint64_t before = cascade_insertions(c);
	const char *err = NULL;
	size_t fresh = 0;
	int rc;

	if (fuzz_next(state) & 1)
		rc = cascade_add(c, keys, NKEYS, &err);
	else
		rc = cascade_test_and_add(c, keys, NKEYS, present, &fresh, &err);
	fuzz_check(fresh <= NKEYS, "no more fresh keys than keys");
	if (rc < 0) {
		fuzz_check(err != NULL, "a failed add says why");
	} else {
		cascade_test(c, keys, NKEYS, present);
		for (size_t i = 0; i < NKEYS; i++)
			fuzz_check(present[i], "an added key tests present");
		fuzz_check(cascade_insertions(c) - before == NKEYS, "insertions count every key");
	}
	check_cascade(c);
	if (cascade_bytes(c) <= RESAVE_MAX)
		cascade_free(round_trip(c));
}

/* An empty cascade like c (bfbuild --like): same kind, hashing and key. */
static void check_like(const struct cascade *c)
{
	const char *err = NULL, *what = NULL;
	struct cascade *like = cascade_new_like(c, &err);

	if (like == NULL) {
		/* a growing filter's first stage is sized again, and may not fit */
		fuzz_check(c->growth != 0 && err != NULL, "a fixed filter can always be copied empty");
		return;
	}
	fuzz_check(like->nstages == 1 && like->growth == c->growth && like->tighten == c->tighten
		   && cascade_insertions(like) == 0, "an empty copy of the same kind");
	fuzz_check(cascade_params(like)->fingerprint == cascade_params(c)->fingerprint
		   && cascade_params(like)->flags == cascade_params(c)->flags
		   && cascade_params(like)->hash == cascade_params(c)->hash, "same hashing and key");
	fuzz_check(c->growth != 0 || cascade_compatible(like, c, &what) == 1,
		   "a fixed filter's empty copy merges with it");
	cascade_free(like);
}

/*
 * A filter whose key is kept outside: a wrong key is refused, the seeds'
 * key (bytes 0..15) fits exactly when the fingerprint is its. Returns
 * whether the filter now has its key.
 */
static int supply_key(struct cascade *c)
{
	static const unsigned char seed_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const unsigned char wrong_key[16] = { 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8 };
	uint64_t fingerprint = cascade_params(c)->fingerprint;
	const char *err = NULL;
	int rc;

	if (!cascade_needs_key(c))
		return 1;
	fuzz_check(filter_key_fingerprint(wrong_key) == fingerprint
		   || (cascade_supply_key(c, wrong_key, &err) < 0 && err != NULL),
		   "a key that is not the filter's is refused");
	rc = cascade_supply_key(c, seed_key, &err);
	fuzz_check((rc == 0) == (filter_key_fingerprint(seed_key) == fingerprint),
		   "the key that is the filter's fits");
	fuzz_check(rc < 0 || !cascade_needs_key(c), "a filter given its key needs none");
	return rc == 0;
}

static void exercise(struct cascade *c, const uint8_t *data, size_t size, uint64_t *state)
{
	struct line keys[NKEYS];
	struct cascade *copy;
	int keyed = supply_key(c);

	check_cascade(c);
	check_numbers(c);
	make_keys(data, size, state, keys);
	if (keyed)
		check_test(c, keys);
	check_like(c);
	copy = round_trip(c);
	/* without its key a filter can be saved, not asked */
	if (keyed)
		check_add(copy, keys, state);
	cascade_free(copy);
}

/*
 * A DCSO filter (detected by its first bytes): it answers queries with
 * numbers in range, and saves back in its own format (not ours).
 */
static void exercise_dcso(struct cascade *c)
{
	static const struct line keys[3] = { { "", 0 }, { "a", 1 }, { "example.com", 11 } };
	unsigned char present[3];
	const char *err = NULL;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	fuzz_check(cascade_test(c, keys, 3, present) == 0, "a DCSO filter needs no key");
	fuzz_check(cascade_current_fpr(c) >= 0.0 && cascade_current_fpr(c) <= 1.0, "rate in [0, 1]");
	fuzz_check(fd >= 0, "open /dev/null");
	fuzz_check(dcso_save(c, fd, 0, &err) == 0, err ? err : "dcso_save");
	close(fd);
}

/* ---- sketches -------------------------------------------------------- */

/* The file loaded by sketch_load, checked against format_load_any's verdict. */
static struct sketch *load_sketch(const uint8_t *file, size_t size, int any_says_sketch)
{
	const char *err = NULL;
	int fd = fuzz_file(file, size);
	struct sketch *s = sketch_load(fd, &err);

	close(fd);
	fuzz_check(s != NULL || (err != NULL && *err != '\0'), "a failed sketch load says why");
	fuzz_check((s != NULL) == any_says_sketch, "sketch_load and format_load_any agree");
	return s;
}

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
	       && sketch_is_exact(a) == sketch_is_exact(b);
}

static uint8_t *save_sketch(const struct sketch *s, size_t *size)
{
	const char *err = NULL;
	int fd = fuzz_file(NULL, 0);
	uint8_t *bytes;

	fuzz_check(sketch_save(s, fd, &err) == 0, err ? err : "sketch_save");
	bytes = fuzz_slurp(fd, size);
	close(fd);
	return bytes;
}

/* Save, load back, compare; the copy saves to the same bytes. */
static void sketch_round_trip(const struct sketch *s)
{
	size_t size, size2;
	uint8_t *bytes = save_sketch(s, &size), *bytes2;
	struct sketch *copy = load_sketch(bytes, size, 1);

	fuzz_check(same_sketch(s, copy), "a saved sketch loads back the same");
	fuzz_check(sketch_estimate(s) == sketch_estimate(copy), "the same count");
	bytes2 = save_sketch(copy, &size2);
	fuzz_check(size == size2 && memcmp(bytes, bytes2, size) == 0,
		   "the same sketch saves to the same bytes");
	free(bytes);
	free(bytes2);
	sketch_free(copy);
}

/* Merging with itself and with its empty copy changes no register. */
static void sketch_merges(const struct sketch *s)
{
	const char *err = NULL;
	struct sketch *copy = sketch_new_like(s, &err), *empty = sketch_new_like(s, &err);

	fuzz_check(copy && empty, err ? err : "sketch_new_like");
	fuzz_check(sketch_merge(copy, s, &err) == 0 && sketch_merge(copy, empty, &err) == 0,
		   "a sketch merges with its own kind");
	fuzz_check(copy->insertions == s->insertions && same_sketch(s, copy),
		   "the union with nothing is the sketch");
	if (s->insertions <= UINT64_MAX / 2) {
		fuzz_check(sketch_merge(copy, s, &err) == 0, "a sketch merges with itself");
		fuzz_check(sketch_estimate(copy) == sketch_estimate(s), "the union with itself counts the same");
	}
	sketch_free(copy);
	sketch_free(empty);
}

static void exercise_sketch(struct sketch *s, const uint8_t *data, size_t size, uint64_t *state)
{
	static const unsigned char seed_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct line keys[NKEYS];
	uint64_t hashes[NKEYS];
	const char *err = NULL;
	double before = sketch_estimate(s);

	fuzz_check(before >= 0.0 && !isnan(before), "a count is a number");
	fuzz_check(sketch_registers_nonzero(s) <= (UINT64_C(1) << sketch_precision(s)), "registers in range");
	sketch_round_trip(s);
	sketch_merges(s);
	if (s->needs_key && sketch_supply_key(s, seed_key, &err) < 0)
		return;	/* without its key a sketch can be saved and merged, not added to */
	make_keys(data, size, state, keys);
	sketch_hash(s, keys, NKEYS, hashes);
	sketch_add_hashed(s, hashes, NKEYS);
	fuzz_check(sketch_is_exact(s) ? sketch_estimate(s) >= before : 1, "an exact count never drops");
	sketch_round_trip(s);
}

/* Every file through format_load_any: a sketch is exercised here (1), else 0. */
static int try_sketch(const uint8_t *file, size_t size, const struct cascade *c, const uint8_t *data,
		      size_t data_size, uint64_t *state)
{
	struct cascade *filter = NULL;
	struct window *window = NULL;
	struct sketch *sketch = NULL, *direct;
	const char *err = NULL;
	int fd = fuzz_file(file, size), rc = format_load_any(fd, &filter, &window, &sketch, &err);

	close(fd);
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a failed load says why");
	fuzz_check((filter != NULL) == (c != NULL) &&
			   (rc == 0) == (filter != NULL || window != NULL || sketch != NULL),
		   "format_load_any loads the filters format_load loads");
	cascade_free(filter);
	window_free(window);
	direct = load_sketch(file, size, sketch != NULL);
	if (sketch != NULL)
		fuzz_check(same_sketch(sketch, direct), "both ways load the same sketch");
	sketch_free(direct);
	if (sketch == NULL)
		return 0;
	exercise_sketch(sketch, data, data_size, state);
	sketch_free(sketch);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[PIECE_MAX];
	uint64_t state = fuzz_seed(data, size);
	const uint8_t *file = data;
	uint8_t *wrapped = NULL;
	size_t file_size = size;
	struct cascade *c;
	int verdict;

	if (size >= sizeof content_magic && (memcmp(data, content_magic, sizeof content_magic) == 0
					     || memcmp(data, sketch_content_magic, sizeof content_magic) == 0)) {
		c = load(data, size);
		fuzz_check(c == NULL, "a plain, uncompressed file never loads");
		fuzz_check(try_sketch(data, size, NULL, data, size, &state) == 0,
			   "a plain, uncompressed sketch never loads");
		wrapped = wrap_gzip(data, size, &state, &file_size);
		file = wrapped;
	}
	c = load(file, file_size);
	if (try_sketch(file, file_size, c, data, size, &state)) {
		free(wrapped);
		return 0;
	}
	if (c != NULL && cascade_params(c)->layout == FILTER_DCSO) {
		exercise_dcso(c);	/* loads only: streaming and our format refuse it */
		cascade_free(c);
		free(wrapped);
		return 0;
	}
	verdict = stream(file, file_size, &state, c, buf);
	fuzz_check(verdict < 0 || verdict == (c != NULL), "streaming and loading agree");
	if (c != NULL)
		exercise(c, data, size, &state);
	cascade_free(c);
	free(wrapped);
	return 0;
}
