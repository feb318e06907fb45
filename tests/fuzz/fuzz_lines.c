/* SPDX-License-Identifier: MIT */
/*
 * fuzz_lines.c - libFuzzer harness for the line reader (lines.h) and key
 * extraction (keys.h) with every option the programs offer.
 *
 * An input is five option bytes, then the stream to read:
 *
 *   byte 0  flags: 1 records end with NUL (-z), else newline
 *                  2 words mode (-w)
 *                  4 ASCII case folding (-i)
 *                  8, 16 how the stream arrives: 0 a regular file (memfd),
 *                    8 a pipe, 16 or 24 a socket handing out short reads
 *                  32 fields split at byte 2 (-t), else at runs of blanks
 *                  64 with byte 4 = 0xa5: a record longer than the
 *                    reader's first buffer first, from a file: the input
 *                    without its delimiters repeated to that buffer's size
 *                    + byte 3 * 1031 bytes (up to 257 KiB more: one to
 *                    three doublings of the buffer), then the input itself.
 *                    Words mode is off here, or the many keys would make
 *                    runs slow. The magic byte keeps random mutations from
 *                    paying for a long record often (libFuzzer finds it
 *                    from the compare). (The first buffer, iosize.h: 64 KiB
 *                    in the libFuzzer build, 1 MiB otherwise. Every byte of
 *                    the record goes through the key extraction, traced for
 *                    coverage: the longer records once allowed, up to 1 MiB
 *                    more, made these inputs most of the harness's time;
 *                    257 KiB keeps every edge, and 7,100 runs a second.)
 *                  128 owned batches (lines_next_owned, as the programs'
 *                    pipeline reads), two in use at once: the older one
 *                    must still hold its records after the next is read
 *   byte 1  field (-k): byte % 6, so 0 (the whole record) to 5
 *   byte 2  the separator byte for flag 32
 *   byte 3  seeds the batch sizes asked for (1 to 1024, varying per call)
 *   byte 4  the largest short read: 1 + byte when below 128, else
 *           (byte - 127) * 128 (the socket's first 64 reads; after
 *           them, reads of that size up to 16 KiB: fuzz.h)
 *
 * (missing option bytes count as zero). Checked:
 *
 *   - records and their delimiters cover the input exactly, in order: no
 *     byte lost, repeated or invented; no record holds a delimiter; only
 *     the last may lack one, and no record starts at the end of input;
 *   - lines_bytes_read counts exactly what was handed out; a batch never
 *     exceeds what was asked for; end of input stays the end;
 *   - keys match an independent, plainly written extraction (below): the
 *     same keys from the same records, in order; each unfolded key is the
 *     very span of its record, a folded one equals that span with A-Z
 *     lowered and nothing else changed; keys_field agrees for every
 *     record.
 */
#define _GNU_SOURCE	/* memfd_create */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "iosize.h"
#include "keys.h"
#include "lines.h"

#define OPTION_BYTES 5
#define BATCH_MAX 1024
#define AMPLIFY_MIN IOSIZE_BUFFER
#define AMPLIFY_MAGIC 0xa5

struct options {
	char delim;
	struct key_spec spec;
	enum feed_kind feed;
	uint64_t batch_state;
	size_t max_chunk;
	size_t amplify;		/* repeat the input to at least this many bytes */
	int owned;		/* lines_next_owned, else lines_next_batch */
};

