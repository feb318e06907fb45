/* SPDX-License-Identifier: MIT */
/*
 * test_lines.c - the line reader (lib/io/lines.c) and the writer (lib/io/writer.c).
 *
 * Input is built in unlinked temporary files, or in pipes fed by a forked
 * child when a test needs read(2) to return short, irregular chunks. Big
 * records (3 MiB against a 1 MiB starting buffer) force refills and growth.
 * Owned batches (lines_next_owned) are read round-robin into four live
 * batches, as the pipeline does, and all four are checked after each call.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
	int fd = unit_temp_file(data, len);
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
	int fd = unit_temp_file("", 0);
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
	int fd = unit_temp_file("one\ntwo\n\nfour\n", 14);
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
	int fd = unit_temp_file("a\n", 2);
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
	fd = unit_temp_file(data, len);
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
	int fd = unit_temp_file("ab\ncd\nlast", 10);
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
	unit_default_signal(SIGALRM);	/* the alarm must end the run */
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
	int fd = unit_temp_file("", 0);

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
	int fd = unit_temp_file("", 0), ok;

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

/*
 * lines_next_owned. The pipeline keeps PIPELINE_SLOTS (4) batches alive and
 * reads into them round-robin; owned_matches does the same and, after
 * every call, checks every record of every live batch against the input,
 * so a batch whose bytes were moved, reused or freed by a later call on
 * another batch is caught (and ASan sees any read of freed memory).
 */
#define OWNED_LIVE 4

struct owned_input {
	const char *data;
	size_t len;
	const struct line *want;
	size_t n;
};

/* Record i: empty when i % 11 is 0 or 1 (so two in a row), else mixed bytes but delim. */
static size_t owned_record(size_t i, char delim, char *out)
{
	size_t len = i % 11 < 2 ? 0 : 1 + (i * 7919) % 150;

	for (size_t j = 0; j < len; j++) {
		char c = (char)((i * 31 + j * 17) % 256);

		out[j] = c == delim ? (char)(delim == '\0' ? '\n' : '\0') : c;
	}
	return len;
}

/*
 * n small records with `big` records of 1 MiB spread among them (each
 * spans many reads of the pipe), then "end", without its delimiter when
 * open_end.
 */
static int owned_input_make(struct owned_input *in, size_t n, size_t big, char delim,
			    int open_end)
{
	size_t stride = big > 0 ? n / big : 0, count = 0;
	char *data = malloc(n * 152 + big * (MIB + 1) + 4), *p = data;
	struct line *want = malloc((n + big + 1) * sizeof *want);

	in->data = data;
	in->want = want;
	if (!data || !want)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t len = owned_record(i, delim, p);

		want[count++] = (struct line){ p, len };
		p += len;
		*p++ = delim;
		if (stride == 0 || i % stride != stride / 2)
			continue;
		memset(p, 'A' + (int)(i % 26), MIB);
		want[count++] = (struct line){ p, MIB };
		p += MIB;
		*p++ = delim;
	}
	memcpy(p, "end", 3);
	want[count++] = (struct line){ p, 3 };
	p += 3;
	if (!open_end)
		*p++ = delim;
	in->len = (size_t)(p - data);
	in->n = count;
	return 0;
}

static void owned_input_free(struct owned_input *in)
{
	free((char *)in->data);
	free((struct line *)in->want);
}

/* Whether batch b still holds want[first, first + b->n). */
static int batch_intact(const struct lines_batch *b, const struct owned_input *in, size_t first)
{
	if (first + b->n > in->n)
		return 0;
	for (size_t i = 0; i < b->n; i++)
		if (!same(b->records[i], in->want[first + i].data, in->want[first + i].len))
			return 0;
	return 1;
}

/*
 * Reads fd to the end round-robin into OWNED_LIVE batches, checking all
 * live batches after each call. Returns 1 when every record matched, the
 * input ended exactly after the last and further calls give 0.
 */
static int owned_matches(int fd, char delim, const struct owned_input *in)
{
	struct lines_reader *r = lines_open(fd, delim);
	struct lines_batch b[OWNED_LIVE];
	size_t first[OWNED_LIVE] = { 0 }, seen = 0;
	long got = 1;
	int ok = r != NULL;

	memset(b, 0, sizeof b);
	for (size_t call = 0; ok && got > 0; call++) {
		struct lines_batch *cur = &b[call % OWNED_LIVE];

		got = lines_next_owned(r, cur);
		ok = got >= 0 && (size_t)got == cur->n;
		first[call % OWNED_LIVE] = seen;
		seen += cur->n;
		for (size_t j = 0; ok && j < OWNED_LIVE; j++)
			ok = batch_intact(&b[j], in, first[j]);
	}
	ok = ok && seen == in->n && lines_next_owned(r, &b[0]) == 0;
	for (size_t j = 0; j < OWNED_LIVE; j++)
		lines_batch_free(&b[j]);
	lines_close(r);
	return ok;
}

