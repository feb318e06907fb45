/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the least a program pays here to hold a big filter, or to
 * load one from a file.
 *
 *   floor BYTES              map BYTES, write one byte in every 4 KiB page, exit
 *   floor --read FILE N      read FILE into as many bytes of fresh memory
 *                            on N threads, 64 KiB a pread(2), exit
 *   floor --after MS BYTES   wait MS milliseconds, then back BYTES of fresh
 *                            memory in huge pages on two threads, a 2 MiB
 *                            span a call, and print the nanoseconds that took
 *
 * The bench times the first beside the pipe-limit job. A filter sized for
 * 1e9 keys that receives a few million random keys touches every one of
 * its pages, so no program keeping such a filter can finish faster than
 * this on the same machine. On a virtual machine whose host backs guest
 * memory lazily it costs much more than the kernel's page clearing alone.
 * It does nothing else: no reading, no hashing, no output.
 *
 * The second is what loading a dense filter cannot do without (issue 33):
 * its bytes copied from the page cache into memory the kernel clears
 * first, on every thread the load uses. Nothing else: no parsing, no
 * index, no filter, and no CRC (a load checks one; a libdeflate CRC here
 * made this slower than bftools' whole load). The bench times it beside
 * the dense load: the build before's time over this one is more than any
 * load that checks what it reads could gain on this machine.
 *
 * The third shows what the memory the last program freed costs the next,
 * by how soon it is touched: run right after a program that held BYTES, at
 * a few values of MS. On a virtual machine whose host takes back freed
 * memory (free page reporting) a program that touches its memory late
 * pays the host's faults too, and one that touches it early does not.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_PIECE 65536
#define THREADS_MAX 64

struct share {
	int fd;
	unsigned char *to;
	off_t from;
	size_t len;
	int failed;
};

static void *read_share(void *arg)
{
	struct share *s = arg;

	for (size_t done = 0; done < s->len;) {
		size_t want = s->len - done < READ_PIECE ? s->len - done : READ_PIECE;
		ssize_t got = pread(s->fd, s->to + done, want, s->from + (off_t)done);

		if (got <= 0) {
			s->failed = 1;
			return NULL;
		}
		done += (size_t)got;
	}
	return NULL;
}

/* floor --read FILE N: 0, or 1 on a failure (said on stderr). */
static int read_floor(const char *path, int threads)
{
	struct share share[THREADS_MAX];
	pthread_t tid[THREADS_MAX];
	struct stat st;
	unsigned char *p;
	size_t size, per;
	int fd = open(path, O_RDONLY), failed = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return 1;
	}
	if (st.st_size <= 0) {
		fprintf(stderr, "floor: %s: empty\n", path);
		return 1;
	}
	size = (size_t)st.st_size;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("floor: mmap");
		return 1;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(p, size, MADV_HUGEPAGE);
#endif
	per = (size / (size_t)threads + READ_PIECE - 1) / READ_PIECE * READ_PIECE;
	for (int t = 0; t < threads; t++) {
		size_t from = (size_t)t * per < size ? (size_t)t * per : size;

		share[t] = (struct share){ fd, p + from, (off_t)from, size - from < per ? size - from : per, 0 };
		if (pthread_create(&tid[t], NULL, read_share, &share[t]) != 0) {
			perror("floor: pthread_create");
			return 1;
		}
	}
	for (int t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		failed |= share[t].failed;
	}
	if (failed)
		fprintf(stderr, "floor: %s: a read failed\n", path);
	return failed;
}

#define SPAN (UINT64_C(2) << 20)

struct populate {
	unsigned char *p;
	uint64_t spans, first;
};

/* Every other span from first: one MADV_POPULATE_WRITE each, or a write where there is none. */
static void *populate_spans(void *arg)
{
	const struct populate *w = arg;

	for (uint64_t i = w->first; i < w->spans; i += 2) {
#ifdef MADV_POPULATE_WRITE
		if (madvise(w->p + i * SPAN, SPAN, MADV_POPULATE_WRITE) == 0)
			continue;
#endif
		w->p[i * SPAN] = 1;
	}
	return NULL;
}

static uint64_t nanoseconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* floor --after MS BYTES: 0, or 1 on a failure (said on stderr). */
static int populate_after(long ms, uint64_t bytes)
{
	uint64_t spans = (bytes + SPAN - 1) / SPAN;
	struct populate half[2];
	pthread_t second;
	unsigned char *map, *p;
	struct timespec pause = { ms / 1000, ms % 1000 * 1000000L };
	uint64_t t0;

	map = mmap(NULL, (size_t)((spans + 1) * SPAN), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("floor: mmap");
		return 1;
	}
	p = map + (SPAN - (uintptr_t)map % SPAN) % SPAN;	/* on a span's boundary, as a filter's array */
#ifdef MADV_HUGEPAGE
	(void)madvise(p, (size_t)(spans * SPAN), MADV_HUGEPAGE);
#endif
	nanosleep(&pause, NULL);
	t0 = nanoseconds_now();
	half[0] = (struct populate){ p, spans, 0 };
	half[1] = (struct populate){ p, spans, 1 };
	if (pthread_create(&second, NULL, populate_spans, &half[1]) != 0) {
		perror("floor: pthread_create");
		return 1;
	}
	populate_spans(&half[0]);
	pthread_join(second, NULL);
	printf("%llu\n", (unsigned long long)(nanoseconds_now() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	unsigned long long bytes;
	volatile unsigned char *p;

	if (argc == 4 && strcmp(argv[1], "--read") == 0) {
		long threads = strtol(argv[3], &end, 10);

		if (threads < 1 || threads > THREADS_MAX || *end != '\0') {
			fprintf(stderr, "floor: threads: 1 to %d\n", THREADS_MAX);
			return 2;
		}
		return read_floor(argv[2], (int)threads);
	}
	if (argc == 4 && strcmp(argv[1], "--after") == 0) {
		long ms = strtol(argv[2], &end, 10);

		if (ms < 0 || ms > 60000 || *end != '\0' || (bytes = strtoull(argv[3], &end, 10)) == 0 ||
		    *end != '\0') {
			fprintf(stderr, "floor: --after MS BYTES: MS 0 to 60000, BYTES above 0\n");
			return 2;
		}
		return populate_after(ms, bytes);
	}
	if (argc != 2 || (bytes = strtoull(argv[1], &end, 10)) == 0 || *end != '\0') {
		fprintf(stderr, "usage: floor BYTES | floor --read FILE THREADS | floor --after MS BYTES\n");
		return 2;
	}
	p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("floor: mmap");
		return 1;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)p, (size_t)bytes, MADV_HUGEPAGE);
#endif
	for (size_t i = 0; i < (size_t)bytes; i += 4096)
		p[i] = 1;
	return 0;
}
