/* SPDX-License-Identifier: MIT */
/*
 * test_ranges.c - reading a regular file in ranges cut at record ends
 * (lines_open_range, lib/io/lines.c; lib/io/ranges.c).
 *
 * The reference is always one plain reader over the same file from the
 * same start. For ranges read one after another, the records of the
 * ranges in order must be exactly the reference's, record for record
 * (which is more than the multiset the threads promise); for ranges read
 * by several threads at once, the sorted records must be the sorted
 * reference. Files come from a fixed-seed generator: records of random
 * lengths (empties, 1 MiB and 3 MiB ones among them, longer than many
 * ranges and than the reader's 1 MiB buffer), the delimiter as data where
 * it is not the delimiter, with and without a final delimiter; tilings
 * are random cut points, and for small files every cut point there is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"
#include "ranges.h"
#include "unit.h"

/* A record list: copies of the bytes, for comparing across readers. */
struct recs {
	struct line *v;
	size_t n, cap;
};

static int recs_add(struct recs *r, struct line l)
{
	char *copy = malloc(l.len ? l.len : 1);

	if (copy == NULL)
		return -1;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct line *bigger = realloc(r->v, cap * sizeof *bigger);

		if (bigger == NULL) {
			free(copy);
			return -1;
		}
		r->v = bigger;
		r->cap = cap;
	}
	memcpy(copy, l.data, l.len);
	r->v[r->n++] = (struct line){ copy, l.len };
	return 0;
}

static void recs_free(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free((void *)r->v[i].data);
	free(r->v);
	memset(r, 0, sizeof *r);
}

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->data, y->data, n) : 0;

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int recs_equal(const struct recs *a, const struct recs *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (line_cmp(&a->v[i], &b->v[i]) != 0)
			return 0;
	return 1;
}


/* Every record of r until its end into out; 0, or -1 on an error. */
static int drain(struct lines_reader *r, struct recs *out, int owned)
{
	struct lines_batch b = { 0 };
	struct line batch[7];
	long n;

	do {
		n = owned ? lines_next_owned(r, &b) : lines_next_batch(r, batch, 7);
		for (long i = 0; i < n; i++)
			if (recs_add(out, owned ? b.records[i] : batch[i]) < 0)
				n = -1;
	} while (n > 0);
	lines_batch_free(&b);
	return n < 0 ? -1 : 0;
}

/* The reference: one plain reader from offset start. */
static int serial_read(int fd, uint64_t start, char delim, struct recs *out)
{
	struct lines_reader *r;
	int rc;

	if (lseek(fd, (off_t)start, SEEK_SET) < 0 || (r = lines_open(fd, delim)) == NULL)
		return -1;
	rc = drain(r, out, 0);
	lines_close(r);
	return rc;
}

/* The ranges cut at cuts[0..n) (ascending, inside (start, size)) read in order. */
static int ranged_read(int fd, uint64_t start, uint64_t size, const uint64_t *cuts, size_t n,
		       char delim, int owned, struct recs *out)
{
	struct lines_reader *r = lines_open_range(fd, delim);
	uint64_t from = start;
	int rc = r ? 0 : -1;

	for (size_t i = 0; i <= n && rc == 0; i++) {
		uint64_t to = i < n ? cuts[i] : size;

		lines_set_range(r, from, to, from == start);
		rc = drain(r, out, owned);
		from = to;
	}
	lines_close(r);
	return rc;
}

/*
 * A file of about len bytes: records of random length, one in `big` of
 * them long (up to 3 MiB), the other byte value of {'\n', '\0'} as data,
 * a final delimiter or not.
 */
