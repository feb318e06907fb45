/* SPDX-License-Identifier: MIT */
/*
 * instream.h - the bytes of an input, decompressed when they are
 * compressed: the layer under the line reader (lines_open_stream).
 *
 * A stream recognises its format by the first bytes it reads, not by a
 * file name: gzip (1f 8b; several members one after another are one
 * stream, as zcat reads them), zstd (28 b5 2f fd; frames one after
 * another likewise), xz (fd 37 7a 58 5a 00; streams and stream padding,
 * as xzcat), bzip2 ("BZh", a size digit and a block's magic; streams)
 * and lz4 frames (04 22 4d 18; frames). A format recognised but not
 * decoded (compress's .Z, lzip, lz4's legacy format) fails the stream,
 * in words, rather than pass for text; so do bftools' own filter, sketch
 * and bftop summary files, plain or decoded ("a bftools filter, not
 * text"), which are read by the programs' own options, never as lines.
 * Anything else is passed through as it is, and so is everything when
 * decompression is off. Nothing is read at open, and the
 * bytes read to tell the format are never lost, so a pipe or a terminal
 * can be sniffed.
 *
 * The content is handed out in the pieces the caller asks for, each call
 * reading its descriptor at most once, so a reader can wait for input
 * (poll) between calls and stay responsive to signals. Content decoded
 * before damage is handed out before the damage is reported; the report
 * is one message in words ("truncated gzip input", "corrupt zstd input:
 * Restored data doesn't match checksum").
 *
 * Deliberately absent: seeking, writing, any format decided by name, and
 * reading bftools' own files (gzin.h and format.h read those strictly).
 * Not installed. No printing, no exit.
 */
#ifndef BFTOOLS_INSTREAM_H
#define BFTOOLS_INSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct instream;

/*
 * A stream over fd (not closed by instream_close): decompressed when its
 * first bytes say so and decompress is nonzero, else passed through.
 * Reads nothing yet. NULL (ENOMEM) when out of memory.
 */
struct instream *instream_open(int fd, int decompress);
void instream_close(struct instream *s);

/*
 * Up to len bytes of content into dst, reading the descriptor at most
 * once. Returns how many (> 0); 0 when none came this time, which is the
 * end when instream_ended says so and otherwise means "call again"; -1
 * on failure, for good: a read error or out of memory with errno set and
 * instream_error NULL, or damage that instream_error describes.
 */
ssize_t instream_read(struct instream *s, void *dst, size_t len);

/* The descriptor read. */
int instream_fd(const struct instream *s);

/* Whether the content has ended (cleanly): instream_read returns 0 from now on. */
int instream_ended(const struct instream *s);

/* Whether the next instream_read will read the descriptor (and so may wait for it). */
int instream_needs_input(const struct instream *s);

/* After instream_read failed: what is wrong in words, or NULL for errno's failure. Lasts until close. */
const char *instream_error(const struct instream *s);

/* The format recognised: "gzip", "zstd", "xz", "bzip2", "lz4", or NULL (passed through, or not known yet). */
const char *instream_format(const struct instream *s);

/* Compressed bytes read from the descriptor so far (all bytes, when passed through). */
uint64_t instream_bytes_in(const struct instream *s);

/*
 * Whether the bytes of fd at offset begin a compressed stream that
 * instream_open would decompress (or refuse: not plain text either),
 * read with pread(2) (the offset of fd is not moved): 1 yes, 0 no, -1 (errno set) when they cannot be read.
 */
int instream_compressed_at(int fd, uint64_t offset);

/* Whether head[0..len) begins a stream that instream_open would decompress (or refuse). */
int instream_compressed_head(const unsigned char *head, size_t len);

#endif
