/* SPDX-License-Identifier: MIT */
/*
 * seedgen.c - the filter-file seeds the programs cannot make, for
 * tests/fuzz/corpus/format/ (run by make-corpus.sh, not by the build).
 *
 *   seedgen DIR
 *
 * Writes into DIR:
 *   grow-*.bf      growing cascades of several stages, tiny enough to
 *                  commit (bfuniq's first stage is sized for 100000 keys);
 *                  both layouts, both hashes, case folding, growth 2 to 16,
 *                  tighten 1 to 4
 *   extkey-*.bf    filters whose key is kept outside (a key file): the key
 *                  00 01 .. 0f that fuzz_format supplies, and one it cannot
 *   raw-*          uncompressed filter contents with one header field
 *                  made absurd or inconsistent (k = 2^32 - 1, m = 2^62,
 *                  payload length not m/8, 65 stages, a NaN rate, stage
 *                  capacities that overflow, ...), which fuzz_format gzips
 *                  itself; the valid raw-ok-* ones let it reach the code
 *                  that runs after a successful load
 *   crafted-*.bf   a few of those as real gzip files with correct CRCs:
 *                  the "rejected before allocating" cases as they come
 *                  from disk
 *   indexed-*.bf   valid contents written as pgzip writes big filters,
 *                  with an index of pieces in the gzip header (gzindex.h),
 *                  in pieces of a few bytes so that the seeds stay small:
 *                  the loader's path through the index
 *
 * Every key is fixed, so the seeds are the same on every run.
 */
#define ZLIB_CONST

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "pgzip.h"

static const unsigned char seed_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const char *outdir;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "seedgen: %s: %s\n", what, why ? why : "failed");
	exit(2);
}

static char *path_of(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof path, "%s/%s", outdir, name);
	return path;
}

static void write_bytes(const char *name, const unsigned char *p, size_t len)
{
	FILE *fp = fopen(path_of(name), "wb");

	if (fp == NULL || fwrite(p, 1, len, fp) != len || fclose(fp) != 0)
		die(name, "cannot write");
}

/* p[0..len) as one gzip member with a header CRC, as format_save writes them. */
static void write_gzip(const char *name, const unsigned char *p, size_t len)
{
	unsigned char out[1 << 16];
	gz_header gzh;
	z_stream zs;

	memset(&zs, 0, sizeof zs);
	memset(&gzh, 0, sizeof gzh);
	gzh.os = 3;
	gzh.hcrc = 1;
	if (deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK
	    || deflateSetHeader(&zs, &gzh) != Z_OK)
		die(name, "zlib");
	zs.next_in = p;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = sizeof out;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		die(name, "deflate");
	write_bytes(name, out, sizeof out - zs.avail_out);
	deflateEnd(&zs);
}

/* ---- growing cascades through the library ----------------------------- */

struct grow_seed {
	const char *name;	/* growth 0: a fixed filter */
	enum filter_layout layout;
	enum filter_hash hash;
	uint32_t flags;
	unsigned growth, tighten;
	unsigned keys;
	int unknown_key;	/* not the key fuzz_format supplies */
};

static void grow_seed(const struct grow_seed *s)
{
	struct filter_params first = {
		.layout = s->layout, .hash = s->hash, .flags = s->flags, .capacity = 4,
	};
	const char *err = NULL;
	struct cascade *c;
	char key[32];

	memcpy(first.key, seed_key, sizeof first.key);
	first.key[15] ^= (unsigned char)s->unknown_key;
	if (s->growth == 0) {
		first.capacity = 20;
		first.target_p = 0.1;
		first.m = 512;
		first.k = 3;
		c = cascade_new_fixed(&first, &err);
	} else {
		c = cascade_new_growing(&first, 0.1, s->growth, s->tighten, &err);
	}
	if (c == NULL)
		die(s->name, err);
	for (unsigned i = 0; i < s->keys; i++) {
		struct line k = { .data = key, .len = (size_t)snprintf(key, sizeof key, "Key%u", i) };

		if (cascade_add(c, &k, 1, &err) < 0)
			die(s->name, err);
	}
	if (format_save_path(c, path_of(s->name), &err) < 0)
		die(s->name, err);
	cascade_free(c);
}