static char *make_file(uint64_t *rng, size_t len, char delim, unsigned big, size_t *out_len)
{
	char *data = malloc(len + 1);
	size_t at = 0;

	if (data == NULL)
		return NULL;
	while (at < len) {
		uint64_t r = unit_splitmix64(rng);
		size_t rec = big && r % big == 0 ? (size_t)(r >> 8) % (3 << 20) : (size_t)(r >> 8) % 40;

		for (size_t i = 0; i < rec && at < len; i++) {
			uint64_t c = unit_splitmix64(rng) % 64;

			data[at++] = c == 0 ? (delim ? '\0' : '\n') : (char)('a' + c % 26);
		}
		if (at < len)
			data[at++] = delim;
	}
	if (unit_splitmix64(rng) % 2 && len > 0)
		data[len - 1] = 'z';	/* no final delimiter */
	*out_len = len;
	return data;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* n distinct random cut points in (start, size), ascending; returns how many. */
static size_t random_cuts(uint64_t *rng, uint64_t start, uint64_t size, uint64_t *cuts, size_t n)
{
	size_t k = 0;

	if (size <= start + 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		cuts[i] = start + 1 + unit_splitmix64(rng) % (size - start - 1);
	qsort(cuts, n, sizeof *cuts, cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || cuts[i] != cuts[k - 1])
			cuts[k++] = cuts[i];
	return k;
}

/* Random files, random tilings: the ranges in order read as the whole. */
static void random_tilings_read_as_one_reader(void)
{
	uint64_t rng = 17, cuts[64];
	static const size_t sizes[] = { 0, 1, 2, 5, 40, 300, 4096, 70000, 5u << 20 };

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		for (int trial = 0; trial < (sizes[s] > 100000 ? 3 : 30); trial++) {
			char delim = trial % 3 == 2 ? '\0' : '\n';
			size_t len, n;
			char *data = make_file(&rng, sizes[s], delim, sizes[s] > 100000 ? 50 : 0, &len);
			int fd = data ? unit_temp_file(data, len) : -1;
			uint64_t start = len && trial % 4 == 3 ? unit_splitmix64(&rng) % len : 0;
			struct recs want = { 0 }, got = { 0 };

			/* a start inside the file is where a record begins: just after a delimiter */
			while (start > 0 && data[start - 1] != delim)
				start--;
			n = random_cuts(&rng, start, len, cuts, 1 + unit_splitmix64(&rng) % 64);
			CHECK(fd >= 0);
			CHECK(serial_read(fd, start, delim, &want) == 0);
			CHECK(ranged_read(fd, start, len, cuts, n, delim, trial % 2, &got) == 0);
			CHECKF(recs_equal(&want, &got), "size %zu trial %d: %zu records, ranges gave %zu",
			       len, trial, want.n, got.n);
			recs_free(&want);
			recs_free(&got);
			close(fd);
			free(data);
		}
	}
}

/* Two ranges, cut at every position of small files: each record once. */
static void every_cut_position_reads_each_record_once(void)
{
	uint64_t rng = 99;

	for (int trial = 0; trial < 40; trial++) {
		char delim = trial % 2 ? '\0' : '\n';
		size_t len;
		char *data = make_file(&rng, 1 + (size_t)(unit_splitmix64(&rng) % 90), delim, 0, &len);
		int fd = data ? unit_temp_file(data, len) : -1;
		struct recs want = { 0 };

		CHECK(fd >= 0);
		CHECK(serial_read(fd, 0, delim, &want) == 0);
		for (uint64_t cut = 1; cut < len; cut++) {
			struct recs got = { 0 };
			uint64_t two[2] = { cut, cut + 1 };

			/* one cut, then two adjacent ones: ranges of a single byte */
			for (size_t n = 1; n <= (cut + 1 < len ? 2u : 1u); n++) {
				CHECK(ranged_read(fd, 0, len, two, n, delim, 0, &got) == 0);
				CHECKF(recs_equal(&want, &got), "%zu bytes cut at %llu (%zu cuts)", len,
				       (unsigned long long)cut, n);
				recs_free(&got);
			}
		}
		recs_free(&want);
		close(fd);
		free(data);
	}
}

/* Edge files named one by one: empty, one delimiter, no delimiter, one huge line. */
static void edge_files_read_as_one_reader(void)
{
	static const struct { const char *data; size_t len; } files[] = {
		{ "", 0 }, { "\n", 1 }, { "\n\n\n", 3 }, { "abc", 3 }, { "abc\n", 4 },
		{ "a\nb", 3 }, { "\nab", 3 },
	};
	uint64_t cuts[3] = { 1, 2, 3 };

	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		int fd = unit_temp_file(files[f].data, files[f].len);
		struct recs want = { 0 };

		CHECK(fd >= 0);
		CHECK(serial_read(fd, 0, '\n', &want) == 0);
		for (size_t n = 0; n < 3 && (n == 0 || cuts[n - 1] < files[f].len); n++) {
			struct recs got = { 0 };

			CHECK(ranged_read(fd, 0, files[f].len, cuts, n, '\n', 1, &got) == 0);
			CHECKF(recs_equal(&want, &got), "file %zu, %zu cuts", f, n);
			recs_free(&got);
		}
		recs_free(&want);
		close(fd);
	}
}

