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
#define ZLIB_CONST
#include <zlib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic.h"
#include "filter.h"
#include "format.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[256];
static char pathbuf[512];

static uint64_t rng_state;

static uint64_t rng(void)	/* splitmix64 */
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static const char *tmp_path(const char *name)
{
	snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
	return pathbuf;
}

enum fill { FILL_EMPTY, FILL_SPARSE, FILL_HALF };

static void fill_words(uint64_t *w, uint64_t nwords, enum fill fill)
{
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
	struct filter *f;

	if (spew(path, data, len) < 0)
		return "test: cannot write image";
	f = format_load_path(path, &why);
	if (f != NULL) {
		filter_free(f);
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

/* The message for crafted content with one field changed; NULL if it loads. */
static const char *crafted_error(unsigned off, unsigned width, uint64_t value)
{
	unsigned char c[CRAFT_LEN], *gz;
	const char *why;
	size_t len;

	craft_valid(c);
	put_le(c + off, value, width);
	gz = gzip_bytes(c, sizeof c, &len);
	if (gz == NULL)
		return "test: gzip failed";
	why = load_error(gz, len);
	free(gz);
	return why;
}

struct field_case {
	unsigned off, width;
	uint64_t value;
	const char *expect;
};

static int run_field_cases(const struct field_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *why = crafted_error(cases[i].off, cases[i].width, cases[i].value);

		if (why == NULL || strcmp(why, cases[i].expect) != 0) {
			printf("#   offset %u = %llu: got \"%s\", want \"%s\"\n", cases[i].off,
			       (unsigned long long)cases[i].value, why ? why : "(loaded)",
			       cases[i].expect);
			return -1;
		}
	}
	return 0;
}

/* A small saved file (m = 512): its bytes in a new buffer. */
static unsigned char *small_file(enum fill fill, size_t *len)
{
	struct filter *f = make_filter(FILTER_BLOCKED, 512, fill);
	const char *why, *path = tmp_path("small.bf");

	if (f == NULL || format_save_path(f, path, &why) < 0)
		return NULL;
	filter_free(f);
	return slurp(path, len);
}

/* ---- round trips ------------------------------------------------------ */

static int round_trip(struct filter *f, const char *name)
{
	const char *why, *path = tmp_path(name);
	struct filter *g;
	int same;

	if (format_save_path(f, path, &why) < 0) {
		printf("#   save: %s\n", why);
		return 0;
	}
	g = format_load_path(path, &why);
	if (g == NULL) {
		printf("#   load: %s\n", why);
		return 0;
	}
	same = same_filter(f, g);
	filter_free(g);
	return same;
}

static void blocked_round_trips(void)
{
	struct filter *f;

	rng_state = 1;
	f = make_filter(FILTER_BLOCKED, 512 * 1000, FILL_HALF);
	CHECK(f != NULL);
	CHECK(round_trip(f, "blocked.bf"));
	filter_free(f);
}

static void classic_round_trips(void)
{
	struct filter *f;

	rng_state = 2;
	f = make_filter(FILTER_CLASSIC, 512 * 999, FILL_SPARSE);
	CHECK(f != NULL);
	CHECK(round_trip(f, "classic.bf"));
	filter_free(f);
}

static void hash_and_flags_round_trip(void)
{
	struct filter *f;

	rng_state = 3;
	f = make_filter(FILTER_CLASSIC, 512, FILL_HALF);
	CHECK(f != NULL);
	f->params.hash = FILTER_SIPHASH_2_4;
	f->params.flags = FILTER_FOLD_CASE;
	f->params.k = FILTER_K_MAX;
	f->params.capacity = UINT64_MAX;
	f->params.target_p = 0x1p-1074;	/* smallest subnormal: all 64 bits kept */
	f->insertions = UINT64_MAX;
	CHECK(round_trip(f, "params.bf"));
	filter_free(f);
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

	rng_state = 4;
	f = make_filter(FILTER_BLOCKED, (n - 1) * chunk_words * 64 + 512 * 3, FILL_EMPTY);
	CHECK(f != NULL);
	for (uint64_t i = 0; i < n - 1; i++)
		fill_words(f->words + i * chunk_words, chunk_words, pattern[i]);
	fill_words(f->words + (n - 1) * chunk_words, 8 * 3, FILL_HALF);
	memset(f->words + 3 * chunk_words + 100, 0xff, 4096);	/* a dense patch in an empty chunk */
	CHECK(round_trip(f, "mixed.bf"));
	filter_free(f);
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
	CHECK(c[3] == 0x02);			/* FHCRC and nothing else */
	CHECK(c[4] == 0 && c[5] == 0 && c[6] == 0 && c[7] == 0);	/* mtime */
	CHECK(c[9] == 3);			/* OS: Unix */
	free(c);
}

/* Sizes on disk against memory, for 1%-full and half-full filters of 4 MiB. */
static uint64_t saved_size(enum fill fill, const char *name)
{
	struct filter *f = make_filter(FILTER_BLOCKED, UINT64_C(1) << 25, fill);
	const char *why, *path = tmp_path(name);
	struct stat st;

	if (f == NULL || format_save_path(f, path, &why) < 0 || stat(path, &st) < 0)
		return 0;
	filter_free(f);
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

/* Fork a child that saves f into a pipe; returns the read end. */
static int save_through_pipe(const struct filter *f, pid_t *child)
{
	int fds[2];
	const char *why;

	if (pipe(fds) < 0)
		return -1;
	*child = fork();
	if (*child == 0) {
		close(fds[0]);
		_exit(format_save(f, fds[1], &why) == 0 ? 0 : 1);
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
	struct filter *f, *g;
	const char *why = "";
	int fd, saved_stdin = dup(STDIN_FILENO);
	pid_t pid;

	rng_state = 9;
	f = make_filter(FILTER_CLASSIC, UINT64_C(1) << 24, FILL_HALF);	/* 2 MiB: many pipe fills */
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
	CHECK(same_filter(f, g));
	filter_free(f);
	filter_free(g);
}

static void save_reports_a_full_disk(void)
{
	struct filter *f;
	const char *why = "";
	int fd = open("/dev/full", O_WRONLY);

	rng_state = 10;
	f = make_filter(FILTER_BLOCKED, 512 * 64, FILL_HALF);
	CHECK(f != NULL && fd >= 0);
	CHECK(format_save(f, fd, &why) == -1);
	CHECKF(strcmp(why, strerror(ENOSPC)) == 0, "got \"%s\"", why);
	close(fd);
	filter_free(f);
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
static void flip_bytes(enum fill fill, unsigned seed)
{
	static const unsigned char masks[] = { 0xff, 0x01 };
	unsigned char *c;
	size_t len = 0;

	rng_state = seed;
	c = small_file(fill, &len);
	CHECK(c != NULL && load_error(c, len) == NULL);
	for (size_t i = 0; i < len; i++) {
		for (size_t j = 0; j < sizeof masks; j++) {
			const char *why;

			c[i] ^= masks[j];
			why = load_error(c, len);
			c[i] ^= masks[j];
			CHECKF(why != NULL, "byte %zu of %zu ^ 0x%02x still loads", i, len, masks[j]);
		}
	}
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
 * fails to load or loads as exactly the same filter. The only bits that
 * may flip silently are deflate's fill bits up to a byte boundary, which
 * inflate skips; they carry no content.
 */
static void no_bit_flip_changes_the_filter(void)
{
	unsigned char *c;
	const char *why, *path = tmp_path("flip.bf");
	struct filter *orig, *g;
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
		CHECKF(same_filter(orig, g), "byte %zu bit %zu loads as another filter", bit / 8,
		       bit % 8);
		filter_free(g);
	}
	printf("# %zu of %zu single-bit flips load, all as the same filter\n", silent, len * 8);
	filter_free(orig);
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
	struct filter *f;
	size_t len;

	craft_valid(c);
	gz = gzip_bytes(c, sizeof c, &len);
	CHECK(gz != NULL && spew(tmp_path("craft.bf"), gz, len) == 0);
	f = format_load_path(tmp_path("craft.bf"), &why);
	CHECKF(f != NULL, "%s", why);
	CHECK(f->params.layout == FILTER_CLASSIC && f->params.hash == FILTER_SIPHASH_1_3);
	CHECK(f->params.flags == FILTER_FOLD_CASE && f->params.k == 9 && f->params.m == 512);
	CHECK(f->params.capacity == 50 && f->params.target_p == 0.001 && f->insertions == 42);
	CHECK(f->params.key[15] == 15 * 17 && memcmp(f->words, c + 128, 64) == 0);
	CHECK(f->words[0] == UINT64_C(0x08e3be99744f2a05));	/* bytes 05 2a 4f ... 08 */
	filter_free(f);
	free(gz);
}

static void rejects_bad_magic_and_versions(void)
{
	static const struct field_case cases[] = {
		{ 0, 1, 0x88, "not a bftools filter (bad magic)" },
		{ 4, 1, '\n', "not a bftools filter (bad magic)" },
		{ 7, 1, '\r', "not a bftools filter (bad magic)" },
		{ 8, 4, 2, "unsupported format version 2" },
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
		{ 21, 1, 2, "bad header: unknown key flags" },
		{ 21, 1, 0x81, "bad header: unknown key flags" },
		{ 64, 1, 0, "bad header: unknown layout" },
		{ 64, 1, 3, "bad header: unknown layout" },
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
		{ 56, 64, "bad header: reserved field not zero" },
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

/* ---- atomic replacement ----------------------------------------------- */

static void save_replaces_and_keeps_mode(void)
{
	const char *why = "", *path = tmp_path("replace.bf");
	struct filter *f, *g;
	struct stat st;

	CHECK(spew(path, (const unsigned char *)"old\n", 4) == 0 && chmod(path, 0640) == 0);
	rng_state = 20;
	f = make_filter(FILTER_BLOCKED, 512 * 8, FILL_HALF);
	CHECK(f != NULL);
	CHECKF(format_save_path(f, path, &why) == 0, "%s", why);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	g = format_load_path(path, &why);
	CHECK(g != NULL && same_filter(f, g));
	CHECK(count_hidden() == 0);
	filter_free(f);
	filter_free(g);
}

static void new_file_mode_follows_umask(void)
{
	const char *why = "", *path = tmp_path("fresh.bf");
	mode_t old = umask(027);
	struct filter *f;
	struct stat st;
	int ret;

	rng_state = 21;
	f = make_filter(FILTER_BLOCKED, 512, FILL_HALF);
	ret = f ? format_save_path(f, path, &why) : -1;
	umask(old);
	CHECKF(ret == 0, "%s", why);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	filter_free(f);
}

static void save_into_missing_directory_fails_cleanly(void)
{
	const char *why = "";
	struct filter *f;

	rng_state = 22;
	f = make_filter(FILTER_BLOCKED, 512, FILL_HALF);
	CHECK(f != NULL);
	CHECK(format_save_path(f, tmp_path("no/such/dir/x.bf"), &why) == -1);
	CHECKF(strcmp(why, strerror(ENOENT)) == 0, "got \"%s\"", why);
	CHECK(count_hidden() == 0);
	CHECK(format_save_path(f, tmpdir, &why) == -1);	/* a directory is not a file */
	CHECK(count_hidden() == 0);
	filter_free(f);
}

/* Make writes fail with EFBIG past 4 KiB, as a full disk would midway. */
static int save_with_file_size_limit(const struct filter *f, const char *path, const char **why)
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
	struct filter *f;
	size_t len = 0;

	CHECK(spew(path, (const unsigned char *)"precious\n", 9) == 0);
	rng_state = 23;
	f = make_filter(FILTER_BLOCKED, UINT64_C(1) << 20, FILL_HALF);	/* 128 KiB */
	CHECK(f != NULL);
	CHECK(save_with_file_size_limit(f, path, &why) == -1);
	CHECKF(strcmp(why, strerror(EFBIG)) == 0, "got \"%s\"", why);
	c = slurp(path, &len);
	CHECK(c != NULL && len == 9 && memcmp(c, "precious\n", 9) == 0);
	CHECK(count_hidden() == 0);
	f->params.k = 0;	/* refused before any file is touched */
	CHECK(format_save_path(f, path, &why) == -1);
	CHECK(count_hidden() == 0);
	free(c);
	filter_free(f);
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
	struct filter *f;
	struct stat st;
	pid_t pid;

	CHECK(mkfifo(path, 0600) == 0);
	rng_state = 24;
	f = make_filter(FILTER_CLASSIC, UINT64_C(1) << 20, FILL_HALF);
	CHECK(f != NULL);
	pid = fork();
	if (pid == 0) {
		struct filter *g = format_load_path(path, &why);

		_exit(g != NULL && same_filter(f, g) ? 0 : 1);
	}
	CHECKF(format_save_path(f, path, &why) == 0, "%s", why);
	CHECK(child_status(pid) == 0);
	CHECK(stat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(count_hidden() == 0);
	filter_free(f);
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
	unit_run("format: every byte of a dense file XOR 0xff or 0x01 fails to load",
		 rejects_every_byte_flipped_dense);
	unit_run("format: every byte of a sparse file XOR 0xff or 0x01 fails to load",
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
	suite_atomic();
	remove_tmpdir();
}
