/* SPDX-License-Identifier: MIT */
/*
 * test_format.c - the filter file and atomic replacement: round trips of
 * both layouts, compression of sparse and dense filters, every kind of
 * damage a file can suffer (cut short, bytes flipped, bytes appended, each
 * header field out of range), and saves that fail or are interrupted.
 *
 * Bad files are built here byte by byte and gzipped with zlib, so each
 * rejection is proved against content that differs from a valid file in
 * one field only (craft_loads_when_untouched proves the baseline loads).
 * Everything is seeded: every run sees the same bits.
 */
#define _GNU_SOURCE	/* O_DIRECT, to see what the direct saves did */
#define ZLIB_CONST
#include <zlib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "atomic.h"
#include "bytes.h"
#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "gzindex.h"
#include "gzout.h"
#include "pgzip.h"
#include "pipeline.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[256];
static char pathbuf[512];

static uint64_t rng_state;

static uint64_t rng(void)
{
	return unit_splitmix64(&rng_state);
}

static const char *tmp_path(const char *name)
{
	snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
	return pathbuf;
}

/* FILL_UNTOUCHED: as the filter comes, its pages never written (FILL_EMPTY writes its zeros) */
enum fill { FILL_EMPTY, FILL_SPARSE, FILL_HALF, FILL_UNTOUCHED };

static void fill_words(uint64_t *w, uint64_t nwords, enum fill fill)
{
	if (fill == FILL_UNTOUCHED)
		return;
	memset(w, 0, nwords * 8);
	if (fill == FILL_HALF)
		for (uint64_t i = 0; i < nwords; i++)
			w[i] = rng();
	if (fill == FILL_SPARSE)	/* about 1% of the bits */
		for (uint64_t i = 0; i < nwords * 64 / 100; i++) {
			uint64_t bit = rng() % (nwords * 64);

			w[bit / 64] |= UINT64_C(1) << (bit % 64);
		}
}

static struct filter *make_filter(enum filter_layout layout, uint64_t m, enum fill fill)
{
	struct filter_params p = { 0 };
	struct filter *f;
	const char *why;

	p.layout = layout;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 7;
	p.m = m;
	p.capacity = 1000 + m / 10;
	p.target_p = 0.01;
	for (size_t i = 0; i < sizeof p.key; i++)
		p.key[i] = (unsigned char)rng();
	f = filter_new(&p, &why);
	if (f == NULL)
		return NULL;
	f->insertions = rng() >> 20;
	fill_words(f->words, m / 64, fill);
	return f;
}

static int same_filter(const struct filter *a, const struct filter *b)
{
	const struct filter_params *x = &a->params, *y = &b->params;

	return x->layout == y->layout && x->hash == y->hash && x->flags == y->flags
	       && x->k == y->k && x->m == y->m && x->capacity == y->capacity
	       && x->target_p == y->target_p && memcmp(x->key, y->key, 16) == 0
	       && a->insertions == b->insertions
	       && a->sipkey.k0 == b->sipkey.k0 && a->sipkey.k1 == b->sipkey.k1
	       && memcmp(a->words, b->words, x->m / 8) == 0;
}

/* A fixed cascade holding f (taken over), as bfbuild makes one. */
static struct cascade *wrap(struct filter *f)
{
	const char *why;
	struct cascade *c;

	if (f == NULL)
		return NULL;
	c = cascade_from_stages(&f, 1, 0, 0, f->params.capacity, f->params.target_p, &why);
	if (c == NULL)
		filter_free(f);
	return c;
}

static struct cascade *make_fixed(enum filter_layout layout, uint64_t m, enum fill fill)
{
	return wrap(make_filter(layout, m, fill));
}

