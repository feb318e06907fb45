/* SPDX-License-Identifier: MIT */
/*
 * inorder.c - one big regular file read in ranges on every thread and
 * consumed in file order, for the ordered stages (bfuniq, bfbuild's
 * ordered path, the window adder): no single thread splitting lines is
 * the ceiling, yet every key meets the filter exactly where it would
 * with one reader.
 *
 * The file is cut in fixed ranges (ranges_ordered_step: their size
 * follows the records' length, never the thread count), numbered from
 * 0; batch i is exactly the records that begin in range i (ranges.h), so
 * the batches, and everything done with them, are the same whichever
 * thread reads them. The pipeline's reader thread only hands out range
 * numbers, in order (one unit each); the unit's work, on any thread,
 * reads the range, splits its records and runs the stage's prepare and
 * work over them; split, parts and consume then come in order as for
 * any input (inputs.c). Line numbers are counted in consume order.
 * A bad record (the stage's cut) or a range that cannot be read is a
 * clean cut (cli.h): the records before it are consumed, in order, then
 * the message names the line, and the run stops.
 *
 * Not for inputs that cannot be cut (pipes, compressed, --header, --csv,
 * -r: ranged.c decides) nor for per-input events (bfgrep): those are
 * read by inputs.c.
 */
#include "internal.h"
#include "../cli_fields.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "ranges.h"

/* consume's answer at a clean cut (a read error, a bad record): the run stops there. */
#define CUT 3

struct inorder_slot {
	struct lines_batch batch;
	uint64_t range;		/* its range's number */
	int err;		/* errno of its read, or ENOMEM of its prepare; 0 */
	int checked;		/* the stage's cut has seen the batch */
	char bad[200];		/* what is wrong with its record batch.n, cut there; or "" */
};

struct inorder {
	struct ranges *rs;
	const struct cli_stage *stage;
	void *ctx;
	const char *name;	/* the input as messages name it */
	uint64_t next;		/* the next range to hand out (reader thread) */
	atomic_int failed;	/* a read failed: hand out no more */
	int cut_seen;		/* a batch was cut: split no later one (calling thread) */
	uint64_t lines;		/* records of this input consumed so far */
	uint64_t base;		/* bytes of the inputs before, for progress */
	uint64_t start;		/* where the input's bytes begin */
	struct inorder_slot slots[CLI_SLOTS];
};

/* Reader thread, in order: only the range's number, so that reading is the workers'. */
static int inorder_fill(void *ctx, unsigned slot, size_t *units)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];

	if (in->next == ranges_count(in->rs) || atomic_load(&in->failed) ||
	    cli_stop_signal() != 0)	/* a signal to save and stop: no more input */
		return 0;
	s->range = in->next++;
	s->err = 0;
	s->checked = 0;
	s->bad[0] = '\0';
	s->batch.n = 0;
	*units = 1;
	return 1;
}

/* Any thread: the slot's one unit, its range read, split, prepared and worked. */
static void inorder_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];
	size_t units = 0;

	(void)from;
	(void)to;
	if (ranges_read(in->rs, s->range, (int)slot, &s->batch) < 0) {
		s->err = errno;
		s->batch.n = 0;
		atomic_store(&in->failed, 1);
		return;
	}
	if (s->batch.n == 0)
		return;
	if (cli_shard_batch(&s->batch) < 0 ||
	    in->stage->prepare(in->ctx, slot, s->batch.records, s->batch.n, &units) < 0) {
		s->err = ENOMEM;
		s->batch.n = 0;
		atomic_store(&in->failed, 1);
		return;
	}
	if (units > 0)
		in->stage->work(in->ctx, slot, 0, units);
}

/* The thread that read and worked the range, after: what split can do ahead. */
static void inorder_worked(void *ctx, unsigned slot)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];

	if (s->err == 0 && s->batch.n > 0)
		in->stage->split_ahead(in->ctx, slot, s->batch.records, s->batch.n);
}

