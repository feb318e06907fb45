/* SPDX-License-Identifier: MIT */
/*
 * inputs.c - the inputs (files, -r walks, standard input) read in order
 * through the batch pipeline: a reader thread fills slots, workers run the
 * program's stage, the consumer takes batches in input order, with errors
 * reported in their place. Each input is read through an instream, so a
 * compressed one is read decompressed (unless --no-decompress), and its
 * damage is reported in the stream's words after the lines before it.
 */
#include "internal.h"
#include "../cli_fields.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream.h"
#include "lines.h"
#include "walk.h"

/* Room for a stream's message ("corrupt gzip input: invalid block type"). */
#define WHY_MAX 200

/*
 * The reader side of cli_each_batch: the inputs in turn, each
 * batch in a slot with what consume needs to report it. An input that
 * cannot be opened or read becomes a slot of its own carrying the error,
 * so it is reported in its place in the output's order. A failure
 * mid-input (a read error, damaged compressed data, a CSV quote never
 * closed, or a bad record the stage's cut finds) is a clean cut (cli.h):
 * the records before it are consumed, then the message names the input
 * and line, and the run stops. Each input's
 * first slot says so (begins) and its end is a slot of its own (ends,
 * after the last batch, or with the read error), so that per-input
 * answers (bfgrep -c) come in order too. Inputs are numbered from 1; the
 * consumer skips the rest of one by raising skip to its number, which the
 * reader reads before each batch.
 */
struct input_slot {
	struct lines_batch batch;
	uint64_t bytes_read;	/* input bytes consumed up to this batch's end */
	int err;		/* errno of the open or read error this slot reports */
	char why[WHY_MAX];	/* what is wrong in words, when not errno's (damaged input) */
	int fatal;		/* err is out of memory: stop */
	const char *name;	/* the input err is about, or the batch came from */
	uint64_t first_line;	/* the line number of the batch's first record */
	const char *path;	/* the input the slot belongs to, as given (path_copy) */
	char *path_copy;	/* the slot's own: a walk's names do not last */
	size_t path_cap;
	unsigned input;		/* its number; 0 for one that could not be opened */
	int begins, ends;	/* the input's first slot; its last */
	int last;		/* the input is the last one */
	int idle;		/* no batch: the input was quiet (cli_inputs_when_idle) */
	struct line header;	/* --header: the input's, in its first slot */
	int has_header;
	int broken;		/* err came mid-input, after first_line - 1 records: a cut */
	int checked;		/* the stage's cut has seen the batch */
	char bad[WHY_MAX];	/* what is wrong with its record batch.n, cut there; or "" */
};

struct inputs {
	char *const *paths;
	int npaths;
	int next;		/* paths[next] is the next input to open */
	struct walk *walk;	/* -r: the inputs are the files under paths */
	int fd;			/* the input being read, or -1 */
	const char *name;
	unsigned current;	/* the number of the input being read */
	int fresh;		/* nothing of it has been handed out yet */
	struct instream *stream;	/* the input's bytes, decompressed */
	struct lines_reader *reader;	/* its lines */
	uint64_t base;		/* bytes of the inputs before this one */
	uint64_t lines;		/* records of this input read so far */
	char delim;
	int status;
	atomic_uint skip;	/* inputs up to this number are not read further */
	const struct cli_stage *stage;
	const struct cli_input_events *events;
	void *ctx;
	int more;		/* inputs follow these (cli_each_input_ranged) */
	int broken;		/* an input failed mid-way: read no further (reader thread) */
	int cut_seen;		/* a batch was cut: split no later one (calling thread) */
	struct input_slot slots[CLI_SLOTS];
};

int cli_inputs_quiet, cli_inputs_recursive;

/*
 * cli_inputs_when_idle: the reader waits at most idle_ms for a record,
 * then hands the consumer a slot with no batch, and the consumer calls
 * idle_fn. So something due on time (a timed checkpoint) happens while
 * the input is quiet, on the calling thread and between batches, as it
 * would at the end of one: never with a batch half applied. The reader,
 * not a timer on the consumer, is what must wake: with one thread the
 * consumer is the reader, blocked in read(2).
 */
