/* SPDX-License-Identifier: MIT */
/*
 * pgzip.c - one gzip member from pieces deflated on two threads (see
 * pgzip.h).
 *
 * Why: a quarter-full Bloom filter deflates (level 1, Z_RLE) at ~95 MB/s
 * on one core, so saving a 27 MB filter took 0.29 s while the other core
 * of a two-core machine idled.
 *
 * How: pieces alternate between the threads. A piece arriving while the
 * worker is free goes to the worker (unless it is small: the file's
 * headers are not worth the trip); the next one is deflated by the
 * calling thread meanwhile, which then waits for the worker's piece and
 * writes both, in order. A filter's chunks are alike in size and density,
 * so both cores stay busy but for the writes, and only one piece is ever
 * with the worker: one mutex and one condition variable, touched twice per
 * piece, are all the sharing there is. Same pieces, same bytes: who
 * deflated a piece leaves no trace in it.
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
 * per 65535. The buffer grows to the biggest piece seen, no further: a
 * small file's save allocates little (iosize.h says why that matters).
 */
#define OUT_BOUND(len) ((len) + (len) / 8 + (len) / 64 + 256)
/* Smaller pieces (the file's headers) are not worth a trip to the worker. */
#define HANDOFF_MIN (PGZIP_PIECE_MAX / 16)
#define XFL_FASTEST 4
#define OS_UNIX 3
#define FLAG_FHCRC 2
#define FLAG_FEXTRA 4
#define HEADER_BASE 10		/* ID1 ID2 CM FLG MTIME(4) XFL OS */

struct piece {
	const unsigned char *data;
	size_t len;
	int level;
	uLong crc;		/* CRC-32 of data */
	unsigned char *out;	/* out_cap bytes: the piece's part of the deflate stream */
	size_t out_cap;		/* OUT_BOUND(len) or more once a piece is in */
	size_t out_len;
	z_stream zs;
	int zs_level;		/* the level zs was made for; 0 while there is none */
	const char *err;	/* why the piece could not be deflated, or NULL */
};

