/* SPDX-License-Identifier: MIT */
/*
 * test_csv.c - CSV records (lines_csv, lib/lines.c) and CSV keys (lib/keys.c).
 *
 * Records: small inputs fed through a pipe by a forked child in pieces of
 * 1, 2, 3, 5 and 4096 bytes, so that every quote state meets a read's end;
 * and over 2 MB of generated records (fixed seed) through a file, whose records
 * straddle the reader's buffers and batches. Keys: literal records, with
 * the values expected byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keys.h"
#include "lines.h"
#include "unit.h"

/* A pipe that a child fills with data in pieces of piece bytes; *child for waitpid. */
static int piped(const char *data, size_t len, size_t piece, pid_t *child)
{
	int fds[2];

	if (pipe(fds) < 0 || (*child = fork()) < 0)
		return -1;
	if (*child == 0) {
		close(fds[0]);
		for (size_t off = 0; off < len; off += piece) {
			size_t n = len - off < piece ? len - off : piece;

			if (write(fds[1], data + off, n) != (ssize_t)n)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

/* Every record of fd, read as CSV, equals want[0..n) and then input ends. */
static int fd_reads_as(int fd, char sep, const char *const *want, size_t n)
{
	struct lines_reader *r = lines_open(fd, '\n');
	struct lines_batch b = { 0 };
	size_t seen = 0;
	long got = 1;
	int ok = r != NULL;

	if (r)
		lines_csv(r, sep);
	while (ok && (got = lines_next_owned(r, &b)) > 0)
		for (size_t i = 0; ok && i < b.n; i++, seen++)
			ok = seen < n && b.records[i].len == strlen(want[seen]) &&
			     memcmp(b.records[i].data, want[seen], b.records[i].len) == 0;
	lines_batch_free(&b);
	lines_close(r);
	return ok && got == 0 && seen == n;
}

/* text read as CSV in pieces of every size tried gives the records want[0..n). */
static int csv_reads_as(const char *text, char sep, const char *const *want, size_t n)
{
	static const size_t pieces[] = { 1, 2, 3, 5, 4096 };
	int ok = 1;

	for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
		pid_t child;
		int status, fd = piped(text, strlen(text), pieces[p], &child);

		if (fd < 0)
			return 0;
		ok &= fd_reads_as(fd, sep, want, n);
		close(fd);
		ok &= waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0;
	}
	return ok;
}

#define READS(text, ...) \
	csv_reads_as(text, ',', (const char *const[]){ __VA_ARGS__ }, \
		     sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void newlines_inside_quotes_do_not_end_records(void)
{
	CHECK(READS("a,\"b\nc\",d\nx\n", "a,\"b\nc\",d", "x"));
	CHECK(READS("\"\n\n\"\n\"\"\n", "\"\n\n\"", "\"\""));
	CHECK(READS("1,\"two\nlines\"\n2,\"and\nthree\nlines\"", "1,\"two\nlines\"",
		    "2,\"and\nthree\nlines\""));
}

static void doubled_quotes_stay_inside_the_field(void)
{
	CHECK(READS("\"a\"\"\nb\"\nc\n", "\"a\"\"\nb\"", "c"));
	CHECK(READS("\"\"\"\"\n\"x\"\"\"\ny\n", "\"\"\"\"", "\"x\"\"\"", "y"));
}

static void quotes_inside_unquoted_fields_are_data(void)
{
	CHECK(READS("a\"b\nc\n", "a\"b", "c"));
	CHECK(READS("a,b\"\n\"c\"\n", "a,b\"", "\"c\""));
	/* after a closing quote the field goes on unquoted: the newline ends it */
	CHECK(READS("\"a\"b\nc\n", "\"a\"b", "c"));
}

static void a_quote_opened_after_a_separator_spans_lines(void)
{
	CHECK(READS("x,\"a\nb\"\n", "x,\"a\nb\""));
	CHECK(READS("x,y\"a\nb\"\n", "x,y\"a", "b\""));
}

static void crlf_records_keep_their_carriage_returns(void)
{
	CHECK(READS("a,b\r\n\"c\r\nd\"\r\n", "a,b\r", "\"c\r\nd\"\r"));
}

/* Records of text, read as CSV in pieces, until a read error: how many, or -1 if no error came. */
static long csv_records_before_error(const char *text, size_t piece, const char **why)
{
	pid_t child;
	int status, fd = piped(text, strlen(text), piece, &child);
	struct lines_reader *r = fd >= 0 ? lines_open(fd, '\n') : NULL;
	struct lines_batch b = { 0 };
	long got, seen = 0;

	if (r == NULL)
		return -1;
	lines_csv(r, ',');
	while ((got = lines_next_owned(r, &b)) > 0)
		seen += got;
	*why = lines_error(r);
	if (got == 0 || errno != EILSEQ)
		seen = -1;
	lines_batch_free(&b);
	lines_close(r);
	close(fd);
	if (waitpid(child, &status, 0) != child)
		return -1;
	return seen;
}

/* The record it opened cannot be told from the rest: a read error after the records before it. */
static void an_unclosed_quote_is_an_error_after_the_records_before_it(void)
{
	static const size_t pieces[] = { 1, 3, 4096 };

	for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
		const char *why = NULL;

		CHECK(csv_records_before_error("a\n\"b\nc\nd\n", pieces[p], &why) == 1);
		CHECK(why != NULL && strcmp(why, "a quoted field is never closed") == 0);
		CHECK(csv_records_before_error("x,\"\"\n\"", pieces[p], &why) == 1);
	}
	/* a quote closed just before the end is no error */
	CHECK(READS("a\n\"b\nc\"", "a", "\"b\nc\""));
}

static void the_separator_decides_where_fields_start(void)
{
	static const char *const want[] = { "a;\"b\nc\"", "\"x;y\"" };

	CHECK(csv_reads_as("a;\"b\nc\"\n\"x;y\"\n", ';', want, 2));
	/* with ';' the quote after ',' is inside an unquoted field: data */
	CHECK(csv_reads_as("a,\"b\nc\"\n", ';', (const char *const[]){ "a,\"b", "c\"" }, 2));
}

/* Record i of the generated input: fields with quotes, separators and newlines. */
static size_t generated_record(uint64_t *seed, char *out)
{
	static const char *const parts[] = { "plain", "\"q,u\"\"o\nted\"", "\"\"", "x\"y",
					     "\"a\n\nb\"", "", "\"\"\"\"" };
	size_t len = 0, fields = 1 + unit_splitmix64(seed) % 6;

	for (size_t f = 0; f < fields; f++) {
		const char *p = parts[unit_splitmix64(seed) % 7];

		if (f > 0)
			out[len++] = ',';
		memcpy(out + len, p, strlen(p));
		len += strlen(p);
	}
	return len;
}

static void generated_records_straddle_buffers_intact(void)
{
	enum { N = 150000 };
	char *text = malloc((size_t)N * 80), **want = malloc(N * sizeof *want);
	uint64_t seed = 25;
	size_t len = 0;
	int fd;

	CHECK(text != NULL && want != NULL);
	for (size_t i = 0; i < N; i++) {
		size_t n = generated_record(&seed, text + len);

		want[i] = malloc(n + 1);
		memcpy(want[i], text + len, n);
		want[i][n] = '\0';
		len += n;
		text[len++] = '\n';
	}
	fd = unit_temp_file(text, len);
	CHECK(fd >= 0 && len > ((size_t)2 << 20));	/* past 1 MiB reads, many times */
	CHECK(fd_reads_as(fd, ',', (const char *const *)want, N));
	close(fd);
	for (size_t i = 0; i < N; i++)
		free(want[i]);
	free(want);
	free(text);
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

#define L(s) ((struct line){ (s), sizeof(s) - 1 })

static void csv_keys_are_unquoted_values(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1, .field = 2 };
	const struct line recs[] = { L("1,\"Smith, John\""), L("2,Smith"), L("3,\"a\"\"b\""),
				     L("4,\"\""), L("5,\"x\ny\""), L("6") };

	CHECK(keys_are(&spec, recs, 6, (const char *[]){ "Smith, John", "Smith", "a\"b", "", "x\ny" },
		       (const size_t[]){ 0, 1, 2, 3, 4 }, 5));
}

static void csv_keys_without_a_field_join_all_values(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1 };
	const struct line recs[] = { L("\"a\",b"), L("a,b"), L("\"a,b\""), L("") };

	CHECK(keys_are(&spec, recs, 4, (const char *[]){ "a,b", "a,b", "a,b", "" },
		       (const size_t[]){ 0, 1, 2, 3 }, 4));
}

static void csv_list_keys_join_values_with_the_separator(void)
{
	unsigned long single;
	const char *why;
	struct key_spec spec = { .separator = ';', .csv = 1 };
	const struct line recs[] = { L("\"x;y\";q;\"z\"\"\";w"), L("a;b") };

	spec.fields = fieldlist_parse("1,3-", &single, &why);
	CHECK(keys_are(&spec, recs, 2, (const char *[]){ "x;y;z\";w" }, (const size_t[]){ 0 }, 1));
	fieldlist_free(spec.fields);
}

static void csv_keys_drop_a_final_carriage_return_only(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1, .field = 2 };
	const struct line recs[] = { L("a,b\r"), L("a,\"b\r\"\r"), L("a,\"b\"\r") };

	CHECK(keys_are(&spec, recs, 3, (const char *[]){ "b", "b\r", "b" },
		       (const size_t[]){ 0, 1, 2 }, 3));
}

