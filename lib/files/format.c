/* SPDX-License-Identifier: MIT */
/*
 * format.c - read and write the bftools filter file, format version 1.
 *
 * A filter file holds a cascade (cascade.h): one fixed Bloom filter, or
 * the stages of a growing one. It is exactly one gzip member (RFC 1952).
 * Its uncompressed content is, with every integer little-endian and
 * written byte by byte (never a struct image, so the file is the same on
 * every host):
 *
 *   file header, 64 bytes
 *   +----+----+----+----+----+----+----+----+
 *  0| 89   42   46   54   0D   0A   1A   0A | magic "\x89BFT\r\n\x1a\n"
 *   +----+----+----+----+----+----+----+----+
 *  8| format version = 1 | header len = 64  |
 *   +----+----+----+----+----+----+----+----+
 * 16| stage count        |hash|flag| 0    0 | hash 1 = SipHash-2-4-128,
 *   +----+----+----+----+----+----+----+----+      2 = SipHash-1-3-128;
 * 24| SipHash key, 16 bytes                 | flag bit 0 = ASCII case
 * 32|                                       |   folded; bit 1 = key
 *   +----+----+----+----+----+----+----+----+   kept in a key file:
 *                                                bytes 24-31 hold its
 *                                                fingerprint (LE), 32-39
 *                                                are 0; others 0
 * 40| capacity (u64)                        | fixed: the filter's;
 *   +----+----+----+----+----+----+----+----+   growing: stage 0's
 * 48| target false-positive rate (binary64) | P, for the whole file
 *   +----+----+----+----+----+----+----+----+
 * 56|grow|tigh| reserved, 0                 |
 *   +----+----+----+----+----+----+----+----+
 *
 *   growth g (byte 56): 0 = fixed, one stage; 2..16 = growing, 1..64
 *   stages. tighten t (byte 57): 0 when fixed; 1..4 when growing.
 *
 *   one stage header per stage, 64 bytes each, all before any payload
 *   +----+----+----+----+----+----+----+----+
 *  0|lay | 0    0    0  | k (1..64)         | layout 1 = blocked,
 *   +----+----+----+----+----+----+----+----+   2 = classic, 3 = counting
 *  8| m: 512 * j, 512 .. 2^46               | bits; counting: counters
 *   +----+----+----+----+----+----+----+----+
 * 16| capacity of this stage                |
 *   +----+----+----+----+----+----+----+----+
 * 24| target rate of this stage (binary64)  |
 *   +----+----+----+----+----+----+----+----+
 * 32| insertions (keys added, repeats too)  |
 *   +----+----+----+----+----+----+----+----+
 * 40| payload length in bytes = m / 8       | counting: m / 2
 *   +----+----+----+----+----+----+----+----+
 * 48| removals: counting only, else 0       | keys removed, not those
 *   +----+----+----+----+----+----+----+----+   found absent
 * 56| reserved, 0                           |
 *   +----+----+----+----+----+----+----+----+
 *
 *   then each stage's payload in stage order, m / 8 bytes: bit i of the
 *   stage is bit (i % 8) of byte i / 8, which is the filter's uint64 words
 *   stored little-endian. A counting stage's payload is m / 2 bytes of
 *   4-bit counters, two to a byte, low nibble first:
 *
 *        byte i/2:  +---------+---------+
 *                   | 7 ... 4 | 3 ... 0 |    counter i (i even) in bits
 *                   | i + 1   | i       |    0-3, counter i + 1 in 4-7
 *                   +---------+---------+
 *
 *   the same as 16 counters per little-endian uint64 word, counter i in
 *   bits 4 (i % 16) .. 4 (i % 16) + 3 of word i / 16. A counter holds 0..15;
 *   15 means saturated (filter.h). Nothing follows the last payload.
 *
 * Stage capacities and rates follow from the file header, so a reader can
 * check them (stages numbered from 0, capacity n0 and rate P at 40, 48):
 *
 *   fixed     the one stage has capacity n0 and rate P, exactly
 *   growing   stage i has capacity n0 * g^i, exactly and without overflow,
 *             and rate P (1 - 2^-t) 2^(-t i), to a relative 1e-9
 *
 * The rates are a geometric series summing to P, so the cascade keeps its
 * promise however many stages it grows; cascade.c computes them the same
 * way (P * -expm1(-t ln 2), then ldexp by -t i), so its own files match
 * exactly and the tolerance only forgives other writers' rounding.
 *
 * Integrity: the gzip header carries a header CRC (FHCRC) and the trailer a
 * CRC-32 and length of the content, so every byte of the file is covered by
 * a check, gzip's mtime and OS bytes included. Reading validates every
 * header field, every stage header included, before it allocates anything
 * for the bits, then inflates each payload straight into its filter's
 * words. The only bits no check covers are the fill bits deflate adds to
 * reach a byte boundary (before a stored block and at the end of the
 * stream): inflate skips them, so flipping one changes neither the content
 * nor its meaning. (Rarely, a flipped bit re-encodes the same content: a
 * run-length match at distance 1 inside a run of zero bytes that becomes
 * distance 2 copies the same zeros. The CRC rightly finds nothing wrong.)
 *
 * Streaming (format_open/read/close) hands out the payload in pieces, so
 * bfmerge can OR a file into a filter in memory without a second copy. The
 * trailer's CRC covers the whole content, so damage anywhere is only
 * certain at format_close; an error that inflate reports while delivering
 * the last payload byte (the trailer was already in its input) is kept for
 * format_close, so callers see it in one place.
 *
 * Compression adapts per 1 MiB chunk of each bit array. A Bloom filter near
 * capacity has about half its bits set and is incompressible: zlib level 1
 * grinds through it at ~50 MB/s to save nothing, while stored blocks (level
 * 0) go at ~3 GB/s. A sparse chunk shrinks many-fold. Measured here on
 * random bits (64 MiB, ones fraction p; output/input and speed):
 *
 *     p      level 1 default    level 1 Z_RLE     stored
 *   0.01     0.172  160 MB/s    0.119  265 MB/s   1.0001  ~3 GB/s
 *   0.05     0.420   66 MB/s    0.333  106 MB/s
 *   0.20     0.781   43 MB/s    0.736  105 MB/s
 *   0.30     0.903   28 MB/s    0.891   61 MB/s
 *   0.35     0.947   28 MB/s    0.943   55 MB/s
 *   0.50     1.000   55 MB/s    1.000  172 MB/s
 *
 * Z_RLE beats the default strategy at every density, in size and speed
 * (random bits have no long matches worth hashing for; only zero runs), and
 * its output is close to the binary entropy H(p). A chunk is stored when its
 * ones fraction lies in [0.3, 0.7], i.e. H(p) >= 0.88: there compression
 * would save at most ~11% of the chunk at 20-50x the time. Loading inflates
 * Z_RLE output at 250-450 MB/s and stored blocks at memory speed.
 *
 * Saving runs on two threads (pgzip.c): each chunk is deflated on its own,
 * no dictionary from the chunk before, and ends on a byte boundary (a sync
 * flush), so the calling thread and a worker take alternate chunks and the
 * pieces are written in order as one deflate stream; the member ends with
 * an empty final block. Independence costs ~5 bytes a chunk, and the file
 * is the same bytes whichever thread took which chunk, or with one thread
 * (BFTOOLS_THREADS=1, pipeline.h). A quarter-full 27 MB filter saved in
 * 0.29 s on one core, 0.15 s on two; stored chunks skip deflate entirely.
 *
 * Other formats: the first bytes of every file are read before anything
 * else (read_start), enough for dcso.c to tell a DCSO bloom filter, plain
 * or gzipped, from ours; format_load hands such a file to dcso_load whole,
 * format_open refuses it. A sketch file (sketch.c) is told apart the same
 * way, by its magic "\x89BFS\r\n\x1a\n" (S where ours has T):
 * format_load_any hands it to sketch_load_started, the others refuse it
 * with format_err_sketch. Anything else goes on to the checks below, so
 * its messages are those of a damaged bftools file.
 *
 * Deliberately absent: stdio streams (descriptors are read and written
 * directly), and any check that a stage's m and k suit its capacity and
 * rate: sizing may improve between releases, and the bits are what they are.
 */
#define ZLIB_CONST
#include <zlib.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "bytes.h"
#include "cascade.h"
#include "dcso.h"
#include "filter.h"
#include "format.h"
#include "gzin.h"
#include "gzindex.h"
#include "layout.h"
#include "pgzip.h"
#include "readpath.h"
#include "untouched.h"
#include "pipeline.h"
#include "siphash.h"
#include "sketch.h"
#include "sketch_file.h"
#include "window.h"
#include "writer.h"

#define FILE_HEADER_LEN 64u
#define STAGE_HEADER_LEN 64u
#define WINDOW_HEADER_LEN 128u	/* version 2: the file header and the window block */
#define HEADERS_MAX (WINDOW_HEADER_LEN + WINDOW_STAGES_MAX * STAGE_HEADER_LEN)
#define MAGIC_LEN 8u
static const unsigned char magic[MAGIC_LEN] = { 0x89, 'B', 'F', 'T', '\r', '\n', 0x1a, '\n' };

