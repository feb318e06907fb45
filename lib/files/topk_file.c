/* SPDX-License-Identifier: MIT */
/*
 * topk_file.c - the heavy-hitter summary's file, summary format version 1.
 *
 * One gzip member (RFC 1952) written as sketch files are (pgzip.c), so
 * the trailer's CRC-32 and length cover every byte. The content is a
 * 64-byte header, the count-min cells, then the kept keys; integers are
 * little-endian, written byte by byte:
 *
 *   +----+----+----+----+----+----+----+----+
 *  0| 89   42   46   48   0D   0A   1A   0A | magic "\x89BFH\r\n\x1a\n"
 *   +----+----+----+----+----+----+----+----+
 *  8| format version = 1 | header len = 64  |
 *   +----+----+----+----+----+----+----+----+
 * 16|kind|hash|flag|dpth| 0    0    0    0  | kind 1 = Space-Saving and
 *   +----+----+----+----+----+----+----+----+   count-min; depth 1..16
 * 24| SipHash key, 16 bytes                 | hash, flags: as a filter's
 * 32|   (flag bit 1: fingerprint, then 0)   |
 *   +----+----+----+----+----+----+----+----+
 * 40| total: keys added, repeats included   |
 *   +----+----+----+----+----+----+----+----+
 * 48| capacity (u32)     | width (u32)      |
 *   +----+----+----+----+----+----+----+----+
 * 56| kept: keys that follow, 0..capacity   |
 *   +----+----+----+----+----+----+----+----+
 * 64| depth x width cells, u64 each, row by row
 *   | kept keys, most frequent first (topk_items' order), each:
 *   |   hash (2 x u64), count, error, length (u64 each),
 *   |   then min(length, 256) bytes of the key
 *
 * The loader checks the header before allocating, then each key: count
 * at least 1 and at most total, error at most count, no hash twice,
 * length within 2^32; and that the member ends with nothing after it.
 */
#define ZLIB_CONST
#include <zlib.h>

#include "topk_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "bytes.h"
#include "gzin.h"
#include "pgzip.h"
#include "readpath.h"

#define HEADER_LEN 64u
#define MAGIC_LEN 8u
#define MAGIC_KIND_BYTE 3u
#define ENTRY_HEAD 40u
#define KIND_SPACE_SAVING 1u
#define SAVE_LEVEL 6
static const unsigned char magic[MAGIC_LEN] = { 0x89, 'B', 'F', 'H', '\r', '\n', 0x1a, '\n' };

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

/* ---- the header ---------------------------------------------------------- */

struct header {
	struct topk_params params;
	enum filter_hash hash;
	uint32_t flags;
	unsigned char key[16];
	uint64_t fingerprint, total, kept;
};

static void encode_header(const struct topk *t, unsigned char *h)
{
	memset(h, 0, HEADER_LEN);
	memcpy(h, magic, MAGIC_LEN);
	bytes_put_le(h + 8, TOPK_FORMAT_VERSION, 4);
	bytes_put_le(h + 12, HEADER_LEN, 4);
	h[16] = KIND_SPACE_SAVING;
	h[17] = (unsigned char)t->hash;
	h[18] = (unsigned char)t->flags;
	h[19] = (unsigned char)t->params.depth;
	if (t->flags & FILTER_KEY_EXTERNAL)	/* the fingerprint only, never the key */
		bytes_put_le(h + 24, t->fingerprint, 8);
	else
		memcpy(h + 24, t->key, 16);
	bytes_put_le(h + 40, t->total, 8);
	bytes_put_le(h + 48, t->params.capacity, 4);
	bytes_put_le(h + 52, t->params.width, 4);
	bytes_put_le(h + 56, t->kept, 8);
}

static const char *version_message(uint64_t version)
{
	static char msg[56];

	snprintf(msg, sizeof msg, "unsupported summary format version %llu",
		 (unsigned long long)version);
	return msg;
}