static void parse_options(const uint8_t *data, size_t size, struct options *o)
{
	uint8_t b[OPTION_BYTES] = { 0 };

	memset(o, 0, sizeof *o);	/* key_spec members it does not set stay off */
	memcpy(b, data, size < OPTION_BYTES ? size : OPTION_BYTES);
	o->delim = b[0] & 1 ? '\0' : '\n';
	o->spec.words = b[0] >> 1 & 1;
	o->spec.fold_case = b[0] >> 2 & 1;
	o->feed = (b[0] >> 3 & 3) == 0 ? FEED_FILE : (b[0] >> 3 & 3) == 1 ? FEED_PIPE : FEED_CHUNKS;
	o->spec.separator = b[0] & 32 ? b[2] : -1;
	o->spec.field = b[1] % 6;
	o->batch_state = b[3];
	o->max_chunk = b[4] < 128 ? (size_t)b[4] + 1 : ((size_t)b[4] - 127) * 128;
	o->amplify = b[0] & 64 && b[4] == AMPLIFY_MAGIC ? AMPLIFY_MIN + (size_t)b[3] * 1031 : 0;
	if (o->amplify > 0)
		o->spec.words = 0;
	o->owned = b[0] >> 7 & 1;
}

/*
 * One record of at least want bytes (the input's other bytes, repeated),
 * then the input: a new buffer of *len bytes, or NULL when the input is
 * nothing but delimiters.
 */
FUZZ_UNTRACED static uint8_t *amplify(const uint8_t *in, size_t *len, char delim, size_t want)
{
	size_t n = 0, reps, total;
	uint8_t *big = malloc(*len);

	fuzz_check(big != NULL, "out of memory");
	for (size_t i = 0; i < *len; i++)
		if (in[i] != (uint8_t)delim)
			big[n++] = in[i];
	if (n == 0) {
		free(big);
		return NULL;
	}
	reps = want / n + 1;
	total = reps * n + *len;
	big = realloc(big, total);
	fuzz_check(big != NULL, "out of memory");
	for (size_t done = n; done < reps * n; done *= 2)	/* doubling: few, long copies */
		memcpy(big + done, big, done < reps * n - done ? done : reps * n - done);
	memcpy(big + reps * n, in, *len);
	*len = total;
	return big;
}

/* How many records to ask for next: often 1 or a few, sometimes many. */
static size_t next_batch(uint64_t *state)
{
	switch (fuzz_next(state) % 4) {
	case 0:
		return 1;
	case 1:
		return (size_t)fuzz_range(state, 2, 8);
	case 2:
		return (size_t)fuzz_range(state, 9, BATCH_MAX);
	default:
		return BATCH_MAX;
	}
}

/* ---- the reference key extraction ------------------------------------- */

struct span {
	size_t off, len;
};

FUZZ_UNTRACED static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Blanks, and the punctuation that wraps addresses in logs (keys.h). */
FUZZ_UNTRACED static int is_word_break(unsigned char c)
{
	return c != '\0' && strchr(" \t\r\n\v\f<>()[]{},;:\"'=", c) != NULL;
}

/* Field n (1-based) of rec split at runs of blanks; 0 when there is none. */
FUZZ_UNTRACED static int ref_field_blanks(const uint8_t *rec, size_t len, unsigned long n, struct span *out)
{
	size_t pos = 0;

	for (unsigned long i = 1;; i++) {
		size_t start;

		while (pos < len && is_blank(rec[pos]))
			pos++;
		if (pos == len)
			return 0;
		start = pos;
		while (pos < len && !is_blank(rec[pos]))
			pos++;
		if (i == n) {
			*out = (struct span){ start, pos - start };
			return 1;
		}
	}
}

/* Field n of rec split at every sep byte; 0 when there are fewer than n - 1. */
FUZZ_UNTRACED static int ref_field_byte(const uint8_t *rec, size_t len, unsigned long n, uint8_t sep,
			  struct span *out)
{
	size_t start = 0, end;
	unsigned long seen = 1;

	for (size_t pos = 0; pos < len && seen < n; pos++)
		if (rec[pos] == sep) {
			seen++;
			start = pos + 1;
		}
	if (seen < n)
		return 0;
	for (end = start; end < len && rec[end] != sep; end++)
		;
	*out = (struct span){ start, end - start };
	return 1;
}

