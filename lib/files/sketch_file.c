/* SPDX-License-Identifier: MIT */
/*
 * sketch_file.c - the sketch file (sketch.h's HyperLogLog sketch on disk),
 * sketch format version 1.
 *
 * A sketch file is exactly one gzip member (RFC 1952), written as filter
 * files are (pgzip.c: FHCRC set, mtime 0), so the gzip trailer's CRC-32
 * and length cover every byte of the content and the header CRC the gzip
 * header. The content is a 64-byte header, then the payload; integers are
 * little-endian, written byte by byte:
 *
 *   +----+----+----+----+----+----+----+----+
 *  0| 89   42   46   53   0D   0A   1A   0A | magic "\x89BFS\r\n\x1a\n"
 *   +----+----+----+----+----+----+----+----+
 *  8| format version = 1 | header len = 64  |
 *   +----+----+----+----+----+----+----+----+
 * 16|kind| p  |hash|flag|phas| 0    0    0  | kind 1 = HyperLogLog;
 *   +----+----+----+----+----+----+----+----+   p = precision, 4..18
 * 24| SipHash key, 16 bytes                 | hash, flags: as a filter's
 * 32|   (flag bit 1: fingerprint, then 0)   |   (format.c, bf(5))
 *   +----+----+----+----+----+----+----+----+
 * 40| insertions: keys added, repeats too   |
 *   +----+----+----+----+----+----+----+----+
 * 48| entries: exact n (0..2^p/8); else 2^p |
 *   +----+----+----+----+----+----+----+----+
 * 56| payload length: exact 8n; else 2^p    |
 *   +----+----+----+----+----+----+----+----+
 * 64| payload                               |
 *
 *   phase 0, exact: n distinct 64-bit hashes, u64 each, strictly
 *     ascending (so one set has one file);
 *   phase 1, registers: 2^p bytes, register i in byte i, 0..65-p.
 *
 * The two phases are hll.c's: a counter holds the hashes themselves while
 * it has seen at most 2^p/8 distinct ones, and its count is exact; a
 * sketch saved then keeps them, so a small count stays exact when loaded
 * and merged. The registers are one byte each, as in memory: the gzip
 * member shrinks them (a register holds about 3 bits of information).
 *
 * The magic shares "\x89BF" and its last four bytes with the filter's
 * "\x89BFT\r\n\x1a\n": the fourth byte names the kind of bftools file, T
 * for a filter, S for a sketch. That is how each reader tells the other
 * kind apart ("a bftools filter, not a sketch") without knowing its
 * format.
 *
 * Loading: the 64-byte header is decoded and every field checked
 * (version, length, kind, precision, hash, flags, phase, reserved bytes,
 * entries and payload length against each other) before the counter is
 * allocated; then the payload is read and checked (hashes ascending,
 * registers in range), and the member must end, with a good trailer and
 * nothing after it. Saving encodes the header and decodes it again with
 * the reader's own checks, so no file is written that would not load.
 */
#define ZLIB_CONST
#include <zlib.h>

#include "sketch_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "bytes.h"
#include "filter.h"
#include "gzin.h"
#include "hll.h"
#include "pgzip.h"
#include "readpath.h"

#define HEADER_LEN 64u
#define MAGIC_LEN 8u
#define MAGIC_KIND_BYTE 3u	/* the byte that tells the kinds of bftools file apart */
static const unsigned char magic[MAGIC_LEN] = { 0x89, 'B', 'F', 'S', '\r', '\n', 0x1a, '\n' };
#define FILTER_KIND 'T'

#define KIND_HYPERLOGLOG 1u
#define PHASE_EXACT 0u
#define PHASE_REGISTERS 1u
#define SAVE_LEVEL 9		/* a few hundred KiB at most: the smallest file */
#define SNIFF_WANT MAGIC_LEN

const char sketch_err_filter[] = "a bftools filter, not a sketch";
const char sketch_err_summary[] = "a bftop summary, not a sketch";

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

/* ---- the header -------------------------------------------------------- */

