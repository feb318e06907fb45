/* SPDX-License-Identifier: MIT */
/*
 * fuzz_formats.c - libFuzzer harness for the CSV and JSON key readers:
 * lines_csv (lines.h) with CSV keys (keys.h), and json.h's parser, paths
 * and key text.
 *
 * An input is three option bytes, then the stream:
 *
 *   byte 0  flags: 1 JSON, else CSV
 *                  2 the CSV stream arrives in short reads (a socket,
 *                    fuzz.h), else as a regular file
 *   byte 1  CSV: the separator (a quote, newline or CR becomes ',')
 *   byte 2  CSV: the field keyed, byte % 4 (0: every value);
 *           JSON: which paths (below), byte % 4
 *
 * CSV, checked against a reference written plainly (one byte at a time,
 * over the whole input, no memchr fast path, no state carried across
 * reads): the reader's records are the reference's, in order, and with
 * their delimiters cover the input exactly; each record's key is the
 * reference's unquoted value(s).
 *
 * JSON, each line of the stream a document: json_find never reads past
 * the line (the line is copied to a buffer of its exact size, so ASan
 * sees one byte too far); an accepted line's values lie inside it; a
 * value's key text is no longer than the value; an object's or array's
 * key text is valid JSON again, found whole by '.', and canonical (its
 * key text is itself); refused lines come with a reason.
 */
#define _GNU_SOURCE	/* fuzz.h: memfd_create */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"
#include "keys.h"
#include "lines.h"

#define OPTION_BYTES 3

/* ---------------------------------------------------------------- CSV */

/* The reference record end at or after p: the index of its '\n', or len. */
static size_t ref_record_end(const uint8_t *in, size_t p, size_t len, uint8_t sep)
{
	int quoted = 0, field_start = 1;

	for (; p < len; p++) {
		uint8_t c = in[p];

		if (quoted) {
			if (c == '"' && p + 1 < len && in[p + 1] == '"')
				p++;
			else if (c == '"')
				quoted = 0, field_start = 0;
			continue;
		}
		if (c == '\n')
			return p;
		if (c == '"' && field_start)
			quoted = 1;
		field_start = c == sep;
	}
	return len;
}

/* The reference key of a CSV record: field (0: every value) into out; -1 without it. */
static long ref_key(const uint8_t *rec, size_t len, uint8_t sep, unsigned field, uint8_t *out)
{
	size_t p = 0, n = 0;
	unsigned i = 0;

	if (len > 0 && rec[len - 1] == '\r')
		len--;
	for (;;) {
		size_t start = n;
		int quoted = p < len && rec[p] == '"';

		i++;
		if (field == 0 && i > 1)
			out[n++] = sep;
		for (p += (size_t)quoted; p < len; p++) {
			if (quoted && rec[p] == '"' && p + 1 < len && rec[p + 1] == '"')
				out[n++] = rec[p++];
			else if (quoted && rec[p] == '"')
				quoted = 0;
			else if (!quoted && rec[p] == sep)
				break;
			else
				out[n++] = rec[p];
		}
		if (field != 0 && i == field) {
			memmove(out, out + start, n - start);
			return (long)(n - start);
		}
		if (field != 0)
			n = 0;
		if (p >= len)
			return field == 0 ? (long)n : -1;
		p++;	/* the separator */
	}
}

