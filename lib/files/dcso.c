/* SPDX-License-Identifier: MIT */
/*
 * dcso.c - read and write DCSO bloom filter files.
 *
 * Written from DCSO's documentation and the behaviour of its reference
 * implementation (github.com/DCSO/bloom, the `bloom` command 0.2.4), and
 * checked against files that command writes; no code is taken from it.
 * Every integer is little-endian, 8 bytes, written byte by byte:
 *
 *   +----+----+----+----+----+----+----+----+
 *  0| version: 01 00 00 00 00 00 00 00       | the reference reads only the
 *   +----+----+----+----+----+----+----+----+ low byte; we want the whole
 *  8| n: the capacity it was sized for       | word, as every writer puts
 *   +----+----+----+----+----+----+----+----+ it: it is all the file has
 * 16| p: the false-positive rate (binary64)  | for a magic number
 *   +----+----+----+----+----+----+----+----+
 * 24| k: probes per key                      |
 *   +----+----+----+----+----+----+----+----+
 * 32| m: bits, any number                    |
 *   +----+----+----+----+----+----+----+----+
 * 40| N: keys that set a new bit when added  |
 *   +----+----+----+----+----+----+----+----+
 * 48| ceil(m / 64) words: bit i of the filter is bit i % 64 of word i / 64
 *   +----+----+----+----+----+----+----+----+
 *   | data: free-form bytes to the end of the file
 *   +----+----+----+----+----+----+----+----+
 *
 * The whole may be gzipped (the reference's --gzip; Go's reader also takes
 * several gzip members back to back, and so do we). The reference is told
 * which by a flag; we look at the first two bytes (1f 8b). Nothing checks a
 * plain file's bytes; a gzip file has gzip's CRC-32, which we verify by
 * inflating to the end, the data included.
 *
 * The probes of a key are the DCSO layout's (layout_dcso.c): this file
 * reads and writes the files and nothing else.
 *
 * Sizing of a new filter, as the reference's Initialize, in binary64:
 *
 *   m = |ceil(n ln p / (ln 2)^2)|      k = ceil(m ln 2 / n)
 *
 * with (ln 2)^2 = ln 2 * ln 2 (Go's Pow(x, 2) squares the mantissa, the same
 * rounding). C's log and Go's may differ in the last bit for some p; the
 * bats tests compare the sizes for common n and p with `bloom create`.
 *
 * A filter read is written back as it came, as the reference's insert
 * and join write it: gzipped or not, with the free-form data after its
 * bits (kept in memory with the cascade: the reference holds it too).
 *
 * Deliberately absent: any check that m and k suit n and p (the bits are
 * what they are).
 */
#define ZLIB_CONST
#include <zlib.h>

#include "dcso.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "cascade.h"
#include "filter.h"
#include "gzin.h"
#include "gzout.h"
#include "iosize.h"
#include "sizing.h"
#include "writer.h"

#define IO_CHUNK ((size_t)1 << 20)	/* output buffer, bits per write */
#define READ_CHUNK IOSIZE_BUFFER		/* input buffer */
_Static_assert(DCSO_SNIFF_MAX <= READ_CHUNK, "what dcso_sniff reads ahead fits the input buffer");
#define INFLATE_MAX ((size_t)1 << 30)	/* avail_out is a 32-bit uInt: feed it in pieces */
#define GZIP_WINDOW (15 + 16)		/* 32 KiB window, gzip wrapper only */
#define SKIP_CHUNK ((size_t)16 << 10)	/* the data after the bits is read in pieces of this */


static const unsigned char version_word[8] = { DCSO_VERSION, 0, 0, 0, 0, 0, 0, 0 };

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

