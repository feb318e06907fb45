/* SPDX-License-Identifier: MIT */
/*
 * popcount.c - bits set in an array of words. Without -mpopcnt the
 * builtin is a libgcc routine, so on x86-64 a copy of the loop compiled
 * for the popcnt instruction is chosen at run time when the CPU has it.
 * A long array is counted a span at a time, and pages of a mapping never
 * written are skipped unread (untouched.h): they hold no bits, and
 * reading them would back gigabytes of an empty filter with zero pages
 * (or, on kernels without a zero page, with memory).
 */
#include "popcount.h"

#include "untouched.h"

#define POPCOUNT_LOOP(name, attr)                                                 \
	attr static uint64_t name(const uint64_t *w, uint64_t n)                 \
	{                                                                         \
		uint64_t total = 0;                                               \
		for (uint64_t i = 0; i < n; i++)                                  \
			total += (uint64_t)__builtin_popcountll(w[i]);            \
		return total;                                                     \
	}

POPCOUNT_LOOP(popcount_portable, )
#if defined(__x86_64__) && defined(__GNUC__)
POPCOUNT_LOOP(popcount_hardware, __attribute__((target("popcnt"))))

static uint64_t count_span(const uint64_t *w, uint64_t n)
{
	static int has_popcnt = -1;

	if (has_popcnt < 0) {
		__builtin_cpu_init();
		has_popcnt = __builtin_cpu_supports("popcnt") != 0;
	}
	return has_popcnt ? popcount_hardware(w, n) : popcount_portable(w, n);
}
#else
static uint64_t count_span(const uint64_t *w, uint64_t n)
{
	return popcount_portable(w, n);
}
#endif

/* A whole span: its pages that were ever written, each read; the others hold no bits. */
static uint64_t count_written(const uint64_t *w)
{
	const uint64_t page = UNTOUCHED_PAGE / 8;
	unsigned char read[UNTOUCHED_PAGES];
	uint64_t total = 0;

	if (untouched_pages(w, UNTOUCHED_SPAN, read) == UNTOUCHED_PAGES)
		return count_span(w, UNTOUCHED_SPAN / 8);
	for (size_t i = 0; i < UNTOUCHED_PAGES; i++)
		if (read[i])
			total += count_span(w + i * page, page);
	return total;
}

uint64_t popcount_words(const uint64_t *w, uint64_t n)
{
	const uint64_t span = UNTOUCHED_SPAN / 8;
	uint64_t total = 0;

	for (uint64_t i = 0; i < n; i += span) {
		uint64_t len = n - i < span ? n - i : span;

		total += len < span ? count_span(w + i, len) : count_written(w + i);
	}
	return total;
}
