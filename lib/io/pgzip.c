/* SPDX-License-Identifier: MIT */
/*
 * pgzip.c - one gzip member from pieces deflated on many threads (see
 * pgzip.h).
 *
 * Why: a quarter-full Bloom filter deflates (level 1, Z_RLE) at ~95-120
 * MB/s on one core, so saving a 27 MB filter took 0.29 s while the other
 * core of a two-core machine idled; and on 16 cores, saving the 240 MB
 * filter of `bfbuild -n 1e8` on two threads took longer than adding 1e8
 * keys to it (issue 36: bfbuild -j 16 was 3.3x faster than -j 1, not 8x).
 *
 * How: a ring of 2T slots (T threads: the caller and T - 1 workers).
 * pgzip_write queues its piece in the next slot; workers take queued
 * pieces oldest first, deflate them into the slot's own buffer and mark
 * them done. The calling thread writes done pieces in order from the
 * ring's head; when the ring is full it waits for the head, deflating
 * queued pieces itself meanwhile rather than sleeping. A filter's chunks
 * are alike in size and density, so every thread stays busy but for the
 * writes. One mutex and two condition variables, touched a few times per
 * 1 MiB piece, are all the sharing there is. Same pieces, same bytes: who
 * deflated a piece leaves no trace in it. Each thread keeps one zlib
 * stream (made anew only when the level changes), not each slot: a stream
 * at memLevel 9 holds about 400 KiB.
 *
 * The deflate stream (RFC 1951), which starts on a byte boundary after the
 * 12-byte gzip header:
 *
 *   deflated piece   zlib's blocks, then a sync flush: an empty stored
 *                    block, 00 00 ff ff after fill bits to a byte boundary
 *   stored piece     blocks of at most 65535 bytes, each the byte 00
 *                    (BFINAL 0, BTYPE 00, fill bits), LEN and NLEN (16
 *                    bits, little-endian), then the bytes themselves
 *   end              03 00: an empty final block with fixed codes
 *                    (BFINAL 1, BTYPE 01, end-of-block code 0000000)
 *
 * Every piece ends on a byte boundary with no block left open, so pieces
 * concatenate. The price of independence: 5 bytes of flush per piece, and
 * no match reaching back into the piece before, which Z_RLE's short runs
 * of zero bytes hardly miss. The trailer's CRC-32 is combined from the
 * pieces' (crc32_combine), each computed by the thread that took the piece.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc.h"
#include "gzindex.h"
#include "gzout.h"	/* zlib, and gzout_sink for the writing */
#include "pgzip.h"

#define RAW_WINDOW (-15)	/* 32 KiB window, no zlib or gzip wrapper: ours is written here */
/* 9 over zlib's default 8: blocks of twice the symbols, ~9% faster and 0.3% smaller on random bits */
#define MEM_LEVEL 9
#define STORED_MAX 65535u	/* bytes in one stored block: LEN is 16 bits */
/*
 * A piece's output at most: zlib's conservative deflateBound is len + len/8
 * + len/64 + 5 + wrapper; 256 covers the rest, and stored blocks' 5 bytes
 * per 65535. Each buffer is made for the largest piece, but a small file's
 * save backs only the pages it writes (iosize.h says why that matters).
 */
#define OUT_BOUND(len) ((len) + (len) / 8 + (len) / 64 + 256)
/* Slots per thread: one being deflated, one queued behind it. */
#define RING_PER_THREAD 2
#define XFL_FASTEST 4
#define OS_UNIX 3
#define FLAG_FHCRC 2
#define FLAG_FEXTRA 4
#define HEADER_BASE 10		/* ID1 ID2 CM FLG MTIME(4) XFL OS */

/* A thread's deflate stream, kept from piece to piece. */
struct stream {
	z_stream zs;
	int level;		/* the level zs was made for; 0 while there is none */
};

/* Where a slot's piece is; under mu. */
enum { PIECE_QUEUED, PIECE_BUSY, PIECE_DONE };

