/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - the statistics a filter file stores in its gzip header
 * (format.h, format_load_described; bf(5), "Statistics"): equal to the
 * figures counted from the bits for every kind of filter; read without
 * the bits; checked against the bits by verify, which finds a stored
 * figure that lies; refused when they cannot fit the stages; and a file
 * without them (written before they were stored) counted from its bits.
 */
#include <zlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "cascade.h"
#include "filter.h"
#include "format.h"
#include "gzin.h"
#include "pgzip.h"
#include "unit.h"
#include "window.h"

static const unsigned char stats_key[16] = { 7, 6, 5, 4, 3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15 };

/* Keys "s<i>" for i in [from, to), added to f a key at a time. */
static void add_keys(struct filter *f, uint64_t from, uint64_t to)
{
	char text[32];

	for (uint64_t i = from; i < to; i++) {
		struct line key = { text, (size_t)snprintf(text, sizeof text, "s%llu", (unsigned long long)i) };

		filter_add(f, &key, 1);
	}
}

static struct filter *stage(enum filter_layout layout, uint64_t m, uint64_t capacity, double rate,
			    uint64_t keys)
{
	struct filter_params p = { 0 };
	struct filter *f;
	const char *why;

	p.layout = layout;
	p.hash = FILTER_SIPHASH_1_3;
	p.k = 5;
	p.m = m;
	p.capacity = capacity;
	p.target_p = rate;
	memcpy(p.key, stats_key, sizeof p.key);
	f = filter_new(&p, &why);
	if (f != NULL)
		add_keys(f, 0, keys);
	return f;
}

/* A fixed filter of layout holding keys keys, as a cascade. */
static struct cascade *fixed(enum filter_layout layout, uint64_t m, uint64_t keys)
{
	struct filter *f = stage(layout, m, 1000, 0.01, keys);
	struct cascade *c;
	const char *why;

	if (f == NULL)
		return NULL;
	c = cascade_from_stages(&f, 1, 0, 0, 1000, 0.01, &why);
	if (c == NULL)
		filter_free(f);
	return c;
}

/* A growing cascade of two stages (growth 2, tighten 1), both holding keys. */
static struct cascade *growing(void)
{
	struct filter *s[2] = { stage(FILTER_BLOCKED, 512 * 20, 100, 0.005, 300),
				stage(FILTER_BLOCKED, 512 * 40, 200, 0.0025, 50) };
	struct cascade *c = NULL;
	const char *why;

	if (s[0] != NULL && s[1] != NULL)
		c = cascade_from_stages(s, 2, 2, 1, 100, 0.01, &why);
	if (c == NULL) {
		filter_free(s[0]);
		filter_free(s[1]);
	}
	return c;
}

