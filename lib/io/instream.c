/* SPDX-License-Identifier: MIT */
/*
 * instream.c - an input's bytes, decompressed when its first bytes are a
 * codec's magic (instream.h says what is recognised).
 *
 * A stream goes through three states: undecided (nothing or too little
 * read to tell), passed through (plain bytes: the bytes read to tell are
 * handed out first, then reads go straight into the caller's buffer, so
 * plain input costs no copy), or decoding (compressed bytes are read
 * into our buffer and a codec decodes them into the caller's).
 *
 * While decoding, a call reads the descriptor only when the codec has
 * used all it was given and has no output held back (the last step
 * filled the caller's room, so more may be waiting inside it), and at
 * most once, before any codec step: a call that stepped returns what it
 * made, even nothing, rather than reading again, since on a pipe that
 * read could block where instream_needs_input told the caller to poll.
 * The first bytes decoded are checked for a bftools file's magic
 * (instream_refused.c); only a first piece too short to tell is held back
 * until the next ones do, then handed out first. At the end of
 * the input the codec must be between members or frames, else the input
 * was truncated. Failures are remembered: content decoded before the
 * damage is returned first, and every later call reports the damage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instream.h"
#include "instream_codec.h"

/* Compressed input is read this much at a time. */
#define INSTREAM_BUFFER ((size_t)1 << 17)

/* The formats recognised, by their magic. One line per codec. */
static const struct instream_codec *const codecs[] = {
	&instream_gzip,
	&instream_zstd,
	&instream_xz,
	&instream_bzip2,
	&instream_lz4,
	&instream_compress,
	&instream_lzip,
	&instream_lz4_legacy,
	&instream_own_filter,
	&instream_own_sketch,
	&instream_own_summary,
};
#define NCODECS (sizeof codecs / sizeof codecs[0])

/* What decoded content may not begin with: bftools' own files are gzip members. */
static const struct instream_codec *const own_files[] = {
	&instream_own_filter,
	&instream_own_sketch,
	&instream_own_summary,
};
#define NOWN (sizeof own_files / sizeof own_files[0])

/* Decoded bytes held back, when the first piece is too short to show it begins no file of own_files. */
#define CONTENT_HEAD 8

enum state { UNDECIDED, PLAIN, DECODING };

struct instream {
	int fd;
	int decompress;
	enum state state;
	int eof;		/* read(2) returned 0 */
	int ended;		/* the content ended cleanly */
	int failed;		/* -1 from now on */
	int failed_errno;	/* the errno of a failure not in words */
	int pending;		/* the codec's last step filled the room: it may hold more */
	const struct instream_codec *codec;
	void *decoder;
	unsigned char head[CONTENT_HEAD];	/* a short first piece, and what follows it, held back */
	size_t head_len, head_next;		/* held; handed out so far */
	int head_checked;			/* those bytes begin no file of own_files */
	unsigned char *buf;	/* INSTREAM_BUFFER bytes read, [next, next + avail) not yet used */
	size_t next, avail;
	uint64_t bytes_in;
	char message[INSTREAM_MESSAGE];
};

struct instream *instream_open(int fd, int decompress)
{
	struct instream *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->buf = malloc(INSTREAM_BUFFER);
	if (s->buf == NULL) {
		free(s);
		return NULL;
	}
	s->fd = fd;
	s->decompress = decompress;
	return s;
}

void instream_close(struct instream *s)
{
	if (s == NULL)
		return;
	if (s->decoder != NULL)
		s->codec->close(s->decoder);
	free(s->buf);
	free(s);
}

int instream_fd(const struct instream *s)
{
	return s->fd;
}

/* The held head may outlast the decoder's end. */
static int head_held(const struct instream *s)
{
	return s->head_checked && s->head_next < s->head_len;
}

int instream_ended(const struct instream *s)
{
	return s->ended && !head_held(s);
}

int instream_needs_input(const struct instream *s)
{
	if (s->ended || s->failed || s->eof || head_held(s))
		return 0;
	if (s->state == UNDECIDED)
		return 1;	/* sniff reads, whatever part of a magic is in */
	return s->avail == 0 && !s->pending;
}

const char *instream_error(const struct instream *s)
{
	return s->failed && s->message[0] != '\0' ? s->message : NULL;
}

const char *instream_format(const struct instream *s)
{
	return s->state == DECODING ? s->codec->name : NULL;
}

uint64_t instream_bytes_in(const struct instream *s)
{
	return s->bytes_in;
}

/* read(2) of up to len bytes, EINTR retried; counts them and notes the end. */
static ssize_t read_some(struct instream *s, void *dst, size_t len)
{
	ssize_t got;

	do
		got = read(s->fd, dst, len);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		s->eof = 1;
	if (got > 0)
		s->bytes_in += (uint64_t)got;
	return got;
}

