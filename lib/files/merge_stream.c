/* SPDX-License-Identifier: MIT */
/*
 * merge_stream.c - OR and AND of a filter in memory with one streamed from
 * a file, stage by stage as merge.c combines two in memory.
 *
 * Streaming reads the other file's payload in 1 MiB pieces and combines
 * each piece into into's words at once: the memory is into, one buffer,
 * and whatever stages the other file adds; never a second copy of the
 * stages both have. Payload bytes are little-endian words on every host.
 */
#include "merge_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cascade.h"
#include "filter.h"

#define CHUNK ((size_t)1 << 20)

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static size_t smaller(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* File order (little-endian) to host order, in place. */
static void host_order(uint64_t *w, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < n; i++)
		w[i] = __builtin_bswap64(w[i]);
#else
	(void)w, (void)n;
#endif
}

/* The next stage's payload from r, combined into f piece by piece. */
static int stream_combine(struct format_reader *r, struct filter *f, enum merge_op op,
			  uint64_t *buf, const char **errstr)
{
	size_t bytes = filter_bytes(f);

	for (size_t off = 0; off < bytes; off += CHUNK) {
		size_t len = smaller(CHUNK, bytes - off);	/* m/8 and m/2 are multiples of 64 */

		if (format_read(r, buf, len, errstr) < 0)
			return -1;
		host_order(buf, len / 8);
		merge_words(f, f->words + off / 8, buf, len / 8, op);
	}
	return 0;
}

/* The next stage's payload from r, as a new stage for index j of into. */
static struct filter *stream_stage(struct format_reader *r, const struct cascade *into,
				   const struct filter *model, size_t j, const char **errstr)
{
	struct filter *f = merge_carried_stage(into, model, j, errstr);

	if (f == NULL)
		return NULL;
	if (format_read(r, f->words, filter_bytes(f), errstr) < 0) {
		filter_free(f);
		return NULL;
	}
	host_order(f->words, filter_bytes(f) / 8);
	return f;
}

/* Every payload from r into into's stages or new ones; r is still open after. */
static int stream_all(struct format_reader *r, struct cascade *into, const struct cascade *shape,
		      enum merge_op op, struct filter **carried, size_t *ncarried,
		      const char **errstr)
{
	size_t n = into->nstages;
	uint64_t *buf = malloc(CHUNK);
	int ret = 0;

	*ncarried = 0;
	if (buf == NULL)
		return fail(errstr, strerror(ENOMEM));
	for (size_t i = 0; ret == 0 && i < smaller(n, shape->nstages); i++)
		ret = stream_combine(r, into->stages[i], op, buf, errstr);
	free(buf);
	for (size_t j = n; ret == 0 && j < shape->nstages; j++) {
		carried[*ncarried] = stream_stage(r, into, shape->stages[j], j, errstr);
		if (carried[*ncarried] == NULL)
			ret = -1;
		else
			++*ncarried;
	}
	return ret;
}

int merge_stream(struct cascade *into, struct format_reader *r, const struct cascade *shape,
		 enum merge_op op, const char **errstr)
{
	struct filter *carried[CASCADE_STAGES_MAX];
	size_t ncarried;

	if (merge_check(into, shape, op, errstr) < 0) {
		format_abandon(r);
		return -1;
	}
	if (stream_all(r, into, shape, op, carried, &ncarried, errstr) < 0) {
		merge_free_stages(carried, ncarried);
		format_abandon(r);
		return -1;
	}
	if (format_close(r, errstr) < 0) {
		merge_free_stages(carried, ncarried);
		return -1;
	}
	merge_finish(into, shape, op, carried, ncarried);
	return 0;
}