static void csv_keys_read_leniently_as_python_does(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1, .field = 1 };
	/* text after a closing quote is kept; an unclosed quote runs to the end */
	const struct line recs[] = { L("\"a\"b,c"), L("\"abc"), L("x\"y\",z"), L("\"a,b") };

	CHECK(keys_are(&spec, recs, 4, (const char *[]){ "ab", "abc", "x\"y\"", "a,b" },
		       (const size_t[]){ 0, 1, 2, 3 }, 4));
}

static void csv_keys_fold_case_on_the_values(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1, .field = 1, .fold_case = 1 };
	const struct line recs[] = { L("\"ABC, \"\"DEF\"\" GHIJ\",x") };

	CHECK(keys_are(&spec, recs, 1, (const char *[]){ "abc, \"def\" ghij" },
		       (const size_t[]){ 0 }, 1));
}

static void csv_headers_split_into_unquoted_names(void)
{
	struct key_spec spec = { .separator = ',', .csv = 1 };
	struct line rec = L("\"id\",\"na\"\"me\",,x\r"), f[4];
	char copy[32];

	CHECK(keys_split(&spec, rec, f, 4, copy) == 4);
	CHECK(f[0].len == 2 && memcmp(f[0].data, "id", 2) == 0);
	CHECK(f[1].len == 5 && memcmp(f[1].data, "na\"me", 5) == 0);
	CHECK(f[2].len == 0);
	CHECK(f[3].len == 1 && f[3].data[0] == 'x');
}