static int same_cascade(const struct cascade *a, const struct cascade *b)
{
	if (a->nstages != b->nstages || a->growth != b->growth || a->tighten != b->tighten
	    || a->capacity != b->capacity || a->target_p != b->target_p)
		return 0;
	for (size_t i = 0; i < a->nstages; i++)
		if (!same_filter(a->stages[i], b->stages[i]))
			return 0;
	return 1;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	*len = buf ? (size_t)read(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	return buf;
}

static int spew(const char *path, const unsigned char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && write(fd, data, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* Load a file image; NULL if it loaded (and was freed), else the message. */
static const char *load_error(const unsigned char *data, size_t len)
{
	const char *why = NULL, *path = tmp_path("image.bf");
	struct cascade *c;

	if (spew(path, data, len) < 0)
		return "test: cannot write image";
	c = format_load_path(path, &why);
	if (c != NULL) {
		cascade_free(c);
		return NULL;
	}
	return why;
}

/* Entries of tmpdir whose name starts with '.', other than . and .. */
static int count_hidden(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

/* gzip data into a new buffer (no header CRC, as plain gzip(1) writes). */
static unsigned char *gzip_bytes(const unsigned char *data, size_t len, size_t *outlen)
{
	z_stream zs;
	unsigned char *out;

	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	out = malloc(deflateBound(&zs, len) + 16);
	zs.next_in = data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)deflateBound(&zs, len) + 16;
	if (out == NULL || deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return NULL;
	}
	*outlen = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static void put_le(unsigned char *p, uint64_t v, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t double_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

/* ---- crafted content: a valid 512-bit filter, built by hand ------------- */

#define CRAFT_LEN (64 + 64 + 64)

static void craft_valid(unsigned char c[CRAFT_LEN])
{
	static const unsigned char magic[8] = { 0x89, 'B', 'F', 'T', '\r', '\n', 0x1a, '\n' };

	memset(c, 0, CRAFT_LEN);
	memcpy(c, magic, 8);
	put_le(c + 8, 1, 4);		/* version */
	put_le(c + 12, 64, 4);		/* header length */
	put_le(c + 16, 1, 4);		/* stages */
	c[20] = 2;			/* SipHash-1-3 */
	c[21] = 1;			/* case folded */
	for (int i = 0; i < 16; i++)
		c[24 + i] = (unsigned char)(i * 17);
	put_le(c + 40, 50, 8);
	put_le(c + 48, double_bits(0.001), 8);
	c[64] = 2;			/* classic */
	put_le(c + 64 + 4, 9, 4);	/* k */
	put_le(c + 64 + 8, 512, 8);	/* m */
	put_le(c + 64 + 16, 50, 8);
	put_le(c + 64 + 24, double_bits(0.001), 8);
	put_le(c + 64 + 32, 42, 8);	/* insertions */
	put_le(c + 64 + 40, 64, 8);	/* payload length */
	for (int i = 0; i < 64; i++)
		c[128 + i] = (unsigned char)(i * 37 + 5);
}

/*
 * A valid growing filter of GROW_STAGES stages of 512 bits: growth 2,
 * tighten 1, capacity 50, P = 0.001, so stage i has capacity 50 * 2^i and
 * rate P/2 * 2^-i, computed as cascade.c computes it.
 */
#define GROW_STAGES 3u
#define GROW_LEN (64 + GROW_STAGES * (64 + 64))
#define GROW_STAGE(i) (64 + 64 * (i))	/* offset of stage i's header */

static double series_rate(double target, unsigned tighten, unsigned i)
{
	return ldexp(target * -expm1(-(double)tighten * M_LN2), -(int)(tighten * i));
}

static void craft_growing(unsigned char c[GROW_LEN])
{
	unsigned char fixed[CRAFT_LEN];

	craft_valid(fixed);
	memset(c, 0, GROW_LEN);
	memcpy(c, fixed, 64);
	put_le(c + 16, GROW_STAGES, 4);
	c[56] = 2;			/* growth */
	c[57] = 1;			/* tighten */
	for (unsigned i = 0; i < GROW_STAGES; i++) {
		unsigned char *s = c + GROW_STAGE(i);

		memcpy(s, fixed + 64, 64);
		put_le(s + 16, UINT64_C(50) << i, 8);
		put_le(s + 24, double_bits(series_rate(0.001, 1, i)), 8);
		memcpy(c + 64 + 64 * GROW_STAGES + 64 * i, fixed + 128, 64);
	}
}

enum craft { CRAFT_FIXED, CRAFT_GROWING };

/* Content of the given kind into c (GROW_LEN bytes of room); returns its length. */
static size_t craft(enum craft kind, unsigned char *c)
{
	if (kind == CRAFT_FIXED) {
		craft_valid(c);
		return CRAFT_LEN;
	}
	craft_growing(c);
	return GROW_LEN;
}

/* gzip content and load it: NULL if it loads, else the message. */
static const char *content_error(const unsigned char *c, size_t len)
{
	unsigned char *gz;
	const char *why;
	size_t gzlen;

	gz = gzip_bytes(c, len, &gzlen);
	if (gz == NULL)
		return "test: gzip failed";
	why = load_error(gz, gzlen);
	free(gz);
	return why;
}

/* The message for crafted content with one field changed; NULL if it loads. */
static const char *crafted_error_in(enum craft kind, unsigned off, unsigned width, uint64_t value)
{
	unsigned char c[GROW_LEN];
	size_t len = craft(kind, c);

	put_le(c + off, value, width);
	return content_error(c, len);
}

struct field_case {
	unsigned off, width;
	uint64_t value;
	const char *expect;
};

static int run_cases_in(enum craft kind, const struct field_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *why = crafted_error_in(kind, cases[i].off, cases[i].width, cases[i].value);

		if (why == NULL || strcmp(why, cases[i].expect) != 0) {
			printf("#   offset %u = %llu: got \"%s\", want \"%s\"\n", cases[i].off,
			       (unsigned long long)cases[i].value, why ? why : "(loaded)",
			       cases[i].expect);
			return -1;
		}
	}
	return 0;
}

static int run_field_cases(const struct field_case *cases, size_t n)
{
	return run_cases_in(CRAFT_FIXED, cases, n);
}

/* A small saved file (m = 512): its bytes in a new buffer. */
static unsigned char *small_file(enum fill fill, size_t *len)
{
	struct cascade *c = make_fixed(FILTER_BLOCKED, 512, fill);
	const char *why, *path = tmp_path("small.bf");
	int ret = c ? format_save_path(c, path, &why) : -1;

	cascade_free(c);
	return ret == 0 ? slurp(path, len) : NULL;
}

/* ---- round trips ------------------------------------------------------ */

static int round_trip(const struct cascade *c, const char *name)
{
	const char *why, *path = tmp_path(name);
	struct cascade *g;
	int same;

	if (format_save_path(c, path, &why) < 0) {
		printf("#   save: %s\n", why);
		return 0;
	}
	g = format_load_path(path, &why);
	if (g == NULL) {
		printf("#   load: %s\n", why);
		return 0;
	}
	same = same_cascade(c, g);
	cascade_free(g);
	return same;
}

/*
 * A key kept outside: the file holds its fingerprint, never the key (no
 * byte run of the key appears in the content); the loaded filter needs the
 * key, refuses another, and with it is the filter that was saved.
 */
static void an_external_key_is_never_written(void)
{
	struct cascade *c = make_fixed(FILTER_BLOCKED, 4096, FILL_SPARSE), *g;
	unsigned char key[16], wrong[16], content[4096 + 256];
	const char *why, *path = tmp_path("external.bf");
	char command[600];
	size_t len;
	FILE *in;

	CHECK(c != NULL);
	memcpy(key, c->stages[0]->params.key, 16);
	c->stages[0]->params.flags |= FILTER_KEY_EXTERNAL;
	CHECK(format_save_path(c, path, &why) == 0);
	snprintf(command, sizeof command, "gzip -dc < '%s'", path);
	in = popen(command, "r");
	CHECK(in != NULL);
	len = fread(content, 1, sizeof content, in);
	pclose(in);
	CHECK(len > 64);
	for (size_t i = 0; i + 4 <= len; i++)
		CHECKF(memcmp(content + i, key, 4) != 0 && memcmp(content + i, key + 12, 4) != 0,
		       "key bytes at content offset %zu", i);
	g = format_load_path(path, &why);
	CHECK(g != NULL && cascade_needs_key(g));
	CHECK(cascade_params(g)->fingerprint == filter_key_fingerprint(key));
	memcpy(wrong, key, 16);
	wrong[5] ^= 0x10;
	CHECK(cascade_supply_key(g, wrong, &why) < 0);
	CHECK(cascade_supply_key(g, key, &why) == 0 && !cascade_needs_key(g));
	CHECK(same_cascade(c, g));
	cascade_free(c);
	cascade_free(g);
}

static void blocked_round_trips(void)
{
	struct cascade *c;

	rng_state = 1;
	c = make_fixed(FILTER_BLOCKED, 512 * 1000, FILL_HALF);
	CHECK(c != NULL);
	CHECK(round_trip(c, "blocked.bf"));
	cascade_free(c);
}

static void classic_round_trips(void)
{
	struct cascade *c;

	rng_state = 2;
	c = make_fixed(FILTER_CLASSIC, 512 * 999, FILL_SPARSE);
	CHECK(c != NULL);
	CHECK(round_trip(c, "classic.bf"));
	cascade_free(c);
}

static void hash_and_flags_round_trip(void)
{
	struct filter *f;
	struct cascade *c;

	rng_state = 3;
	f = make_filter(FILTER_CLASSIC, 512, FILL_HALF);
	CHECK(f != NULL);
	f->params.hash = FILTER_SIPHASH_2_4;
	f->params.flags = FILTER_FOLD_CASE;
	f->params.k = FILTER_K_MAX;
	f->params.capacity = UINT64_MAX;
	f->params.target_p = 0x1p-1074;	/* smallest subnormal: all 64 bits kept */
	f->insertions = UINT64_MAX;
	c = wrap(f);
	CHECK(c != NULL);
	CHECK(round_trip(c, "params.bf"));
	cascade_free(c);
}

/*
 * Chunks (1 MiB each) that force a change of compression level at almost
 * every boundary, plus a last partial chunk: the stream must stay valid
 * across every deflateParams switch.
 */
static void mixed_chunks_round_trip(void)
{
	static const enum fill pattern[] = { FILL_HALF, FILL_SPARSE, FILL_HALF, FILL_EMPTY,
					     FILL_HALF, FILL_HALF, FILL_SPARSE, FILL_EMPTY, FILL_HALF };
	uint64_t chunk_words = (1u << 20) / 8, n = sizeof pattern / sizeof pattern[0];
	struct filter *f;
	struct cascade *c;

	rng_state = 4;
	f = make_filter(FILTER_BLOCKED, (n - 1) * chunk_words * 64 + 512 * 3, FILL_EMPTY);
	CHECK(f != NULL);
	for (uint64_t i = 0; i < n - 1; i++)
		fill_words(f->words + i * chunk_words, chunk_words, pattern[i]);
	fill_words(f->words + (n - 1) * chunk_words, 8 * 3, FILL_HALF);
	memset(f->words + 3 * chunk_words + 100, 0xff, 4096);	/* a dense patch in an empty chunk */
	c = wrap(f);
	CHECK(c != NULL);
	CHECK(round_trip(c, "mixed.bf"));
	cascade_free(c);
}

static void same_filter_same_bytes(void)
{
	unsigned char *a, *b;
	size_t alen = 0, blen = 0;

	rng_state = 5;
	a = small_file(FILL_HALF, &alen);
	rng_state = 5;
	b = small_file(FILL_HALF, &blen);
	CHECK(a != NULL && b != NULL);
	CHECK(alen == blen && memcmp(a, b, alen) == 0);
	free(a);
	free(b);
}

static void gzip_header_is_checked_and_fixed(void)
{
	unsigned char *c;
	size_t len = 0;

	rng_state = 6;
	c = small_file(FILL_HALF, &len);
	CHECK(c != NULL && len > 20);
	CHECK(c[0] == 0x1f && c[1] == 0x8b && c[2] == 8);
	CHECK(c[3] == 0x06);			/* FHCRC, and FEXTRA for the statistics alone */
	CHECK(c[12] == 'B' && c[13] == 'S');	/* too small for an index of pieces */
	CHECK(c[4] == 0 && c[5] == 0 && c[6] == 0 && c[7] == 0);	/* mtime */
	CHECK(c[9] == 3);			/* OS: Unix */
	free(c);
}

/* Sizes on disk against memory, for 1%-full and half-full filters of 4 MiB. */
static uint64_t saved_size(enum fill fill, const char *name)
{
	struct cascade *c = make_fixed(FILTER_BLOCKED, UINT64_C(1) << 25, fill);
	const char *why, *path = tmp_path(name);
	struct stat st;
	int ret = c ? format_save_path(c, path, &why) : -1;

	cascade_free(c);
	if (ret < 0 || stat(path, &st) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

static void sparse_filter_shrinks(void)
{
	uint64_t mem = (UINT64_C(1) << 25) / 8, disk;

	rng_state = 7;
	disk = saved_size(FILL_SPARSE, "sparse.bf");
	printf("# 1%%-full filter: %llu bytes in memory, %llu on disk (%.1fx smaller)\n",
	       (unsigned long long)mem, (unsigned long long)disk, (double)mem / (double)disk);
	CHECK(disk > 0);
	CHECK(disk * 5 <= mem);
}

static void dense_filter_stays_its_size(void)
{
	uint64_t mem = (UINT64_C(1) << 25) / 8, disk;

	rng_state = 8;
	disk = saved_size(FILL_HALF, "dense.bf");
	printf("# half-full filter: %llu bytes in memory, %llu on disk (+%.3f%%)\n",
	       (unsigned long long)mem, (unsigned long long)disk,
	       100.0 * ((double)disk - (double)mem) / (double)mem);
	CHECK(disk > 0);
	/* stored blocks: 5 bytes per 64 KiB, plus headers and the gzip frame */
	CHECK(disk <= mem + mem / 1000 + 256);
}

/* ---- streams ---------------------------------------------------------- */

/* Fork a child that saves c into a pipe; returns the read end. */
static int save_through_pipe(const struct cascade *c, pid_t *child)
{
	int fds[2];
	const char *why;

	if (pipe(fds) < 0)
		return -1;
	*child = fork();
	if (*child == 0) {
		close(fds[0]);
		_exit(format_save(c, fds[1], &why) == 0 ? 0 : 1);
	}
	close(fds[1]);
	return fds[0];
}

static int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return status;
}

static void loads_from_standard_input(void)
{
	struct cascade *f, *g;
	const char *why = "";
	int fd, saved_stdin = dup(STDIN_FILENO);
	pid_t pid;

	rng_state = 9;
	f = make_fixed(FILTER_CLASSIC, UINT64_C(1) << 24, FILL_HALF);	/* 2 MiB: many pipe fills */
	CHECK(f != NULL && saved_stdin >= 0);
	fd = save_through_pipe(f, &pid);
	CHECK(fd >= 0 && pid > 0);
	dup2(fd, STDIN_FILENO);
	close(fd);
	g = format_load_path("-", &why);
	dup2(saved_stdin, STDIN_FILENO);
	close(saved_stdin);
	CHECK(child_status(pid) == 0);
	CHECKF(g != NULL, "%s", why);
	CHECK(same_cascade(f, g));
	cascade_free(f);
	cascade_free(g);
}

static void save_reports_a_full_disk(void)
{
	struct cascade *f;
	const char *why = "";
	int fd = open("/dev/full", O_WRONLY);

	rng_state = 10;
	f = make_fixed(FILTER_BLOCKED, 512 * 64, FILL_HALF);
	CHECK(f != NULL && fd >= 0);
	CHECK(format_save(f, fd, &why) == -1);
	CHECKF(strcmp(why, strerror(ENOSPC)) == 0, "got \"%s\"", why);
	close(fd);
	cascade_free(f);
}

/* ---- rejections: whole files ------------------------------------------ */

static void rejects_an_empty_file(void)
{
	const char *why = load_error((const unsigned char *)"", 0);

	CHECK(why != NULL && strcmp(why, "empty file") == 0);
}

static void rejects_plain_text(void)
{
	static const char text[] = "apple\nbanana\ncherry\n";
	const char *why = load_error((const unsigned char *)text, sizeof text - 1);

	CHECK(why != NULL && strcmp(why, "not a bftools filter (not gzip data)") == 0);
	why = load_error((const unsigned char *)"\x1f", 1);
	CHECK(why != NULL && strcmp(why, "truncated") == 0);
}

static void rejects_zlib_and_foreign_gzip(void)
{
	static const unsigned char hello[] = "hello, world\n";
	unsigned char z[64], *gz;
	uLongf zlen = sizeof z;
	size_t len;
	const char *why;

	CHECK(compress(z, &zlen, hello, sizeof hello - 1) == Z_OK);	/* 78 9c ... */
	why = load_error(z, zlen);
	CHECK(why != NULL && strcmp(why, "not a bftools filter (not gzip data)") == 0);
	gz = gzip_bytes(hello, sizeof hello - 1, &len);
	CHECK(gz != NULL);
	why = load_error(gz, len);
	CHECKF(why != NULL && strcmp(why, "not a bftools filter (bad magic)") == 0, "got %s", why);
	free(gz);
	gz = gzip_bytes(hello, 3, &len);	/* a whole member, shorter than the magic */
	CHECK(gz != NULL);
	why = load_error(gz, len);
	CHECKF(why != NULL && strcmp(why, "not a bftools filter (bad magic)") == 0, "got %s", why);
	free(gz);
}

static void rejects_every_truncation(void)
{
	unsigned char *c;
	size_t len = 0;

	rng_state = 11;
	c = small_file(FILL_HALF, &len);
	CHECK(c != NULL);
	CHECK(load_error(c, len) == NULL);
	for (size_t cut = 0; cut < len; cut++) {
		const char *why = load_error(c, cut);
		const char *want = cut == 0 ? "empty file" : "truncated";

		CHECKF(why != NULL && strcmp(why, want) == 0, "cut at %zu of %zu: got \"%s\"", cut,
		       len, why ? why : "(loaded)");
	}
	free(c);
}

/* Every byte XOR 0xff and XOR 0x01 must fail: gzip's header CRC covers the header. */
/*
 * Every byte XOR 0xff and XOR 0x01: the file must fail to load, or load
 * as exactly the same filter. Loading the same filter is possible where a
 * flip re-encodes the same bytes: deflate's fill bits, or a match inside a
 * run of zero bytes whose distance 1 becomes 2 (it copies the same zeros,
 * so content and CRC agree). What must never happen is another filter.
 */
static void flip_bytes(enum fill fill, unsigned seed)
{
	static const unsigned char masks[] = { 0xff, 0x01 };
	const char *why, *path = tmp_path("flipbytes.bf");
	struct cascade *orig, *g;
	unsigned char *c;
	size_t len = 0, same = 0;

	rng_state = seed;
	c = small_file(fill, &len);
	CHECK(c != NULL && spew(path, c, len) == 0);
	orig = format_load_path(path, &why);
	CHECK(orig != NULL);
	for (size_t i = 0; i < len; i++) {
		for (size_t j = 0; j < sizeof masks; j++) {
			c[i] ^= masks[j];
			g = spew(path, c, len) == 0 ? format_load_path(path, &why) : NULL;
			c[i] ^= masks[j];
			if (g == NULL)
				continue;
			same++;
			CHECKF(same_cascade(orig, g), "byte %zu of %zu ^ 0x%02x loads as another filter",
			       i, len, masks[j]);
			cascade_free(g);
		}
	}
	printf("# %zu of %zu byte flips load, all as the same filter\n", same, 2 * len);
	cascade_free(orig);
	free(c);
}

static void rejects_every_byte_flipped_dense(void)
{
	flip_bytes(FILL_HALF, 12);
}

static void rejects_every_byte_flipped_sparse(void)
{
	flip_bytes(FILL_SPARSE, 13);
}

/*
 * The stronger property: whatever single bit is flipped, the file either
 * fails to load or loads as exactly the same filter. Bits that may flip
 * silently are deflate's fill bits up to a byte boundary, which inflate
 * skips, and the few that re-encode the same bytes (see flip_bytes).
 */
static void no_bit_flip_changes_the_filter(void)
{
	unsigned char *c;
	const char *why, *path = tmp_path("flip.bf");
	struct cascade *orig, *g;
	size_t len = 0, silent = 0;

	rng_state = 14;
	c = small_file(FILL_HALF, &len);
	CHECK(c != NULL && spew(path, c, len) == 0);
	orig = format_load_path(path, &why);
	CHECK(orig != NULL);
	for (size_t bit = 0; bit < len * 8; bit++) {
		c[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		g = spew(path, c, len) == 0 ? format_load_path(path, &why) : NULL;
		c[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		if (g == NULL)
			continue;
		silent++;
		printf("# byte %zu bit %zu flips silently (deflate fill bit)\n", bit / 8, bit % 8);
		CHECKF(same_cascade(orig, g), "byte %zu bit %zu loads as another filter", bit / 8,
		       bit % 8);
		cascade_free(g);
	}
	printf("# %zu of %zu single-bit flips load, all as the same filter\n", silent, len * 8);
	cascade_free(orig);
	free(c);
}

static void reports_checksum_and_length_mismatch(void)
{
	unsigned char *c;
	const char *why;
	size_t len = 0;

	rng_state = 15;
	c = small_file(FILL_HALF, &len);
	CHECK(c != NULL);
	c[len - 8] ^= 1;	/* CRC-32 of the content */
	why = load_error(c, len);
	CHECK(why != NULL && strcmp(why, "corrupt: checksum mismatch") == 0);
	c[len - 8] ^= 1;
	c[len - 4] ^= 1;	/* ISIZE */
	why = load_error(c, len);
	CHECK(why != NULL && strcmp(why, "corrupt: length mismatch") == 0);
	c[len - 4] ^= 1;
	c[4] ^= 1;		/* mtime, covered by the header CRC only */
	why = load_error(c, len);
	CHECK(why != NULL && strcmp(why, "corrupt: header checksum mismatch") == 0);
	free(c);
}

static void rejects_bytes_after_the_member(void)
{
	unsigned char *c;
	const char *why;
	size_t len = 0;

	rng_state = 16;
	c = small_file(FILL_HALF, &len);
	CHECK(c != NULL);
	c = realloc(c, 2 * len);
	CHECK(c != NULL);
	c[len] = '\n';
	why = load_error(c, len + 1);
	CHECK(why != NULL && strcmp(why, "trailing data after the filter") == 0);
	memcpy(c + len, c, len);	/* a second, valid, member */
	why = load_error(c, 2 * len);
	CHECK(why != NULL && strcmp(why, "trailing data after the filter") == 0);
	free(c);
}

static void rejects_content_longer_or_shorter_than_its_header(void)
{
	unsigned char c[CRAFT_LEN + 1], *gz;
	const char *why;
	size_t len;

	craft_valid(c);
	c[CRAFT_LEN] = 0;
	gz = gzip_bytes(c, CRAFT_LEN + 1, &len);
	CHECK(gz != NULL);
	why = load_error(gz, len);
	CHECK(why != NULL && strcmp(why, "trailing data inside the filter") == 0);
	free(gz);
	gz = gzip_bytes(c, CRAFT_LEN - 1, &len);
	CHECK(gz != NULL);
	why = load_error(gz, len);
	CHECK(why != NULL && strcmp(why, "truncated") == 0);
	free(gz);
	gz = gzip_bytes(c, 100, &len);	/* inside the stage header */
	CHECK(gz != NULL);
	why = load_error(gz, len);
	CHECK(why != NULL && strcmp(why, "truncated") == 0);
	free(gz);
}

/* ---- rejections: header fields ---------------------------------------- */

static void craft_loads_when_untouched(void)
{
	unsigned char c[CRAFT_LEN], *gz;
	const char *why = "";
	struct cascade *cc;
	struct filter *f;
	size_t len;

	craft_valid(c);
	gz = gzip_bytes(c, sizeof c, &len);
	CHECK(gz != NULL && spew(tmp_path("craft.bf"), gz, len) == 0);
	cc = format_load_path(tmp_path("craft.bf"), &why);
	CHECKF(cc != NULL, "%s", why);
	CHECK(cc->nstages == 1 && cc->growth == 0 && cc->tighten == 0);
	CHECK(cc->capacity == 50 && cc->target_p == 0.001);
	f = cc->stages[0];
	CHECK(f->params.layout == FILTER_CLASSIC && f->params.hash == FILTER_SIPHASH_1_3);
	CHECK(f->params.flags == FILTER_FOLD_CASE && f->params.k == 9 && f->params.m == 512);
	CHECK(f->params.capacity == 50 && f->params.target_p == 0.001 && f->insertions == 42);
	CHECK(f->params.key[15] == 15 * 17 && memcmp(f->words, c + 128, 64) == 0);
	CHECK(f->words[0] == UINT64_C(0x08e3be99744f2a05));	/* bytes 05 2a 4f ... 08 */
	cascade_free(cc);
	free(gz);
}

static void rejects_bad_magic_and_versions(void)
{
	static const struct field_case cases[] = {
		{ 0, 1, 0x88, "not a bftools filter (bad magic)" },
		{ 4, 1, '\n', "not a bftools filter (bad magic)" },
		{ 7, 1, '\r', "not a bftools filter (bad magic)" },
		{ 8, 4, 2, "bad header: file header length is not 128" },	/* 2: windowed */
		{ 8, 4, 3, "unsupported format version 3" },
		{ 8, 4, 0, "unsupported format version 0" },
		{ 8, 4, 7, "unsupported format version 7" },
		{ 12, 4, 128, "bad header: file header length is not 64" },
		{ 16, 4, 0, "bad header: stage count is not 1" },
		{ 16, 4, 2, "bad header: stage count is not 1" },
	};

	CHECK(run_field_cases(cases, sizeof cases / sizeof cases[0]) == 0);
}

static void rejects_unknown_ids_and_flags(void)
{
	static const struct field_case cases[] = {
		{ 20, 1, 0, "bad header: unknown hash function" },
		{ 20, 1, 3, "bad header: unknown hash function" },
		{ 21, 1, 4, "bad header: unknown key flags" },
		{ 21, 1, 0x81, "bad header: unknown key flags" },
		{ 64, 1, 0, "bad header: unknown layout" },
		{ 64, 1, 4, "bad header: unknown layout" },	/* 3 is counting */
	};

	CHECK(run_field_cases(cases, sizeof cases / sizeof cases[0]) == 0);
}

static void rejects_each_reserved_byte_non_zero(void)
{
	static const struct {
		unsigned from, to;
		const char *expect;
	} ranges[] = {
		{ 22, 24, "bad header: reserved field not zero" },
		{ 58, 64, "bad header: reserved field not zero" },
		{ 64 + 1, 64 + 4, "bad header: stage reserved field not zero" },
		{ 64 + 48, 64 + 64, "bad header: stage reserved field not zero" },
	};

	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
		for (unsigned off = ranges[r].from; off < ranges[r].to; off++) {
			struct field_case one = { off, 1, 0x40, ranges[r].expect };

			CHECK(run_field_cases(&one, 1) == 0);
		}
	}
}

static void rejects_k_and_m_out_of_range(void)
{
	static const struct field_case cases[] = {
		{ 64 + 4, 4, 0, "bad header: k out of range" },
		{ 64 + 4, 4, 65, "bad header: k out of range" },
		{ 64 + 4, 4, UINT32_MAX, "bad header: k out of range" },
		{ 64 + 8, 8, UINT64_C(1) << 62, "bad header: size (m) out of range" },
		{ 64 + 8, 8, (UINT64_C(1) << 46) + 512, "bad header: size (m) out of range" },
		{ 64 + 8, 8, 0, "bad header: size (m) out of range" },
		{ 64 + 8, 8, 1000, "bad header: size (m) not a multiple of 512" },
		{ 64 + 8, 8, 520, "bad header: size (m) not a multiple of 512" },
		{ 64 + 8, 8, 1024, "bad header: payload length is not m / 8" },
		{ 64 + 40, 8, 65, "bad header: payload length is not m / 8" },
		{ 64 + 40, 8, 0, "bad header: payload length is not m / 8" },
	};

	CHECK(run_field_cases(cases, sizeof cases / sizeof cases[0]) == 0);
}

static void rejects_bad_capacity_and_rate(void)
{
	static const char *file_rate = "bad header: target rate not in (0, 1)";
	const struct field_case cases[] = {
		{ 40, 8, 0, "bad header: capacity is zero" },
		{ 64 + 16, 8, 0, "bad header: stage capacity is zero" },
		{ 48, 8, double_bits(0.0), file_rate },
		{ 48, 8, double_bits(1.0), file_rate },
		{ 48, 8, double_bits(-0.5), file_rate },
		{ 48, 8, double_bits(INFINITY), file_rate },
		{ 48, 8, double_bits(NAN), file_rate },
		{ 64 + 24, 8, double_bits(2.0), "bad header: stage target rate not in (0, 1)" },
		{ 40, 8, 51, "inconsistent header: file and stage capacity or rate differ" },
		{ 64 + 24, 8, double_bits(0.002),
		  "inconsistent header: file and stage capacity or rate differ" },
	};

	CHECK(run_field_cases(cases, sizeof cases / sizeof cases[0]) == 0);
}

/* ---- growing cascades ------------------------------------------------- */

/* One stage with its own bits: a filter_new'd filter, so its SipHash key is derived. */
static struct filter *make_stage(uint64_t m, const unsigned char key[16], uint64_t capacity,
				 double rate, enum fill fill)
{
	struct filter_params p = { 0 };
	struct filter *f;
	const char *why;

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_2_4;
	p.flags = FILTER_FOLD_CASE;
	p.k = 5;
	p.m = m;
	p.capacity = capacity;
	p.target_p = rate;
	memcpy(p.key, key, 16);
	f = filter_new(&p, &why);
	if (f == NULL)
		return NULL;
	f->insertions = rng() >> 20;
	fill_words(f->words, m / 64, fill);
	return f;
}

/*
 * A growing cascade put together stage by stage, as a file may hold one:
 * stage i has 512 * (i + 1) bits, capacity first * growth^i and the rate
 * of the series for P = 0.01. (The format does not tie m to capacity, so
 * 64 stages fit in a few hundred KiB.)
 */
static struct cascade *make_growing(size_t n, unsigned growth, unsigned tighten, uint64_t first)
{
	struct filter *stages[CASCADE_STAGES_MAX];
	unsigned char key[16];
	uint64_t capacity = first;
	const char *why;
	struct cascade *c;

	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (unsigned char)rng();
	for (size_t i = 0; i < n; i++, capacity *= growth) {
		stages[i] = make_stage(512 * (i + 1), key, capacity,
				       series_rate(0.01, tighten, (unsigned)i), FILL_HALF);
		if (stages[i] == NULL)
			return NULL;
	}
	c = cascade_from_stages(stages, n, growth, tighten, first, 0.01, &why);
	if (c == NULL)
		for (size_t i = 0; i < n; i++)
			filter_free(stages[i]);
	return c;
}

static void growing_one_stage_round_trips(void)
{
	struct cascade *c;

	rng_state = 30;
	c = make_growing(1, 2, 1, 1000);
	CHECK(c != NULL);
	CHECK(round_trip(c, "grow1.bf"));
	cascade_free(c);
}

/* keys "g<i>" for i in [0, n) */
static struct line *grow_keys(size_t n, char **text)
{
	struct line *keys = malloc(n * sizeof *keys);
	char *p = *text = malloc(n * 16);

	for (size_t i = 0; keys && p && i < n; i++) {
		keys[i].data = p;
		keys[i].len = (size_t)snprintf(p, 16, "g%zu", i);
		p += keys[i].len;
	}
	return keys;
}

/*
 * 5000 keys into a cascade whose first stage holds 1000: stages of 1000,
 * 2000 and 4000, the third holding about 2000. Loading estimates that
 * count from the fill; the standard error at 2000 keys is well under 2%,
 * so 10% is a bound no correct estimate misses.
 */
static void growing_three_stages_built_by_adding_round_trip(void)
{
	struct filter_params first = { 0 };
	const char *why = "";
	struct cascade *c, *g;
	char *text;
	struct line *keys = grow_keys(5000, &text);

	first.layout = FILTER_CLASSIC;
	first.hash = FILTER_SIPHASH_1_3;
	first.capacity = 1000;
	memcpy(first.key, "three-stage-test", 16);
	c = cascade_new_growing(&first, 0.001, 2, 1, &why);
	CHECKF(c != NULL && keys != NULL, "%s", why);
	CHECKF(cascade_add(c, keys, 5000, &why) == 0, "%s", why);
	CHECK(c->nstages == 3 && c->newest_keys > 1800 && c->newest_keys < 2200);
	CHECK(round_trip(c, "grow3.bf"));
	g = format_load_path(tmp_path("grow3.bf"), &why);
	CHECKF(g != NULL, "%s", why);
	CHECKF(fabs((double)g->newest_keys - (double)c->newest_keys) < 0.1 * (double)c->newest_keys,
	       "estimated %llu, exact %llu", (unsigned long long)g->newest_keys,
	       (unsigned long long)c->newest_keys);
	cascade_free(g);
	cascade_free(c);
	free(keys);
	free(text);
}

/* 64 stages: capacity 1 up to 2^63 (the largest without overflow), rate P(15/16) 2^-252 last. */
static void growing_sixty_four_stages_round_trip(void)
{
	struct cascade *c;

	rng_state = 31;
	c = make_growing(CASCADE_STAGES_MAX, 2, 4, 1);
	CHECK(c != NULL);
	CHECK(c->stages[63]->params.capacity == UINT64_C(1) << 63);
	CHECK(round_trip(c, "grow64.bf"));
	cascade_free(c);
}

static void rejects_bad_growth_and_tightening(void)
{
	static const char *growth = "bad header: growth factor out of range";
	static const char *tighten = "bad header: tightening out of range";
	static const struct field_case fixed[] = {
		{ 56, 1, 1, "bad header: growth factor out of range" },
		{ 56, 1, 17, "bad header: growth factor out of range" },
		{ 57, 1, 1, "bad header: tightening not zero for a fixed filter" },
		{ 57, 1, 4, "bad header: tightening not zero for a fixed filter" },
	};
	const struct field_case growing[] = {
		{ 56, 1, 1, growth }, { 56, 1, 17, growth }, { 56, 1, 255, growth },
		{ 57, 1, 0, tighten }, { 57, 1, 5, tighten }, { 57, 1, 255, tighten },
	};

	CHECK(run_cases_in(CRAFT_FIXED, fixed, sizeof fixed / sizeof fixed[0]) == 0);
	CHECK(run_cases_in(CRAFT_GROWING, growing, sizeof growing / sizeof growing[0]) == 0);
}

static void rejects_bad_stage_counts(void)
{
	static const char *range = "bad header: stage count out of range 1..64";
	static const struct field_case fixed[] = {
		{ 16, 4, 2, "bad header: stage count is not 1" },
		{ 16, 4, 0, "bad header: stage count is not 1" },
	};
	const struct field_case growing[] = {
		{ 16, 4, 0, range }, { 16, 4, 65, range }, { 16, 4, UINT32_MAX, range },
	};

	CHECK(run_cases_in(CRAFT_FIXED, fixed, sizeof fixed / sizeof fixed[0]) == 0);
	CHECK(run_cases_in(CRAFT_GROWING, growing, sizeof growing / sizeof growing[0]) == 0);
}

static void rejects_stages_off_the_plan(void)
{
	static const char *cap0 = "bad header: stage 0 capacity does not follow the growth factor";
	static const char *rate0 = "bad header: stage 0 rate does not follow the series";
	const struct field_case cases[] = {
		{ GROW_STAGE(2) + 16, 8, 201,
		  "bad header: stage 2 capacity does not follow the growth factor" },
		{ GROW_STAGE(0) + 16, 8, 51, cap0 },
		{ 40, 8, 51, cap0 },	/* the file's capacity is stage 0's */
		{ 56, 1, 3, "bad header: stage 1 capacity does not follow the growth factor" },
		{ GROW_STAGE(1) + 24, 8, double_bits(series_rate(0.001, 1, 1) * (1 + 1e-8)),
		  "bad header: stage 1 rate does not follow the series" },
		{ GROW_STAGE(2) + 24, 8, double_bits(series_rate(0.001, 1, 1)),
		  "bad header: stage 2 rate does not follow the series" },
		{ 57, 1, 2, rate0 },
		{ 48, 8, double_bits(0.002), rate0 },
	};

	CHECK(run_cases_in(CRAFT_GROWING, cases, sizeof cases / sizeof cases[0]) == 0);
}

/* Other writers may round differently: a rate off by 1e-12 relative still loads. */
static void accepts_rates_within_the_tolerance(void)
{
	double rate = series_rate(0.001, 1, 2);

	CHECK(crafted_error_in(CRAFT_GROWING, GROW_STAGE(2) + 24, 8,
			       double_bits(rate * (1 + 1e-12))) == NULL);
	CHECK(crafted_error_in(CRAFT_GROWING, GROW_STAGE(2) + 24, 8,
			       double_bits(rate * (1 - 1e-12))) == NULL);
}

/*
 * Capacity 2^63 with growth 3: stage 1 would be 3 * 2^63, which wraps to
 * 2^63 in 64-bit arithmetic. A reader that multiplied without checking
 * would accept stages of 2^63, 2^63, 2^63.
 */
static void rejects_a_capacity_plan_that_overflows(void)
{
	unsigned char c[GROW_LEN];
	const char *why;

	craft_growing(c);
	c[56] = 3;
	put_le(c + 40, UINT64_C(1) << 63, 8);
	for (unsigned i = 0; i < GROW_STAGES; i++)
		put_le(c + GROW_STAGE(i) + 16, UINT64_C(1) << 63, 8);
	why = content_error(c, GROW_LEN);
	CHECKF(why != NULL
	       && strcmp(why, "bad header: stage 1 capacity does not follow the growth factor") == 0,
	       "got %s", why ? why : "(loaded)");
}

static void rejects_each_growing_reserved_byte_non_zero(void)
{
	for (unsigned off = 58; off < 64; off++) {
		struct field_case one = { off, 1, 1, "bad header: reserved field not zero" };

		CHECK(run_cases_in(CRAFT_GROWING, &one, 1) == 0);
	}
	for (unsigned off = GROW_STAGE(2) + 48; off < GROW_STAGE(3); off++) {
		struct field_case one = { off, 1, 1, "bad header: stage reserved field not zero" };

		CHECK(run_cases_in(CRAFT_GROWING, &one, 1) == 0);
	}
}

/* Three stages of 2^46 bits ask for 24 TiB, more than the 2^47 bits any real cascade needs. */
static void rejects_stages_too_large_in_total(void)
{
	unsigned char c[GROW_LEN];
	const char *why;

	craft_growing(c);
	for (unsigned i = 0; i < GROW_STAGES; i++) {
		put_le(c + GROW_STAGE(i) + 8, UINT64_C(1) << 46, 8);
		put_le(c + GROW_STAGE(i) + 40, UINT64_C(1) << 43, 8);
	}
	why = content_error(c, 64 + 64 * GROW_STAGES);	/* headers only: nothing is read after them */
	CHECKF(why != NULL && strcmp(why, "bad header: stages too large in total") == 0, "got %s",
	       why ? why : "(loaded)");
	put_le(c + GROW_STAGE(2) + 8, 512, 8);	/* 2^47 + 512 bits: still too much */
	put_le(c + GROW_STAGE(2) + 40, 64, 8);
	why = content_error(c, 64 + 64 * GROW_STAGES);
	CHECKF(why != NULL && strcmp(why, "bad header: stages too large in total") == 0, "got %s",
	       why ? why : "(loaded)");
}

/* The last stage header is bad and no payload follows: the header is what is reported. */
static void checks_every_stage_header_before_any_payload(void)
{
	unsigned char c[GROW_LEN];
	const char *why;

	craft_growing(c);
	c[GROW_STAGE(2)] = 9;	/* layout */
	why = content_error(c, 64 + 64 * GROW_STAGES);
	CHECKF(why != NULL && strcmp(why, "bad header: unknown layout") == 0, "got %s",
	       why ? why : "(loaded)");
}

static void growing_craft_loads_as_written(void)
{
	unsigned char c[GROW_LEN], *gz;
	const char *why = "";
	struct cascade *g;
	size_t len;

	craft_growing(c);
	gz = gzip_bytes(c, sizeof c, &len);
	CHECK(gz != NULL && spew(tmp_path("craftgrow.bf"), gz, len) == 0);
	free(gz);
	g = format_load_path(tmp_path("craftgrow.bf"), &why);
	CHECKF(g != NULL, "%s", why);
	CHECK(g->nstages == 3 && g->growth == 2 && g->tighten == 1);
	CHECK(g->capacity == 50 && g->target_p == 0.001);
	for (unsigned i = 0; i < GROW_STAGES; i++) {
		CHECK(g->stages[i]->params.capacity == UINT64_C(50) << i);
		CHECK(g->stages[i]->params.target_p == series_rate(0.001, 1, i));
		CHECK(memcmp(g->stages[i]->words, c + 64 + 64 * GROW_STAGES + 64 * i, 64) == 0);
	}
	cascade_free(g);
}

/* The writer runs the reader's checks first: what it would not load, it does not write. */
static void save_refuses_what_load_would_reject(void)
{
	const char *why = "", *path = tmp_path("offplan.bf");
	struct cascade *c;
	int fd;

	rng_state = 32;
	c = make_growing(3, 2, 1, 100);
	CHECK(c != NULL);
	c->stages[1]->params.capacity++;
	CHECK(format_save_path(c, path, &why) == -1);
	CHECKF(strcmp(why, "bad header: stage 1 capacity does not follow the growth factor") == 0,
	       "got %s", why);
	CHECK(access(path, F_OK) == -1 && count_hidden() == 0);
	c->stages[1]->params.capacity--;
	c->growth = 1;
	fd = open("/dev/null", O_WRONLY);
	CHECK(format_save(c, fd, &why) == -1);
	close(fd);
	CHECKF(strcmp(why, "bad header: growth factor out of range") == 0, "got %s", why);
	cascade_free(c);
}

/* ---- streaming -------------------------------------------------------- */

/* A 3-stage growing cascade saved to name; its payload bytes, as format_load sees them. */
static unsigned char *saved_growing(const char *name, size_t *payload_len)
{
	const char *why, *path = tmp_path(name);
	struct cascade *c, *g;
	unsigned char *bytes, *p;

	rng_state = 40;
	c = make_growing(3, 4, 2, 1000);
	if (c == NULL || format_save_path(c, path, &why) < 0)
		return NULL;
	cascade_free(c);
	g = format_load_path(path, &why);
	if (g == NULL)
		return NULL;
	*payload_len = (size_t)cascade_bytes(g);
	p = bytes = malloc(*payload_len);
	for (size_t s = 0; bytes && s < g->nstages; s++)
		for (uint64_t w = 0; w < g->stages[s]->params.m / 64; w++, p += 8)
			put_le(p, g->stages[s]->words[w], 8);
	cascade_free(g);
	return bytes;
}

/* Read the whole payload of fd in pieces of the given size into out. */
static int read_in_pieces(struct format_reader *r, unsigned char *out, size_t len, size_t piece,
			  const char **why)
{
	for (size_t done = 0; done < len; done += piece) {
		size_t n = len - done < piece ? len - done : piece;

		if (format_read(r, out + done, n, why) < 0)
			return -1;
	}
	return 0;
}

static int shape_is_bitless(const struct cascade *shape)
{
	for (size_t i = 0; i < shape->nstages; i++)
		if (shape->stages[i]->words != NULL)
			return 0;
	return 1;
}

static void streamed_pieces_match_load(void)
{
	static const size_t pieces[] = { 1, 7, 4096 };
	size_t len = 0;
	unsigned char *want = saved_growing("stream.bf", &len), *got;

	CHECK(want != NULL && (got = malloc(len)) != NULL);
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		const char *why = "";
		struct cascade *shape;
		int fd = open(tmp_path("stream.bf"), O_RDONLY);
		struct format_reader *r = format_open(fd, &shape, &why);

		CHECKF(r != NULL, "%s", why);
		CHECK(shape->nstages == 3 && shape->growth == 4 && shape->tighten == 2);
		CHECK(shape_is_bitless(shape) && shape->newest_keys == 0);
		CHECK(cascade_bytes(shape) == len);
		memset(got, 0xa5, len);
		CHECKF(read_in_pieces(r, got, len, pieces[i], &why) == 0, "%s", why);
		CHECKF(format_close(r, &why) == 0, "%s", why);
		CHECKF(memcmp(got, want, len) == 0, "pieces of %zu", pieces[i]);
		cascade_free(shape);
		close(fd);
	}
	free(got);
	free(want);
}

/* Open path for streaming; the caller frees *shape and closes *fd. */
static struct format_reader *open_stream(const char *path, int *fd, struct cascade **shape)
{
	const char *why;

	*fd = open(path, O_RDONLY);
	return *fd < 0 ? NULL : format_open(*fd, shape, &why);
}

static void reading_past_the_payload_is_an_error(void)
{
	size_t len = 0;
	unsigned char *want = saved_growing("past.bf", &len), *got;
	const char *why = "";
	struct cascade *shape;
	struct format_reader *r;
	int fd;

	CHECK(want != NULL && (got = malloc(len + 1)) != NULL);
	r = open_stream(tmp_path("past.bf"), &fd, &shape);
	CHECK(r != NULL);
	CHECK(format_read(r, got, len + 1, &why) == -1);	/* refused whole: nothing consumed */
	CHECK(strcmp(why, "read past the end of the payload") == 0);
	CHECKF(format_read(r, got, len, &why) == 0, "%s", why);
	CHECK(format_read(r, got + len, 1, &why) == -1);
	CHECK(strcmp(why, "read past the end of the payload") == 0);
	CHECKF(format_close(r, &why) == 0, "%s", why);	/* a refused read breaks nothing */
	CHECK(memcmp(got, want, len) == 0);
	cascade_free(shape);
	close(fd);
	free(got);
	free(want);
}

/* Stream the whole of a file image; the message of the first failure, or NULL. */
static const char *stream_error(const unsigned char *image, size_t len, size_t payload,
				int read_all)
{
	static char msg[128];
	const char *why = "", *path = tmp_path("damaged.bf");
	unsigned char *buf = malloc(payload);
	struct cascade *shape = NULL;
	struct format_reader *r;
	int fd;

	if (buf == NULL || spew(path, image, len) < 0)
		return "test: cannot write image";
	r = open_stream(path, &fd, &shape);
	if (r == NULL) {
		why = "open failed";
	} else if (read_all && read_in_pieces(r, buf, payload, 4096, &why) < 0) {
		snprintf(msg, sizeof msg, "read: %s", why);
		why = msg;
		format_abandon(r);
	} else if (format_close(r, &why) == 0) {
		why = NULL;
	}
	cascade_free(shape);
	close(fd);
	free(buf);
	return why;
}

static void close_checks_the_end_of_a_streamed_file(void)
{
	size_t payload = 0, len = 0;
	unsigned char *want = saved_growing("end.bf", &payload), *c = slurp(tmp_path("end.bf"), &len);
	const char *why;

	CHECK(want != NULL && c != NULL && (c = realloc(c, len + 1)) != NULL);
	CHECK(stream_error(c, len, payload, 1) == NULL);
	c[len - 8] ^= 1;	/* CRC-32 */
	why = stream_error(c, len, payload, 1);
	CHECKF(why && strcmp(why, "corrupt: checksum mismatch") == 0, "got %s", why);
	c[len - 8] ^= 1;
	c[len - 1] ^= 1;	/* ISIZE */
	why = stream_error(c, len, payload, 1);
	CHECKF(why && strcmp(why, "corrupt: length mismatch") == 0, "got %s", why);
	c[len - 1] ^= 1;
	c[len] = 0;
	why = stream_error(c, len + 1, payload, 1);
	CHECKF(why && strcmp(why, "trailing data after the filter") == 0, "got %s", why);
	why = stream_error(c, len, payload, 0);
	CHECKF(why && strcmp(why, "closed before the end of the payload") == 0, "got %s", why);
	free(c);
	free(want);
}

/* A file cut inside its payload: the read fails, and keeps failing the same way. */
static void a_truncated_stream_fails_on_read(void)
{
	size_t payload = 0, len = 0;
	unsigned char *want = saved_growing("cut.bf", &payload), *c = slurp(tmp_path("cut.bf"), &len);
	const char *why;

	CHECK(want != NULL && c != NULL);
	why = stream_error(c, len / 2, payload, 1);
	CHECKF(why && strcmp(why, "read: truncated") == 0, "got %s", why);
	why = stream_error(c, len - 4, payload, 1);	/* all payload there, trailer cut */
	CHECKF(why && strcmp(why, "truncated") == 0, "got %s", why);
	free(c);
	free(want);
}

static void open_rejects_what_load_rejects(void)
{
	unsigned char c[GROW_LEN], *gz;
	struct cascade *shape = (struct cascade *)1;
	const char *why = "";
	size_t len;
	int fd;

	craft_growing(c);
	c[56] = 17;
	gz = gzip_bytes(c, sizeof c, &len);
	CHECK(gz != NULL && spew(tmp_path("badopen.bf"), gz, len) == 0);
	free(gz);
	fd = open(tmp_path("badopen.bf"), O_RDONLY);
	CHECK(format_open(fd, &shape, &why) == NULL && shape == NULL);
	CHECK(strcmp(why, "bad header: growth factor out of range") == 0);
	close(fd);
}

/* A shape is headers only: freeing it is safe, saving it is refused. */
static void a_shape_frees_but_does_not_save(void)
{
	size_t len = 0;
	unsigned char *want = saved_growing("shape.bf", &len);
	struct cascade *shape;
	const char *why = "";
	int fd, null_fd = open("/dev/null", O_WRONLY);
	struct format_reader *r = open_stream(tmp_path("shape.bf"), &fd, &shape);

	CHECK(want != NULL && r != NULL && null_fd >= 0);
	CHECK(format_save(shape, null_fd, &why) == -1);
	CHECKF(strcmp(why, "a shape from format_open has no bits to save") == 0, "got %s", why);
	format_abandon(r);
	cascade_free(shape);
	close(fd);
	close(null_fd);
	free(want);
}

/* ---- atomic replacement ----------------------------------------------- */

static void save_replaces_and_keeps_mode(void)
{
	const char *why = "", *path = tmp_path("replace.bf");
	struct cascade *f, *g;
	struct stat st;

	CHECK(spew(path, (const unsigned char *)"old\n", 4) == 0 && chmod(path, 0640) == 0);
	rng_state = 20;
	f = make_fixed(FILTER_BLOCKED, 512 * 8, FILL_HALF);
	CHECK(f != NULL);
	CHECKF(format_save_path(f, path, &why) == 0, "%s", why);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	g = format_load_path(path, &why);
	CHECK(g != NULL && same_cascade(f, g));
	CHECK(count_hidden() == 0);
	cascade_free(f);
	cascade_free(g);
}

static void new_file_mode_follows_umask(void)
{
	const char *why = "", *path = tmp_path("fresh.bf");
	mode_t old = umask(027);
	struct cascade *f;
	struct stat st;
	int ret;

	rng_state = 21;
	f = make_fixed(FILTER_BLOCKED, 512, FILL_HALF);
	ret = f ? format_save_path(f, path, &why) : -1;
	umask(old);
	CHECKF(ret == 0, "%s", why);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	cascade_free(f);
}

static void save_into_missing_directory_fails_cleanly(void)
{
	const char *why = "";
	struct cascade *f;

	rng_state = 22;
	f = make_fixed(FILTER_BLOCKED, 512, FILL_HALF);
	CHECK(f != NULL);
	CHECK(format_save_path(f, tmp_path("no/such/dir/x.bf"), &why) == -1);
	CHECKF(strcmp(why, strerror(ENOENT)) == 0, "got \"%s\"", why);
	CHECK(count_hidden() == 0);
	CHECK(format_save_path(f, tmpdir, &why) == -1);	/* a directory is not a file */
	CHECK(count_hidden() == 0);
	cascade_free(f);
}

/* Make writes fail with EFBIG past 4 KiB, as a full disk would midway. */
static int save_with_file_size_limit(const struct cascade *f, const char *path, const char **why)
{
	struct rlimit old, small;
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	int ret;

	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &small);
	ret = format_save_path(f, path, why);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_xfsz);
	return ret;
}

static void failed_save_leaves_old_file(void)
{
	const char *why = "", *path = tmp_path("keep.bf");
	unsigned char *c;
	struct cascade *f;
	size_t len = 0;

	CHECK(spew(path, (const unsigned char *)"precious\n", 9) == 0);
	rng_state = 23;
	f = make_fixed(FILTER_BLOCKED, UINT64_C(1) << 20, FILL_HALF);	/* 128 KiB */
	CHECK(f != NULL);
	CHECK(save_with_file_size_limit(f, path, &why) == -1);
	CHECKF(strcmp(why, strerror(EFBIG)) == 0, "got \"%s\"", why);
	c = slurp(path, &len);
	CHECK(c != NULL && len == 9 && memcmp(c, "precious\n", 9) == 0);
	CHECK(count_hidden() == 0);
	f->stages[0]->params.k = 0;	/* refused before any file is touched */
	CHECK(format_save_path(f, path, &why) == -1);
	CHECK(count_hidden() == 0);
	free(c);
	cascade_free(f);
}

static void abort_removes_temp_and_is_repeatable(void)
{
	struct atomic_file af;
	const char *why = "";

	CHECKF(atomic_open(&af, tmp_path("aborted.bf"), &why) == 0, "%s", why);
	CHECK(count_hidden() == 1);
	atomic_abort(&af);
	atomic_abort(&af);
	CHECK(count_hidden() == 0);
	CHECK(access(tmp_path("aborted.bf"), F_OK) == -1);
}

/* In a child: register a temporary, then receive sig. Returns the wait status. */
static int child_with_pending_temp(int sig, int ignore_first)
{
	struct atomic_file af;
	const char *why;
	pid_t pid = fork();

	if (pid == 0) {
		unit_default_signal(sig);	/* not as the suite was started */
		if (ignore_first)
			signal(sig, SIG_IGN);
		atomic_remove_on_signals();
		if (atomic_open(&af, tmp_path("signalled.bf"), &why) < 0)
			_exit(2);
		raise(sig);
		atomic_abort(&af);
		_exit(0);
	}
	return pid > 0 ? child_status(pid) : -1;
}

static void signal_removes_pending_temp(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		int status = child_with_pending_temp(sigs[i], 0);

		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i], "signal %d", sigs[i]);
		CHECK(count_hidden() == 0);
	}
}

