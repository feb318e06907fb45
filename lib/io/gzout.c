/* SPDX-License-Identifier: MIT */
/*
 * gzout.c - a gzip stream to a descriptor (see gzout.h).
 *
 * deflate is run until it has taken all the input; whenever the output
 * buffer is full it is written out. Z_BUF_ERROR only means "no progress
 * possible now" and is not an error.
 */
#define _GNU_SOURCE	/* sync_file_range on Linux */
#include "gzout.h"
#include "iosize.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

/* The same bytes come out whatever its size: zlib keeps what does not fit. */
#define OUT_BUFFER IOSIZE_BUFFER
#define GZIP_WINDOW (15 + 16)	/* 32 KiB window, gzip wrapper */
/* Start the disk writing every this many bytes (see start_writeback). */
#define WRITEBACK_STEP ((unsigned long long)32 << 20)
/* Direct writes: buffer, offsets and lengths aligned to this (any device's block). */
#define DIRECT_ALIGN ((size_t)4096)
/* One direct write: big enough for the device to stream. */
#define DIRECT_STAGE ((size_t)4 << 20)
/* One write(2) never asks for more than this. */
#define WRITE_MAX ((size_t)1 << 30)

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

const char *gzout_zlib_message(const z_stream *zs, int ret)
{
	if (ret == Z_MEM_ERROR)
		return "out of memory";
	return zs->msg ? zs->msg : "zlib: internal error";
}

/*
 * A saved filter is fsynced at the end (atomic.c). Left alone, the kernel
 * would write a 1 GB file to disk only then, after all the compressing:
 * the two would take turns. Asking for writeback of each 32 MB as it is
 * written lets the disk work while we compress. Linux only; where it is
 * missing or fails (a pipe, a tmpfs) nothing changes.
 */
static void start_writeback(struct gzout_sink *s)
{
#if defined(SYNC_FILE_RANGE_WRITE)
	int saved = errno;

	if (s->direct || s->no_writeback || s->written - s->flushed < WRITEBACK_STEP)
		return;
	if (sync_file_range(s->fd, (off_t)s->flushed, (off_t)(s->written - s->flushed),
			    SYNC_FILE_RANGE_WRITE) == 0)
		s->flushed = s->written;
	else
		s->no_writeback = 1;	/* not a file that can: stop asking */
	errno = saved;
#else
	(void)s;
#endif
}

void gzout_sink_init(struct gzout_sink *s, int fd)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
}

/*
 * Why direct: a saved filter of gigabytes written through the page cache
 * needs as much fresh page cache first, and on a virtual machine whose
 * host backs memory lazily that costs more than the disk (a 1 GiB save
 * took 0.5 to 4.5 s, varying with what the host had; direct, 0.4 s every
 * time). It also leaves the cache to the data the user is working on.
 */
/*
 * A file system whose files are page cache (tmpfs, ramfs): writing around
 * the cache there only adds the staging copy (a 1 GiB save to tmpfs took
 * 0.8 s through the cache, 1.1 s direct).
 */
static int in_memory_fs(int fd)
{
#if defined(__linux__) && defined(TMPFS_MAGIC) && defined(RAMFS_MAGIC)
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
#else
	(void)fd;
	return 0;
#endif
}

int gzout_sink_direct(struct gzout_sink *s)
{
#ifdef O_DIRECT
	struct stat st;
	void *stage;
	int flags;

	if (s->direct || s->written != 0 || fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    lseek(s->fd, 0, SEEK_CUR) != 0 || in_memory_fs(s->fd))
		return -1;
	if (posix_memalign(&stage, DIRECT_ALIGN, DIRECT_STAGE) != 0)
		return -1;
	flags = fcntl(s->fd, F_GETFL);
	if (flags < 0 || fcntl(s->fd, F_SETFL, flags | O_DIRECT) < 0) {
		free(stage);
		return -1;
	}
	s->stage = stage;
	s->direct = 1;
	return 0;
#else
	(void)s;
	return -1;
#endif
}

/* Back to writing through the page cache (the file system refused a direct write). */
static int drop_direct(struct gzout_sink *s)
{
#ifdef O_DIRECT
	int flags = fcntl(s->fd, F_GETFL);

	if (flags < 0 || fcntl(s->fd, F_SETFL, flags & ~O_DIRECT) < 0)
		return -1;
#endif
	s->direct = 0;
	return 0;
}

/*
 * All of p[0..n) to fd. A direct write the file system refuses (EINVAL:
 * say, after a short write left the offset unaligned) is retried through
 * the page cache, from exactly where the last one stopped.
 */
static int put(struct gzout_sink *s, const unsigned char *p, size_t n, const char **errstr)
{
	while (n > 0) {
		ssize_t done = write(s->fd, p, n < WRITE_MAX ? n : WRITE_MAX);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0 && errno == EINVAL && s->direct && drop_direct(s) == 0)
			continue;
		if (done <= 0)
			return fail(errstr, strerror(done < 0 ? errno : EIO));
		p += done;
		n -= (size_t)done;
		s->written += (unsigned long long)done;
	}
	start_writeback(s);
	return 0;
}

