/* SPDX-License-Identifier: MIT */
/*
 * test_instream.c - compressed inputs (lib/instream.c and its codecs) and
 * the line reader over them (lines_open_stream).
 *
 * The compressed bytes are made here, with zlib's deflate (gzip wrapper)
 * and ZSTD_compress, from fixed-seed content, so nothing depends on the
 * gzip and zstd programs. Streams are read in pieces from 1 byte to 64 KiB
 * (the decoder's held-back output is flushed across calls), from files and
 * from pipes that deliver one byte at a time (sniffing must wait, not
 * guess). Damage is tried exhaustively on small inputs: every cut point,
 * and every byte flipped, must give a prefix of the content (or, for
 * flips, anything) and then an end or one message, never a hang or a
 * crash (the sanitizer builds run this too).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "instream.h"
#include "lines.h"
#include "unit.h"

/* Content: lines of fixed-seed hex, n bytes (the last line may be cut). */
static char *content(size_t n, uint64_t seed)
{
	char *p = malloc(n + 1);

	for (size_t i = 0; p != NULL && i < n;) {
		uint64_t v = unit_splitmix64(&seed);
		int len = snprintf(p + i, n + 1 - i, "%llx\n", (unsigned long long)(v >> (v & 31)));

		i += (size_t)len < n - i ? (size_t)len : n - i;
	}
	return p;
}

/* One gzip member of src[0..len) appended at out + *at (room enough). */
static int gzip_member(const char *src, size_t len, unsigned char *out, size_t *at, size_t cap)
{
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	zs.next_in = (unsigned char *)(uintptr_t)src;
	zs.avail_in = (uInt)len;
	zs.next_out = out + *at;
	zs.avail_out = (uInt)(cap - *at);
	rc = deflate(&zs, Z_FINISH);
	*at += zs.total_out;
	deflateEnd(&zs);
	return rc == Z_STREAM_END ? 0 : -1;
}

/* One zstd frame (with its checksum) of src[0..len) appended at out + *at. */
static int zstd_frame(const char *src, size_t len, unsigned char *out, size_t *at, size_t cap)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t n;

	if (c == NULL)
		return -1;
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	n = ZSTD_compress2(c, out + *at, cap - *at, src, len);
	ZSTD_freeCCtx(c);
	if (ZSTD_isError(n))
		return -1;
	*at += n;
	return 0;
}

/*
 * Compress content[0..len) as `members` pieces of one format (gzip: 'g',
 * zstd: 'z') one after another; *out_len gets the size. NULL on failure.
 */
static unsigned char *compress_in(int format, const char *src, size_t len, int members,
				  size_t *out_len)
{
	size_t cap = len + len / 2 + 1024 * (size_t)members, at = 0;
	unsigned char *out = malloc(cap);

	for (int m = 0; out != NULL && m < members; m++) {
		size_t from = len * (size_t)m / (size_t)members;
		size_t to = len * (size_t)(m + 1) / (size_t)members;
		int rc = format == 'g' ? gzip_member(src + from, to - from, out, &at, cap)
				       : zstd_frame(src + from, to - from, out, &at, cap);

		if (rc < 0) {
			free(out);
			return NULL;
		}
	}
	*out_len = at;
	return out;
}

/*
 * Read s to its end or failure in pieces of `piece` bytes into *got
 * (malloc'd, *got_len bytes). Returns 0 at a clean end, -1 on failure.
 * Gives up (-2) after a bound of calls that no correct stream needs.
 */
static int drain(struct instream *s, size_t piece, char **got, size_t *got_len)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int rc = -2;

	for (long calls = 0; buf != NULL && calls < 100000000; calls++) {
		ssize_t n;

		if (cap - len < piece) {
			char *bigger = realloc(buf, cap * 2);

			if (bigger == NULL)
				break;
			buf = bigger;
			cap *= 2;
		}
		n = instream_read(s, buf + len, piece);
		if (n < 0) {
			rc = -1;
			break;
		}
		len += (size_t)n;
		if (n == 0 && instream_ended(s)) {
			rc = 0;
			break;
		}
	}
	*got = buf;
	*got_len = len;
	return rc;
}

