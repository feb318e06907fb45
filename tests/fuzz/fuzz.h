/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the bftools fuzz harnesses share.
 *
 *   - the libFuzzer entry point's prototype (replay.c calls it too);
 *   - fuzz_check: a broken invariant prints where and aborts, which is how
 *     a harness reports a finding to libFuzzer and to the replay runner;
 *   - a small deterministic generator, so choices drawn from an input
 *     (piece sizes, batch sizes) are the same every time it is replayed;
 *   - feeds: a descriptor that delivers the input the ways the programs
 *     get theirs: a regular file (memfd), a pipe, or a socket that hands
 *     it out in short reads of chosen sizes.
 *
 * The short-read feed is a SOCK_SEQPACKET socket pair with a writer
 * thread: every read(2) returns exactly one message, so the read sizes are
 * the chosen ones and do not depend on thread timing, and a finding
 * replays the same way. A read buffer shorter than a message would lose
 * the rest of it, so callers keep chunks far below their readers' buffers
 * (both readers ask for up to 1 MiB at a time).
 *
 * Static functions in a header: each harness is one translation unit built
 * two ways (libFuzzer, and the replay main), and this code is too small to
 * be worth a library of its own. Not part of bftools; never installed.
 */
#ifndef BFTOOLS_FUZZ_H
#define BFTOOLS_FUZZ_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before the first #include: memfd_create(2) needs it"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * For a harness's own checking code: no coverage tracing. The fuzzer
 * learns nothing from how a reference loop branches, and tracing every
 * compare of one over a long input costs more than the code under test.
 */
#if defined(__clang__) && __clang_major__ >= 13
#define FUZZ_UNTRACED __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_UNTRACED
#endif

#define fuzz_check(cond, what)                                                  \
	do {                                                                    \
		if (!(cond))                                                    \
			fuzz_fail(__FILE__, __LINE__, #cond, what);             \
	} while (0)

static inline void fuzz_fail(const char *file, int line, const char *cond, const char *what)
{
	fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", file, line, what, cond);
	abort();
}

/* ---- choices --------------------------------------------------------- */

/* SplitMix64 (Steele, Lea & Flood 2014): tiny, and any seed is a good one. */
static inline uint64_t fuzz_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A number in [lo, hi]. */
static inline uint64_t fuzz_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + fuzz_next(state) % (hi - lo + 1);
}

/* FNV-1a over the input: a seed that changes whenever the input does. */
static inline uint64_t fuzz_seed(const uint8_t *data, size_t size)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* ---- feeds ------------------------------------------------------------ */

enum feed_kind { FEED_FILE, FEED_PIPE, FEED_CHUNKS };

struct feed {
	int fd;			/* what the code under test reads */
	int wfd;		/* FEED_CHUNKS: the writer thread's end */
	int threaded;
	pthread_t thread;
	const uint8_t *data;
	size_t size;
	size_t max_chunk;	/* FEED_CHUNKS: short messages of 1..max_chunk bytes */
	uint64_t state;		/* FEED_CHUNKS: draws the message sizes */
	size_t done;		/* FEED_CHUNKS: bytes sent so far */
	size_t pending;		/* FEED_CHUNKS: the size drawn for the next message */
	size_t messages;	/* FEED_CHUNKS: message sizes drawn so far */
};

/* The largest input the pipe and chunk feeds take; bigger ones become files. */
#define FEED_SMALL ((size_t)60 << 10)
#define FEED_CHUNK_MAX ((size_t)16 << 10)
#define FEED_SHORT_READS 64

static inline int fuzz_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * An anonymous regular file holding the bytes, read from offset 0. One
 * scratch file serves every call: creating a file per call (a shmem inode
 * made and torn down) was a quarter of an execution. Each call empties and
 * refills it and hands out a dup, which the caller closes; the dups share
 * one offset, so only one may be in use at a time, which is how every
 * harness uses them (open, load or save, close).
 */
static inline int fuzz_scratch(void)
{
	static int scratch = -1;

	if (scratch >= 0)
		return scratch;
	scratch = memfd_create("bftools-fuzz", MFD_CLOEXEC);
	if (scratch < 0) {
		char path[] = "/tmp/bftools-fuzz-XXXXXX";

		scratch = mkstemp(path);
		fuzz_check(scratch >= 0, "cannot make a scratch file");
		unlink(path);
	}
	return scratch;
}

static inline int fuzz_file(const uint8_t *data, size_t size)
{
	int scratch = fuzz_scratch(), fd;

	/* overwritten in place, then cut to size: truncating to 0 first frees and refaults every page */
	fuzz_check(lseek(scratch, 0, SEEK_SET) == 0, "cannot rewind the scratch file");
	fuzz_check(fuzz_write_all(scratch, data, size) == 0, "cannot fill a scratch file");
	fuzz_check(ftruncate(scratch, (off_t)size) == 0, "cannot cut the scratch file to size");
	fuzz_check(lseek(scratch, 0, SEEK_SET) == 0, "cannot rewind a scratch file");
	fd = dup(scratch);
	fuzz_check(fd >= 0, "cannot open the scratch file again");
	return fd;
}