#define IO_CHUNK ((size_t)1 << 20)	/* output buffer, compression chunk, progress step */
/*
 * Filters from this size on are saved around the page cache (gzout.c says
 * why); smaller ones through it, where a program that loads the file next
 * finds it cached.
 */
#define SAVE_DIRECT_MIN ((uint64_t)64 << 20)
#define RATE_TOLERANCE 1e-9		/* relative, for growing stages' rates */

/*
 * The statistics subfield 'B' 'S' of the gzip header's extra field: stage
 * count and flags (u32 each), then per stage bits set, saturated counters
 * (u64 each) and the rate now (binary64).
 */
#define STATS_HEAD 8u
#define STATS_ENTRY 24u
#define STATS_SUBFIELD_MAX (4u + STATS_HEAD + STATS_ENTRY * WINDOW_STAGES_MAX)

/*
 * The most payload a plausible file holds: a growing cascade's stages at
 * least double in size, so all of them together are under twice the
 * largest, which has at most FILTER_M_MAX positions: 2^46 bits, or 2^46
 * 4-bit counters (largest_array). A header asking for more is rejected
 * before anything is allocated.
 */
#define PAYLOAD_STAGES_FACTOR 2

/* The on-disk ids are the enum values; keep them from drifting apart. */
_Static_assert(FILTER_BLOCKED == 1 && FILTER_CLASSIC == 2 && FILTER_COUNTING == 3, "layout ids");
_Static_assert(FILTER_SIPHASH_2_4 == 1 && FILTER_SIPHASH_1_3 == 2, "hash ids");
_Static_assert(CASCADE_GROWTH_MAX <= 255 && CASCADE_TIGHTEN_MAX <= 255, "one byte each");

/* Words from file byte order to host order and back: a no-op on little-endian hosts. */
static void swap_words(uint64_t *words, uint64_t nwords)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (uint64_t i = 0; i < nwords; i++)
		words[i] = __builtin_bswap64(words[i]);
#else
	(void)words;
	(void)nwords;
#endif
}

/* ---- headers ---------------------------------------------------------- */

/* Everything the headers say, decoded and checked. */
struct file_info {
	int windowed;		/* version 2: a window block follows the file header */
	struct window_params wp;	/* windowed only */
	enum filter_layout window_layout;
	uint64_t clock;
	uint64_t gen_no[WINDOW_STAGES_MAX];	/* each stage's generation number */
	size_t nstages;
	unsigned growth, tighten;
	uint64_t capacity;	/* file header: the fixed filter's, or stage 0's */
	double target_p;	/* file header: the whole file's */
	uint64_t payload;	/* bytes of all stages' bits */
	struct filter_params stage[WINDOW_STAGES_MAX];
	uint64_t insertions[WINDOW_STAGES_MAX];
	uint64_t removals[WINDOW_STAGES_MAX];	/* counting stages; 0 for others */
};

static void encode_file_header(const struct cascade *c, unsigned char *h)
{
	const struct filter_params *p = cascade_params(c);

	memset(h, 0, FILE_HEADER_LEN);
	memcpy(h, magic, MAGIC_LEN);
	bytes_put_le(h + 8, FORMAT_VERSION, 4);
	bytes_put_le(h + 12, FILE_HEADER_LEN, 4);
	bytes_put_le(h + 16, c->nstages, 4);
	h[20] = (unsigned char)p->hash;
	h[21] = (unsigned char)p->flags;
	if (p->flags & FILTER_KEY_EXTERNAL)	/* the fingerprint only, never the key */
		bytes_put_le(h + 24, p->fingerprint, 8);
	else
		memcpy(h + 24, p->key, 16);
	bytes_put_le(h + 40, c->capacity, 8);
	bytes_put_double(h + 48, c->target_p);
	h[56] = (unsigned char)c->growth;	/* range-checked by check_cascade */
	h[57] = (unsigned char)c->tighten;
}

static void encode_stage_header(const struct filter *f, unsigned char *s)
{
	const struct filter_params *p = &f->params;

	memset(s, 0, STAGE_HEADER_LEN);
	s[0] = (unsigned char)p->layout;
	bytes_put_le(s + 4, p->k, 4);
	bytes_put_le(s + 8, p->m, 8);
	bytes_put_le(s + 16, p->capacity, 8);
	bytes_put_double(s + 24, p->target_p);
	bytes_put_le(s + 32, f->insertions, 8);
	bytes_put_le(s + 40, filter_array_bytes(p), 8);
	if (layout_has(p->layout, LAYOUT_COUNTERS))
		bytes_put_le(s + 48, f->removals, 8);
}

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static int check_rate(double rate)
{
	return rate > 0.0 && rate < 1.0;	/* false for NaN too */
}

/* The number belongs in the message; one static buffer, as the library is single-threaded. */
static const char *version_message(uint64_t version)
{
	static char msg[48];

	snprintf(msg, sizeof msg, "unsupported format version %llu", (unsigned long long)version);
	return msg;
}

static const char *stage_message(size_t i, const char *what)
{
	static char msg[96];

	snprintf(msg, sizeof msg, "bad header: stage %zu %s", i, what);
	return msg;
}

/* Bytes 56 and 57 and the stage count, which must agree with them. */
static int decode_growth(const unsigned char *h, struct file_info *fi, const char **errstr)
{
	uint64_t count = bytes_get_le(h + 16, 4);

	fi->growth = h[56];
	fi->tighten = h[57];
	if (fi->growth == 1 || fi->growth > CASCADE_GROWTH_MAX)
		return bad(errstr, "bad header: growth factor out of range");
	if (fi->growth == 0 && fi->tighten != 0)
		return bad(errstr, "bad header: tightening not zero for a fixed filter");
	if (fi->growth != 0 && (fi->tighten < 1 || fi->tighten > CASCADE_TIGHTEN_MAX))
		return bad(errstr, "bad header: tightening out of range");
	if (fi->windowed) {	/* checked against the generations in decode_stages */
		if (count > WINDOW_STAGES_MAX)
			return bad(errstr, "bad header: stage count out of range 0..256");
		fi->nstages = (size_t)count;
		return 0;
	}
	if (fi->growth == 0 && count != 1)
		return bad(errstr, "bad header: stage count is not 1");
	if (count < 1 || count > CASCADE_STAGES_MAX)
		return bad(errstr, "bad header: stage count out of range 1..64");
	fi->nstages = (size_t)count;
	return 0;
}

/*
 * Bytes 64-127 of a version 2 file: the window, and the generations' plan
 * (bytes 40-57 of the file header) that follows from it. Byte 68 (the
 * clock source) and bytes 104-107 (the time field) were reserved, 0,
 * before bftools recorded a time window's clock: such files still load,
 * their clock WINDOW_CLOCK_UNRECORDED (window.h).
 */
static int decode_window_block(const unsigned char *h, struct file_info *fi, const char **errstr)
{
	struct window_params *wp = &fi->wp;
	uint64_t capacity;
	double rate;
	unsigned growth, tighten;

	if (!bytes_all_zero(h + 5, 3) || !bytes_all_zero(h + 44, 20))
		return bad(errstr, "bad header: window reserved field not zero");
	wp->kind = (enum window_kind)h[0];
	wp->clock = (enum window_clock)h[4];
	wp->time_field = (uint32_t)bytes_get_le(h + 40, 4);
	wp->generations = h[1];
	wp->flags = h[2];
	fi->window_layout = (enum filter_layout)h[3];
	wp->size = bytes_get_le(h + 8, 8);
	wp->expected = bytes_get_le(h + 16, 8);
	fi->clock = bytes_get_le(h + 24, 8);
	wp->target_p = bytes_get_double(h + 32);
	if (window_params_check(wp, errstr) < 0)
		return bad(errstr, "bad header: window out of range");
	if (!window_layout_allowed(fi->window_layout))
		return bad(errstr, "bad header: window layout not blocked or classic");
	if (wp->kind == WINDOW_TIME && fi->clock >= WINDOW_TIME_MAX)
		return bad(errstr, "bad header: window clock out of range");
	window_generation_plan(wp, &capacity, &rate, &growth, &tighten);
	if (fi->capacity != capacity || fi->target_p != rate || fi->growth != growth ||
	    fi->tighten != tighten)
		return bad(errstr, "inconsistent header: generation plan does not follow the window");
	return 0;
}