static int stage_bytes(struct gzout_sink *s, const unsigned char *p, size_t len, const char **errstr)
{
	while (len > 0) {
		size_t take = DIRECT_STAGE - s->staged < len ? DIRECT_STAGE - s->staged : len;

		memcpy(s->stage + s->staged, p, take);
		s->staged += take;
		p += take;
		len -= take;
		if (s->staged == DIRECT_STAGE) {
			s->staged = 0;
			if (put(s, s->stage, DIRECT_STAGE, errstr) < 0)
				return -1;
		}
	}
	return 0;
}

int gzout_sink_write(struct gzout_sink *s, const void *data, size_t len, const char **errstr)
{
	if (s->stage)
		return stage_bytes(s, data, len, errstr);
	return put(s, data, len, errstr);
}

int gzout_sink_flush(struct gzout_sink *s, const char **errstr)
{
	size_t whole = s->staged / DIRECT_ALIGN * DIRECT_ALIGN;
	size_t tail = s->staged - whole;

	if (s->stage == NULL || s->staged == 0)
		return 0;
	s->staged = 0;
	if (put(s, s->stage, whole, errstr) < 0)
		return -1;
	/* an unaligned length cannot go direct */
	if (tail > 0 && s->direct && drop_direct(s) < 0)
		return fail(errstr, strerror(errno));
	return put(s, s->stage + whole, tail, errstr);
}

int gzout_sink_rewrite(struct gzout_sink *s, unsigned long long off, const void *data, size_t len,
		       const char **errstr)
{
	const unsigned char *p = data;

	/* a few unaligned bytes cannot go direct */
	if (s->direct && drop_direct(s) < 0)
		return fail(errstr, strerror(errno));
	while (len > 0) {
		ssize_t done = pwrite(s->fd, p, len, (off_t)off);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return fail(errstr, strerror(done < 0 ? errno : EIO));
		p += done;
		off += (unsigned long long)done;
		len -= (size_t)done;
	}
	return 0;
}

void gzout_sink_close(struct gzout_sink *s)
{
	free(s->stage);
	s->stage = NULL;
	s->staged = 0;
}

/* Write out the compressed bytes gathered so far and reset the buffer. */
static int drain(struct gzout *w, const char **errstr)
{
	size_t len = OUT_BUFFER - w->zs.avail_out;

	w->zs.next_out = w->buf;
	w->zs.avail_out = (uInt)OUT_BUFFER;
	return gzout_sink_write(&w->sink, w->buf, len, errstr);
}

/* Run deflate over in[0..len) with flush until it is all taken (Z_FINISH: until the end). */
static int deflate_all(struct gzout *w, const void *in, size_t len, int flush,
		       const char **errstr)
{
	int ret;

	w->zs.next_in = (const Bytef *)in;
	w->zs.avail_in = (uInt)len;
	for (;;) {
		if (w->zs.avail_out == 0 && drain(w, errstr) < 0)
			return -1;
		ret = deflate(&w->zs, flush);
		if (ret == Z_STREAM_END)
			return 0;
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return fail(errstr, gzout_zlib_message(&w->zs, ret));
		if (flush != Z_FINISH && w->zs.avail_in == 0 && w->zs.avail_out != 0)
			return 0;
	}
}

int gzout_open(struct gzout *w, int fd, int level, int strategy, gz_header *header,
	       const char **errstr)
{
	int ret;

	memset(w, 0, sizeof *w);
	gzout_sink_init(&w->sink, fd);
	if ((w->buf = malloc(OUT_BUFFER)) == NULL)
		return fail(errstr, strerror(ENOMEM));
	ret = deflateInit2(&w->zs, level, Z_DEFLATED, GZIP_WINDOW, 8, strategy);
	if (ret != Z_OK) {
		free(w->buf);
		w->buf = NULL;
		return fail(errstr, gzout_zlib_message(&w->zs, ret));
	}
	w->zs.next_out = w->buf;
	w->zs.avail_out = (uInt)OUT_BUFFER;
	if (header && deflateSetHeader(&w->zs, header) != Z_OK) {
		gzout_close(w);
		return fail(errstr, "zlib: cannot set the gzip header");
	}
	return 0;
}

int gzout_write(struct gzout *w, const void *data, size_t len, const char **errstr)
{
	return deflate_all(w, data, len, Z_NO_FLUSH, errstr);
}

int gzout_finish(struct gzout *w, const char **errstr)
{
	if (deflate_all(w, NULL, 0, Z_FINISH, errstr) < 0 || drain(w, errstr) < 0)
		return -1;
	return gzout_sink_flush(&w->sink, errstr);
}

void gzout_close(struct gzout *w)
{
	if (w->buf == NULL)
		return;
	deflateEnd(&w->zs);	/* Z_DATA_ERROR after a failed write is expected */
	gzout_sink_close(&w->sink);
	free(w->buf);
	w->buf = NULL;
}
