/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the least a program pays to hold a big filter here: the first
 * write to every page of BYTES of fresh anonymous memory, with transparent
 * huge pages asked for (madvise) as bftools asks for them.
 *
 *   floor BYTES     map BYTES, write one byte in every 4 KiB page, exit
 *
 * The bench times it beside the pipe-limit job. A filter sized for 1e9
 * keys that receives a few million random keys touches every one of its
 * pages, so no program keeping such a filter can finish faster than this
 * on the same machine. On a virtual machine whose host backs guest memory
 * lazily it costs much more than the kernel's page clearing alone. It does
 * nothing else: no reading, no hashing, no output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	char *end;
	unsigned long long bytes;
	volatile unsigned char *p;

	if (argc != 2 || (bytes = strtoull(argv[1], &end, 10)) == 0 || *end != '\0') {
		fprintf(stderr, "usage: floor BYTES\n");
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
