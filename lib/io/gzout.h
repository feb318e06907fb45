/* SPDX-License-Identifier: MIT */
/*
 * gzout.h - a gzip (deflate) stream written to a descriptor.
 *
 * One output buffer, a deflate loop that drains it as it fills, and a
 * checked finish: what DCSO's gzipped files need (ours are written by
 * pgzip.c). The caller chooses the level, strategy and gzip header; this
 * module only runs zlib and writes. No printing, no exit: failures return
 * -1 with a static message (zlib's, or strerror).
 *
 * The writing half, struct gzout_sink, is also used on its own by pgzip.c,
 * which deflates pieces itself and only needs them written out in order.
 */
#ifndef BFTOOLS_GZOUT_H
#define BFTOOLS_GZOUT_H

#include <stddef.h>

#ifndef ZLIB_CONST
#define ZLIB_CONST	/* zlib takes const input (z_const), as it never writes it */
#endif
#include <zlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Bytes written to a descriptor in order, the disk's writeback started
 * every 32 MiB as they go (so the final fsync has little left to do). Or,
 * once gzout_sink_direct has said yes, around the page cache (O_DIRECT):
 * the bytes are staged in an aligned buffer and written in big aligned
 * pieces, the unaligned end by gzout_sink_flush.
 */
struct gzout_sink {
	int fd;
	unsigned long long written;	/* bytes written to fd so far */
	unsigned long long flushed;	/* bytes handed to the disk's writeback */
	int no_writeback;	/* fd cannot start writeback (a pipe): do not ask */
	int direct;		/* fd has O_DIRECT set */
	unsigned char *stage;	/* direct: bytes not yet written, aligned; else NULL */
	size_t staged;
};

void gzout_sink_init(struct gzout_sink *s, int fd);

/*
 * Write around the page cache from now on, if fd is a regular file at
 * offset 0 with nothing written yet, and the system and file system allow
 * it. Returns 0 if so, -1 if the sink stays as it was (never an error).
 * Only for a descriptor the caller owns: O_DIRECT is set on its open file.
 */
int gzout_sink_direct(struct gzout_sink *s);

/* Write all len bytes (direct: stage them). Returns 0, or -1 with *errstr = strerror(errno). */
int gzout_sink_write(struct gzout_sink *s, const void *data, size_t len, const char **errstr);

/* Write what is staged (the end of the data). Returns 0, or -1 with *errstr. */
int gzout_sink_flush(struct gzout_sink *s, const char **errstr);

/*
 * Write len bytes again at file offset off, over bytes already written
 * and flushed (pgzip.c's header, once its index is known), through the
 * page cache. Returns 0, or -1 with *errstr.
 */
int gzout_sink_rewrite(struct gzout_sink *s, unsigned long long off, const void *data, size_t len,
		       const char **errstr);

/* Free the stage; does not close fd. */
void gzout_sink_close(struct gzout_sink *s);

struct gzout {
	struct gzout_sink sink;
	z_stream zs;
	unsigned char *buf;	/* compressed output waiting to be written */
};

/*
 * Start a gzip member on fd at level and strategy. header, when not NULL,
 * is passed to deflateSetHeader and must outlive the stream (deflate reads
 * it during the first write). Returns 0, or -1 with *errstr.
 */
int gzout_open(struct gzout *w, int fd, int level, int strategy, gz_header *header,
	       const char **errstr);

/* Compress len bytes. Returns 0, or -1 with *errstr. */
int gzout_write(struct gzout *w, const void *data, size_t len, const char **errstr);

/* A zlib error's message: zlib's own, or ours where it gives none. */
const char *gzout_zlib_message(const z_stream *zs, int ret);

/* End the member (trailer included) and write everything out. */
int gzout_finish(struct gzout *w, const char **errstr);

/* Free the stream; safe after a failure. Does not close fd. */
void gzout_close(struct gzout *w);

#ifdef __cplusplus
}
#endif

#endif