/* Everything the header says, decoded and checked. */
struct header {
	unsigned precision, phase;
	enum filter_hash hash;
	uint32_t flags;
	unsigned char key[16];	/* all 0 for a key kept outside */
	uint64_t fingerprint;
	uint64_t insertions, entries, payload;
};

static void encode_header(const struct sketch *s, unsigned phase, uint64_t entries,
			  unsigned char *h)
{
	memset(h, 0, HEADER_LEN);
	memcpy(h, magic, MAGIC_LEN);
	bytes_put_le(h + 8, SKETCH_FORMAT_VERSION, 4);
	bytes_put_le(h + 12, HEADER_LEN, 4);
	h[16] = KIND_HYPERLOGLOG;
	h[17] = (unsigned char)sketch_precision(s);
	h[18] = (unsigned char)s->hash;
	h[19] = (unsigned char)s->flags;
	h[20] = (unsigned char)phase;
	if (s->flags & FILTER_KEY_EXTERNAL)	/* the fingerprint only, never the key */
		bytes_put_le(h + 24, s->fingerprint, 8);
	else
		memcpy(h + 24, s->key, 16);
	bytes_put_le(h + 40, s->insertions, 8);
	bytes_put_le(h + 48, entries, 8);
	bytes_put_le(h + 56, phase == PHASE_EXACT ? 8 * entries : entries, 8);
}

/* The number belongs in the message; one static buffer, as the library is single-threaded. */
static const char *version_message(uint64_t version)
{
	static char msg[56];

	snprintf(msg, sizeof msg, "unsupported sketch format version %llu",
		 (unsigned long long)version);
	return msg;
}

/* Bytes 16 to 39: kind, precision, hash, flags, phase, key. */
static int decode_kind_and_key(const unsigned char *h, struct header *hd, const char **errstr)
{
	if (h[16] != KIND_HYPERLOGLOG)
		return bad(errstr, "bad header: unknown sketch kind");
	if (h[17] < HLL_PRECISION_MIN || h[17] > HLL_PRECISION_MAX)
		return bad(errstr, "bad header: precision out of range 4..18");
	if (h[18] != FILTER_SIPHASH_2_4 && h[18] != FILTER_SIPHASH_1_3)
		return bad(errstr, "bad header: unknown hash function");
	if (h[19] & ~FILTER_FLAGS_KNOWN)
		return bad(errstr, "bad header: unknown key flags");
	if (h[20] != PHASE_EXACT && h[20] != PHASE_REGISTERS)
		return bad(errstr, "bad header: unknown phase");
	if (!bytes_all_zero(h + 21, 3))
		return bad(errstr, "bad header: reserved field not zero");
	hd->precision = h[17];
	hd->hash = (enum filter_hash)h[18];
	hd->flags = h[19];
	hd->phase = h[20];
	memset(hd->key, 0, sizeof hd->key);
	if (!(hd->flags & FILTER_KEY_EXTERNAL)) {
		memcpy(hd->key, h + 24, 16);
		hd->fingerprint = filter_key_fingerprint(hd->key);
		return 0;
	}
	if (!bytes_all_zero(h + 32, 8))
		return bad(errstr, "bad header: key field of an external key not a bare fingerprint");
	hd->fingerprint = bytes_get_le(h + 24, 8);
	return 0;
}

/* Bytes 48 to 63: entries and payload length, against the phase and precision. */
static int decode_sizes(const unsigned char *h, struct header *hd, const char **errstr)
{
	uint64_t registers = UINT64_C(1) << hd->precision;

	hd->entries = bytes_get_le(h + 48, 8);
	hd->payload = bytes_get_le(h + 56, 8);
	if (hd->phase == PHASE_REGISTERS) {
		if (hd->entries != registers)
			return bad(errstr, "bad header: register count is not 2^precision");
		if (hd->payload != registers)
			return bad(errstr, "bad header: payload length is not the register count");
		return 0;
	}
	if (hd->entries > hll_exact_max(hd->precision))
		return bad(errstr, "bad header: more exact hashes than 2^precision / 8");
	if (hd->payload != 8 * hd->entries)
		return bad(errstr, "bad header: payload length is not 8 per exact hash");
	return 0;
}

