/* SPDX-License-Identifier: MIT */
/*
 * test_untouched.c - which pages of an anonymous mapping were never
 * written (untouched.h): the pages written, and only those, are to be
 * read; a page in swap counts as written (the reason for the page map
 * rather than mincore, which calls it not resident).
 */
#include <string.h>
#include <sys/mman.h>

#include "unit.h"
#include "untouched.h"

/* A span with two pages written, one read, one given back: only the two are to be read. */
static void only_written_pages_are_to_be_read(void)
{
	unsigned char read[UNTOUCHED_PAGES];
	char *p = mmap(NULL, 2 * UNTOUCHED_SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *span;
	volatile char sink;
	size_t wanted;

	CHECK(p != MAP_FAILED);
	span = p + (UNTOUCHED_SPAN - (size_t)((uintptr_t)p % UNTOUCHED_SPAN)) % UNTOUCHED_SPAN;
	CHECK(untouched(span, UNTOUCHED_SPAN) == 1);
	CHECK(untouched_pages(span, UNTOUCHED_SPAN, read) == 0);
	span[3 * UNTOUCHED_PAGE + 17] = 1;
	span[200 * UNTOUCHED_PAGE] = 2;
	span[9 * UNTOUCHED_PAGE] = 3;
	CHECK(madvise(span + 9 * UNTOUCHED_PAGE, UNTOUCHED_PAGE, MADV_DONTNEED) == 0);
	sink = span[100 * UNTOUCHED_PAGE];	/* read: the zero page, or a page of zeros */
	(void)sink;
	wanted = untouched_pages(span, UNTOUCHED_SPAN, read);
	CHECK(read[3] == 1 && read[200] == 1 && read[9] == 0);
	CHECKF(wanted == (size_t)(2 + read[100]), "%zu pages to read", wanted);
	for (size_t i = 0; i < UNTOUCHED_PAGES; i++)
		if (i != 3 && i != 200 && i != 100)
			CHECKF(read[i] == 0, "page %zu", i);
	CHECK(untouched(span, UNTOUCHED_SPAN) == 0);
	CHECK(untouched(span + 4 * UNTOUCHED_PAGE, 96 * UNTOUCHED_PAGE) == 1);
	/* what it cannot answer (not page-aligned) is all to be read */
	CHECK(untouched_pages(span + 1, UNTOUCHED_PAGE, read) == 1 && read[0] == 1);
	CHECK(untouched(span + 1, UNTOUCHED_PAGE) == 0);
	munmap(p, 2 * UNTOUCHED_SPAN);
}

/* Page-map entries: in memory or in swap (or migrating, which is shown as swap) may hold data. */
static void a_page_in_swap_holds_data(void)
{
	const uint64_t present = UINT64_C(1) << 63, swapped = UINT64_C(1) << 62;

	CHECK(untouched_entry_holds_data(present | 0x12345));
	CHECK(untouched_entry_holds_data(swapped | (UINT64_C(5) << 5)));
	CHECK(untouched_entry_holds_data(present | swapped));
	CHECK(!untouched_entry_holds_data(0));
	/* soft-dirty, exclusive and the like say nothing of data */
	CHECK(!untouched_entry_holds_data(UINT64_C(1) << 55 | UINT64_C(1) << 56 | UINT64_C(1) << 61));
}

void suite_untouched(void)
{
	unit_run("untouched: only the pages written are to be read, not one read or given back",
		 only_written_pages_are_to_be_read);
	unit_run("untouched: a page in swap (or migrating) holds data; one in neither holds zeros",
		 a_page_in_swap_holds_data);
}