static void check_csv(const uint8_t *in, size_t len, const uint8_t *opt)
{
	uint8_t sep = opt[1] == '"' || opt[1] == '\n' || opt[1] == '\r' ? ',' : opt[1];
	struct key_spec spec = { .separator = sep, .csv = 1, .field = opt[2] % 4 };
	struct lines_batch b = { 0 };
	struct keyset ks = { 0 };
	uint8_t *want = malloc(len + 1);
	struct lines_reader *r;
	struct feed f;
	size_t pos = 0;
	long n;

	fuzz_check(want != NULL, "malloc");
	feed_open(&f, opt[0] & 2 ? FEED_CHUNKS : FEED_FILE, in, len, fuzz_seed(in, len), 7);
	r = lines_open(f.fd, '\n');
	fuzz_check(r != NULL, "lines_open");
	lines_csv(r, (char)sep);
	while ((n = lines_next_owned(r, &b)) > 0) {
		size_t k = 0;

		fuzz_check(keyset_build(&ks, &spec, b.records, b.n) == 0, "keyset_build");
		for (size_t i = 0; i < b.n; i++) {
			size_t end = ref_record_end(in, pos, len, sep);
			long klen = ref_key(in + pos, end - pos, sep, (unsigned)spec.field, want);

			fuzz_check(b.records[i].len == end - pos &&
				   memcmp(b.records[i].data, in + pos, end - pos) == 0,
				   "a CSV record is the reference's");
			if (klen >= 0) {
				fuzz_check(k < ks.count && ks.record[k] == i, "a key for the record");
				fuzz_check(ks.keys[k].len == (size_t)klen &&
					   memcmp(ks.keys[k].data, want, (size_t)klen) == 0,
					   "a CSV key is the reference's");
				k++;
			}
			pos = end < len ? end + 1 : end;
		}
		fuzz_check(k == ks.count, "no key without the reference's");
	}
	/* a quote never closed: an error instead of the last record, which runs to the end */
	if (n < 0) {
		fuzz_check(lines_error(r) != NULL && pos < len && ref_record_end(in, pos, len, sep) == len,
			   "only a quote never closed, in the last record, ends the input early");
		pos = len;
		n = 0;
	}
	fuzz_check(n == 0 && pos == len, "the records cover the whole input");
	lines_batch_free(&b);
	keyset_free(&ks);
	lines_close(r);
	feed_close(&f);
	free(want);
}

/* ---------------------------------------------------------------- JSON */

static const char *const path_sets[] = { ".", ".a", ".a.b,.[0],.[\"\"]", ".\"x\"[1].y,." };

/* A container's key text is JSON again, found whole by '.', and its own key text. */
static void check_canonical(const char *text, size_t len, const struct json_paths *whole)
{
	char *copy = malloc(len ? len : 1), *again = malloc(len ? len : 1);
	struct line v[1];
	const char *why = NULL;

	fuzz_check(copy && again, "malloc");
	memcpy(copy, text, len);
	fuzz_check(json_find((struct line){ copy, len }, whole, v, &why) == 1,
		   "a canonical form is JSON");
	fuzz_check(v[0].data == copy && v[0].len == len, "found whole by '.'");
	fuzz_check(json_key_text(v[0], again) == len && memcmp(again, copy, len) == 0,
		   "the canonical form is canonical");
	free(copy);
	free(again);
}

static void check_json_line(const uint8_t *line, size_t len, const struct json_paths *ps,
			    const struct json_paths *whole)
{
	char *doc = malloc(len ? len : 1), *out;
	struct line v[JSON_PATHS_MAX];
	const char *why = NULL;
	int rc;

	fuzz_check(doc != NULL, "malloc");
	memcpy(doc, line, len);
	rc = json_find((struct line){ doc, len }, ps, v, &why);
	fuzz_check(rc >= -1 && rc <= 1 && (rc >= 0 || why != NULL), "a refusal has a reason");
	for (size_t i = 0; rc == 1 && i < ps->n; i++) {
		size_t klen;

		if (v[i].data == NULL)
			continue;
		fuzz_check(v[i].data >= doc && v[i].data + v[i].len <= doc + len, "inside the line");
		out = malloc(v[i].len ? v[i].len : 1);
		fuzz_check(out != NULL, "malloc");
		klen = json_key_text(v[i], out);
		fuzz_check(klen <= v[i].len, "key text never grows");
		if (v[i].data[0] == '{' || v[i].data[0] == '[')
			check_canonical(out, klen, whole);
		free(out);
	}
	free(doc);
}

static void check_json(const uint8_t *in, size_t len, const uint8_t *opt)
{
	const char *why = NULL;
	struct json_paths *ps = json_paths_parse(path_sets[opt[2] % 4], &why);
	struct json_paths *whole = json_paths_parse(".", &why);
	size_t p = 0;

	fuzz_check(ps != NULL && whole != NULL, "the harness's paths parse");
	while (p <= len) {
		const uint8_t *nl = memchr(in + p, '\n', len - p);
		size_t end = nl ? (size_t)(nl - in) : len;

		check_json_line(in + p, end - p, ps, whole);
		p = end + 1;
	}
	json_paths_free(ps);
	json_paths_free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t opt[OPTION_BYTES] = { 0 };
	size_t skip = size < OPTION_BYTES ? size : OPTION_BYTES;

	memcpy(opt, data, skip);
	if (opt[0] & 1)
		check_json(data + skip, size - skip, opt);
	else
		check_csv(data + skip, size - skip, opt);
	return 0;
}
