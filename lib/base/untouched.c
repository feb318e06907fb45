/* SPDX-License-Identifier: MIT */
/*
 * untouched.c - pages of an anonymous mapping never written (see
 * untouched.h).
 *
 * mincore's vector holds a byte per page, bit 0 set when resident: a page
 * once read maps the shared zero page and counts as resident, so this
 * answers for pages never touched at all, which is what a filter's big
 * empty stretches are as long as nothing scans them carelessly.
 */
#include "untouched.h"

#include <sys/mman.h>
#include <unistd.h>

#define PAGES_MAX 256	/* UNTOUCHED_SPAN in 4 KiB pages */

int untouched(const void *p, size_t len)
{
	static long page;
	unsigned char resident[PAGES_MAX];
	size_t pages;

	if (page == 0)
		page = sysconf(_SC_PAGESIZE);
	if (page != 4096 || len == 0 || len > UNTOUCHED_SPAN || (uintptr_t)p % 4096 != 0 || len % 4096 != 0)
		return 0;
	pages = len / 4096;
	if (mincore((void *)p, len, resident) != 0)
		return 0;
	for (size_t i = 0; i < pages; i++)
		if (resident[i] & 1)
			return 0;
	return 1;
}