/* The file header into fi; the shared hash, flags and key into every stage. */
static int decode_file_header(const unsigned char *h, struct file_info *fi, const char **errstr)
{
	uint64_t version = bytes_get_le(h + 8, 4);
	struct filter_params *p = &fi->stage[0];

	memset(fi, 0, sizeof *fi);
	if (memcmp(h, magic, MAGIC_LEN) != 0)
		return bad(errstr, "not a bftools filter (bad magic)");
	if (version != FORMAT_VERSION && version != FORMAT_VERSION_WINDOW)
		return bad(errstr, version_message(version));
	fi->windowed = version == FORMAT_VERSION_WINDOW;
	if (!fi->windowed && bytes_get_le(h + 12, 4) != FILE_HEADER_LEN)
		return bad(errstr, "bad header: file header length is not 64");
	if (fi->windowed && bytes_get_le(h + 12, 4) != WINDOW_HEADER_LEN)
		return bad(errstr, "bad header: file header length is not 128");
	if (decode_growth(h, fi, errstr) < 0)
		return -1;
	if (h[20] != FILTER_SIPHASH_2_4 && h[20] != FILTER_SIPHASH_1_3)
		return bad(errstr, "bad header: unknown hash function");
	if (h[21] & ~FILTER_FLAGS_KNOWN)
		return bad(errstr, "bad header: unknown key flags");
	if (!bytes_all_zero(h + 22, 2) || !bytes_all_zero(h + 58, 6))
		return bad(errstr, "bad header: reserved field not zero");
	fi->capacity = bytes_get_le(h + 40, 8);
	fi->target_p = bytes_get_double(h + 48);
	if (fi->capacity < 1)
		return bad(errstr, "bad header: capacity is zero");
	if (!check_rate(fi->target_p))
		return bad(errstr, "bad header: target rate not in (0, 1)");
	p->hash = (enum filter_hash)h[20];
	p->flags = h[21];
	if (p->flags & FILTER_KEY_EXTERNAL) {
		if (!bytes_all_zero(h + 32, 8))
			return bad(errstr, "bad header: key field of an external key not a bare fingerprint");
		p->fingerprint = bytes_get_le(h + 24, 8);
	} else {
		memcpy(p->key, h + 24, 16);
		p->fingerprint = filter_key_fingerprint(p->key);
	}
	for (size_t i = 1; i < fi->nstages; i++)
		fi->stage[i] = *p;
	return fi->windowed ? decode_window_block(h + FILE_HEADER_LEN, fi, errstr) : 0;
}

/* One stage header's own fields into stage i of fi. */
static int decode_stage_fields(const unsigned char *s, struct file_info *fi, size_t i,
			       const char **errstr)
{
	struct filter_params *p = &fi->stage[i];
	uint64_t k = bytes_get_le(s + 4, 4), m = bytes_get_le(s + 8, 8);
	/* a counting stage keeps its removals in 8 of the reserved bytes */
	int counting = layout_has((enum filter_layout)s[0], LAYOUT_SAVED | LAYOUT_COUNTERS);
	size_t reserved_from = counting ? 56 : 48;
	/* a windowed file's stage keeps its generation number in the last 8 */
	size_t reserved_to = fi->windowed ? 56 : STAGE_HEADER_LEN;

	if (!layout_has((enum filter_layout)s[0], LAYOUT_SAVED))
		return bad(errstr, "bad header: unknown layout");
	if (fi->windowed && s[0] != fi->window_layout)
		return bad(errstr, "bad header: stage layout is not the window's");
	if (!bytes_all_zero(s + 1, 3) || !bytes_all_zero(s + reserved_from, reserved_to - reserved_from))
		return bad(errstr, "bad header: stage reserved field not zero");
	fi->gen_no[i] = fi->windowed ? bytes_get_le(s + 56, 8) : 0;
	if (k < 1 || k > FILTER_K_MAX)
		return bad(errstr, "bad header: k out of range");
	if (m % FILTER_BLOCK_BITS != 0)
		return bad(errstr, "bad header: size (m) not a multiple of 512");
	if (m < FILTER_BLOCK_BITS || m > FILTER_M_MAX)
		return bad(errstr, "bad header: size (m) out of range");
	if (bytes_get_le(s + 16, 8) < 1)
		return bad(errstr, "bad header: stage capacity is zero");
	if (!check_rate(bytes_get_double(s + 24)))
		return bad(errstr, "bad header: stage target rate not in (0, 1)");
	if (bytes_get_le(s + 40, 8) != (counting ? m / 2 : m / 8))
		return bad(errstr, counting ? "bad header: payload length is not m / 2"
					    : "bad header: payload length is not m / 8");
	p->layout = (enum filter_layout)s[0];
	p->k = (uint32_t)k;
	p->m = m;
	p->capacity = bytes_get_le(s + 16, 8);
	p->target_p = bytes_get_double(s + 24);
	fi->insertions[i] = bytes_get_le(s + 32, 8);
	fi->removals[i] = counting ? bytes_get_le(s + 48, 8) : 0;
	return 0;
}

/* The largest array a stage of layout can have: FILTER_M_MAX positions. */
static uint64_t largest_array(enum filter_layout layout)
{
	struct filter_params p = { .layout = layout, .m = FILTER_M_MAX };

	return filter_array_bytes(&p);
}

/*
 * Stage i's capacity and rate against the file header's plan. want_cap is
 * stage i's planned capacity, 0 once the plan has overflowed (no stage has
 * capacity 0, so nothing matches it).
 */
static int check_stage_plan(const struct file_info *fi, size_t i, size_t j, uint64_t want_cap,
			    const char **errstr)
{
	const struct filter_params *p = &fi->stage[i];
	double first_rate, want_rate;

	if (fi->growth == 0) {
		if (p->capacity != fi->capacity || p->target_p != fi->target_p)
			return bad(errstr, "inconsistent header: file and stage capacity or rate differ");
		return 0;
	}
	if (p->capacity != want_cap)
		return bad(errstr, stage_message(i, "capacity does not follow the growth factor"));
	first_rate = fi->target_p * -expm1(-(double)fi->tighten * M_LN2);
	want_rate = ldexp(first_rate, -(int)(fi->tighten * j));
	if (!(fabs(p->target_p - want_rate) <= RATE_TOLERANCE * want_rate))
		return bad(errstr, stage_message(i, "rate does not follow the series"));
	return 0;
}

/*
 * A windowed file's stage generation numbers: never decreasing, a fixed
 * (count) generation one stage, at most 64 stages to a generation, and
 * every generation live at the clock (window_from_generations checks the
 * same once the bits are in).
 */
static int check_generations(const struct file_info *fi, const char **errstr)
{
	uint64_t current = window_generation_of(&fi->wp, fi->clock);
	size_t run = 0;

	for (size_t i = 0; i < fi->nstages; i++) {
		uint64_t no = fi->gen_no[i];

		if (i > 0 && no < fi->gen_no[i - 1])
			return bad(errstr, "bad header: generation numbers decrease");
		run = i > 0 && no == fi->gen_no[i - 1] ? run + 1 : 1;
		if ((fi->growth == 0 && run > 1) || run > CASCADE_STAGES_MAX)
			return bad(errstr, "bad header: too many stages in a generation");
		if (no > current || no + fi->wp.generations <= current)
			return bad(errstr, "bad header: a generation is not live at the window's clock");
	}
	return 0;
}

/* All stage headers (fi->nstages of them, back to back) into fi, checked. */
static int decode_stages(const unsigned char *s, struct file_info *fi, const char **errstr)
{
	uint64_t want_cap = fi->capacity, bytes = 0, most = 0;

	for (size_t i = 0, j = 0; i < fi->nstages; i++, j++) {
		if (decode_stage_fields(s + i * STAGE_HEADER_LEN, fi, i, errstr) < 0)
			return -1;
		if (i > 0 && fi->gen_no[i] != fi->gen_no[i - 1]) {	/* a new generation */
			j = 0;
			want_cap = fi->capacity;
		}
		if (check_stage_plan(fi, i, j, want_cap, errstr) < 0)
			return -1;
		if (fi->growth != 0)
			want_cap = want_cap > UINT64_MAX / fi->growth ? 0 : want_cap * fi->growth;
		/* <= 64 * 2^45 bytes: cannot overflow */
		bytes += filter_array_bytes(&fi->stage[i]);
		if (largest_array(fi->stage[i].layout) > most)
			most = largest_array(fi->stage[i].layout);
	}
	if (bytes > PAYLOAD_STAGES_FACTOR * most * (fi->windowed ? fi->wp.generations : 1))
		return bad(errstr, "bad header: stages too large in total");
	if (fi->windowed && check_generations(fi, errstr) < 0)
		return -1;
	fi->payload = bytes;
	/* the checks above cover it; this keeps them from falling behind filter_new's */
	for (size_t i = 0; i < fi->nstages; i++)
		if (filter_params_check(&fi->stage[i], errstr) < 0)
			return -1;
	return 0;
}

/* What decoding cannot see: the in-memory cascade's own consistency. */
static int check_cascade(const struct cascade *c, const char **errstr)
{
	const struct filter_params *p0;

	if (c->nstages < 1 || c->nstages > CASCADE_STAGES_MAX)
		return bad(errstr, "bad number of stages");
	if (c->growth > CASCADE_GROWTH_MAX || c->tighten > CASCADE_TIGHTEN_MAX)
		return bad(errstr, "growth factor or tightening out of range");
	p0 = cascade_params(c);
	for (size_t i = 0; i < c->nstages; i++) {
		const struct filter_params *p = &c->stages[i]->params;

		if (layout_has(p->layout, LAYOUT_FOREIGN))
			return bad(errstr, "a DCSO bloom filter cannot be saved as a bftools filter");
		if (filter_params_check(p, errstr) < 0)
			return -1;
		if (c->stages[i]->words == NULL)
			return bad(errstr, "a shape from format_open has no bits to save");
		if (p->hash != p0->hash || p->flags != p0->flags || memcmp(p->key, p0->key, 16) != 0)
			return bad(errstr, "stages disagree on hash, key or normalisation");
	}
	return 0;
}

