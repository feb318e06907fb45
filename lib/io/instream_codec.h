/* SPDX-License-Identifier: MIT */
/*
 * instream_codec.h - what a decompressor is to instream.c: one table of
 * operations per format. Adding a format is one file defining its table
 * and one line in instream.c's list; instream.c never asks which format
 * it holds.
 *
 * A codec sees only memory: instream.c reads the descriptor, hands the
 * codec what it read, and decides when to read more. Not installed.
 */
#ifndef BFTOOLS_INSTREAM_CODEC_H
#define BFTOOLS_INSTREAM_CODEC_H

#include <stddef.h>

/* Room for a codec's message, such as "corrupt gzip input: invalid block type". */
#define INSTREAM_MESSAGE 128

struct instream_codec {
	const char *name;		/* "gzip": for messages and instream_format */
	const unsigned char *magic;	/* the bytes a stream of this format begins with */
	size_t magic_len;
	/* A decoder at the start of a stream; NULL (errno set) on failure. */
	void *(*open)(void);
	/*
	 * Decode from *in (*in_len bytes) into *out (*out_len bytes of room),
	 * advancing both and lowering both lengths by what was used. A call
	 * with no input flushes output the decoder still holds. Returns 0, or
	 * -1: damage, described in msg (INSTREAM_MESSAGE bytes), or msg left
	 * empty and errno set (out of memory).
	 */
	int (*step)(void *state, const unsigned char **in, size_t *in_len, unsigned char **out,
		    size_t *out_len, char *msg);
	/* Whether the input may end here: between members or frames, none begun. */
	int (*at_boundary)(const void *state);
	void (*close)(void *state);
};

extern const struct instream_codec instream_gzip;
extern const struct instream_codec instream_zstd;

#endif
