/* SPDX-License-Identifier: MIT */
/*
 * instream_refused.c - compressed formats recognised by their magic but
 * not decoded: an input in one of them is refused in words ("lzip input
 * cannot be decoded"), never read as text in silence. Their tables have
 * no open: instream.c fails the input as soon as it is recognised.
 * --no-decompress still reads such an input as it is.
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

const struct instream_codec instream_compress = {
	"compress (.Z)", compress_magic, sizeof compress_magic, NULL, 0, NULL, NULL, NULL, NULL,
};
const struct instream_codec instream_lzip = {
	"lzip", lzip_magic, sizeof lzip_magic, NULL, 0, NULL, NULL, NULL, NULL,
};
const struct instream_codec instream_lz4_legacy = {
	"lz4 legacy", lz4_legacy_magic, sizeof lz4_legacy_magic, NULL, 0, NULL, NULL, NULL, NULL,
};
