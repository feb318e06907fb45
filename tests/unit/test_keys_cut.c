/* SPDX-License-Identifier: MIT */
/*
 * test_keys_cut.c - keys built in pieces (keyset_defer, keyset_cut,
 * keyset_compact in lib/io/keys.c), as bfuniq builds them on the
 * pipeline's workers, against keyset_build.
 *
 * Each spec is built both ways over one batch of records chosen to give
 * keys, records without a key, and (JSON) records that are not JSON; the
 * slots are cut in uneven ranges, last range first, as threads would
 * finish them in any order. The two keysets must agree key for key (bytes
 * and record), and bad record for bad record, with the same reason.
 */
#include <string.h>

#include "keys.h"
#include "unit.h"

#define L(s) ((struct line){ (s), sizeof(s) - 1 })
#define S(s) { (s), sizeof(s) - 1 }	/* the same, in a static initializer */

static int same_keys(const struct keyset *a, const struct keyset *b)
{
	if (a->count != b->count || a->nbad != b->nbad)
		return 0;
	for (size_t i = 0; i < a->count; i++)
		if (a->keys[i].len != b->keys[i].len || a->record[i] != b->record[i] ||
		    memcmp(a->keys[i].data, b->keys[i].data, a->keys[i].len) != 0)
			return 0;
	for (size_t i = 0; i < a->nbad; i++)
		if (a->bad[i] != b->bad[i])
			return 0;
	return a->nbad == 0 || strcmp(a->bad_why, b->bad_why) == 0;
}

/* Built in ranges [cuts[i], cuts[i + 1]), the last range cut first. */
static int deferred_matches_built(const struct key_spec *spec, const struct line *recs, size_t n,
				  const size_t *cuts, size_t ncuts)
{
	struct keyset built = { 0 }, cut = { 0 };
	int ok = keyset_deferrable(spec) && keyset_build(&built, spec, recs, n) == 0 &&
		 keyset_defer(&cut, spec, recs, n) == 0 && cut.count == n && cut.deferred;

	for (size_t i = ncuts - 1; ok && i > 0; i--)
		keyset_cut(&cut, cuts[i - 1], cuts[i]);
	if (ok)
		keyset_compact(&cut);
	ok = ok && !cut.deferred && same_keys(&built, &cut);
	keyset_free(&built);
	keyset_free(&cut);
	return ok;
}

static const struct line json_recs[] = {
	S("{\"url\":\"HTTP://A/\",\"n\":1}"), S("not json"), S("{\"n\":2}"), S(""),
	S("{\"url\":[1, {\"B\" : 2}],\"n\":3}"), S("{\"url\":"), S("{\"url\":\"\",\"n\":\"x\"}"),
	S("{\"url\":\"SAME\"}"), S("  "), S("[1,2]"), S("{\"url\":\"\\u0041bc\",\"n\":9}"),
};
#define NJSON (sizeof json_recs / sizeof *json_recs)

static void json_keys_cut_in_pieces_equal_built_ones(void)
{
	const size_t cuts[] = { 0, 1, 2, 5, 5, 10, NJSON };
	const char *paths[] = { ".url", ".url,.n", ".n,.url,.url" };
	const char *why;

	for (size_t p = 0; p < sizeof paths / sizeof *paths; p++)
		for (int fold = 0; fold <= 1; fold++) {
			struct key_spec spec = { .separator = -1, .fold_case = fold };

			spec.json = json_paths_parse(paths[p], &why);
			CHECK(spec.json != NULL);
			CHECK(deferred_matches_built(&spec, json_recs, NJSON, cuts, 7));
			/* one range, as a single thread cuts it */
			CHECK(deferred_matches_built(&spec, json_recs, NJSON,
						     (const size_t[]){ 0, NJSON }, 2));
			json_paths_free((struct json_paths *)spec.json);
		}
}

static void csv_and_field_list_keys_cut_in_pieces_equal_built_ones(void)
{
	const struct line recs[] = { L("a,\"B, c\",d"), L("x"), L(""), L("\"q\"\"Q\",,Z"),
				     L("1,2,3,4"), L("LONGER THAN EIGHT BYTES,y") };
	const size_t cuts[] = { 0, 3, 4, 6 };
	unsigned long single;
	const char *why;
	struct key_spec spec = { .separator = ',', .csv = 1 };

	for (unsigned long field = 0; field <= 3; field++) {
		spec.field = field;
		spec.fold_case = 0;
		CHECK(deferred_matches_built(&spec, recs, 6, cuts, 4));
		spec.fold_case = 1;
		CHECK(deferred_matches_built(&spec, recs, 6, cuts, 4));
	}
	spec = (struct key_spec){ .separator = ',', .fold_case = 1 };
	spec.fields = fieldlist_parse("3,1", &single, &why);
	CHECK(spec.fields != NULL);
	CHECK(deferred_matches_built(&spec, recs, 6, cuts, 4));
	fieldlist_free(spec.fields);
}