static void ignored_signal_stays_ignored(void)
{
	int status = child_with_pending_temp(SIGHUP, 1);

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(count_hidden() == 0);
}

/* A FIFO target is written in place (and read back through it), not replaced. */
static void fifo_target_is_written_in_place(void)
{
	const char *why = "", *path = tmp_path("fifo");
	struct cascade *f;
	struct stat st;
	pid_t pid;
	int saved;

	CHECK(mkfifo(path, 0600) == 0);
	rng_state = 24;
	f = make_fixed(FILTER_CLASSIC, UINT64_C(1) << 20, FILL_HALF);
	CHECK(f != NULL);
	pid = fork();
	if (pid == 0) {
		struct cascade *g = format_load_path(path, &why);
		int same = g != NULL && same_cascade(f, g);

		/* freed, so that valgrind's leak check passes the child too */
		cascade_free(g);
		cascade_free(f);
		_exit(same ? 0 : 1);
	}
	saved = format_save_path(f, path, &why) == 0;
	cascade_free(f);	/* before any CHECK returns: later forks inherit leaks */
	CHECKF(saved, "%s", why);
	CHECK(child_status(pid) == 0);
	CHECK(stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(count_hidden() == 0);
}

/* ---- saving on two threads (pgzip.c) ---------------------------------- */

/*
 * A save deflates each 1 MiB chunk of bits on its own, the calling thread
 * and a worker taking turns, and writes the pieces in order as one gzip
 * member. What must hold: the bytes depend on the filter only (not on the
 * thread count, not on timing), every density and size round-trips, and
 * the member is one that any gzip reader accepts whole. There is no
 * zero-bit payload to try: m is at least 512, so a stage holds 64 bytes or
 * more; a 0-byte pgzip piece is tried directly instead.
 */
#define CHUNK_BITS (UINT64_C(8) << 20)	/* bits in one 1 MiB compression chunk */
#define HEADERS_LEN(nstages) (64 + 64 * (uint64_t)(nstages))	/* file and stage headers */

static uint64_t get_le32(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

/* About percent% of the bits set: 1, 25, 50 or 100. */
static void fill_percent(uint64_t *w, uint64_t nwords, unsigned percent)
{
	if (percent == 1) {
		fill_words(w, nwords, FILL_SPARSE);
		return;
	}
	for (uint64_t i = 0; i < nwords; i++)
		w[i] = percent == 100 ? ~UINT64_C(0) : percent == 50 ? rng() : rng() & rng();
}

static struct cascade *make_percent(uint64_t m, unsigned percent)
{
	struct filter *f = make_filter(FILTER_BLOCKED, m, FILL_EMPTY);

	if (f != NULL)
		fill_percent(f->words, m / 64, percent);
	return wrap(f);
}

/* BFTOOLS_THREADS=threads for one save of c to name; the file's bytes, or NULL. */
static unsigned char *save_on(const struct cascade *c, const char *threads, const char *name,
			      size_t *len)
{
	const char *why, *path = tmp_path(name), *env = getenv("BFTOOLS_THREADS");
	char *old = env ? strdup(env) : NULL;
	int ret;

	setenv("BFTOOLS_THREADS", threads, 1);
	ret = format_save_path(c, path, &why);
	if (old != NULL)
		setenv("BFTOOLS_THREADS", old, 1);
	else
		unsetenv("BFTOOLS_THREADS");
	free(old);
	if (ret < 0) {
		printf("#   save: %s\n", why);
		return NULL;
	}
	return slurp(path, len);
}

/* c saved on one thread and on two: the same bytes, which load as c. */
static int same_bytes_on_one_and_two_threads(const struct cascade *c)
{
	size_t len1 = 0, len2 = 0;
	unsigned char *one = save_on(c, "1", "one.bf", &len1);
	unsigned char *two = save_on(c, "2", "two.bf", &len2);
	int same = one && two && len1 == len2 && memcmp(one, two, len1) == 0;
	const char *why;
	struct cascade *g = same ? format_load_path(tmp_path("two.bf"), &why) : NULL;

	if (!same)
		printf("#   one thread: %zu bytes, two: %zu bytes, differing\n", len1, len2);
	same = g != NULL && same_cascade(c, g);
	cascade_free(g);
	free(one);
	free(two);
	return same;
}

static void one_and_two_threads_write_the_same_bytes(void)
{
	static const unsigned percents[] = { 1, 25, 50, 100 };

	rng_state = 40;
	for (size_t i = 0; i < sizeof percents / sizeof percents[0]; i++) {
		struct cascade *c = make_percent(3 * CHUNK_BITS + 512, percents[i]);

		CHECK(c != NULL);
		CHECKF(same_bytes_on_one_and_two_threads(c), "%u%% full", percents[i]);
		cascade_free(c);
	}
}

static void two_saves_on_two_threads_are_the_same_bytes(void)
{
	size_t len1 = 0, len2 = 0;
	struct cascade *c;
	unsigned char *a, *b;

	rng_state = 41;
	c = make_percent(4 * CHUNK_BITS + 1024, 25);
	CHECK(c != NULL);
	a = save_on(c, "2", "first.bf", &len1);
	b = save_on(c, "2", "second.bf", &len2);
	CHECK(a != NULL && b != NULL);
	CHECK(len1 == len2 && memcmp(a, b, len1) == 0);
	free(a);
	free(b);
	cascade_free(c);
}

/* Every density at sizes on, just under and just over chunk boundaries. */
static void every_density_round_trips_across_chunk_boundaries(void)
{
	static const unsigned percents[] = { 1, 25, 50, 100 };
	const uint64_t sizes[] = { 512, CHUNK_BITS - 512, CHUNK_BITS, CHUNK_BITS + 512,
				   2 * CHUNK_BITS + 3 * 512 };

	rng_state = 42;
	for (size_t i = 0; i < sizeof percents / sizeof percents[0]; i++) {
		for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
			struct cascade *c = make_percent(sizes[j], percents[i]);

			CHECK(c != NULL);
			CHECKF(round_trip(c, "density.bf"), "%u%% full, m = %llu", percents[i],
			       (unsigned long long)sizes[j]);
			cascade_free(c);
		}
	}
}

/* Stage i: i + 1 chunks and 512 (i + 1) bits more, its density in turn 25, 1, 100, 50%. */
static struct cascade *make_growing_chunks(size_t n)
{
	static const unsigned percents[] = { 25, 1, 100, 50 };
	struct filter *stages[CASCADE_STAGES_MAX];
	unsigned char key[16];
	uint64_t capacity = 1000;
	const char *why;
	struct cascade *c;

	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (unsigned char)rng();
	for (size_t i = 0; i < n; i++, capacity *= 2) {
		uint64_t m = (i + 1) * (CHUNK_BITS + 512);

		stages[i] = make_stage(m, key, capacity, series_rate(0.01, 1, (unsigned)i),
				       FILL_EMPTY);
		if (stages[i] == NULL)
			return NULL;
		fill_percent(stages[i]->words, m / 64, percents[i % 4]);
	}
	c = cascade_from_stages(stages, n, 2, 1, 1000, 0.01, &why);
	if (c == NULL)
		for (size_t i = 0; i < n; i++)
			filter_free(stages[i]);
	return c;
}

static void growing_stages_of_many_chunks_save_alike_on_one_and_two_threads(void)
{
	struct cascade *c;

	rng_state = 43;
	c = make_growing_chunks(4);
	CHECK(c != NULL);
	CHECK(same_bytes_on_one_and_two_threads(c));
	cascade_free(c);
}

/*
 * Inflate a whole file in gzip mode: Z_STREAM_END exactly at its end, and
 * the trailer's CRC-32 and ISIZE those of the content, recomputed here
 * (inflate checks them too). *content_len gets the content's length.
 */
static int inflates_whole(const unsigned char *data, size_t len, uint64_t *content_len)
{
	size_t room = (size_t)1 << 20;
	unsigned char *out = malloc(room);
	uLong crc = crc32(0L, Z_NULL, 0);
	z_stream zs;
	int ret = Z_MEM_ERROR;

	memset(&zs, 0, sizeof zs);
	*content_len = 0;
	if (out == NULL || len < 8 || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(out);
		return 0;
	}
	zs.next_in = data;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = out;
		zs.avail_out = (uInt)room;
		ret = inflate(&zs, Z_NO_FLUSH);
		crc = crc32(crc, out, (uInt)(room - zs.avail_out));
		*content_len += room - zs.avail_out;
	} while (ret == Z_OK);
	inflateEnd(&zs);
	free(out);
	return ret == Z_STREAM_END && zs.avail_in == 0
	       && get_le32(data + len - 8) == crc
	       && get_le32(data + len - 4) == (*content_len & 0xffffffffu);
}