/*
 * c's headers into h, *len bytes, checked by the very decoder a reader
 * runs, so no file is ever written that would not load.
 */
static int encode_checked(const struct cascade *c, unsigned char h[HEADERS_MAX], size_t *len,
			  const char **errstr)
{
	struct file_info fi;

	if (check_cascade(c, errstr) < 0)
		return -1;
	encode_file_header(c, h);
	for (size_t i = 0; i < c->nstages; i++)
		encode_stage_header(c->stages[i], h + FILE_HEADER_LEN + i * STAGE_HEADER_LEN);
	if (decode_file_header(h, &fi, errstr) < 0
	    || decode_stages(h + FILE_HEADER_LEN, &fi, errstr) < 0)
		return -1;
	*len = FILE_HEADER_LEN + c->nstages * STAGE_HEADER_LEN;
	return 0;
}

/* The headers of window w into h, *len bytes, checked as encode_checked. */
static int encode_window_checked(const struct window *w, unsigned char h[HEADERS_MAX],
				 size_t *len, const char **errstr)
{
	const struct filter_params *p = window_params_of(w);
	unsigned char *b = h + FILE_HEADER_LEN, *sh = h + WINDOW_HEADER_LEN;
	struct file_info fi;
	unsigned growth, tighten;
	uint64_t capacity;
	double rate;

	if (window_stages(w) > WINDOW_STAGES_MAX)
		return bad(errstr, "a window of more than 256 stages cannot be saved");
	window_generation_plan(&w->wp, &capacity, &rate, &growth, &tighten);
	memset(h, 0, WINDOW_HEADER_LEN);
	memcpy(h, magic, MAGIC_LEN);
	bytes_put_le(h + 8, FORMAT_VERSION_WINDOW, 4);
	bytes_put_le(h + 12, WINDOW_HEADER_LEN, 4);
	bytes_put_le(h + 16, window_stages(w), 4);
	h[20] = (unsigned char)p->hash;
	h[21] = (unsigned char)p->flags;
	if (p->flags & FILTER_KEY_EXTERNAL)
		bytes_put_le(h + 24, p->fingerprint, 8);
	else
		memcpy(h + 24, p->key, 16);
	bytes_put_le(h + 40, capacity, 8);
	bytes_put_double(h + 48, rate);
	h[56] = (unsigned char)growth;
	h[57] = (unsigned char)tighten;
	b[0] = (unsigned char)w->wp.kind;
	b[1] = (unsigned char)w->wp.generations;
	b[2] = (unsigned char)w->wp.flags;
	b[3] = (unsigned char)w->layout;
	b[4] = (unsigned char)w->wp.clock;
	bytes_put_le(b + 40, w->wp.time_field, 4);
	bytes_put_le(b + 8, w->wp.size, 8);
	bytes_put_le(b + 16, w->wp.expected, 8);
	bytes_put_le(b + 24, w->clock, 8);
	bytes_put_double(b + 32, w->wp.target_p);
	for (size_t g = 0; g < w->ngen; g++)
		for (size_t i = 0; i < w->gen[g]->nstages; i++, sh += STAGE_HEADER_LEN) {
			encode_stage_header(w->gen[g]->stages[i], sh);
			bytes_put_le(sh + 56, w->gen_no[g], 8);
		}
	if (decode_file_header(h, &fi, errstr) < 0
	    || decode_stages(h + WINDOW_HEADER_LEN, &fi, errstr) < 0)
		return -1;
	*len = (size_t)(sh - h);
	return 0;
}

/* ---- writing ---------------------------------------------------------- */

/*
 * The gzip member (pgzip.c), and buffers for byte-swapping words on
 * big-endian hosts: one more than pgzip keeps in flight, as its threads
 * may still be deflating those chunks while the next is swapped.
 */
struct gz_out {
	struct pgzip *pz;
	/* copies of chunks (chunk_bytes), nswap of them in turn, each made when first wanted */
	uint64_t **swap;
	unsigned nswap, next_swap;
};

_Static_assert(IO_CHUNK <= PGZIP_PIECE_MAX, "a chunk is one pgzip piece");
_Static_assert(IO_CHUNK <= UNTOUCHED_SPAN, "a chunk's pages are asked about in one call");

/* Stored where the chunk looks random, compressed where it is sparse or dense. */
/*
 * Only the chunk's density matters here, and every 8th word (16384 of a
 * 1 MiB chunk) estimates it within a fraction of a percent: counting all
 * the bits cost as much as compressing a stored chunk.
 */
#define DENSITY_STRIDE 8

static int chunk_level(const uint64_t *words, size_t nwords)
{
	uint64_t ones = 0, bits = 0;

	for (size_t i = 0; i < nwords; i += DENSITY_STRIDE, bits += 64)
		ones += (uint64_t)__builtin_popcountll(words[i]);
	return ones * 10 < bits * 3 || ones * 10 > bits * 7 ? 1 : 0;
}

/*
 * The next of w's chunk copies, made when first wanted; NULL when it
 * cannot be. pgzip holds at most nswap - 1 pieces in flight, so the copy
 * handed out nswap chunks ago has been read.
 */
static uint64_t *next_copy(struct gz_out *w)
{
	uint64_t **copy = &w->swap[w->next_swap];

	w->next_swap = (w->next_swap + 1) % w->nswap;
	if (*copy == NULL)
		*copy = malloc(IO_CHUNK);
	return *copy;
}

/*
 * The chunk's bytes in file order, for pgzip to read: the words
 * themselves where every page of them was written, on little-endian
 * hosts; else a copy, byte-swapped on big-endian ones, where pages never
 * written are given as zeros without reading them (untouched.h: on a
 * kernel with no zero page, reading them backs them, and a filter of 1e9
 * keys' size holding 1,000 took 860 MB to save). NULL when no copy can be
 * had.
 */
static const unsigned char *chunk_bytes(struct gz_out *w, const uint64_t *words, size_t nwords,
				       const unsigned char *read, size_t touched)
{
	const size_t page = UNTOUCHED_PAGE / 8, pages = (nwords + page - 1) / page;
	uint64_t *copy;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (touched == pages)
		return (const unsigned char *)words;
#else
	(void)touched;
#endif
	if ((copy = next_copy(w)) == NULL)
		return NULL;
	for (size_t i = 0; i < pages; i++) {
		size_t from = i * page, n = nwords - from < page ? nwords - from : page;

		if (!read[i]) {
			memset(copy + from, 0, n * 8);
			continue;
		}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(copy + from, words + from, n * 8);
#else
		for (size_t k = from; k < from + n; k++)
			copy[k] = __builtin_bswap64(words[k]);
#endif
	}
	return (const unsigned char *)copy;
}

static format_progress_fn *progress_fn;
static void *progress_ctx;
/* Bytes of bit arrays done and in all, for the file being read or written. */
static uint64_t progress_done, progress_total;

void format_set_progress(format_progress_fn *fn, void *ctx)
{
	progress_fn = fn;
	progress_ctx = ctx;
}

static void progress_start(uint64_t total)
{
	progress_done = 0;
	progress_total = total;
}

static void progress_step(int saving, uint64_t bytes)
{
	progress_done += bytes;
	if (progress_fn)
		progress_fn(progress_ctx, saving, progress_done, progress_total);
}

/*
 * Whether a chunk is all zero bits, without backing its memory: pages
 * never written hold zeros; the rest are read, stopping at the first word
 * set (at once, in a used chunk).
 */
static int chunk_is_zero(const uint64_t *words, size_t nwords, const unsigned char *read, size_t touched)
{
	const size_t page = UNTOUCHED_PAGE / 8;

	if (touched == 0)
		return 1;
	for (size_t i = 0; i < nwords; i++) {
		if (i % page == 0 && !read[i / page]) {
			i += page - 1;
			continue;
		}
		if (words[i] != 0)
			return 0;
	}
	return 1;
}

/*
 * A staged filter's chunk of n words from word first, from its blocks (sorted;
 * *next the first not yet placed): a copy with the blocks in place, in file
 * order, or NULL when none lies there (the chunk is zero). The same bytes
 * as the array would give once settled, without backing a page of it.
 */
static const unsigned char *staged_chunk(struct gz_out *w, const struct filter_block *blocks,
					 size_t nblocks, size_t *next, uint64_t first, size_t n, int *nomem)
{
	uint64_t *copy;

	*nomem = 0;
	if (*next == nblocks || blocks[*next].base >= first + n)
		return NULL;
	if ((copy = next_copy(w)) == NULL) {
		*nomem = 1;
		return NULL;
	}
	memset(copy, 0, n * 8);
	for (; *next < nblocks && blocks[*next].base < first + n; ++*next) {
		uint64_t *to = copy + (blocks[*next].base - first);

		for (unsigned j = 0; j < FILTER_BLOCK_BITS / 64; j++)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			to[j] = blocks[*next].words[j];
#else
			to[j] = __builtin_bswap64(blocks[*next].words[j]);
#endif
	}
	return (const unsigned char *)copy;
}