struct piece {
	const unsigned char *data;
	size_t len;
	int level;
	uLong crc;		/* CRC-32 of data */
	unsigned char *out;	/* out_cap bytes: the piece's part of the deflate stream */
	size_t out_cap;		/* OUT_BOUND(len) or more once a piece is in */
	size_t out_len;
	const char *err;	/* why the piece could not be deflated, or NULL */
	int state;		/* PIECE_*, in the ring */
	int zero;		/* all zero bytes: shared, not out, holds its encoding */
	const unsigned char *shared;	/* the member's cached encoding of zeros (zero pieces) */
};

struct pgzip {
	struct gzout_sink sink;
	int strategy;
	uLong crc;		/* CRC-32 of the content written so far */
	uint64_t total;		/* bytes of content written so far */
	struct piece mine;	/* the piece in hand when there are no workers */
	struct stream own;	/* the calling thread's stream */
	struct piece zeros;	/* pgzip_write_zeros' encoding: len, level, crc, out */
	/* the ring (workers > 0): pieces head .. tail-1 not yet written out */
	struct piece *ring;
	unsigned nring;
	uint64_t head, next_job, tail;	/* under mu: sequence numbers, slot = seq % nring */
	pthread_t *workers;
	int nworkers;		/* workers running */
	pthread_mutex_t mu;
	pthread_cond_t queued;	/* a piece was queued, or quit */
	pthread_cond_t done;	/* a piece was deflated: for the calling thread */
	int quit;		/* under mu: the workers are to end */
	/* the index (gzindex.h), when the member has one */
	struct gzindex_entry *index;	/* slots entries, or NULL */
	size_t slots;
	uint64_t group;			/* pieces an entry holds */
	uint64_t pieces;		/* pieces written so far */
	unsigned long long start;	/* the header's offset in the file */
	unsigned char *extra;		/* the caller's subfields, after the index's */
	size_t extra_len;
};

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static void put_le32(unsigned char *p, uLong v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- one piece, on either thread --------------------------------------- */

/* pc's bytes as stored blocks, its CRC-32 made in the same pass. */
static void store_piece(struct piece *pc)
{
	unsigned char *o = pc->out;

	pc->crc = 0;
	for (size_t off = 0, n; off < pc->len; off += n) {
		n = pc->len - off < STORED_MAX ? pc->len - off : STORED_MAX;
		o[0] = 0;
		o[1] = (unsigned char)n;
		o[2] = (unsigned char)(n >> 8);
		o[3] = (unsigned char)~n;
		o[4] = (unsigned char)(~n >> 8);
		pc->crc = crc_copy(o + 5, pc->data + off, n, pc->crc);
		o += 5 + n;
	}
	pc->out_len = (size_t)(o - pc->out);
}

/* st reset for a new piece at level: made anew only when the level changes. */
static int fresh_stream(struct stream *st, int level, int strategy, const char **err)
{
	int ret;

	if (st->level == level) {
		ret = deflateReset(&st->zs);
		return ret == Z_OK ? 0 : fail(err, gzout_zlib_message(&st->zs, ret));
	}
	if (st->level != 0)
		deflateEnd(&st->zs);
	st->level = 0;
	memset(&st->zs, 0, sizeof st->zs);
	ret = deflateInit2(&st->zs, level, Z_DEFLATED, RAW_WINDOW, MEM_LEVEL, strategy);
	if (ret != Z_OK)
		return fail(err, gzout_zlib_message(&st->zs, ret));
	st->level = level;
	return 0;
}

static void deflate_piece(struct piece *pc, struct stream *st, int strategy)
{
	z_stream *zs = &st->zs;
	int ret;

	if (fresh_stream(st, pc->level, strategy, &pc->err) < 0)
		return;
	zs->next_in = pc->data;
	zs->avail_in = (uInt)pc->len;
	zs->next_out = pc->out;
	zs->avail_out = (uInt)pc->out_cap;
	ret = deflate(zs, Z_SYNC_FLUSH);
	if (ret != Z_OK) {
		pc->err = gzout_zlib_message(zs, ret);
		return;
	}
	/* output room left over is zlib's sign that the flush is complete */
	if (zs->avail_in != 0 || zs->avail_out == 0) {
		pc->err = "zlib: a compressed piece outgrew its buffer";
		return;
	}
	pc->out_len = pc->out_cap - zs->avail_out;
}

/*
 * Room for the piece's output: a buffer for the largest piece, allocated
 * once (malloc maps a block this size lazily, so a small save backs only
 * what it writes). 0, or -1 with pc->err.
 */
static int out_room(struct piece *pc)
{
	if (pc->len > PGZIP_PIECE_MAX)	/* callers refuse these: here for the bound's sake */
		return fail(&pc->err, "pgzip: piece larger than PGZIP_PIECE_MAX");
	if (pc->out != NULL)
		return 0;
	if ((pc->out = malloc(OUT_BOUND(PGZIP_PIECE_MAX))) == NULL)
		return fail(&pc->err, strerror(ENOMEM));
	pc->out_cap = OUT_BOUND(PGZIP_PIECE_MAX);
	return 0;
}

static void compress_piece(struct piece *pc, struct stream *st, int strategy)
{
	pc->err = NULL;
	if (out_room(pc) < 0)
		return;
	if (pc->level == 0) {
		store_piece(pc);
	} else {
		pc->crc = crc_update(0, pc->data, pc->len);
		deflate_piece(pc, st, strategy);
	}
}

static void end_stream(struct stream *st)
{
	if (st->level != 0)
		deflateEnd(&st->zs);
	st->level = 0;
}

/* ---- the workers ------------------------------------------------------- */

/* The oldest piece queued for deflate, or NULL; zero pieces come done. Locked. */
static struct piece *next_queued(struct pgzip *z)
{
	while (z->next_job < z->tail && z->ring[z->next_job % z->nring].state != PIECE_QUEUED)
		z->next_job++;
	return z->next_job < z->tail ? &z->ring[z->next_job % z->nring] : NULL;
}

/*
 * Take the oldest queued piece, deflate it with st unlocked, mark it done.
 * Called locked with a piece queued (next_queued); returns locked.
 */
static void deflate_next(struct pgzip *z, struct stream *st)
{
	struct piece *pc = next_queued(z);

	z->next_job++;
	pc->state = PIECE_BUSY;
	pthread_mutex_unlock(&z->mu);
	compress_piece(pc, st, z->strategy);
	pthread_mutex_lock(&z->mu);
	pc->state = PIECE_DONE;
	pthread_cond_signal(&z->done);
}

static void *worker_main(void *arg)
{
	struct pgzip *z = arg;
	struct stream st = { .level = 0 };

	pthread_mutex_lock(&z->mu);
	for (;;) {
		while (next_queued(z) == NULL && !z->quit)
			pthread_cond_wait(&z->queued, &z->mu);
		if (z->quit)
			break;
		deflate_next(z, &st);
	}
	pthread_mutex_unlock(&z->mu);
	end_stream(&st);
	return NULL;
}

static void free_ring(struct pgzip *z)
{
	for (unsigned i = 0; z->ring != NULL && i < z->nring; i++)
		free(z->ring[i].out);
	free(z->ring);
	free(z->workers);
	z->ring = NULL;
	z->workers = NULL;
}

/*
 * The ring and threads - 1 workers, started with every signal blocked so
 * that handlers run on the caller's thread. With no ring or no worker
 * (out of memory, no threads), everything stays on the calling thread:
 * same bytes.
 */
static void start_workers(struct pgzip *z, int threads)
{
	sigset_t all, old;

	z->nring = (unsigned)threads * RING_PER_THREAD;
	z->ring = calloc(z->nring, sizeof *z->ring);
	z->workers = malloc((size_t)(threads - 1) * sizeof *z->workers);
	if (z->ring == NULL || z->workers == NULL || pthread_mutex_init(&z->mu, NULL) != 0) {
		free_ring(z);
		return;
	}
	pthread_cond_init(&z->queued, NULL);	/* cannot fail with default attributes */
	pthread_cond_init(&z->done, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (z->nworkers < threads - 1 &&
	       pthread_create(&z->workers[z->nworkers], NULL, worker_main, z) == 0)
		z->nworkers++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (z->nworkers > 0)
		return;
	pthread_cond_destroy(&z->done);
	pthread_cond_destroy(&z->queued);
	pthread_mutex_destroy(&z->mu);
	free_ring(z);
}

static void stop_workers(struct pgzip *z)
{
	pthread_mutex_lock(&z->mu);
	z->quit = 1;
	pthread_cond_broadcast(&z->queued);
	pthread_mutex_unlock(&z->mu);
	for (int i = 0; i < z->nworkers; i++)
		pthread_join(z->workers[i], NULL);
	z->nworkers = 0;
	pthread_cond_destroy(&z->done);
	pthread_cond_destroy(&z->queued);
	pthread_mutex_destroy(&z->mu);
	free_ring(z);
}

/* ---- output, on the calling thread ------------------------------------- */

/* A finished piece out to the file, its CRC and length into the trailer's. */
static int emit(struct pgzip *z, const struct piece *pc, const char **errstr)
{
	if (pc->err)
		return fail(errstr, pc->err);
	if (z->index != NULL) {
		uint64_t e = z->pieces / z->group;

		if (e < z->slots) {
			/* a run is marked zero when every piece of it is */
			z->index[e].zero = (z->pieces % z->group == 0 || z->index[e].zero) && pc->zero;
			z->index[e].content += (uint32_t)pc->len;
			z->index[e].deflated += (uint32_t)pc->out_len;
		}
		z->pieces++;
	}
	z->crc = crc32_combine(z->crc, pc->crc, (z_off_t)pc->len);
	z->total += pc->len;
	return gzout_sink_write(&z->sink, pc->zero ? pc->shared : pc->out, pc->out_len, errstr);
}

/*
 * The ring's oldest piece out to the file, once deflated; meanwhile this
 * thread deflates queued pieces itself rather than wait. Called locked,
 * returns locked; the write itself is done unlocked (a done piece is no
 * worker's). 0, or -1 with *errstr.
 */
static int write_oldest(struct pgzip *z, const char **errstr)
{
	struct piece *pc = &z->ring[z->head % z->nring];
	int ret;

	while (pc->state != PIECE_DONE) {
		if (next_queued(z) != NULL)
			deflate_next(z, &z->own);
		else
			pthread_cond_wait(&z->done, &z->mu);
	}
	pthread_mutex_unlock(&z->mu);
	ret = emit(z, pc, errstr);
	pthread_mutex_lock(&z->mu);
	z->head++;
	return ret;
}

/* pc, a piece of zeros: the member's cached encoding of them (zeros), not a buffer of its own. */
static void share_zeros(struct piece *pc, const struct piece *zeros)
{
	pc->shared = zeros->out;
	pc->out_len = zeros->out_len;
	pc->crc = zeros->crc;
	pc->err = NULL;
}

/*
 * Queue a piece in the ring, making room first: data to deflate, or (data
 * NULL) the cached zero piece, done already. 0, or -1 with *errstr.
 */
static int queue_piece(struct pgzip *z, const void *data, size_t len, int level,
		       const char **errstr)
{
	struct piece *pc;
	int ret = 0;

	pthread_mutex_lock(&z->mu);
	while (ret == 0 && z->tail - z->head == z->nring)
		ret = write_oldest(z, errstr);
	if (ret == 0) {
		pc = &z->ring[z->tail++ % z->nring];
		pc->zero = data == NULL;
		if (pc->zero)
			share_zeros(pc, &z->zeros);
		pc->data = data;
		pc->len = len;
		pc->level = level;
		pc->state = pc->zero ? PIECE_DONE : PIECE_QUEUED;
		pthread_cond_signal(&z->queued);
	}
	/* what is done already goes out now: less to wait for at the end */
	while (ret == 0 && z->head < z->tail && z->ring[z->head % z->nring].state == PIECE_DONE)
		ret = write_oldest(z, errstr);
	pthread_mutex_unlock(&z->mu);
	return ret;
}

/* Every piece in the ring out to the file. 0, or -1 with *errstr. */
static int drain(struct pgzip *z, const char **errstr)
{
	int ret = 0;

	pthread_mutex_lock(&z->mu);
	while (ret == 0 && z->head < z->tail)
		ret = write_oldest(z, errstr);
	pthread_mutex_unlock(&z->mu);
	return ret;
}

/* The extra field's bytes: the index's subfield, then the caller's. */
static size_t extra_field_len(const struct pgzip *z)
{
	return (z->index != NULL ? gzindex_extra_len(z->slots) : 0) + z->extra_len;
}

/*
 * The gzip header: fixed, plus an extra field holding the index's n
 * entries (of slots) when the member has one. Into h; its length.
 */
static size_t make_header(const struct pgzip *z, unsigned char *h, size_t n)
{
	static const unsigned char fixed[HEADER_BASE] = { 0x1f, 0x8b, Z_DEFLATED, FLAG_FHCRC, 0, 0, 0, 0,
							  XFL_FASTEST, OS_UNIX };
	size_t len = HEADER_BASE;
	uLong crc;

	memcpy(h, fixed, HEADER_BASE);
	if (z->index != NULL || z->extra_len > 0) {
		size_t xlen = extra_field_len(z);

		h[3] |= FLAG_FEXTRA;
		h[len++] = (unsigned char)xlen;
		h[len++] = (unsigned char)(xlen >> 8);
		if (z->index != NULL) {	/* first: readers before the other subfields look for it at 12 */
			gzindex_encode(h + len, z->slots, z->index, n);
			len += gzindex_extra_len(z->slots);
		}
		if (z->extra_len > 0)	/* none: extra may be NULL, which memcpy may not take */
			memcpy(h + len, z->extra, z->extra_len);
		len += z->extra_len;
	}
	crc = crc32(0L, h, (uInt)len);
	h[len++] = (unsigned char)crc;	/* FHCRC: the low 16 bits of the header's CRC-32 */
	h[len++] = (unsigned char)(crc >> 8);
	return len;
}

static size_t header_cap(const struct pgzip *z)
{
	return HEADER_BASE + 2 + extra_field_len(z) + 2;
}

static int write_header(struct pgzip *z, const char **errstr)
{
	unsigned char *h = malloc(header_cap(z));
	int ret;

	if (h == NULL)
		return fail(errstr, strerror(ENOMEM));
	ret = gzout_sink_write(&z->sink, h, make_header(z, h, 0), errstr);
	free(h);
	return ret;
}

/* The header again, over the first one, now with the index filled in. */
static int rewrite_header(struct pgzip *z, const char **errstr)
{
	size_t n = z->pieces == 0 ? 0 : (size_t)((z->pieces - 1) / z->group + 1);
	unsigned char *h = malloc(header_cap(z));
	int ret;

	if (h == NULL)
		return fail(errstr, strerror(ENOMEM));
	/* more pieces than planned: the index stays empty, and readers read in order */
	if (n > z->slots)
		n = 0;
	ret = gzout_sink_rewrite(&z->sink, z->start, h, make_header(z, h, n), errstr);
	free(h);
	return ret;
}

/*
 * An index for pieces pieces, if fd is a regular file whose header can be
 * written again where it starts (not opened to append: pwrite would add
 * it at the end). Otherwise the member simply has none.
 */
static void plan_index(struct pgzip *z, int fd, uint64_t pieces)
{
	struct stat st;
	off_t at;
	int flags;

	z->slots = gzindex_plan(pieces, PGZIP_PIECE_MAX, &z->group);
	if (z->slots == 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (flags = fcntl(fd, F_GETFL)) < 0 || (flags & O_APPEND) || (at = lseek(fd, 0, SEEK_CUR)) < 0)
		return;
	z->index = calloc(z->slots, sizeof *z->index);
	z->start = (unsigned long long)at;
}

struct pgzip *pgzip_open(int fd, int threads, int strategy, int direct, uint64_t pieces,
			 const void *extra, size_t extra_len, const char **errstr)
{
	struct pgzip *z = calloc(1, sizeof *z);

	if (z == NULL) {
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	plan_index(z, fd, pieces);
	if (extra_len > PGZIP_EXTRA_MAX || (extra_len > 0 && (z->extra = malloc(extra_len)) == NULL)) {
		*errstr = extra_len > PGZIP_EXTRA_MAX ? "pgzip: extra subfields too long" : strerror(ENOMEM);
		free(z->index);
		free(z);
		return NULL;
	}
	if (extra_len > 0)
		memcpy(z->extra, extra, extra_len);
	z->extra_len = extra_len;
	gzout_sink_init(&z->sink, fd);
	if (direct)
		(void)gzout_sink_direct(&z->sink);	/* else through the page cache */
	z->strategy = strategy;
	z->crc = crc32(0L, NULL, 0);
	if (write_header(z, errstr) < 0) {
		pgzip_close(z);
		return NULL;
	}
	if (threads > PGZIP_THREADS_MAX)
		threads = PGZIP_THREADS_MAX;
	if (threads > 1)
		start_workers(z, threads);
	return z;
}

/* The encoding of len zero bytes at level, made once per member (and again if they change). */
static int make_zeros(struct pgzip *z, size_t len, int level, const char **errstr)
{
	struct piece *zp = &z->zeros;
	unsigned char *buf;

	if (zp->out != NULL && zp->len == len && zp->level == level)
		return 0;
	/* no piece in flight may still point at the old encoding */
	if (z->nworkers > 0 && drain(z, errstr) < 0)
		return -1;
	if ((buf = calloc(len, 1)) == NULL)
		return fail(errstr, strerror(ENOMEM));
	zp->data = buf;
	zp->len = len;
	zp->level = level;
	compress_piece(zp, &z->own, z->strategy);
	free(buf);
	zp->data = NULL;
	return zp->err != NULL ? fail(errstr, zp->err) : 0;
}

int pgzip_write_zeros(struct pgzip *z, size_t len, int level, const char **errstr)
{
	if (len == 0)
		return 0;
	if (len > PGZIP_PIECE_MAX)
		return fail(errstr, "pgzip: piece larger than PGZIP_PIECE_MAX");
	if (make_zeros(z, len, level, errstr) < 0)
		return -1;
	if (z->nworkers > 0)
		return queue_piece(z, NULL, len, level, errstr);
	z->mine.zero = 1;
	z->mine.len = len;
	share_zeros(&z->mine, &z->zeros);
	return emit(z, &z->mine, errstr);
}

int pgzip_write(struct pgzip *z, const void *data, size_t len, int level, const char **errstr)
{
	if (len == 0)
		return 0;
	if (len > PGZIP_PIECE_MAX)
		return fail(errstr, "pgzip: piece larger than PGZIP_PIECE_MAX");
	if (z->nworkers > 0)
		return queue_piece(z, data, len, level, errstr);
	z->mine.zero = 0;
	z->mine.data = data;
	z->mine.len = len;
	z->mine.level = level;
	compress_piece(&z->mine, &z->own, z->strategy);
	return emit(z, &z->mine, errstr);
}

unsigned pgzip_in_flight(const struct pgzip *z)
{
	return z->nworkers > 0 ? z->nring : 1;
}

int pgzip_finish(struct pgzip *z, const char **errstr)
{
	unsigned char tail[10] = { 0x03, 0x00 };	/* the empty final block */

	if (z->nworkers > 0 && drain(z, errstr) < 0)
		return -1;
	put_le32(tail + 2, z->crc);
	put_le32(tail + 6, (uLong)(z->total & 0xffffffffu));	/* ISIZE: length mod 2^32 */
	if (gzout_sink_write(&z->sink, tail, sizeof tail, errstr) < 0 ||
	    gzout_sink_flush(&z->sink, errstr) < 0)
		return -1;
	return z->index != NULL ? rewrite_header(z, errstr) : 0;
}

void pgzip_close(struct pgzip *z)
{
	if (z == NULL)
		return;
	if (z->nworkers > 0)
		stop_workers(z);
	free(z->mine.out);
	free(z->zeros.out);
	end_stream(&z->own);
	gzout_sink_close(&z->sink);
	free(z->index);
	free(z->extra);
	free(z);
}

int pgzip_save_member(int fd, const void *head, size_t head_len, const void *payload,
		      size_t len, int level, const char **errstr)
{
	struct pgzip *z = pgzip_open(fd, 1, Z_DEFAULT_STRATEGY, 0, 0, NULL, 0, errstr);
	const unsigned char *p = payload;
	int ok;

	if (z == NULL)
		return -1;
	ok = pgzip_write(z, head, head_len, level, errstr) == 0;
	for (size_t at = 0; ok && at < len; at += PGZIP_PIECE_MAX) {
		size_t piece = len - at < PGZIP_PIECE_MAX ? len - at : PGZIP_PIECE_MAX;

		ok = pgzip_write(z, p + at, piece, level, errstr) == 0;
	}
	ok = ok && pgzip_finish(z, errstr) == 0;
	pgzip_close(z);
	return ok ? 0 : -1;
}
