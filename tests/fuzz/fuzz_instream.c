/* SPDX-License-Identifier: MIT */
/*
 * fuzz_instream.c - libFuzzer harness for compressed inputs (instream.h):
 * sniffing, gzip and zstd decoding, and their damage.
 *
 * An input is two option bytes, then the stream:
 *
 *   byte 0  flags: 1 decompression off (--no-decompress)
 *                  2, 4 how the stream arrives: 0 a regular file (memfd),
 *                    2 a pipe, 4 or 6 a socket handing out short reads
 *   byte 1  the largest short read (1 + byte), and the seed of the sizes
 *           the reader asks for (1 byte to 64 KiB, varying per call; from
 *           16 KiB on the socket, whose messages must fit: fuzz.h)
 *
 * The stream is read twice: once from a file in 64 KiB pieces (the
 * reference), once as the options say. Checked:
 *
 *   - both reads finish (a bound on calls catches a stream that never
 *     ends), and end the same way: cleanly, or with the same message;
 *     a failure is always in words (there are no read errors here);
 *   - a clean end hands out the same bytes both times; after damage, one
 *     read's bytes are a prefix of the other's (how much comes out before
 *     the damage may depend on the pieces, never what comes out);
 *   - a stream that does not begin with a magic, or any stream with
 *     decompression off, is handed out exactly as it is, and counted
 *     whole by instream_bytes_in;
 *   - after the end or a failure, the stream stays there.
 */
#define _GNU_SOURCE	/* memfd_create */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "instream.h"

#define OPTION_BYTES 2
#define PIECE_MAX ((size_t)1 << 16)
/* Far more calls than any stream needs: one per input byte, and as many again. */
#define CALLS_PER_BYTE 64

struct result {
	uint8_t *bytes;
	size_t len, cap;
	int failed;
	char message[160];
	uint64_t bytes_in;
	const char *format;
};

FUZZ_UNTRACED static void append(struct result *r, size_t room)
{
	if (r->cap - r->len >= room)
		return;
	while (r->cap - r->len < room)
		r->cap = r->cap ? r->cap * 2 : PIECE_MAX;
	r->bytes = realloc(r->bytes, r->cap);
	fuzz_check(r->bytes != NULL, "out of memory");
}

/*
 * Read fd to its end or failure, in pieces of least..PIECE_MAX bytes drawn
 * from state (or PIECE_MAX when state is NULL).
 */
static void read_all(int fd, int decompress, uint64_t *state, size_t least, size_t size,
		     struct result *r)
{
	struct instream *s = instream_open(fd, decompress);
	uint64_t calls = 0, limit = (uint64_t)size * CALLS_PER_BYTE + 1024;
	ssize_t n;

	fuzz_check(s != NULL, "out of memory");
	for (;;) {
		size_t piece = state ? (size_t)fuzz_range(state, least, PIECE_MAX) : PIECE_MAX;

		append(r, piece);
		n = instream_read(s, r->bytes + r->len, piece);
		fuzz_check(++calls < limit, "the stream never ends");
		if (n < 0)
			break;
		fuzz_check((size_t)n <= piece, "more bytes than asked for");
		r->len += (size_t)n;
		if (n == 0 && instream_ended(s))
			break;
	}
	r->failed = n < 0;
	fuzz_check(!r->failed || instream_error(s) != NULL, "a failure not in words");
	if (r->failed)
		snprintf(r->message, sizeof r->message, "%s", instream_error(s));
	fuzz_check(instream_read(s, r->bytes, 1) == (r->failed ? -1 : 0), "the end did not stay");
	r->bytes_in = instream_bytes_in(s);
	r->format = instream_format(s);
	instream_close(s);
}

FUZZ_UNTRACED static int prefix(const struct result *a, const struct result *b)
{
	const struct result *shorter = a->len < b->len ? a : b;
	const struct result *longer = a->len < b->len ? b : a;

	return memcmp(shorter->bytes, longer->bytes, shorter->len) == 0;
}

static void compare(const struct result *ref, const struct result *got, const uint8_t *in,
		    size_t size)
{
	fuzz_check(ref->failed == got->failed, "one read failed, the other did not");
	fuzz_check(strcmp(ref->message, got->message) == 0, "different messages");
	fuzz_check(ref->format == got->format, "different formats");
	if (!ref->failed)
		fuzz_check(ref->len == got->len && memcmp(ref->bytes, got->bytes, ref->len) == 0,
			   "different content");
	else
		fuzz_check(prefix(ref, got), "different content before the damage");
	if (ref->format == NULL) {
		fuzz_check(!ref->failed && ref->len == size && memcmp(ref->bytes, in, size) == 0,
			   "plain bytes changed");
		fuzz_check(ref->bytes_in == size, "plain bytes miscounted");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b[OPTION_BYTES] = { 0 };
	struct result ref = { 0 }, got = { 0 };
	const uint8_t *in = data + (size < OPTION_BYTES ? size : OPTION_BYTES);
	size_t len = size - (size_t)(in - data);
	enum feed_kind kind;
	uint64_t state;
	struct feed f;
	int fd;

	memcpy(b, data, size < OPTION_BYTES ? size : OPTION_BYTES);
	kind = (b[0] >> 1 & 3) == 0 ? FEED_FILE : (b[0] >> 1 & 3) == 1 ? FEED_PIPE : FEED_CHUNKS;
	state = b[1];
	fd = fuzz_file(in, len);
	read_all(fd, !(b[0] & 1), NULL, PIECE_MAX, len, &ref);
	close(fd);
	feed_open(&f, kind, in, len, fuzz_seed(data, size), (size_t)b[1] + 1);
	read_all(f.fd, !(b[0] & 1), &state, kind == FEED_CHUNKS ? FEED_CHUNK_MAX : 1, len, &got);
	feed_close(&f);
	compare(&ref, &got, in, len);
	free(ref.bytes);
	free(got.bytes);
	return 0;
}
