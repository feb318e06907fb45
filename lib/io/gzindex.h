/* SPDX-License-Identifier: MIT */
/*
 * gzindex.h - an index of a gzip member's pieces, kept in its header, so
 * that the member can be inflated on many threads at once.
 *
 * pgzip.c writes a member as pieces that each start a fresh deflate
 * stream on a byte boundary (no match reaches into the piece before). Who
 * knows where each piece starts can inflate them all at the same time.
 * The writer records, per run of pieces, how many content bytes it holds
 * and how many deflated bytes it takes, and puts the table in the gzip
 * header's extra field (RFC 1952, 2.3.1.1: subfield 'B' 'I'), rewritten
 * in place once the member is complete. gzip, zlib and older bftools skip
 * extra fields: the file reads the same everywhere.
 *
 * Layout of the subfield's data, all little-endian:
 *
 *   u32  entries in use (n)
 *   u32  flags: 0, or GZINDEX_ZERO_MARKS
 *   n x { u32 content bytes, u32 deflated bytes }, then zeros up to the
 *   slots reserved when the header was first written
 *
 * With GZINDEX_ZERO_MARKS, the top bit of an entry's deflated count says
 * that its content is all zero bytes (the rest is the count): a reader
 * whose regions are zero already skips it (issue 33: a Bloom filter sized
 * for 1e9 keys and holding few is mostly such runs, and loading it wrote
 * gigabytes of zeros). Older readers want flags 0, so they read a file
 * with marks from the start, as they read any file without an index:
 * slower, never wrong. The writer sets the flag only when some entry is
 * marked, so other files keep the index those readers use.
 *
 * The reader trusts none of it: every entry must inflate to exactly its
 * content, end on a block boundary inside its deflated bytes, the table
 * must account for every byte of the file up to the empty final block and
 * the trailer, and the pieces' CRC-32s, combined, must equal the
 * trailer's. Anything else, and the caller reads the member from the start
 * as it always has, which finds and names the damage. A marked entry is
 * not trusted either: the first of each length and deflated size is
 * inflated and must give zeros; every other must be the same deflated
 * bytes (deflate is deterministic: same bytes, same content), which costs
 * a comparison of a few KiB, not an inflate of a MiB.
 */
#ifndef BFTOOLS_GZINDEX_H
#define BFTOOLS_GZINDEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A member of fewer pieces gets no index: too small to be worth threads. */
#define GZINDEX_PIECES_MIN 4
/* At most this many entries; more pieces share an entry (runs of pieces). */
#define GZINDEX_SLOTS_MAX 4096

/* The flags word's one flag: deflated counts carry zero marks in their top bit. */
#define GZINDEX_ZERO_MARKS 1u
#define GZINDEX_ZERO_BIT 0x80000000u

struct gzindex_entry {
	uint32_t content;	/* bytes of content the run of pieces holds */
	uint32_t deflated;	/* bytes of deflate stream it takes */
	int zero;		/* every byte of that content is 0 */
};

/*
 * For a member of pieces pieces of at most piece_max content bytes: how
 * many pieces share an entry (*group) and how many entries to reserve;
 * 0 when the member gets no index (too few pieces, or an entry could not
 * count its bytes in 32 bits).
 */
size_t gzindex_plan(uint64_t pieces, size_t piece_max, uint64_t *group);

/* Bytes of the extra field (XLEN) that holds slots entries. */
size_t gzindex_extra_len(size_t slots);

/* The extra field for entries e[0..n) in slots reserved, into out (gzindex_extra_len bytes). */
void gzindex_encode(unsigned char *out, size_t slots, const struct gzindex_entry *e, size_t n);

/* Where content goes when inflated: len bytes at dst, or nowhere (dst NULL: checked only). */
struct gzindex_region {
	unsigned char *dst;
	uint64_t len;
};

/* Called on the calling thread as content is inflated: bytes done so far, all threads. */
typedef void gzindex_progress_fn(void *ctx, uint64_t done);

/*
 * Inflate the gzip member that is the whole of the regular file fd into
 * the regions, in order (their lengths add up to the member's content),
 * on up to threads threads, using the member's index. zeroed: the
 * regions hold zeros already, so runs marked zero are left untouched
 * (fresh anonymous memory stays unbacked); else they are cleared. Returns
 * 0 when every check passed (then every region holds its bytes); -1 when
 * the file has no usable index, cannot be mapped, or any check failed
 * (the regions then hold anything): read the member from the start
 * instead. Does not move fd's offset.
 */
int gzindex_inflate(int fd, const struct gzindex_region *regions, size_t nregions, int threads,
		    int zeroed, gzindex_progress_fn *progress, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
