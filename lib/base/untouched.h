/* SPDX-License-Identifier: MIT */
/*
 * untouched.h - which parts of an anonymous mapping were never written.
 *
 * A filter's bit array is an anonymous mmap: pages the process never
 * wrote are not backed and read as zeros. A scan of the whole array (a
 * save, a bit count, the current rate) that reads them anyway makes the
 * kernel map zero pages for gigabytes of nothing, and spends seconds
 * doing it for a filter sized for 1e9 keys that holds a thousand (issue
 * 33). The kernel's page map (/proc/self/pagemap) says which pages are
 * in memory or in swap without touching them; a page in neither, in such
 * a mapping, holds zeros. (mincore(2) alone cannot tell a page never
 * written from one written and swapped out.)
 *
 * Only an answer of 1 means something: 0 is "look at the bytes" (some
 * page is in memory or swap, the span is not page-aligned, or the page map is not to be
 * had), never "something is set".
 */
#ifndef BFTOOLS_UNTOUCHED_H
#define BFTOOLS_UNTOUCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes a caller should ask about at a time: big enough to be worth the call. */
#define UNTOUCHED_SPAN ((size_t)1 << 20)
/* The pages it is asked about in. */
#define UNTOUCHED_PAGE ((size_t)4096)
#define UNTOUCHED_PAGES (UNTOUCHED_SPAN / UNTOUCHED_PAGE)

/*
 * 1 when no page of [p, p + len) is in memory or swap: p page-aligned, len a whole
 * number of pages and at most UNTOUCHED_SPAN, in an anonymous private
 * mapping (then every byte there is 0). Else 0.
 */
int untouched(const void *p, size_t len);

/*
 * Page by page, for [p, p + len) as untouched takes it: read[i] = 1 when
 * page i is to be read, 0 when it holds zeros unread. Returns the pages
 * to read, or len's page count with every read[i] 1 when it cannot tell.
 * Some kernels have no zero page to map for a read: there, each page of
 * an empty stretch read to find its zeros is a page of memory kept.
 */
size_t untouched_pages(const void *p, size_t len, unsigned char read[UNTOUCHED_PAGES]);

/* Whether a page whose /proc/self/pagemap entry is this may hold data: in memory or in swap. */
int untouched_entry_holds_data(uint64_t entry);

#ifdef __cplusplus
}
#endif

#endif
