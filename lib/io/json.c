/* SPDX-License-Identifier: MIT */
/*
 * json.c - jq-style paths, and a validating JSON parser that finds their
 * values in one pass over a line.
 *
 * The parser is recursive descent over RFC 8259's grammar, with the depth
 * bounded (JSON_DEPTH_MAX) so that no line can exhaust the stack. It
 * copies nothing: while it walks the document it carries the set of
 * paths whose steps so far match where it is (a 64-bit mask, one bit a
 * path), and notes each path's value as a span of the line when the walk
 * reaches the value's end. A member key is compared with a path's key
 * unescaped on the fly, so "a" and "\u0061" are the same key; a key that
 * comes twice is found at its last place, as jq does. Bytes of strings
 * are not checked as UTF-8 (bytes are bytes, as everywhere in bftools).
 *
 * Key text (json_key_text) is what jq 1.6 -r prints of a scalar, and
 * jq -c of an object or array: unescaping shrinks a string; the canonical
 * form drops whitespace and writes each character of a string with at
 * most as many bytes as its shortest escape in the input ("\u001f" stays
 * 6 bytes; raw bytes below 0x20 are not JSON); a number is written by
 * value, exactly, as jq 1.6 formats it (canonical_number), so 1, 1.0, 1e0
 * and 10e-1 are one key "1". A number may grow ("1e15" is sixteen
 * digits), so the text needs JSON_KEY_ROOM(len) bytes.
 *
 * Not here: a document model, arithmetic (numbers are decimal digits and
 * an exponent, never doubles), paths with negative indexes, slices or
 * wildcards.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "json.h"

struct parser {
	const unsigned char *p, *end;
	const struct json_paths *paths;
	struct line *values;
	const char *why;
};

static int fail(struct parser *j, const char *why)
{
	if (j->why == NULL)
		j->why = why;
	return -1;
}

static void skip_space(struct parser *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Four hex digits at p (end checked by the caller): their value, or -1. */
static long hex4(const unsigned char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hex_value(p[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* The bytes a string's scan must stop at: '"', '\\' and the control characters. */
static const unsigned char string_stop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
};

/*
 * The stop bytes among eight, each marked by its top bit: the classic
 * "has zero byte" test, (x - 0x01..) & ~x & 0x80.., on w ^ '"', on
 * w ^ '\\', and as "has a byte below 0x20" on w itself. A borrow can only
 * mark bytes above one truly found, so the word has a mark exactly when
 * it has a stop byte, and its lowest mark is the first stop byte's.
 */
static uint64_t stop_marks(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & high;
}

#ifdef __SSE2__
/*
 * Sixteen bytes at a time where SSE2 is there (every x86-64): a byte
 * stops the scan when it equals '"' or '\\', or when min(byte, 0x1f) is
 * the byte itself (unsigned: a control character). 1 when it stopped at
 * a stop byte, 0 when fewer than sixteen bytes are left to look at.
 */
static int skip_plain16(struct parser *j)
{
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
	const __m128i control = _mm_set1_epi8(0x1f);

	while (j->end - j->p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)j->p);
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
							 _mm_cmpeq_epi8(v, backslash)),
					    _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
		unsigned mask = (unsigned)_mm_movemask_epi8(stop);

		if (mask != 0) {
			j->p += __builtin_ctz(mask);
			return 1;
		}
		j->p += 16;
	}
	return 0;
}
#endif

/*
 * Past the plain bytes at j->p: sixteen at a time with SSE2, then eight
 * at a time, then one at a time. Little-endian, the first byte of a word
 * is its lowest, so the lowest mark says where the first stop byte is
 * without the byte loop.
 */
