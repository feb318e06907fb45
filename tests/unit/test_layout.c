/* SPDX-License-Identifier: MIT */
/*
 * test_layout.c - the layout table (layout.h) as callers meet it: the
 * registry by id and by name, the traits the programs ask instead of ids,
 * and each layout's batch operations agreeing with each other (a key
 * added tests present, shared adds set the bits plain adds set, union and
 * intersection by word); plus the small gzip and path helpers the files
 * share (gzin_open_started, gzin_detect_magic, pgzip_save_member,
 * readpath).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "gzin.h"
#include "layout.h"
#include "pgzip.h"
#include "readpath.h"
#include "unit.h"

#define KEYS 300

static const unsigned char layout_key[16] = "layout-unit-key!";

/* A filter of layout id with m bits (DCSO: its own m of m - 100 bits). */
static struct filter *layout_filter(enum filter_layout id, uint64_t m, uint32_t k)
{
	struct filter_params p = { 0 };
	const char *why;

	p.layout = id;
	p.hash = id == FILTER_DCSO ? FILTER_FNV1 : FILTER_SIPHASH_1_3;
	p.m = m;
	p.k = k;
	p.capacity = 1000;
	p.target_p = 0.01;
	if (id == FILTER_DCSO)
		p.probe_bits = m - 100;
	else
		memcpy(p.key, layout_key, sizeof layout_key);
	return filter_new(&p, &why);
}

/* Keys "k0" .. "k<n-1>" in text, described in keys. */
static void make_layout_keys(struct line *keys, char *text, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(text + 8 * i, 8, "k%zu", i);

		keys[i].data = text + 8 * i;
		keys[i].len = (size_t)len;
	}
}

static void registry_by_id_and_name(void)
{
	static const enum filter_layout ids[] = { FILTER_BLOCKED, FILTER_CLASSIC, FILTER_COUNTING,
						  FILTER_DCSO };

	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		const struct layout_ops *l = layout_of(ids[i]);

		CHECK(l != NULL && l->id == ids[i]);
		CHECK(layout_named(l->name) == l);
	}
	CHECK(layout_of((enum filter_layout)7) == NULL);
	CHECK(layout_named("bloomier") == NULL);
	CHECK(strcmp(layout_of(FILTER_COUNTING)->unit, "counters") == 0);
	CHECK(layout_positions_per_word(layout_of(FILTER_COUNTING)) == 16);
	CHECK(layout_positions_per_word(layout_of(FILTER_BLOCKED)) == 64);
}

/* A layout's own rule, after the common ones: probe_bits belongs to DCSO alone. */
static void layouts_check_their_own_params(void)
{
	struct filter_params p = { 0 };
	const char *why = NULL;

	p.layout = FILTER_CLASSIC;
	p.hash = FILTER_SIPHASH_1_3;
	p.m = 4096;
	p.k = 3;
	p.capacity = 1;
	p.target_p = 0.01;
	CHECK(filter_params_check(&p, &why) == 0);
	p.probe_bits = 5;
	CHECK(filter_params_check(&p, &why) < 0);
	CHECK(strcmp(why, "probed bits not 0, or for DCSO not within the last 512 bits of m") == 0);
	p.layout = FILTER_DCSO;
	p.hash = FILTER_FNV1;
	CHECK(filter_params_check(&p, &why) < 0);	/* 5 of 4096: not in the last block */
	p.probe_bits = 4000;
	CHECK(filter_params_check(&p, &why) == 0);
}