/* Whether reading fd (decompress on) in pieces gives exactly want[0..len) and a clean end. */
static int reads_as(int fd, size_t piece, const char *want, size_t len, const char *format)
{
	struct instream *s = instream_open(fd, 1);
	char *got = NULL;
	size_t got_len = 0;
	int ok = s != NULL && drain(s, piece, &got, &got_len) == 0 && got_len == len &&
		 memcmp(got, want, len) == 0;
	const char *f = s != NULL ? instream_format(s) : NULL;

	ok = ok && (format == NULL ? f == NULL : f != NULL && strcmp(f, format) == 0);
	free(got);
	instream_close(s);
	return ok;
}

static void reads_every_format_in_every_piece_size(int format, const char *name, int members)
{
	size_t len = 300000, zlen = 0;
	char *text = content(len, 42);
	unsigned char *z = compress_in(format, text, len, members, &zlen);
	static const size_t pieces[] = { 1, 7, 4096, 65536, 1 << 20 };

	CHECK(text != NULL && z != NULL);
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		int fd = unit_temp_file((const char *)z, zlen);

		CHECK(fd >= 0);
		CHECKF(reads_as(fd, pieces[i], text, len, name), "%s, %d members, pieces of %zu",
		       name, members, pieces[i]);
		close(fd);
	}
	free(text);
	free(z);
}

static void gzip_one_member(void)
{
	reads_every_format_in_every_piece_size('g', "gzip", 1);
}

static void gzip_members_one_after_another(void)
{
	reads_every_format_in_every_piece_size('g', "gzip", 5);
}

static void zstd_one_frame(void)
{
	reads_every_format_in_every_piece_size('z', "zstd", 1);
}

static void zstd_frames_one_after_another(void)
{
	reads_every_format_in_every_piece_size('z', "zstd", 3);
}

/* Plain input, magic-like starts included, passes through unchanged; so does gzip when off. */
static void plain_and_undecompressed_bytes_pass_through(void)
{
	static const char *const plain[] = { "", "a\n", "\x1f", "\x1f\n", "\x28\xb5\x2f",
					     "\x28\xb5\x2f\n", "\x1f\x8c rest\n" };
	size_t zlen = 0;
	unsigned char *z = compress_in('g', "x\n", 2, 1, &zlen);

	CHECK(z != NULL);
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
		int fd = unit_temp_file(plain[i], strlen(plain[i]));

		CHECK(fd >= 0);
		CHECKF(reads_as(fd, 3, plain[i], strlen(plain[i]), NULL), "plain input %zu", i);
		close(fd);
	}
	int fd = unit_temp_file((const char *)z, zlen);
	struct instream *s = instream_open(fd, 0);
	char *got = NULL;
	size_t got_len = 0;

	CHECK(s != NULL && drain(s, 5, &got, &got_len) == 0);
	CHECK(got_len == zlen && memcmp(got, z, zlen) == 0 && instream_format(s) == NULL);
	CHECK(instream_bytes_in(s) == zlen);
	free(got);
	instream_close(s);
	close(fd);
	free(z);
}