static unsigned idle_ms;
static void (*idle_fn)(void *ctx);

void cli_inputs_when_idle(unsigned ms, void (*idle)(void *ctx))
{
	idle_ms = ms;
	idle_fn = idle;
}

void cli_quiet_inputs(void)
{
	cli_inputs_quiet = 1;
}

void cli_recursive_inputs(void)
{
	cli_inputs_recursive = 1;
}

static void inputs_close_current(struct inputs *in)
{
	if (in->reader == NULL)
		return;
	in->base += instream_bytes_in(in->stream);
	lines_close(in->reader);
	instream_close(in->stream);
	in->reader = NULL;
	in->stream = NULL;
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
}

/* s's own copy of the input's path, for the consumer; -1 when out of memory. */
static int slot_path(struct input_slot *s, const char *path)
{
	size_t len = strlen(path) + 1;

	if (len > s->path_cap) {
		char *bigger = realloc(s->path_copy, len);

		if (bigger == NULL)
			return -1;
		s->path_copy = bigger;
		s->path_cap = len;
	}
	memcpy(s->path_copy, path, len);
	s->path = s->path_copy;
	return 0;
}

/* A slot that only reports an error, about the input at path; name it with display. */
static int error_slot(struct input_slot *s, int err, const char *path, int display,
		      size_t *units)
{
	s->batch.n = 0;
	s->err = err;
	if (slot_path(s, path) < 0) {
		s->err = ENOMEM;
		s->path = "";
	}
	s->fatal = s->err == ENOMEM;
	s->name = display ? cli_display_name(s->path) : s->path;
	*units = 0;
	return 1;
}

/*
 * The next input's path: 1, 0 at the end, -1 with errno when a walk could
 * not read a directory (*path names it). A walk is never cancelled midway
 * (pipeline.h): it holds directories open.
 */
