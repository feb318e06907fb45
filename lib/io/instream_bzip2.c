/* SPDX-License-Identifier: MIT */
/*
 * instream_bzip2.c - bzip2 for instream.c, with libbz2: streams one after
 * another are one input, as bzcat reads them (`cat a.bz2 b.bz2`, pbzip2's
 * files). Each block's CRC and each stream's combined CRC are checked by
 * libbz2 itself.
 *
 * A stream ends with BZ_STREAM_END, and only there may the input end.
 * The next byte begins the next stream: the decoder is started again and
 * checks its magic, so bytes after the last stream that are not bzip2 are
 * "trailing garbage after bzip2 data" (bzip2 -d warns likewise).
 *
 * "BZh" alone is too likely a start of a text line, so a stream is
 * recognised by its first ten bytes: "BZh", the block size '1'..'9', then
 * a block's magic (the digits of pi) or the end-of-stream magic (those of
 * sqrt(pi), an empty stream). Not here: libbz2's small-memory mode.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bzlib.h>

#include "instream_codec.h"

struct bzip2_decoder {
	bz_stream bz;
	int started;		/* bz holds a decoder (BZ2_bzDecompressInit succeeded) */
	int between;		/* a stream ended and no byte of another came yet */
	unsigned long streams;	/* streams begun */
};

static int bzip2_start(struct bzip2_decoder *d)
{
	if (d->started)
		BZ2_bzDecompressEnd(&d->bz);
	memset(&d->bz, 0, sizeof d->bz);
	d->started = BZ2_bzDecompressInit(&d->bz, 0, 0) == BZ_OK;
	if (!d->started) {
		errno = ENOMEM;
		return -1;
	}
	d->between = 0;
	d->streams++;
	return 0;
}

static void *bzip2_open(void)
{
	struct bzip2_decoder *d = calloc(1, sizeof *d);

	if (d == NULL)
		return NULL;
	if (bzip2_start(d) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

static void bzip2_close(void *state)
{
	struct bzip2_decoder *d = state;

	if (d->started)
		BZ2_bzDecompressEnd(&d->bz);
	free(d);
}

static int bzip2_at_boundary(const void *state)
{
	const struct bzip2_decoder *d = state;

	return d->between;
}

/* What BZ2_bzDecompress's rc means in words, into msg; -1. */
static int bzip2_damage(struct bzip2_decoder *d, int rc, char *msg)
{
	if (rc == BZ_MEM_ERROR) {
		errno = ENOMEM;
		return -1;
	}
	if (rc == BZ_DATA_ERROR_MAGIC && d->streams > 1)
		snprintf(msg, INSTREAM_MESSAGE, "trailing garbage after bzip2 data");
	else if (rc == BZ_DATA_ERROR_MAGIC)
		snprintf(msg, INSTREAM_MESSAGE, "corrupt bzip2 input: bad magic");
	else
		snprintf(msg, INSTREAM_MESSAGE, "corrupt bzip2 input: data integrity error");
	return -1;
}

static int bzip2_step(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		      size_t *out_len, char *msg)
{
	struct bzip2_decoder *d = state;
	unsigned in_now = *in_len > UINT_MAX ? UINT_MAX : (unsigned)*in_len;
	unsigned out_now = *out_len > UINT_MAX ? UINT_MAX : (unsigned)*out_len;
	int rc;

	if (d->between) {
		if (*in_len == 0)
			return 0;	/* nothing held back: the stream was flushed whole */
		if (bzip2_start(d) < 0)
			return -1;
	}
	/* libbz2 takes char *, though it never writes the input */
	d->bz.next_in = (char *)(uintptr_t)*in;
	d->bz.avail_in = in_now;
	d->bz.next_out = (char *)*out;
	d->bz.avail_out = out_now;
	rc = BZ2_bzDecompress(&d->bz);
	*in += in_now - d->bz.avail_in;
	*in_len -= in_now - d->bz.avail_in;
	*out += out_now - d->bz.avail_out;
	*out_len -= out_now - d->bz.avail_out;
	if (rc == BZ_STREAM_END)
		d->between = 1;
	if (rc == BZ_OK || rc == BZ_STREAM_END)
		return 0;
	return bzip2_damage(d, rc, msg);
}

/* The ten bytes that begin a stream: "BZh", '1'..'9', a block's magic or the end's. */
static int bzip2_confirm(const unsigned char *head)
{
	static const unsigned char block[] = { 0x31, 0x41, 0x59, 0x26, 0x53, 0x59 };
	static const unsigned char end[] = { 0x17, 0x72, 0x45, 0x38, 0x50, 0x90 };

	if (head[3] < '1' || head[3] > '9')
		return 0;
	return memcmp(head + 4, block, sizeof block) == 0 || memcmp(head + 4, end, sizeof end) == 0;
}

static const unsigned char bzip2_magic[] = { 'B', 'Z', 'h' };

const struct instream_codec instream_bzip2 = {
	"bzip2", bzip2_magic, sizeof bzip2_magic, bzip2_confirm, 10,
	bzip2_open, bzip2_step, bzip2_at_boundary, bzip2_close, NULL,
};