/* Bytes 16 to 39: kind, hash, flags, depth, key. */
static int decode_kind_and_key(const unsigned char *h, struct header *hd, const char **errstr)
{
	if (h[16] != KIND_SPACE_SAVING)
		return bad(errstr, "bad header: unknown summary kind");
	if (h[17] != FILTER_SIPHASH_2_4 && h[17] != FILTER_SIPHASH_1_3)
		return bad(errstr, "bad header: unknown hash function");
	if (h[18] & ~FILTER_FLAGS_KNOWN)
		return bad(errstr, "bad header: unknown key flags");
	if (!bytes_all_zero(h + 20, 4))
		return bad(errstr, "bad header: reserved field not zero");
	hd->hash = (enum filter_hash)h[17];
	hd->flags = h[18];
	hd->params.depth = h[19];
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

static int decode_header(const unsigned char *h, struct header *hd, const char **errstr)
{
	uint64_t version = bytes_get_le(h + 8, 4);
	const char *why;

	if (memcmp(h, magic, MAGIC_LEN) != 0)
		return bad(errstr, "not a bftools summary (bad magic)");
	if (version != TOPK_FORMAT_VERSION)
		return bad(errstr, version_message(version));
	if (bytes_get_le(h + 12, 4) != HEADER_LEN)
		return bad(errstr, "bad header: header length is not 64");
	if (decode_kind_and_key(h, hd, errstr) < 0)
		return -1;
	hd->total = bytes_get_le(h + 40, 8);
	hd->params.capacity = bytes_get_le(h + 48, 4);
	hd->params.width = bytes_get_le(h + 52, 4);
	hd->kept = bytes_get_le(h + 56, 8);
	if (topk_check_params(&hd->params, &why) < 0)
		return bad(errstr, "bad header: capacity, width or depth out of range");
	if (hd->kept > hd->params.capacity)
		return bad(errstr, "bad header: more keys than the capacity");
	return 0;
}

/* ---- writing ---------------------------------------------------------------- */

/* The cells, then the kept keys, in a new buffer of *len bytes. */
static unsigned char *encode_payload(const struct topk *t, size_t *len, const char **errstr)
{
	size_t ncells = (size_t)(t->params.width * t->params.depth);
	struct topk_item *items = malloc(((size_t)t->kept + 1) * sizeof *items);
	unsigned char *out = malloc(8 * ncells + (size_t)t->kept * (ENTRY_HEAD + TOPK_KEY_MAX));
	unsigned char *p = out;
	size_t n;

	if (items == NULL || out == NULL) {
		free(items);
		free(out);
		bad(errstr, strerror(ENOMEM));
		return NULL;
	}
	for (size_t i = 0; i < ncells; i++, p += 8)
		bytes_put_le(p, t->cells[i], 8);
	n = topk_items(t, items);
	for (size_t i = 0; i < n; i++) {
		size_t shown = items[i].truncated ? TOPK_KEY_MAX : (size_t)items[i].len;

		bytes_put_le(p, items[i].hash[0], 8);
		bytes_put_le(p + 8, items[i].hash[1], 8);
		bytes_put_le(p + 16, items[i].count, 8);
		bytes_put_le(p + 24, items[i].error, 8);
		bytes_put_le(p + 32, items[i].len, 8);
		memcpy(p + ENTRY_HEAD, items[i].key, shown);
		p += ENTRY_HEAD + shown;
	}
	free(items);
	*len = (size_t)(p - out);
	return out;
}

int topk_file_save(const struct topk *t, int fd, const char **errstr)
{
	unsigned char head[HEADER_LEN], *payload;
	struct header check;
	size_t len;
	int ret;

	payload = encode_payload(t, &len, errstr);
	if (payload == NULL)
		return -1;
	encode_header(t, head);
	/* the reader's own checks, so that no file is written that would not load */
	ret = decode_header(head, &check, errstr);
	if (ret == 0)
		ret = pgzip_save_member(fd, head, HEADER_LEN, payload, len, SAVE_LEVEL, errstr);
	free(payload);
	return ret;
}

int topk_file_save_path(const struct topk *t, const char *path, const char **errstr)
{
	struct atomic_file af;

	if (atomic_open(&af, path, errstr) < 0)
		return -1;
	if (topk_file_save(t, af.fd, errstr) < 0) {
		atomic_abort(&af);
		return -1;
	}
	return atomic_commit(&af, errstr);
}

/* ---- reading ------------------------------------------------------------------ */

int topk_file_detect(const unsigned char *start, size_t len)
{
	return gzin_detect_magic(start, len, magic, MAGIC_LEN);
}

/* Compressed bytes enough to inflate the magic: a gzip header with no name is 10 bytes. */
#define SNIFF_BYTES 512

static int sniff_fd(int fd)
{
	unsigned char start[SNIFF_BYTES];
	off_t at = lseek(fd, 0, SEEK_CUR);
	ssize_t n;

	if (at < 0)
		return 0;	/* a pipe: reading would consume it */
	do
		n = pread(fd, start, sizeof start, at);
	while (n < 0 && errno == EINTR);
	return n > 0 && topk_file_detect(start, (size_t)n) == 1;
}

int topk_file_sniff_path(const char *path)
{
	int fd = readpath_open(path), ret;

	if (fd < 0)
		return 0;
	ret = sniff_fd(fd);
	readpath_close(fd);
	return ret;
}

/* The magic, and what another bftools kind byte says the file is. */
static int read_magic(struct gzin *g, unsigned char *h, const char **errstr)
{
	size_t done;

	if (gzin_read(g, h, MAGIC_LEN, &done, errstr) < 0) {
		if (g->ended)
			*errstr = "not a bftools summary (bad magic)";
		return -1;
	}
	if (memcmp(h, magic, MAGIC_LEN) == 0)
		return 0;
	if (memcmp(h, magic, MAGIC_KIND_BYTE) == 0
	    && memcmp(h + MAGIC_KIND_BYTE + 1, magic + MAGIC_KIND_BYTE + 1,
		      MAGIC_LEN - MAGIC_KIND_BYTE - 1) == 0) {
		if (h[MAGIC_KIND_BYTE] == 'T')
			return bad(errstr, "a bftools filter, not a summary");
		if (h[MAGIC_KIND_BYTE] == 'S')
			return bad(errstr, "a bftools sketch, not a summary");
	}
	return bad(errstr, "not a bftools summary (bad magic)");
}

static struct topk *from_header(const struct header *hd, const char **errstr)
{
	struct topk *t = topk_new(&hd->params, hd->hash, hd->flags, hd->key, errstr);

	if (t == NULL)
		return NULL;
	if (hd->flags & FILTER_KEY_EXTERNAL) {
		t->fingerprint = hd->fingerprint;
		t->needs_key = 1;
	}
	t->total = hd->total;
	return t;
}

static int read_cells(struct gzin *g, struct topk *t, const char **errstr)
{
	size_t ncells = (size_t)(t->params.width * t->params.depth), done;
	unsigned char buf[8 * 512];

	for (size_t at = 0; at < ncells; at += 512) {
		size_t n = ncells - at < 512 ? ncells - at : 512;

		if (gzin_read(g, buf, 8 * n, &done, errstr) < 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			t->cells[at + i] = bytes_get_le(buf + 8 * i, 8);
	}
	return 0;
}

static int read_entry(struct gzin *g, struct topk *t, const char **errstr)
{
	unsigned char head[ENTRY_HEAD], key[TOPK_KEY_MAX];
	struct topk_item it;
	size_t done, shown;

	if (gzin_read(g, head, ENTRY_HEAD, &done, errstr) < 0)
		return -1;
	it.hash[0] = bytes_get_le(head, 8);
	it.hash[1] = bytes_get_le(head + 8, 8);
	it.count = bytes_get_le(head + 16, 8);
	it.error = bytes_get_le(head + 24, 8);
	it.len = bytes_get_le(head + 32, 8);
	if (it.count > t->total)
		return bad(errstr, "bad payload: a key's count above the total");
	if (it.len > UINT32_MAX)
		return bad(errstr, "bad payload: a key's length above 2^32");
	shown = it.len < TOPK_KEY_MAX ? (size_t)it.len : TOPK_KEY_MAX;
	if (shown > 0 && gzin_read(g, key, shown, &done, errstr) < 0)
		return -1;
	it.key = key;
	if (topk_restore(t, &it, errstr) < 0) {
		static char message[80];

		snprintf(message, sizeof message, "bad payload: %s", *errstr);
		return bad(errstr, message);
	}
	return 0;
}

static struct topk *load(struct gzin *g, const char **errstr)
{
	unsigned char h[HEADER_LEN];
	struct header hd;
	struct topk *t;
	size_t done;

	if (gzin_expect_gzip(g, errstr) < 0 || read_magic(g, h, errstr) < 0
	    || gzin_read(g, h + MAGIC_LEN, HEADER_LEN - MAGIC_LEN, &done, errstr) < 0
	    || decode_header(h, &hd, errstr) < 0)
		return NULL;
	t = from_header(&hd, errstr);
	if (t == NULL)
		return NULL;
	if (read_cells(g, t, errstr) < 0)
		goto fail;
	for (uint64_t i = 0; i < hd.kept; i++)
		if (read_entry(g, t, errstr) < 0)
			goto fail;
	if (gzin_end(g, errstr) < 0)
		goto fail;
	return t;
fail:
	topk_free(t);
	return NULL;
}

struct topk *topk_file_load_started(int fd, const unsigned char *start, size_t len, int eof,
				    const char **errstr)
{
	struct gzin g;
	struct topk *t;

	if (gzin_open_started(&g, fd, GZIN_SUMMARY, start, len, eof, errstr) < 0)
		return NULL;
	t = load(&g, errstr);
	gzin_close(&g);
	return t;
}

struct topk *topk_file_load(int fd, const char **errstr)
{
	return topk_file_load_started(fd, NULL, 0, 0, errstr);
}

struct topk *topk_file_load_path(const char *path, const char **errstr)
{
	struct topk *t;
	int fd = readpath_open(path);

	if (fd < 0) {
		*errstr = strerror(errno);
		return NULL;
	}
	t = topk_file_load(fd, errstr);
	readpath_close(fd);
	return t;
}