/* The payload of a staged filter, chunk by chunk from its blocks: 0, or -1 with *errstr. */
static int write_staged_payload(struct gz_out *w, const struct filter *f, const struct filter_block *blocks,
				size_t nblocks, const char **errstr)
{
	uint64_t nwords = filter_bytes(f) / 8, chunk = IO_CHUNK / 8;
	size_t next = 0;

	for (uint64_t i = 0; i < nwords; i += chunk) {
		size_t n = (size_t)(nwords - i < chunk ? nwords - i : chunk);
		int nomem, ret;
		const unsigned char *bytes = staged_chunk(w, blocks, nblocks, &next, i, n, &nomem);

		if (nomem)
			return bad(errstr, strerror(ENOMEM));
		if (bytes == NULL)
			ret = pgzip_write_zeros(w->pz, n * 8, 1, errstr);
		else
			ret = pgzip_write(w->pz, bytes, n * 8,
					  chunk_level((const uint64_t *)(const void *)bytes, n), errstr);
		if (ret < 0)
			return -1;
		progress_step(1, (uint64_t)n * 8);
	}
	return 0;
}

static int write_payload(struct gz_out *w, const struct filter *f, const char **errstr)
{
	uint64_t nwords = filter_bytes(f) / 8, chunk = IO_CHUNK / 8;
	struct filter_block *blocks;
	size_t nblocks;

	/* staged: from its blocks, its array never backed */
	if (filter_staged_blocks(f, &blocks, &nblocks)) {
		int ret = write_staged_payload(w, f, blocks, nblocks, errstr);

		free(blocks);
		return ret;
	}
	for (uint64_t i = 0; i < nwords; i += chunk) {
		size_t n = (size_t)(nwords - i < chunk ? nwords - i : chunk);
		const uint64_t *words = f->words + i;
		unsigned char read[UNTOUCHED_PAGES];
		/* one page-map read a chunk, for chunk_is_zero and chunk_bytes both */
		size_t touched = untouched_pages(words, n * 8, read);
		const unsigned char *bytes;
		int ret;

		/* level 1 is chunk_level's for no bits set: the same bytes either way */
		if (chunk_is_zero(words, n, read, touched))
			ret = pgzip_write_zeros(w->pz, n * 8, 1, errstr);
		else if ((bytes = chunk_bytes(w, words, n, read, touched)) == NULL)
			return bad(errstr, strerror(ENOMEM));
		else	/* the level from bytes: a copy's pages never written are not read again */
			ret = pgzip_write(w->pz, bytes, n * 8, chunk_level((const uint64_t *)(const void *)bytes, n),
					  errstr);
		if (ret < 0)
			return -1;
		progress_step(1, (uint64_t)n * 8);
	}
	return 0;
}

static void gz_out_close(struct gz_out *w)
{
	pgzip_close(w->pz);
	for (unsigned i = 0; i < w->nswap; i++)
		free(w->swap[i]);
	free(w->swap);
}

/*
 * Z_RLE at the level each chunk asks for; pgzip's fixed gzip header has
 * mtime 0, for reproducible output, and a CRC over the header itself, so
 * that every byte of the file is covered by a check.
 */
static int gz_out_open(struct gz_out *w, int fd, int direct, uint64_t pieces,
		       const unsigned char *extra, size_t extra_len, const char **errstr)
{
	memset(w, 0, sizeof *w);
	w->pz = pgzip_open(fd, pipeline_threads(), Z_RLE, direct, pieces, extra, extra_len, errstr);
	if (w->pz == NULL) {
		gz_out_close(w);
		return -1;
	}
	if ((w->swap = calloc(pgzip_in_flight(w->pz) + 1, sizeof *w->swap)) == NULL) {
		gz_out_close(w);
		return bad(errstr, strerror(ENOMEM));
	}
	w->nswap = (unsigned)pgzip_in_flight(w->pz) + 1;
	return 0;
}

/*
 * What a file holds, flat: its headers, encoded and checked, and its
 * stages in file order (a cascade's, or a window's generation by
 * generation).
 */
struct saving {
	unsigned char head[HEADERS_MAX];
	size_t head_len;
	const struct filter *stage[WINDOW_STAGES_MAX];
	size_t nstages;
	uint64_t bytes;
};

static int saving_cascade(struct saving *sv, const struct cascade *c, const char **errstr)
{
	if (encode_checked(c, sv->head, &sv->head_len, errstr) < 0)
		return -1;
	for (sv->nstages = 0; sv->nstages < c->nstages; sv->nstages++)
		sv->stage[sv->nstages] = c->stages[sv->nstages];
	sv->bytes = cascade_bytes(c);
	return 0;
}

static int saving_window(struct saving *sv, const struct window *w, const char **errstr)
{
	if (encode_window_checked(w, sv->head, &sv->head_len, errstr) < 0)
		return -1;
	sv->nstages = 0;
	for (size_t g = 0; g < w->ngen; g++)
		for (size_t i = 0; i < w->gen[g]->nstages; i++)
			sv->stage[sv->nstages++] = w->gen[g]->stages[i];
	sv->bytes = window_bytes(w);
	return 0;
}

/* The pieces save hands pgzip: the headers, then each stage's chunks. */
static uint64_t saving_pieces(const struct saving *sv)
{
	uint64_t pieces = 1;

	for (size_t i = 0; i < sv->nstages; i++)
		pieces += (filter_bytes(sv->stage[i]) + IO_CHUNK - 1) / IO_CHUNK;
	return pieces;
}

/*
 * The statistics subfield (bf(5), "Statistics"): every stage's figures,
 * counted here, a pass or two over bits that are about to be read for
 * saving anyway (untouched spans skipped), so that bfinfo need not read
 * them at all. Into out (STATS_SUBFIELD_MAX bytes); its length.
 */
static size_t encode_stats(const struct saving *sv, unsigned char *out)
{
	size_t len = STATS_HEAD + STATS_ENTRY * sv->nstages;

	out[0] = 'B';
	out[1] = 'S';
	bytes_put_le(out + 2, len, 2);
	bytes_put_le(out + 4, sv->nstages, 4);
	bytes_put_le(out + 8, 0, 4);	/* flags */
	for (size_t i = 0; i < sv->nstages; i++) {
		unsigned char *e = out + 4 + STATS_HEAD + STATS_ENTRY * i;
		struct filter_stats st;

		filter_stats_of(sv->stage[i], &st);
		bytes_put_le(e, st.bits_set, 8);
		bytes_put_le(e + 8, st.saturated, 8);
		bytes_put_double(e + 16, st.rate);
	}
	return 4 + len;
}

/* direct: fd is our own new file, which may be written around the page cache. */
static int save(const struct saving *sv, int fd, int direct, const char **errstr)
{
	static unsigned char stats[STATS_SUBFIELD_MAX];
	struct gz_out w;
	int ok;

	if (gz_out_open(&w, fd, direct, saving_pieces(sv), stats, encode_stats(sv, stats), errstr) < 0)
		return -1;
	ok = pgzip_write(w.pz, sv->head, sv->head_len, 1, errstr) == 0;
	progress_start(sv->bytes);
	for (size_t i = 0; ok && i < sv->nstages; i++)
		ok = write_payload(&w, sv->stage[i], errstr) == 0;
	ok = ok && pgzip_finish(w.pz, errstr) == 0;
	gz_out_close(&w);
	return ok ? 0 : -1;
}

static int save_path(const struct saving *sv, const char *path, const char **errstr)
{
	struct atomic_file af;

	if (atomic_open(&af, path, errstr) < 0)
		return -1;
	/* around the page cache only into our own temporary: a descriptor
	 * written in place (-o /dev/stdout) shares its flags with others */
	if (save(sv, af.fd, sv->bytes >= SAVE_DIRECT_MIN && af.temp != NULL, errstr) < 0) {
		atomic_abort(&af);
		return -1;
	}
	return atomic_commit(&af, errstr);
}

/* (struct saving is large: kept off the stack, as the library is single-threaded) */
static struct saving saving;

int format_save(const struct cascade *c, int fd, const char **errstr)
{
	/* fd is the caller's (stdout, say): its open file's flags are not ours to change */
	if (saving_cascade(&saving, c, errstr) < 0)
		return -1;
	return save(&saving, fd, 0, errstr);
}

int format_save_path(const struct cascade *c, const char *path, const char **errstr)
{
	/* refuse a bad cascade before the target's directory is touched */
	if (saving_cascade(&saving, c, errstr) < 0)
		return -1;
	return save_path(&saving, path, errstr);
}

int format_save_window(const struct window *w, int fd, const char **errstr)
{
	if (saving_window(&saving, w, errstr) < 0)
		return -1;
	return save(&saving, fd, 0, errstr);
}

int format_save_window_path(const struct window *w, const char *path, const char **errstr)
{
	if (saving_window(&saving, w, errstr) < 0)
		return -1;
	return save_path(&saving, path, errstr);
}

/* ---- reading ---------------------------------------------------------- */

const char format_err_sketch[] = "a bftools sketch, not a filter";
const char format_err_summary[] = "a bftop summary, not a filter";

struct format_reader {
	struct gzin in;
	uint64_t left;		/* payload bytes not yet handed out */
	const char *pending;	/* an end-of-member error kept for format_close */
	const char *failed;	/* the error that broke the stream, repeated after */
};