/* 4 MiB of one line with no delimiter, in ranges of 4 KiB: one record, from the first range. */
static void one_huge_line_is_one_record(void)
{
	size_t len = 4u << 20;
	char *data = malloc(len);
	int fd;
	struct ranges *rs;
	struct lines_batch b = { 0 };
	long n, total = 0;

	CHECK(data != NULL);
	memset(data, 'x', len);
	fd = unit_temp_file(data, len);
	free(data);
	CHECK(fd >= 0);
	rs = ranges_open(fd, 0, len, '\n', 1, 4096);
	CHECK(rs != NULL);
	while ((n = ranges_next(rs, 0, &b)) > 0) {
		CHECK(b.n == 1 && b.records[0].len == len);
		total += n;
	}
	CHECK(n == 0 && total == 1 && ranges_error(rs) == 0);
	CHECK(ranges_bytes_read(rs) == len);
	lines_batch_free(&b);
	ranges_close(rs);
	close(fd);
}

/* Threads reading one file's ranges at once. */
struct shared_read {
	struct ranges *rs;
	int t;
	struct recs got;
	int failed;
};

static void *read_thread(void *arg)
{
	struct shared_read *s = arg;
	struct lines_batch b = { 0 };
	long n;

	while ((n = ranges_next(s->rs, s->t, &b)) > 0)
		for (long i = 0; i < n; i++)
			if (recs_add(&s->got, b.records[i]) < 0)
				s->failed = 1;
	if (n < 0)
		s->failed = 1;
	lines_batch_free(&b);
	return NULL;
}

/* 1..8 threads on random files and range sizes: the multiset of records is the serial one. */
static void threads_read_every_record_once(void)
{
	uint64_t rng = 5;

	for (int trial = 0; trial < 24; trial++) {
		char delim = trial % 3 ? '\n' : '\0';
		int threads = 1 + trial % 8;
		size_t len, size = trial % 6 == 5 ? 4u << 20 : (size_t)(unit_splitmix64(&rng) % 300000);
		char *data = make_file(&rng, size, delim, trial % 6 == 5 ? 20 : 0, &len);
		int fd = data ? unit_temp_file(data, len) : -1;
		uint64_t step = 1 + unit_splitmix64(&rng) % 20000;
		struct recs want = { 0 }, all = { 0 };
		struct shared_read each[8];
		pthread_t ids[8];
		struct ranges *rs;

		free(data);
		CHECK(fd >= 0);
		CHECK(serial_read(fd, 0, delim, &want) == 0);
		rs = ranges_open(fd, 0, len, delim, threads, step);
		CHECK(rs != NULL);
		for (int t = 0; t < threads; t++) {
			each[t] = (struct shared_read){ rs, t, { 0 }, 0 };
			CHECK(pthread_create(&ids[t], NULL, read_thread, &each[t]) == 0);
		}
		for (int t = 0; t < threads; t++) {
			pthread_join(ids[t], NULL);
			CHECK(!each[t].failed);
			for (size_t i = 0; i < each[t].got.n; i++)
				CHECK(recs_add(&all, each[t].got.v[i]) == 0);
			recs_free(&each[t].got);
		}
		CHECK(ranges_error(rs) == 0 && ranges_bytes_read(rs) == len);
		qsort(want.v, want.n, sizeof *want.v, line_cmp);
		qsort(all.v, all.n, sizeof *all.v, line_cmp);
		CHECKF(recs_equal(&want, &all), "trial %d: %zu records, %d threads gave %zu", trial,
		       want.n, threads, all.n);
		recs_free(&want);
		recs_free(&all);
		ranges_close(rs);
		close(fd);
	}
}

/* A descriptor that cannot be read: -1 with errno, kept for every reader. */
static void read_error_stops_every_reader(void)
{
	struct ranges *rs = ranges_open(-1, 0, 10u << 20, '\n', 2, 0);
	struct lines_batch b = { 0 };

	CHECK(rs != NULL);
	errno = 0;
	CHECK(ranges_next(rs, 0, &b) == -1 && errno == EBADF);
	CHECK(ranges_error(rs) == EBADF);
	CHECK(ranges_next(rs, 1, &b) == 0);
	lines_batch_free(&b);
	ranges_close(rs);
}