static void traits_say_what_ids_used_to(void)
{
	CHECK(layout_has(FILTER_BLOCKED, LAYOUT_ONE_BLOCK | LAYOUT_SAVED));
	CHECK(!layout_has(FILTER_CLASSIC, LAYOUT_ONE_BLOCK));
	CHECK(layout_has(FILTER_COUNTING, LAYOUT_COUNTERS | LAYOUT_SAVED));
	CHECK(layout_has(FILTER_DCSO, LAYOUT_KEYLESS | LAYOUT_FOREIGN));
	CHECK(!layout_has(FILTER_DCSO, LAYOUT_SAVED));
	CHECK(!layout_has((enum filter_layout)7, 0));
	/* only counters can be removed from; only a counter's add is not an OR */
	CHECK(layout_of(FILTER_COUNTING)->remove != NULL && layout_of(FILTER_COUNTING)->add_shared == NULL);
	CHECK(layout_of(FILTER_CLASSIC)->remove == NULL && layout_of(FILTER_DCSO)->add_shared != NULL);
}

/* Every layout: a plain add and a shared add set the same positions; added keys test present. */
static void shared_adds_equal_plain_adds(void)
{
	static const enum filter_layout ids[] = { FILTER_BLOCKED, FILTER_CLASSIC, FILTER_DCSO };
	static char text[8 * KEYS];
	struct line keys[KEYS];
	unsigned char present[KEYS];

	make_layout_keys(keys, text, KEYS);
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		struct filter *a = layout_filter(ids[i], 4096, 5), *b = layout_filter(ids[i], 4096, 5);

		CHECK(a != NULL && b != NULL);
		filter_add(a, keys, KEYS);
		CHECK(filter_add_shared(b, keys, NULL, KEYS) == 0);
		CHECKF(memcmp(a->words, b->words, filter_bytes(a)) == 0, "layout %s",
		       layout_of(ids[i])->name);
		filter_test(b, keys, KEYS, present);
		for (size_t j = 0; j < KEYS; j++)
			CHECK(present[j] == 1);
		filter_free(a);
		filter_free(b);
	}
}

/* DCSO: test-and-add marks a repeat later in the batch, and positions are below its own m. */
static void dcso_batch_operations(void)
{
	static char text[8 * KEYS];
	struct line keys[2 * KEYS];
	unsigned char present[2 * KEYS];
	uint64_t positions[FILTER_K_MAX];
	struct filter *f = layout_filter(FILTER_DCSO, 8192, 4);

	CHECK(f != NULL);
	make_layout_keys(keys, text, KEYS);
	memcpy(keys + KEYS, keys, KEYS * sizeof *keys);
	filter_test_and_add(f, keys, 2 * KEYS, present);
	for (size_t j = KEYS; j < 2 * KEYS; j++)
		CHECK(present[j] == 1);
	filter_positions(f, keys[0], positions);
	for (uint32_t i = 0; i < f->params.k; i++)
		CHECK(positions[i] < f->params.probe_bits);
	CHECK(filter_saturated(f) == 0);
	CHECK(filter_remove(f, keys, 3) == 3);	/* no layout of bits removes */
	filter_free(f);
}

/* Counters unite by adding (saturating at 15) and intersect by the smaller. */
static void counters_unite_and_intersect(void)
{
	const struct layout_ops *l = layout_of(FILTER_COUNTING);
	uint64_t a[2] = { UINT64_C(0x00000000000f0f31), UINT64_C(0xf000000000000001) };
	uint64_t b[2] = { UINT64_C(0x0000000000010f12), UINT64_C(0x1000000000000000) };
	uint64_t u[2], x[2];

	memcpy(u, a, sizeof a);
	memcpy(x, a, sizeof a);
	l->unite(u, b, 2);
	l->intersect(x, b, 2);
	CHECK(u[0] == UINT64_C(0x00000000000f0f43) && u[1] == UINT64_C(0xf000000000000001));
	CHECK(x[0] == UINT64_C(0x0000000000010f11) && x[1] == UINT64_C(0x1000000000000000));
}