static int decode_header(const unsigned char *h, struct header *hd, const char **errstr)
{
	uint64_t version = bytes_get_le(h + 8, 4);

	if (memcmp(h, magic, MAGIC_LEN) != 0)
		return bad(errstr, "not a bftools sketch (bad magic)");
	if (version != SKETCH_FORMAT_VERSION)
		return bad(errstr, version_message(version));
	if (bytes_get_le(h + 12, 4) != HEADER_LEN)
		return bad(errstr, "bad header: header length is not 64");
	if (decode_kind_and_key(h, hd, errstr) < 0 || decode_sizes(h, hd, errstr) < 0)
		return -1;
	hd->insertions = bytes_get_le(h + 40, 8);
	return 0;
}

/* ---- writing ----------------------------------------------------------- */

/* The payload of s in file order, in a new buffer of *len bytes; *phase and *entries for the header. */
static unsigned char *encode_payload(const struct sketch *s, unsigned *phase, uint64_t *entries,
				     size_t *len, const char **errstr)
{
	/* either way at most 2^p bytes: 8 per exact hash, 2^p / 8 of them */
	size_t m = (size_t)1 << sketch_precision(s), n;
	unsigned char *out = malloc(m);
	uint64_t *hashes = malloc(m);

	if (out == NULL || hashes == NULL) {
		free(out);
		free(hashes);
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	*phase = sketch_is_exact(s) ? PHASE_EXACT : PHASE_REGISTERS;
	if (*phase == PHASE_REGISTERS) {
		hll_registers(s->hll, out);
		*entries = *len = m;
	} else {
		n = hll_exact_hashes(s->hll, hashes);
		for (size_t i = 0; i < n; i++)
			bytes_put_le(out + 8 * i, hashes[i], 8);
		*entries = n;
		*len = 8 * n;
	}
	free(hashes);
	return out;
}

int sketch_save(const struct sketch *s, int fd, const char **errstr)
{
	unsigned char head[HEADER_LEN], *payload;
	struct header check;
	uint64_t entries;
	unsigned phase;
	size_t len;
	int ret;

	payload = encode_payload(s, &phase, &entries, &len, errstr);
	if (payload == NULL)
		return -1;
	encode_header(s, phase, entries, head);
	/* the reader's own checks, so that no file is written that would not load */
	ret = decode_header(head, &check, errstr);
	if (ret == 0)
		ret = pgzip_save_member(fd, head, HEADER_LEN, payload, len, SAVE_LEVEL, errstr);
	free(payload);
	return ret;
}

int sketch_save_path(const struct sketch *s, const char *path, const char **errstr)
{
	struct atomic_file af;

	if (atomic_open(&af, path, errstr) < 0)
		return -1;
	if (sketch_save(s, af.fd, errstr) < 0) {
		atomic_abort(&af);
		return -1;
	}
	return atomic_commit(&af, errstr);
}

/* ---- reading ----------------------------------------------------------- */

int sketch_detect(const unsigned char *start, size_t len)
{
	return gzin_detect_magic(start, len, magic, SNIFF_WANT);
}

/* The magic, and what a wrong one says the file is. */
static int read_magic(struct gzin *g, unsigned char *h, const char **errstr)
{
	size_t done;

	if (gzin_read(g, h, MAGIC_LEN, &done, errstr) < 0) {
		if (g->ended)	/* a whole gzip member, too short to be ours */
			*errstr = "not a bftools sketch (bad magic)";
		return -1;
	}
	if (memcmp(h, magic, MAGIC_LEN) == 0)
		return 0;
	/* the same family of magic, the kind byte a filter's */
	if (h[MAGIC_KIND_BYTE] == FILTER_KIND && memcmp(h, magic, MAGIC_KIND_BYTE) == 0
	    && memcmp(h + MAGIC_KIND_BYTE + 1, magic + MAGIC_KIND_BYTE + 1,
		      MAGIC_LEN - MAGIC_KIND_BYTE - 1) == 0)
		return bad(errstr, sketch_err_filter);
	if (h[MAGIC_KIND_BYTE] == 'H' && memcmp(h, magic, MAGIC_KIND_BYTE) == 0
	    && memcmp(h + MAGIC_KIND_BYTE + 1, magic + MAGIC_KIND_BYTE + 1,
		      MAGIC_LEN - MAGIC_KIND_BYTE - 1) == 0)
		return bad(errstr, sketch_err_summary);
	return bad(errstr, "not a bftools sketch (bad magic)");
}

/* A new, empty sketch as the header describes it, its key or fingerprint set. */
static struct sketch *from_header(const struct header *hd, const char **errstr)
{
	struct sketch *s = hd->flags & FILTER_KEY_EXTERNAL
				   ? sketch_new_keyless(hd->precision, hd->hash, hd->flags,
							hd->fingerprint, errstr)
				   : sketch_new(hd->precision, hd->hash, hd->flags, hd->key, errstr);

	if (s == NULL)
		return NULL;
	s->insertions = hd->insertions;
	return s;
}

/* The exact phase's hashes, ascending, into s. */
static int take_hashes(struct sketch *s, const unsigned char *payload, uint64_t n,
		       const char **errstr)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t hash = bytes_get_le(payload + 8 * i, 8);

		if (i > 0 && hash <= bytes_get_le(payload + 8 * (i - 1), 8))
			return bad(errstr, "bad payload: exact hashes not in ascending order");
		hll_add(s->hll, hash);
	}
	return 0;
}