static inline int fuzz_pipe(const uint8_t *data, size_t size)
{
	int p[2];
	size_t done = 0;

	fuzz_check(pipe(p) == 0, "cannot make a pipe");
	fuzz_check(fcntl(p[1], F_SETFL, O_NONBLOCK) == 0, "cannot make a pipe non-blocking");
	while (done < size) {
		ssize_t n = write(p[1], data + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(p[1]);
	if (done == size)
		return p[0];
	close(p[0]);
	return fuzz_file(data, size);
}

/*
 * The size of the next message: 1..max_chunk for the first FEED_SHORT_READS,
 * then max_chunk..FEED_CHUNK_MAX. Short reads all through cost two system
 * calls (and a socket buffer's worth of bookkeeping) per few bytes, most of
 * an execution; FEED_SHORT_READS of them already put read boundaries at
 * every awkward place of the first records, where the mutations aim them.
 */
static inline size_t feed_next_size(struct feed *f)
{
	if (f->messages++ < FEED_SHORT_READS)
		return (size_t)fuzz_range(&f->state, 1, f->max_chunk);
	return (size_t)fuzz_range(&f->state, f->max_chunk, FEED_CHUNK_MAX);
}

/*
 * Send the rest of the input as messages; flags MSG_DONTWAIT stops at a
 * full socket instead of waiting. Returns 0 once everything is sent (or
 * the reader has gone), -1 when the socket is full.
 */
static inline int chunk_send(struct feed *f, int flags)
{
	while (f->done < f->size) {
		size_t n = f->pending ? f->pending : feed_next_size(f);
		ssize_t sent;

		if (n > f->size - f->done)
			n = f->size - f->done;
		f->pending = n;	/* drawn once, however often it is tried */
		/* never an empty message: the reader would take it for the end */
		sent = send(f->wfd, f->data + f->done, n, MSG_NOSIGNAL | flags);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && flags)
			return -1;
		if (sent < 0)
			break;	/* the reader stopped early and closed its end */
		f->done += (size_t)sent;
		f->pending = 0;
	}
	return 0;
}

static inline void *chunk_writer(void *arg)
{
	struct feed *f = arg;

	chunk_send(f, 0);
	close(f->wfd);
	return NULL;
}

/*
 * A small stack for the writer: ASan clears the shadow of a thread's whole
 * stack when it starts, and for the default 8 MiB that alone costs more
 * than a run of most harnesses.
 */
#define FEED_STACK ((size_t)256 << 10)

static inline void fuzz_chunks(struct feed *f)
{
	pthread_attr_t attr;
	int sv[2];

	fuzz_check(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0,
		   "cannot make a socket pair");
	f->fd = sv[0];
	f->wfd = sv[1];
	/* most inputs fit the socket's buffer: no thread to start (ASan makes that dear) */
	if (chunk_send(f, MSG_DONTWAIT) == 0) {
		close(f->wfd);
		return;
	}
	fuzz_check(pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, FEED_STACK) == 0,
		   "cannot size the writer thread's stack");
	fuzz_check(pthread_create(&f->thread, &attr, chunk_writer, f) == 0,
		   "cannot start the writer thread");
	pthread_attr_destroy(&attr);
	f->threaded = 1;
}

/*
 * Open a feed of kind over data; seed draws the chunk sizes (1..max_chunk).
 * Inputs too big for a pipe's buffer, or for the chunk feed's promise
 * above, are delivered as a file instead.
 */
static inline void feed_open(struct feed *f, enum feed_kind kind, const uint8_t *data, size_t size,
		      uint64_t seed, size_t max_chunk)
{
	memset(f, 0, sizeof *f);
	f->data = data;
	f->size = size;
	f->state = seed;
	f->max_chunk = max_chunk < 1 ? 1 : max_chunk > FEED_CHUNK_MAX ? FEED_CHUNK_MAX : max_chunk;
	if (size > FEED_SMALL)
		kind = FEED_FILE;
	if (kind == FEED_FILE)
		f->fd = fuzz_file(data, size);
	else if (kind == FEED_PIPE)
		f->fd = fuzz_pipe(data, size);
	else
		fuzz_chunks(f);
}

/* Close the reading end first, so a writer blocked on a full socket gives up. */
static inline void feed_close(struct feed *f)
{
	close(f->fd);
	if (f->threaded)
		pthread_join(f->thread, NULL);
}

/* Everything left in fd (a scratch file) from offset 0, in a new buffer. */
static inline uint8_t *fuzz_slurp(int fd, size_t *size)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *buf;
	size_t got = 0;

	fuzz_check(end >= 0 && lseek(fd, 0, SEEK_SET) == 0, "cannot seek a scratch file");
	buf = malloc((size_t)end + 1);
	fuzz_check(buf != NULL, "out of memory");
	while (got < (size_t)end) {
		ssize_t n = read(fd, buf + got, (size_t)end - got);

		fuzz_check(n > 0, "cannot read a scratch file back");
		got += (size_t)n;
	}
	*size = got;
	return buf;
}

#endif
