/* SPDX-License-Identifier: MIT */
/*
 * format.h - the bftools filter file, format version 1 (byte layout drawn
 * in format.c and man/bf.5).
 *
 * A filter file is exactly one gzip member whose content is a 64-byte file
 * header, one 64-byte stage header per stage (1 for a fixed filter, up to
 * 64 for a growing one), then each stage's bit array. Loading trusts
 * nothing: every field is range-checked and cross-checked against the
 * payload length before any memory is allocated; truncation, a bad CRC or
 * length, bytes after the member, and plain (uncompressed) files are all
 * rejected.
 *
 * The library never prints: failures return NULL/-1 with a static message in
 * *errstr ("not a bftools filter (not gzip data)", "truncated", ...); for a
 * system error the message is strerror(errno).
 */
#ifndef BFTOOLS_FORMAT_H
#define BFTOOLS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "cascade.h"
#include "window.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FORMAT_VERSION 1u
#define FORMAT_VERSION_WINDOW 2u	/* a windowed filter (window.h) */

/*
 * Streaming access: the headers first, validated, then the stages' bits in
 * order, in pieces of any size. This is how bfmerge ORs a file into a
 * filter in memory without holding a second copy.
 */
struct format_reader;

/*
 * Read and validate the headers from fd. *shape receives a cascade whose
 * stages have their params and insertions but NO bit arrays (words ==
 * NULL); free it with cascade_free. Returns NULL with *errstr on failure.
 */
struct format_reader *format_open(int fd, struct cascade **shape, const char **errstr);

/*
 * The next len bytes of payload (stages back to back, each m/8 bytes, in
 * file byte order: bit i = bit i%8 of byte i/8; a counting stage m/2
 * bytes, counter i in the low nibble of byte i/2 for even i, the high
 * one for odd i). Returns 0, or -1 with
 * *errstr ("truncated", "corrupt: ..."). Reading past the payload is an
 * error.
 */
int format_read(struct format_reader *r, void *buf, size_t len, const char **errstr);

/*
 * After the whole payload: check the end of the gzip member (CRC, length)
 * and that nothing follows. Returns 0, or -1 with *errstr. Frees r either
 * way; format_abandon frees it without checking.
 */
int format_close(struct format_reader *r, const char **errstr);
void format_abandon(struct format_reader *r);

/*
 * Progress while loading or saving big filters: fn, when set, is called
 * after each chunk (1 MiB) of bit arrays with the bytes done and the total
 * of the file being read or written. The library calls it and nothing
 * else; showing it is the caller's business. NULL (the default) for none.
 */
typedef void format_progress_fn(void *ctx, int saving, uint64_t done, uint64_t total);
void format_set_progress(format_progress_fn *fn, void *ctx);

/*
 * Read a whole filter file from fd. Returns a new cascade, or NULL with
 * *errstr. A DCSO bloom filter (dcso.h), plain or gzipped, is told apart
 * by its first bytes and loaded as well, as one FILTER_DCSO stage;
 * format_open refuses one, and format_save will not write one.
 */
struct cascade *format_load(int fd, const char **errstr);

/* Open path ("-" is stdin) and format_load it. */
struct cascade *format_load_path(const char *path, const char **errstr);

/*
 * A sketch file (sketch.h) is refused by the calls above with this
 * message (the pointer itself, for callers that compare): it is told
 * apart by its magic, before anything else is read.
 */
extern const char format_err_sketch[];
/* A bftop summary (topk_file.h), likewise: refused by its magic. */
extern const char format_err_summary[];

/*
 * Any file a bftools reader takes, told apart by its first bytes and
 * headers: a filter (ours or DCSO's, as format_load) into *c, a windowed
 * filter into *w, a sketch into *sk; the others are set to NULL. A NULL w
 * or sk refuses that kind (format_err_windowed, format_err_sketch).
 * format_load_any_path opens path ("-" is stdin) first. Returns 0, or -1
 * with *errstr.
 */
struct sketch;
int format_load_any(int fd, struct cascade **c, struct window **w, struct sketch **sk,
		    const char **errstr);
int format_load_any_path(const char *path, struct cascade **c, struct window **w,
			 struct sketch **sk, const char **errstr);

/*
 * Write c to fd as a complete filter file. The compression level adapts per
 * chunk of the bit arrays: stored (level 0) where the bits look random,
 * Z_RLE level 1 where they are sparse enough to shrink. Returns 0, or -1
 * with *errstr. Does not fsync or close fd.
 */
int format_save(const struct cascade *c, int fd, const char **errstr);

/*
 * Write c to path atomically: a temporary file in the same directory,
 * fsync, rename over path. On failure path is untouched and the temporary
 * file is removed. Returns 0, or -1 with *errstr.
 */
int format_save_path(const struct cascade *c, const char *path, const char **errstr);

/*
 * Windowed filters (window.h) are version 2 files: a 128-byte file header
 * whose bytes 64-127 describe the window, then the stage headers of every
 * generation, oldest first, each carrying its generation number in bytes
 * 56-63. format_load and format_open refuse one with format_err_windowed;
 * format_load_any loads it.
 */
extern const char format_err_windowed[];

/*
 * Statistics: a file stores, beside its bits, every stage's figures
 * (filter_stats, filter.h: bits set, saturated counters, the rate now),
 * in its gzip header (bf(5), "Statistics"), so that it can be described
 * without reading the bits. They come in file order: a cascade's stages,
 * or a window's, generation by generation, oldest first.
 */
struct format_stats {
	int stored;		/* the file stores them (else: counted from the bits) */
	size_t nstages;
	struct filter_stats stage[WINDOW_STAGES_MAX];
};

/* What format_load_described reads and gives: the bits, the figures, or both. */
enum format_figures {
	/*
	 * The figures (bfinfo): a file that stores them is read no further
	 * than its headers, and its filter or window comes as shapes (every
	 * stage's words NULL: use its params, counts and *st, then free it),
	 * never checked beyond its headers. Any other file is loaded whole,
	 * its figures counted from the bits.
	 */
	FORMAT_FIGURES,
	/* The same, always loaded whole, stored figures checked against those counted. */
	FORMAT_FIGURES_VERIFIED,
	/*
	 * The bits, as format_load_any; the figures only as the file stores
	 * them (st->nstages 0 when it stores none, or none that fit: a
	 * reader of bits never refuses a file for them).
	 */
	FORMAT_BITS,
};

/*
 * format_load_any, with the figures of a filter or window in *st, as how
 * says. With FORMAT_FIGURES and FORMAT_FIGURES_VERIFIED, stored figures
 * that do not fit the stages are a bad header; with the latter, stored
 * figures that differ from those counted are -1 with *errstr naming the
 * first that differs. A sketch is loaded whole (st->nstages 0), a DCSO
 * filter too (counted, but for FORMAT_BITS). Returns 0, or -1 with
 * *errstr. format_load_described_path opens path ("-" is stdin) first.
 */
int format_load_described(int fd, struct cascade **c, struct window **w, struct sketch **sk,
			  enum format_figures how, struct format_stats *st, const char **errstr);
int format_load_described_path(const char *path, struct cascade **c, struct window **w,
			       struct sketch **sk, enum format_figures how, struct format_stats *st,
			       const char **errstr);

/* Save a window, as format_save and format_save_path. */
int format_save_window(const struct window *w, int fd, const char **errstr);
int format_save_window_path(const struct window *w, const char *path, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
