/* SPDX-License-Identifier: MIT */
/*
 * ranged.c - big regular files read in ranges by every thread (order-free
 * stages: bfbuild, bfgrep -c/-l/-L/-q, bfcount; or consumed in file order
 * by inorder.c for ordered stages: bfuniq), other inputs handed to the
 * ordered reader (inputs.c).
 */
#include "internal.h"
#include "../cli_fields.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream.h"
#include "ranges.h"

/* What cli_each_input_ranged passes along to each input it reads in ranges. */
struct ranged_run {
	char delim;
	const struct cli_stage *stage;
	const struct cli_input_events *events;
	void *ctx;
	uint64_t base;		/* bytes of the inputs before, for progress */
	int in_order;		/* consumed in file order (inorder.c), not by every thread */
};

/* One input read in ranges by every thread: the batch each has in hand, and progress. */
struct ranged_input {
	struct ranges *rs;
	const struct ranged_run *run;
	struct lines_batch batches[CLI_SLOTS];
	atomic_int out_of_memory;	/* a prepare failed: stop */
	atomic_uint_least64_t lines;	/* records consumed */
	uint64_t lines_before;		/* of the inputs before this one */
};

static int ranged_fill(void *ctx, unsigned slot, size_t *units)
{
	struct ranged_input *r = ctx;
	struct lines_batch *b = &r->batches[slot];

	if (atomic_load_explicit(&r->out_of_memory, memory_order_relaxed) ||
	    ranges_next(r->rs, (int)slot, b) <= 0)
		return 0;
	if (cli_shard_batch(b) == 0 &&
	    r->run->stage->prepare(r->run->ctx, slot, b->records, b->n, units) == 0)
		return 1;
	atomic_store(&r->out_of_memory, 1);
	*units = 0;
	b->n = 0;	/* consumed as nothing */
	return 1;
}

static void ranged_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct ranged_input *r = ctx;

	r->run->stage->work(r->run->ctx, slot, from, to);
}

/* Any thread; slot 0 is the calling thread, which alone draws progress. */
static int ranged_consume(void *ctx, unsigned slot)
{
	struct ranged_input *r = ctx;
	const struct lines_batch *b = &r->batches[slot];
	uint64_t lines;
	int rc;

	if (b->n == 0)
		return 0;
	rc = r->run->stage->consume(r->run->ctx, slot, b->records, b->n);
	lines = atomic_fetch_add_explicit(&r->lines, b->n, memory_order_relaxed) + b->n;
	if (slot == 0) {
		cli_progress_at(r->lines_before + lines, r->run->base + ranges_bytes_read(r->rs));
	}
	return rc;
}

/*
 * Input path, open on fd, read in ranges [start, end) by threads: begin,
 * the run, the read error if any, end. Returns the input's status (0 or
 * -1); *stopped is set when the program stopped the run.
 */