/* The read end of a pipe a child writes data into one byte at a time. */
static int trickle(const unsigned char *data, size_t len, pid_t *child)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	*child = fork();
	if (*child < 0)
		return -1;
	if (*child == 0) {
		close(fds[0]);
		for (size_t i = 0; i < len; i++)
			if (write(fds[1], data + i, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static int reap(pid_t child)
{
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A pipe that delivers a byte per read: the magic is told only when complete, and nothing is lost. */
static void a_pipe_byte_by_byte_is_sniffed_without_loss(void)
{
	size_t len = 20000, zlen = 0;
	char *text = content(len, 7);
	unsigned char *z = compress_in('z', text, len, 2, &zlen);
	static const char magic_prefix[] = "\x28\xb5\x2fplain\n";
	pid_t child;
	int fd;

	CHECK(text != NULL && z != NULL);
	fd = trickle(z, zlen, &child);
	CHECK(fd >= 0);
	CHECK(reads_as(fd, 4096, text, len, "zstd"));
	close(fd);
	CHECK(reap(child) == 0);
	fd = trickle((const unsigned char *)magic_prefix, sizeof magic_prefix - 1, &child);
	CHECK(fd >= 0);
	CHECK(reads_as(fd, 4096, magic_prefix, sizeof magic_prefix - 1, NULL));
	close(fd);
	CHECK(reap(child) == 0);
	free(text);
	free(z);
}

/*
 * Cut at every length: what comes out is a prefix of the content and
 * then "truncated FORMAT input", except where the cut falls between the
 * two members (frames): a clean end after the first half. A cut inside
 * the magic leaves plain bytes, not tried here.
 */
static int cut_reads_right(const unsigned char *z, size_t cut, const char *text, size_t len,
			   size_t boundary, const char *want, char *report, size_t report_len)
{
	int fd = unit_temp_file((const char *)z, cut);
	struct instream *s = instream_open(fd, 1);
	char *got = NULL;
	size_t got_len = 0;
	int rc = drain(s, 1000, &got, &got_len), ok;
	const char *why = instream_error(s);

	if (cut == boundary)
		ok = rc == 0 && got_len == len / 2;
	else
		ok = rc == -1 && why != NULL && strcmp(why, want) == 0 && got_len <= len;
	ok = ok && memcmp(got, text, got_len) == 0;
	snprintf(report, report_len, "rc %d, got %zu bytes, %s", rc, got_len, why ? why : "(no message)");
	free(got);
	instream_close(s);
	close(fd);
	return ok;
}

static void every_cut_is_a_prefix_then_truncated(int format, const char *name, size_t magic)
{
	size_t len = 3000, zlen = 0, boundary = 0;
	char *text = content(len, 3);
	unsigned char *z = compress_in(format, text, len, 2, &zlen);
	/* the first member alone, made the same way: where the second begins */
	unsigned char *first = compress_in(format, text, len / 2, 1, &boundary);
	char want[64], report[128];

	CHECK(text != NULL && z != NULL && first != NULL && memcmp(z, first, boundary) == 0);
	snprintf(want, sizeof want, "truncated %s input", name);
	for (size_t cut = magic; cut < zlen; cut++)
		CHECKF(cut_reads_right(z, cut, text, len, boundary, want, report, sizeof report),
		       "%s cut at %zu of %zu: %s", name, cut, zlen, report);
	free(text);
	free(z);
	free(first);
}

static void every_gzip_cut_is_truncated(void)
{
	every_cut_is_a_prefix_then_truncated('g', "gzip", 2);
}

static void every_zstd_cut_is_truncated(void)
{
	every_cut_is_a_prefix_then_truncated('z', "zstd", 4);
}

/* Every byte flipped: an end or one message, never a hang; gzip and zstd check every byte. */
static void every_flip_ends_or_fails(int format)
{
	size_t len = 2000, zlen = 0;
	char *text = content(len, 5);
	unsigned char *z = compress_in(format, text, len, 1, &zlen);

	CHECK(text != NULL && z != NULL);
	for (size_t at = 0; at < zlen; at++) {
		int fd;
		struct instream *s;
		char *got = NULL;
		size_t got_len = 0;
		int rc;

		z[at] ^= 0x55;
		fd = unit_temp_file((const char *)z, zlen);
		z[at] ^= 0x55;
		s = instream_open(fd, 1);
		rc = drain(s, 512, &got, &got_len);
		/* a failure not in words (errno's) would be a read error: there is none here */
		CHECKF(rc == 0 || (rc == -1 && instream_error(s) != NULL), "flip at %zu: rc %d", at, rc);
		/* a flip past the magic must be caught: the content and its checksums cover it */
		CHECKF(at < 4 || rc == -1 || (got_len == len && memcmp(got, text, len) == 0),
		       "flip at %zu went unnoticed", at);
		free(got);
		instream_close(s);
		close(fd);
	}
	free(text);
	free(z);
}

static void every_gzip_flip_ends_or_fails(void)
{
	every_flip_ends_or_fails('g');
}

static void every_zstd_flip_ends_or_fails(void)
{
	every_flip_ends_or_fails('z');
}

/* Lines over a compressed stream: the records of the content, and the damage after them. */
static void lines_over_a_truncated_stream_come_before_the_error(void)
{
	size_t len = 100000, zlen = 0, lines_seen = 0, bytes_seen = 0;
	char *text = content(len, 9);
	unsigned char *z = compress_in('g', text, len, 1, &zlen);
	int fd = unit_temp_file((const char *)z, zlen - 10);
	struct instream *s = instream_open(fd, 1);
	struct lines_reader *r = lines_open_stream(s, '\n');
	struct lines_batch b = { 0 };
	long n;

	CHECK(text != NULL && z != NULL && r != NULL);
	while ((n = lines_next_owned(r, &b)) > 0) {
		for (long i = 0; i < n; i++) {
			CHECK(memcmp(b.records[i].data, text + bytes_seen, b.records[i].len) == 0);
			bytes_seen += b.records[i].len + 1;
		}
		lines_seen += (size_t)n;
	}
	CHECK(n == -1 && instream_error(s) != NULL);
	CHECK(strcmp(instream_error(s), "truncated gzip input") == 0);
	CHECK(lines_seen > 0 && bytes_seen <= len);
	lines_batch_free(&b);
	lines_close(r);
	instream_close(s);
	close(fd);
	free(text);
	free(z);
}

static void compressed_at_reads_the_magic_where_asked(void)
{
	static const char data[] = "ab\x1f\x8b\x08\x28\xb5\x2f\xfd";
	int fd = unit_temp_file(data, sizeof data - 1);

	CHECK(fd >= 0);
	CHECK(instream_compressed_at(fd, 0) == 0);
	CHECK(instream_compressed_at(fd, 2) == 1);
	CHECK(instream_compressed_at(fd, 5) == 1);
	CHECK(instream_compressed_at(fd, 6) == 0);
	CHECK(instream_compressed_at(fd, 100) == 0);
	CHECK(lseek(fd, 0, SEEK_CUR) == 0);	/* pread: the offset is not moved */
	close(fd);
}

/*
 * Read data[0..len) (decompress on) through a pipe this process feeds a
 * byte before each call, so every read(2) gets exactly one byte and the
 * codec decodes the content in its smallest pieces; then the rest to the
 * end. Returns drain's answer; *s is left open for its error.
 */
static int fed_byte_by_byte(const unsigned char *data, size_t len, struct instream **s,
			    char **got, size_t *got_len)
{
	char *buf = malloc(len * 64 + 64), *rest = NULL;
	size_t at = 0, rest_len = 0;
	int fds[2], rc = -2;

	*s = NULL;
	if (buf == NULL || pipe(fds) < 0) {
		*got = buf;
		*got_len = 0;
		return -2;
	}
	*s = instream_open(fds[0], 1);
	for (size_t i = 0; *s != NULL && i < len; i++) {
		ssize_t n;

		if (write(fds[1], data + i, 1) != 1)
			break;
		n = instream_read(*s, buf + at, 8);
		if (n < 0) {
			rc = -1;
			break;
		}
		at += (size_t)n;
	}
	close(fds[1]);
	if (rc != -1 && *s != NULL) {
		rc = drain(*s, 8, &rest, &rest_len);
		memcpy(buf + at, rest, rest_len);
		at += rest_len;
		free(rest);
	}
	close(fds[0]);
	*got = buf;
	*got_len = at;
	return rc;
}

/* Whether reading fd (decompress on) in pieces fails at once with message want, handing out nothing. */
static int refused_as(int fd, size_t piece, const char *want)
{
	struct instream *s = instream_open(fd, 1);
	char *got = NULL;
	size_t got_len = 0;
	int ok = s != NULL && drain(s, piece, &got, &got_len) == -1 && got_len == 0 &&
		 instream_error(s) != NULL && strcmp(instream_error(s), want) == 0;

	free(got);
	instream_close(s);
	return ok;
}

/* A bftools file's first bytes (magic, then a header's worth of anything) with kind letter k. */
static size_t own_file_head(char k, char *out)
{
	static const char magic[] = "\x89" "BF?\r\n\x1a\n";

	memcpy(out, magic, 8);
	out[3] = k;
	for (size_t i = 8; i < 64; i++)
		out[i] = (char)(i * 37);
	return 64;
}

/*
 * bftools' own files are not text: a filter, sketch or summary is refused
 * in words, plain or decoded from gzip or zstd (the files are gzip
 * members), from a file in every piece size and from a pipe a byte at a
 * time, and handed out as it is with decompression off.
 */
static void own_files_are_refused_plain_or_decoded(void)
{
	static const struct { char kind; const char *why; } own[] = {
		{ 'T', "a bftools filter, not text" },
		{ 'S', "a bftools sketch, not text" },
		{ 'H', "a bftop summary, not text" },
	};
	static const size_t pieces[] = { 1, 7, 8, 4096 };

	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
		char head[64];
		size_t len = own_file_head(own[i].kind, head), zlen[2] = { 0, 0 };
		unsigned char *z[2] = { compress_in('g', head, len, 1, &zlen[0]),
					compress_in('z', head, len, 1, &zlen[1]) };
		pid_t child;
		int fd;

		CHECK(z[0] != NULL && z[1] != NULL);
		for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
			fd = unit_temp_file(head, len);
			CHECKF(refused_as(fd, pieces[p], own[i].why), "plain %c, pieces of %zu",
			       own[i].kind, pieces[p]);
			close(fd);
			for (int f = 0; f < 2; f++) {
				fd = unit_temp_file((const char *)z[f], zlen[f]);
				CHECKF(refused_as(fd, pieces[p], own[i].why), "%s %c, pieces of %zu",
				       f == 0 ? "gzip" : "zstd", own[i].kind, pieces[p]);
				close(fd);
			}
		}
		fd = trickle(z[0], zlen[0], &child);
		CHECK(fd >= 0 && refused_as(fd, 4096, own[i].why));
		close(fd);
		reap(child);	/* refused before the end: the writer may meet a closed pipe */
		for (int f = 0; f < 2; f++) {
			struct instream *s;
			char *got;
			size_t got_len;

			CHECKF(fed_byte_by_byte(z[f], zlen[f], &s, &got, &got_len) == -1 &&
			       got_len == 0 && strcmp(instream_error(s), own[i].why) == 0,
			       "%s %c fed a byte at a time", f == 0 ? "gzip" : "zstd", own[i].kind);
			free(got);
			instream_close(s);
		}
		fd = unit_temp_file((const char *)z[0], zlen[0]);
		struct instream *s = instream_open(fd, 0);
		char *got = NULL;
		size_t got_len = 0;

		CHECK(s != NULL && drain(s, 5, &got, &got_len) == 0);
		CHECK(got_len == zlen[0] && memcmp(got, z[0], zlen[0]) == 0);
		free(got);
		instream_close(s);
		close(fd);
		free(z[0]);
		free(z[1]);
	}
}

/*
 * Content that only begins like a bftools magic, or is shorter than one,
 * is text: every byte comes through, plain or decoded, in every piece
 * size (the decoded first bytes held back to tell are handed out first).
 */
static void text_that_begins_like_an_own_magic_passes(void)
{
	static const char *const texts[] = { "", "a", "a\n", "\x89", "\x89" "BF",
					     "\x89" "BFT\r\n\x1a", "\x89" "BFX\r\n\x1a\nmore\n",
					     "\x89" "BFT\r\n\x1a\r rest\n", "\x89\n\x89" "BFT\r\n\x1a\n" };
	static const size_t pieces[] = { 1, 3, 8, 4096 };

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		size_t len = strlen(texts[i]), zlen = 0;
		unsigned char *z = compress_in('g', texts[i], len, 1, &zlen);

		CHECK(z != NULL);
		for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
			int fd = unit_temp_file(texts[i], len);

			CHECKF(reads_as(fd, pieces[p], texts[i], len, NULL), "plain text %zu, pieces of %zu",
			       i, pieces[p]);
			close(fd);
			fd = unit_temp_file((const char *)z, zlen);
			CHECKF(reads_as(fd, pieces[p], texts[i], len, "gzip"),
			       "gzip text %zu, pieces of %zu", i, pieces[p]);
			close(fd);
		}
		struct instream *s;
		char *got;
		size_t got_len;

		CHECKF(fed_byte_by_byte(z, zlen, &s, &got, &got_len) == 0 && got_len == len &&
		       memcmp(got, texts[i], len) == 0, "gzip text %zu fed a byte at a time", i);
		free(got);
		instream_close(s);
		free(z);
	}
}