void suite_csv(void)
{
	unit_run("csv: newlines inside quotes do not end records", newlines_inside_quotes_do_not_end_records);
	unit_run("csv: doubled quotes stay inside the field", doubled_quotes_stay_inside_the_field);
	unit_run("csv: quotes inside unquoted fields are data", quotes_inside_unquoted_fields_are_data);
	unit_run("csv: a quote opens only at a field's start", a_quote_opened_after_a_separator_spans_lines);
	unit_run("csv: CRLF records are handed out with their carriage returns",
		 crlf_records_keep_their_carriage_returns);
	unit_run("csv: an unclosed quote is an error after the records before it",
		 an_unclosed_quote_is_an_error_after_the_records_before_it);
	unit_run("csv: the separator decides where fields start", the_separator_decides_where_fields_start);
	unit_run("csv: 150000 generated records straddle buffers and batches intact",
		 generated_records_straddle_buffers_intact);
	unit_run("csv: keys are unquoted values, doubled quotes made one", csv_keys_are_unquoted_values);
	unit_run("csv: with no field the key is every value joined", csv_keys_without_a_field_join_all_values);
	unit_run("csv: list keys join values with the separator", csv_list_keys_join_values_with_the_separator);
	unit_run("csv: a final carriage return is not data; one in quotes is",
		 csv_keys_drop_a_final_carriage_return_only);
	unit_run("csv: text after a closing quote and unclosed quotes read as Python's csv",
		 csv_keys_read_leniently_as_python_does);
	unit_run("csv: case folding works on the values", csv_keys_fold_case_on_the_values);
	unit_run("csv: headers split into unquoted names", csv_headers_split_into_unquoted_names);
}
