/* SPDX-License-Identifier: MIT */
/*
 * fieldlist.h - the fields a key is made of, as -k gives them.
 *
 * The syntax is cut -f's: items separated by commas, each a field number
 * N, a range N-M, an open range N- (N to the last field) or -M (1 to M).
 * With a header, an item may also be a field's name; a name is any item
 * that is not one of those forms (so a field named "3" is reached by its
 * number only). What a list selects is a set: the key takes the selected
 * fields in record order, each once (keys.h joins them).
 *
 * Not here: splitting records into fields (keys.c), reading headers.
 */
#ifndef BFTOOLS_FIELDLIST_H
#define BFTOOLS_FIELDLIST_H

#include <stddef.h>
#include <stdint.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fields first..last, counted from 1; last FIELDLIST_END: to the end. */
struct field_range {
	uint32_t first, last;
};
#define FIELDLIST_END UINT32_MAX

/* One item as given: a range, or a name when name_len > 0. */
struct field_item {
	struct field_range range;
	const char *name;	/* points into the text parsed */
	size_t name_len;
};

struct fieldlist {
	struct field_item *items;	/* as given */
	size_t nitems;
	int named;			/* some item is a name */
	struct field_range *ranges;	/* in use: sorted, disjoint, not adjacent */
	size_t nranges;			/* 0 while names are unresolved */
	uint32_t need;			/* the last field a record must have */
};

/*
 * Parse text (which must outlast the list). A list that is one field
 * number is not a list: NULL, with *single set to it and *errstr NULL.
 * Otherwise the list, or NULL with *errstr saying what is wrong.
 */
struct fieldlist *fieldlist_parse(const char *text, unsigned long *single,
				  const char **errstr);

/*
 * Resolve the names of f: names[i] is the header's field i + 1 (count of
 * them: n). A name is the first field equal to it, byte for byte. Returns
 * 0, or -1 with *missing set to the index of the item that names no field.
 */
int fieldlist_resolve(struct fieldlist *f, const struct line *names, size_t n,
		      size_t *missing);

void fieldlist_free(struct fieldlist *f);

#ifdef __cplusplus
}
#endif

#endif