/* The plan: at least RANGES_MIN a range, and no more threads than ranges. */
static void small_files_get_few_threads(void)
{
	CHECK(ranges_step(0, 4) == RANGES_MIN);
	CHECK(ranges_threads(RANGES_MIN, 8) == 1);
	CHECK(ranges_threads(RANGES_MIN + 1, 8) == 2);
	CHECK(ranges_threads(100 * RANGES_MIN, 8) == 8);
	CHECK(ranges_threads(UINT64_C(1) << 40, 1000) == 16);
	CHECK(ranges_step(UINT64_C(1) << 40, 2) == (uint64_t)64 << 20);
}

/* Range i of rs read with ranges_read by reader t, appended to out; 0 or -1. */
static int numbered_read(struct ranges *rs, uint64_t i, int t, struct lines_batch *b,
			 struct recs *out)
{
	long n = ranges_read(rs, i, t, b);

	if (n < 0 || (size_t)n != b->n)
		return -1;
	for (long k = 0; k < n; k++)
		if (recs_add(out, b->records[k]) < 0)
			return -1;
	return 0;
}

/*
 * Ranges read by number, each whole into one batch: range i's batch is
 * exactly the records lines_set_range hands out for [from, to) of range
 * i, whichever reader reads it and in whatever order the ranges are read,
 * so the batches in number order are the serial read. Files up to 5 MiB
 * with 1-3 MiB records (longer than the ranges and the 1 MiB buffer).
 */
static void numbered_ranges_are_the_same_batches_in_any_order(void)
{
	uint64_t rng = 41;

	for (int trial = 0; trial < 18; trial++) {
		char delim = trial % 3 == 1 ? '\0' : '\n';
		size_t len, size = trial % 6 == 5 ? 5u << 20 : (size_t)(unit_splitmix64(&rng) % 200000);
		char *data = make_file(&rng, size, delim, trial % 6 == 5 ? 20 : 0, &len);
		int fd = data ? unit_temp_file(data, len) : -1;
		uint64_t step = 1 + unit_splitmix64(&rng) % 30000, count;
		struct recs want = { 0 }, inorder = { 0 };
		struct lines_batch b = { 0 };
		struct lines_reader *one = lines_open_range(fd, delim);
		struct ranges *rs = ranges_open(fd, 0, len, delim, 3, step);

		free(data);
		CHECK(fd >= 0 && one != NULL && rs != NULL);
		CHECK(serial_read(fd, 0, delim, &want) == 0);
		count = ranges_count(rs);
		CHECK(count == len / step + (len % step != 0));
		/* backwards, readers taking turns: each batch against the range read alone */
		for (uint64_t i = count; i-- > 0;) {
			struct recs batch = { 0 }, alone = { 0 };
			uint64_t from = i * step;

			CHECK(numbered_read(rs, i, (int)(i % 3), &b, &batch) == 0);
			lines_set_range(one, from, ranges_end_of(rs, i), i == 0);
			CHECK(drain(one, &alone, 1) == 0);
			CHECKF(recs_equal(&alone, &batch), "trial %d range %llu: %zu records, batch %zu",
			       trial, (unsigned long long)i, alone.n, batch.n);
			recs_free(&batch);
			recs_free(&alone);
		}
		for (uint64_t i = 0; i < count; i++)
			CHECK(numbered_read(rs, i, (int)(i % 2), &b, &inorder) == 0);
		CHECKF(recs_equal(&want, &inorder), "trial %d: %zu records, numbered ranges gave %zu",
		       trial, want.n, inorder.n);
		CHECK(ranges_read(rs, count, 0, &b) == 0 && b.n == 0);
		CHECK(ranges_error(rs) == 0);
		recs_free(&want);
		recs_free(&inorder);
		lines_batch_free(&b);
		lines_close(one);
		ranges_close(rs);
		close(fd);
	}
}