static int read_in_ranges(const struct ranged_run *run, const char *path, int fd, uint64_t start,
			  uint64_t end, int threads, int *stopped)
{
	static const struct pipeline_free_fns fns = { ranged_fill, ranged_work, ranged_consume };
	struct ranged_input r = { .run = run, .lines_before = cli_progress_lines() };
	int rc, err;

	r.rs = ranges_open(fd, start, end, run->delim, threads, 0);
	if (r.rs == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	atomic_init(&r.out_of_memory, 0);
	atomic_init(&r.lines, 0);
	if (run->events)
		run->events->begin(run->ctx, path);
	rc = pipeline_run_free(&fns, &r, threads);
	err = ranges_error(r.rs);
	if (atomic_load(&r.out_of_memory) || err == ENOMEM)
		cli_fatal("%s", strerror(ENOMEM));
	cli_progress_set(r.lines_before + atomic_load(&r.lines), run->base + ranges_bytes_read(r.rs));
	ranges_close(r.rs);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		lines_batch_free(&r.batches[i]);
	if (err != 0 && !cli_inputs_quiet)
		cli_warn("%s: %s", cli_display_name(path), strerror(err));
	*stopped = rc == 1 || (run->events && run->events->end(run->ctx, path));
	return err != 0 ? -1 : 0;
}

/*
 * Whether path (standard input from offset at) will be read decompressed:
 * its lines are not where its bytes are, so it cannot be cut in ranges.
 * 1 yes, 0 no (or it cannot be opened: the stream's open reports that),
 * -1 with errno when its first bytes cannot be read.
 */
static int decompressed(const char *path, int is_stdin, off_t at)
{
	int fd, yes;

	if (!cli_decompress)
		return 0;
	if (is_stdin)
		return instream_compressed_at(STDIN_FILENO, (uint64_t)at);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	yes = instream_compressed_at(fd, 0);
	if (yes < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	return yes;
}

/* internal.h */
int cli_ranged_plan(const char *path, int threads, uint64_t *start, uint64_t *end)
{
	int is_stdin = strcmp(path, "-") == 0, compressed;
	struct stat st;
	off_t at = 0;

	if ((is_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st)) < 0 || !S_ISREG(st.st_mode))
		return 1;
	if (is_stdin && (at = lseek(STDIN_FILENO, 0, SEEK_CUR)) < 0)
		return 1;
	if (st.st_size <= at)
		return 1;
	compressed = decompressed(path, is_stdin, at);
	if (compressed != 0)
		return compressed > 0 ? 1 : -1;
	*start = (uint64_t)at;
	*end = (uint64_t)st.st_size;
	return ranges_threads(*end - *start, threads);
}

/* path in ranges with threads: opened (and an open error reported) as a stream would be. */
static int ranged_input(const struct ranged_run *run, const char *path, uint64_t start,
			uint64_t end, int threads, int *stopped)
{
	int is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	int status;

	*stopped = 0;
	if (fd < 0) {
		if (errno == ENOMEM)
			cli_fatal("%s", strerror(errno));
		if (!cli_inputs_quiet)
			cli_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	if (run->in_order)
		status = cli_read_in_order(path, fd, start, end, run->delim, run->stage, run->ctx,
					   run->base, stopped);
	else
		status = read_in_ranges(run, path, fd, start, end, threads, stopped);
	/* standard input is left where one reader reading all of it would leave it */
	if (is_stdin && status == 0 && !*stopped)
		(void)lseek(fd, (off_t)end, SEEK_SET);
	if (!is_stdin)
		close(fd);
	return status;
}

/* An input whose first bytes could not be read: reported as an open error is. */
static int unreadable(const char *path)
{
	if (errno == ENOMEM)
		cli_fatal("%s", strerror(errno));
	if (!cli_inputs_quiet)
		cli_warn("%s: %s", cli_display_name(path), strerror(errno));
	return -1;
}

/*
 * Each input's plan is made once (cli_ranged_plan reads its first bytes, and
 * a second look could see something else): the plan that ends a run of
 * streams is kept for the next turn in use, PLAN_NONE when there is none.
 */
#define PLAN_NONE (-2)

/*
 * paths (standard input when there are none), each read as run says when
 * cli_ranged_plan says so, runs of the others through the ordered
 * pipeline with `ordered`.
 */
static int each_input(struct ranged_run *run, char *const *paths, int npaths,
		      const struct cli_stage *ordered, int threads)
{
	int status = 0, stopped = 0, i = 0, use = PLAN_NONE;
	uint64_t start = 0, end = 0;

	if (npaths == 0) {
		paths = cli_standard_input;
		npaths = 1;
	}
	cli_progress_inputs(cli_progress_inputs_size(paths, npaths));
	while (i < npaths && !stopped && cli_stop_signal() == 0) {
		int j = i + 1;

		if (use == PLAN_NONE)
			use = cli_ranged_plan(paths[i], threads, &start, &end);
		if (use != 1) {
			status |= use < 0 ? unreadable(paths[i]) :
				  ranged_input(run, paths[i], start, end, use, &stopped);
			run->base += use < 0 ? 0 : end - start;
			i++;
			use = PLAN_NONE;
			continue;
		}
		/* a run of inputs to read as streams: one ordered pipeline for them all */
		while (j < npaths && (use = cli_ranged_plan(paths[j], threads, &start, &end)) == 1)
			j++;
		if (j == npaths || use == 1)
			use = PLAN_NONE;
		status |= cli_ordered_inputs(paths + i, j - i, run->delim, ordered, run->events,
					 run->ctx, &run->base, j < npaths, &stopped);
		i = j;
	}
	cli_progress_inputs_end();
	return status;
}

int cli_each_input_ranged(char *const *paths, int npaths, char delim, const struct cli_stage *ordered,
			  const struct cli_stage *ranged, const struct cli_input_events *events,
			  void *ctx)
{
	struct ranged_run run = { delim, ranged, events, ctx, 0, 0 };
	int threads = pipeline_threads();

	if (threads < 2 || cli_inputs_recursive || cli_fields_in_order())
		return cli_each_input(paths, npaths, delim, ordered, events, ctx);
	return each_input(&run, paths, npaths, ordered, threads);
}

int cli_each_batch_ranged(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
			  void *ctx)
{
	struct ranged_run run = { delim, stage, NULL, ctx, 0, 1 };

	if (cli_inputs_recursive || cli_fields_one_stream())
		return cli_each_batch(paths, npaths, delim, stage, ctx);
	/*
	 * With one thread too: the same batches for every thread count, and
	 * what a program does per batch (bfuniq's over-capacity warning, its
	 * -v estimate) with them. Planned as for two: more than one range.
	 */
	return each_input(&run, paths, npaths, stage, 2);
}
