/* SPDX-License-Identifier: MIT */
/*
 * count_keys.c - a small C program over the installed bftools library, as a
 * user would write it: it includes only <bftools.h> and is built with
 *
 *     cc count_keys.c $(pkg-config --cflags --libs bftools)
 *
 * Usage: count_keys FILTER [KEY...]
 * Reads lines from standard input into a new filter (1000 keys at 1%,
 * blocked, the fixed key 00 01 ... 0f so runs are reproducible), saves it
 * to FILTER, loads it back and, from the loaded copy, prints the lines
 * read, the insertions, the estimated distinct keys and, for each KEY,
 * "maybe present" or "absent". Exit 0, or 1 with a message on stderr.
 *
 * tests/install.bats builds it against a DESTDIR install, shared and
 * static, to prove the header, the libraries and bftools.pc work. It
 * writes the same file as `bfbuild -n 1000 -p 0.01 --key 0001..0f`, which
 * the test checks with cmp. Deliberately no options: it is an example.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <bftools.h>

#define CAPACITY 1000
#define RATE 0.01
#define BATCH 1024

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "count_keys: %s: %s\n", what, why);
	return 1;
}

/* An empty fixed filter sized for CAPACITY keys at RATE, with a fixed key. */
static struct cascade *new_filter(const char **errstr)
{
	struct filter_params p;

	memset(&p, 0, sizeof p);
	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	p.capacity = CAPACITY;
	p.target_p = RATE;
	for (unsigned i = 0; i < sizeof p.key; i++)
		p.key[i] = (unsigned char)i;
	if (sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, errstr) < 0)
		return NULL;
	return cascade_new_fixed(&p, errstr);
}

/* Add every line of standard input; *lines counts them. Returns 0 or -1. */
static int add_lines(struct cascade *c, uint64_t *lines, const char **errstr)
{
	struct line batch[BATCH];
	struct lines_reader *r = lines_open(0, '\n');
	long n;

	if (r == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	while ((n = lines_next_batch(r, batch, BATCH)) > 0) {
		if (cascade_add(c, batch, (size_t)n, errstr) < 0)
			break;
		*lines += (uint64_t)n;
	}
	lines_close(r);
	if (n < 0)
		*errstr = "read error on standard input";
	return n == 0 ? 0 : -1;
}

/* What the loaded filter says about itself and about each key. */
static void report(const struct cascade *c, uint64_t lines, char **keys, int nkeys)
{
	printf("lines read: %" PRIu64 "\n", lines);
	printf("insertions: %" PRIu64 "\n", cascade_insertions(c));
	printf("estimated distinct keys: %.0f\n", cascade_estimate_count(c));
	for (int i = 0; i < nkeys; i++) {
		struct line key = { keys[i], strlen(keys[i]) };
		unsigned char present;

		cascade_test(c, &key, 1, &present);
		printf("%s: %s\n", keys[i], present ? "maybe present" : "absent");
	}
}

int main(int argc, char **argv)
{
	const char *err = NULL;
	uint64_t lines = 0;
	struct cascade *c;

	if (argc < 2) {
		fputs("usage: count_keys FILTER [KEY...]\n", stderr);
		return 1;
	}
	c = new_filter(&err);
	if (c == NULL)
		return fail("new filter", err);
	if (add_lines(c, &lines, &err) < 0 || format_save_path(c, argv[1], &err) < 0) {
		cascade_free(c);
		return fail(argv[1], err);
	}
	cascade_free(c);
	c = format_load_path(argv[1], &err);
	if (c == NULL)
		return fail(argv[1], err);
	report(c, lines, argv + 2, argc - 2);
	cascade_free(c);
	return fflush(stdout) == 0 ? 0 : fail("stdout", "write error");
}