static void the_file_is_one_gzip_member_with_its_crc_and_length(void)
{
	/* FHCRC and (several pieces, a regular file) FEXTRA with the index, mtime 0, XFL 4 (fastest), OS 3 */
	static const unsigned char head[10] = { 0x1f, 0x8b, 8, 2 | 4, 0, 0, 0, 0, 4, 3 };
	const char *path = tmp_path("member.bf");
	char command[600];
	uint64_t content = 0;
	struct cascade *c;
	unsigned char *f;
	size_t len = 0, xlen;

	rng_state = 44;
	c = make_growing_chunks(3);
	CHECK(c != NULL);
	f = save_on(c, "2", "member.bf", &len);
	CHECK(f != NULL && len > 12);
	CHECK(memcmp(f, head, 10) == 0);
	xlen = (size_t)f[10] | (size_t)f[11] << 8;
	CHECK(len > 14 + xlen && f[12] == 'B' && f[13] == 'I');
	CHECK(((size_t)f[12 + xlen] | (size_t)f[13 + xlen] << 8) == crc32(0L, f, (uInt)(12 + xlen)) % 65536);
	CHECK(inflates_whole(f, len, &content));
	CHECK(content == HEADERS_LEN(c->nstages) + cascade_bytes(c));
	snprintf(command, sizeof command, "gzip -t '%s'", path);
	CHECK(system(command) == 0);
	free(f);
	cascade_free(c);
}

