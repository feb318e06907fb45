/* SPDX-License-Identifier: MIT */
/*
 * test_lines.c - the line reader (lib/lines.c) and the writer (lib/writer.c).
 *
 * Input is built in unlinked temporary files, or in pipes fed by a forked
 * child when a test needs read(2) to return short, irregular chunks. Big
 * records (3 MiB against a 1 MiB starting buffer) force refills and growth.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lines.h"
#include "unit.h"
#include "writer.h"

#define MIB ((size_t)1 << 20)

static int put_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t done = write(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return -1;
		p += done;
		n -= (size_t)done;
	}
	return 0;
}

/* An unlinked temporary file holding data, positioned at its start. */
static int temp_file(const char *data, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/bftools-unit-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	if (put_all(fd, data, len) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The read end of a pipe that a child fills with data in pieces of `piece`
 * bytes, then closes. *child gets the child's pid for reap().
 */
static int pipe_from_child(const char *data, size_t len, size_t piece, pid_t *child)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	*child = fork();
	if (*child < 0)
		return -1;
	if (*child == 0) {
		close(fds[0]);
		for (size_t off = 0; off < len; off += piece) {
			size_t n = len - off < piece ? len - off : piece;

			if (put_all(fds[1], data + off, n) < 0)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static int reap(pid_t child)
{
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int same(struct line got, const char *data, size_t len)
{
	return got.len == len && (len == 0 || memcmp(got.data, data, len) == 0);
}

/*
 * Reads fd to the end in batches of max and compares with want[0..n),
 * checking each batch after the call returned (it must still be intact).
 * Returns the number of records that matched before the first difference;
 * n means all matched and the input ended there.
 */
static size_t read_matches(int fd, char delim, size_t max, const struct line *want,
			   size_t n)
{
	struct lines_reader *r = lines_open(fd, delim);
	struct line *batch = malloc(max * sizeof *batch);
	size_t seen = 0;
	long got = 1;

	while (r && batch && got > 0) {
		got = lines_next_batch(r, batch, max);
		for (long i = 0; i < got; i++, seen++)
			if (seen >= n || !same(batch[i], want[seen].data, want[seen].len))
				goto out;
	}
	if (got < 0)
		seen = (size_t)-1;
out:
	free(batch);
	lines_close(r);
	return seen;
}

/* Reads data (via a temp file) and checks the records are want[0..n). */
static int reads_as(const char *data, size_t len, char delim, size_t max,
		    const struct line *want, size_t n)
{
	int fd = temp_file(data, len);
	size_t matched;

	if (fd < 0)
		return 0;
	matched = read_matches(fd, delim, max, want, n);
	close(fd);
	return matched == n;
}

#define L(s) { (s), sizeof(s) - 1 }

static void empty_input_gives_no_records(void)
{
	int fd = temp_file("", 0);
	struct lines_reader *r = lines_open(fd, '\n');
	struct line out[4];

	CHECK(fd >= 0 && r);
	CHECK(lines_next_batch(r, out, 4) == 0);
	CHECK(lines_next_batch(r, out, 4) == 0);
	CHECK(lines_bytes_read(r) == 0);
	lines_close(r);
	close(fd);
}

static void lone_newline_is_one_empty_record(void)
{
	static const struct line want[] = { L("") };

	CHECK(reads_as("\n", 1, '\n', 8, want, 1));
}

static void blank_line_between_records_is_kept(void)
{
	static const struct line want[] = { L("a"), L(""), L("b") };

	CHECK(reads_as("a\n\nb", 4, '\n', 8, want, 3));
	CHECK(reads_as("a\n\nb\n", 5, '\n', 8, want, 3));
}

static void final_delimiter_adds_no_record(void)
{
	static const struct line want[] = { L("a"), L("b"), L("") };

	CHECK(reads_as("a\nb\n", 4, '\n', 8, want, 2));
	CHECK(reads_as("a\nb\n\n", 5, '\n', 8, want, 3));
}

static void nul_bytes_are_data_with_newline_delimiter(void)
{
	static const struct line want[] = { L("a\0b"), L("\0"), L("c\0") };

	CHECK(reads_as("a\0b\n\0\nc\0", 8, '\n', 8, want, 3));
}

static void newline_is_data_with_nul_delimiter(void)
{
	static const struct line want[] = { L("a\nb"), L(""), L("c\n") };

	CHECK(reads_as("a\nb\0\0c\n", 7, '\0', 8, want, 3));
}

static void max_one_gives_one_record_per_call(void)
{
	static const struct line want[] = { L("one"), L("two"), L(""), L("four") };
	int fd = temp_file("one\ntwo\n\nfour\n", 14);
	struct lines_reader *r = lines_open(fd, '\n');
	struct line out[2] = { { NULL, 0 }, { "sentinel", 8 } };

	CHECK(fd >= 0 && r);
	for (size_t i = 0; i < 4; i++) {
		CHECK(lines_next_batch(r, out, 1) == 1);
		CHECK(same(out[0], want[i].data, want[i].len));
		CHECK(same(out[1], "sentinel", 8));
	}
	CHECK(lines_next_batch(r, out, 1) == 0);
	lines_close(r);
	close(fd);
	CHECK(reads_as("one\ntwo\n\nfour", 13, '\n', 1, want, 4));
}

static void max_zero_is_an_error_not_end_of_input(void)
{
	int fd = temp_file("a\n", 2);
	struct lines_reader *r = lines_open(fd, '\n');
	struct line out[1];

	CHECK(fd >= 0 && r);
	errno = 0;
	CHECK(lines_next_batch(r, out, 0) == -1 && errno == EINVAL);
	CHECK(lines_next_batch(r, out, 1) == 1 && same(out[0], "a", 1));
	lines_close(r);
	close(fd);
}

/*
 * small, 3 MiB of 'x', small, 3 MiB of 'y' without a final delimiter: the
 * first big record straddles the initial 1 MiB buffer and forces growth.
 */
struct big_input {
	char *data;
	size_t len;
	struct line want[5];
};

static int big_input_make(struct big_input *in)
{
	size_t big = 3 * MIB;
	char *p;

	in->len = 6 + big + 6 + big;
	in->data = p = malloc(in->len);
	if (!p)
		return -1;
	memcpy(p, "first\n", 6);
	memset(p + 6, 'x', big);
	memcpy(p + 6 + big, "\nmid\n\n", 6);
	memset(p + 12 + big, 'y', big);
	in->want[0] = (struct line){ p, 5 };
	in->want[1] = (struct line){ p + 6, big };
	in->want[2] = (struct line){ p + 7 + big, 3 };
	in->want[3] = (struct line){ p + 11 + big, 0 };
	in->want[4] = (struct line){ p + 12 + big, big };
	return 0;
}

static void huge_records_straddle_refills_in_a_file(void)
{
	struct big_input in;
	int ok;

	CHECK(big_input_make(&in) == 0);
	ok = reads_as(in.data, in.len, '\n', 64, in.want, 5) &&
	     reads_as(in.data, in.len, '\n', 1, in.want, 5);
	free(in.data);
	CHECK(ok);
}

static void huge_records_straddle_refills_in_a_pipe(void)
{
	static const size_t pieces[] = { 1000, 4093, 65536, 3 * MIB };
	struct big_input in;
	int ok = 1;

	CHECK(big_input_make(&in) == 0);
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0] && ok; i++) {
		pid_t child;
		int fd = pipe_from_child(in.data, in.len, pieces[i], &child);

		ok = fd >= 0 && read_matches(fd, '\n', 100, in.want, 5) == 5;
		if (fd >= 0) {
			close(fd);
			ok = reap(child) == 0 && ok;
		}
	}
	free(in.data);
	CHECK(ok);
}

/* Record i is "i:" then i % 97 bytes of a pattern: distinct, easy to check. */
static size_t numbered_record(size_t i, char *out)
{
	int head = snprintf(out, 32, "%zu:", i);
	size_t len = (size_t)head + i % 97;

	for (size_t j = (size_t)head; j < len; j++)
		out[j] = (char)('a' + (i + j) % 26);
	return len;
}

static void batch_stays_valid_until_next_call(void)
{
	size_t n = 40000, len = 0;
	char *data = malloc(n * 128), rec[160];
	struct line *batch = malloc(n * sizeof *batch);
	struct lines_reader *r;
	size_t seen = 0;
	long got;
	int fd;

	CHECK(data && batch);
	for (size_t i = 0; i < n; i++) {
		len += numbered_record(i, data + len);
		data[len++] = '\n';
	}
	CHECK(len > 2 * MIB);	/* at least two refills */
	fd = temp_file(data, len);
	r = lines_open(fd, '\n');
	CHECK(fd >= 0 && r);
	while ((got = lines_next_batch(r, batch, n)) > 0)
		for (long i = 0; i < got; i++, seen++)
			CHECKF(same(batch[i], rec, numbered_record(seen, rec)),
			       "record %zu", seen);
	CHECK(got == 0 && seen == n);
	CHECK(lines_bytes_read(r) == len);
	lines_close(r);
	close(fd);
	free(batch);
	free(data);
}

static void bytes_read_counts_records_and_delimiters(void)
{
	int fd = temp_file("ab\ncd\nlast", 10);
	struct lines_reader *r = lines_open(fd, '\n');
	struct line out[2];

	CHECK(fd >= 0 && r);
	CHECK(lines_next_batch(r, out, 1) == 1 && lines_bytes_read(r) == 3);
	CHECK(lines_next_batch(r, out, 2) == 1 && lines_bytes_read(r) == 6);
	CHECK(lines_next_batch(r, out, 2) == 1 && lines_bytes_read(r) == 10);
	CHECK(lines_next_batch(r, out, 2) == 0 && lines_bytes_read(r) == 10);
	lines_close(r);
	close(fd);
}

static void read_error_gives_minus_one_and_errno(void)
{
	struct lines_reader *r = lines_open(-1, '\n');
	struct line out[1];

	CHECK(r);
	errno = 0;
	CHECK(lines_next_batch(r, out, 1) == -1);
	CHECK(errno == EBADF);
	lines_close(r);
}

/*
 * A pipe whose writer is still open: the complete record must come back
 * without waiting for more input (a streaming pipeline depends on it). If
 * the reader blocked, the alarm would end the test run instead of hanging.
 */
static void complete_records_come_back_without_waiting(void)
{
	int fds[2];
	struct lines_reader *r;
	struct line out[4];
	long got;

	CHECK(pipe(fds) == 0);
	CHECK(put_all(fds[1], "a\nb", 3) == 0);
	r = lines_open(fds[0], '\n');
	CHECK(r);
	alarm(20);
	got = lines_next_batch(r, out, 4);
	alarm(0);
	CHECK(got == 1 && same(out[0], "a", 1));
	CHECK(put_all(fds[1], "c\nd", 3) == 0);
	close(fds[1]);
	CHECK(lines_next_batch(r, out, 4) == 1 && same(out[0], "bc", 2));
	CHECK(lines_next_batch(r, out, 4) == 1 && same(out[0], "d", 1));
	CHECK(lines_next_batch(r, out, 4) == 0);
	lines_close(r);
	close(fds[0]);
}

/* Record i of the round trip: bytes of every value but '\n', NULs included. */
static size_t mixed_record(size_t i, char *out)
{
	size_t len = (i * 7919) % 203;

	for (size_t j = 0; j < len; j++) {
		unsigned char c = (unsigned char)((i * 31 + j * 17) % 256);

		out[j] = (char)(c == '\n' ? 0 : c);
	}
	return len;
}

static void round_trip_of_1e5_records_is_exact(void)
{
	size_t n = 100000, seen = 0;
	char rec[256], want[256];
	struct line batch[777];
	struct lines_reader *r;
	struct writer w;
	long got;
	int fd = temp_file("", 0);

	CHECK(fd >= 0 && writer_init(&w, fd, 4096) == 0);
	for (size_t i = 0; i < n; i++) {
		struct line l = { rec, mixed_record(i, rec) };

		CHECK(writer_record(&w, l, '\n') == 0);
	}
	CHECK(writer_finish(&w) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	r = lines_open(fd, '\n');
	CHECK(r);
	while ((got = lines_next_batch(r, batch, 777)) > 0)
		for (long i = 0; i < got; i++, seen++)
			CHECKF(seen < n && same(batch[i], want, mixed_record(seen, want)),
			       "record %zu", seen);
	CHECK(got == 0 && seen == n);
	lines_close(r);
	close(fd);
}

/* The whole content of fd, from its start, as a malloc'd string. */
static char *file_text(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text;

	if (size < 0 || lseek(fd, 0, SEEK_SET) != 0)
		return NULL;
	text = malloc((size_t)size + 1);
	if (!text || read(fd, text, (size_t)size) != (ssize_t)size) {
		free(text);
		return NULL;
	}
	text[size] = '\0';
	*len = (size_t)size;
	return text;
}

static void writer_keeps_order_around_oversized_puts(void)
{
	char big[100];
	char want[3 + 100 + 1 + 2 + 1 + 1];
	struct writer w;
	size_t len = 0;
	char *text;
	int fd = temp_file("", 0), ok;

	memset(big, 'B', sizeof big);
	memcpy(want, "abc", 3);
	memcpy(want + 3, big, 100);
	memcpy(want + 103, "\nxy\n", 5);	/* and the NUL of the empty record */
	CHECK(fd >= 0 && writer_init(&w, fd, 16) == 0);
	CHECK(writer_put(&w, "abc", 3) == 0);
	CHECK(writer_record(&w, (struct line){ big, sizeof big }, '\n') == 0);
	CHECK(writer_record(&w, (struct line){ "xy", 2 }, '\n') == 0);
	CHECK(writer_record(&w, (struct line){ NULL, 0 }, '\0') == 0);
	CHECK(writer_finish(&w) == 0 && w.buf == NULL);
	text = file_text(fd, &len);
	close(fd);
	ok = text && len == sizeof want && memcmp(text, want, len) == 0;
	free(text);
	CHECK(ok);
}

static void writer_line_buffered_flushes_each_record(void)
{
	int fds[2];
	char got[8];
	struct writer w;

	CHECK(pipe(fds) == 0);
	CHECK(writer_init(&w, fds[1], 0) == 0);
	w.line_buffered = 1;
	CHECK(writer_record(&w, (struct line){ "hi", 2 }, '\n') == 0);
	CHECK(w.len == 0);
	CHECK(read(fds[0], got, sizeof got) == 3 && memcmp(got, "hi\n", 3) == 0);
	CHECK(writer_finish(&w) == 0);
	close(fds[0]);
	close(fds[1]);
}

static void writer_full_disk_fails_at_flush_and_stays_failed(void)
{
	int fd = open("/dev/full", O_WRONLY);
	struct writer w;

	CHECK(fd >= 0 && writer_init(&w, fd, 64) == 0);
	CHECK(writer_put(&w, "data", 4) == 0);	/* buffered: no error yet */
	errno = 0;
	CHECK(writer_flush(&w) == -1 && errno == ENOSPC);
	CHECK(w.failed == ENOSPC);
	errno = 0;
	CHECK(writer_put(&w, "more", 4) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(writer_record(&w, (struct line){ "x", 1 }, '\n') == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(writer_finish(&w) == -1 && errno == ENOSPC);
	close(fd);
}

static void writer_closed_descriptor_gives_ebadf(void)
{
	int fd = open("/dev/null", O_WRONLY);
	struct writer w;
	char big[256] = { 0 };

	CHECK(fd >= 0);
	close(fd);
	CHECK(writer_init(&w, fd, 64) == 0);
	errno = 0;
	/* Larger than the buffer: written straight through, fails at once. */
	CHECK(writer_put(&w, big, sizeof big) == -1 && errno == EBADF);
	errno = 0;
	CHECK(writer_finish(&w) == -1 && errno == EBADF);
}

void suite_lines(void)
{
	unit_run("lines: empty input gives no records", empty_input_gives_no_records);
	unit_run("lines: a lone newline is one empty record", lone_newline_is_one_empty_record);
	unit_run("lines: \"a\\n\\nb\" gives a, empty, b; the last delimiter is optional",
		 blank_line_between_records_is_kept);
	unit_run("lines: a final delimiter adds no empty record", final_delimiter_adds_no_record);
	unit_run("lines: NUL bytes are data when the delimiter is newline",
		 nul_bytes_are_data_with_newline_delimiter);
	unit_run("lines: newlines are data when the delimiter is NUL",
		 newline_is_data_with_nul_delimiter);
	unit_run("lines: max 1 hands out exactly one record per call",
		 max_one_gives_one_record_per_call);
	unit_run("lines: max 0 is EINVAL, not end of input", max_zero_is_an_error_not_end_of_input);
	unit_run("lines: 3 MiB records straddle refills and grow the buffer (file)",
		 huge_records_straddle_refills_in_a_file);
	unit_run("lines: 3 MiB records straddle refills and grow the buffer (pipe, short reads)",
		 huge_records_straddle_refills_in_a_pipe);
	unit_run("lines: every record of a batch stays valid until the next call",
		 batch_stays_valid_until_next_call);
	unit_run("lines: bytes_read counts records and their delimiters",
		 bytes_read_counts_records_and_delimiters);
	unit_run("lines: a read error gives -1 with errno (EBADF for fd -1)",
		 read_error_gives_minus_one_and_errno);
	unit_run("lines: complete records come back without waiting for more input",
		 complete_records_come_back_without_waiting);
	unit_run("lines: 1e5 records with every byte value round-trip exactly via writer",
		 round_trip_of_1e5_records_is_exact);
	unit_run("writer: order is kept around records larger than the buffer",
		 writer_keeps_order_around_oversized_puts);
	unit_run("writer: line_buffered makes each record readable at once",
		 writer_line_buffered_flushes_each_record);
	unit_run("writer: /dev/full fails with ENOSPC at flush and every later call repeats it",
		 writer_full_disk_fails_at_flush_and_stays_failed);
	unit_run("writer: a closed descriptor gives EBADF", writer_closed_descriptor_gives_ebadf);
}
