/* SPDX-License-Identifier: MIT */
/*
 * untouched.c - pages of an anonymous mapping never written (see
 * untouched.h).
 *
 * The answer comes from /proc/self/pagemap, a 64-bit entry a page: bit 63
 * set when the page is in memory, bit 62 when it is in swap (or on its
 * way somewhere: a migration entry counts as swap there). A page with
 * neither was never touched, or was given back, and holds zeros. A page
 * once read maps the shared zero page and counts as present (or, on a
 * kernel without one, a fresh page of zeros), so this answers for pages
 * never touched at all, which is what a filter's big empty stretches are
 * as long as nothing scans them carelessly.
 *
 * Not mincore(2), which was used first: it says "not resident" of a page
 * that was written and then swapped out, and a save would have written
 * zeros for it, losing keys, on any machine short of memory with swap.
 *
 * The file is opened for each question (6.5 us a MiB against mincore's
 * 2.9 here): a descriptor kept open would, after a fork, describe the
 * parent's memory, and one closed behind our back could be another file
 * by then. Where it cannot be opened or read, every page is read.
 */
#include "untouched.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_SWAPPED (UINT64_C(1) << 62)

/* The pagemap entries of the pages of [p, p + len); 0, or -1 when they cannot be had. */
static int pagemap_entries(const void *p, size_t len, uint64_t entries[UNTOUCHED_PAGES])
{
	static long page;
	size_t want = len / UNTOUCHED_PAGE * sizeof(uint64_t);
	ssize_t got;
	int fd;

	if (page == 0)
		page = sysconf(_SC_PAGESIZE);
	if (page != (long)UNTOUCHED_PAGE || len == 0 || len > UNTOUCHED_SPAN || (uintptr_t)p % UNTOUCHED_PAGE != 0 ||
	    len % UNTOUCHED_PAGE != 0)
		return -1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		got = pread(fd, entries, want, (off_t)((uintptr_t)p / UNTOUCHED_PAGE * sizeof(uint64_t)));
	while (got < 0 && errno == EINTR);
	close(fd);
	return got == (ssize_t)want ? 0 : -1;
}

int untouched_entry_holds_data(uint64_t entry)
{
	return (entry & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED)) != 0;
}

int untouched(const void *p, size_t len)
{
	unsigned char read[UNTOUCHED_PAGES];

	return len > 0 && untouched_pages(p, len, read) == 0;
}

size_t untouched_pages(const void *p, size_t len, unsigned char read[UNTOUCHED_PAGES])
{
	size_t pages = (len + UNTOUCHED_PAGE - 1) / UNTOUCHED_PAGE, wanted = 0;
	uint64_t entries[UNTOUCHED_PAGES];

	if (pages > UNTOUCHED_PAGES)
		pages = UNTOUCHED_PAGES;
	if (pagemap_entries(p, len, entries) != 0) {
		memset(read, 1, pages);
		return pages;
	}
	for (size_t i = 0; i < pages; i++) {
		read[i] = (unsigned char)untouched_entry_holds_data(entries[i]);
		wanted += read[i];
	}
	return wanted;
}