/* Bytes held back to tell outlast the decoder's end: the stream has not ended until they are out. */
static void held_bytes_come_before_the_end(void)
{
	size_t zlen = 0;
	unsigned char *z = compress_in('g', "\x89" "BF", 3, 1, &zlen);
	int fd = unit_temp_file((const char *)z, zlen);
	struct instream *s = instream_open(fd, 1);
	char got[3];
	size_t len = 0;

	CHECK(z != NULL && s != NULL);
	for (int calls = 0; calls < 100 && len < 3; calls++) {
		ssize_t n = instream_read(s, got + len, 1);

		CHECK(n >= 0);
		len += (size_t)n;
		if (len > 0 && len < 3)
			CHECKF(!instream_ended(s), "ended with %zu of 3 bytes out", len);
	}
	CHECK(len == 3 && memcmp(got, "\x89" "BF", 3) == 0);
	CHECK(instream_read(s, got, 1) == 0 && instream_ended(s));
	instream_close(s);
	close(fd);
	free(z);
}

/*
 * A pipe whose writer is still there: once a member's content is out, a
 * call that would read an empty pipe is one instream_needs_input
 * announced, so a caller that polls first never blocks in read(2) (the
 * descriptor is non-blocking here: such a read would fail, EAGAIN). Every
 * piece size, 8 (the held head's) and 1 among them, where the codec's
 * last step fills the room exactly.
 */
