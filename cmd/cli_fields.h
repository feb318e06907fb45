/* SPDX-License-Identifier: MIT */
/*
 * cli_fields.h - field lists (-k 1,3, -k url) and --header, for the
 * programs that take key options.
 *
 * Not here: parsing the list (lib/fieldlist.c) or cutting keys out of
 * records (lib/keys.c); reading inputs (cli.c, which calls in here).
 */
#ifndef BFTOOLS_CLI_FIELDS_H
#define BFTOOLS_CLI_FIELDS_H

#include "keys.h"

/* After the options: field names in -k need --header (header nonzero). */
void cli_fields_check(const struct key_spec *spec, int header);

#endif
