/* SPDX-License-Identifier: MIT */
/*
 * fuzz_topk.c - libFuzzer harness for loading heavy-hitter summaries
 * (topk_file.h, bftop -o).
 *
 * The input is a summary file's bytes, read from a file and from a pipe.
 * Invariants: both readers agree; a refused file says why; a loaded
 * summary keeps what its loader promises (at most capacity keys, error
 * at most count, count at most total, in range sizes); saving it and
 * loading the result gives a summary that saves to the same bytes again.
 */
#define _GNU_SOURCE	/* fuzz.h: memfd_create */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "topk.h"
#include "topk_file.h"

static struct topk *load(enum feed_kind kind, const uint8_t *data, size_t size, const char **err)
{
	struct feed f;
	struct topk *t;

	*err = NULL;
	feed_open(&f, kind, data, size, size, FEED_CHUNK_MAX);
	t = topk_file_load(f.fd, err);
	feed_close(&f);
	return t;
}

static void check_loaded(const struct topk *t)
{
	struct topk_item *items = malloc(((size_t)t->kept + 1) * sizeof *items);
	size_t n;

	fuzz_check(items != NULL, "memory for the items");
	fuzz_check(t->kept <= t->params.capacity, "no more keys than the capacity");
	n = topk_items(t, items);
	for (size_t i = 0; i < n; i++) {
		fuzz_check(items[i].error <= items[i].count, "error at most count");
		fuzz_check(items[i].count <= t->total, "count at most the total");
		fuzz_check(items[i].upper <= items[i].count, "the upper bound at most the count");
	}
	free(items);
}

/* t saved into a new memory file; its bytes in *bytes, *len of them. */
static void save(const struct topk *t, uint8_t **bytes, size_t *len)
{
	const char *err;
	int fd = memfd_create("topk", 0);
	off_t end;

	fuzz_check(fd >= 0, "a memory file");
	fuzz_check(topk_file_save(t, fd, &err) == 0, "a loaded summary saves");
	end = lseek(fd, 0, SEEK_END);
	*len = (size_t)end;
	*bytes = malloc(*len + 1);
	fuzz_check(*bytes != NULL && pread(fd, *bytes, *len, 0) == (ssize_t)*len, "read back");
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *err_file, *err_pipe;
	struct topk *t = load(FEED_FILE, data, size, &err_file), *again;
	uint8_t *first, *second;
	size_t len1, len2;

	if (size <= FEED_SMALL) {
		struct topk *p = load(FEED_PIPE, data, size, &err_pipe);

		fuzz_check((p != NULL) == (t != NULL), "a file and a pipe get the same verdict");
		topk_free(p);
	}
	fuzz_check(t != NULL || (err_file != NULL && *err_file != '\0'), "a refused summary says why");
	if (t == NULL)
		return 0;
	check_loaded(t);
	save(t, &first, &len1);
	again = load(FEED_FILE, first, len1, &err_file);
	fuzz_check(again != NULL, "a saved summary loads");
	fuzz_check(again->total == t->total && again->kept == t->kept, "the same totals");
	save(again, &second, &len2);
	fuzz_check(len1 == len2 && memcmp(first, second, len1) == 0, "saved twice, the same bytes");
	free(first);
	free(second);
	topk_free(again);
	topk_free(t);
	return 0;
}