/* A 3 MiB line with no delimiter in 4 KiB ranges: range 0 holds it all, the others nothing. */
static void numbered_huge_line_is_range_zero(void)
{
	size_t len = 3u << 20;
	char *data = malloc(len);
	struct lines_batch b = { 0 };
	struct ranges *rs;
	int fd;

	CHECK(data != NULL);
	memset(data, 'y', len);
	fd = unit_temp_file(data, len);
	free(data);
	CHECK(fd >= 0);
	rs = ranges_open(fd, 0, len, '\n', 1, 4096);
	CHECK(rs != NULL && ranges_count(rs) == len / 4096);
	CHECK(ranges_read(rs, 0, 0, &b) == 1 && b.records[0].len == len);
	CHECK(ranges_read(rs, 1, 0, &b) == 0 && ranges_read(rs, ranges_count(rs) - 1, 0, &b) == 0);
	CHECK(ranges_end_of(rs, ranges_count(rs) - 1) == len);
	lines_batch_free(&b);
	ranges_close(rs);
	close(fd);
}

/* A descriptor that cannot be read: ranges_read is -1 with errno, noted for ranges_error. */
static void numbered_read_error_is_reported(void)
{
	struct ranges *rs = ranges_open(-1, 0, 4u << 20, '\n', 1, RANGES_MIN);
	struct lines_batch b = { 0 };

	CHECK(rs != NULL && ranges_count(rs) == (4u << 20) / RANGES_MIN);
	errno = 0;
	CHECK(ranges_ordered_step(-1, 0, 4u << 20, '\n') == 0 && errno == EBADF);
	errno = 0;
	CHECK(ranges_read(rs, 2, 0, &b) == -1 && errno == EBADF);
	CHECK(ranges_error(rs) == EBADF);
	lines_batch_free(&b);
	ranges_close(rs);
}

/*
 * The ordered range size follows the first 64 KiB's records: 8192 of
 * their length, within [64 KiB, 1 MiB]; from start, not from 0.
 */
static void ordered_step_follows_record_length(void)
{
	size_t len = 256u << 10;
	char *data = malloc(len);
	int fd;

	CHECK(data != NULL);
	/* 100-byte records up to 128 KiB, then 10-byte ones */
	for (size_t i = 0; i < len; i++)
		data[i] = (i < (128u << 10) ? i % 100 == 99 : i % 10 == 9) ? '\n' : 'a';
	fd = unit_temp_file(data, len);
	CHECK(fd >= 0);
	/* 65536 / 655 records (the 656th ends past the sample) = 100 bytes a record */
	CHECK(ranges_ordered_step(fd, 0, len, '\n') == 100 * 8192);
	/* from 128 KiB: 10-byte records, 80 KiB */
	CHECK(ranges_ordered_step(fd, 128u << 10, len, '\n') == 10 * 8192);
	/* no delimiter at all: the most */
	CHECK(ranges_ordered_step(fd, 0, len, '\0') == RANGES_ORDERED_MAX);
	/* 'a' as the delimiter, records of a byte or none: the least */
	CHECK(ranges_ordered_step(fd, 0, len, 'a') == RANGES_ORDERED_MIN);
	/* a short file is sampled whole: the last 100 bytes, 10 records of 10 bytes */
	CHECK(ranges_ordered_step(fd, len - 100, len, '\n') == 10 * 8192);
	free(data);
	close(fd);
}

void suite_ranges(void)
{
	unit_run("ranges: random files in random tilings read as one reader does (order kept)",
		 random_tilings_read_as_one_reader);
	unit_run("ranges: a cut at every position of small files reads each record once",
		 every_cut_position_reads_each_record_once);
	unit_run("ranges: empty, delimiter-only, unterminated and one-line files read as one reader does",
		 edge_files_read_as_one_reader);
	unit_run("ranges: a 4 MiB line in 4 KiB ranges is one record", one_huge_line_is_one_record);
	unit_run("ranges: 1..8 threads read every record exactly once (multiset = serial read)",
		 threads_read_every_record_once);
	unit_run("ranges: a read error is -1 with errno, and stops every reader",
		 read_error_stops_every_reader);
	unit_run("ranges: small files get few threads, ranges stay within bounds",
		 small_files_get_few_threads);
	unit_run("ranges: range i read by number is one batch, the same in any order, by any reader",
		 numbered_ranges_are_the_same_batches_in_any_order);
	unit_run("ranges: a 3 MiB line read by number is range 0's one record", numbered_huge_line_is_range_zero);
	unit_run("ranges: a read by number that fails is -1 with errno", numbered_read_error_is_reported);
	unit_run("ranges: the ordered range size is 8192 records of the first 64 KiB's length, in bounds",
		 ordered_step_follows_record_length);
}