static void put_le(unsigned char *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

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

static uint64_t words_for(uint64_t bits)
{
	return bits / 64 + (bits % 64 != 0);
}

/* ---- telling a DCSO file from others ------------------------------------ */

/* The version word against len bytes of content: 1 it is, 0 it is not, -1 too short to say. */
static int version_match(const unsigned char *p, size_t len)
{
	size_t n = len < sizeof version_word ? len : sizeof version_word;

	if (memcmp(p, version_word, n) != 0)
		return 0;
	return n < sizeof version_word ? -1 : 1;
}

/* The first content bytes of the gzip member in p[0..len), against the version word. */
static int gzip_match(const unsigned char *p, size_t len)
{
	unsigned char head[sizeof version_word];
	int more;
	size_t got = gzin_peek(p, len, head, sizeof head, &more);
	int verdict = version_match(head, got);

	return verdict < 0 && !more ? 0 : verdict;	/* ended or broken before 8 bytes */
}

int dcso_detect(const unsigned char *start, size_t len)
{
	if (len == 0)
		return -1;
	if (start[0] != 0x1f)
		return version_match(start, len);
	if (len < 2)
		return -1;
	return start[1] == 0x8b ? gzip_match(start, len) : 0;
}

int dcso_sniff(int fd, unsigned char *buf, size_t cap, size_t *len, int *eof,
	       const char **errstr)
{
	int verdict;

	if (cap > DCSO_SNIFF_MAX)
		cap = DCSO_SNIFF_MAX;
	*len = 0;
	*eof = 0;
	while ((verdict = dcso_detect(buf, *len)) < 0 && !*eof && *len < cap) {
		ssize_t n = read(fd, buf + *len, cap - *len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return bad(errstr, strerror(errno));
		*eof = n == 0;
		*len += (size_t)n;
	}
	return verdict == 1;
}

/* ---- reading ------------------------------------------------------------ */

/* The file's bytes, inflated when it is gzip. */
struct source {
	int fd;
	int eof;		/* read() returned 0 */
	int gzip;		/* the file is gzip: inflate it */
	int ended;		/* gzip: the last member ended with the file */
	z_stream zs;		/* next_in/avail_in: unread bytes in buf, plain files too */
	unsigned char *buf;	/* READ_CHUNK bytes of raw input */
};

static int refill(struct source *s, const char **errstr)
{
	ssize_t n;

	do
		n = read(s->fd, s->buf, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return bad(errstr, strerror(errno));
	s->eof = n == 0;
	s->zs.next_in = s->buf;
	s->zs.avail_in = (uInt)n;
	return 0;
}

/* At least want bytes buffered (want <= READ_CHUNK), unless the file ends first. */
static int top_up(struct source *s, size_t want, const char **errstr)
{
	while (s->zs.avail_in < want && !s->eof) {
		size_t have = s->zs.avail_in;
		ssize_t n;

		memmove(s->buf, s->zs.next_in, have);
		n = read(s->fd, s->buf + have, READ_CHUNK - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return bad(errstr, strerror(errno));
		s->eof = n == 0;
		s->zs.next_in = s->buf;
		s->zs.avail_in = (uInt)(have + (size_t)n);
	}
	return 0;
}

static int source_open(struct source *s, int fd, const unsigned char *start, size_t len,
		       int eof, const char **errstr)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->eof = eof;
	if (len > READ_CHUNK)
		return bad(errstr, "too many bytes read ahead of the DCSO reader");
	if ((s->buf = malloc(READ_CHUNK)) == NULL)
		return bad(errstr, strerror(ENOMEM));
	memcpy(s->buf, start, len);
	s->zs.next_in = s->buf;
	s->zs.avail_in = (uInt)len;
	if (top_up(s, 2, errstr) < 0) {	/* enough to tell gzip */
		free(s->buf);
		return -1;
	}
	s->gzip = s->zs.avail_in >= 2 && s->buf[0] == 0x1f && s->buf[1] == 0x8b;
	if (s->gzip && inflateInit2(&s->zs, GZIP_WINDOW) != Z_OK) {
		free(s->buf);
		return bad(errstr, "zlib: cannot start inflating");
	}
	return 0;
}

static void source_close(struct source *s)
{
	if (s->gzip)
		inflateEnd(&s->zs);
	free(s->buf);
}

/* Up to len plain bytes: what is buffered, then straight from fd. */
static int plain_read(struct source *s, unsigned char *dst, size_t len, size_t *done,
		      const char **errstr)
{
	size_t take = len < s->zs.avail_in ? len : s->zs.avail_in;

	memcpy(dst, s->zs.next_in, take);
	s->zs.next_in += take;
	s->zs.avail_in -= (uInt)take;
	*done = take;
	while (*done < len && !s->eof) {
		ssize_t n = read(s->fd, dst + *done, len - *done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return bad(errstr, strerror(errno));
		s->eof = n == 0;
		*done += (size_t)n;
	}
	return 0;
}

/* zlib's words for damage, in ours. */
static const char *corrupt_message(const char *zmsg)
{
	if (zmsg && strcmp(zmsg, "incorrect data check") == 0)
		return "corrupt DCSO filter: gzip checksum mismatch";
	if (zmsg && strcmp(zmsg, "incorrect length check") == 0)
		return "corrupt DCSO filter: gzip length mismatch";
	return "corrupt DCSO filter: invalid gzip data";
}

/* A gzip member ended: the file ends too, or another member follows (as Go reads them). */
static int next_member(struct source *s, const char **errstr)
{
	if (s->zs.avail_in == 0 && !s->eof && refill(s, errstr) < 0)
		return -1;
	if (s->zs.avail_in == 0) {
		s->ended = 1;
		return 0;
	}
	return inflateReset(&s->zs) == Z_OK ? 0 : bad(errstr, "zlib: cannot reset");
}

/* One inflate call into the caller's next_out/avail_out. Returns 0 or -1. */
static int inflate_step(struct source *s, const char **errstr)
{
	int ret;

	if (s->zs.avail_in == 0 && !s->eof && refill(s, errstr) < 0)
		return -1;
	ret = inflate(&s->zs, Z_NO_FLUSH);
	if (ret == Z_STREAM_END)
		return next_member(s, errstr);
	if (ret == Z_OK)
		return 0;
	if (ret == Z_BUF_ERROR)	/* wants input, and the file has ended */
		return bad(errstr, "truncated DCSO filter");
	if (ret == Z_MEM_ERROR)
		return bad(errstr, strerror(ENOMEM));
	return bad(errstr, corrupt_message(s->zs.msg));
}

/* Up to len inflated bytes; fewer only when the last member has ended. */
static int gzip_read(struct source *s, unsigned char *dst, size_t len, size_t *done,
		     const char **errstr)
{
	*done = 0;
	while (*done < len && !s->ended) {
		size_t want = len - *done < INFLATE_MAX ? len - *done : INFLATE_MAX;
		int st;

		s->zs.next_out = dst + *done;
		s->zs.avail_out = (uInt)want;
		st = inflate_step(s, errstr);
		*done += want - s->zs.avail_out;
		if (st < 0)
			return -1;
	}
	return 0;
}

/* Up to len bytes of content; *done < len means the content has ended. */
static int source_some(struct source *s, unsigned char *dst, size_t len, size_t *done,
		       const char **errstr)
{
	if (s->gzip)
		return gzip_read(s, dst, len, done, errstr);
	return plain_read(s, dst, len, done, errstr);
}

/* Exactly len bytes of content, or -1 with *errstr (short: the message given). */
static int source_read(struct source *s, void *dst, size_t len, const char *short_message,
		       const char **errstr)
{
	size_t done;

	if (source_some(s, dst, len, &done, errstr) < 0)
		return -1;
	return done == len ? 0 : bad(errstr, short_message);
}

/*
 * Read the rest, the free-form data, into c (to be written back), so that
 * gzip's checks run to the end.
 */
static int source_read_data(struct source *s, struct cascade *c, const char **errstr)
{
	size_t done = SKIP_CHUNK, cap = 0;

	while (done == SKIP_CHUNK) {
		if (cap - c->dcso_data_len < SKIP_CHUNK) {
			unsigned char *bigger = realloc(c->dcso_data, cap ? 2 * cap : SKIP_CHUNK);

			if (bigger == NULL)
				return bad(errstr, strerror(ENOMEM));
			c->dcso_data = bigger;
			cap = cap ? 2 * cap : SKIP_CHUNK;
		}
		if (source_some(s, c->dcso_data + c->dcso_data_len, SKIP_CHUNK, &done, errstr) < 0)
			return -1;
		c->dcso_data_len += done;
	}
	c->dcso_gzip = s->gzip;
	return 0;
}

/* The header fields, as in the file. */
struct header {
	uint64_t n, k, m, count;
	double p;
};

static int decode_header(const unsigned char *h, struct header *hd, const char **errstr)
{
	uint64_t bits;

	if (memcmp(h, version_word, sizeof version_word) != 0)
		return bad(errstr, "not a DCSO filter (version word is not 1)");
	hd->n = get_le(h + 8);
	bits = get_le(h + 16);
	memcpy(&hd->p, &bits, sizeof hd->p);
	hd->k = get_le(h + 24);
	hd->m = get_le(h + 32);
	hd->count = get_le(h + 40);
	if (hd->n < 1)
		return bad(errstr, "bad DCSO header: capacity (n) is 0");
	if (!(hd->p > 0.0 && hd->p < 1.0))
		return bad(errstr, "bad DCSO header: rate (p) not in (0, 1)");
	if (hd->k < 1 || hd->k > FILTER_K_MAX)
		return bad(errstr, "bad DCSO header: hashes (k) out of range 1..64");
	if (hd->m < 1 || hd->m > FILTER_M_MAX)
		return bad(errstr, "bad DCSO header: size (m) out of range 1..2^46 bits");
	return 0;
}

static void dcso_shape(struct filter_params *p, uint64_t n, double rate, uint64_t k, uint64_t m)
{
	memset(p, 0, sizeof *p);
	p->layout = FILTER_DCSO;
	p->hash = FILTER_FNV1;
	p->k = (uint32_t)k;
	p->probe_bits = m;
	p->m = sizing_round_bits(m);	/* m <= 2^46: cannot overflow */
	p->capacity = n;
	p->target_p = rate;
}

/* The ceil(m / 64) words into f, checked: no bit at or past m may be set. */
static int read_bits(struct source *s, struct filter *f, const char **errstr)
{
	uint64_t m = f->params.probe_bits, nwords = words_for(m);

	if (source_read(s, f->words, (size_t)(nwords * 8), "truncated DCSO filter (bits)",
			errstr) < 0)
		return -1;
	swap_words(f->words, nwords);
	if (m % 64 != 0 && (f->words[nwords - 1] >> (m % 64)) != 0)
		return bad(errstr, "corrupt DCSO filter: bits set past m");
	return 0;
}

static struct cascade *load_from(struct source *s, const char **errstr)
{
	unsigned char h[DCSO_HEADER_LEN];
	struct filter_params params;
	struct header hd;
	struct filter *f;
	struct cascade *c;

	if (source_read(s, h, sizeof h, "truncated DCSO filter (header)", errstr) < 0
	    || decode_header(h, &hd, errstr) < 0)
		return NULL;
	dcso_shape(&params, hd.n, hd.p, hd.k, hd.m);
	if ((f = filter_new(&params, errstr)) == NULL)
		return NULL;
	if (read_bits(s, f, errstr) < 0
	    || (c = cascade_from_stages(&f, 1, 0, 0, hd.n, hd.p, errstr)) == NULL) {
		filter_free(f);
		return NULL;
	}
	if (source_read_data(s, c, errstr) < 0) {
		cascade_free(c);
		return NULL;
	}
	f->insertions = hd.count;
	c->newest_keys = hd.count;	/* N, exactly, not the estimate from the fill */
	return c;
}

struct cascade *dcso_load(int fd, const unsigned char *start, size_t len, int eof,
			  const char **errstr)
{
	struct source s;
	struct cascade *c;

	if (source_open(&s, fd, start, len, eof, errstr) < 0)
		return NULL;
	c = load_from(&s, errstr);
	source_close(&s);
	return c;
}

/* ---- sizing ------------------------------------------------------------- */

int dcso_params(uint64_t n, double p, struct filter_params *params, const char **errstr)
{
	double ln2 = log(2.0), m, k;

	if (n < 1)
		return bad(errstr, "capacity must be at least 1");
	if (!(p > 0.0 && p < 1.0))
		return bad(errstr, "rate out of range (0, 1)");
	/* the reference's formulas, operation for operation (see the file comment) */
	m = fabs(ceil((double)n * log(p) / (ln2 * ln2)));
	if (m < 1.0)
		return bad(errstr, "rate too high: a DCSO filter of that capacity would have no bits");
	if (!(m <= (double)FILTER_M_MAX))
		return bad(errstr, "a DCSO filter of that size would exceed 2^46 bits");
	k = ceil(ln2 * m / (double)n);
	if (k > FILTER_K_MAX)
		return bad(errstr, "a DCSO filter at that rate needs more than 64 hashes");
	dcso_shape(params, n, p, (uint64_t)k, (uint64_t)m);
	return 0;
}

/* ---- writing ------------------------------------------------------------ */

/* Where the bytes go: fd directly, or through a gzip stream (gzout.c). */
struct sink {
	int fd;
	int gzip;
	struct gzout gz;
	uint64_t *swap;		/* big-endian hosts: a byte-swapped chunk of words */
};

static int sink_write(struct sink *w, const unsigned char *p, size_t len, const char **errstr)
{
	if (w->gzip)
		return gzout_write(&w->gz, p, len, errstr);
	return writer_write_all(w->fd, p, len) < 0 ? bad(errstr, strerror(errno)) : 0;
}

static void sink_close(struct sink *w)
{
	if (w->gzip)
		gzout_close(&w->gz);
	free(w->swap);
}

static int sink_open(struct sink *w, int fd, int gzip, const char **errstr)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	if ((w->swap = malloc(IO_CHUNK)) == NULL)
		return bad(errstr, strerror(ENOMEM));
#endif
	if (!gzip)
		return 0;
	/* Go's gzip writer uses the default level too; its bytes differ, its content does not */
	if (gzout_open(&w->gz, fd, Z_DEFAULT_COMPRESSION, Z_DEFAULT_STRATEGY, NULL, errstr) < 0) {
		free(w->swap);
		return -1;
	}
	w->gzip = 1;
	return 0;
}

/* The chunk's bytes in file order: the words themselves on little-endian hosts. */
static const unsigned char *chunk_bytes(struct sink *w, const uint64_t *words, size_t nwords)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < nwords; i++)
		w->swap[i] = __builtin_bswap64(words[i]);
	return (const unsigned char *)w->swap;
#else
	(void)w;
	(void)nwords;
	return (const unsigned char *)words;
#endif
}

static int write_bits(struct sink *w, const struct filter *f, const char **errstr)
{
	uint64_t nwords = words_for(f->params.probe_bits), chunk = IO_CHUNK / 8;

	for (uint64_t i = 0; i < nwords; i += chunk) {
		size_t n = (size_t)(nwords - i < chunk ? nwords - i : chunk);

		if (sink_write(w, chunk_bytes(w, f->words + i, n), n * 8, errstr) < 0)
			return -1;
	}
	return 0;
}

static int check_saveable(const struct cascade *c, const char **errstr)
{
	const struct filter *f;

	if (c->nstages != 1 || c->growth != 0)
		return bad(errstr, "a DCSO filter has exactly one fixed stage");
	f = c->stages[0];
	if (f->params.layout != FILTER_DCSO)
		return bad(errstr, "only a filter of the DCSO layout can be written as one");
	if (f->words == NULL)
		return bad(errstr, "a shape from format_open has no bits to save");
	return filter_params_check(&f->params, errstr);
}

static void encode_header(const struct cascade *c, unsigned char *h)
{
	const struct filter_params *p = cascade_params(c);
	uint64_t bits;

	memcpy(h, version_word, sizeof version_word);
	put_le(h + 8, p->capacity);
	memcpy(&bits, &p->target_p, sizeof bits);
	put_le(h + 16, bits);
	put_le(h + 24, p->k);
	put_le(h + 32, p->probe_bits);
	put_le(h + 40, c->newest_keys);
}

int dcso_save(const struct cascade *c, int fd, int gzip, const char **errstr)
{
	unsigned char h[DCSO_HEADER_LEN];
	struct sink w;
	int ok;

	if (check_saveable(c, errstr) < 0 || sink_open(&w, fd, gzip, errstr) < 0)
		return -1;
	encode_header(c, h);
	ok = sink_write(&w, h, sizeof h, errstr) == 0 && write_bits(&w, c->stages[0], errstr) == 0
	     && sink_write(&w, c->dcso_data, c->dcso_data_len, errstr) == 0;
	if (ok && w.gzip)
		ok = gzout_finish(&w.gz, errstr) == 0;
	sink_close(&w);
	return ok ? 0 : -1;
}

int dcso_save_path(const struct cascade *c, const char *path, int gzip, const char **errstr)
{
	struct atomic_file af;

	/* refuse a filter that cannot be written before the target's directory is touched */
	if (check_saveable(c, errstr) < 0 || atomic_open(&af, path, errstr) < 0)
		return -1;
	if (dcso_save(c, af.fd, gzip, errstr) < 0) {
		atomic_abort(&af);
		return -1;
	}
	return atomic_commit(&af, errstr);
}