static int next_path(struct inputs *in, const char **path)
{
	int r, err = 0, state;

	if (cli_stop_signal() != 0)	/* a signal to save and stop: no more input */
		return 0;
	if (in->walk == NULL) {
		if (in->next == in->npaths)
			return 0;
		*path = in->paths[in->next++];
		return 1;
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	r = walk_next(in->walk, path, &err);
	pthread_setcancelstate(state, &state);
	errno = err;
	return r;
}

/*
 * Open path to read. O_NONBLOCK: a FIFO with no writer yet would block
 * open(2) itself, where no signal can end the wait (the stop handlers
 * restart it). Opened at once, a FIFO is waited on with poll(2) beside
 * the stop pipe (cli_wait_readable) until a writer's first bytes or its
 * close: before a writer comes, read(2) would say end of input. Then
 * blocking again.
 */
static int open_input(const char *path)
{
	struct stat st;
	int fd, flags;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		cli_wait_readable(fd);	/* stopped: the reader's own poll sees it too */
	if ((flags = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* Open the next input; 1 when one is open, 0 at the end, -1 with errno. */
static int inputs_open_next(struct inputs *in)
{
	const char *path;
	int found = next_path(in, &path);

	if (found <= 0) {
		in->name = found < 0 ? path : NULL;
		return found;
	}
	in->name = path;
	in->lines = 0;
	in->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open_input(path);
	if (in->fd < 0)
		return -1;
	in->stream = instream_open(in->fd, cli_decompress);
	in->reader = in->stream != NULL ? lines_open_stream(in->stream, in->delim) : NULL;
	if (in->reader != NULL && cli_csv_separator() >= 0)
		lines_csv(in->reader, (char)cli_csv_separator());
	if (in->reader != NULL) {
		in->current++;
		in->fresh = 1;
		return 1;
	}
	instream_close(in->stream);
	in->stream = NULL;
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
	errno = ENOMEM;
	return -1;
}

/* lines_next_owned's answer for s; 0 for an input being skipped, LINES_IDLE when quiet. */
static long read_batch(struct inputs *in, struct input_slot *s)
{
	if (atomic_load_explicit(&in->skip, memory_order_relaxed) >= in->current)
		return 0;
	if (idle_fn != NULL)
		return lines_next_owned_within(in->reader, &s->batch, idle_ms);
	return lines_next_owned(in->reader, &s->batch);
}

/* --header: take it from s, the input's first batch; -1: the input ends here (s says why). */
static int header_taken(struct inputs *in, struct input_slot *s, size_t *units)
{
	s->first_line++;
	s->has_header = 1;
	if (cli_header_take(&s->batch, &s->header, s->why, sizeof s->why) == 0)
		return 0;
	inputs_close_current(in);
	s->ends = 1;
	s->batch.n = 0;
	*units = 0;
	return -1;
}

/* The next batch of the open input into s, or its end (read error, skipped, end of input). */
static int fill_from_current(struct inputs *in, struct input_slot *s, size_t *units)
{
	long n;

	if (slot_path(s, in->name) < 0)
		return error_slot(s, ENOMEM, "", 0, units);
	s->input = in->current;
	s->last = in->walk == NULL && in->next == in->npaths && !in->more;
	n = read_batch(in, s);
	s->idle = n == LINES_IDLE;
	if (s->idle) {
		*units = 0;
		return 1;
	}
	s->begins = in->fresh;
	in->fresh = 0;
	if (n > 0) {
		/* the input's own bytes, compressed or not, as its size counts them */
		s->bytes_read = in->base + instream_bytes_in(in->stream);
		s->name = cli_display_name(s->path);	/* the slot's copy: it lasts */
		s->first_line = in->lines + 1;
		in->lines += (uint64_t)n;
		if (s->begins && cli_header_on() && header_taken(in, s, units) < 0)
			return 1;
		if (cli_shard_batch(&s->batch) < 0 ||
		    in->stage->prepare(in->ctx, (unsigned)(s - in->slots), s->batch.records,
				       s->batch.n, units) < 0)
			return error_slot(s, ENOMEM, in->name, 0, units);
		return 1;
	}
	s->ends = 1;
	if (n < 0) {
		int err = errno;
		const char *why = lines_error(in->reader);

		if (why == NULL)
			why = instream_error(in->stream);
		if (why != NULL)
			snprintf(s->why, sizeof s->why, "%s", why);
		inputs_close_current(in);
		/* a directory is no input, as one that cannot be opened: the others are read */
		if (err == ENOMEM || err == EISDIR)
			return error_slot(s, err, in->name, 1, units);
		/* the record that was being read when it failed: a clean cut before it */
		s->broken = 1;
		s->first_line = in->lines + 1;
		in->broken = 1;
		return error_slot(s, err, in->name, 1, units);
	}
	inputs_close_current(in);
	s->batch.n = 0;
	*units = 0;
	return 1;
}

static int inputs_fill(void *ctx, unsigned slot, size_t *units)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];

	s->err = 0;
	s->why[0] = '\0';
	s->has_header = 0;
	s->begins = s->ends = 0;
	s->idle = 0;
	s->input = 0;
	s->broken = 0;
	s->checked = 0;
	s->bad[0] = '\0';
	if (in->broken)		/* the run stops at that cut */
		return 0;
	if (in->reader == NULL) {
		int opened = inputs_open_next(in);

		if (opened == 0)
			return 0;
		if (opened < 0)
			return error_slot(s, errno, in->name, 0, units);
	}
	return fill_from_current(in, s, units);
}

/* The batch being consumed, and the line number of its first record (cli_batch_line). */
static uint64_t batch_first_line;
static const struct lines_batch *batch_now;

uint64_t cli_batch_line(size_t r)
{
	return batch_first_line + (batch_now ? lines_batch_read_index(batch_now, r) : r);
}

static int inputs_cut;

int cli_inputs_cut(void)
{
	return inputs_cut;
}

void cli_inputs_cut_set(void)
{
	inputs_cut = 1;
}

void cli_batch_lines_set(uint64_t first_line, const struct lines_batch *b)
{
	batch_first_line = first_line;
	batch_now = b;
}

static void inputs_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct inputs *in = ctx;

	in->stage->work(in->ctx, slot, from, to);
}

/*
 * Calling thread, once a slot, before its split or consume: the stage's
 * cut (cli_stage.cut) of a batch of records, from an input not being
 * skipped; a batch cut short keeps its records before the bad one.
 */
static void cut_batch(struct inputs *in, unsigned slot)
{
	struct input_slot *s = &in->slots[slot];
	size_t n;

	if (s->checked)
		return;
	s->checked = 1;
	if (in->stage->cut == NULL || s->fatal || s->idle || s->err != 0 || s->why[0] != '\0' ||
	    s->batch.n == 0 || atomic_load(&in->skip) >= s->input)
		return;
	n = in->stage->cut(in->ctx, slot, s->batch.records, s->batch.n, s->bad, sizeof s->bad);
	if (n >= s->batch.n) {
		s->bad[0] = '\0';
		return;
	}
	s->batch.n = n;
	in->cut_seen = 1;
}

/* A batch for the program, unless its input is being skipped: what consume said. */
static int consume_batch(struct inputs *in, unsigned slot)
{
	struct input_slot *s = &in->slots[slot];
	int rc;

	if (s->batch.n == 0 || atomic_load(&in->skip) >= s->input)
		return 0;
	cli_batch_lines_set(s->first_line, &s->batch);
	rc = in->stage->consume(in->ctx, slot, s->batch.records, s->batch.n);
	if (rc == CLI_SKIP_INPUT)
		atomic_store(&in->skip, s->input);
	cli_progress_at(cli_progress_lines() + s->batch.n, s->bytes_read);
	return rc;
}

/*
 * A batch of records for the program, from an input not being skipped,
 * goes to its split; anything else is done whole by consume. Only
 * consume moves `skip`, so what split sees here is what consume_batch
 * will see, as long as splits wait for the consume before: runs with
 * events (whose consume may skip) never overlap.
 */
static int inputs_split(void *ctx, unsigned slot)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];

	if (in->cut_seen)	/* after a cut: never consumed */
		return 0;
	cut_batch(in, slot);
	if (s->fatal || s->idle || s->err != 0 || s->why[0] != '\0' || s->batch.n == 0 ||
	    atomic_load(&in->skip) >= s->input)
		return 0;
	return in->stage->split(in->ctx, slot, s->batch.records, s->batch.n) != 0;
}

