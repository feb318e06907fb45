/* SPDX-License-Identifier: MIT */
/*
 * cli_fields.c - the key group of options, field lists (-k 1,3, -k url)
 * and --header, for the programs that take key options (see cli_fields.h).
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
static int json_inputs;			/* --jsonl */
static int bad_line_given, bad_line_skip;	/* --bad-line, =skip */
static uint64_t bad_lines;		/* lines that were not JSON, skipped */
const char *cli_field_text;

void cli_key_options_init(struct cli_keys_given *kg)
{
	memset(kg, 0, sizeof *kg);
	kg->spec.separator = -1;
	kg->delim = '\n';
}

static void bad_line_option(const char *arg)
{
	bad_line_given = 1;
	if (strcmp(arg, "skip") == 0)
		bad_line_skip = 1;
	else if (strcmp(arg, "error") == 0)
		bad_line_skip = 0;
	else
		cli_usage_error("invalid --bad-line '%s': expected 'error' or 'skip'", arg);
}

int cli_key_option(int c, const char *arg, struct cli_keys_given *kg)
{
	switch (c) {
	case 'k': cli_field_option(&kg->spec, arg); break;
	case 't': cli_separator_option(&kg->spec, arg); break;
	case 'z': kg->delim = '\0'; break;
	case 'i': kg->spec.fold_case = 1; break;
	case 'w': kg->spec.words = 1; break;
	case CLI_OPT_HEADER: kg->header = 1; break;
	case CLI_OPT_CSV: kg->spec.csv = 1; break;
	case CLI_OPT_JSONL: json_inputs = 1; break;
	case CLI_OPT_BAD_LINE: bad_line_option(arg); break;
	case CLI_OPT_NO_DECOMPRESS: cli_decompress = 0; break;
	case CLI_OPT_SHARD: case CLI_OPT_SHARD_KEY: cli_shard_option(c, arg); break;
	case CLI_OPT_JSON_INPUT:
		cli_usage_error("--json is JSON output, and %s prints no report: JSON Lines input is --jsonl",
				cli_progname);
	default:
		return 0;
	}
	kg->given = 1;
	return 1;
}

void cli_key_options_finish(struct cli_keys_given *kg, void (*pass)(void *ctx, struct line header))
{
	cli_fields_check(&kg->spec, kg->header);
	if (kg->header)
		cli_header_inputs(&kg->spec, pass);
}

/*
 * --json was JSON Lines input in bfbuild, bfgrep, bfuniq and bfcount; it
 * is now the report as JSON, everywhere. Given with what only JSON Lines
 * input takes (a jq path in -k, --bad-line) and without --jsonl, it is
 * the old spelling: reading the lines as text would key them in silence.
 */
static void refuse_old_json(void)
{
	int path = cli_field_text != NULL && cli_field_text[0] == '.';

	if (cli_reports_json() && !json_inputs && (path || bad_line_given))
		cli_usage_error("--json is JSON output now (the report); JSON Lines input is --jsonl");
}

/* --jsonl: -k's text (or '.', the whole line) as paths. */
static void json_paths(struct key_spec *spec, int header)
{
	const char *text = cli_field_text ? cli_field_text : ".", *why;

	if (spec->csv || header)
		cli_usage_error("--jsonl cannot be used with --csv or --header");
	fieldlist_free(spec->fields);
	spec->fields = NULL;
	spec->field = 0;
	errno = 0;	/* ENOMEM after: trouble, not a usage error */
	spec->json = json_paths_parse(text, &why);
	if (spec->json == NULL && errno == ENOMEM)
		cli_fatal("%s", strerror(ENOMEM));
	if (spec->json == NULL)
		cli_usage_error("invalid path '%s': %s", text, why);
}

size_t cli_bad_lines_cut(struct keyset *ks, size_t n, char *why, size_t why_len)
{
	size_t cut;

	if (ks->nbad == 0 || bad_line_skip)
		return n;
	cut = ks->bad[0];
	snprintf(why, why_len, "not JSON: %s", ks->bad_why);
	keyset_truncate(ks, cut);
	return cut;
}

int cli_bad_lines_cut_on(void)
{
	return json_inputs && !bad_line_skip;
}

/* Any thread: an order-free run (bfcount in ranges) consumes on each. */
uint64_t cli_bad_lines(const struct keyset *ks)
{
	if (ks->nbad > 0)
		__atomic_fetch_add(&bad_lines, (uint64_t)ks->nbad, __ATOMIC_RELAXED);
	return ks->nbad;
}

void cli_bad_lines_report(void)
{
	if (bad_lines > 0)
		cli_warn("lines not JSON, passed on without a key (--bad-line=skip): %llu",
			 (unsigned long long)bad_lines);
}

void cli_fields_check(struct key_spec *spec, int header)
{
	const struct fieldlist *f;

	refuse_old_json();
	if (bad_line_given && !json_inputs)
		cli_usage_error("--bad-line is about JSON lines: it needs --jsonl");
	if (json_inputs)
		json_paths(spec, header);
	cli_shard_check(spec);
	f = spec->fields;

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

void cli_fields_release(struct key_spec *spec)
{
	fieldlist_free(spec->fields);
	json_paths_free((struct json_paths *)spec->json);
	spec->fields = NULL;
	spec->json = NULL;
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
	return header_spec != NULL || csv_separator >= 0 || json_inputs;
}

int cli_fields_one_stream(void)
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

/*
 * The first input's header, kept (by the reading thread, which takes the
 * inputs' headers in order): every later input's must be the same, as
 * tsv-utils and Miller have it, so that the output is one table with one
 * header line.
 */
static char *first_header;
static size_t first_header_len;
static int header_passed;	/* the calling thread's: the one header went out */

/* 0 when header is the first input's (or is the first, then kept); else -1 with why. */
static int same_header(struct line header, char *why, size_t why_len)
{
	if (first_header == NULL) {
		if ((first_header = malloc(header.len + 1)) == NULL) {
			snprintf(why, why_len, "%s", strerror(ENOMEM));
			return -1;
		}
		memcpy(first_header, header.data, header.len);
		first_header_len = header.len;
		return 0;
	}
	if (header.len == first_header_len && memcmp(header.data, first_header, header.len) == 0)
		return 0;
	snprintf(why, why_len, "its header differs from the first input's (--header: one table, one header)");
	return -1;
}

int cli_header_take(struct lines_batch *b, struct line *header, char *why, size_t why_len)
{
	*header = b->records[0];
	/* once per input: moving the batch's spans down costs little */
	memmove(b->records, b->records + 1, (b->n - 1) * sizeof *b->records);
	b->n--;
	if (same_header(*header, why, why_len) < 0)
		return -1;
	if (header_spec->fields == NULL || !header_spec->fields->named)
		return 0;
	return resolve_names(header_spec, *header, why, why_len);
}

void cli_header_pass(void *ctx, struct line header)
{
	/* one header per output: the first input's; the others were checked equal to it */
	if (header_pass && !header_passed)
		header_pass(ctx, header);
	header_passed = 1;
}
