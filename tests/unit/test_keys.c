/* SPDX-License-Identifier: MIT */
/*
 * test_keys.c - fields, words and case folding (lib/io/keys.c).
 *
 * Records are string literals; expected keys are compared byte for byte,
 * together with the index of the record each key came from.
 */
#include <stdint.h>
#include <string.h>

#include "keys.h"
#include "unit.h"

#define L(s) ((struct line){ (s), sizeof(s) - 1 })

static int same(struct line got, const char *want)
{
	size_t len = strlen(want);

	return got.len == len && (len == 0 || memcmp(got.data, want, len) == 0);
}

/* keys_field with a spec of (field, separator); NULL want means "no field". */
static int field_is(struct line rec, unsigned long field, int sep, const char *want)
{
	struct key_spec spec = { .field = field, .separator = sep };
	struct line key = { "untouched", 9 };
	int found = keys_field(&spec, rec, &key);

	if (!want)
		return found == 0;
	return found == 1 && same(key, want);
}

/* The keys of ks are want[0..n) and came from records from[0..n). */
static int keys_are(const struct keyset *ks, const char *const *want,
		    const size_t *from, size_t n)
{
	if (ks->count != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!same(ks->keys[i], want[i]) || ks->record[i] != from[i])
			return 0;
	return 1;
}

static void field_zero_is_the_whole_record(void)
{
	CHECK(field_is(L("  a b  "), 0, -1, "  a b  "));
	CHECK(field_is(L("a,b"), 0, ',', "a,b"));
	CHECK(field_is(L(""), 0, -1, ""));
}

static void blank_fields_skip_leading_and_repeated_blanks(void)
{
	struct line rec = L("  a  b");

	CHECK(field_is(rec, 1, -1, "a"));
	CHECK(field_is(rec, 2, -1, "b"));
	CHECK(field_is(rec, 3, -1, NULL));
	CHECK(field_is(L("x\t \ty\t"), 2, -1, "y"));
	CHECK(field_is(L("x\t \ty\t"), 3, -1, NULL));
	CHECK(field_is(L(""), 1, -1, NULL));
	CHECK(field_is(L(" \t "), 1, -1, NULL));
}

static void blank_fields_split_only_at_space_and_tab(void)
{
	CHECK(field_is(L("a,b\rc d"), 1, -1, "a,b\rc"));
	CHECK(field_is(L("a\vb c"), 2, -1, "c"));
}

static void separator_splits_at_every_occurrence(void)
{
	struct line rec = L("a,,b");

	CHECK(field_is(rec, 1, ',', "a"));
	CHECK(field_is(rec, 2, ',', ""));
	CHECK(field_is(rec, 3, ',', "b"));
	CHECK(field_is(rec, 4, ',', NULL));
}

static void field_after_final_separator_exists_and_is_empty(void)
{
	CHECK(field_is(L("a,"), 2, ',', ""));
	CHECK(field_is(L("a,"), 3, ',', NULL));
	CHECK(field_is(L(""), 1, ',', ""));
	CHECK(field_is(L(""), 2, ',', NULL));
	CHECK(field_is(L(",x"), 1, ',', ""));
}

static void separator_may_be_any_byte(void)
{
	CHECK(field_is(L("a\tb c\tz"), 2, '\t', "b c"));
	CHECK(field_is(L("p\xffq\xffr"), 3, 0xff, "r"));
	CHECK(field_is(L("  x"), 1, ' ', ""));
}

static void nul_bytes_in_fields_are_data(void)
{
	struct key_spec spec = { .field = 2, .separator = ',' };
	struct line key;

	CHECK(keys_field(&spec, L("a\0,b\0c,d"), &key) == 1);
	CHECK(key.len == 3 && memcmp(key.data, "b\0c", 3) == 0);
}