/* The models: rates rise with n; the estimates' spread is 0 at 0 keys and positive after. */
static void models_through_the_table(void)
{
	for (enum filter_layout id = FILTER_BLOCKED; id <= FILTER_COUNTING; id++) {
		const struct layout_ops *l = layout_of(id);

		CHECK(l->fpr(0, 1 << 16, 7) == 0.0);
		CHECK(l->fpr(1000, 1 << 16, 7) < l->fpr(5000, 1 << 16, 7));
		CHECK(l->estimate_sd(1 << 16, 7, 0.0) == 0.0);
		CHECK(l->estimate_sd(1 << 16, 7, 3000.0) > 0.0);
		CHECK(l->estimate(1 << 16, 7, 0) == 0.0);
	}
}

static void gzip_helpers(void)
{
	static const unsigned char magic[4] = { 'M', 'A', 'G', '!' };
	static unsigned char payload[(1 << 20) + 4096];
	unsigned char head[4], back[4], start[64];
	struct gzin g;
	const char *why;
	size_t done;
	ssize_t got;
	int fd = unit_temp_file("", 0);

	CHECK(fd >= 0);
	memcpy(head, magic, sizeof magic);
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (unsigned char)(i * 7);
	/* a payload past one piece is written in pieces, read back whole */
	CHECK(pgzip_save_member(fd, head, sizeof head, payload, sizeof payload, 6, &why) == 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	got = read(fd, start, sizeof start);
	CHECK(got == (ssize_t)sizeof start);
	CHECK(gzin_detect_magic(start, sizeof start, magic, sizeof magic) == 1);
	CHECK(gzin_detect_magic(start, 0, magic, sizeof magic) == -1);
	CHECK(gzin_detect_magic(start, 1, magic, sizeof magic) == -1);
	CHECK(gzin_detect_magic((const unsigned char *)"xy", 2, magic, sizeof magic) == 0);
	CHECK(gzin_detect_magic(start, sizeof start, magic, GZIN_MAGIC_MAX + 1) == 0);
	CHECK(gzin_open_started(&g, fd, GZIN_SKETCH, start, GZIN_BUFFER + 1, 0, &why) < 0);
	CHECK(gzin_open_started(&g, fd, GZIN_SKETCH, start, sizeof start, 0, &why) == 0);
	CHECK(gzin_read(&g, back, sizeof back, &done, &why) == 0 && memcmp(back, magic, 4) == 0);
	gzin_close(&g);
	close(fd);
}

static void readpath_opens_and_refuses(void)
{
	int fd = readpath_open("-"), before = fcntl(STDIN_FILENO, F_GETFD);

	CHECK(fd == STDIN_FILENO);
	readpath_close(fd);	/* standard input stays as it was, open or not */
	CHECK(fcntl(STDIN_FILENO, F_GETFD) == before);
	errno = 0;
	CHECK(readpath_open("/nonexistent/bftools-unit") < 0 && errno == ENOENT);
	fd = readpath_open(unit_testdata_dir());
	CHECK(fd >= 0);
	readpath_close(fd);
}

void suite_layout(void)
{
	unit_run("layout: every layout found by its id and its name; unknown ones not", registry_by_id_and_name);
	unit_run("layout: traits answer what callers used to ask of ids", traits_say_what_ids_used_to);
	unit_run("layout: probed bits are DCSO's alone, within its last block", layouts_check_their_own_params);
	unit_run("layout: blocked, classic and DCSO shared adds set the bits plain adds set",
		 shared_adds_equal_plain_adds);
	unit_run("layout: DCSO test-and-add, positions within its own m, no removal", dcso_batch_operations);
	unit_run("layout: counters unite by a saturating sum and intersect by the smaller",
		 counters_unite_and_intersect);
	unit_run("layout: the models through the table: rates rise with n, spreads are 0 at 0",
		 models_through_the_table);
	unit_run("gzip: a member saved whole in pieces, its magic told, a read begun ahead",
		 gzip_helpers);
	unit_run("readpath: '-' is standard input, left open; a missing path is ENOENT",
		 readpath_opens_and_refuses);
}
