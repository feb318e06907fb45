/* SPDX-License-Identifier: MIT */
/*
 * test_dcso.c - the DCSO bloom filter format: known answers for its hash
 * and probes (taken from files DCSO's `bloom` 0.2.4 wrote), its sizing, the
 * exact bytes it writes, detection among our own files, and every kind of
 * damage a DCSO file can carry. The bats file tests/dcso.bats runs the
 * reference tool itself against bfgrep and bfbuild.
 *
 * Files are built here byte by byte (and gzipped with zlib), so each
 * rejection is proved against content that differs from a valid file in
 * one field only.
 */
#define ZLIB_CONST
#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cascade.h"
#include "dcso.h"
#include "filter.h"
#include "format.h"
#include "unit.h"

void suite_dcso(void);

/* ---- helpers ---------------------------------------------------------- */

#define FILE_MAX 4096

static char tmpdir[256];

static struct line key_of(const char *s)
{
	struct line l = { s, strlen(s) };

	return l;
}

static void put_le(unsigned char *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A DCSO file of the given header and words, no data: returns its length. */
static size_t craft(unsigned char *out, uint64_t n, double p, uint64_t k, uint64_t m,
		    uint64_t count, const uint64_t *words)
{
	uint64_t pbits, nwords = m / 64 + (m % 64 != 0);

	memcpy(&pbits, &p, sizeof pbits);
	put_le(out, 1);
	put_le(out + 8, n);
	put_le(out + 16, pbits);
	put_le(out + 24, k);
	put_le(out + 32, m);
	put_le(out + 40, count);
	for (uint64_t i = 0; i < nwords; i++)
		put_le(out + 48 + 8 * i, words ? words[i] : 0);
	return (size_t)(48 + 8 * nwords);
}

/* in[0..len) as one gzip member into out; returns its length, 0 on failure. */
static size_t gzip_bytes(const unsigned char *in, size_t len, unsigned char *out, size_t cap)
{
	z_stream zs;
	size_t done;

	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	zs.next_in = in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		return 0;
	}
	done = cap - zs.avail_out;
	deflateEnd(&zs);
	return done;
}

static const char *tmp_file(void)
{
	static char path[300];

	snprintf(path, sizeof path, "%s/f", tmpdir);
	return path;
}