/* Calling thread, once a slot, before its split or consume: the stage's cut. */
static void cut_batch(struct inorder *in, unsigned slot)
{
	struct inorder_slot *s = &in->slots[slot];
	size_t n;

	if (s->checked)
		return;
	s->checked = 1;
	if (in->stage->cut == NULL || s->err != 0 || s->batch.n == 0)
		return;
	n = in->stage->cut(in->ctx, slot, s->batch.records, s->batch.n, s->bad, sizeof s->bad);
	if (n >= s->batch.n) {
		s->bad[0] = '\0';
		return;
	}
	s->batch.n = n;
	in->cut_seen = 1;
}

static int inorder_split(void *ctx, unsigned slot)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];

	if (in->cut_seen)	/* after a cut: never consumed */
		return 0;
	cut_batch(in, slot);
	if (s->err != 0 || s->batch.n == 0)
		return 0;
	return in->stage->split(in->ctx, slot, s->batch.records, s->batch.n) != 0;
}

static void inorder_part(void *ctx, unsigned slot, unsigned part)
{
	struct inorder *in = ctx;

	in->stage->part(in->ctx, slot, part);
}

static void inorder_finish(void *ctx, unsigned slot)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];

	in->stage->finish(in->ctx, slot, s->batch.records, s->batch.n);
}

/* Calling thread, in file order: the batch for the program, or the read error in its place. */
static int inorder_consume(void *ctx, unsigned slot)
{
	struct inorder *in = ctx;
	struct inorder_slot *s = &in->slots[slot];
	int rc;

	if (s->err == ENOMEM)
		cli_fatal("%s", strerror(s->err));
	if (s->err != 0) {
		if (!cli_inputs_quiet)
			cli_warn("%s:%llu: %s", in->name, (unsigned long long)(in->lines + 1),
				 strerror(s->err));
		cli_inputs_cut_set();
		return CUT;
	}
	cut_batch(in, slot);
	rc = 0;
	if (s->batch.n > 0) {
		cli_batch_lines_set(in->lines + 1, &s->batch);
		rc = in->stage->consume(in->ctx, slot, s->batch.records, s->batch.n);
		cli_progress_at(cli_progress_lines() + s->batch.n,
				in->base + ranges_end_of(in->rs, s->range) - in->start);
	}
	/* every record read up to the cut, those --shard took out too */
	in->lines += lines_batch_read_index(&s->batch, s->batch.n);
	if (s->bad[0] == '\0')
		return rc;
	cli_warn("%s:%llu: %s", in->name, (unsigned long long)(in->lines + 1), s->bad);
	cli_inputs_cut_set();
	return CUT;
}

int cli_read_in_order(const char *path, int fd, uint64_t start, uint64_t end, char delim,
		      const struct cli_stage *stage, void *ctx, uint64_t base, int *stopped)
{
	struct pipeline_fns fns = { .fill = inorder_fill, .work = inorder_work,
				    .consume = inorder_consume };
	struct inorder in;
	int rc;

	uint64_t step = ranges_ordered_step(fd, start, end, delim);

	if (step == 0) {
		if (!cli_inputs_quiet)
			cli_warn("%s: %s", cli_display_name(path), strerror(errno));
		*stopped = 0;
		return -1;
	}
	memset(&in, 0, sizeof in);
	in.rs = ranges_open(fd, start, end, delim, CLI_SLOTS, step);
	if (in.rs == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	in.stage = stage;
	in.ctx = ctx;
	in.name = cli_display_name(path);
	in.base = base;
	in.start = start;
	atomic_init(&in.failed, 0);
	if (stage->parts > 0 && stage->split != NULL && stage->part != NULL) {
		fns.split = inorder_split;
		fns.part = inorder_part;
		fns.parts = stage->parts;
		fns.overlap = stage->overlap;
		fns.finish = stage->finish != NULL ? inorder_finish : NULL;
		fns.worked = stage->split_ahead != NULL ? inorder_worked : NULL;
	}
	rc = pipeline_run(&fns, &in, pipeline_threads());
	ranges_close(in.rs);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		lines_batch_free(&in.slots[i].batch);
	*stopped = rc == 1 || rc == CUT;
	return rc == CUT ? -1 : 0;
}