static void skip_plain(struct parser *j)
{
	uint64_t w, marks;

#ifdef __SSE2__
	if (skip_plain16(j))
		return;
#endif
	while (j->end - j->p >= 8) {
		memcpy(&w, j->p, 8);	/* memcpy: no unaligned pointer casts */
		marks = stop_marks(w);
		if (marks != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			j->p += (unsigned)__builtin_ctzll(marks) / 8;
			return;
#else
			break;
#endif
		}
		j->p += 8;
	}
	while (j->p < j->end && !string_stop[*j->p])
		j->p++;
}

/* A string at j->p (its opening quote): checked and passed. */
static int scan_string(struct parser *j)
{
	static const char escapes[] = "\"\\/bfnrtu";

	for (j->p++; j->p < j->end; j->p++) {
		unsigned char c;

		skip_plain(j);
		if (j->p == j->end)
			break;
		c = *j->p;

		if (c == '"') {
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return fail(j, "a control character inside a string");
		if (c != '\\')
			continue;
		if (++j->p == j->end || strchr(escapes, *j->p) == NULL || *j->p == '\0')
			return fail(j, "a bad escape in a string");
		if (*j->p == 'u' && (j->end - j->p < 5 || hex4(j->p + 1) < 0))
			return fail(j, "a bad \\u escape in a string");
		if (*j->p == 'u')
			j->p += 4;
	}
	return fail(j, "a string without its closing quote");
}

static int digits(struct parser *j)
{
	const unsigned char *from = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > from ? 0 : fail(j, "a bad number");
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(struct parser *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p == j->end || *j->p < '1' || *j->p > '9' || digits(j) < 0)
		return fail(j, "not a JSON value");
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (digits(j) < 0)
			return -1;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (digits(j) < 0)
			return -1;
	}
	return 0;
}

static int literal(struct parser *j, const char *word, size_t len)
{
	if ((size_t)(j->end - j->p) < len || memcmp(j->p, word, len) != 0)
		return fail(j, "not a JSON value");
	j->p += len;
	return 0;
}

static size_t utf8_encode(long c, unsigned char out[4]);

/*
 * One character of a string's contents at *p (before end), unescaped
 * into out as UTF-8: its length (1 to 4). The string has been checked.
 */
static size_t unescape_one(const unsigned char **p, const unsigned char *end, unsigned char out[4])
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const unsigned char *s = *p;
	long c, low;

	if (*s != '\\') {
		out[0] = *s;
		*p = s + 1;
		return 1;
	}
	if (s[1] != 'u') {
		out[0] = (unsigned char)to[strchr(from, s[1]) - from];
		*p = s + 2;
		return 1;
	}
	c = hex4(s + 2);
	*p = s + 6;
	if (c >= 0xd800 && c <= 0xdbff && end - *p >= 6 && (*p)[0] == '\\' && (*p)[1] == 'u' &&
	    (low = hex4(*p + 2)) >= 0xdc00 && low <= 0xdfff) {
		c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
		*p += 6;
	} else if (c >= 0xd800 && c <= 0xdfff) {
		c = 0xfffd;	/* a lone surrogate: the replacement character, as jq */
	}
	return utf8_encode(c, out);
}