/* Feeds in through a pipe in pieces of each size in turn and reads it back owned. */
static int owned_pipe_reads_as(const struct owned_input *in, char delim, const size_t *pieces,
			       size_t npieces)
{
	for (size_t i = 0; i < npieces; i++) {
		pid_t child;
		int fd = pipe_from_child(in->data, in->len, pieces[i], &child), ok;

		if (fd < 0)
			return 0;
		ok = owned_matches(fd, delim, in);
		close(fd);
		if (reap(child) < 0 || !ok)
			return 0;
	}
	return 1;
}

static void owned_batches_stay_intact_over_a_pipe(char delim, int open_end)
{
	static const size_t small[] = { 1, 3, 17 };
	static const size_t odd[] = { 13, 4093, 65537, 3 * MIB };
	struct owned_input tiny, in;
	int ok;

	CHECK(owned_input_make(&tiny, 3000, 0, delim, open_end) == 0);
	CHECK(owned_input_make(&in, 30000, 3, delim, open_end) == 0);
	CHECK(in.n == 30004 && in.len > 3 * MIB);
	ok = owned_pipe_reads_as(&tiny, delim, small, sizeof small / sizeof small[0]);
	ok = ok && owned_pipe_reads_as(&in, delim, odd, sizeof odd / sizeof odd[0]);
	owned_input_free(&tiny);
	owned_input_free(&in);
	CHECK(ok);
}

static void owned_newline_delimited(void) { owned_batches_stay_intact_over_a_pipe('\n', 0); }
static void owned_newline_open_end(void) { owned_batches_stay_intact_over_a_pipe('\n', 1); }
static void owned_nul_delimited(void) { owned_batches_stay_intact_over_a_pipe('\0', 0); }
static void owned_nul_open_end(void) { owned_batches_stay_intact_over_a_pipe('\0', 1); }

/* The same input from a regular file: reads come back full, not short. */
static void owned_batches_stay_intact_from_a_file(void)
{
	struct owned_input in;
	int fd, ok;

	CHECK(owned_input_make(&in, 30000, 3, '\n', 1) == 0);
	fd = unit_temp_file(in.data, in.len);
	CHECK(fd >= 0);
	ok = owned_matches(fd, '\n', &in);
	close(fd);
	owned_input_free(&in);
	CHECK(ok);
}

