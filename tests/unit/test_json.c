/* SPDX-License-Identifier: MIT */
/*
 * test_json.c - NDJSON keys: paths, the validating parser and key text
 * (lib/json.c), and JSON keysets (lib/keys.c).
 *
 * The parser cases follow JSONTestSuite's naming: y_ documents must parse,
 * n_ documents must be refused. They are written here, not copied; each
 * names the rule it exercises.
 */
#include <string.h>

#include "json.h"
#include "keys.h"
#include "unit.h"

/* Whether text parses (as a whole line) with the identity path. */
static int parses(const char *text)
{
	const char *why = NULL;
	struct json_paths *ps = json_paths_parse(".", &why);
	struct line v[1];
	int rc = ps ? json_find((struct line){ text, strlen(text) }, ps, v, &why) : -2;

	json_paths_free(ps);
	return rc;
}

static void y_documents_parse(void)
{
	static const char *const y[] = {
		"{}", "[]", "0", "-0", "-0.5e+3", "1E2", "1e-7", "123456789012345678901234567890",
		"true", "false", "null", "\"\"", " [ 1 , 2 ] ", "\t{\"a\" :\r\n1}",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\\ud83d\\ude00\"", "\"\\udead\"",
		"{\"a\":[1,{\"b\":null}],\"c\":true}", "[[[[]]]]", "{\"\":0}", "[\"\x7f\xff\"]",
		"{\"a\":1,\"a\":2}",
	};

	for (size_t i = 0; i < sizeof y / sizeof y[0]; i++)
		CHECKF(parses(y[i]) == 1, "y_ case %zu refused: %s", i, y[i]);
}

static void n_documents_are_refused(void)
{
	static const char *const n[] = {
		"{", "[", "[1,]", "{\"a\":1,}", "[01]", "[1.]", "[.5]", "[-]", "[+1]", "[1e]",
		"[1e+]", "[NaN]", "[Infinity]", "\"abc", "\"\\x\"", "\"\\u12G4\"", "\"\\u12\"",
		"tru", "nul", "falsey", "[1 2]", "{\"a\" 1}", "{a:1}", "{\"a\"::1}", "[1]]",
		"{\"a\":1}x", "'a'", "[\"\t\"]", "[\"\n\"]", "[1,,2]", "[,1]", "{,}", "{\"a\"}",
		"{1:2}", "]", "}", ":", ",", "\"\\", "-", "--1", "0x10", ".", "[\"a\"\"b\"]",
	};

	for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
		CHECKF(parses(n[i]) == -1, "n_ case %zu accepted: %s", i, n[i]);
}

/*
 * The string scan looks at 16, then 8, then 1 byte at a time: each kind of
 * byte, at every offset from the string's start past two 16-byte blocks,
 * in strings that end at every distance from the end of the line. A stop
 * byte must be seen wherever it falls, and plain bytes (0x20, 0x7f, 0x80,
 * 0xff, bytes one off the stop bytes) never stop it: the value found is
 * the whole string, quotes included.
 */
static int string_scans(size_t at, unsigned char byte, size_t tail, int *found_len)
{
	char text[80];
	size_t len = 0;
	const char *why = NULL;
	struct json_paths *ps = json_paths_parse(".", &why);
	struct line v[1] = { { NULL, 0 } };
	int rc;

	text[len++] = '"';
	memset(text + len, 'a', 40);
	text[len + at] = (char)byte;
	if (byte == '\\')
		text[len + at + 1] = 'n';	/* a valid escape */
	len += 40;
	text[len++] = '"';
	memset(text + len, ' ', tail);
	len += tail;
	rc = ps ? json_find((struct line){ text, len }, ps, v, &why) : -2;
	*found_len = rc == 1 ? (int)v[0].len : -1;
	json_paths_free(ps);
	return rc;
}