static void grow_seeds(void)
{
	static const struct grow_seed seeds[] = {
		{ "grow-blocked-s13-g2t1.bf", FILTER_BLOCKED, FILTER_SIPHASH_1_3, 0, 2, 1, 40, 0 },
		{ "grow-classic-s24-g2t1-i.bf", FILTER_CLASSIC, FILTER_SIPHASH_2_4,
		  FILTER_FOLD_CASE, 2, 1, 40, 0 },
		{ "grow-blocked-s24-g4t3.bf", FILTER_BLOCKED, FILTER_SIPHASH_2_4, 0, 4, 3, 30, 0 },
		{ "grow-classic-s13-g16t4-i.bf", FILTER_CLASSIC, FILTER_SIPHASH_1_3,
		  FILTER_FOLD_CASE, 16, 4, 10, 0 },
		/* the key kept outside: the file holds its fingerprint only */
		{ "extkey-fixed.bf", FILTER_BLOCKED, FILTER_SIPHASH_1_3, FILTER_KEY_EXTERNAL, 0, 0, 5, 0 },
		{ "extkey-grow-i.bf", FILTER_CLASSIC, FILTER_SIPHASH_2_4,
		  FILTER_KEY_EXTERNAL | FILTER_FOLD_CASE, 2, 1, 12, 0 },
		{ "extkey-unknown-key.bf", FILTER_BLOCKED, FILTER_SIPHASH_1_3, FILTER_KEY_EXTERNAL, 2, 2, 3, 1 },
	};

	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
		grow_seed(&seeds[i]);
}

/* ---- hand-made contents ---------------------------------------------- */

#define HDR 64u
#define MAX_STAGES 65u	/* one more than allowed, for the "65 stages" seed */

/* A content: file header, stage headers, payload (filled when it fits). */
struct content {
	unsigned char b[HDR * (1 + MAX_STAGES) + 4096];
	size_t nstages, len;
};