static int inflate_headers(struct format_reader *r, unsigned char *dst, size_t len,
			   const char **errstr)
{
	size_t done;

	return gzin_read(&r->in, dst, len, &done, errstr);
}

/* What the first bytes of a file say it is. */
enum start_kind { START_OURS, START_DCSO, START_SKETCH };

/* gzin_sniff's test: an enum start_kind, or -1 until both tests can tell. */
static int start_kind(const unsigned char *start, size_t len)
{
	int dcso = dcso_detect(start, len), sketch = sketch_detect(start, len);

	if (dcso == 1)
		return START_DCSO;
	if (sketch == 1)
		return START_SKETCH;
	return dcso < 0 || sketch < 0 ? -1 : START_OURS;
}

/*
 * Read the first bytes, enough to tell a DCSO bloom filter (dcso.h) or a
 * sketch (sketch.h) from anything else, as r's input. Returns an enum
 * start_kind (START_OURS for anything else, ours or not), -1 on a read
 * error.
 */
static int read_start(struct format_reader *r, const char **errstr)
{
	int kind;

	if (gzin_sniff(&r->in, start_kind, DCSO_SNIFF_MAX, &kind, errstr) < 0)
		return -1;
	return kind < 0 ? START_OURS : kind;	/* undecided: the headers will say */
}

/* Ours with kind for T, the byte that names the kind of bftools file. */
static int kind_magic(const unsigned char *h, unsigned char kind)
{
	return h[3] == kind && memcmp(h, magic, 3) == 0 && memcmp(h + 4, magic + 4, MAGIC_LEN - 4) == 0;
}

/* A sketch's magic (sketch.c): S for T. */
static int sketch_magic(const unsigned char *h)
{
	return kind_magic(h, 'S');
}

/* Every header, file and stages, into fi: all of it checked before any bits are read. */
static int read_headers(struct format_reader *r, struct file_info *fi, const char **errstr)
{
	unsigned char h[HEADERS_MAX];

	if (inflate_headers(r, h, MAGIC_LEN, errstr) < 0) {
		if (r->in.ended)	/* a whole gzip member, too short to be ours */
			*errstr = "not a bftools filter (bad magic)";
		return -1;
	}
	if (sketch_magic(h))
		return bad(errstr, format_err_sketch);
	if (kind_magic(h, 'H'))
		return bad(errstr, format_err_summary);
	if (memcmp(h, magic, MAGIC_LEN) != 0)
		return bad(errstr, "not a bftools filter (bad magic)");
	if (inflate_headers(r, h + MAGIC_LEN, FILE_HEADER_LEN - MAGIC_LEN, errstr) < 0)
		return -1;
	/* version 2 (checked again by the decoder): the window block follows */
	if (bytes_get_le(h + 8, 4) == FORMAT_VERSION_WINDOW && bytes_get_le(h + 12, 4) == WINDOW_HEADER_LEN
	    && inflate_headers(r, h + FILE_HEADER_LEN, WINDOW_HEADER_LEN - FILE_HEADER_LEN,
			       errstr) < 0)
		return -1;
	if (decode_file_header(h, fi, errstr) < 0)
		return -1;
	if (inflate_headers(r, h, fi->nstages * STAGE_HEADER_LEN, errstr) < 0
	    || decode_stages(h, fi, errstr) < 0)
		return -1;
	return 0;
}

static void free_stages(struct filter **stages, size_t n)
{
	for (size_t i = 0; i < n; i++)
		filter_free(stages[i]);
}

/* Stage i of fi with its params and counts but no bit array (words NULL). */
static struct filter *bitless_stage(const struct file_info *fi, size_t i)
{
	struct filter *f = calloc(1, sizeof *f);

	if (f == NULL)
		return NULL;
	f->params = fi->stage[i];
	f->insertions = fi->insertions[i];
	f->removals = fi->removals[i];
	siphash_key_from_bytes(&f->sipkey, f->params.key);
	return f;
}

static struct cascade *make_shape(const struct file_info *fi, const char **errstr)
{
	struct filter *stages[CASCADE_STAGES_MAX];
	struct cascade *c;

	for (size_t i = 0; i < fi->nstages; i++) {
		stages[i] = bitless_stage(fi, i);
		if (stages[i] == NULL) {
			free_stages(stages, i);
			*errstr = strerror(ENOMEM);
			return NULL;
		}
	}
	c = cascade_from_stages(stages, fi->nstages, fi->growth, fi->tighten, fi->capacity,
				fi->target_p, errstr);
	if (c == NULL)
		free_stages(stages, fi->nstages);
	return c;
}

static struct format_reader *reader_new(int fd, const char **errstr)
{
	struct format_reader *r = calloc(1, sizeof *r);

