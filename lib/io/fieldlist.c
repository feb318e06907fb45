/* SPDX-License-Identifier: MIT */
/*
 * fieldlist.c - parsing -k's field lists and resolving their names.
 *
 * A list is kept twice: the items as given (so that names can be resolved
 * again against each input's header) and the ranges in use, sorted and
 * merged, so that keys.c walks a record's fields once, left to right,
 * moving through the ranges as it goes. Numbers are checked in the
 * strtonum shape: digits only, 1 to 2^32 - 2 (2^32 - 1 means "to the end").
 *
 * Not here: splitting records into fields (keys.c), messages (cmd/).
 */
#include <stdlib.h>
#include <string.h>

#include "fieldlist.h"

/* Digits [p, end) as a field number; -1 when empty, not digits, 0 or too big. */
static int parse_number(const char *p, const char *end, uint32_t *out)
{
	uint64_t v = 0;

	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v >= FIELDLIST_END)
			return -1;
	}
	if (v == 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int all_digits(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* True when [p, end) has the shape of a number or range (digits and one '-'). */
static int numeric_shape(const char *p, const char *end)
{
	const char *dash = memchr(p, '-', (size_t)(end - p));

	if (dash == NULL)
		return all_digits(p, end);
	return all_digits(p, dash) && all_digits(dash + 1, end) && end - p > 1;
}

/* One item [p, end); *errstr on a bad one. */
static int parse_item(const char *p, const char *end, struct field_item *it,
		      const char **errstr)
{
	const char *dash;

	memset(it, 0, sizeof *it);
	if (p == end)
		return *errstr = "empty item in the field list", -1;
	if (!numeric_shape(p, end)) {
		it->name = p;
		it->name_len = (size_t)(end - p);
		return 0;
	}
	dash = memchr(p, '-', (size_t)(end - p));
	it->range.first = 1;
	it->range.last = FIELDLIST_END;
	if (dash == NULL && parse_number(p, end, &it->range.first) == 0) {
		it->range.last = it->range.first;
		return 0;
	}
	if (dash == NULL || (dash > p && parse_number(p, dash, &it->range.first) < 0) ||
	    (dash + 1 < end && parse_number(dash + 1, end, &it->range.last) < 0))
		return *errstr = "field numbers count from 1 to 4294967294", -1;
	if (it->range.first > it->range.last)
		return *errstr = "a range decreases", -1;
	return 0;
}

static int by_first(const void *a, const void *b)
{
	const struct field_range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* The ranges of resolved items, sorted and merged, and the field a record needs. */
static void settle(struct fieldlist *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nitems; i++)
		f->ranges[i] = f->items[i].range;
	qsort(f->ranges, f->nitems, sizeof *f->ranges, by_first);
	f->need = 0;
	for (size_t i = 0; i < f->nitems; i++) {
		struct field_range r = f->ranges[i];
		uint32_t needs = r.last == FIELDLIST_END ? r.first : r.last;

		if (needs > f->need)
			f->need = needs;
		if (n > 0 && (f->ranges[n - 1].last == FIELDLIST_END ||
			      r.first <= f->ranges[n - 1].last + 1)) {
			if (r.last > f->ranges[n - 1].last)
				f->ranges[n - 1].last = r.last;
			continue;
		}
		f->ranges[n++] = r;
	}
	f->nranges = n;
}

static size_t count_items(const char *text)
{
	size_t n = 1;

	for (; *text; text++)
		n += *text == ',';
	return n;
}

static struct fieldlist *list_alloc(size_t n)
{
	struct fieldlist *f = calloc(1, sizeof *f);

	if (f == NULL)
		return NULL;
	f->items = calloc(n, sizeof *f->items);
	f->ranges = calloc(n, sizeof *f->ranges);
	if (f->items == NULL || f->ranges == NULL) {
		fieldlist_free(f);
		return NULL;
	}
	f->nitems = n;
	return f;
}

/* A lone field number: the -k N of old, no list needed. */
static int lone_number(const char *text, unsigned long *single)
{
	uint32_t v;

	if (strchr(text, ',') || strchr(text, '-') ||
	    parse_number(text, text + strlen(text), &v) < 0)
		return 0;
	*single = v;
	return 1;
}

struct fieldlist *fieldlist_parse(const char *text, unsigned long *single,
				  const char **errstr)
{
	struct fieldlist *f;
	const char *p = text;

	*errstr = NULL;
	if (lone_number(text, single))
		return NULL;
	f = list_alloc(count_items(text));
	if (f == NULL)
		return *errstr = "out of memory", NULL;
	for (size_t i = 0; i < f->nitems; i++) {
		const char *end = strchr(p, ',');

		if (end == NULL)
			end = p + strlen(p);
		if (parse_item(p, end, &f->items[i], errstr) < 0) {
			fieldlist_free(f);
			return NULL;
		}
		f->named |= f->items[i].name_len > 0;
		p = end + 1;
	}
	if (!f->named)
		settle(f);
	return f;
}

int fieldlist_resolve(struct fieldlist *f, const struct line *names, size_t n,
		      size_t *missing)
{
	for (size_t i = 0; i < f->nitems; i++) {
		struct field_item *it = &f->items[i];
		size_t j = 0;

		if (it->name_len == 0)
			continue;
		while (j < n && !(names[j].len == it->name_len &&
				  memcmp(names[j].data, it->name, it->name_len) == 0))
			j++;
		if (j == n || j + 1 >= FIELDLIST_END) {
			*missing = i;
			f->nranges = 0;
			return -1;
		}
		it->range.first = it->range.last = (uint32_t)(j + 1);
	}
	settle(f);
	return 0;
}

void fieldlist_free(struct fieldlist *f)
{
	if (f == NULL)
		return;
	free(f->items);
	free(f->ranges);
	free(f);
}