/*
 * Fail for good; returns -1. msg NULL: errno's failure; else damage,
 * which reads as EIO to a caller that looks only at errno.
 */
static ssize_t fail(struct instream *s, const char *msg)
{
	s->failed = 1;
	s->failed_errno = msg != NULL ? EIO : errno;
	if (msg != NULL && msg != s->message)
		snprintf(s->message, sizeof s->message, "%s", msg);
	errno = s->failed_errno;
	return -1;
}

/*
 * The codec of table[0..count) whose magic p[0..n) begins with; NULL when
 * none can. *undecided is set when p is a proper prefix of some magic, so
 * more bytes are needed to tell.
 */
static const struct instream_codec *codec_in(const struct instream_codec *const *table,
					     size_t count, const unsigned char *p, size_t n,
					     int *undecided)
{
	*undecided = 0;
	for (size_t i = 0; i < count; i++) {
		const struct instream_codec *c = table[i];
		size_t m = c->magic_len, need = c->confirm != NULL ? c->confirm_len : m;

		if (memcmp(p, c->magic, n < m ? n : m) != 0)
			continue;
		if (n < need)
			*undecided = 1;
		else if (c->confirm == NULL || c->confirm(p))
			return c;
	}
	return NULL;
}

/* The codec p[0..n) begins with (codec_in), any of them; NULL: plain. */
static const struct instream_codec *codec_of(const unsigned char *p, size_t n, int *undecided)
{
	return codec_in(codecs, NCODECS, p, n, undecided);
}

/* A format recognised and not decoded: the input fails, in words, rather than pass for text. */
static ssize_t refuse(struct instream *s, const struct instream_codec *c)
{
	if (c->refusal != NULL)
		snprintf(s->message, sizeof s->message, "%s", c->refusal);
	else
		snprintf(s->message, sizeof s->message,
			 "%s input cannot be decoded (--no-decompress reads it as it is)", c->name);
	return fail(s, s->message);
}

/* Read once more to tell the format; decide when the bytes (or the input's end) allow. */
static ssize_t sniff(struct instream *s)
{
	const struct instream_codec *c;
	int undecided;
	ssize_t got = read_some(s, s->buf + s->avail, INSTREAM_BUFFER - s->avail);

	if (got < 0)
		return fail(s, NULL);
	s->avail += (size_t)got;
	c = s->decompress ? codec_of(s->buf, s->avail, &undecided) : NULL;
	if (c == NULL && s->decompress && undecided && !s->eof)
		return 0;
	if (c == NULL) {
		s->state = PLAIN;
		return 0;
	}
	s->codec = c;
	if (c->open == NULL)
		return refuse(s, c);
	s->decoder = c->open();
	if (s->decoder == NULL)
		return fail(s, NULL);
	s->state = DECODING;
	return 0;
}

/* Plain bytes: those read while sniffing first, then straight from the descriptor. */
static ssize_t read_plain(struct instream *s, unsigned char *dst, size_t len)
{
	ssize_t got;

	if (s->avail > 0) {
		size_t n = s->avail < len ? s->avail : len;

		memcpy(dst, s->buf + s->next, n);
		s->next += n;
		s->avail -= n;
		return (ssize_t)n;
	}
	if (s->eof) {
		s->ended = 1;
		return 0;
	}
	got = read_some(s, dst, len);
	if (got < 0)
		return fail(s, NULL);
	s->ended = got == 0;
	return got;
}

/* The input ended: fine between members or frames, else it was cut short. */
static ssize_t input_ended(struct instream *s)
{
	if (s->codec->at_boundary(s->decoder)) {
		s->ended = 1;
		return 0;
	}
	snprintf(s->message, sizeof s->message, "truncated %s input", s->codec->name);
	return fail(s, s->message);
}

/*
 * One codec step from the buffer into dst[0..len): the bytes made, which
 * count even when the step then found damage (*damaged set).
 */
static size_t decode_step(struct instream *s, unsigned char *dst, size_t len, int *damaged)
{
	const unsigned char *in = s->buf + s->next;
	size_t in_len = s->avail, room = len;
	unsigned char *out = dst;

	s->message[0] = '\0';
	*damaged = s->codec->step(s->decoder, &in, &in_len, &out, &room, s->message) < 0;
	if (!*damaged && in_len == s->avail && in_len > 0 && room == len) {
		/* input and room, and nothing done: no codec should, but a loop here would never end */
		snprintf(s->message, sizeof s->message, "corrupt %s input: the decoder stalled",
			 s->codec->name);
		*damaged = 1;
	}
	s->next += s->avail - in_len;
	s->avail = in_len;
	s->pending = room == 0;
	return len - room;
}