struct pgzip {
	struct gzout_sink sink;
	int strategy;
	uLong crc;		/* CRC-32 of the content written so far */
	uint64_t total;		/* bytes of content written so far */
	struct piece mine;	/* the calling thread's piece */
	struct piece theirs;	/* the worker's piece */
	int threaded;		/* the worker is running */
	int handed;		/* theirs holds a piece not yet written out */
	pthread_t worker;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int job;		/* under mu: theirs waits for, or is in, deflate */
	int quit;		/* under mu: the worker is to end */
	/* the index (gzindex.h), when the member has one */
	struct gzindex_entry *index;	/* slots entries, or NULL */
	size_t slots;
	uint64_t group;			/* pieces an entry holds */
	uint64_t pieces;		/* pieces written so far */
	unsigned long long start;	/* the header's offset in the file */
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

static void store_piece(struct piece *pc)
{
	unsigned char *o = pc->out;

	for (size_t off = 0, n; off < pc->len; off += n) {
		n = pc->len - off < STORED_MAX ? pc->len - off : STORED_MAX;
		o[0] = 0;
		o[1] = (unsigned char)n;
		o[2] = (unsigned char)(n >> 8);
		o[3] = (unsigned char)~n;
		o[4] = (unsigned char)(~n >> 8);
		memcpy(o + 5, pc->data + off, n);
		o += 5 + n;
	}
	pc->out_len = (size_t)(o - pc->out);
}

/* pc->zs reset for a new piece at pc->level: made anew only when the level changes. */
static int fresh_stream(struct piece *pc, int strategy)
{
	int ret;

	if (pc->zs_level == pc->level) {
		ret = deflateReset(&pc->zs);
		return ret == Z_OK ? 0 : fail(&pc->err, gzout_zlib_message(&pc->zs, ret));
	}
	if (pc->zs_level != 0)
		deflateEnd(&pc->zs);
	pc->zs_level = 0;
	memset(&pc->zs, 0, sizeof pc->zs);
	ret = deflateInit2(&pc->zs, pc->level, Z_DEFLATED, RAW_WINDOW, MEM_LEVEL, strategy);
	if (ret != Z_OK)
		return fail(&pc->err, gzout_zlib_message(&pc->zs, ret));
	pc->zs_level = pc->level;
	return 0;
}

static void deflate_piece(struct piece *pc, int strategy)
{
	int ret;

	if (fresh_stream(pc, strategy) < 0)
		return;
	pc->zs.next_in = pc->data;
	pc->zs.avail_in = (uInt)pc->len;
	pc->zs.next_out = pc->out;
	pc->zs.avail_out = (uInt)pc->out_cap;
	ret = deflate(&pc->zs, Z_SYNC_FLUSH);
	if (ret != Z_OK) {
		pc->err = gzout_zlib_message(&pc->zs, ret);
		return;
	}
	/* output room left over is zlib's sign that the flush is complete */
	if (pc->zs.avail_in != 0 || pc->zs.avail_out == 0) {
		pc->err = "zlib: a compressed piece outgrew its buffer";
		return;
	}
	pc->out_len = pc->out_cap - pc->zs.avail_out;
}

/* Room for the piece's output; 0, or -1 with pc->err. */
static int out_room(struct piece *pc)
{
	size_t need = OUT_BOUND(pc->len);
	unsigned char *bigger;

	if (need <= pc->out_cap)
		return 0;
	if ((bigger = realloc(pc->out, need)) == NULL)
		return fail(&pc->err, strerror(ENOMEM));
	pc->out = bigger;
	pc->out_cap = need;
	return 0;
}

static void compress_piece(struct piece *pc, int strategy)
{
	pc->err = NULL;
	if (out_room(pc) < 0)
		return;
	pc->crc = crc32(0L, pc->data, (uInt)pc->len);
	if (pc->level == 0)
		store_piece(pc);
	else
		deflate_piece(pc, strategy);
}

static void end_piece(struct piece *pc)
{
	if (pc->zs_level != 0)
		deflateEnd(&pc->zs);
	free(pc->out);
}

/* ---- the worker -------------------------------------------------------- */

static void *worker_main(void *arg)
{
	struct pgzip *z = arg;

	pthread_mutex_lock(&z->mu);
	for (;;) {
		while (!z->job && !z->quit)
			pthread_cond_wait(&z->cv, &z->mu);
		if (z->quit)
			break;
		pthread_mutex_unlock(&z->mu);
		compress_piece(&z->theirs, z->strategy);
		pthread_mutex_lock(&z->mu);
		z->job = 0;
		pthread_cond_broadcast(&z->cv);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* Start the worker with every signal blocked, so handlers run on the caller's thread. */
static void start_worker(struct pgzip *z)
{
	sigset_t all, old;

	if (pthread_mutex_init(&z->mu, NULL) != 0)
		return;
	if (pthread_cond_init(&z->cv, NULL) != 0) {
		pthread_mutex_destroy(&z->mu);
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	z->threaded = pthread_create(&z->worker, NULL, worker_main, z) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (z->threaded)
		return;
	pthread_cond_destroy(&z->cv);
	pthread_mutex_destroy(&z->mu);
}

/* Wait until the worker has no piece in hand. */
static void wait_idle(struct pgzip *z)
{
	pthread_mutex_lock(&z->mu);
	while (z->job)
		pthread_cond_wait(&z->cv, &z->mu);
	pthread_mutex_unlock(&z->mu);
}

static void stop_worker(struct pgzip *z)
{
	wait_idle(z);
	pthread_mutex_lock(&z->mu);
	z->quit = 1;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	pthread_join(z->worker, NULL);
	pthread_cond_destroy(&z->cv);
	pthread_mutex_destroy(&z->mu);
	z->threaded = 0;
}

static void hand_over(struct pgzip *z, const void *data, size_t len, int level)
{
	z->theirs.data = data;
	z->theirs.len = len;
	z->theirs.level = level;
	pthread_mutex_lock(&z->mu);
	z->job = 1;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	z->handed = 1;
}

/* ---- output, on the calling thread ------------------------------------- */

/* A finished piece out to the file, its CRC and length into the trailer's. */
static int emit(struct pgzip *z, const struct piece *pc, const char **errstr)
{
	if (pc->err)
		return fail(errstr, pc->err);
	if (z->index != NULL) {
		uint64_t e = z->pieces++ / z->group;

		if (e < z->slots) {
			z->index[e].content += (uint32_t)pc->len;
			z->index[e].deflated += (uint32_t)pc->out_len;
		}
	}
	z->crc = crc32_combine(z->crc, pc->crc, (z_off_t)pc->len);
	z->total += pc->len;
	return gzout_sink_write(&z->sink, pc->out, pc->out_len, errstr);
}

/* The worker's piece, once deflated, out to the file. */
static int collect(struct pgzip *z, const char **errstr)
{
	wait_idle(z);
	z->handed = 0;
	return emit(z, &z->theirs, errstr);
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
	if (z->index != NULL) {
		size_t xlen = gzindex_extra_len(z->slots);

		h[3] |= FLAG_FEXTRA;
		h[len++] = (unsigned char)xlen;
		h[len++] = (unsigned char)(xlen >> 8);
		gzindex_encode(h + len, z->slots, z->index, n);
		len += xlen;
	}
	crc = crc32(0L, h, (uInt)len);
	h[len++] = (unsigned char)crc;	/* FHCRC: the low 16 bits of the header's CRC-32 */
	h[len++] = (unsigned char)(crc >> 8);
	return len;
}

static size_t header_cap(const struct pgzip *z)
{
	return HEADER_BASE + 2 + (z->index != NULL ? gzindex_extra_len(z->slots) : 0) + 2;
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
			 const char **errstr)
{
	struct pgzip *z = calloc(1, sizeof *z);

	if (z == NULL) {
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	plan_index(z, fd, pieces);
	gzout_sink_init(&z->sink, fd);
	if (direct)
		(void)gzout_sink_direct(&z->sink);	/* else through the page cache */
	z->strategy = strategy;
	z->crc = crc32(0L, NULL, 0);
	if (write_header(z, errstr) < 0) {
		pgzip_close(z);
		return NULL;
	}
	if (threads > 1)
		start_worker(z);
	return z;
}

int pgzip_write(struct pgzip *z, const void *data, size_t len, int level, const char **errstr)
{
	if (len == 0)
		return 0;
	if (len > PGZIP_PIECE_MAX)
		return fail(errstr, "pgzip: piece larger than PGZIP_PIECE_MAX");
	if (z->threaded && !z->handed && len >= HANDOFF_MIN) {
		hand_over(z, data, len, level);
		return 0;
	}
	z->mine.data = data;
	z->mine.len = len;
	z->mine.level = level;
	compress_piece(&z->mine, z->strategy);
	if (z->handed && collect(z, errstr) < 0)
		return -1;
	return emit(z, &z->mine, errstr);
}

int pgzip_finish(struct pgzip *z, const char **errstr)
{
	unsigned char tail[10] = { 0x03, 0x00 };	/* the empty final block */

	if (z->handed && collect(z, errstr) < 0)
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
	if (z->threaded)
		stop_worker(z);
	end_piece(&z->mine);
	end_piece(&z->theirs);
	gzout_sink_close(&z->sink);
	free(z->index);
	free(z);
}

int pgzip_save_member(int fd, const void *head, size_t head_len, const void *payload,
		      size_t len, int level, const char **errstr)
{
	struct pgzip *z = pgzip_open(fd, 1, Z_DEFAULT_STRATEGY, 0, 0, errstr);
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