static void folded_whole_records_and_fields_cut_in_pieces_equal_built_ones(void)
{
	const struct line recs[] = { L("Mixed Case Line"), L(""), L("ABC"), L("  x  Y"),
				     L("\xc3\x89T\xc3\x89 Z") };
	const size_t cuts[] = { 0, 2, 2, 5 };
	struct key_spec spec = { .separator = -1, .fold_case = 1 };

	CHECK(deferred_matches_built(&spec, recs, 5, cuts, 4));
	spec.field = 2;
	CHECK(deferred_matches_built(&spec, recs, 5, cuts, 4));
}

/* Words give any number of keys a record; whole records and one field cost nothing to cut. */
static void only_costly_specs_without_words_are_deferred(void)
{
	struct key_spec plain = { .separator = -1 };
	struct key_spec field = { .field = 2, .separator = ',' };
	struct key_spec words = { .separator = -1, .words = 1, .fold_case = 1 };
	struct key_spec folded = { .separator = -1, .fold_case = 1 };
	struct key_spec csv = { .separator = ',', .csv = 1 };

	CHECK(!keyset_deferrable(&plain));
	CHECK(!keyset_deferrable(&field));
	CHECK(!keyset_deferrable(&words));
	CHECK(keyset_deferrable(&folded));
	CHECK(keyset_deferrable(&csv));
}

static void compacting_is_done_once_and_a_build_ends_a_deferral(void)
{
	struct key_spec spec = { .separator = -1, .fold_case = 1 };
	const struct line recs[] = { L("A"), L("B") };
	struct keyset ks = { 0 };

	/* an empty batch: nothing to cut, nothing left */
	CHECK(keyset_defer(&ks, &spec, recs, 0) == 0 && ks.count == 0);
	keyset_compact(&ks);
	CHECK(ks.count == 0 && ks.nbad == 0 && !ks.deferred);
	CHECK(keyset_defer(&ks, &spec, recs, 2) == 0);
	keyset_cut(&ks, 0, 2);
	keyset_compact(&ks);
	keyset_compact(&ks);	/* a second time changes nothing */
	CHECK(ks.count == 2 && ks.keys[1].len == 1 && ks.keys[1].data[0] == 'b' && ks.record[1] == 1);
	/* a deferral never cut, replaced by a build: the build's keys stand */
	CHECK(keyset_defer(&ks, &spec, recs, 2) == 0);
	CHECK(keyset_build(&ks, &spec, recs, 1) == 0 && !ks.deferred);
	keyset_compact(&ks);
	CHECK(ks.count == 1 && ks.keys[0].data[0] == 'a' && ks.record[0] == 0);
	keyset_free(&ks);
}

/* A batch cut at record n keeps what records[0..n) gave, as a build of them alone. */
static void a_truncated_keyset_equals_one_built_from_the_prefix(void)
{
	const char *why;
	struct key_spec spec = { .separator = -1 };

	spec.json = json_paths_parse(".url", &why);
	CHECK(spec.json != NULL);
	for (size_t n = 0; n <= NJSON; n++) {
		struct keyset whole = { 0 }, prefix = { 0 };

		CHECK(keyset_build(&whole, &spec, json_recs, NJSON) == 0);
		CHECK(keyset_build(&prefix, &spec, json_recs, n) == 0);
		keyset_truncate(&whole, n);
		CHECK(whole.count == prefix.count && whole.nbad == prefix.nbad);
		for (size_t j = 0; j < whole.count && j < prefix.count; j++)
			CHECK(whole.record[j] == prefix.record[j] &&
			      whole.keys[j].len == prefix.keys[j].len);
		for (size_t b = 0; b < whole.nbad && b < prefix.nbad; b++)
			CHECK(whole.bad[b] == prefix.bad[b]);
		keyset_free(&whole);
		keyset_free(&prefix);
	}
	json_paths_free((struct json_paths *)spec.json);
}

void suite_keys_cut(void)
{
	unit_run("keys cut: a keyset truncated at record n equals one built from records[0..n)",
		 a_truncated_keyset_equals_one_built_from_the_prefix);
	unit_run("keys cut: JSON keys cut in pieces equal built ones, bad records included",
		 json_keys_cut_in_pieces_equal_built_ones);
	unit_run("keys cut: CSV and field-list keys cut in pieces equal built ones",
		 csv_and_field_list_keys_cut_in_pieces_equal_built_ones);
	unit_run("keys cut: folded records and fields cut in pieces equal built ones",
		 folded_whole_records_and_fields_cut_in_pieces_equal_built_ones);
	unit_run("keys cut: only costly specs, never words, are cut in pieces",
		 only_costly_specs_without_words_are_deferred);
	unit_run("keys cut: compacting is done once, and a build ends a deferral",
		 compacting_is_done_once_and_a_build_ends_a_deferral);
}