static void string_scan_finds_stop_bytes_at_every_offset(void)
{
	static const unsigned char plain[] = { ' ', 0x7f, 0x80, 0xff, '"' + 1, '\\' - 1, '!', '#' };
	static const unsigned char control[] = { 0x00, 0x01, 0x0a, 0x1f };
	static const size_t tails[] = { 0, 1, 7, 9, 17 };
	int len;

	for (size_t at = 0; at < 39; at++)
		for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
			size_t tail = tails[t];

			for (size_t i = 0; i < sizeof plain; i++)
				CHECKF(string_scans(at, plain[i], tail, &len) == 1 && len == 42,
				       "byte 0x%02x at %zu refused or cut", plain[i], at);
			for (size_t i = 0; i < sizeof control; i++)
				CHECKF(string_scans(at, control[i], tail, &len) == -1,
				       "control byte 0x%02x at %zu accepted", control[i], at);
			CHECKF(string_scans(at, '\\', tail, &len) == 1 && len == 42,
			       "an escape at %zu refused or cut", at);
			/* a quote inside ends the string early: more after the value */
			CHECKF(string_scans(at, '"', tail, &len) == -1, "a quote at %zu missed", at);
		}
}

static void nesting_is_bounded_not_a_crash(void)
{
	static char deep[2 * (JSON_DEPTH_MAX + 10) + 1];

	memset(deep, '[', JSON_DEPTH_MAX + 10);
	memset(deep + JSON_DEPTH_MAX + 10, ']', JSON_DEPTH_MAX + 10);
	CHECK(parses(deep) == -1);
	memset(deep, 0, sizeof deep);
	memset(deep, '[', JSON_DEPTH_MAX);
	memset(deep + JSON_DEPTH_MAX, ']', JSON_DEPTH_MAX);
	CHECK(parses(deep) == 1);
}

static void blank_lines_hold_no_value(void)
{
	CHECK(parses("") == 0);
	CHECK(parses(" \t\r") == 0);
}

/* The key text of path in doc is want; NULL want: no value. */
static int finds(const char *doc, const char *path, const char *want)
{
	const char *why = NULL;
	struct json_paths *ps = json_paths_parse(path, &why);
	struct line v[JSON_PATHS_MAX];
	char out[JSON_KEY_ROOM(256)];
	int ok = ps != NULL && ps->n == 1 &&
		 json_find((struct line){ doc, strlen(doc) }, ps, v, &why) == 1;

	if (ok && want == NULL)
		ok = v[0].data == NULL;
	else if (ok)
		ok = v[0].data != NULL && v[0].len < 256 &&
		     json_key_text(v[0], out) == strlen(want) && memcmp(out, want, strlen(want)) == 0;
	json_paths_free(ps);
	return ok;
}

static void paths_find_values_as_jq_does(void)
{
	const char *doc = "{\"user\":{\"id\":42,\"name\":\"Al\"},\"tags\":[\"x\",\"y\"],"
			  "\"odd key\":1,\"a.b\":2,\"q\\u0061\":3,\"n\":null}";

	CHECK(finds(doc, ".user.id", "42"));
	CHECK(finds(doc, ".user.name", "Al"));
	CHECK(finds(doc, ".tags[1]", "y"));
	CHECK(finds(doc, ".tags.[0]", "x"));
	CHECK(finds(doc, ".[\"odd key\"]", "1"));
	CHECK(finds(doc, ".\"a.b\"", "2"));
	CHECK(finds(doc, ".qa", "3"));	/* member names compare unescaped */
	CHECK(finds(doc, ".n", "null"));
	CHECK(finds(doc, ".user", "{\"id\":42,\"name\":\"Al\"}"));
}

static void missing_values_are_not_found(void)
{
	const char *doc = "{\"a\":{\"b\":1},\"t\":[1],\"s\":\"x\"}";

	CHECK(finds(doc, ".c", NULL));
	CHECK(finds(doc, ".a.c", NULL));
	CHECK(finds(doc, ".t[1]", NULL));
	CHECK(finds(doc, ".s.x", NULL));	/* into a scalar: jq errs, we find nothing */
	CHECK(finds(doc, ".a[0]", NULL));
	CHECK(finds("[{\"a\":1}]", ".a", NULL));
}

static void a_repeated_member_is_found_at_its_last_place(void)
{
	CHECK(finds("{\"a\":1,\"b\":0,\"a\":2}", ".a", "2"));
}