/* Read the descriptor once into the emptied buffer; -1 on failure. */
static ssize_t read_compressed(struct instream *s)
{
	ssize_t got = read_some(s, s->buf, INSTREAM_BUFFER);

	if (got < 0)
		return fail(s, NULL);
	s->next = 0;
	s->avail = (size_t)got;
	return got;
}

static ssize_t read_decoded(struct instream *s, unsigned char *dst, size_t len)
{
	size_t made = 0;
	int stepped = 0, damaged = 0;

	while (made < len && !damaged) {
		if (s->avail == 0 && !s->pending) {
			if (s->eof)
				return made > 0 ? (ssize_t)made : input_ended(s);
			/*
			 * After any step, return (0: call again) rather than read:
			 * a step that only emptied what the codec held must not be
			 * followed by a read that blocks where the caller, told by
			 * instream_needs_input, would have polled first.
			 */
			if (stepped)
				break;
			if (read_compressed(s) < 0)
				return -1;
			continue;
		}
		made += decode_step(s, dst + made, len - made, &damaged);
		stepped = 1;
	}
	if (damaged) {
		/* what came before the damage first; the damage on the next call */
		fail(s, s->message[0] != '\0' ? s->message : NULL);
		if (made == 0)
			return -1;
	}
	return (ssize_t)made;
}

/* The held first bytes of decoded content, once they are known to be content. */
static ssize_t hand_out_head(struct instream *s, unsigned char *dst, size_t len)
{
	size_t n = s->head_len - s->head_next;

	if (n > len)
		n = len;
	memcpy(dst, s->head + s->head_next, n);
	s->head_next += n;
	return (ssize_t)n;
}

/*
 * Decoding's first calls. The first piece is decoded straight into the
 * caller's room, as every later one (a codec may decode differently into
 * a small room: zstd then keeps a frame's last block from a caller when
 * its checksum fails); it is checked there, and is content unless it
 * begins a file of own_files (refused) or is shorter than a magic and
 * could. Only such a short piece is held back, and what follows decoded
 * into the held head until the bytes tell, the content ends or fails, and
 * then handed out. 0 while it cannot tell yet (call again). A decoded
 * filter file is caught here, a plain one by sniff.
 */
static ssize_t check_content_head(struct instream *s, unsigned char *dst, size_t len)
{
	const struct instream_codec *own;
	ssize_t got;
	int undecided;

	if (s->head_len == 0) {
		got = read_decoded(s, dst, len);
		if (got <= 0)
			return got;
		own = codec_in(own_files, NOWN, dst, (size_t)got, &undecided);
		if (own != NULL)
			return refuse(s, own);
		if (!undecided || s->failed || s->ended) {
			s->head_checked = 1;
			return got;
		}
		memcpy(s->head, dst, (size_t)got);	/* fewer than CONTENT_HEAD */
		s->head_len = (size_t)got;
		return 0;
	}
	got = read_decoded(s, s->head + s->head_len, CONTENT_HEAD - s->head_len);
	if (got > 0)
		s->head_len += (size_t)got;
	own = codec_in(own_files, NOWN, s->head, s->head_len, &undecided);
	if (own != NULL)
		return refuse(s, own);
	if (undecided && got >= 0 && !s->failed && !s->ended)
		return 0;
	s->head_checked = 1;
	return hand_out_head(s, dst, len);
}

ssize_t instream_read(struct instream *s, void *dst, size_t len)
{
	if (len == 0)
		return 0;
	/* content decoded before damage or the end is handed out first */
	if (s->head_checked && s->head_next < s->head_len)
		return hand_out_head(s, dst, len);
	if (s->failed) {
		errno = s->failed_errno;
		return -1;
	}
	if (s->ended)
		return 0;
	if (s->state == UNDECIDED)
		return sniff(s);
	if (s->state == PLAIN)
		return read_plain(s, dst, len);
	if (!s->head_checked)
		return check_content_head(s, dst, len);
	return read_decoded(s, dst, len);
}

int instream_compressed_head(const unsigned char *head, size_t len)
{
	int undecided;

	return len > 0 && codec_of(head, len, &undecided) != NULL;
}

int instream_compressed_at(int fd, uint64_t offset)
{
	unsigned char head[16];	/* room for the longest magic or confirm_len */
	ssize_t got;
	int undecided;

	do
		got = pread(fd, head, sizeof head, (off_t)offset);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	return got > 0 && codec_of(head, (size_t)got, &undecided) != NULL;
}