static void whole_records_are_keys_without_copying(void)
{
	struct line recs[] = { L("one"), L(""), L("Three") };
	struct key_spec spec = { 0 };
	struct keyset ks = { 0 };	/* zero-initialised is a valid keyset */

	CHECK(keyset_build(&ks, &spec, recs, 3) == 0);
	CHECK(ks.count == 3);
	for (size_t i = 0; i < 3; i++)
		CHECK(ks.keys[i].data == recs[i].data && ks.keys[i].len == recs[i].len &&
		      ks.record[i] == i);
	keyset_free(&ks);
}

static void records_without_the_field_give_no_key(void)
{
	static const char *const want[] = { "b", "y" };
	static const size_t from[] = { 0, 2 };
	struct line recs[] = { L("a b"), L("lonely"), L("x y z"), L("") };
	struct key_spec spec = { .field = 2, .separator = -1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 4) == 0);
	CHECK(keys_are(&ks, want, from, 2));
	keyset_free(&ks);
}

static void words_split_at_blanks_and_address_punctuation(void)
{
	static const char *const want[] = { "from", "spammer@example.com" };
	static const size_t from[] = { 0, 0 };
	struct line recs[] = { L("from=<spammer@example.com>,") };
	struct key_spec spec = { .words = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 1) == 0);
	CHECK(keys_are(&ks, want, from, 2));
	keyset_free(&ks);
}

static void every_listed_byte_breaks_words_and_others_do_not(void)
{
	static const char *const want[] = { "a", "b", "c", "d", "e", "f", "g", "h",
					    "i", "j", "k", "l", "m", "n", "o", "p",
					    "q", "r", "s", "t", "u",
					    "x@y.z-w_v/u!?#$%&*+|~^`\\\xc3\xa9" };
	size_t from[sizeof want / sizeof want[0]] = { 0 };
	struct line recs[] = {
		L("a b\tc\rd\ne\vf\fg<h>i(j)k[l]m{n}o,p;q:r\"s't=u "
		  "x@y.z-w_v/u!?#$%&*+|~^`\\\xc3\xa9"),
	};
	struct key_spec spec = { .words = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 1) == 0);
	CHECK(keys_are(&ks, want, from, sizeof want / sizeof want[0]));
	keyset_free(&ks);
}

static void record_of_only_separators_gives_no_words(void)
{
	static const char *const want[] = { "a", "b" };
	static const size_t from[] = { 0, 3 };
	struct line recs[] = { L("a"), L("<> ,;\t\"'"), L(""), L("(b)") };
	struct key_spec spec = { .words = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 4) == 0);
	CHECK(keys_are(&ks, want, from, 2));
	keyset_free(&ks);
}

static void folding_maps_ascii_upper_to_lower_only(void)
{
	static const char *const want[] = { "hello, world 09@[`{", "\xc3\x89t\xc3\xa9 \xff\xc0" };
	static const size_t from[] = { 0, 1 };
	struct line recs[] = { L("HeLLo, World 09@[`{"), L("\xc3\x89T\xc3\xa9 \xff\xc0") };
	struct key_spec spec = { .fold_case = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 2) == 0);
	CHECK(keys_are(&ks, want, from, 2));
	CHECK(same(recs[0], "HeLLo, World 09@[`{"));	/* records are never modified */
	CHECK(same(recs[1], "\xc3\x89T\xc3\xa9 \xff\xc0"));
	keyset_free(&ks);
}

/* All 256 byte values, shifted by 0..7 so each meets every lane of a word. */
static void folding_is_exact_for_every_byte_value_and_offset(void)
{
	char text[8 + 256];
	struct line recs[8];
	struct key_spec spec = { .fold_case = 1 };
	struct keyset ks = { 0 };

	for (size_t i = 0; i < sizeof text; i++)
		text[i] = (char)(i % 256);
	for (size_t s = 0; s < 8; s++)
		recs[s] = (struct line){ text + s, 256 };
	CHECK(keyset_build(&ks, &spec, recs, 8) == 0 && ks.count == 8);
	for (size_t s = 0; s < 8; s++) {
		for (size_t i = 0; i < 256; i++) {
			unsigned char c = (unsigned char)text[s + i];
			unsigned char want = c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;

			CHECKF((unsigned char)ks.keys[s].data[i] == want,
			       "offset %zu byte 0x%02x", s, (unsigned)c);
		}
	}
	keyset_free(&ks);
}