static void inputs_part(void *ctx, unsigned slot, unsigned part)
{
	struct inputs *in = ctx;

	in->stage->part(in->ctx, slot, part);
}

/* The thread that did the batch's last work, after: what split can do ahead. */
static void inputs_worked(void *ctx, unsigned slot)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];

	in->stage->split_ahead(in->ctx, slot, s->batch.records, s->batch.n);
}

static void inputs_finish(void *ctx, unsigned slot)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];

	in->stage->finish(in->ctx, slot, s->batch.records, s->batch.n);
}

static int inputs_consume(void *ctx, unsigned slot)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];
	const struct cli_input_events *ev = in->events;
	int rc, stop;

	if (s->fatal)
		cli_fatal("%s", strerror(s->err));
	if (s->idle) {
		idle_fn(in->ctx);
		return 0;
	}
	if (s->begins && ev)
		ev->begin(in->ctx, s->path);
	if (s->err != 0) {
		if (!cli_inputs_quiet && s->broken)
			cli_warn("%s:%llu: %s", s->name, (unsigned long long)s->first_line,
				 s->why[0] ? s->why : strerror(s->err));
		else if (!cli_inputs_quiet)
			cli_warn("%s: %s", s->name, s->why[0] ? s->why : strerror(s->err));
		in->status = -1;
	} else if (s->why[0] != '\0') {	/* a header's fault: a clean cut at its line 1 */
		cli_warn("%s:1: %s", s->name, s->why);
		in->status = -1;
		inputs_cut = 1;
		s->ends = 1;
		s->broken = 1;
	} else if (s->has_header) {
		cli_header_pass(in->ctx, s->header);
	}
	cut_batch(in, slot);
	rc = consume_batch(in, slot);
	/*
	 * Skipping the rest of the last input is the end: no need to wait
	 * for a read that may never return (tail -f | bfgrep -m 1).
	 */
	stop = rc == 1 || (rc == CLI_SKIP_INPUT && s->last);
	if (s->bad[0] != '\0' && rc != CLI_SKIP_INPUT) {	/* a clean cut: the input ends here */
		cli_warn("%s:%llu: %s", s->name,
			 (unsigned long long)(s->first_line + lines_batch_read_index(&s->batch, s->batch.n)),
			 s->bad);
		in->status = -1;
		inputs_cut = 1;
		s->ends = 1;
		stop = 1;
	}
	if ((s->ends || (rc == CLI_SKIP_INPUT && s->last)) && ev && ev->end(in->ctx, s->path))
		stop = 1;
	if (s->broken)
		inputs_cut = 1;
	return stop || s->broken;
}