static void owned_small_cases(void)
{
	static const struct {
		const char *data;
		size_t len;
		char delim;
		struct line want[4];
		size_t n;
	} cases[] = {
		{ "\n", 1, '\n', { L("") }, 1 },
		{ "\n\n", 2, '\n', { L(""), L("") }, 2 },
		{ "a\n\nb", 4, '\n', { L("a"), L(""), L("b") }, 3 },
		{ "a\nb\n\n", 5, '\n', { L("a"), L("b"), L("") }, 3 },
		{ "a\0b\n\0\nc\0", 8, '\n', { L("a\0b"), L("\0"), L("c\0") }, 3 },
		{ "a\nb\0\0c\n", 7, '\0', { L("a\nb"), L(""), L("c\n") }, 3 },
		{ "x", 1, '\n', { L("x") }, 1 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct owned_input in = { cases[i].data, cases[i].len, cases[i].want, cases[i].n };
		int fd = unit_temp_file(cases[i].data, cases[i].len), ok;

		CHECK(fd >= 0);
		ok = owned_matches(fd, cases[i].delim, &in);
		close(fd);
		CHECKF(ok, "case %zu", i);
	}
}

static void owned_empty_input_gives_zero(void)
{
	int fd = unit_temp_file("", 0);
	struct lines_reader *r = lines_open(fd, '\n');
	struct lines_batch b;

	memset(&b, 0, sizeof b);
	CHECK(fd >= 0 && r);
	CHECK(lines_next_owned(r, &b) == 0 && b.n == 0);
	CHECK(lines_next_owned(r, &b) == 0 && b.n == 0);
	CHECK(lines_bytes_read(r) == 0);
	lines_batch_free(&b);
	lines_close(r);
	close(fd);
}

static void owned_read_error_gives_minus_one_and_errno(void)
{
	int fd = open(".", O_RDONLY | O_DIRECTORY);
	struct lines_reader *r = lines_open(fd, '\n');
	struct lines_batch b;

	memset(&b, 0, sizeof b);
	CHECK(fd >= 0 && r);
	errno = 0;
	CHECK(lines_next_owned(r, &b) == -1);
	CHECKF(errno == EISDIR, "errno %d", errno);
	lines_batch_free(&b);
	lines_close(r);
	close(fd);
}

/*
 * 50,000 records of "x\n" (100,000 bytes, under one 128 KiB read): the
 * first call hands out all of them, far more than the batch's first
 * record array (4096), so no record count limits a batch.
 */
static void owned_batch_takes_every_buffered_record(void)
{
	size_t n = 50000;
	char *data = malloc(2 * n);
	struct lines_batch b;
	struct lines_reader *r;
	int fd;

	CHECK(data);
	for (size_t i = 0; i < n; i++)
		memcpy(data + 2 * i, "x\n", 2);
	fd = unit_temp_file(data, 2 * n);
	free(data);
	r = lines_open(fd, '\n');
	memset(&b, 0, sizeof b);
	CHECK(fd >= 0 && r);
	CHECK(lines_next_owned(r, &b) == (long)n && b.n == n);
	for (size_t i = 0; i < n; i++)
		CHECKF(same(b.records[i], "x", 1), "record %zu", i);
	CHECK(lines_bytes_read(r) == 2 * n);
	CHECK(lines_next_owned(r, &b) == 0);
	lines_batch_free(&b);
	lines_close(r);
	close(fd);
}

/*
 * 1 MiB of "x\n" in a file (full reads): each call reads once, at most
 * 128 KiB, and hands out the complete records of that read, so a call
 * returns at most 64 Ki records and every byte is accounted for.
 */
static void owned_reads_at_most_128_kib_a_call(void)
{
	size_t n = MIB / 2, seen = 0, calls = 0;
	char *data = malloc(MIB);
	struct lines_batch b;
	struct lines_reader *r;
	long got;
	int fd;

	CHECK(data);
	for (size_t i = 0; i < n; i++)
		memcpy(data + 2 * i, "x\n", 2);
	fd = unit_temp_file(data, MIB);
	free(data);
	r = lines_open(fd, '\n');
	memset(&b, 0, sizeof b);
	CHECK(fd >= 0 && r);
	while ((got = lines_next_owned(r, &b)) > 0) {
		CHECKF(got <= (1 << 16), "%ld records in one call", got);
		seen += (size_t)got;
		calls++;
	}
	CHECK(got == 0 && seen == n && calls >= 8);
	CHECK(lines_bytes_read(r) == MIB);
	lines_batch_free(&b);
	lines_close(r);
	close(fd);
}

/* A pipe whose writer stays open: a complete record is handed out without waiting. */
static void owned_complete_records_come_back_without_waiting(void)
{
	int fds[2];
	struct lines_reader *r;
	struct lines_batch b[2];
	long got;

	memset(b, 0, sizeof b);
	CHECK(pipe(fds) == 0);
	CHECK(put_all(fds[1], "a\nb", 3) == 0);
	r = lines_open(fds[0], '\n');
	CHECK(r);
	unit_default_signal(SIGALRM);	/* the alarm must end the run */
	alarm(20);
	got = lines_next_owned(r, &b[0]);
	alarm(0);
	CHECK(got == 1 && same(b[0].records[0], "a", 1));
	CHECK(put_all(fds[1], "c\nd", 3) == 0);
	close(fds[1]);
	CHECK(lines_next_owned(r, &b[1]) == 1 && same(b[1].records[0], "bc", 2));
	CHECK(same(b[0].records[0], "a", 1));
	CHECK(lines_next_owned(r, &b[0]) == 1 && same(b[0].records[0], "d", 1));
	CHECK(same(b[1].records[0], "bc", 2));
	CHECK(lines_next_owned(r, &b[1]) == 0);
	lines_batch_free(&b[0]);
	lines_batch_free(&b[1]);
	lines_close(r);
	close(fds[0]);
}

/*
 * A timed call on a quiet pipe: LINES_IDLE with nothing handed out, the
 * record begun kept, and the stream goes on as before. The alarm turns a
 * wait that never ends into a failed run instead of a hang.
 */
static void owned_within_a_quiet_pipe_is_idle_and_loses_nothing(void)
{
	int fds[2];
	struct lines_reader *r;
	struct lines_batch b;
	long got, idle;

	memset(&b, 0, sizeof b);
	CHECK(pipe(fds) == 0);
	CHECK(put_all(fds[1], "a\nb", 3) == 0);
	r = lines_open(fds[0], '\n');
	CHECK(r);
	unit_default_signal(SIGALRM);	/* the alarm must end the run */
	alarm(20);
	got = lines_next_owned_within(r, &b, 10);
	idle = lines_next_owned_within(r, &b, 10);
	alarm(0);
	CHECKF(got == 1, "got %ld", got);
	CHECKF(idle == LINES_IDLE && b.n == 0, "idle %ld, n %zu", idle, b.n);
	CHECK(put_all(fds[1], "c\nd", 3) == 0);
	CHECK(lines_next_owned_within(r, &b, 10000) == 1 && same(b.records[0], "bc", 2));
	close(fds[1]);
	CHECK(lines_next_owned_within(r, &b, 10000) == 1 && same(b.records[0], "d", 1));
	CHECK(lines_next_owned_within(r, &b, 10000) == 0);
	lines_batch_free(&b);
	lines_close(r);
	close(fds[0]);
}

/* Input already there is read, however short the wait: a timeout of 0 is not idle. */
static void owned_within_zero_reads_what_is_there(void)
{
	int fds[2];
	struct lines_reader *r;
	struct lines_batch b;

	memset(&b, 0, sizeof b);
	CHECK(pipe(fds) == 0);
	CHECK(put_all(fds[1], "x\ny\n", 4) == 0);
	r = lines_open(fds[0], '\n');
	CHECK(r);
	CHECK(lines_next_owned_within(r, &b, 0) == 2 && same(b.records[1], "y", 1));
	CHECK(lines_next_owned_within(r, &b, 0) == LINES_IDLE);
	close(fds[1]);
	CHECK(lines_next_owned_within(r, &b, 0) == 0);
	lines_batch_free(&b);
	lines_close(r);
	close(fds[0]);
}

static void batch_free_of_a_zeroed_batch_is_harmless(void)
{
	struct lines_batch b;

	memset(&b, 0, sizeof b);
	lines_batch_free(&b);
	lines_batch_free(&b);
	CHECK(b.records == NULL && b.bytes == NULL && b.n == 0 && b.bytes_cap == 0);
}

/* The answers of keep_from, asked once each in order (next counts them: -1 once out of order). */
struct keep_answers {
	const unsigned char *keep;
	long next;
};

static int keep_from(void *ctx, size_t r)
{
	struct keep_answers *a = ctx;

	if (a->next < 0 || (size_t)a->next != r) {
		a->next = -1;
		return 0;
	}
	a->next++;
	return a->keep[r];
}

/* Records taken out keep their lines: each kept one maps to its index as read. */
static void batch_keep_remembers_where_records_were_read(void)
{
	struct line recs[6] = { { "a", 1 }, { "b", 1 }, { "c", 1 }, { "d", 1 }, { "e", 1 }, { "f", 1 } };
	const unsigned char keep[6] = { 0, 1, 0, 0, 1, 1 }, none[6] = { 0 };
	struct keep_answers some = { keep, 0 }, nothing = { none, 0 };
	struct lines_batch b;

	memset(&b, 0, sizeof b);
	b.records = malloc(sizeof recs);
	if (b.records == NULL)
		return;
	memcpy(b.records, recs, sizeof recs);
	b.n = 6;
	CHECK(lines_batch_read_index(&b, 3) == 3);	/* nothing taken out */
	CHECK(lines_batch_keep(&b, keep_from, &some) == 0);
	CHECK(some.next == 6);	/* each record asked about once, in order */
	CHECK(b.n == 3 && b.records[0].data[0] == 'b' && b.records[2].data[0] == 'f');
	CHECK(lines_batch_read_index(&b, 0) == 1 && lines_batch_read_index(&b, 1) == 4 &&
	      lines_batch_read_index(&b, 2) == 5 && lines_batch_read_index(&b, 3) == 6);
	b.n = 1;	/* cut before record 1: the lines up to it are 4 */
	CHECK(lines_batch_read_index(&b, b.n) == 4);
	b.n = 2;
	CHECK(lines_batch_keep(&b, keep_from, &nothing) == 0);
	CHECK(nothing.next == 2 && b.n == 0 && lines_batch_read_index(&b, 0) == 2);
	lines_batch_free(&b);
	CHECK(b.kept == NULL && !b.taken_out && lines_batch_read_index(&b, 2) == 2);
}

/*
 * lines_estimate: exact for records of one length; 1 for a file without
 * a delimiter; 0 for what it cannot tell (empty, a pipe, gzip data) and
 * the descriptor's offset left where it was.
 */
static void estimates_records_from_a_files_head(void)
{
	static const unsigned char gzip_head[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 'x', '\n' };
	size_t n = 200000, len = n * 8;
	char *text = malloc(len + 1);	/* snprintf's NUL after the last record */
	int fd, p[2];

	CHECK(text != NULL);
	for (size_t i = 0; i < n; i++)
		snprintf(text + i * 8, 9, "%07zu\n", i % 10000000);
	fd = unit_temp_file(text, len);
	CHECK(fd >= 0);
	CHECK(lseek(fd, 5, SEEK_SET) == 5);
	CHECKF(lines_estimate(fd, '\n') == n, "%llu", (unsigned long long)lines_estimate(fd, '\n'));
	CHECK(lseek(fd, 0, SEEK_CUR) == 5);
	CHECK(lines_estimate(fd, '\0') == 1);
	close(fd);
	CHECK((fd = unit_temp_file("", 0)) >= 0 && lines_estimate(fd, '\n') == 0);
	close(fd);
	CHECK((fd = unit_temp_file((const char *)gzip_head, sizeof gzip_head)) >= 0 && lines_estimate(fd, '\n') == 0);
	close(fd);
	CHECK(pipe(p) == 0 && write(p[1], "a\nb\n", 4) == 4);
	CHECK(lines_estimate(p[0], '\n') == 0);
	close(p[0]);
	close(p[1]);
	free(text);
}

void suite_lines(void)
{
	unit_run("lines: empty input gives no records", empty_input_gives_no_records);
	unit_run("lines: a file's records estimated from its head; 0 for empty, pipe, gzip",
		 estimates_records_from_a_files_head);
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
	unit_run("lines: owned batches stay intact while 3 later calls fill other batches ('\\n', pipe, short odd writes, 1 MiB records, NULs, empties)",
		 owned_newline_delimited);
	unit_run("lines: owned batches stay intact ('\\n', pipe, no final delimiter)", owned_newline_open_end);
	unit_run("lines: owned batches stay intact ('\\0' delimiter, pipe, newlines as data)", owned_nul_delimited);
	unit_run("lines: owned batches stay intact ('\\0' delimiter, pipe, no final delimiter)", owned_nul_open_end);
	unit_run("lines: owned batches stay intact (regular file, 1 MiB records)",
		 owned_batches_stay_intact_from_a_file);
	unit_run("lines: owned batches split empty records, NULs and a missing last delimiter as lines_next_batch does",
		 owned_small_cases);
	unit_run("lines: owned: empty input gives 0, and 0 again", owned_empty_input_gives_zero);
	unit_run("lines: owned: a read error (a directory) gives -1 with errno EISDIR",
		 owned_read_error_gives_minus_one_and_errno);
	unit_run("lines: owned: a batch takes every complete record buffered, no count limit",
		 owned_batch_takes_every_buffered_record);
	unit_run("lines: owned: each call reads at most 128 KiB", owned_reads_at_most_128_kib_a_call);
	unit_run("lines: owned within a timeout: a quiet pipe gives LINES_IDLE, and the record begun is kept",
		 owned_within_a_quiet_pipe_is_idle_and_loses_nothing);
	unit_run("lines: owned within a timeout of 0: input already there is read, the end is the end",
		 owned_within_zero_reads_what_is_there);
	unit_run("lines: owned: complete records come back without waiting for more input",
		 owned_complete_records_come_back_without_waiting);
	unit_run("lines: freeing a zeroed batch (twice) is harmless", batch_free_of_a_zeroed_batch_is_harmless);
	unit_run("writer: order is kept around records larger than the buffer",
		 writer_keeps_order_around_oversized_puts);
	unit_run("writer: line_buffered makes each record readable at once",
		 writer_line_buffered_flushes_each_record);
	unit_run("writer: /dev/full fails with ENOSPC at flush and every later call repeats it",
		 writer_full_disk_fails_at_flush_and_stays_failed);
	unit_run("writer: a closed descriptor gives EBADF", writer_closed_descriptor_gives_ebadf);
	unit_run("lines: a batch with records taken out keeps where each was read",
		 batch_keep_remembers_where_records_were_read);
}