static void folded_keys_live_in_the_keyset(void)
{
	struct line recs[] = { L("AB"), L("cd"), L(""), L("E") };
	struct key_spec spec = { .fold_case = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 4) == 0);
	CHECK(ks.count == 4 && ks.folded_cap >= 5);
	for (size_t i = 0; i < ks.count; i++) {
		if (ks.keys[i].len == 0)
			continue;
		CHECK(ks.keys[i].data >= ks.folded &&
		      ks.keys[i].data + ks.keys[i].len <= ks.folded + ks.folded_cap);
	}
	keyset_free(&ks);
}

static void words_field_and_folding_combine(void)
{
	static const char *const want[] = { "from", "a@b.com", "to", "c.d@e" };
	static const size_t from[] = { 0, 0, 2, 2 };
	struct line recs[] = {
		L("Jan 1\tFROM=<A@B.Com>\tsize=1"),
		L("no-tabs-here"),
		L("x\t(TO) \"C.d@E\"\ty"),
	};
	struct key_spec spec = { .field = 2, .separator = '\t', .words = 1, .fold_case = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 3) == 0);
	CHECK(keys_are(&ks, want, from, 4));
	CHECK(same(recs[0], "Jan 1\tFROM=<A@B.Com>\tsize=1"));
	keyset_free(&ks);
}

static void keyset_is_reused_and_replaced_on_each_build(void)
{
	static const char *const want[] = { "q" };
	static const size_t from[] = { 0 };
	struct line many[300], one[] = { L("Q") };
	struct key_spec spec = { .fold_case = 1 };
	struct keyset ks = { 0 };
	struct line *keys;
	char *folded;

	for (size_t i = 0; i < 300; i++)
		many[i] = L("Some Record");
	CHECK(keyset_build(&ks, &spec, many, 300) == 0);
	CHECK(ks.count == 300 && ks.cap >= 300 && ks.folded_cap >= 300 * 11);
	keys = ks.keys;
	folded = ks.folded;
	CHECK(keyset_build(&ks, &spec, one, 1) == 0);
	CHECK(keys_are(&ks, want, from, 1));
	CHECK(ks.keys == keys && ks.folded == folded);	/* no reallocation */
	CHECK(keyset_build(&ks, &spec, one, 0) == 0 && ks.count == 0);
	keyset_free(&ks);
}

static void words_mode_grows_past_the_record_count(void)
{
	struct line recs[] = { { NULL, 0 } };
	static char text[4000];
	struct key_spec spec = { .words = 1 };
	struct keyset ks = { 0 };

	for (size_t i = 0; i < sizeof text; i += 2) {
		text[i] = (char)('a' + i % 26);
		text[i + 1] = ' ';
	}
	recs[0] = (struct line){ text, sizeof text };
	CHECK(keyset_build(&ks, &spec, recs, 1) == 0);
	CHECK(ks.count == 2000 && ks.cap >= 2000);
	for (size_t i = 0; i < ks.count; i++)
		CHECK(ks.keys[i].data == text + 2 * i && ks.keys[i].len == 1 && ks.record[i] == 0);
	keyset_free(&ks);
}

static void keyset_free_leaves_a_zeroed_reusable_struct(void)
{
	struct line recs[] = { L("A b") };
	struct key_spec spec = { .words = 1, .fold_case = 1 };
	struct keyset ks = { 0 };

	CHECK(keyset_build(&ks, &spec, recs, 1) == 0 && ks.count == 2);
	keyset_free(&ks);
	CHECK(ks.keys == NULL && ks.record == NULL && ks.folded == NULL);
	CHECK(ks.count == 0 && ks.cap == 0 && ks.folded_cap == 0);
	keyset_free(&ks);	/* twice is harmless */
	CHECK(keyset_build(&ks, &spec, recs, 1) == 0 && ks.count == 2);
	keyset_free(&ks);
}