static void put_le(unsigned char *p, uint64_t v, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put_double(unsigned char *p, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	put_le(p, bits, 8);
}

static unsigned char *stage(struct content *c, size_t i)
{
	return c->b + HDR + i * HDR;
}

/* One stage header: blocked, k 3, m 512, the given capacity and rate. */
static void put_stage(struct content *c, size_t i, uint64_t capacity, double rate)
{
	unsigned char *s = stage(c, i);

	memset(s, 0, HDR);
	s[0] = FILTER_BLOCKED;
	put_le(s + 4, 3, 4);
	put_le(s + 8, 512, 8);
	put_le(s + 16, capacity, 8);
	put_double(s + 24, rate);
	put_le(s + 32, 2, 8);
	put_le(s + 40, 512 / 8, 8);
}

/*
 * A valid content: a fixed filter (growth 0), or a growing one of n
 * stages with capacities 10 g^i and rates P (1 - 2^-t) 2^-ti, each 512
 * bits with a few bits set.
 */
static void valid(struct content *c, size_t n, unsigned growth, unsigned tighten)
{
	static const unsigned char magic[8] = { 0x89, 'B', 'F', 'T', '\r', '\n', 0x1a, '\n' };
	const double p = 0.05;
	uint64_t cap = 10;

	memset(c, 0, sizeof *c);
	memcpy(c->b, magic, 8);
	put_le(c->b + 8, 1, 4);
	put_le(c->b + 12, HDR, 4);
	put_le(c->b + 16, n, 4);
	c->b[20] = FILTER_SIPHASH_1_3;
	memcpy(c->b + 24, seed_key, 16);
	put_le(c->b + 40, cap, 8);
	put_double(c->b + 48, p);
	c->b[56] = (unsigned char)growth;
	c->b[57] = (unsigned char)tighten;
	for (size_t i = 0; i < n; i++) {
		double rate = growth ? ldexp(p * -expm1(-(double)tighten * M_LN2), -(int)(tighten * i)) : p;

		put_stage(c, i, cap, rate);
		/* past 64 bits the plan has no capacity; write the largest there is */
		cap = growth && cap <= UINT64_MAX / growth ? cap * growth : growth ? UINT64_MAX : cap;
	}
	c->nstages = n;
	c->len = HDR + n * HDR + n * 64;
	for (size_t i = HDR + n * HDR; i < c->len; i += 7)
		c->b[i] = (unsigned char)(0x11 * (i % 13));
}

/* Every payload byte set to b: 0xff makes the newest stage full on load. */
static void fill_payload(struct content *c, unsigned char b)
{
	memset(c->b + HDR + c->nstages * HDR, b, c->nstages * 64);
}

static void raw(const char *name, const struct content *c)
{
	write_bytes(name, c->b, c->len);
}

/* Sizes in a valid one-stage fixed content; each seed names what it breaks. */
static void size_variants(void)
{
	struct content c;

	valid(&c, 1, 0, 0);
	raw("raw-ok-fixed", &c);
	write_gzip("crafted-ok-fixed.bf", c.b, c.len);
	put_le(stage(&c, 0) + 4, UINT32_MAX, 4);
	raw("raw-k-4294967295", &c);
	write_gzip("crafted-k-4294967295.bf", c.b, c.len);
	valid(&c, 1, 0, 0);
	put_le(stage(&c, 0) + 8, UINT64_C(1) << 62, 8);
	put_le(stage(&c, 0) + 40, UINT64_C(1) << 59, 8);
	raw("raw-m-2p62", &c);
	write_gzip("crafted-m-2p62.bf", c.b, c.len);
	valid(&c, 1, 0, 0);
	put_le(stage(&c, 0) + 8, UINT64_C(1) << 46, 8);
	put_le(stage(&c, 0) + 40, UINT64_C(1) << 43, 8);
	raw("raw-m-2p46-truncated", &c);
	write_gzip("crafted-m-2p46-truncated.bf", c.b, c.len);
	valid(&c, 1, 0, 0);
	put_le(stage(&c, 0) + 40, 65, 8);
	raw("raw-payload-length-mismatch", &c);
	write_gzip("crafted-payload-length-mismatch.bf", c.b, c.len);
}

/* The other fields of a one-stage fixed content. */
static void field_variants(void)
{
	struct content c;

	valid(&c, 1, 0, 0);
	put_double(c.b + 48, NAN);
	put_double(stage(&c, 0) + 24, NAN);
	raw("raw-rate-nan", &c);
	valid(&c, 1, 0, 0);
	c.b[21] = FILTER_KEY_EXTERNAL;
	memset(c.b + 24, 0, 16);
	put_le(c.b + 24, filter_key_fingerprint(seed_key), 8);
	raw("raw-ok-extkey-fingerprint", &c);
	c.b[32] = 1;
	raw("raw-extkey-not-bare-fingerprint", &c);
	valid(&c, 1, 0, 0);
	put_le(stage(&c, 0) + 32, UINT64_MAX, 8);
	raw("raw-ok-insertions-max", &c);
	valid(&c, 1, 0, 0);
	c.len -= 1;
	raw("raw-payload-short", &c);
	valid(&c, 1, 0, 0);
	c.len += 1;
	raw("raw-payload-long", &c);
}

/* One field of a valid fixed content, at an offset from its start (stage 0 at 64). */
struct poke {
	const char *name;
	size_t at;
	unsigned len;
	uint64_t value;
};

/* Every other check of the headers, one seed each. */
static void poke_variants(void)
{
	static const struct poke pokes[] = {
		{ "raw-bad-magic", 6, 1, '\n' },
		{ "raw-version-2", 8, 4, 2 },
		{ "raw-header-length-63", 12, 4, 63 },
		{ "raw-fixed-stage-count-2", 16, 4, 2 },
		{ "raw-hash-3", 20, 1, 3 },
		{ "raw-unknown-flags", 21, 1, 0x80 },
		{ "raw-capacity-0", 40, 8, 0 },
		{ "raw-fixed-tighten-1", 57, 1, 1 },
		{ "raw-reserved-nonzero", 60, 1, 1 },
		{ "raw-stage-layout-3", HDR, 1, 3 },
		{ "raw-stage-reserved-nonzero", HDR + 50, 1, 1 },
		{ "raw-k-0", HDR + 4, 4, 0 },
		{ "raw-m-0", HDR + 8, 8, 0 },
		{ "raw-m-not-multiple-of-512", HDR + 8, 8, 1000 },
		{ "raw-stage-capacity-0", HDR + 16, 8, 0 },
		{ "raw-fixed-capacity-differs", HDR + 16, 8, 11 },
		{ "raw-stage-rate-1", HDR + 24, 8, UINT64_C(0x3ff0000000000000) },	/* 1.0 */
	};
	struct content c;

	for (size_t i = 0; i < sizeof pokes / sizeof pokes[0]; i++) {
		valid(&c, 1, 0, 0);
		put_le(c.b + pokes[i].at, pokes[i].value, pokes[i].len);
		raw(pokes[i].name, &c);
	}
}

/* Growing contents: the series and the stage count, valid and not. */
static void growing_variants(void)
{
	struct content c;

	valid(&c, 3, 2, 1);
	raw("raw-ok-grow-3-stages", &c);
	valid(&c, 2, 16, 4);
	raw("raw-ok-grow-g16t4", &c);
	valid(&c, 3, 2, 1);
	put_le(stage(&c, 2) + 16, 41, 8);
	raw("raw-grow-capacity-off-plan", &c);
	valid(&c, 3, 2, 1);
	put_double(stage(&c, 1) + 24, 0.02);
	raw("raw-grow-rate-off-series", &c);
	valid(&c, 3, 2, 1);
	for (size_t i = 0; i < 3; i++) {
		put_le(stage(&c, i) + 8, UINT64_C(1) << 46, 8);
		put_le(stage(&c, i) + 40, UINT64_C(1) << 43, 8);
	}
	raw("raw-grow-stages-too-large", &c);
	valid(&c, 3, 1, 1);
	raw("raw-grow-factor-1", &c);
	valid(&c, 3, 2, 5);
	raw("raw-grow-tighten-5", &c);
	valid(&c, 1, 0, 0);
	put_le(c.b + 16, 65, 4);
	c.b[56] = 2;
	c.b[57] = 1;
	raw("raw-stage-count-65", &c);
	/*
	 * Growing ones whose newest stage is full, so adding a key must grow
	 * them: to a 65th stage, or to a stage too big to make.
	 */
	valid(&c, 64, 2, 1);
	for (size_t i = 0; i < 64; i++)
		put_le(stage(&c, i) + 16, UINT64_C(1) << i, 8);
	put_le(c.b + 40, 1, 8);
	fill_payload(&c, 0xff);
	raw("raw-ok-grow-64-stages-full", &c);
	valid(&c, 2, 16, 1);
	put_le(c.b + 40, UINT64_C(1) << 40, 8);
	put_le(stage(&c, 0) + 16, UINT64_C(1) << 40, 8);
	put_le(stage(&c, 1) + 16, UINT64_C(1) << 44, 8);
	fill_payload(&c, 0xff);
	raw("raw-ok-grow-next-too-large", &c);
	/* 64 stages of growth 16: the planned capacity overflows at stage 16 */
	valid(&c, 64, 16, 1);
	raw("raw-grow-64-stages-overflow", &c);
	write_gzip("crafted-grow-64-stages-overflow.bf", c.b, c.len);
}

/* c written as pgzip does, in pieces of piece bytes (levels 0, 1, 9 in turn), with an index. */
static void indexed(const char *name, const struct content *c, size_t piece)
{
	static const int levels[] = { 0, 1, 9 };
	size_t pieces = (c->len + piece - 1) / piece;
	const char *why = NULL;
	int fd = open(path_of(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct pgzip *z = fd < 0 ? NULL : pgzip_open(fd, 1, Z_RLE, 0, pieces, NULL, 0, &why);

	if (z == NULL)
		die(name, why);
	for (size_t off = 0, i = 0; off < c->len; off += piece, i++) {
		size_t n = c->len - off < piece ? c->len - off : piece;

		if (pgzip_write(z, c->b + off, n, levels[i % 3], &why) < 0)
			die(name, why);
	}
	if (pgzip_finish(z, &why) < 0)
		die(name, why);
	pgzip_close(z);
	if (close(fd) < 0)
		die(name, "close");
}

static void indexed_variants(void)
{
	struct content c;

	valid(&c, 1, 0, 0);
	indexed("indexed-fixed.bf", &c, 24);
	valid(&c, 3, 2, 1);
	indexed("indexed-grow-3.bf", &c, 50);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seedgen DIR\n");
		return 2;
	}
	outdir = argv[1];
	grow_seeds();
	size_variants();
	field_variants();
	poke_variants();
	growing_variants();
	indexed_variants();
	return 0;
}
