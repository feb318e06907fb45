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
	/*
	 * Optional, for a magic that text could begin with: whether the
	 * first confirm_len bytes (more than magic_len) are this format's.
	 * An input shorter than that is not. NULL: the magic is enough.
	 */
	int (*confirm)(const unsigned char *head);
	size_t confirm_len;
	/*
	 * A decoder at the start of a stream; NULL (errno set) on failure.
	 * A format recognised but not decoded has no open (nor the rest):
	 * its input is refused, "NAME input cannot be decoded".
	 */
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
	/*
	 * Optional, for a format refused (no open) in its own words rather
	 * than "NAME input cannot be decoded".
	 */
	const char *refusal;
};

extern const struct instream_codec instream_gzip;
extern const struct instream_codec instream_zstd;
extern const struct instream_codec instream_xz;
extern const struct instream_codec instream_bzip2;
extern const struct instream_codec instream_lz4;
/* instream_refused.c: recognised, never decoded */
extern const struct instream_codec instream_compress;
extern const struct instream_codec instream_lzip;
extern const struct instream_codec instream_lz4_legacy;
/* instream_refused.c: bftools' own files, which are not text, plain or decoded */
extern const struct instream_codec instream_own_filter;
extern const struct instream_codec instream_own_sketch;
extern const struct instream_codec instream_own_summary;

#endif
