/* SPDX-License-Identifier: MIT */
/*
 * layout.c - the registry of filter layouts: every layout's table, found
 * by its id or its name. A new layout is a file defining its struct
 * filter_layout (layout.h) and a line in the list below.
 */
#include "layout.h"

#include <string.h>

#include "popcount.h"

static const struct layout_ops *const layouts[] = {
	&layout_blocked,
	&layout_classic,
	&layout_counting,
	&layout_dcso,
};

#define NLAYOUTS (sizeof layouts / sizeof layouts[0])

const struct layout_ops *layout_of(enum filter_layout id)
{
	for (size_t i = 0; i < NLAYOUTS; i++)
		if (layouts[i]->id == id)
			return layouts[i];
	return NULL;
}

const struct layout_ops *layout_named(const char *name)
{
	for (size_t i = 0; i < NLAYOUTS; i++)
		if (strcmp(layouts[i]->name, name) == 0)
			return layouts[i];
	return NULL;
}

int layout_check_whole_m(const struct filter_params *p, const char **errstr)
{
	if (p->probe_bits == 0)
		return 0;
	*errstr = "probed bits not 0, or for DCSO not within the last 512 bits of m";
	return -1;
}

unsigned layout_word_bits(uint64_t w)
{
	return popcount64(w);
}

void layout_or_words(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] |= src[i];
}

void layout_and_words(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] &= src[i];
}