static void a_waiting_pipe_is_read_only_when_announced(void)
{
	static const char text[] = "a\nb\na\nc\n";
	static const size_t pieces[] = { 1, 3, 8, 9, 4096 };
	size_t zlen = 0;
	unsigned char *z = compress_in('g', text, sizeof text - 1, 1, &zlen);

	CHECK(z != NULL);
	for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
		char got[64];
		size_t len = 0;
		int fds[2];
		struct instream *s;

		CHECK(pipe(fds) == 0 && fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
		CHECK(write(fds[1], z, zlen) == (ssize_t)zlen);
		s = instream_open(fds[0], 1);
		for (int calls = 0; s != NULL && calls < 1000; calls++) {
			struct pollfd pfd = { fds[0], POLLIN, 0 };
			ssize_t n;

			if (instream_needs_input(s) && poll(&pfd, 1, 0) == 0)
				break;	/* the caller would wait here, not in read(2) */
			n = instream_read(s, got + len, pieces[p]);
			CHECKF(n >= 0, "pieces of %zu: read failed (%s)", pieces[p], strerror(errno));
			if (n < 0)
				break;
			len += (size_t)n;
		}
		CHECKF(len == sizeof text - 1 && memcmp(got, text, len) == 0 && !instream_ended(s),
		       "pieces of %zu: %zu bytes out", pieces[p], len);
		instream_close(s);
		close(fds[0]);
		close(fds[1]);
	}
	free(z);
}

