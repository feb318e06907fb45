/* SPDX-License-Identifier: MIT */
/*
 * cli_fields.c - field lists (-k 1,3, -k url) and --header, for the
 * programs that take key options.
 *
 * Not here: parsing the list (lib/fieldlist.c) or cutting keys out of
 * records (lib/keys.c).
 */
#include "cli.h"
#include "cli_fields.h"

void cli_fields_check(const struct key_spec *spec, int header)
{
	const struct fieldlist *f = spec->fields;

	if (f == NULL || !f->named || header)
		return;
	for (size_t i = 0; i < f->nitems; i++)
		if (f->items[i].name_len > 0)
			cli_usage_error("-k '%.*s': not a field number or range (field names need --header)",
					(int)f->items[i].name_len, f->items[i].name);
}