/*
 * paths[0..npaths) through the ordered pipeline, their bytes counted on
 * from *base (updated); more: other inputs follow them. Returns the
 * inputs' status; *stopped is set when the program stopped the run.
 */
int cli_ordered_inputs(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
		       const struct cli_input_events *events, void *ctx, uint64_t *base,
		       int more, int *stopped)
{
	struct pipeline_fns fns = { .fill = inputs_fill, .work = inputs_work, .consume = inputs_consume };
	struct inputs in;

	memset(&in, 0, sizeof in);
	in.paths = paths;
	in.npaths = npaths;
	if (cli_inputs_recursive && (in.walk = walk_open(in.paths, (size_t)in.npaths)) == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	in.fd = -1;
	in.delim = delim;
	in.base = *base;
	in.more = more;
	atomic_init(&in.skip, 0);
	in.stage = stage;
	in.events = events;
	in.ctx = ctx;
	if (stage->parts > 0 && stage->split != NULL && stage->part != NULL) {
		fns.split = inputs_split;
		fns.part = inputs_part;
		fns.parts = stage->parts;
		fns.overlap = stage->overlap && events == NULL;
		fns.finish = stage->finish != NULL ? inputs_finish : NULL;
		fns.worked = stage->split_ahead != NULL ? inputs_worked : NULL;
	}
	*stopped = pipeline_run(&fns, &in, pipeline_threads()) != 0;
	inputs_close_current(&in);
	walk_close(in.walk);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		lines_batch_free(&in.slots[i].batch);
		free(in.slots[i].path_copy);
	}
	*base = in.base;
	return in.status;
}

char *const cli_standard_input[] = { "-" };

int cli_each_input(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
		   const struct cli_input_events *events, void *ctx)
{
	uint64_t base = 0;
	int status, stopped;

	if (npaths == 0 && !cli_inputs_recursive) {
		paths = cli_standard_input;
		npaths = 1;
	}
	/* the size of what a walk finds is known only at its end */
	cli_progress_inputs(cli_inputs_recursive ? 0 : cli_progress_inputs_size(paths, npaths));
	status = cli_ordered_inputs(paths, npaths, delim, stage, events, ctx, &base, 0, &stopped);
	cli_progress_inputs_end();
	return status;
}

/* lines_estimate of path (NULL or "-": standard input); 0 for anything but a regular file. */
static uint64_t lines_of(const char *path, char delim)
{
	struct stat st;
	uint64_t lines;
	int fd;

	if (path == NULL || strcmp(path, "-") == 0)
		return lines_estimate(STDIN_FILENO, delim);
	/* stat first: opening a FIFO, even to close it, would let its writer in */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	lines = lines_estimate(fd, delim);
	close(fd);
	return lines;
}

void cli_expect_inputs(struct cascade *c, char *const *paths, int npaths, char delim)
{
	uint64_t lines = npaths == 0 ? lines_of(NULL, delim) : 0;

	for (int i = 0; i < npaths && !cli_inputs_recursive; i++)
		lines += lines_of(paths[i], delim);
	cascade_expect_adds(c, lines);
}

int cli_each_batch(char *const *paths, int npaths, char delim,
			    const struct cli_stage *stage, void *ctx)
{
	return cli_each_input(paths, npaths, delim, stage, NULL, ctx);
}