/* Writes fail with EFBIG past limit bytes, as a full disk would midway. */
static int save_under_limit(const struct cascade *c, const char *path, rlim_t limit,
			    const char **why)
{
	struct rlimit old, small;
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	int ret;

	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = limit;
	setrlimit(RLIMIT_FSIZE, &small);
	ret = format_save_path(c, path, why);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_xfsz);
	return ret;
}

/*
 * A write failing while the worker holds a chunk, at several offsets: the
 * error is the write's, the worker is stopped and freed (ASan and valgrind
 * see any leak), and no temporary file is left.
 */
static void a_write_failing_midway_stops_both_threads_cleanly(void)
{
	static const rlim_t limits[] = { 10, 5000, 700000, 1500000, 2500000 };
	const char *why = "", *path = tmp_path("limit.bf");
	struct cascade *c;

	rng_state = 45;
	c = make_percent(4 * CHUNK_BITS, 25);	/* 4 MiB of bits, about 3.3 MB on disk */
	CHECK(c != NULL);
	setenv("BFTOOLS_THREADS", "2", 1);
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		int ret = save_under_limit(c, path, limits[i], &why);

		CHECKF(ret == -1 && strcmp(why, strerror(EFBIG)) == 0, "limit %llu: \"%s\"",
		       (unsigned long long)limits[i], ret == 0 ? "saved" : why);
		CHECK(count_hidden() == 0);
	}
	unsetenv("BFTOOLS_THREADS");
	cascade_free(c);
}

/* ---- pgzip on its own ----------------------------------------------------- */

/* pieces (data, len, level) through pgzip on threads into path; 0, or -1 with the message printed. */
struct pgzip_piece {
	size_t off, len;
	int level;
};

static int pgzip_file_declared(const char *path, int threads, int direct, const unsigned char *data,
			       const struct pgzip_piece *pieces, size_t n, uint64_t declared)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const char *why = "";
	struct pgzip *z = fd < 0 ? NULL : pgzip_open(fd, threads, Z_RLE, direct, declared, NULL, 0, &why);
	int ok = z != NULL;

	for (size_t i = 0; ok && i < n; i++)
		ok = pgzip_write(z, data + pieces[i].off, pieces[i].len, pieces[i].level, &why) == 0;
	ok = ok && pgzip_finish(z, &why) == 0;
	pgzip_close(z);
	if (fd >= 0)
		close(fd);
	if (!ok)
		printf("#   pgzip: %s\n", why);
	return ok ? 0 : -1;
}

static int pgzip_file(const char *path, int threads, int direct, const unsigned char *data,
		      const struct pgzip_piece *pieces, size_t n)
{
	return pgzip_file_declared(path, threads, direct, data, pieces, n, 0);
}

/* Content of runs and random bytes, so every level has something to do. */
static unsigned char *mixed_content(size_t len)
{
	unsigned char *d = malloc(len);

	for (size_t i = 0; d && i < len; i++)
		d[i] = (i / 4096) % 3 == 0 ? 0 : (i / 4096) % 3 == 1 ? (unsigned char)rng() : 0xff;
	return d;
}

/* The inflated content of the file at path equals data[0..len). */
static int inflates_to(const char *path, const unsigned char *data, size_t len)
{
	size_t flen = 0, got;
	unsigned char *f = slurp(path, &flen), *out = malloc(len + 1);
	z_stream zs;
	int ret = Z_MEM_ERROR;

	memset(&zs, 0, sizeof zs);
	if (f != NULL && out != NULL && inflateInit2(&zs, 15 + 16) == Z_OK) {
		zs.next_in = f;
		zs.avail_in = (uInt)flen;
		zs.next_out = out;
		zs.avail_out = (uInt)len + 1;
		ret = inflate(&zs, Z_FINISH);
		inflateEnd(&zs);
	}
	got = (len + 1) - zs.avail_out;
	ret = ret == Z_STREAM_END && zs.avail_in == 0 && got == len && memcmp(out, data, len) == 0;
	free(f);
	free(out);
	return ret;
}

/*
 * Pieces of every size and level, more than any ring holds (2 per thread),
 * give the same bytes on 1, 2, 3, 8 and 40 threads (past PGZIP_THREADS_MAX,
 * which caps it), and inflate to their concatenation.
 */
static void pgzip_pieces_of_every_level_and_size_inflate_to_their_concatenation(void)
{
	static const size_t lens[] = { 1, 0, 65535, 65536, PGZIP_PIECE_MAX, 3, 200000,
				       PGZIP_PIECE_MAX - 1, 70000, 65535 * 2 + 1 };
	static const int threads[] = { 2, 3, 8, 40 };
	enum { ROUNDS = 9, N = ROUNDS * sizeof lens / sizeof lens[0] };
	struct pgzip_piece pieces[N];
	size_t total = 0, len1 = 0, len2 = 0;
	unsigned char *data, *one, *two;

	for (size_t i = 0; i < N; i++) {
		pieces[i].off = total;
		pieces[i].len = lens[i % (sizeof lens / sizeof lens[0])];
		pieces[i].level = (int)(i % 10);	/* 0 (stored) to 9 */
		total += pieces[i].len;
	}
	rng_state = 46;
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file(tmp_path("p1.gz"), 1, 0, data, pieces, N) == 0);
	CHECK(inflates_to(tmp_path("p1.gz"), data, total));
	one = slurp(tmp_path("p1.gz"), &len1);
	for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		CHECK(pgzip_file(tmp_path("p2.gz"), threads[t], 0, data, pieces, N) == 0);
		two = slurp(tmp_path("p2.gz"), &len2);
		CHECKF(one != NULL && two != NULL && len1 == len2 && memcmp(one, two, len1) == 0,
		       "%d threads", threads[t]);
		free(two);
	}
	free(one);
	free(data);
}

static void pgzip_refuses_a_piece_over_its_maximum(void)
{
	static unsigned char big[PGZIP_PIECE_MAX + 1];
	int fd = open("/dev/null", O_WRONLY);
	const char *why = "";
	struct pgzip *z = fd < 0 ? NULL : pgzip_open(fd, 2, Z_RLE, 0, 0, NULL, 0, &why);

	CHECKF(z != NULL, "%s", why);
	CHECK(pgzip_write(z, big, sizeof big, 1, &why) == -1 && strstr(why, "PGZIP_PIECE_MAX"));
	pgzip_close(z);
	close(fd);
}