/* A plain bftools file cannot be cut in line ranges either: it is read (and refused) as a stream. */
static void own_file_is_not_plain_at_any_offset_asked(void)
{
	char head[64];
	size_t len = own_file_head('T', head);
	int fd = unit_temp_file(head, len);

	CHECK(fd >= 0);
	CHECK(instream_compressed_at(fd, 0) == 1);
	CHECK(instream_compressed_at(fd, 1) == 0);
	CHECK(instream_compressed_head((const unsigned char *)head, 7) == 0);
	CHECK(instream_compressed_head((const unsigned char *)head, 8) == 1);
	close(fd);
}

void suite_instream(void)
{
	unit_run("instream: one gzip member reads as its content in any piece size", gzip_one_member);
	unit_run("instream: gzip members one after another are one stream",
		 gzip_members_one_after_another);
	unit_run("instream: one zstd frame reads as its content in any piece size", zstd_one_frame);
	unit_run("instream: zstd frames one after another are one stream",
		 zstd_frames_one_after_another);
	unit_run("instream: plain bytes, and compressed ones with decompression off, pass through",
		 plain_and_undecompressed_bytes_pass_through);
	unit_run("instream: a pipe delivering a byte at a time is sniffed without loss",
		 a_pipe_byte_by_byte_is_sniffed_without_loss);
	unit_run("instream: a gzip input cut anywhere gives a prefix, then 'truncated gzip input'",
		 every_gzip_cut_is_truncated);
	unit_run("instream: a zstd input cut anywhere gives a prefix, then 'truncated zstd input'",
		 every_zstd_cut_is_truncated);
	unit_run("instream: a gzip input with any byte flipped ends or fails in words, never hangs",
		 every_gzip_flip_ends_or_fails);
	unit_run("instream: a zstd input with any byte flipped ends or fails in words, never hangs",
		 every_zstd_flip_ends_or_fails);
	unit_run("instream: lines over a truncated stream are handed out before the error",
		 lines_over_a_truncated_stream_come_before_the_error);
	unit_run("instream: instream_compressed_at reads the magic at the offset, leaving fd's",
		 compressed_at_reads_the_magic_where_asked);
	unit_run("instream: a bftools filter, sketch or summary is refused, plain or decoded",
		 own_files_are_refused_plain_or_decoded);
	unit_run("instream: text that begins like a bftools magic, or is shorter, comes through whole",
		 text_that_begins_like_an_own_magic_passes);
	unit_run("instream: bytes held back to tell the content come out before its end",
		 held_bytes_come_before_the_end);
	unit_run("instream: a pipe left open is read only after instream_needs_input says so",
		 a_waiting_pipe_is_read_only_when_announced);
	unit_run("instream: a plain bftools file is not cut in line ranges",
		 own_file_is_not_plain_at_any_offset_asked);
}