static int write_file(const unsigned char *b, size_t len)
{
	int fd = open(tmp_file(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, b, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* format_load of the bytes b[0..len), through a file. */
static struct cascade *load_bytes(const unsigned char *b, size_t len, const char **why)
{
	struct cascade *c;
	int fd;

	*why = "cannot write the scratch file";
	if (write_file(b, len) < 0 || (fd = open(tmp_file(), O_RDONLY)) < 0)
		return NULL;
	c = format_load(fd, why);
	close(fd);
	return c;
}

/* Save c with dcso_save into out (FILE_MAX bytes); returns the length or 0. */
static size_t save_bytes(const struct cascade *c, int gzip, unsigned char *out)
{
	const char *why;
	ssize_t n;
	int fd = open(tmp_file(), O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return 0;
	if (dcso_save(c, fd, gzip, &why) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return 0;
	}
	n = read(fd, out, FILE_MAX);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

/* A new empty DCSO filter for n keys at rate p. */
static struct cascade *new_dcso(uint64_t n, double p)
{
	struct filter_params params;
	const char *why;

	if (dcso_params(n, p, &params, &why) < 0)
		return NULL;
	return cascade_new_fixed(&params, &why);
}

static int add_keys(struct cascade *c, const char *const *keys, size_t n)
{
	struct line lines[16];
	unsigned char present[16];
	const char *why;

	for (size_t i = 0; i < n; i++)
		lines[i] = key_of(keys[i]);
	return cascade_test_and_add(c, lines, n, present, NULL, &why);
}

/* ---- hashing and probes ------------------------------------------------- */

static void fnv1_known_answers(void)
{
	/* the FNV reference test vectors for FNV-1 (not 1a), 64-bit */
	CHECK(dcso_fnv1_64("", 0) == UINT64_C(0xcbf29ce484222325));
	CHECK(dcso_fnv1_64("a", 1) == UINT64_C(0xaf63bd4c8601b7be));
	CHECK(dcso_fnv1_64("foobar", 6) == UINT64_C(0x340d8765a4dda9c2));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* `bloom create -n 10 -p 0.1` then "foo" inserted: bits 5, 9, 27, 42 of 47. */
static void probes_match_the_reference_on_a_tiny_filter(void)
{
	static const uint64_t want[4] = { 9, 42, 27, 5 };	/* order: the sequence's */
	struct cascade *c = new_dcso(10, 0.1);
	uint64_t got[4];

	CHECK(c != NULL);
	CHECK(c->stages[0]->params.probe_bits == 47 && c->stages[0]->params.k == 4);
	filter_positions(c->stages[0], key_of("foo"), got);
	cascade_free(c);
	for (int i = 0; i < 4; i++)
		CHECKF(got[i] == want[i], "probe %d: %llu, want %llu", i,
		       (unsigned long long)got[i], (unsigned long long)want[i]);
}

/* `bloom create -n 1000 -p 1e-6` then "foo": the 20 bits it set, sorted. */
static void probes_match_the_reference_with_k_20(void)
{
	static const uint64_t want[20] = {
		7, 1013, 1402, 2842, 5279, 8015, 10913, 13183, 14601, 15232,
		16010, 16334, 17130, 18294, 19170, 19770, 20998, 23746, 24047, 27219,
	};
	struct cascade *c = new_dcso(1000, 1e-6);
	uint64_t got[20];

	CHECK(c != NULL);
	CHECK(c->stages[0]->params.probe_bits == 28755 && c->stages[0]->params.k == 20);
	filter_positions(c->stages[0], key_of("foo"), got);
	cascade_free(c);
	qsort(got, 20, sizeof got[0], cmp_u64);
	CHECK(memcmp(got, want, sizeof want) == 0);
}

/*
 * 20000 keys, 2 probes each, in a 250-bit filter: every bit below m ends up
 * set (a given bit stays clear with probability (1 - 1/250)^40000, about
 * e^-160), and none past it.
 */
static void probes_stay_below_m(void)
{
	struct cascade *c = new_dcso(100, 0.3);
	const struct filter *f;
	char text[32];

	CHECK(c != NULL);
	f = c->stages[0];
	CHECK(f->params.probe_bits % 64 != 0 && f->params.m % 512 == 0);
	for (int i = 0; i < 20000; i++) {
		struct line l;

		snprintf(text, sizeof text, "key%d", i);
		l = key_of(text);
		filter_add(c->stages[0], &l, 1);
	}
	CHECK(filter_bits_set(f) == f->params.probe_bits);	/* every bit below m, none past */
	cascade_free(c);
}

/* ---- sizing and the bytes written ---------------------------------------- */

static void sizing_matches_the_reference(void)
{
	/* (n, p) -> (m, k) as `bloom create` wrote them */
	static const struct { uint64_t n; double p; uint64_t m, k; } known[] = {
		{ 10, 0.1, 47, 4 }, { 1000, 1e-6, 28755, 20 }, { 20000, 0.01, 191701, 7 },
	};
	struct filter_params p;
	const char *why;

	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		CHECK(dcso_params(known[i].n, known[i].p, &p, &why) == 0);
		CHECKF(p.probe_bits == known[i].m && p.k == known[i].k, "n %llu: m %llu k %u",
		       (unsigned long long)known[i].n, (unsigned long long)p.probe_bits, p.k);
		CHECK(p.layout == FILTER_DCSO && p.hash == FILTER_FNV1 && p.flags == 0);
		CHECK(p.m % FILTER_BLOCK_BITS == 0 && p.m - p.probe_bits < FILTER_BLOCK_BITS);
		CHECK(p.capacity == known[i].n && p.target_p == known[i].p);
	}
	CHECK(dcso_params(1000000, 1e-30, &p, &why) < 0);	/* k would be 100 */
	CHECK(dcso_params(1, 0.9, &p, &why) < 0);		/* m would be 0 */
	CHECK(dcso_params(0, 0.1, &p, &why) < 0);
	CHECK(dcso_params(10, 1.0, &p, &why) < 0);
}

/* The 56 bytes `bloom create -n 10 -p 0.1` + "foo" wrote, byte for byte. */
static void writes_the_reference_bytes(void)
{
	static const char *const keys[] = { "foo", "foo" };	/* a repeat sets no new bit */
	static const unsigned char want[56] = {
		1, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0,
		0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, 4, 0, 0, 0, 0, 0, 0, 0,
		47, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
		0x20, 0x02, 0x00, 0x08, 0x00, 0x04, 0x00, 0x00,
	};
	unsigned char got[FILE_MAX];
	struct cascade *c = new_dcso(10, 0.1);
	size_t len;

	CHECK(c != NULL);
	CHECK(add_keys(c, keys, 2) == 0);
	len = save_bytes(c, 0, got);
	cascade_free(c);
	CHECKF(len == sizeof want, "%zu bytes", len);
	CHECK(memcmp(got, want, sizeof want) == 0);
}

/* ---- loading -------------------------------------------------------------- */

static int same_shape(const struct filter_params *a, const struct filter_params *b)
{
	return a->layout == b->layout && a->hash == b->hash && a->flags == b->flags && a->k == b->k
	       && a->m == b->m && a->probe_bits == b->probe_bits && a->capacity == b->capacity
	       && a->target_p == b->target_p;
}

static void a_saved_filter_loads_back(int gzip)
{
	static const char *const keys[] = { "alpha", "beta", "gamma", "beta" };
	unsigned char file[FILE_MAX];
	unsigned char present[4];
	struct line lines[4];
	struct cascade *c = new_dcso(100, 0.01), *back;
	const char *why;
	size_t len;

	CHECK(c != NULL);
	CHECK(add_keys(c, keys, 4) == 0);
	len = save_bytes(c, gzip, file);
	CHECK(len > 0 && (file[0] == 0x1f) == gzip);
	back = load_bytes(file, len, &why);
	CHECKF(back != NULL, "%s", why);
	CHECK(back->nstages == 1 && back->growth == 0 && back->newest_keys == 3);
	CHECK(back->stages[0]->insertions == 3);
	CHECK(same_shape(&back->stages[0]->params, &c->stages[0]->params));
	CHECK(memcmp(back->stages[0]->words, c->stages[0]->words, filter_bytes(c->stages[0])) == 0);
	for (int i = 0; i < 4; i++)
		lines[i] = key_of(keys[i]);
	cascade_test(back, lines, 4, present);
	CHECK(present[0] && present[1] && present[2] && present[3]);
	cascade_free(back);
	cascade_free(c);
}

static void a_plain_file_round_trips(void)
{
	a_saved_filter_loads_back(0);
}

static void a_gzipped_file_round_trips(void)
{
	a_saved_filter_loads_back(1);
}

/* Free-form data may follow the bits; several gzip members read as one. */
static void data_after_the_bits_and_gzip_members_are_read(void)
{
	unsigned char file[FILE_MAX], gz[FILE_MAX];
	const char *why;
	size_t len = craft(file, 10, 0.1, 4, 47, 0, NULL), half, glen;
	struct cascade *c;

	memcpy(file + len, "{\"source\": \"test\"}\n", 19);
	c = load_bytes(file, len + 19, &why);
	CHECKF(c != NULL, "%s", why);
	/* kept, and written back after the bits, as it came */
	CHECK(c->dcso_gzip == 0 && c->dcso_data_len == 19);
	CHECK(c->dcso_data != NULL && memcmp(c->dcso_data, file + len, 19) == 0);
	CHECK(save_bytes(c, 0, gz) == len + 19 && memcmp(gz, file, len + 19) == 0);
	cascade_free(c);
	half = (len + 19) / 2;
	glen = gzip_bytes(file, half, gz, sizeof gz);
	glen += gzip_bytes(file + half, len + 19 - half, gz + glen, sizeof gz - glen);
	c = load_bytes(gz, glen, &why);
	CHECKF(c != NULL, "%s", why);
	CHECK(c->stages[0]->params.probe_bits == 47);
	CHECK(c->dcso_gzip == 1 && c->dcso_data_len == 19);
	cascade_free(c);
}

/* As DCSO's join: the same m and k do not suffice, n and p must agree too. */
static void dcso_filters_combine_only_with_the_same_dimensions(void)
{
	struct cascade *a = new_dcso(1000, 0.01), *b = new_dcso(1000, 0.01);
	const char *what = NULL;

	CHECK(a != NULL && b != NULL);
	CHECK(cascade_compatible(a, b, &what) == 1);
	b->capacity = 999;
	CHECK(cascade_compatible(a, b, &what) == 0 && strcmp(what, "capacity") == 0);
	b->capacity = 1000;
	b->target_p = 0.0100001;
	CHECK(cascade_compatible(a, b, &what) == 0 && strcmp(what, "rate") == 0);
	cascade_free(a);
	cascade_free(b);
}

static void expect_refused(const unsigned char *b, size_t len, const char *message)
{
	const char *why = NULL;
	struct cascade *c = load_bytes(b, len, &why);

	cascade_free(c);
	CHECK(c == NULL);
	CHECKF(strcmp(why, message) == 0, "got \"%s\", want \"%s\"", why, message);
}

static void bad_header_fields_are_named(void)
{
	unsigned char f[FILE_MAX];
	double not_a_number = NAN;

	expect_refused(f, craft(f, 0, 0.1, 4, 47, 0, NULL), "bad DCSO header: capacity (n) is 0");
	expect_refused(f, craft(f, 10, 0.0, 4, 47, 0, NULL), "bad DCSO header: rate (p) not in (0, 1)");
	expect_refused(f, craft(f, 10, 1.0, 4, 47, 0, NULL), "bad DCSO header: rate (p) not in (0, 1)");
	expect_refused(f, craft(f, 10, not_a_number, 4, 47, 0, NULL), "bad DCSO header: rate (p) not in (0, 1)");
	expect_refused(f, craft(f, 10, 0.1, 0, 47, 0, NULL), "bad DCSO header: hashes (k) out of range 1..64");
	expect_refused(f, craft(f, 10, 0.1, 65, 47, 0, NULL), "bad DCSO header: hashes (k) out of range 1..64");
	expect_refused(f, craft(f, 10, 0.1, 4, 0, 0, NULL), "bad DCSO header: size (m) out of range 1..2^46 bits");
	craft(f, 10, 0.1, 4, 47, 0, NULL);
	put_le(f + 32, (UINT64_C(1) << 46) + 1);	/* refused before anything is allocated */
	expect_refused(f, 48, "bad DCSO header: size (m) out of range 1..2^46 bits");
}

static void short_and_damaged_files_are_refused(void)
{
	unsigned char f[FILE_MAX], gz[FILE_MAX];
	uint64_t past_m = UINT64_C(1) << 47;	/* bit 47 of a 47-bit filter */
	size_t len = craft(f, 10, 0.1, 4, 47, 0, NULL), glen;

	expect_refused(f, 47, "truncated DCSO filter (header)");
	expect_refused(f, len - 1, "truncated DCSO filter (bits)");
	expect_refused(f, craft(f, 10, 0.1, 4, 47, 0, &past_m), "corrupt DCSO filter: bits set past m");
	len = craft(f, 10, 0.1, 4, 47, 0, NULL);
	glen = gzip_bytes(f, len, gz, sizeof gz);
	gz[glen - 8] ^= 1;	/* the CRC-32 */
	expect_refused(gz, glen, "corrupt DCSO filter: gzip checksum mismatch");
	gz[glen - 8] ^= 1;
	expect_refused(gz, glen - 3, "truncated DCSO filter");
	memcpy(gz + glen, "junk", 4);	/* not another gzip member */
	expect_refused(gz, glen + 4, "corrupt DCSO filter: invalid gzip data");
}

/* ---- telling formats apart ------------------------------------------------ */

static void detection_reads_only_what_it_needs(void)
{
	unsigned char f[FILE_MAX], gz[FILE_MAX];
	size_t len = craft(f, 10, 0.1, 4, 47, 0, NULL), glen = gzip_bytes(f, len, gz, sizeof gz);
	static const unsigned char ours[8] = { 0x89, 'B', 'F', 'T', '\r', '\n', 0x1a, '\n' };
	unsigned char ours_gz[64];
	size_t ours_len = gzip_bytes(ours, sizeof ours, ours_gz, sizeof ours_gz);

	CHECK(dcso_detect(f, 0) == -1);
	CHECK(dcso_detect(f, 7) == -1 && dcso_detect(f, 8) == 1);
	CHECK(dcso_detect((const unsigned char *)"\x01\x01", 2) == 0);
	CHECK(dcso_detect((const unsigned char *)"hello", 5) == 0);
	CHECK(dcso_detect(gz, 1) == -1 && dcso_detect(gz, glen) == 1);
	CHECK(dcso_detect(ours_gz, ours_len) == 0);
	CHECK(dcso_detect(ours_gz, 12) <= 0);	/* a gzip header alone: cannot tell yet */
}

/* A DCSO file arriving through a pipe (no seeking back) loads as from a file. */
static void a_pipe_is_read_like_a_file(void)
{
	unsigned char f[FILE_MAX];
	size_t len = craft(f, 10, 0.1, 4, 47, 3, NULL);
	struct cascade *c;
	const char *why;
	int fds[2];

	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], f, len) == (ssize_t)len);
	close(fds[1]);
	c = format_load(fds[0], &why);
	close(fds[0]);
	CHECKF(c != NULL, "%s", why);
	CHECK(c->newest_keys == 3);
	cascade_free(c);
}

static void our_format_refuses_to_stream_or_save_dcso(void)
{
	unsigned char f[FILE_MAX];
	size_t len = craft(f, 10, 0.1, 4, 47, 0, NULL);
	struct cascade *shape = NULL, *c = new_dcso(10, 0.1);
	const char *why = NULL;
	int fd;

	CHECK(c != NULL);
	CHECK(format_save(c, -1, &why) < 0);
	CHECK(strcmp(why, "a DCSO bloom filter cannot be saved as a bftools filter") == 0);
	cascade_free(c);
	CHECK(write_file(f, len) == 0 && (fd = open(tmp_file(), O_RDONLY)) >= 0);
	CHECK(format_open(fd, &shape, &why) == NULL && shape == NULL);
	close(fd);
	CHECK(strstr(why, "DCSO") != NULL);
}

static void params_check_keeps_dcso_apart(void)
{
	struct filter_params p;
	const char *why;

	CHECK(dcso_params(100, 0.01, &p, &why) == 0 && filter_params_check(&p, &why) == 0);
	p.hash = FILTER_SIPHASH_1_3;
	CHECK(filter_params_check(&p, &why) < 0);
	p.hash = FILTER_FNV1;
	p.flags = FILTER_FOLD_CASE;
	CHECK(filter_params_check(&p, &why) < 0);
	p.flags = 0;
	p.probe_bits = p.m - FILTER_BLOCK_BITS;	/* m would be larger than needed */
	CHECK(filter_params_check(&p, &why) < 0);
	p.probe_bits = p.m + 1;
	CHECK(filter_params_check(&p, &why) < 0);
	p.probe_bits = p.m;
	p.layout = FILTER_CLASSIC;	/* probe_bits belongs to DCSO only */
	CHECK(filter_params_check(&p, &why) < 0);
	p.probe_bits = 0;
	CHECK(filter_params_check(&p, &why) < 0);	/* classic with FNV-1 */
}

/* The memory limit is checked from the header, before the bits are read. */
static void the_memory_limit_applies(void)
{
	unsigned char f[FILE_MAX];
	uint64_t old = filter_memory_limit();
	const char *why = NULL;
	size_t len = craft(f, 10, 0.1, 4, 47, 0, NULL);
	struct cascade *c;

	put_le(f + 32, UINT64_C(1) << 40);
	filter_set_memory_limit(1 << 20);
	c = load_bytes(f, len, &why);
	filter_set_memory_limit(old);
	cascade_free(c);
	CHECK(c == NULL && why == filter_err_limit);
}

static void no_scratch_directory(void)
{
	CHECKF(0, "mkdtemp %s: %s", tmpdir, strerror(errno));
}

void suite_dcso(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/bftools-dcso-XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		unit_run("dcso: a scratch directory can be made", no_scratch_directory);
		return;
	}
	unit_run("dcso: FNV-1 64 gives the reference test vectors", fnv1_known_answers);
	unit_run("dcso: probes of \"foo\" (m 47, k 4) are the bits `bloom insert` set",
		 probes_match_the_reference_on_a_tiny_filter);
	unit_run("dcso: probes of \"foo\" (m 28755, k 20) are the bits `bloom insert` set",
		 probes_match_the_reference_with_k_20);
	unit_run("dcso: probes stay below the file's m; the rounded-up bits stay clear",
		 probes_stay_below_m);
	unit_run("dcso: m and k from n and p are those `bloom create` writes", sizing_matches_the_reference);
	unit_run("dcso: a saved filter is byte for byte what `bloom` writes; N counts new keys only",
		 writes_the_reference_bytes);
	unit_run("dcso: a plain file round-trips: params, N, every bit", a_plain_file_round_trips);
	unit_run("dcso: a gzipped file round-trips: params, N, every bit", a_gzipped_file_round_trips);
	unit_run("dcso: data after the bits (kept and written back), and several gzip members, are read",
		 data_after_the_bits_and_gzip_members_are_read);
	unit_run("dcso: each bad header field is refused by name", bad_header_fields_are_named);
	unit_run("dcso: filters combine only with the same n, p, m and k, as DCSO's join",
		 dcso_filters_combine_only_with_the_same_dimensions);
	unit_run("dcso: truncation, bits past m, a bad CRC and trailing junk are refused",
		 short_and_damaged_files_are_refused);
	unit_run("dcso: detection tells DCSO, plain or gzipped, from our files and text",
		 detection_reads_only_what_it_needs);
	unit_run("dcso: a file read from a pipe loads as from a file", a_pipe_is_read_like_a_file);
	unit_run("dcso: format_save and format_open refuse a DCSO filter",
		 our_format_refuses_to_stream_or_save_dcso);
	unit_run("dcso: params check accepts the DCSO layout only with FNV-1, no flags, m rounded",
		 params_check_keeps_dcso_apart);
	unit_run("dcso: the memory limit refuses a big DCSO filter before reading its bits",
		 the_memory_limit_applies);
	unlink(tmp_file());
	rmdir(tmpdir);
}