static void pgzip_with_no_pieces_is_an_empty_member(void)
{
	CHECK(pgzip_file(tmp_path("empty.gz"), 2, 0, (const unsigned char *)"", NULL, 0) == 0);
	CHECK(inflates_to(tmp_path("empty.gz"), (const unsigned char *)"", 0));
}

/* ---- writing around the page cache ----------------------------------------- */

/* Is fd's file system one whose files are memory (the sink never goes direct there)? */
static int in_memory(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

/* Will a sink go direct in tmpdir: a disk's file system that takes O_DIRECT? */
static int tmpdir_takes_direct(void)
{
	int fd = open(tmp_path("probe-direct"), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	int yes = fd >= 0 && !in_memory(fd);

	if (fd >= 0)
		close(fd);
	return yes;
}

/* Pieces whose lengths leave every staging boundary unaligned, 9 MiB and a bit in all. */
static void odd_pieces(struct pgzip_piece *pieces, size_t n, size_t *total)
{
	static const size_t lens[] = { 4095, 1, PGZIP_PIECE_MAX, 3 * 65536 + 7, PGZIP_PIECE_MAX,
				       PGZIP_PIECE_MAX, 12345, PGZIP_PIECE_MAX, PGZIP_PIECE_MAX,
				       PGZIP_PIECE_MAX, PGZIP_PIECE_MAX, PGZIP_PIECE_MAX, 100 };

	*total = 0;
	for (size_t i = 0; i < n; i++) {
		pieces[i].off = *total;
		pieces[i].len = lens[i % (sizeof lens / sizeof lens[0])];
		pieces[i].level = i == 3 ? 1 : 0;	/* stored but one: the file stays big */
		*total += pieces[i].len;
	}
}

static void pgzip_direct_writes_the_same_bytes(void)
{
	struct pgzip_piece pieces[13];
	size_t total, len0 = 0, len1 = 0, len2 = 0;
	unsigned char *data, *plain, *one, *two;

	odd_pieces(pieces, 13, &total);
	rng_state = 47;
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file(tmp_path("d0.gz"), 2, 0, data, pieces, 13) == 0);
	CHECK(pgzip_file(tmp_path("d1.gz"), 1, 1, data, pieces, 13) == 0);
	CHECK(pgzip_file(tmp_path("d2.gz"), 2, 1, data, pieces, 13) == 0);
	CHECK(inflates_to(tmp_path("d2.gz"), data, total));
	plain = slurp(tmp_path("d0.gz"), &len0);
	one = slurp(tmp_path("d1.gz"), &len1);
	two = slurp(tmp_path("d2.gz"), &len2);
	CHECK(plain != NULL && one != NULL && two != NULL);
	CHECKF(len0 > ((size_t)8 << 20) && len0 % 4096 != 0, "%zu bytes: want several stages and a tail",
	       len0);
	CHECK(len1 == len0 && memcmp(one, plain, len0) == 0);
	CHECK(len2 == len0 && memcmp(two, plain, len0) == 0);
	free(plain);
	free(one);
	free(two);
	free(data);
}

static void sink_goes_direct_only_on_a_new_regular_file(void)
{
	struct gzout_sink s;
	int fds[2], fd;
	const char *why = "";

	CHECK(pipe(fds) == 0);
	gzout_sink_init(&s, fds[1]);
	CHECK(gzout_sink_direct(&s) == -1 && !s.direct);	/* O_DIRECT would make a packet pipe */
	gzout_sink_close(&s);
	close(fds[0]);
	close(fds[1]);
	fd = open(tmp_path("sink.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	gzout_sink_init(&s, fd);
	CHECK(gzout_sink_write(&s, "x", 1, &why) == 0);
	CHECK(gzout_sink_direct(&s) == -1 && !s.direct);	/* something already written */
	gzout_sink_close(&s);
	close(fd);
	if (!tmpdir_takes_direct()) {
		printf("# %s cannot open files O_DIRECT: the direct case is not exercised\n", tmpdir);
		return;
	}
	fd = open(tmp_path("sink.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	gzout_sink_init(&s, fd);
	CHECK(gzout_sink_direct(&s) == 0 && s.direct);
	CHECK(fcntl(fd, F_GETFL) & O_DIRECT);
	gzout_sink_close(&s);
	close(fd);
}

/* tmpfs files are page cache: going around it would only add a copy. */
static void sink_stays_cached_on_tmpfs(void)
{
	struct gzout_sink s;
	int fd = open("/dev/shm/bftools-unit-sink", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || !in_memory(fd)) {
		printf("# no tmpfs at /dev/shm: not exercised\n");
		if (fd >= 0)
			close(fd);
		unlink("/dev/shm/bftools-unit-sink");
		return;
	}
	gzout_sink_init(&s, fd);
	CHECK(gzout_sink_direct(&s) == -1 && !s.direct);
	gzout_sink_close(&s);
	close(fd);
	unlink("/dev/shm/bftools-unit-sink");
}

/*
 * A direct write the file system refuses goes through the page cache from
 * exactly where the last write stopped: here the offset is made unaligned
 * behind the sink's back, so its first 4 MiB write is refused (EINVAL).
 */
static void a_refused_direct_write_is_retried_through_the_cache(void)
{
	const size_t len = ((size_t)5 << 20) + 17;
	unsigned char *data = mixed_content(len), *back;
	struct gzout_sink s;
	size_t got = 0;
	const char *why = "";
	int fd;

	CHECK(data != NULL);
	if (!tmpdir_takes_direct()) {
		printf("# %s cannot open files O_DIRECT: the direct case is not exercised\n", tmpdir);
		free(data);
		return;
	}
	fd = open(tmp_path("refused.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	gzout_sink_init(&s, fd);
	CHECK(gzout_sink_direct(&s) == 0);
	CHECK(lseek(fd, 1, SEEK_SET) == 1);
	CHECK(gzout_sink_write(&s, data, len, &why) == 0);
	CHECK(!s.direct);	/* it gave up on direct writes */
	CHECK(gzout_sink_flush(&s, &why) == 0);
	gzout_sink_close(&s);
	close(fd);
	back = slurp(tmp_path("refused.bin"), &got);
	CHECKF(back != NULL && got == len + 1 && back[0] == 0 && memcmp(back + 1, data, len) == 0,
	       "read back %zu bytes of %zu", got, len + 1);
	free(back);
	free(data);
}

/* A filter big enough to be saved direct: the same bytes as through the cache, and it loads. */
static void a_big_filter_saves_direct_as_it_does_through_the_cache(void)
{
	const uint64_t m = UINT64_C(64) << 23;	/* 64 MiB of bits: SAVE_DIRECT_MIN */
	struct cascade *c, *g;
	size_t len1 = 0, len2 = 0;
	unsigned char *direct, *cached;
	const char *why;
	int fd;

	rng_state = 48;
	c = make_percent(m, 25);
	CHECK(c != NULL);
	direct = save_on(c, "2", "big.bf", &len1);
	fd = open(tmp_path("big-cached.bf"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && format_save(c, fd, &why) == 0);	/* a caller's descriptor: never direct */
	close(fd);
	cached = slurp(tmp_path("big-cached.bf"), &len2);
	CHECK(direct != NULL && cached != NULL);
	CHECK(len1 == len2 && memcmp(direct, cached, len1) == 0);
	g = format_load_path(tmp_path("big.bf"), &why);
	CHECKF(g != NULL && same_cascade(c, g), "%s", g ? "loads as another filter" : why);
	cascade_free(g);
	cascade_free(c);
	free(direct);
	free(cached);
}

static void suite_format_threads(void)
{
	unit_run("format: one thread and two save the same bytes, filters 1, 25, 50, 100% full",
		 one_and_two_threads_write_the_same_bytes);
	unit_run("format: saving a filter twice on two threads gives the same bytes",
		 two_saves_on_two_threads_are_the_same_bytes);
	unit_run("format: 1, 25, 50, 100% full filters round-trip at m just under, on and over 1 MiB chunks",
		 every_density_round_trips_across_chunk_boundaries);
	unit_run("format: a growing cascade of multi-chunk stages saves alike on one thread and two",
		 growing_stages_of_many_chunks_save_alike_on_one_and_two_threads);
	unit_run("format: a saved file is one gzip member, its CRC-32 and length those of the content",
		 the_file_is_one_gzip_member_with_its_crc_and_length);
	unit_run("format: a write failing midway on two threads reports EFBIG and leaves no temporary",
		 a_write_failing_midway_stops_both_threads_cleanly);
	unit_run("pgzip: pieces of every level and of 0 bytes to 1 MiB inflate to their concatenation",
		 pgzip_pieces_of_every_level_and_size_inflate_to_their_concatenation);
	unit_run("pgzip: a piece larger than PGZIP_PIECE_MAX is refused",
		 pgzip_refuses_a_piece_over_its_maximum);
	unit_run("pgzip: a member with no pieces inflates to nothing",
		 pgzip_with_no_pieces_is_an_empty_member);
	unit_run("pgzip: written around the page cache, on one thread or two, the bytes are the same",
		 pgzip_direct_writes_the_same_bytes);
	unit_run("gzout: a sink goes direct only on a regular file with nothing written yet",
		 sink_goes_direct_only_on_a_new_regular_file);
	unit_run("gzout: a sink on tmpfs stays with the page cache", sink_stays_cached_on_tmpfs);
	unit_run("gzout: a refused direct write is retried through the page cache, nothing lost",
		 a_refused_direct_write_is_retried_through_the_cache);
	unit_run("format: a 64 MiB filter saved direct has the bytes of a cached save and loads back",
		 a_big_filter_saves_direct_as_it_does_through_the_cache);
}

/* ---- the suite -------------------------------------------------------- */

static int make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/bftools-format-XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(tmp_path(e->d_name));
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

static void no_scratch_directory(void)
{
	CHECKF(0, "mkdtemp %s: %s", tmpdir, strerror(errno));
}

static void suite_format_files(void)
{
	unit_run("format: a blocked filter round-trips: params, insertions, key, every bit",
		 blocked_round_trips);
	unit_run("format: a classic filter round-trips: params, insertions, key, every bit",
		 classic_round_trips);
	unit_run("format: a key kept outside is never written, only its fingerprint", an_external_key_is_never_written);
	unit_run("format: hash, flags, extreme k, capacity, rate and insertions round-trip",
		 hash_and_flags_round_trip);
	unit_run("format: switching compression level chunk by chunk keeps the stream valid",
		 mixed_chunks_round_trip);
	unit_run("format: the same filter always saves to the same bytes", same_filter_same_bytes);
	unit_run("format: gzip header has a header CRC, mtime 0 and OS 3 (Unix)",
		 gzip_header_is_checked_and_fixed);
	unit_run("format: a 1%-full filter is at least 5x smaller on disk than in memory",
		 sparse_filter_shrinks);
	unit_run("format: a half-full filter is stored within 0.1% of its memory size",
		 dense_filter_stays_its_size);
	unit_run("format: \"-\" loads from standard input, a pipe filled by a writer",
		 loads_from_standard_input);
	unit_run("format: a save to a full disk reports ENOSPC", save_reports_a_full_disk);
}

static void suite_format_damage(void)
{
	unit_run("format: an empty file is \"empty file\"", rejects_an_empty_file);
	unit_run("format: a plain text file is \"not gzip data\"", rejects_plain_text);
	unit_run("format: zlib-wrapped data and other gzip content are not filters",
		 rejects_zlib_and_foreign_gzip);
	unit_run("format: a file cut at every length is \"truncated\" (0: \"empty file\")",
		 rejects_every_truncation);
	unit_run("format: every byte of a dense file XOR 0xff or 0x01 fails to load or loads unchanged",
		 rejects_every_byte_flipped_dense);
	unit_run("format: every byte of a sparse file XOR 0xff or 0x01 fails to load or loads unchanged",
		 rejects_every_byte_flipped_sparse);
	unit_run("format: no single-bit flip ever loads as a different filter",
		 no_bit_flip_changes_the_filter);
	unit_run("format: CRC, length and header CRC damage are named as such",
		 reports_checksum_and_length_mismatch);
	unit_run("format: a trailing byte or a second gzip member is trailing data",
		 rejects_bytes_after_the_member);
	unit_run("format: content longer or shorter than its header says is rejected",
		 rejects_content_longer_or_shorter_than_its_header);
}

static void suite_format_header(void)
{
	unit_run("format: hand-built content loads with every field as written",
		 craft_loads_when_untouched);
	unit_run("format: bad magic, version, header length and stage count are named",
		 rejects_bad_magic_and_versions);
	unit_run("format: unknown hash, layout and flag bits are rejected",
		 rejects_unknown_ids_and_flags);
	unit_run("format: each reserved byte, when non-zero, is rejected",
		 rejects_each_reserved_byte_non_zero);
	unit_run("format: k = 0, 65, 2^32-1, m = 0, 2^62, non-multiples of 512, bad payload length",
		 rejects_k_and_m_out_of_range);
	unit_run("format: zero capacity, rates outside (0, 1) and file/stage mismatches",
		 rejects_bad_capacity_and_rate);
}

static void suite_format_growing(void)
{
	unit_run("format: a growing filter of 1 stage round-trips: growth, tighten, params, bits",
		 growing_one_stage_round_trips);
	unit_run("format: a 3-stage growing filter built from keys round-trips, newest count estimated",
		 growing_three_stages_built_by_adding_round_trip);
	unit_run("format: a 64-stage growing filter round-trips (capacity to 2^63, rate to P 2^-252)",
		 growing_sixty_four_stages_round_trip);
	unit_run("format: hand-built growing content loads with every stage as written",
		 growing_craft_loads_as_written);
	unit_run("format: growth 1, 17, tightening 0, 5, and tightening on a fixed filter are named",
		 rejects_bad_growth_and_tightening);
	unit_run("format: stage counts other than 1 (fixed) or 1..64 (growing) are named",
		 rejects_bad_stage_counts);
	unit_run("format: a stage whose capacity or rate is off the growth plan is named by number",
		 rejects_stages_off_the_plan);
	unit_run("format: a stage rate within 1e-12 of the series loads",
		 accepts_rates_within_the_tolerance);
	unit_run("format: a capacity plan that overflows 64 bits is rejected, not wrapped",
		 rejects_a_capacity_plan_that_overflows);
	unit_run("format: reserved bytes 58..63 and stage reserved bytes of a growing file are checked",
		 rejects_each_growing_reserved_byte_non_zero);
	unit_run("format: stages too large in total are rejected before any allocation",
		 rejects_stages_too_large_in_total);
	unit_run("format: every stage header is checked before any payload is read",
		 checks_every_stage_header_before_any_payload);
	unit_run("format: save refuses, and leaves no file for, a cascade load would reject",
		 save_refuses_what_load_would_reject);
}

static void suite_format_stream(void)
{
	unit_run("format: streaming in pieces of 1, 7 and 4096 bytes gives format_load's bytes",
		 streamed_pieces_match_load);
	unit_run("format: reading past the payload is an error that consumes nothing",
		 reading_past_the_payload_is_an_error);
	unit_run("format: close after a streamed read finds a bad CRC, length or trailing data",
		 close_checks_the_end_of_a_streamed_file);
	unit_run("format: a stream cut in its payload fails on read; cut in its trailer, on close",
		 a_truncated_stream_fails_on_read);
	unit_run("format: format_open rejects a bad header and gives no shape",
		 open_rejects_what_load_rejects);
	unit_run("format: a shape frees without bits and is refused by save",
		 a_shape_frees_but_does_not_save);
}


/* ---- the index of pieces (gzindex.h) ---------------------------------------- */

static void index_plan_groups_pieces_and_declines_small_members(void)
{
	uint64_t group = 0;

	CHECK(gzindex_plan(GZINDEX_PIECES_MIN - 1, PGZIP_PIECE_MAX, &group) == 0);
	CHECK(gzindex_plan(GZINDEX_PIECES_MIN, PGZIP_PIECE_MAX, &group) == GZINDEX_PIECES_MIN && group == 1);
	CHECK(gzindex_plan(GZINDEX_SLOTS_MAX, PGZIP_PIECE_MAX, &group) == GZINDEX_SLOTS_MAX && group == 1);
	CHECK(gzindex_plan(GZINDEX_SLOTS_MAX + 1, PGZIP_PIECE_MAX, &group) == GZINDEX_SLOTS_MAX / 2 + 1 &&
	      group == 2);
	/* 27 TB of 1 MiB pieces: 6.3k pieces an entry, more than 32 bits can count */
	CHECK(gzindex_plan(UINT64_C(27) << 20, PGZIP_PIECE_MAX, &group) == 0);
}

/* n pieces of data[0..total), sizes drawn (1..max) and levels 0..9; their count. */
static size_t random_pieces(struct pgzip_piece *pieces, size_t n, size_t max, size_t *total)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		pieces[i].off = off;
		pieces[i].len = 1 + (size_t)(rng() % max);
		pieces[i].level = (int)(rng() % 10);
		off += pieces[i].len;
	}
	*total = off;
	return n;
}

/* The member in path, inflated through its index into regions cut at cuts[] (0 = none). */
static int index_inflates(const char *path, const unsigned char *data, size_t total, int threads,
			  const size_t *cuts, size_t ncuts)
{
	struct gzindex_region regions[8];
	unsigned char *out = calloc(1, total + 1);
	size_t from = 0, n = 0;
	int fd = open(path, O_RDONLY), ok;

	/* alternate regions kept and dropped: a dropped one is checked by the CRC only */
	for (size_t i = 0; i <= ncuts && n < 8; i++) {
		size_t to = i < ncuts ? cuts[i] : total;

		regions[n++] = (struct gzindex_region){ i % 2 ? NULL : out + from, to - from };
		from = to;
	}
	ok = out != NULL && fd >= 0 && gzindex_inflate(fd, regions, n, threads, 0, NULL, NULL) == 0;
	for (size_t i = 0, at = 0; ok && i < n; at += regions[i].len, i++)
		ok = regions[i].dst == NULL || memcmp(regions[i].dst, data + at, regions[i].len) == 0;
	if (fd >= 0)
		close(fd);
	free(out);
	return ok;
}

/* Does the file at path begin with a gzip header carrying our index? */
static int has_index(const char *path)
{
	size_t len = 0;
	unsigned char *f = slurp(path, &len);
	int yes = f != NULL && len > 16 && (f[3] & 4) && f[12] == 'B' && f[13] == 'I';

	free(f);
	return yes;
}

static void index_inflates_every_piece_on_any_number_of_threads(void)
{
	struct pgzip_piece pieces[37];
	static const int threads[] = { 1, 2, 3, 8 };
	size_t total, n, cuts[3];
	unsigned char *data;

	rng_state = 47;
	n = random_pieces(pieces, 37, 100000, &total);
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file_declared(tmp_path("ix.gz"), 2, 0, data, pieces, n, n) == 0);
	CHECK(has_index(tmp_path("ix.gz")));
	CHECK(inflates_to(tmp_path("ix.gz"), data, total));
	cuts[0] = 100;
	cuts[1] = 100 + total / 3;
	cuts[2] = cuts[1] + 7;
	for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		CHECKF(index_inflates(tmp_path("ix.gz"), data, total, threads[t], cuts, 3), "threads %d",
		       threads[t]);
		CHECK(index_inflates(tmp_path("ix.gz"), data, total, threads[t], NULL, 0));
	}
	free(data);
}

static void index_shares_entries_when_pieces_outnumber_slots(void)
{
	size_t n = GZINDEX_SLOTS_MAX + 904, total;
	struct pgzip_piece *pieces = malloc(n * sizeof *pieces);
	unsigned char *data;

	CHECK(pieces != NULL);
	rng_state = 48;
	random_pieces(pieces, n, 5, &total);
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file_declared(tmp_path("grouped.gz"), 1, 0, data, pieces, n, n) == 0);
	CHECK(has_index(tmp_path("grouped.gz")));
	CHECK(inflates_to(tmp_path("grouped.gz"), data, total));
	CHECK(index_inflates(tmp_path("grouped.gz"), data, total, 3, NULL, 0));
	free(pieces);
	free(data);
}

/* Members without an index: too few pieces, more pieces than declared, a pipe, a file to append to. */
static void index_is_absent_where_it_cannot_serve(void)
{
	struct pgzip_piece pieces[10];
	unsigned char buf[4096];
	size_t total, got = 0;
	unsigned char *data;
	const char *why = "";
	struct pgzip *z;
	int p[2], fd;
	ssize_t r;

	rng_state = 49;
	random_pieces(pieces, 10, 30, &total);
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file_declared(tmp_path("few.gz"), 1, 0, data, pieces, 3, 3) == 0);
	CHECK(!has_index(tmp_path("few.gz")));
	/* declared 4, wrote 10: the entries cannot hold them, so the index stays empty */
	CHECK(pgzip_file_declared(tmp_path("more.gz"), 1, 0, data, pieces, 10, 4) == 0);
	CHECK(inflates_to(tmp_path("more.gz"), data, total));
	CHECK(!index_inflates(tmp_path("more.gz"), data, total, 2, NULL, 0));
	CHECK(pipe(p) == 0);
	z = pgzip_open(p[1], 1, Z_RLE, 0, 10, NULL, 0, &why);
	CHECK(z != NULL);
	for (size_t i = 0; i < 10; i++)
		CHECK(pgzip_write(z, data + pieces[i].off, pieces[i].len, pieces[i].level, &why) == 0);
	CHECK(pgzip_finish(z, &why) == 0);
	pgzip_close(z);
	close(p[1]);
	while ((r = read(p[0], buf + got, sizeof buf - got)) > 0)
		got += (size_t)r;
	close(p[0]);
	CHECK(got > 12 && buf[3] == 2);	/* FHCRC only: no extra field */
	fd = open(tmp_path("append.gz"), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	CHECK(fd >= 0);
	z = pgzip_open(fd, 1, Z_RLE, 0, 10, NULL, 0, &why);
	for (size_t i = 0; z != NULL && i < 10; i++)
		CHECK(pgzip_write(z, data + pieces[i].off, pieces[i].len, pieces[i].level, &why) == 0);
	CHECK(z != NULL && pgzip_finish(z, &why) == 0);
	pgzip_close(z);
	close(fd);
	CHECK(!has_index(tmp_path("append.gz")));
	CHECK(inflates_to(tmp_path("append.gz"), data, total));
	free(data);
}

/* The header CRC (FHCRC) of the member in f, made right again after an edit of its header. */
static void fix_header_crc(unsigned char *f)
{
	size_t xlen = (size_t)f[10] | (size_t)f[11] << 8;
	uLong crc = crc32(0L, f, (uInt)(12 + xlen));

	f[12 + xlen] = (unsigned char)crc;
	f[13 + xlen] = (unsigned char)(crc >> 8);
}

/* Edit number e (0..) of an indexed member f[0..*len): a lie in the index, or damage around it. */
static int damage_index(unsigned char *f, size_t *len, unsigned e)
{
	unsigned char *table = f + 12 + 4 + 8;	/* the first entry */
	size_t n = (size_t)bytes_get_le(f + 16, 4), xlen = (size_t)f[10] | (size_t)f[11] << 8;
	unsigned char tmp[8];

	switch (e) {
	case 0: bytes_put_le(table, bytes_get_le(table, 4) + 1, 4); break;	/* content */
	case 1: bytes_put_le(table, bytes_get_le(table, 4) - 1, 4); break;
	case 2: bytes_put_le(table + 4, bytes_get_le(table + 4, 4) + 1, 4); break;	/* deflated */
	case 3: bytes_put_le(table + 4, bytes_get_le(table + 4, 4) - 1, 4); break;
	case 4: bytes_put_le(table + 12, bytes_get_le(table + 12, 4) + 3, 4);	/* one boundary moved */
		bytes_put_le(table + 20, bytes_get_le(table + 20, 4) - 3, 4); break;
	case 5: memcpy(tmp, table + 8, 8); memcpy(table + 8, table + 16, 8); memcpy(table + 16, tmp, 8); break;
	case 6: bytes_put_le(f + 16, n - 1, 4); break;	/* entries in use */
	case 7: bytes_put_le(f + 16, n + 1, 4); break;
	case 8: bytes_put_le(f + 16, 0, 4); break;
	case 9: f[20] = 2; break;			/* flags: one no reader knows */
	case 10: f[14] = (unsigned char)(f[14] + 1); break;	/* the subfield's length */
	case 11: f[12] = 'X'; break;			/* another subfield */
	case 12: f[*len - 8] ^= 1; return 1;		/* trailer CRC */
	case 13: f[*len - 3] ^= 1; return 1;		/* trailer length */
	case 14: f[*len] = 0; (*len)++; return 1;	/* a byte after the member */
	case 15: (*len)--; return 1;			/* cut short */
	case 16: f[12 + xlen + 2 + 200] ^= 0x10; return 1;	/* inside the deflate stream */
	case 17: f[*len - 10] = 0x01; return 1;		/* the final block */
	case 18: f[20] = 1;				/* zero marks on runs that are not */
		for (size_t i = 0; i < n; i++)
			table[8 * i + 7] |= 0x80;
		break;
	default: return 0;
	}
	fix_header_crc(f);
	return 1;
}

/* Where a member's deflate stream starts: after the fixed header, FEXTRA and FHCRC (our writer's). */
static size_t stream_start(const unsigned char *f)
{
	size_t at = 10;

	if (f[3] & 4)
		at += 2 + (size_t)(f[10] | f[11] << 8);
	return at + (f[3] & 2 ? 2 : 0);
}

#define GUARD_LEN 16

/*
 * The member at path through its index, each piece into a region of its
 * own in memory poisoned with 0xa5, each region followed by GUARD_LEN
 * bytes that must stay so: 1 when every piece equals data and no byte
 * was written past one.
 */
static int poisoned_index_inflates(const char *path, const unsigned char *data, const struct pgzip_piece *pieces,
				   size_t n)
{
	size_t total = pieces[n - 1].off + pieces[n - 1].len, room = total + n * GUARD_LEN;
	unsigned char *out = malloc(room);
	struct gzindex_region *regions = malloc(n * sizeof *regions);
	int fd = open(path, O_RDONLY), ok;

	if (out != NULL)
		memset(out, 0xa5, room);
	for (size_t i = 0; regions != NULL && out != NULL && i < n; i++)
		regions[i] = (struct gzindex_region){ out + pieces[i].off + i * GUARD_LEN, pieces[i].len };
	ok = out != NULL && regions != NULL && fd >= 0 && gzindex_inflate(fd, regions, n, 2, 0, NULL, NULL) == 0;
	for (size_t i = 0; ok && i < n; i++) {
		ok = memcmp(regions[i].dst, data + pieces[i].off, pieces[i].len) == 0;
		for (size_t g = 0; ok && g < GUARD_LEN; g++)
			ok = regions[i].dst[pieces[i].len + g] == 0xa5;
	}
	if (fd >= 0)
		close(fd);
	free(regions);
	free(out);
	return ok;
}

/*
 * Stored pieces (a full filter's) are read block by block with pread
 * (gzindex.c, read_stored), each read taking the next block's head along
 * where it lands on content still to come: lengths around the 65535 of a
 * block, and around the five bytes of a head, must come back exactly into
 * memory that held other bytes, and nothing past a piece written. A damaged length, a final bit, or a
 * flipped data byte in a stored block is refused.
 */
static void stored_pieces_load_exactly_and_damage_in_them_is_refused(void)
{
	static const size_t lens[] = { 65536, 65535, 65539, 65540, 65541, 131071, 1, 5, 4, 70000 };
	struct pgzip_piece pieces[sizeof lens / sizeof lens[0]];
	size_t n = sizeof lens / sizeof lens[0], total = 0, flen = 0, second;
	unsigned char *data, *f;

	for (size_t i = 0; i < n; i++) {
		pieces[i] = (struct pgzip_piece){ total, lens[i], 0 };
		total += lens[i];
	}
	rng_state = 54;
	data = malloc(total);
	CHECK(data != NULL);
	for (size_t i = 0; i < total; i++)
		data[i] = (unsigned char)rng();
	CHECK(pgzip_file_declared(tmp_path("stored.gz"), 1, 0, data, pieces, n, n) == 0);
	CHECK(has_index(tmp_path("stored.gz")) && inflates_to(tmp_path("stored.gz"), data, total));
	CHECK(poisoned_index_inflates(tmp_path("stored.gz"), data, pieces, n));
	f = slurp(tmp_path("stored.gz"), &flen);
	CHECK(f != NULL);
	/* the first piece: a block of 65535 bytes, then one of 1 */
	second = stream_start(f) + 5 + 65535;
	CHECK(f[second] == 0 && f[second + 1] == 1 && f[second + 3] == 0xfe);
	f[second + 3] ^= 1;	/* NLEN no longer LEN's complement */
	CHECK(spew(tmp_path("stored-nlen.gz"), f, flen) == 0);
	CHECK(!poisoned_index_inflates(tmp_path("stored-nlen.gz"), data, pieces, n));
	f[second + 3] ^= 1;
	f[second] |= 1;		/* a final block inside the member */
	CHECK(spew(tmp_path("stored-final.gz"), f, flen) == 0);
	CHECK(!poisoned_index_inflates(tmp_path("stored-final.gz"), data, pieces, n));
	f[second] &= 0xfe;
	f[second + 5] ^= 0x10;	/* the block's one data byte */
	CHECK(spew(tmp_path("stored-data.gz"), f, flen) == 0);
	CHECK(!poisoned_index_inflates(tmp_path("stored-data.gz"), data, pieces, n));
	f[second + 5] ^= 0x10;
	CHECK(spew(tmp_path("stored-again.gz"), f, flen) == 0);
	CHECK(poisoned_index_inflates(tmp_path("stored-again.gz"), data, pieces, n));
	free(f);
	free(data);
}

static void index_never_trusts_a_lie_or_damage(void)
{
	struct pgzip_piece pieces[12];
	size_t total, len = 0, n;
	unsigned char *data, *orig, *f;

	rng_state = 50;
	n = random_pieces(pieces, 12, 3000, &total);
	data = mixed_content(total);
	CHECK(data != NULL);
	CHECK(pgzip_file_declared(tmp_path("lie.gz"), 1, 0, data, pieces, n, n) == 0);
	orig = slurp(tmp_path("lie.gz"), &len);
	f = malloc(len + 1);
	CHECK(orig != NULL && f != NULL);
	CHECK(index_inflates(tmp_path("lie.gz"), data, total, 2, NULL, 0));
	for (unsigned e = 0;; e++) {
		size_t flen = len;

		memcpy(f, orig, len);
		if (!damage_index(f, &flen, e))
			break;
		CHECK(spew(tmp_path("lied.gz"), f, flen) == 0);
		CHECKF(!index_inflates(tmp_path("lied.gz"), data, total, 2, NULL, 0), "edit %u", e);
	}
	free(f);
	free(orig);
	free(data);
}

/*
 * A filter file whose content is written as pieces of at most max bytes,
 * with an index; what format_save wrote to from otherwise (the same content).
 */
static int reindex(const char *from, const char *to, size_t max)
{
	size_t len = 0, n = 0, total;
	unsigned char *f = slurp(from, &len), *content;
	struct pgzip_piece *pieces;
	z_stream zs;
	int ok = 0;

	memset(&zs, 0, sizeof zs);
	if (f == NULL || inflateInit2(&zs, 15 + 16) != Z_OK)
		return free(f), 0;
	total = (size_t)bytes_get_le(f + len - 4, 4);
	content = malloc(total + 1);
	pieces = malloc((total / max + 2) * sizeof *pieces);
	if (content != NULL && pieces != NULL) {
		zs.next_in = f;
		zs.avail_in = (uInt)len;
		zs.next_out = content;
		zs.avail_out = (uInt)total;
		ok = inflate(&zs, Z_FINISH) == Z_STREAM_END;
	}
	inflateEnd(&zs);
	for (size_t off = 0; ok && off < total; off += pieces[n++].len)
		pieces[n] = (struct pgzip_piece){ off, total - off < max ? total - off : max, (int)(n % 3) };
	ok = ok && pgzip_file_declared(to, 2, 0, content, pieces, n, n) == 0;
	free(f);
	free(content);
	free(pieces);
	return ok;
}

/* The index of the file at path takes its bits, as format_load asks, to those of c (one stage). */
static int index_serves(const char *path, const struct cascade *c)
{
	uint64_t bytes = filter_bytes(c->stages[0]);
	unsigned char *bits = malloc(bytes);
	struct gzindex_region regions[2] = { { NULL, HEADERS_LEN(1) }, { bits, bytes } };
	int fd = open(path, O_RDONLY), ok;

	ok = bits != NULL && fd >= 0 && gzindex_inflate(fd, regions, 2, 2, 0, NULL, NULL) == 0 &&
	     memcmp(bits, c->stages[0]->words, bytes) == 0;	/* little-endian hosts: words are file bytes */
	if (fd >= 0)
		close(fd);
	free(bits);
	return ok || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* Pages of [p, p + len) resident now (p page-aligned). */
static long resident_of(const void *p, size_t len)
{
	size_t pages = (len + 4095) / 4096;
	unsigned char *vec = malloc(pages);
	long n = 0;

	if (vec == NULL || mincore((void *)p, len, vec) != 0)
		n = -1;
	for (size_t i = 0; n >= 0 && i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* The file's index with its zero marks taken out, as a writer before them wrote it. */
static void strip_zero_marks(unsigned char *f)
{
	size_t n = (size_t)bytes_get_le(f + 16, 4);

	f[20] = 0;
	for (size_t i = 0; i < n; i++)
		f[12 + 4 + 8 + 8 * i + 7] &= 0x7f;
	fix_header_crc(f);
}

/*
 * A 16 MiB filter with bits in its first MiB only: saved, its 15 empty
 * chunks are marked zero in the index (the same deflate bytes as before
 * the marks); loaded, they are never written, so the loaded filter has
 * only its first MiB resident; and the same file without the marks (an
 * older writer's) loads the same bits the long way.
 */
static void zero_chunks_are_marked_and_never_backed_on_load(void)
{
	const uint64_t m = UINT64_C(16) << 23;	/* 16 MiB of bits */
	struct cascade *c = make_fixed(FILTER_BLOCKED, m, FILL_EMPTY), *back;
	unsigned char *f;
	size_t len = 0;
	const char *why = NULL;
	long resident;

	CHECK(c != NULL);
	rng_state = 52;
	fill_words(c->stages[0]->words, (1 << 20) / 8, FILL_SPARSE);
	CHECK(format_save_path(c, tmp_path("marked.bf"), &why) == 0);
	f = slurp(tmp_path("marked.bf"), &len);
	CHECK(f != NULL && has_index(tmp_path("marked.bf")));
	CHECKF(f != NULL && bytes_get_le(f + 20, 4) == GZINDEX_ZERO_MARKS, "flags %llu",
	       f ? (unsigned long long)bytes_get_le(f + 20, 4) : 0ULL);
	/* into memory that is not zero: the marked runs are cleared, not left */
	if (f != NULL) {
		size_t head = (size_t)HEADERS_LEN(1);
		unsigned char *bits = malloc((size_t)(m / 8));
		struct gzindex_region regions[2] = { { NULL, head }, { bits, m / 8 } };
		int fd = open(tmp_path("marked.bf"), O_RDONLY);

		if (bits != NULL)
			memset(bits, 0xff, (size_t)(m / 8));
		CHECK(bits != NULL && fd >= 0 && gzindex_inflate(fd, regions, 2, 2, 0, NULL, NULL) == 0);
		/* little-endian hosts: the words are the file's bytes */
		CHECK(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ||
		      (bits != NULL && memcmp(bits, c->stages[0]->words, (size_t)(m / 8)) == 0));
		if (fd >= 0)
			close(fd);
		free(bits);
	}
	back = format_load_path(tmp_path("marked.bf"), &why);
	/* before anything reads the words: a page read maps the zero page, resident too */
	resident = back ? resident_of(back->stages[0]->words, (size_t)(m / 8)) : -1;
	CHECKF(resident >= 256 && resident <= 2 * 512, "%ld pages resident of 4096", resident);
	CHECKF(back != NULL && same_cascade(c, back), "%s", why ? why : "");
	cascade_free(back);
	if (f != NULL) {
		strip_zero_marks(f);
		CHECK(spew(tmp_path("unmarked.bf"), f, len) == 0);
		back = format_load_path(tmp_path("unmarked.bf"), &why);
		CHECKF(back != NULL && same_cascade(c, back), "%s", why ? why : "");
		cascade_free(back);
	}
	free(f);
	cascade_free(c);
}

/*
 * Saving reads no page of the bits that was never written: not to find
 * the empty chunks, nor to count the bits set for the stored figures, nor
 * to compress a chunk holding a word or two (a copy gets the zeros). On a
 * kernel with a zero page a page read is resident after, mapped to it; on
 * one without, it is memory kept (a 1e9-key filter holding 1,000 keys
 * took 860 MB to save). 64 MiB: a filter that big starts in 4 KiB pages.
 */
static void saving_reads_no_page_never_written(void)
{
	const uint64_t m = UINT64_C(64) << 23;
	struct cascade *c = make_fixed(FILTER_BLOCKED, m, FILL_UNTOUCHED), *back;
	const char *why = NULL;
	long before, after;
	uint64_t *w;

	CHECK(c != NULL);
	w = c->stages[0]->words;
	/* a word in the 100th page of chunk 5, one in the 4th page of chunk 40 */
	w[(5 * (UINT64_C(1) << 20) + 100 * 4096) / 8 + 3] = UINT64_C(0x8000000000000401);
	w[(40 * (UINT64_C(1) << 20) + 3 * 4096) / 8] = 1;
	before = resident_of(w, (size_t)(m / 8));
	CHECK(format_save_path(c, tmp_path("two-words.bf"), &why) == 0);
	after = resident_of(w, (size_t)(m / 8));
	CHECKF(before <= 2 * 512 && after == before, "%ld pages resident before the save, %ld after", before, after);
	back = format_load_path(tmp_path("two-words.bf"), &why);
	CHECKF(back != NULL && same_cascade(c, back), "%s", why ? why : "");
	CHECK(back != NULL && filter_bits_set(back->stages[0]) == 4);
	cascade_free(back);
	cascade_free(c);
}

static void a_filter_loads_the_same_through_its_index_or_around_a_lie_in_it(void)
{
	static const int threads[] = { 1, 2, 4 };
	struct cascade *c, *back;
	size_t len = 0, flen;
	unsigned char *f, *copy;
	const char *why = NULL;
	char *plain;

	rng_state = 51;
	c = make_fixed(FILTER_BLOCKED, 512 * 300, FILL_SPARSE);
	CHECK(c != NULL);
	CHECK(format_save_path(c, tmp_path("plain.bf"), &why) == 0);
	CHECK(!has_index(tmp_path("plain.bf")));	/* too small for an index of 1 MiB pieces */
	plain = strdup(tmp_path("plain.bf"));	/* tmp_path's buffer is shared */
	CHECK(plain != NULL && reindex(plain, tmp_path("indexed.bf"), 2500));
	free(plain);
	CHECK(has_index(tmp_path("indexed.bf")));
	CHECK(index_serves(tmp_path("indexed.bf"), c));
	for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		pipeline_set_threads(threads[t]);
		back = format_load_path(tmp_path("indexed.bf"), &why);
		CHECKF(back != NULL && same_cascade(c, back), "threads %d: %s", threads[t], why ? why : "");
		cascade_free(back);
	}
	/* a lie in the index (its header CRC made right): read in order, the same filter */
	f = slurp(tmp_path("indexed.bf"), &len);
	copy = malloc(len + 1);
	CHECK(f != NULL && copy != NULL);
	for (unsigned e = 0; e < 12; e++) {
		flen = len;
		memcpy(copy, f, len);
		CHECK(damage_index(copy, &flen, e));
		CHECK(spew(tmp_path("lied.bf"), copy, flen) == 0);
		back = format_load_path(tmp_path("lied.bf"), &why);
		CHECKF(back != NULL && same_cascade(c, back), "edit %u: %s", e, why ? why : "");
		cascade_free(back);
	}
	/* damage in the stream itself: refused, as without an index */
	flen = len;
	memcpy(copy, f, len);
	CHECK(damage_index(copy, &flen, 16));
	CHECK(spew(tmp_path("broken.bf"), copy, flen) == 0);
	back = format_load_path(tmp_path("broken.bf"), &why);
	CHECK(back == NULL && strncmp(why, "corrupt", 7) == 0);
	pipeline_set_threads(0);
	free(copy);
	free(f);
	cascade_free(c);
}

/*
 * A filter about 6% full: its chunks deflate to about a third, neither
 * sparse nor stored, so the index's entries are inflated whole by
 * libdeflate (gzindex.c); every thread count loads the same filter, and
 * damage inside a deflated piece is still refused (libdeflate gives way
 * to zlib, which fails too, and the member is read in order).
 */
static void a_deflated_filter_loads_whole_through_its_index(void)
{
	const uint64_t m = UINT64_C(6) << 23;	/* 6 MiB of bits: six chunks and the head */
	struct cascade *c = make_fixed(FILTER_BLOCKED, m, FILL_EMPTY), *back;
	unsigned char *f;
	size_t len = 0;
	const char *why = NULL;

	CHECK(c != NULL);
	rng_state = 53;
	for (uint64_t i = 0; i < m / 64; i++)
		c->stages[0]->words[i] = rng() & rng() & rng() & rng();
	CHECK(format_save_path(c, tmp_path("deflated.bf"), &why) == 0 && has_index(tmp_path("deflated.bf")));
	for (int t = 1; t <= 2; t++) {
		pipeline_set_threads(t);
		back = format_load_path(tmp_path("deflated.bf"), &why);
		CHECKF(back != NULL && same_cascade(c, back), "threads %d: %s", t, why ? why : "");
		cascade_free(back);
	}
	f = slurp(tmp_path("deflated.bf"), &len);
	CHECK(f != NULL && len > 1000);
	f[len / 2] ^= 0x55;
	CHECK(spew(tmp_path("deflated-broken.bf"), f, len) == 0);
	back = format_load_path(tmp_path("deflated-broken.bf"), &why);
	CHECK(back == NULL);
	pipeline_set_threads(0);
	free(f);
	cascade_free(c);
}

static void suite_format_index(void)
{
	unit_run("index: a filter of deflated chunks loads whole through its index, and damage in them is refused",
		 a_deflated_filter_loads_whole_through_its_index);
	unit_run("index: a plan groups pieces, and declines members too small or too big",
		 index_plan_groups_pieces_and_declines_small_members);
	unit_run("index: a member inflates through its index on 1, 2, 3 and 8 threads",
		 index_inflates_every_piece_on_any_number_of_threads);
	unit_run("index: stored pieces of every awkward length load exactly; a bad length, final bit or byte is refused",
		 stored_pieces_load_exactly_and_damage_in_them_is_refused);
	unit_run("index: more pieces than slots share entries",
		 index_shares_entries_when_pieces_outnumber_slots);
	unit_run("index: none for few pieces, a pipe, a file opened to append",
		 index_is_absent_where_it_cannot_serve);
	unit_run("index: every lie in an index, and damage around it, is caught",
		 index_never_trusts_a_lie_or_damage);
	unit_run("index: a filter's empty chunks are marked zero, never backed on load, and load alike unmarked",
		 zero_chunks_are_marked_and_never_backed_on_load);
	unit_run("index: saving reads no page of the bits never written (zero chunks, figures, a chunk's copy)",
		 saving_reads_no_page_never_written);
	unit_run("index: a filter loads the same through its index, and around a lie in it",
		 a_filter_loads_the_same_through_its_index_or_around_a_lie_in_it);
}

static void suite_atomic(void)
{
	unit_run("atomic: saving over a file replaces it and keeps its mode",
		 save_replaces_and_keeps_mode);
	unit_run("atomic: a new file gets mode 0666 minus the umask", new_file_mode_follows_umask);
	unit_run("atomic: saving into a missing directory fails and leaves no temporary file",
		 save_into_missing_directory_fails_cleanly);
	unit_run("atomic: a save failing midway (EFBIG) leaves the old file and no temporary",
		 failed_save_leaves_old_file);
	unit_run("atomic: abort removes the temporary file and may be repeated",
		 abort_removes_temp_and_is_repeatable);
	unit_run("atomic: SIGINT, SIGTERM, SIGHUP, SIGPIPE remove the pending temporary and kill",
		 signal_removes_pending_temp);
	unit_run("atomic: a signal ignored at startup (nohup) stays ignored",
		 ignored_signal_stays_ignored);
	unit_run("atomic: a FIFO target is written in place, not replaced",
		 fifo_target_is_written_in_place);
}

void suite_format(void)
{
	if (make_tmpdir() < 0) {
		unit_run("format: a scratch directory can be made", no_scratch_directory);
		return;
	}
	suite_format_files();
	suite_format_damage();
	suite_format_header();
	suite_format_growing();
	suite_format_stream();
	suite_format_threads();
	suite_format_index();
	suite_atomic();
	remove_tmpdir();
}