/* c saved to an unlinked temporary file, at its start; -1 on failure. */
static int saved(const struct cascade *c)
{
	int fd = unit_temp_file("", 0);
	const char *why;

	if (fd < 0 || format_save(c, fd, &why) < 0 || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	return fd;
}

/* The whole file fd into a new buffer, *len bytes. */
static unsigned char *whole(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *buf = end > 0 ? malloc((size_t)end) : NULL;

	*len = buf != NULL && pread(fd, buf, (size_t)end, 0) == end ? (size_t)end : 0;
	return buf;
}

/*
 * c saved and read back whole (*len bytes; NULL when it could not be),
 * with its first stage's figures counted from its bits in *counted.
 */
static unsigned char *saved_whole(const struct cascade *c, size_t *len, struct filter_stats *counted)
{
	int fd = c != NULL ? saved(c) : -1;
	unsigned char *f;

	if (fd < 0)
		return NULL;
	f = whole(fd, len);
	close(fd);
	filter_stats_of(c->stages[0], counted);
	return f;
}

/* The gzip header's CRC (FHCRC) made right again after an edit of its extra field. */
static void fix_crc(unsigned char *f)
{
	size_t xlen = (size_t)f[10] | (size_t)f[11] << 8;
	uLong crc = crc32(0L, f, (uInt)(12 + xlen));

	f[12 + xlen] = (unsigned char)crc;
	f[13 + xlen] = (unsigned char)(crc >> 8);
}

/* Where the statistics subfield's data starts in file f, or NULL. */
static unsigned char *stats_of_file(unsigned char *f)
{
	size_t len;
	const unsigned char *d = gzin_find_subfield(f + 12, (size_t)f[10] | (size_t)f[11] << 8, 'B', 'S', &len);

	return (unsigned char *)d;
}

static int same_stats(const struct filter_stats *a, const struct filter_stats *b)
{
	return a->bits_set == b->bits_set && a->saturated == b->saturated && a->rate == b->rate;
}

/* Stored figures, read without the bits, and verified ones equal those of c's bits. */
static void stored_figures_are_counted_ones(void)
{
	struct cascade *cs[] = { fixed(FILTER_BLOCKED, 512 * 64, 500), fixed(FILTER_CLASSIC, 512 * 64, 500),
				 fixed(FILTER_COUNTING, 512 * 8, 1500), growing() };
	static struct format_stats st;

	for (size_t n = 0; n < sizeof cs / sizeof cs[0]; n++) {
		struct cascade *c = cs[n], *back;
		struct window *w;
		struct sketch *sk;
		const char *why = NULL;
		int fd = c != NULL ? saved(c) : -1;

		CHECKF(fd >= 0, "cascade %zu", n);
		CHECK(format_load_described(fd, &back, &w, &sk, FORMAT_FIGURES, &st, &why) == 0 && back != NULL);
		CHECKF(st.stored && st.nstages == c->nstages, "cascade %zu", n);
		for (size_t i = 0; i < c->nstages; i++) {
			struct filter_stats counted;

			filter_stats_of(c->stages[i], &counted);
			CHECKF(same_stats(&st.stage[i], &counted), "cascade %zu stage %zu", n, i);
			/* one pass or several, the figures of the calls bfinfo made before */
			CHECK(counted.bits_set == filter_bits_set(c->stages[i]) &&
			      counted.saturated == filter_saturated(c->stages[i]) &&
			      counted.rate == filter_current_fpr(c->stages[i]));
			CHECK(back->stages[i]->words == NULL);	/* the bits were not read */
			CHECK(filter_stats_estimate(&c->stages[i]->params, &counted) ==
			      filter_estimate_count(c->stages[i]));
		}
		CHECK(cascade_stats_estimate(back, st.stage) == cascade_estimate_count(c));
		CHECK(cascade_stats_fpr(back, st.stage) == cascade_current_fpr(c));
		cascade_free(back);
		/* a caller that takes filters alone */
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		CHECK(format_load_described(fd, &back, NULL, NULL, FORMAT_FIGURES, &st, &why) == 0 && back != NULL);
		cascade_free(back);
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		CHECK(format_load_described(fd, &back, NULL, NULL, FORMAT_FIGURES_VERIFIED, &st, &why) == 0);
		cascade_free(back);
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		CHECKF(format_load_described(fd, &back, &w, &sk, FORMAT_FIGURES_VERIFIED, &st, &why) == 0, "%s", why);
		CHECK(back != NULL && back->stages[0]->words != NULL && st.stored);
		cascade_free(back);
		close(fd);
	}
	for (size_t n = 0; n < sizeof cs / sizeof cs[0]; n++)
		cascade_free(cs[n]);
}

/* A window's figures, generation by generation, and its estimate from them. */
static void a_window_stores_every_generation(void)
{
	struct window_params wp = { WINDOW_COUNT, 700, 8, 0, 700, 1e-4, WINDOW_CLOCK_UNRECORDED, 0 };
	struct filter_params p = { 0 };
	static struct format_stats st;
	struct window *w, *back;
	struct cascade *c;
	struct sketch *sk;
	const char *why = NULL;
	size_t at = 0;
	int fd = unit_temp_file("", 0);

	p.layout = FILTER_BLOCKED;
	p.hash = FILTER_SIPHASH_1_3;
	memcpy(p.key, stats_key, sizeof p.key);
	w = window_new(&wp, &p, &why);
	CHECK(w != NULL && fd >= 0);
	for (uint64_t i = 0; i < 450; i++) {
		char text[32];
		struct line key = { text, (size_t)snprintf(text, sizeof text, "w%llu", (unsigned long long)i) };
		unsigned char present;

		CHECK(window_test_and_add_hashed(w, &key, NULL, 1, NULL, 0, &present, NULL, &why) == 0);
	}
	CHECK(format_save_window(w, fd, &why) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	CHECK(format_load_described(fd, &c, &back, &sk, FORMAT_FIGURES, &st, &why) == 0 && back != NULL && c == NULL);
	CHECKF(st.stored && st.nstages == window_stages(w) && back->ngen == w->ngen, "%zu stages", st.nstages);
	for (size_t g = 0; g < w->ngen; g++)
		for (size_t i = 0; i < w->gen[g]->nstages; i++, at++) {
			struct filter_stats counted;

			filter_stats_of(w->gen[g]->stages[i], &counted);
			CHECKF(same_stats(&st.stage[at], &counted), "generation %zu stage %zu", g, i);
		}
	CHECK(window_stats_estimate(back, w->clock, st.stage) == window_estimate_count(w, w->clock));
	window_free(back);
	/* a caller that takes no window is refused one */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(format_load_described(fd, &c, NULL, NULL, FORMAT_FIGURES, &st, &why) == -1 &&
	      why == format_err_windowed && c == NULL);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECKF(format_load_described(fd, &c, &back, &sk, FORMAT_FIGURES_VERIFIED, &st, &why) == 0 && back != NULL, "%s", why);
	window_free(back);
	window_free(w);
	close(fd);
}

/* A copy of file f[0..len) with edit applied, loaded described; the load's result. */
static int load_edited(const unsigned char *f, size_t len, void (*edit)(unsigned char *),
		       enum format_figures how, struct format_stats *st, const char **why)
{
	unsigned char *copy = malloc(len);
	struct cascade *c = NULL;
	struct window *w = NULL;
	struct sketch *sk = NULL;
	int fd = -1, ret = -1;

	if (copy != NULL) {
		memcpy(copy, f, len);
		edit(copy);
		fd = unit_temp_file((const char *)copy, len);
	}
	if (fd >= 0) {
		ret = format_load_described(fd, &c, &w, &sk, how, st, why);
		close(fd);
	}
	cascade_free(c);
	free(copy);
	return ret;
}

/* Stage 1's bits set, stored, one more than counted. */
static void one_more_bit(unsigned char *f)
{
	unsigned char *d = stats_of_file(f);

	bytes_put_le(d + 8, bytes_get_le(d + 8, 8) + 1, 8);
	fix_crc(f);
}

/* More bits set than the stage has. */
static void impossible_bits(unsigned char *f)
{
	bytes_put_le(stats_of_file(f) + 8, UINT64_MAX, 8);
	fix_crc(f);
}

/* A rate that is not one. */
static void rate_over_one(unsigned char *f)
{
	bytes_put_double(stats_of_file(f) + 24, 1.5);
	fix_crc(f);
}

/* Saturated counters in a stage of bits. */
static void saturated_bits(unsigned char *f)
{
	bytes_put_le(stats_of_file(f) + 16, 1, 8);
	fix_crc(f);
}

/* The subfield renamed, so that no reader knows it: a file written before statistics. */
static void no_stats(unsigned char *f)
{
	stats_of_file(f)[-3] = 'X';
	fix_crc(f);
}

/* A stage count that is not the file's. */
static void wrong_count(unsigned char *f)
{
	bytes_put_le(stats_of_file(f), 2, 4);
	fix_crc(f);
}

static void verify_finds_what_the_header_gets_wrong(void)
{
	struct cascade *c = fixed(FILTER_BLOCKED, 512 * 64, 500);
	static struct format_stats st;
	struct filter_stats counted;
	size_t len = 0;
	const char *why = NULL;
	unsigned char *f = saved_whole(c, &len, &counted);

	CHECK(f != NULL && len > 0 && stats_of_file(f) != NULL);
	/* read alone, the header is believed; verified, the lie is named */
	CHECK(load_edited(f, len, one_more_bit, FORMAT_FIGURES, &st, &why) == 0 &&
	      st.stage[0].bits_set == counted.bits_set + 1);
	CHECK(load_edited(f, len, one_more_bit, FORMAT_FIGURES_VERIFIED, &st, &why) == -1);
	CHECKF(strstr(why, "stored statistics disagree with the bits: stage 1 of 1, bits set") == why, "%s", why);
	CHECK(load_edited(f, len, impossible_bits, FORMAT_FIGURES, &st, &why) == -1 && strstr(why, "do not fit") != NULL);
	CHECK(load_edited(f, len, rate_over_one, FORMAT_FIGURES, &st, &why) == -1 && strstr(why, "do not fit") != NULL);
	CHECK(load_edited(f, len, saturated_bits, FORMAT_FIGURES, &st, &why) == -1 && strstr(why, "do not fit") != NULL);
	CHECK(load_edited(f, len, wrong_count, FORMAT_FIGURES_VERIFIED, &st, &why) == -1 &&
	      strstr(why, "do not fit") != NULL);
	/* a reader of bits takes them as stored, and ignores ones that do not fit */
	CHECK(load_edited(f, len, one_more_bit, FORMAT_BITS, &st, &why) == 0 && st.stored &&
	      st.stage[0].bits_set == counted.bits_set + 1);
	CHECK(load_edited(f, len, impossible_bits, FORMAT_BITS, &st, &why) == 0 && !st.stored && st.nstages == 0);
	/* a file without them: counted from the bits, the same figures; a reader of bits gets none */
	CHECK(load_edited(f, len, no_stats, FORMAT_FIGURES, &st, &why) == 0 && !st.stored && st.nstages == 1);
	CHECK(same_stats(&st.stage[0], &counted));
	CHECK(load_edited(f, len, no_stats, FORMAT_FIGURES_VERIFIED, &st, &why) == 0 && !st.stored);
	CHECK(load_edited(f, len, no_stats, FORMAT_BITS, &st, &why) == 0 && !st.stored && st.nstages == 0);
	free(f);
	cascade_free(c);
}

/* A counting stage's stored saturated counters that lie: named with their own figures. */
static void verify_names_saturated_counters_by_their_count(void)
{
	struct cascade *c = fixed(FILTER_COUNTING, 512 * 8, 1500);
	static struct format_stats st;
	struct filter_stats counted;
	size_t len = 0;
	const char *why = NULL;
	unsigned char *f = saved_whole(c, &len, &counted);

	CHECK(f != NULL && len > 0 && stats_of_file(f) != NULL);
	CHECK(counted.saturated == 0 && counted.bits_set > 1);
	CHECK(load_edited(f, len, saturated_bits, FORMAT_FIGURES_VERIFIED, &st, &why) == -1);
	CHECKF(why != NULL && strstr(why, "saturated counters (stored 1, ") != NULL && strstr(why, "; counted 0, ") != NULL, "%s", why);
	free(f);
	cascade_free(c);
}

/* The subfields of an extra field are walked by their lengths; one running past the end ends it. */
static void subfields_are_found_by_their_lengths(void)
{
	static const unsigned char extra[] = { 'A', 'B', 2, 0, 1, 2, 'B', 'S', 1, 0, 9 };
	static const unsigned char over[] = { 'B', 'S', 9, 0, 1 };
	size_t len = 0;
	const unsigned char *d = gzin_find_subfield(extra, sizeof extra, 'B', 'S', &len);
	const char *why = NULL;
	unsigned char big[1];

	CHECK(d == extra + 10 && len == 1 && d[0] == 9);
	CHECK(gzin_find_subfield(extra, sizeof extra, 'B', 'I', &len) == NULL);
	CHECK(gzin_find_subfield(over, sizeof over, 'B', 'S', &len) == NULL);
	CHECK(pgzip_open(-1, 1, Z_RLE, 0, 0, big, PGZIP_EXTRA_MAX + 1, &why) == NULL);
	CHECK(strstr(why, "too long") != NULL);
}

void suite_stats(void)
{
	unit_run("stats: stored figures are the counted ones, read without the bits", stored_figures_are_counted_ones);
	unit_run("stats: a window stores every generation's figures", a_window_stores_every_generation);
	unit_run("stats: verify finds a stored figure that lies; figures that cannot fit are refused",
		 verify_finds_what_the_header_gets_wrong);
	unit_run("stats: verify names a lying count of saturated counters with that count",
		 verify_names_saturated_counters_by_their_count);
	unit_run("stats: subfields are found by their lengths; pgzip refuses too many", subfields_are_found_by_their_lengths);
}
