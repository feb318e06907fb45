/* SPDX-License-Identifier: MIT */
/*
 * json_out.c - JSON strings out of any bytes (see json_out.h).
 *
 * The UTF-8 check is RFC 3629's: the lead byte fixes the length, every
 * continuation byte is 10xxxxxx, and the code point must need that length
 * (no overlong forms), lie outside the surrogates D800-DFFF and below
 * 110000. Runs of plain bytes are written with one put, not byte by byte.
 */
#include "json_out.h"

#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when none starts there. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
	uint32_t cp;

	if (len == 0 || len > n)
		return 0;
	cp = s[0] & (0x7fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff)
		return 0;
	return len;
}

/* The escape for byte c at s (n left): its length in out, 0 when it goes out as it is (*keep bytes). */
static size_t escape_at(const unsigned char *s, size_t n, char out[8], size_t *keep)
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = s[0];

	*keep = 1;
	if (c == '"' || c == '\\') {
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	if (c >= 0x20 && c < 0x7f)
		return 0;
	if (c >= 0x80 && (*keep = utf8_length(s, n)) != 0)
		return 0;
	*keep = 1;
	/* control bytes and DEL as \u00XX; a byte of no valid sequence as \udcXX */
	out[0] = '\\';
	out[1] = 'u';
	out[2] = c >= 0x80 ? 'd' : '0';
	out[3] = c >= 0x80 ? 'c' : '0';
	out[4] = hex[c >> 4];
	out[5] = hex[c & 15];
	return 6;
}

int json_out_string(struct writer *w, const void *data, size_t len)
{
	const unsigned char *s = data;
	size_t plain = 0, i = 0;

	if (writer_put(w, "\"", 1) < 0)
		return -1;
	while (i < len) {
		char esc[8];
		size_t keep, n = escape_at(s + i, len - i, esc, &keep);

		if (n == 0) {
			i += keep;
			continue;
		}
		if (writer_put(w, s + plain, i - plain) < 0 || writer_put(w, esc, n) < 0)
			return -1;
		i += keep;
		plain = i;
	}
	if (writer_put(w, s + plain, i - plain) < 0)
		return -1;
	return writer_put(w, "\"", 1);
}
