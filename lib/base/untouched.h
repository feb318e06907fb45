/* SPDX-License-Identifier: MIT */
/*
 * untouched.h - which parts of an anonymous mapping were never written.
 *
 * A filter's bit array is an anonymous mmap: pages the process never
 * wrote are not backed and read as zeros. A scan of the whole array (a
 * save, a bit count, the current rate) that reads them anyway makes the
 * kernel map zero pages for gigabytes of nothing, and spends seconds
 * doing it for a filter sized for 1e9 keys that holds a thousand (issue
 * 33). mincore(2) says which pages are resident without touching them;
 * a page not resident in such a mapping holds zeros.
 *
 * Only an answer of 1 means something: 0 is "look at the bytes" (some
 * page is resident, the span is not page-aligned, or mincore is not to be
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

/*
 * 1 when no page of [p, p + len) is resident: p page-aligned, len a whole
 * number of pages and at most UNTOUCHED_SPAN, in an anonymous private
 * mapping (then every byte there is 0). Else 0.
 */
int untouched(const void *p, size_t len);

#ifdef __cplusplus
}
#endif

#endif