/*
 * -w with --shard: only the words of the shard's partition are keys. With
 * the key 00..0f and 16 partitions, "a" and "hello" are partition 8's and
 * "b" partition 15's (tests/partition_ref.py; bf(5)'s example).
 */
static void words_of_other_partitions_are_no_keys(void)
{
	static const unsigned char key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const char *const want8[] = { "a", "hello" };
	static const size_t from8[] = { 0, 1 };
	static const char *const want15[] = { "b" };
	static const size_t from15[] = { 0 };
	struct line recs[] = { L("a b"), L("hello") };
	struct partition p;
	struct key_spec spec = { .words = 1, .shard = &p, .shard_index = 8 };
	struct keyset ks = { 0 };

	CHECK(partition_init(&p, key, 16) == 0);
	CHECK(keyset_build(&ks, &spec, recs, 2) == 0);
	CHECK(keys_are(&ks, want8, from8, 2));
	spec.shard_index = 15;
	CHECK(keyset_build(&ks, &spec, recs, 2) == 0);
	CHECK(keys_are(&ks, want15, from15, 1));
	spec.shard_index = 3;
	CHECK(keyset_build(&ks, &spec, recs, 2) == 0);
	CHECK(ks.count == 0);
	keyset_free(&ks);
}

void suite_keys(void)
{
	unit_run("keys: -w with a shard keeps only the words of its partition",
		 words_of_other_partitions_are_no_keys);
	unit_run("keys: field 0 is the whole record", field_zero_is_the_whole_record);
	unit_run("keys: blank fields skip leading and repeated blanks; past the last is missing",
		 blank_fields_skip_leading_and_repeated_blanks);
	unit_run("keys: blank fields split only at space and tab",
		 blank_fields_split_only_at_space_and_tab);
	unit_run("keys: a separator byte splits at every occurrence (\"a,,b\" is a, empty, b)",
		 separator_splits_at_every_occurrence);
	unit_run("keys: the field after a final separator exists and is empty",
		 field_after_final_separator_exists_and_is_empty);
	unit_run("keys: the separator may be any byte, tab, space or >= 0x80",
		 separator_may_be_any_byte);
	unit_run("keys: NUL bytes inside fields are data", nul_bytes_in_fields_are_data);
	unit_run("keys: whole records are keys without copying", whole_records_are_keys_without_copying);
	unit_run("keys: records without the field give no key", records_without_the_field_give_no_key);
	unit_run("keys: words split at blanks and address punctuation (from=<a@b>,)",
		 words_split_at_blanks_and_address_punctuation);
	unit_run("keys: every listed byte breaks words; @ . - _ / and high bytes do not",
		 every_listed_byte_breaks_words_and_others_do_not);
	unit_run("keys: a record of only separators gives no words",
		 record_of_only_separators_gives_no_words);
	unit_run("keys: folding maps ASCII A-Z only; bytes >= 0x80 and records untouched",
		 folding_maps_ascii_upper_to_lower_only);
	unit_run("keys: folding is exact for every byte value at every offset",
		 folding_is_exact_for_every_byte_value_and_offset);
	unit_run("keys: folded keys point into the keyset's own storage",
		 folded_keys_live_in_the_keyset);
	unit_run("keys: words, field and folding combine", words_field_and_folding_combine);
	unit_run("keys: a keyset is replaced on each build and reuses its memory",
		 keyset_is_reused_and_replaced_on_each_build);
	unit_run("keys: words mode grows past one key per record",
		 words_mode_grows_past_the_record_count);
	unit_run("keys: keyset_free leaves a zeroed struct that can be built again",
		 keyset_free_leaves_a_zeroed_reusable_struct);
}
