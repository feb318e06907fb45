/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the least a program pays here to hold a big filter, or to
 * load one from a file.
 *
 *   floor BYTES              map BYTES, write one byte in every 4 KiB page, exit
 *   floor --read FILE N      read FILE into as many bytes of fresh memory
 *                            on N threads, 64 KiB a pread(2), exit
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
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	if (argc != 2 || (bytes = strtoull(argv[1], &end, 10)) == 0 || *end != '\0') {
		fprintf(stderr, "usage: floor BYTES | floor --read FILE THREADS\n");
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