FUZZ_UNTRACED static int ref_field(const struct key_spec *spec, const uint8_t *rec, size_t len,
		     struct span *out)
{
	if (spec->field == 0) {
		*out = (struct span){ 0, len };
		return 1;
	}
	if (spec->separator < 0)
		return ref_field_blanks(rec, len, spec->field, out);
	return ref_field_byte(rec, len, spec->field, (uint8_t)spec->separator, out);
}

/* ---- checks ----------------------------------------------------------- */

/* Each byte with A-Z lowered, and the room to fold a key into. */
static unsigned char lower[256];
static unsigned char *folded;
static size_t folded_cap;

FUZZ_UNTRACED static void fold_prepare(size_t len)
{
	if (lower['A'] == 0)
		for (unsigned c = 0; c < 256; c++)
			lower[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	if (len <= folded_cap)
		return;
	free(folded);
	folded = malloc(len);
	fuzz_check(folded != NULL, "out of memory");
	folded_cap = len;
}

/* The key at ks index *next is rec's span s (folded when asked). */
FUZZ_UNTRACED static void expect_key(const struct keyset *ks, size_t *next, size_t r, const struct line *rec,
		       struct span s, int fold)
{
	const struct line *key;

	fuzz_check(*next < ks->count, "a key for every expected key");
	key = &ks->keys[*next];
	fuzz_check(ks->record[*next] == r, "a key names its record");
	fuzz_check(key->len == s.len, "key length");
	(*next)++;
	if (!fold) {
		fuzz_check(s.len == 0 || key->data == rec->data + s.off, "a key is a span of its record");
		return;
	}
	/* by table, then one compare: a branch per byte costs the fuzzer dear on long keys */
	for (size_t i = 0; i < s.len; i++)
		folded[i] = lower[(unsigned char)rec->data[s.off + i]];
	fuzz_check(s.len == 0 || memcmp(key->data, folded, s.len) == 0,
		   "folding lowers A-Z and nothing else");
}

/* Every word of span s of rec, as keys. */
FUZZ_UNTRACED static void expect_words(const struct keyset *ks, size_t *next, size_t r, const struct line *rec,
			 struct span s, int fold)
{
	const uint8_t *p = (const uint8_t *)rec->data;
	size_t pos = s.off, end = s.off + s.len;

	while (pos < end) {
		size_t start;

		while (pos < end && is_word_break(p[pos]))
			pos++;
		if (pos == end)
			return;
		start = pos;
		while (pos < end && !is_word_break(p[pos]))
			pos++;
		expect_key(ks, next, r, rec, (struct span){ start, pos - start }, fold);
	}
}

FUZZ_UNTRACED static void check_keys(struct keyset *ks, const struct key_spec *spec, const struct line *recs,
		       size_t n)
{
	size_t next = 0;

	fuzz_check(keyset_build(ks, spec, recs, n) == 0, "keyset_build");
	for (size_t r = 0; r < n; r++) {
		struct line key;
		struct span s;
		int has = ref_field(spec, (const uint8_t *)recs[r].data, recs[r].len, &s);

		fuzz_check(keys_field(spec, recs[r], &key) == has, "keys_field finds the same field");
		fuzz_check(!has || (key.len == s.len && (s.len == 0 || key.data == recs[r].data + s.off)),
			   "keys_field gives the same span");
		if (has && spec->words)
			expect_words(ks, &next, r, &recs[r], s, spec->fold_case);
		else if (has)
			expect_key(ks, &next, r, &recs[r], s, spec->fold_case);
	}
	fuzz_check(next == ks->count, "no keys beyond the expected ones");
}

/* The batch against the input from *pos on; advances *pos past it. */
FUZZ_UNTRACED static void check_records(const uint8_t *in, size_t len, char delim, const struct line *recs,
			  size_t n, size_t *pos)
{
	for (size_t i = 0; i < n; i++) {
		fuzz_check(*pos < len, "no record starts at the end of input");
		fuzz_check(recs[i].len <= len - *pos, "a record fits in what is left");
		fuzz_check(recs[i].len == 0 || memcmp(recs[i].data, in + *pos, recs[i].len) == 0,
			   "a record is the next bytes of input");
		fuzz_check(recs[i].len == 0 || memchr(recs[i].data, delim, recs[i].len) == NULL,
			   "a record holds no delimiter");
		*pos += recs[i].len;
		if (*pos < len) {
			fuzz_check(in[*pos] == (uint8_t)delim, "a delimiter follows a record");
			(*pos)++;
		}
	}
}

/* Batches from lines_next_batch, of sizes drawn from the options. */
static void read_batches(struct lines_reader *r, struct options *o, const uint8_t *in, size_t len,
			 struct keyset *ks, size_t *pos)
{
	static struct line recs[BATCH_MAX];
	long n;

	do {
		size_t max = next_batch(&o->batch_state);

		n = lines_next_batch(r, recs, max);
		fuzz_check(n >= 0 && (size_t)n <= max, "a batch of 0..max records");
		check_records(in, len, o->delim, recs, (size_t)n, pos);
		fuzz_check(lines_bytes_read(r) == *pos, "bytes read counts what was handed out");
		check_keys(ks, &o->spec, recs, (size_t)n);
	} while (n > 0);
}

/*
 * Owned batches, two in use at once as in the programs' pipeline: after
 * each read, the batch before it is checked again where it started.
 */
static void read_owned(struct lines_reader *r, const struct options *o, const uint8_t *in,
		       size_t len, struct keyset *ks, size_t *pos)
{
	struct lines_batch b[2] = { { 0 }, { 0 } };
	size_t start[2] = { 0, 0 }, again;
	long n;

	for (unsigned i = 0;; i++) {
		struct lines_batch *cur = &b[i % 2], *prev = &b[(i + 1) % 2];

		start[i % 2] = *pos;
		n = lines_next_owned(r, cur);
		fuzz_check(n >= 0 && (size_t)n == cur->n, "an owned batch counts its records");
		check_records(in, len, o->delim, cur->records, cur->n, pos);
		fuzz_check(lines_bytes_read(r) == *pos, "bytes read counts what was handed out");
		check_keys(ks, &o->spec, cur->records, cur->n);
		again = start[(i + 1) % 2];
		if (i > 0)
			check_records(in, len, o->delim, prev->records, prev->n, &again);
		if (n == 0)
			break;
	}
	lines_batch_free(&b[0]);
	lines_batch_free(&b[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct line rec;
	const uint8_t *in = size > OPTION_BYTES ? data + OPTION_BYTES : data;
	size_t len = size > OPTION_BYTES ? size - OPTION_BYTES : 0, pos = 0;
	uint8_t *big = NULL;
	/*
	 * One key set for every run, as a program keeps one for every batch:
	 * keyset_build must not lean on what an earlier build left, and growing
	 * a fresh one each run was a tenth of the time (ASan's realloc copies).
	 */
	static struct keyset ks;
	struct lines_reader *r;
	struct options o;
	struct feed f;

	parse_options(data, size, &o);
	if (o.amplify > 0 && (big = amplify(in, &len, o.delim, o.amplify)) != NULL)
		in = big;
	fold_prepare(len);
	feed_open(&f, o.feed, in, len, fuzz_seed(data, size), o.max_chunk);
	r = lines_open(f.fd, o.delim);
	fuzz_check(r != NULL, "lines_open");
	if (o.owned)
		read_owned(r, &o, in, len, &ks, &pos);
	else
		read_batches(r, &o, in, len, &ks, &pos);
	fuzz_check(pos == len, "the records cover the whole input");
	fuzz_check(lines_next_batch(r, &rec, 1) == 0, "the end of input stays the end");
	lines_close(r);
	feed_close(&f);
	free(big);
	return 0;
}
