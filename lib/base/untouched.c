/* SPDX-License-Identifier: MIT */
/*
 * untouched.c - pages of an anonymous mapping never written (see
 * untouched.h).
 *
 * mincore's vector holds a byte per page, bit 0 set when resident: a page
 * once read maps the shared zero page and counts as resident (or, on a
 * kernel without one, a fresh page of zeros), so this answers for pages
 * never touched at all, which is what a filter's big empty stretches are
 * as long as nothing scans them carelessly.
 */
#include "untouched.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mincore's answer for [p, p + len) in resident (bit 0 of a byte a page); 0, or -1 when it cannot be had. */
static int residency(const void *p, size_t len, unsigned char resident[UNTOUCHED_PAGES])
{
	static long page;

	if (page == 0)
		page = sysconf(_SC_PAGESIZE);
	if (page != (long)UNTOUCHED_PAGE || len == 0 || len > UNTOUCHED_SPAN || (uintptr_t)p % UNTOUCHED_PAGE != 0 ||
	    len % UNTOUCHED_PAGE != 0)
		return -1;
	return mincore((void *)p, len, resident) == 0 ? 0 : -1;
}

int untouched(const void *p, size_t len)
{
	unsigned char read[UNTOUCHED_PAGES];

	return len > 0 && untouched_pages(p, len, read) == 0;
}

size_t untouched_pages(const void *p, size_t len, unsigned char read[UNTOUCHED_PAGES])
{
	size_t pages = (len + UNTOUCHED_PAGE - 1) / UNTOUCHED_PAGE, wanted = 0;

	if (pages > UNTOUCHED_PAGES)
		pages = UNTOUCHED_PAGES;
	if (residency(p, len, read) != 0) {
		memset(read, 1, pages);
		return pages;
	}
	for (size_t i = 0; i < pages; i++) {
		read[i] &= 1;
		wanted += read[i];
	}
	return wanted;
}