	if (r == NULL) {
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	if (gzin_open(&r->in, fd, GZIN_FILTER, errstr) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

void format_abandon(struct format_reader *r)
{
	if (r == NULL)
		return;
	gzin_close(&r->in);
	free(r);
}

const char format_err_windowed[] =
	"a windowed filter (bfuniq --window): this program cannot use it";

/*
 * A reader past the headers of the bftools filter in fd, fi its headers.
 * A DCSO filter is loaded whole into *dcso when dcso is not NULL, a
 * sketch into *sketch when sketch is not NULL (the reader is then NULL);
 * else they are refused. NULL with *errstr on failure.
 */
static struct format_reader *open_reader(int fd, struct file_info *fi, struct cascade **dcso,
					 struct sketch **sketch, const char **errstr)
{
	struct format_reader *r = reader_new(fd, errstr);
	int kind;

	if (r == NULL)
		return NULL;
	kind = read_start(r, errstr);
	if (kind == START_DCSO && dcso != NULL)
		*dcso = dcso_load(fd, r->in.buf, r->in.zs.avail_in, r->in.eof, errstr);
	else if (kind == START_DCSO)
		*errstr = "a DCSO bloom filter, not a bftools filter (it cannot be streamed)";
	else if (kind == START_SKETCH && sketch != NULL)
		*sketch = sketch_load_started(fd, r->in.buf, r->in.zs.avail_in, r->in.eof, errstr);
	else if (kind == START_SKETCH)
		*errstr = format_err_sketch;
	if (kind != START_OURS || gzin_expect_gzip(&r->in, errstr) < 0
	    || read_headers(r, fi, errstr) < 0) {
		format_abandon(r);
		return NULL;
	}
	r->left = fi->payload;
	progress_start(fi->payload);
	return r;
}

/* A cascade's reader and shape; a windowed file is refused. */
static struct format_reader *open_cascade(int fd, struct cascade **shape, struct cascade **dcso,
					  const char **errstr)
{
	static struct file_info fi;	/* large; the library is single-threaded */
	struct format_reader *r = open_reader(fd, &fi, dcso, NULL, errstr);

	*shape = NULL;
	if (r == NULL)
		return NULL;
	if (fi.windowed)
		*errstr = format_err_windowed;
	if (fi.windowed || (*shape = make_shape(&fi, errstr)) == NULL) {
		format_abandon(r);
		return NULL;
	}
	return r;
}

struct format_reader *format_open(int fd, struct cascade **shape, const char **errstr)
{
	return open_cascade(fd, shape, NULL, errstr);
}

int format_read(struct format_reader *r, void *buf, size_t len, const char **errstr)
{
	size_t done;

	if (r->failed)
		return bad(errstr, r->failed);
	if (len > r->left)
		return bad(errstr, "read past the end of the payload");
	if (gzin_read(&r->in, buf, len, &done, errstr) < 0) {
		/*
		 * All of the payload arrived and inflate went on into the
		 * trailer: the CRC or length is format_close's to report.
		 */
		if (done == len && len == r->left) {
			r->pending = *errstr;
			r->left = 0;
			return 0;
		}
		r->failed = *errstr;
		return -1;
	}
	r->left -= len;
	progress_step(0, len);
	return 0;
}

int format_close(struct format_reader *r, const char **errstr)
{
	int ret = 0;

	if (r->failed)
		ret = bad(errstr, r->failed);
	else if (r->left > 0)
		ret = bad(errstr, "closed before the end of the payload");
	else if (r->pending)
		ret = bad(errstr, r->pending);
	else
		ret = gzin_end(&r->in, errstr);
	format_abandon(r);
	return ret;
}

/* A stage shaped and counted as model, its bits still to be read. */
static struct filter *empty_stage(const struct filter *model, const char **errstr)
{
	struct filter *f = filter_new(&model->params, errstr);

	if (f == NULL)
		return NULL;
	f->insertions = model->insertions;
	f->removals = model->removals;
	/* as many keys as the dense threshold: its bits will be everywhere, in huge pages */
	if (f->insertions / FILTER_DENSE_KEYS_PER_SPAN >= filter_bytes(f) / FILTER_BACK_SPAN)
		filter_expect_dense(f);
	return f;
}

/* Stage shape->stages[i] with its bits, read from r. */
static struct filter *read_stage(struct format_reader *r, const struct filter *model,
				 const char **errstr)
{
	struct filter *f = empty_stage(model, errstr);

	if (f == NULL)
		return NULL;
	/* in chunks, so that progress can be shown while a big filter loads */
	for (size_t done = 0, len; done < filter_bytes(f); done += len) {
		len = filter_bytes(f) - done < IO_CHUNK ? filter_bytes(f) - done : IO_CHUNK;
		if (format_read(r, (unsigned char *)f->words + done, len, errstr) < 0) {
			filter_free(f);
			return NULL;
		}
	}
	swap_words(f->words, filter_bytes(f) / 8);
	return f;
}

/* Every stage's bits, then the end of the member; the stages on success. */
static int read_stages(struct format_reader *r, const struct cascade *shape,
		       struct filter **stages, const char **errstr)
{
	for (size_t i = 0; i < shape->nstages; i++) {
		stages[i] = read_stage(r, shape->stages[i], errstr);
		if (stages[i] == NULL) {
			free_stages(stages, i);
			format_abandon(r);
			return -1;
		}
	}
	if (format_close(r, errstr) < 0) {
		free_stages(stages, shape->nstages);
		return -1;
	}
	return 0;
}

/* gzindex_inflate's progress, shown as reading in order shows it. */
static void indexed_progress(void *ctx, uint64_t done)
{
	(void)ctx;
	if (done > progress_total)
		done = progress_total;
	if (done > progress_done)
		progress_step(0, done - progress_done);
}

/*
 * The stages' bits through the file's index of pieces (gzindex.h), on every
 * thread, when fd is a regular file that starts with the filter and has
 * one: 0 with stages filled and r given up. Else -1, with nothing kept and
 * r still at the bits, to be read in order as files without an index are
 * (which is also what finds and names any damage: this path only ever
 * succeeds or steps aside).
 */
static int read_stages_indexed(int fd, struct format_reader *r, const struct cascade *shape,
			       struct filter **stages)
{
	struct gzindex_region regions[CASCADE_STAGES_MAX + 1];
	const char *ignored = NULL;
	size_t n = shape->nstages, i;

	if (r->in.start != 0)
		return -1;
	regions[0] = (struct gzindex_region){ NULL, FILE_HEADER_LEN + (uint64_t)STAGE_HEADER_LEN * n };
	for (i = 0; i < n; i++) {
		if ((stages[i] = empty_stage(shape->stages[i], &ignored)) == NULL)
			break;
		regions[i + 1] = (struct gzindex_region){ (unsigned char *)stages[i]->words,
							  filter_bytes(stages[i]) };
	}
	if (i == n && gzindex_inflate(fd, regions, n + 1, pipeline_threads(), 1, indexed_progress, NULL) == 0) {
		for (i = 0; i < n; i++)
			swap_words(stages[i]->words, filter_bytes(stages[i]) / 8);
		format_abandon(r);
		return 0;
	}
	free_stages(stages, i);
	return -1;
}

/*
 * A short file whose header claims a huge filter fails on memory before its
 * payload is read. For a regular file, gzip's ISIZE (the content length mod
 * 2^32, the member's last 4 bytes) tells whether the header is believable:
 * when it disagrees, the file is the problem, not the machine. Pipes cannot
 * be checked ahead, and other damage keeps its precise message.
 */
static const char trailer_message[] =
	"truncated or corrupt (the gzip trailer's length disagrees with the header)";

/*
 * Deflate never shrinks data more than 1032 to 1 (a 258-byte match in
 * two bits at best), so a gzip file of S bytes holds at most about
 * 1032 S: a header claiming more is believed by no file of that size,
 * even where ISIZE agrees by chance (a payload of a multiple of 4 GiB,
 * such as m = 2^40 bits).
 */
#define DEFLATE_RATIO_MAX 1032u
static const char too_much_message[] =
	"truncated or corrupt (the header claims more bytes than a file this size can hold)";

/* Why a regular file fd cannot hold the content shape claims, or NULL. */
static const char *claims_too_much(int fd, const struct cascade *shape)
{
	struct stat st;
	uint64_t content = (uint64_t)FILE_HEADER_LEN + (uint64_t)STAGE_HEADER_LEN * shape->nstages +
			   cascade_bytes(shape);

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	return content / DEFLATE_RATIO_MAX > (uint64_t)st.st_size ? too_much_message : NULL;
}

static int trailer_disagrees(int fd, const struct cascade *shape)
{
	unsigned char isize[4];
	struct stat st;
	uint64_t content = (uint64_t)FILE_HEADER_LEN + (uint64_t)STAGE_HEADER_LEN * shape->nstages +
			   cascade_bytes(shape);

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 18 ||
	    pread(fd, isize, 4, st.st_size - 4) != 4)
		return 0;
	return bytes_get_le(isize, 4) != (content & 0xffffffffu);
}

/* The cascade of headers fi, its bits read from r, which is consumed. */
static struct cascade *load_cascade(int fd, struct format_reader *r, const struct file_info *fi,
				    const char **errstr)
{
	struct filter *stages[CASCADE_STAGES_MAX];
	struct cascade *shape = make_shape(fi, errstr), *c;

	if (shape == NULL) {
		format_abandon(r);
		return NULL;
	}
	/* the whole file's bit arrays, before any of them is allocated */
	if ((*errstr = claims_too_much(fd, shape)) != NULL) {
		if (trailer_disagrees(fd, shape))
			*errstr = trailer_message;	/* the more precise of the two */
		format_abandon(r);
		cascade_free(shape);
		return NULL;
	}
	if (!filter_memory_allows(cascade_bytes(shape))) {
		*errstr = trailer_disagrees(fd, shape) ? trailer_message : filter_err_limit;
		format_abandon(r);
		cascade_free(shape);
		return NULL;
	}
	if (read_stages_indexed(fd, r, shape, stages) < 0 && read_stages(r, shape, stages, errstr) < 0) {
		if (*errstr == filter_err_nomem && trailer_disagrees(fd, shape))
			*errstr = trailer_message;
		cascade_free(shape);
		return NULL;
	}
	c = cascade_from_stages(stages, shape->nstages, shape->growth, shape->tighten,
				shape->capacity, shape->target_p, errstr);
	if (c == NULL)
		free_stages(stages, shape->nstages);
	cascade_free(shape);
	return c;
}

/* (large; the library is single-threaded) */
static struct file_info load_info;

struct cascade *format_load(int fd, const char **errstr)
{
	struct cascade *c = NULL;
	struct format_reader *r = open_reader(fd, &load_info, &c, NULL, errstr);

	if (r == NULL)
		return c;	/* a DCSO filter, or NULL */
	if (load_info.windowed) {
		format_abandon(r);
		return bad(errstr, format_err_windowed), NULL;
	}
	return load_cascade(fd, r, &load_info, errstr);
}

struct cascade *format_load_path(const char *path, const char **errstr)
{
	struct cascade *c;
	int fd = readpath_open(path);

	if (fd < 0) {
		*errstr = strerror(errno);
		return NULL;
	}
	c = format_load(fd, errstr);
	readpath_close(fd);
	return c;
}

/* ---- windowed files ---------------------------------------------------- */

/* Stage i of fi with its bits read from r. */
static struct filter *read_flat_stage(struct format_reader *r, const struct file_info *fi,
				      size_t i, const char **errstr)
{
	struct filter *model = bitless_stage(fi, i), *f;

	if (model == NULL)
		return bad(errstr, strerror(ENOMEM)), NULL;
	f = read_stage(r, model, errstr);
	filter_free(model);
	return f;
}

/* The stages of fi, grouped into generations; frees stages on failure. */
static struct window *assemble(const struct file_info *fi, struct filter **stages,
			       const char **errstr)
{
	struct cascade *gens[WINDOW_GENERATIONS_MAX];
	uint64_t nos[WINDOW_GENERATIONS_MAX] = { 0 };
	size_t n = 0, from = 0, i;
	struct window *w = NULL;
	struct filter_params shape = fi->stage[0];

	shape.layout = fi->window_layout;
	for (i = 1; i <= fi->nstages && n < WINDOW_GENERATIONS_MAX; i++) {
		if (i < fi->nstages && fi->gen_no[i] == fi->gen_no[from])
			continue;
		gens[n] = cascade_from_stages(stages + from, i - from, fi->growth, fi->tighten,
					      fi->capacity, fi->target_p, errstr);
		if (gens[n] == NULL)
			break;
		nos[n++] = fi->gen_no[from];
		from = i;
	}
	*errstr = "bad header: too many generations";
	if (from == fi->nstages)
		w = window_from_generations(&fi->wp, fi->clock, gens, nos, n, &shape, errstr);
	if (w == NULL) {
		for (size_t g = 0; g < n; g++) {
			gens[g]->nstages = 0;	/* the stages are freed below */
			cascade_free(gens[g]);
		}
		free_stages(stages, fi->nstages);
	}
	return w;
}

static struct window *load_window(struct format_reader *r, const struct file_info *fi,
				  const char **errstr)
{
	static struct filter *stages[WINDOW_STAGES_MAX];

	if (!filter_memory_allows(fi->payload)) {
		format_abandon(r);
		return bad(errstr, filter_err_limit), NULL;
	}
	for (size_t i = 0; i < fi->nstages; i++) {
		stages[i] = read_flat_stage(r, fi, i, errstr);
		if (stages[i] == NULL) {
			free_stages(stages, i);
			format_abandon(r);
			return NULL;
		}
	}
	if (format_close(r, errstr) < 0) {
		free_stages(stages, fi->nstages);
		return NULL;
	}
	return assemble(fi, stages, errstr);
}

/* ---- statistics --------------------------------------------------------- */

_Static_assert(STATS_SUBFIELD_MAX <= PGZIP_EXTRA_MAX, "the statistics fit beside the index");

static const char stats_unfit[] = "bad header: stored statistics do not fit the stages";

/* Stage i's stored figures, checked against what its header allows. */
static int decode_stage_stats(const unsigned char *e, const struct filter_params *p,
			      struct filter_stats *st)
{
	st->bits_set = bytes_get_le(e, 8);
	st->saturated = bytes_get_le(e + 8, 8);
	st->rate = bytes_get_double(e + 16);
	if (st->bits_set > filter_probed(p) || st->saturated > st->bits_set)
		return -1;
	if (st->saturated != 0 && !layout_has(p->layout, LAYOUT_COUNTERS))
		return -1;
	return st->rate >= 0.0 && st->rate <= 1.0 ? 0 : -1;	/* false for NaN too */
}

/*
 * The statistics the file of headers fi stores, into st (st->stored 0
 * when it stores none: written before bftools stored them, or by another
 * gzip). Returns 0, or -1 with *errstr when they contradict the headers.
 */
static int read_stored_stats(const struct gzin *in, const struct file_info *fi,
			     struct format_stats *st, const char **errstr)
{
	size_t len;
	const unsigned char *d = gzin_subfield(in, 'B', 'S', &len);

	st->stored = 0;
	st->nstages = 0;
	if (d == NULL)
		return 0;
	if (len < STATS_HEAD || bytes_get_le(d, 4) != fi->nstages || bytes_get_le(d + 4, 4) != 0 ||
	    len != STATS_HEAD + STATS_ENTRY * fi->nstages)
		return bad(errstr, stats_unfit);
	for (size_t i = 0; i < fi->nstages; i++)
		if (decode_stage_stats(d + STATS_HEAD + STATS_ENTRY * i, &fi->stage[i], &st->stage[i]) < 0)
			return bad(errstr, stats_unfit);	/* st->stored still 0 */
	st->stored = 1;
	st->nstages = fi->nstages;
	return 0;
}

/* The figures of stages[0..n), counted from their bits. */
static void count_stats(struct filter *const *stages, size_t n, struct format_stats *st)
{
	for (size_t i = 0; i < n; i++)
		filter_stats_of(stages[i], &st->stage[st->nstages++]);
}

static void count_loaded(const struct cascade *c, const struct window *w, struct format_stats *st)
{
	st->nstages = 0;
	if (c != NULL)
		count_stats(c->stages, c->nstages, st);
	for (size_t g = 0; w != NULL && g < w->ngen; g++)
		count_stats(w->gen[g]->stages, w->gen[g]->nstages, st);
}

/* The first figure where stored and counted differ, in words; NULL when none does. */
static const char *stats_differ(const struct format_stats *stored, const struct format_stats *counted)
{
	static char msg[256];

	for (size_t i = 0; i < stored->nstages; i++) {
		const struct filter_stats *a = &stored->stage[i], *b = &counted->stage[i];
		/* the count that differs (bits set or saturated counters) beside the rates */
		int counters = a->bits_set == b->bits_set && a->saturated != b->saturated;
		const char *what = a->bits_set != b->bits_set ? "bits set" :
				   counters ? "saturated counters" :
				   a->rate != b->rate ? "rate now" : NULL;

		if (what == NULL)
			continue;
		snprintf(msg, sizeof msg,
			 "stored statistics disagree with the bits: stage %zu of %zu, %s "
			 "(stored %llu, %.17g; counted %llu, %.17g)",
			 i + 1, stored->nstages, what,
			 (unsigned long long)(counters ? a->saturated : a->bits_set), a->rate,
			 (unsigned long long)(counters ? b->saturated : b->bits_set), b->rate);
		return msg;
	}
	return NULL;
}

/* The window of headers fi without bits: every stage a shape. */
static struct window *window_shape(const struct file_info *fi, const char **errstr)
{
	static struct filter *stages[WINDOW_STAGES_MAX];

	for (size_t i = 0; i < fi->nstages; i++) {
		if ((stages[i] = bitless_stage(fi, i)) == NULL) {
			free_stages(stages, i);
			return bad(errstr, strerror(ENOMEM)), NULL;
		}
	}
	return assemble(fi, stages, errstr);
}

/* Shapes of the headers fi, for a file whose statistics say the rest (w is given for a window). */
static int load_shapes(const struct file_info *fi, struct cascade **c, struct window **w,
		       const char **errstr)
{
	if (fi->windowed)
		return (*w = window_shape(fi, errstr)) != NULL ? 0 : -1;
	return (*c = make_shape(fi, errstr)) != NULL ? 0 : -1;
}

/* Drop what was loaded, for an error after it. */
static void unload(struct cascade **c, struct window **w)
{
	cascade_free(*c);
	*c = NULL;
	if (w != NULL) {
		window_free(*w);
		*w = NULL;
	}
}

/*
 * The rest of a pipe read to its end, unread: a writer into it (bfbuild
 * -o - | bfinfo -) must not fail on a reader gone after the headers.
 * Nothing to do for a file.
 */
static void drain_pipe(struct format_reader *r)
{
	ssize_t n;

	if (r->in.start >= 0 || r->in.eof)
		return;
	do
		n = read(r->in.fd, r->in.buf, GZIN_BUFFER);
	while (n > 0 || (n < 0 && errno == EINTR));
}

/* *c, *w and *sk to NULL, where given. */
static void nothing_loaded(struct cascade **c, struct window **w, struct sketch **sk)
{
	*c = NULL;
	if (w != NULL)
		*w = NULL;
	if (sk != NULL)
		*sk = NULL;
}

/*
 * The bits of the file of headers load_info after its headers, and the
 * figures how wants: as stored (FORMAT_BITS), or counted, and then
 * checked against those stored (FORMAT_FIGURES_VERIFIED; FORMAT_FIGURES
 * for a file that stores none). 0, or -1 with *errstr and nothing loaded.
 */
static int load_bits(int fd, struct format_reader *r, struct cascade **c, struct window **w,
		     enum format_figures how, const struct format_stats *stored,
		     struct format_stats *st, const char **errstr)
{
	const char *differ;

	if (load_info.windowed)
		*w = load_window(r, &load_info, errstr);
	else
		*c = load_cascade(fd, r, &load_info, errstr);
	if (*c == NULL && (w == NULL || *w == NULL))
		return -1;
	*st = *stored;
	if (how == FORMAT_BITS)
		return 0;
	count_loaded(*c, w != NULL ? *w : NULL, st);
	st->stored = stored->stored;
	if (stored->stored && (differ = stats_differ(stored, st)) != NULL) {
		unload(c, w);
		return bad(errstr, differ);
	}
	return 0;
}

int format_load_described(int fd, struct cascade **c, struct window **w, struct sketch **sk,
			  enum format_figures how, struct format_stats *st, const char **errstr)
{
	static struct format_stats stored;
	struct format_reader *r;

	nothing_loaded(c, w, sk);
	st->stored = 0;
	st->nstages = 0;
	r = open_reader(fd, &load_info, c, sk, errstr);
	if (r == NULL) {	/* a DCSO filter, a sketch, or an error */
		if (how != FORMAT_BITS)
			count_loaded(*c, NULL, st);
		return *c != NULL || (sk != NULL && *sk != NULL) ? 0 : -1;
	}
	if (load_info.windowed && w == NULL) {
		format_abandon(r);
		return bad(errstr, format_err_windowed);
	}
	/* readers of bits need no figures: ones that do not fit are ignored, never refused */
	if (read_stored_stats(&r->in, &load_info, &stored, errstr) < 0 && how != FORMAT_BITS) {
		format_abandon(r);
		return -1;
	}
	if (stored.stored && how == FORMAT_FIGURES) {
		drain_pipe(r);
		format_abandon(r);
		*st = stored;
		return load_shapes(&load_info, c, w, errstr);
	}
	return load_bits(fd, r, c, w, how, &stored, st, errstr);
}

int format_load_described_path(const char *path, struct cascade **c, struct window **w,
			       struct sketch **sk, enum format_figures how, struct format_stats *st,
			       const char **errstr)
{
	int fd = readpath_open(path), ret;

	if (fd < 0) {
		nothing_loaded(c, w, sk);
		st->stored = 0;
		st->nstages = 0;
		return bad(errstr, strerror(errno));
	}
	ret = format_load_described(fd, c, w, sk, how, st, errstr);
	readpath_close(fd);
	return ret;
}

int format_load_any(int fd, struct cascade **c, struct window **w, struct sketch **sk,
		    const char **errstr)
{
	static struct format_stats ignored;

	return format_load_described(fd, c, w, sk, FORMAT_BITS, &ignored, errstr);
}

int format_load_any_path(const char *path, struct cascade **c, struct window **w,
			 struct sketch **sk, const char **errstr)
{
	static struct format_stats ignored;

	return format_load_described_path(path, c, w, sk, FORMAT_BITS, &ignored, errstr);
}