/*
 * Numbers key by value as Debian's jq 1.6 -r prints them (checked against
 * it in tests/formats.bats): plain from 0.0001 up to 16 digits past the
 * significant ones, else d.ddde+XX; every digit kept where jq rounds.
 */
static void numbers_key_by_value_as_jq_prints_them(void)
{
	static const char *const cases[][2] = {
		{ "1", "1" }, { "1.0", "1" }, { "1e0", "1" }, { "10e-1", "1" }, { "1.50", "1.5" },
		{ "-0e+00", "-0" }, { "0", "0" }, { "0.000", "0" }, { "100", "100" },
		{ "1e5", "100000" }, { "1e15", "1000000000000000" }, { "1e16", "1e+16" },
		{ "1.5e16", "15000000000000000" }, { "1.5e17", "1.5e+17" }, { "0.0001", "0.0001" },
		{ "0.00001", "1e-05" }, { "1.23e-4", "0.000123" }, { "-1.5e-7", "-1.5e-07" },
		{ "123.456e2", "12345.6" }, { "1.5e300", "1.5e+300" }, { "2E+3", "2000" },
		{ "0.00120", "0.0012" }, { "1e100", "1e+100" }, { "12e-1", "1.2" },
		{ "12345678901234567890", "12345678901234567890" },
		{ "1e99999999999", "1e+9999999999" }, { "1e-99999999999", "1e-9999999999" },
		{ "0.000000000000000000001234", "1.234e-21" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char doc[80];

		snprintf(doc, sizeof doc, "{\"a\":%s}", cases[i][0]);
		if (!finds(doc, ".a", cases[i][1]))
			CHECK(!cases[i][0]);
	}
	CHECK(finds("[1.0,{\"b\":-0.0,\"c\":\"1.0\"},1e5]", ".", "[1,{\"b\":-0,\"c\":\"1.0\"},100000]"));
}

static void strings_key_unescaped_literals_as_written(void)
{
	CHECK(finds("{\"a\":\"5\"}", ".a", "5"));
	CHECK(finds("{\"a\":5}", ".a", "5"));
	CHECK(finds("{\"a\":\"\\u00e9\\ud83d\\ude00\\/\\n\"}", ".a", "\xc3\xa9\xf0\x9f\x98\x80/\n"));
	CHECK(finds("{\"a\":\"\\ud800x\"}", ".a", "\xef\xbf\xbdx"));
	CHECK(finds("{\"a\":true}", ".a", "true"));
}

static void containers_key_in_compact_canonical_form(void)
{
	CHECK(finds("{ \"a\" : [ 1 , \"x\\u0041\" ] }", ".", "{\"a\":[1,\"xA\"]}"));
	CHECK(finds("{\"a\":1}", ".", "{\"a\":1}"));
	CHECK(finds("[\"\\u001f\\t\\\"\\\\\\/\"]", ".", "[\"\\u001f\\t\\\"\\\\/\"]"));
	CHECK(finds("[\"\\u00E9\", \"\xc3\xa9\"]", ".", "[\"\xc3\xa9\",\"\xc3\xa9\"]"));
	CHECK(finds("{\"k\":{ }}", ".k", "{}"));
}

static int path_refused(const char *text)
{
	const char *why = NULL;
	struct json_paths *ps = json_paths_parse(text, &why);

	json_paths_free(ps);
	return ps == NULL && why != NULL;
}

static void bad_paths_are_refused(void)
{
	static char many[64 * 3 + 8];

	CHECK(path_refused("a"));
	CHECK(path_refused(".a."));
	CHECK(path_refused(".a..b"));
	CHECK(path_refused(".[x]"));
	CHECK(path_refused(".[-1]"));
	CHECK(path_refused(".[1"));
	CHECK(path_refused(".a,"));
	CHECK(path_refused(".[\"open]"));
	CHECK(path_refused(".1a"));
	for (size_t i = 0; i < 65; i++)
		memcpy(many + 2 * i, ".,", 2);
	many[2 * 65 - 1] = '\0';
	CHECK(path_refused(many));
	many[2 * 64 - 1] = '\0';
	CHECK(!path_refused(many));
}

static void json_keysets_join_paths_and_note_bad_records(void)
{
	const char *why = NULL;
	struct key_spec spec = { .separator = -1 };
	struct line recs[] = { { "{\"a\":1,\"b\":\"x\"}", 15 }, { "{\"a\":1}", 7 }, { "", 0 },
			       { "not json", 8 }, { "{\"b\":\"y\",\"a\":[2]}", 17 }, { "{\"a\":", 5 } };
	struct keyset ks = { 0 };

	spec.json = json_paths_parse(".a,.b", &why);
	CHECK(spec.json != NULL);
	CHECK(keyset_build(&ks, &spec, recs, 6) == 0);
	CHECK(ks.count == 2);
	CHECK(ks.keys[0].len == 3 && memcmp(ks.keys[0].data, "1\tx", 3) == 0 && ks.record[0] == 0);
	CHECK(ks.keys[1].len == 5 && memcmp(ks.keys[1].data, "[2]\ty", 5) == 0 && ks.record[1] == 4);
	CHECK(ks.nbad == 2 && ks.bad[0] == 3 && ks.bad[1] == 5 && ks.bad_why != NULL);
	/* a rebuild forgets the bad records of the last batch */
	CHECK(keyset_build(&ks, &spec, recs, 2) == 0 && ks.nbad == 0 && ks.count == 1);
	keyset_free(&ks);
	json_paths_free((struct json_paths *)spec.json);
}

static void json_keys_may_outgrow_their_record(void)
{
	struct line nums = { "[1e15,1e15,1e15]", 16 };
	const char *why = NULL;
	struct key_spec spec = { .separator = ',', .fold_case = 1 };
	struct line rec = { "{\"a\":\"ABCDEFGHIJ\"}", 18 };
	struct keyset ks = { 0 };

	/* four copies of a 10-byte value and 3 separators: 43 bytes from 18 */
	spec.json = json_paths_parse(".a,.a,.a,.a", &why);
	CHECK(keyset_build(&ks, &spec, &rec, 1) == 0 && ks.count == 1);
	CHECK(ks.keys[0].len == 43 &&
	      memcmp(ks.keys[0].data, "abcdefghij,abcdefghij,abcdefghij,abcdefghij", 43) == 0);
	keyset_free(&ks);
	json_paths_free((struct json_paths *)spec.json);
	/* numbers grow too: 1e15 is sixteen digits, three copies and separators */
	spec.json = json_paths_parse(".,.,.", &why);
	CHECK(keyset_build(&ks, &spec, &nums, 1) == 0 && ks.count == 1 &&
	      ks.keys[0].len == 3 * 52 + 2);
	keyset_free(&ks);
	json_paths_free((struct json_paths *)spec.json);
}

void suite_json(void)
{
	unit_run("json: y_ documents parse", y_documents_parse);
	unit_run("json: n_ documents are refused", n_documents_are_refused);
	unit_run("json: the string scan finds stop bytes at every offset, and only those",
		 string_scan_finds_stop_bytes_at_every_offset);
	unit_run("json: nesting past the bound is refused, not a crash", nesting_is_bounded_not_a_crash);
	unit_run("json: blank lines hold no value and are not errors", blank_lines_hold_no_value);
	unit_run("json: paths find values as jq does (.a.b, [N], [\"k\"], .\"k\")",
		 paths_find_values_as_jq_does);
	unit_run("json: missing values, indexes past the end and steps into scalars find nothing",
		 missing_values_are_not_found);
	unit_run("json: a repeated member is found at its last place",
		 a_repeated_member_is_found_at_its_last_place);
	unit_run("json: strings key unescaped, literals as written",
		 strings_key_unescaped_literals_as_written);
	unit_run("json: numbers key by value, as jq 1.6 -r prints them",
		 numbers_key_by_value_as_jq_prints_them);
	unit_run("json: objects and arrays key in compact canonical form",
		 containers_key_in_compact_canonical_form);
	unit_run("json: bad paths and more than 64 are refused", bad_paths_are_refused);
	unit_run("json: keysets join paths' values and note records that are not JSON",
		 json_keysets_join_paths_and_note_bad_records);
	unit_run("json: keys of repeated paths may outgrow their record", json_keys_may_outgrow_their_record);
}
