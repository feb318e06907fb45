/* SPDX-License-Identifier: MIT */
/*
 * test_fieldlist.c - field lists as -k takes them (lib/fieldlist.c) and the
 * keys they cut (lib/keys.c).
 *
 * Lists are parsed from literals; keys are built with keyset_build and
 * compared byte for byte, with the record each came from.
 */
#include <stdint.h>
#include <string.h>

#include "fieldlist.h"
#include "keys.h"
#include "unit.h"

#define L(s) ((struct line){ (s), sizeof(s) - 1 })

/* The ranges in use are exactly want[0..n) (pairs first, last). */
static int ranges_are(const struct fieldlist *f, const uint32_t *want, size_t n)
{
	if (f == NULL || f->nranges != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (f->ranges[i].first != want[2 * i] || f->ranges[i].last != want[2 * i + 1])
			return 0;
	return 1;
}

/* The list parsed from text has the ranges want (n pairs) and needs field need. */
static int parses_to(const char *text, const uint32_t *want, size_t n, uint32_t need)
{
	unsigned long single = 0;
	const char *why = "untouched";
	struct fieldlist *f = fieldlist_parse(text, &single, &why);
	int ok = why == NULL && ranges_are(f, want, n) && f->need == need && !f->named;

	fieldlist_free(f);
	return ok;
}

static int refused(const char *text, const char *why_want)
{
	unsigned long single = 0;
	const char *why = NULL;
	struct fieldlist *f = fieldlist_parse(text, &single, &why);

	fieldlist_free(f);
	return f == NULL && why != NULL && strcmp(why, why_want) == 0;
}

static void lists_parse_as_cut_takes_them(void)
{
	CHECK(parses_to("1,3", (const uint32_t[]){ 1, 1, 3, 3 }, 2, 3));
	CHECK(parses_to("2-4", (const uint32_t[]){ 2, 4 }, 1, 4));
	CHECK(parses_to("3-", (const uint32_t[]){ 3, FIELDLIST_END }, 1, 3));
	CHECK(parses_to("-2", (const uint32_t[]){ 1, 2 }, 1, 2));
	CHECK(parses_to("3,1", (const uint32_t[]){ 1, 1, 3, 3 }, 2, 3));
}

static void overlapping_and_adjacent_items_merge(void)
{
	CHECK(parses_to("1,2,3", (const uint32_t[]){ 1, 3 }, 1, 3));
	CHECK(parses_to("2-5,4-7,1", (const uint32_t[]){ 1, 7 }, 1, 7));
	CHECK(parses_to("5-,2,7", (const uint32_t[]){ 2, 2, 5, FIELDLIST_END }, 2, 7));
	CHECK(parses_to("1,1", (const uint32_t[]){ 1, 1 }, 1, 1));
}

static void a_lone_number_is_not_a_list(void)
{
	unsigned long single = 0;
	const char *why = "untouched";

	CHECK(fieldlist_parse("7", &single, &why) == NULL);
	CHECK(why == NULL && single == 7);
}

static void bad_lists_are_refused_with_a_reason(void)
{
	CHECK(refused("1,,3", "empty item in the field list"));
	CHECK(refused("1,", "empty item in the field list"));
	CHECK(refused("0,2", "field numbers count from 1 to 4294967294"));
	CHECK(refused("1,4294967295", "field numbers count from 1 to 4294967294"));
	CHECK(refused("0-3", "field numbers count from 1 to 4294967294"));
	CHECK(refused("4-2", "a range decreases"));
}

static void names_resolve_against_a_header(void)
{
	unsigned long single = 0;
	const char *why = NULL;
	struct fieldlist *f = fieldlist_parse("path,host,2", &single, &why);
	const struct line hdr[] = { L("time"), L("host"), L("path"), L("host") };
	const struct line other[] = { L("path"), L("time") };
	size_t missing = 99;

	CHECK(f != NULL && f->named && f->nranges == 0);
	CHECK(fieldlist_resolve(f, hdr, 4, &missing) == 0);
	/* host is the first field so named (2), path is 3, and 2 again merges */
	CHECK(ranges_are(f, (const uint32_t[]){ 2, 3 }, 1) && f->need == 3);
	CHECK(fieldlist_resolve(f, other, 2, &missing) == -1 && missing == 1);
	CHECK(f->nranges == 0);
	fieldlist_free(f);
}

/* The keys of records under spec are want[0..n), from records from[0..n). */
static int keys_are(const struct key_spec *spec, const struct line *records, size_t nrec,
		    const char *const *want, const size_t *from, size_t n)
{
	struct keyset ks = { 0 };
	int ok = keyset_build(&ks, spec, records, nrec) == 0 && ks.count == n;

	for (size_t i = 0; ok && i < n; i++)
		ok = ks.keys[i].len == strlen(want[i]) && ks.record[i] == from[i] &&
		     memcmp(ks.keys[i].data, want[i], ks.keys[i].len) == 0;
	keyset_free(&ks);
	return ok;
}

static struct fieldlist *list(const char *text)
{
	unsigned long single;
	const char *why;

	return fieldlist_parse(text, &single, &why);
}

static void list_keys_join_fields_with_one_separator_byte(void)
{
	struct key_spec spec = { .separator = ',', .fields = list("1,3") };
	const struct line recs[] = { L("a,b,c"), L("a,,c,d"), L("a,b"), L(",,") };

	CHECK(keys_are(&spec, recs, 4, (const char *[]){ "a,c", "a,c", "," },
		       (const size_t[]){ 0, 1, 3 }, 3));
	fieldlist_free(spec.fields);
}

static void blank_split_list_keys_join_with_one_space(void)
{
	struct key_spec spec = { .separator = -1, .fields = list("2-") };
	const struct line recs[] = { L("  a \t b   c  "), L("a"), L("x y") };

	CHECK(keys_are(&spec, recs, 3, (const char *[]){ "b c", "y" },
		       (const size_t[]){ 0, 2 }, 2));
	fieldlist_free(spec.fields);
}

static void a_record_needs_every_field_the_list_names(void)
{
	struct key_spec spec = { .separator = '\t', .fields = list("2-4") };
	const struct line recs[] = { L("a\tb\tc"), L("a\tb\tc\td"), L("a\tb\tc\td\te") };

	CHECK(keys_are(&spec, recs, 3, (const char *[]){ "b\tc\td", "b\tc\td" },
		       (const size_t[]){ 1, 2 }, 2));
	fieldlist_free(spec.fields);
}

static void list_keys_fold_and_split_into_words(void)
{
	struct key_spec spec = { .separator = ',', .fields = list("1,3"), .fold_case = 1 };
	const struct line recs[] = { L("Ab CD,x,EfGhIjKlMn") };

	CHECK(keys_are(&spec, recs, 1, (const char *[]){ "ab cd,efghijklmn" },
		       (const size_t[]){ 0 }, 1));
	spec.words = 1;
	CHECK(keys_are(&spec, recs, 1, (const char *[]){ "ab", "cd", "efghijklmn" },
		       (const size_t[]){ 0, 0, 0 }, 3));
	fieldlist_free(spec.fields);
}

static void keys_split_counts_every_field(void)
{
	struct key_spec spec = { .separator = ',' };
	struct line f[2];

	CHECK(keys_split(&spec, L("id,name,,x"), f, 2, NULL) == 4);
	CHECK(f[0].len == 2 && memcmp(f[0].data, "id", 2) == 0);
	CHECK(f[1].len == 4 && memcmp(f[1].data, "name", 4) == 0);
	spec.separator = -1;
	CHECK(keys_split(&spec, L("  a  b "), f, 2, NULL) == 2);
	CHECK(keys_split(&spec, L("   "), f, 2, NULL) == 0);
}

void suite_fieldlist(void)
{
	unit_run("fieldlist: 1,3 and 2-4 and 3- and -2 parse as cut -f takes them",
		 lists_parse_as_cut_takes_them);
	unit_run("fieldlist: overlapping and adjacent items merge into one range",
		 overlapping_and_adjacent_items_merge);
	unit_run("fieldlist: a lone number is not a list", a_lone_number_is_not_a_list);
	unit_run("fieldlist: empty items, 0, 2^32-1 and decreasing ranges are refused",
		 bad_lists_are_refused_with_a_reason);
	unit_run("fieldlist: names resolve to the first header field so named, or fail",
		 names_resolve_against_a_header);
	unit_run("fieldlist: list keys are the fields joined by one separator byte",
		 list_keys_join_fields_with_one_separator_byte);
	unit_run("fieldlist: blank-split list keys are joined by one space",
		 blank_split_list_keys_join_with_one_space);
	unit_run("fieldlist: a record has a key only with every field the list needs",
		 a_record_needs_every_field_the_list_names);
	unit_run("fieldlist: list keys fold case and split into words",
		 list_keys_fold_and_split_into_words);
	unit_run("fieldlist: keys_split counts every field and stores up to max",
		 keys_split_counts_every_field);
}
