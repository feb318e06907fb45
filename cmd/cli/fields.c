/* SPDX-License-Identifier: MIT */
/*
 * cli_fields.c - field lists (-k 1,3, -k url) and --header, for the
 * programs that take key options (see cli_fields.h).
 *
 * The header's fields are split as the records' are (keys_split), so a
 * name means the field that -k with its number would key. State is set
 * once, before the inputs are read; the names are resolved on the reader
 * thread, which alone builds keys, so the list needs no lock.
 *
 * Not here: parsing the list (lib/fieldlist.c) or cutting keys out of
 * records (lib/keys.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "../cli_fields.h"

static struct key_spec *header_spec;	/* NULL: inputs have no header */
static void (*header_pass)(void *ctx, struct line header);

static int csv_separator = -1;	/* --csv: the separator */

void cli_fields_check(struct key_spec *spec, int header)
{
	const struct fieldlist *f = spec->fields;

	if (spec->csv) {
		if (spec->separator < 0)
			spec->separator = ',';
		if (spec->separator == '"' || spec->separator == '\n' || spec->separator == '\r')
			cli_usage_error("--csv: the separator cannot be a quote, newline or carriage return");
		csv_separator = spec->separator;
	}
	if (f == NULL || !f->named || header)
		return;
	for (size_t i = 0; i < f->nitems; i++)
		if (f->items[i].name_len > 0)
			cli_usage_error("-k '%.*s': not a field number or range (field names need --header)",
					(int)f->items[i].name_len, f->items[i].name);
}

void cli_header_inputs(struct key_spec *spec, void (*pass)(void *ctx, struct line header))
{
	header_spec = spec;
	header_pass = pass;
}

int cli_header_on(void)
{
	return header_spec != NULL;
}

int cli_csv_separator(void)
{
	return csv_separator;
}

int cli_fields_in_order(void)
{
	return header_spec != NULL || csv_separator >= 0;
}

/* The names of spec's list against header: 0, or -1 with why filled. */
static int resolve_names(struct key_spec *spec, struct line header, char *why, size_t why_len)
{
	struct fieldlist *f = spec->fields;
	char *copy = malloc(header.len + 1);	/* CSV names unquoted */
	size_t n = copy ? keys_split(spec, header, NULL, 0, copy) : 0, missing = 0;
	struct line *names = copy ? malloc((n ? n : 1) * sizeof *names) : NULL;
	int rc = -1;

	if (names == NULL) {
		snprintf(why, why_len, "%s", strerror(ENOMEM));
	} else {
		keys_split(spec, header, names, n, copy);
		rc = fieldlist_resolve(f, names, n, &missing);
		if (rc < 0)
			snprintf(why, why_len, "no field named '%.*s' in its header",
				 (int)f->items[missing].name_len, f->items[missing].name);
	}
	free(names);
	free(copy);
	return rc;
}

int cli_header_take(struct lines_batch *b, struct line *header, char *why, size_t why_len)
{
	*header = b->records[0];
	/* once per input: moving the batch's spans down costs little */
	memmove(b->records, b->records + 1, (b->n - 1) * sizeof *b->records);
	b->n--;
	if (header_spec->fields == NULL || !header_spec->fields->named)
		return 0;
	return resolve_names(header_spec, *header, why, why_len);
}

void cli_header_pass(void *ctx, struct line header)
{
	if (header_pass)
		header_pass(ctx, header);
}