/* The payload hd describes, read from g into s. */
static int read_payload(struct gzin *g, struct sketch *s, const struct header *hd,
			const char **errstr)
{
	unsigned char *payload = malloc((size_t)hd->payload + 1);
	size_t done;
	int ret;

	if (payload == NULL)
		return bad(errstr, strerror(ENOMEM));
	ret = gzin_read(g, payload, (size_t)hd->payload, &done, errstr);
	if (ret == 0 && hd->phase == PHASE_EXACT)
		ret = take_hashes(s, payload, hd->entries, errstr);
	else if (ret == 0 && hll_set_registers(s->hll, payload) < 0)
		ret = bad(errstr, "bad payload: register above 65 - precision");
	free(payload);
	return ret;
}

static struct sketch *load(struct gzin *g, const char **errstr)
{
	unsigned char h[HEADER_LEN];
	struct header hd;
	struct sketch *s;
	size_t done;

	if (gzin_expect_gzip(g, errstr) < 0 || read_magic(g, h, errstr) < 0
	    || gzin_read(g, h + MAGIC_LEN, HEADER_LEN - MAGIC_LEN, &done, errstr) < 0
	    || decode_header(h, &hd, errstr) < 0)
		return NULL;
	s = from_header(&hd, errstr);
	if (s == NULL)
		return NULL;
	if (read_payload(g, s, &hd, errstr) < 0 || gzin_end(g, errstr) < 0) {
		sketch_free(s);
		return NULL;
	}
	return s;
}

struct sketch *sketch_load_started(int fd, const unsigned char *start, size_t len, int eof,
				  const char **errstr)
{
	struct gzin g;
	struct sketch *s;

	if (gzin_open_started(&g, fd, GZIN_SKETCH, start, len, eof, errstr) < 0)
		return NULL;
	s = load(&g, errstr);
	gzin_close(&g);
	return s;
}

struct sketch *sketch_load(int fd, const char **errstr)
{
	return sketch_load_started(fd, NULL, 0, 0, errstr);
}

struct sketch *sketch_load_path(const char *path, const char **errstr)
{
	struct sketch *s;
	int fd = readpath_open(path);

	if (fd < 0) {
		*errstr = strerror(errno);
		return NULL;
	}
	s = sketch_load(fd, errstr);
	readpath_close(fd);
	return s;
}