/* Code point c (below 0x110000) as UTF-8 into out: its length. */
static size_t utf8_encode(long c, unsigned char out[4])
{
	if (c < 0x80) {
		out[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (unsigned char)(0xc0 | c >> 6);
		out[1] = (unsigned char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (unsigned char)(0xe0 | c >> 12);
		out[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (unsigned char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | c >> 18);
	out[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (unsigned char)(0x80 | (c & 0x3f));
	return 4;
}

/* Whether the checked string contents [p, end) unescape to key[0..len). */
static int key_equals(const unsigned char *p, const unsigned char *end, const char *key,
		      size_t len)
{
	size_t at = 0, raw = (size_t)(end - p);

	/*
	 * Unescaping only shrinks (every escape is longer than what it
	 * stands for): a shorter name never matches, one as long only byte
	 * for byte and without escapes, a longer one only with escapes.
	 */
	if (raw < len)
		return 0;
	if (raw == len)
		return memcmp(p, key, len) == 0 && memchr(p, '\\', raw) == NULL;
	if (memchr(p, '\\', raw) == NULL)
		return 0;
	while (p < end) {
		unsigned char c[4];
		size_t n = unescape_one(&p, end, c);

		if (n > len - at || memcmp(c, key + at, n) != 0)
			return 0;
		at += n;
	}
	return at == len;
}

static int parse_value(struct parser *j, uint64_t active, size_t depth);

/* The paths of active whose step at depth is the member key [p, end). */
static uint64_t member_paths(const struct parser *j, uint64_t active, size_t depth,
			     const unsigned char *p, const unsigned char *end)
{
	const struct json_paths *ps = j->paths;
	uint64_t child = 0;

	for (size_t i = 0; active >> i != 0; i++) {
		const struct json_step *s = &ps->steps[ps->first[i] + depth];

		if ((active >> i & 1) && ps->count[i] > depth && s->key &&
		    key_equals(p, end, s->key, s->key_len))
			child |= (uint64_t)1 << i;
	}
	return child;
}

static uint64_t element_paths(const struct parser *j, uint64_t active, size_t depth,
			      uint64_t index)
{
	const struct json_paths *ps = j->paths;
	uint64_t child = 0;

	for (size_t i = 0; active >> i != 0; i++) {
		const struct json_step *s = &ps->steps[ps->first[i] + depth];

		if ((active >> i & 1) && ps->count[i] > depth && !s->key && s->index == index)
			child |= (uint64_t)1 << i;
	}
	return child;
}

/* After a member or element: 1 at ',' (passed), 0 at close (passed), -1 otherwise. */
static int next_item(struct parser *j, unsigned char close)
{
	skip_space(j);
	if (j->p < j->end && *j->p == ',') {
		j->p++;
		return 1;
	}
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	return fail(j, close == '}' ? "expected ',' or '}' in an object"
				   : "expected ',' or ']' in an array");
}

static int parse_object(struct parser *j, uint64_t active, size_t depth)
{
	int more = 1;

	j->p++;
	skip_space(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return 0;
	}
	while (more > 0) {
		const unsigned char *key, *key_end;

		skip_space(j);
		if (j->p == j->end || *j->p != '"')
			return fail(j, "expected a member name in an object");
		key = j->p + 1;
		if (scan_string(j) < 0)
			return -1;
		key_end = j->p - 1;
		skip_space(j);
		if (j->p == j->end || *j->p++ != ':')
			return fail(j, "expected ':' after a member name");
		if (parse_value(j, active ? member_paths(j, active, depth, key, key_end) : 0,
				depth + 1) < 0)
			return -1;
		more = next_item(j, '}');
	}
	return more;
}

static int parse_array(struct parser *j, uint64_t active, size_t depth)
{
	uint64_t index = 0;
	int more = 1;

	j->p++;
	skip_space(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return 0;
	}
	while (more > 0) {
		if (parse_value(j, active ? element_paths(j, active, depth, index++) : 0,
				depth + 1) < 0)
			return -1;
		more = next_item(j, ']');
	}
	return more;
}

/* The paths of active that end at depth end at the value [start, j->p). */
static void note_values(struct parser *j, uint64_t active, size_t depth,
			const unsigned char *start)
{
	for (size_t i = 0; active >> i != 0; i++)
		if ((active >> i & 1) && j->paths->count[i] == depth)
			j->values[i] = (struct line){ (const char *)start, (size_t)(j->p - start) };
}

static int parse_value(struct parser *j, uint64_t active, size_t depth)
{
	const unsigned char *start;
	int rc;

	if (depth > JSON_DEPTH_MAX)
		return fail(j, "nested too deeply");
	skip_space(j);
	if (j->p == j->end)
		return fail(j, "a value is missing");
	start = j->p;
	switch (*j->p) {
	case '{': rc = parse_object(j, active, depth); break;
	case '[': rc = parse_array(j, active, depth); break;
	case '"': rc = scan_string(j); break;
	case 't': rc = literal(j, "true", 4); break;
	case 'f': rc = literal(j, "false", 5); break;
	case 'n': rc = literal(j, "null", 4); break;
	default: rc = scan_number(j); break;
	}
	if (rc == 0 && active)
		note_values(j, active, depth, start);
	return rc;
}

int json_find(struct line doc, const struct json_paths *paths, struct line *values,
	      const char **why)
{
	struct parser j = { (const unsigned char *)doc.data,
			    (const unsigned char *)doc.data + doc.len, paths, values, NULL };
	uint64_t all = paths->n >= 64 ? UINT64_MAX : ((uint64_t)1 << paths->n) - 1;

	for (size_t i = 0; i < paths->n; i++)
		values[i] = (struct line){ NULL, 0 };
	skip_space(&j);
	if (j.p == j.end)
		return 0;
	if (parse_value(&j, all, 0) == 0) {
		skip_space(&j);
		if (j.p == j.end)
			return 1;
		fail(&j, "more after the value");
	}
	*why = j.why;
	for (size_t i = 0; i < paths->n; i++)
		values[i] = (struct line){ NULL, 0 };
	return -1;
}

/* One unescaped character of a string, written back with the fewest escapes. */
static size_t canonical_char(const unsigned char *c, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	static const char *const short_escape[0x20] = {
		['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
	};

	if (n > 1 || (c[0] >= 0x20 && c[0] != '"' && c[0] != '\\')) {
		memcpy(out, c, n);
		return n;
	}
	if (c[0] >= 0x20 || short_escape[c[0]]) {
		out[0] = '\\';
		out[1] = c[0] >= 0x20 ? (char)c[0] : short_escape[c[0]][1];
		return 2;
	}
	memcpy(out, "\\u00", 4);
	out[4] = hex[c[0] >> 4];
	out[5] = hex[c[0] & 15];
	return 6;
}

/* The string at *p (its opening quote) in canonical form into out; its length. */
static size_t canonical_string(const unsigned char **p, const unsigned char *end, char *out)
{
	size_t len = 1;

	out[0] = '"';
	for (++*p; **p != '"';) {
		unsigned char c[4];
		size_t n = unescape_one(p, end, c);

		len += canonical_char(c, n, out + len);
	}
	++*p;
	out[len++] = '"';
	return len;
}

/* Beyond this an exponent only says "huge" or "tiny"; it is kept, never wrapped. */
#define EXPONENT_CAP 1000000000L

/* |e| in decimal, at least two digits (jq's "1e+16", "1e-05"), at out; its length. */
static size_t exponent_text(long e, char *out)
{
	char digits[24];
	size_t n = 0, len = 0;

	out[len++] = 'e';
	out[len++] = e < 0 ? '-' : '+';
	e = e < 0 ? -e : e;
	do {
		digits[n++] = (char)('0' + e % 10);
		e /= 10;
	} while (e > 0);
	if (n < 2)
		digits[n++] = '0';
	while (n > 0)
		out[len++] = digits[--n];
	return len;
}

/*
 * The nd significant digits at d, the number 0.d * 10^decpt, laid out in
 * place as jq 1.6 writes it (jvp_dtoa_fmt's rule): with an exponent when
 * decpt <= -4 or decpt > nd + 15, else plain. Its length.
 */
static size_t number_text(char *d, size_t nd, long decpt)
{
	if (decpt <= -4 || decpt > (long)nd + 15) {
		size_t len = nd;

		if (nd > 1) {
			memmove(d + 2, d + 1, nd - 1);
			d[1] = '.';
			len++;
		}
		return len + exponent_text(decpt - 1, d + len);
	}
	if (decpt <= 0) {
		size_t zeros = 2 + (size_t)-decpt;	/* "0." and up to three more */

		memmove(d + zeros, d, nd);
		memcpy(d, "0.000", zeros);
		return zeros + nd;
	}
	if ((size_t)decpt < nd) {
		memmove(d + decpt + 1, d + decpt, nd - (size_t)decpt);
		d[decpt] = '.';
		return nd + 1;
	}
	memset(d + nd, '0', (size_t)decpt - nd);
	return (size_t)decpt;
}

/*
 * The number at *p (valid JSON: json_find checked it) by value into out:
 * its significant digits, exactly, laid out as jq 1.6 prints a number;
 * zero is "0" or "-0". Digits are never rounded to a double, so where jq
 * 1.6 rounds (past 17 significant digits, or 1e400) the key keeps them.
 */
static size_t canonical_number(const unsigned char **p, const unsigned char *end, char *out)
{
	const unsigned char *q = *p;
	long decpt = 0, exp = 0, esign = 1;	/* decpt: integer digits from the first significant one */
	int point = 0;
	size_t len = 0, nd = 0, kept = 0;	/* kept: digits up to the last nonzero */

	if (*q == '-')
		out[len++] = '-', q++;
	for (; q < end && ((*q >= '0' && *q <= '9') || *q == '.'); q++) {
		if (*q == '.') {
			point = 1;
		} else if (nd == 0 && *q == '0') {
			decpt -= point && decpt > -EXPONENT_CAP;	/* 0.00d */
		} else {
			out[len + nd++] = (char)*q;
			kept = *q != '0' ? nd : kept;
			decpt += !point && decpt < EXPONENT_CAP;
		}
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (*q == '+' || *q == '-')
			esign = *q++ == '-' ? -1 : 1;
		for (; q < end && *q >= '0' && *q <= '9'; q++)
			if (exp < EXPONENT_CAP)
				exp = exp * 10 + (*q - '0');
	}
	*p = q;
	if (nd == 0) {
		out[len++] = '0';
		return len;
	}
	return len + number_text(out + len, kept, decpt + esign * exp);
}

size_t json_key_text(struct line value, char *out)
{
	const unsigned char *p = (const unsigned char *)value.data, *end = p + value.len;
	size_t len = 0;

	if (value.len == 0)
		return 0;
	if (*p == '"') {
		for (p++, end--; p < end;) {
			/* runs without a backslash are copied whole */
			const unsigned char *bs = memchr(p, '\\', (size_t)(end - p));
			const unsigned char *stop = bs ? bs : end;

			memcpy(out + len, p, (size_t)(stop - p));
			len += (size_t)(stop - p);
			p = stop;
			if (p < end)
				len += unescape_one(&p, end, (unsigned char *)out + len);
		}
		return len;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9'))
		return canonical_number(&p, end, out);
	if (*p != '{' && *p != '[') {
		memcpy(out, p, value.len);
		return value.len;
	}
	while (p < end) {
		if (*p == '"')
			len += canonical_string(&p, end, out + len);
		else if (*p == '-' || (*p >= '0' && *p <= '9'))
			len += canonical_number(&p, end, out + len);
		else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		else
			out[len++] = (char)*p++;
	}
	return len;
}

/* ------------------------------------------------------------------ paths */

/* A path's quoted key at *p: unescaped to the end of p->keys; -1 when bad. */
static int path_string(const char **text, struct json_paths *ps, size_t *used,
		       struct json_step *step)
{
	struct parser j = { (const unsigned char *)*text,
			    (const unsigned char *)*text + strlen(*text), NULL, NULL, NULL };
	const unsigned char *p = j.p + 1, *close;

	if (scan_string(&j) < 0)
		return -1;
	close = j.p - 1;
	step->key = ps->keys + *used;
	step->key_len = 0;
	while (p < close) {
		size_t n = unescape_one(&p, close, (unsigned char *)ps->keys + *used);

		*used += n;
		step->key_len += n;
	}
	*text = (const char *)j.p;
	return 0;
}

static int name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* [N] or ["key"] at *text (its '['). */
static int path_bracket(const char **text, struct json_paths *ps, size_t *used,
			struct json_step *step, const char **errstr)
{
	const char *p = *text + 1;

	if (*p == '"') {
		if (path_string(&p, ps, used, step) < 0)
			return *errstr = "a bad quoted key in a path", -1;
	} else {
		uint64_t v = 0;
		const char *from = p;

		for (; *p >= '0' && *p <= '9' && v <= UINT64_MAX / 10 - 1; p++)
			v = v * 10 + (uint64_t)(*p - '0');
		if (p == from)
			return *errstr = "an array index in a path is a whole number from 0", -1;
		step->key = NULL;
		step->index = v;
	}
	if (*p != ']')
		return *errstr = "a path's '[' without its ']'", -1;
	*text = p + 1;
	return 0;
}

/* One step after a '.' at *text: a name, a quoted key or a bracket. */
static int path_step(const char **text, struct json_paths *ps, size_t *used,
		     struct json_step *step, const char **errstr)
{
	const char *p = *text;

	if (*p == '[')
		return path_bracket(text, ps, used, step, errstr);
	if (*p == '"') {
		if (path_string(text, ps, used, step) < 0)
			return *errstr = "a bad quoted key in a path", -1;
		return 0;
	}
	if (!name_start(*p))
		return *errstr = "a path step is a name, a \"quoted key\" or [N]", -1;
	step->key = ps->keys + *used;
	while (name_char(*p))
		ps->keys[(*used)++] = *p++;
	step->key_len = (size_t)(ps->keys + *used - step->key);
	*text = p;
	return 0;
}

/* One path at *text, its steps from ps->steps[*nsteps]. */
static int parse_path(const char **text, struct json_paths *ps, size_t *nsteps, size_t *used,
		      const char **errstr)
{
	const char *p = *text;

	if (*p != '.')
		return *errstr = "a path starts with '.'", -1;
	if (p[1] == '\0' || p[1] == ',') {
		*text = p + 1;	/* '.': the whole line */
		return 0;
	}
	while (*p != '\0' && *p != ',') {
		if (*p == '.')
			p++;
		else if (*p != '[')
			return *errstr = "a path step is a name, a \"quoted key\" or [N]", -1;
		if (path_step(&p, ps, used, &ps->steps[(*nsteps)++], errstr) < 0)
			return -1;
	}
	*text = p;
	return 0;
}

static struct json_paths *paths_alloc(size_t len)
{
	struct json_paths *ps = calloc(1, sizeof *ps);

	if (ps == NULL)
		return NULL;
	/* every step and every path takes at least one character */
	ps->steps = calloc(len + 1, sizeof *ps->steps);
	ps->first = calloc(len + 1, sizeof *ps->first);
	ps->count = calloc(len + 1, sizeof *ps->count);
	ps->keys = malloc(len + 1);
	if (!ps->steps || !ps->first || !ps->count || !ps->keys) {
		json_paths_free(ps);
		return NULL;
	}
	return ps;
}

struct json_paths *json_paths_parse(const char *text, const char **errstr)
{
	struct json_paths *ps = paths_alloc(strlen(text));
	size_t nsteps = 0, used = 0;

	if (ps == NULL)
		return *errstr = "out of memory", NULL;
	for (;;) {
		if (ps->n == JSON_PATHS_MAX) {
			*errstr = "more than 64 paths";
			break;
		}
		ps->first[ps->n] = nsteps;
		if (parse_path(&text, ps, &nsteps, &used, errstr) < 0)
			break;
		ps->count[ps->n] = nsteps - ps->first[ps->n];
		ps->n++;
		if (*text == '\0')
			return ps;
		text++;	/* the comma */
	}
	json_paths_free(ps);
	return NULL;
}

void json_paths_free(struct json_paths *p)
{
	if (p == NULL)
		return;
	free(p->steps);
	free(p->first);
	free(p->count);
	free(p->keys);
	free(p);
}
