/* SPDX-License-Identifier: MIT */
/*
 * instream_refused.c - compressed formats recognised by their magic but
 * not decoded: an input in one of them is refused in words ("lzip input
 * cannot be decoded"), never read as text in silence. Their tables have
 * no open: instream.c fails the input as soon as it is recognised.
 * --no-decompress still reads such an input as it is.
 *
 * bftools' own files are refused here too, by their 8-byte magic: a
 * filter, sketch or bftop summary given where text is read (`bfcount
 * seen.bf` for `bfcount -f seen.bf`) would otherwise be counted, built
 * or de-duplicated as lines of binary, a wrong answer in silence.
 * instream.c looks for them at the start of the plain bytes and of the
 * content a codec decodes (the files are gzip members).
 *
 * Each is the format of a common tool whose library bftools does not
 * take: compress(1)'s .Z, lzip, lz4's legacy format (lz4 -l), and the
 * .lzma files of lzma_alone, which have no magic that text could not
 * begin with, so they are not among these.
 */
#include <stddef.h>

#include "instream_codec.h"

static const unsigned char compress_magic[] = { 0x1f, 0x9d };
static const unsigned char lzip_magic[] = { 'L', 'Z', 'I', 'P' };
static const unsigned char lz4_legacy_magic[] = { 0x02, 0x21, 0x4c, 0x18 };

/* "\x89BF", the kind of file, "\r\n\x1a\n": format.c, sketch_file.c, topk_file.c */
static const unsigned char own_filter_magic[] = { 0x89, 'B', 'F', 'T', '\r', '\n', 0x1a, '\n' };
static const unsigned char own_sketch_magic[] = { 0x89, 'B', 'F', 'S', '\r', '\n', 0x1a, '\n' };
static const unsigned char own_summary_magic[] = { 0x89, 'B', 'F', 'H', '\r', '\n', 0x1a, '\n' };

const struct instream_codec instream_compress = {
	"compress (.Z)", compress_magic, sizeof compress_magic, NULL, 0, NULL, NULL, NULL, NULL, NULL,
};
const struct instream_codec instream_lzip = {
	"lzip", lzip_magic, sizeof lzip_magic, NULL, 0, NULL, NULL, NULL, NULL, NULL,
};
const struct instream_codec instream_lz4_legacy = {
	"lz4 legacy", lz4_legacy_magic, sizeof lz4_legacy_magic, NULL, 0, NULL, NULL, NULL, NULL, NULL,
};
const struct instream_codec instream_own_filter = {
	.name = "bftools filter", .magic = own_filter_magic, .magic_len = sizeof own_filter_magic,
	.refusal = "a bftools filter, not text",
};
const struct instream_codec instream_own_sketch = {
	.name = "bftools sketch", .magic = own_sketch_magic, .magic_len = sizeof own_sketch_magic,
	.refusal = "a bftools sketch, not text",
};
const struct instream_codec instream_own_summary = {
	.name = "bftop summary", .magic = own_summary_magic, .magic_len = sizeof own_summary_magic,
	.refusal = "a bftop summary, not text",
};
