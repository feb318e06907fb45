/* SPDX-License-Identifier: MIT */
/*
 * numparse.h - checked parsing of the numbers users type on command lines.
 *
 * In the shape of OpenBSD's strtonum(3): the value, its bounds, and a static
 * message saying what is wrong. Nothing is ever clamped: a value outside the
 * bounds, junk, or overflow is an error. No locale is consulted.
 */
#ifndef BFTOOLS_NUMPARSE_H
#define BFTOOLS_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A count of things: "1000000", "1e9", "10M", "2.5G", "1.5e3k". Decimal
 * mantissa with optional fraction and exponent, then an optional SI suffix
 * k/K (1e3), M (1e6), G (1e9), T (1e12), P (1e15). The result must be a
 * whole number within [min, max]. Returns 0, or -1 with *errstr set.
 */
int numparse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   const char **errstr);

/*
 * A probability strictly between 0 and 1: "1e-4", "0.0001", "0.01%".
 * Returns 0, or -1 with *errstr set (zero, negative, >= 1, junk, nan, inf).
 */
int numparse_rate(const char *s, double *out, const char **errstr);

/*
 * A 128-bit key written as exactly 32 hexadecimal digits (either case),
 * byte 0 first. Returns 0, or -1 with *errstr set.
 */
int numparse_hex_key(const char *s, unsigned char key[16], const char **errstr);

/*
 * A duration in whole seconds: one or more terms of a number and a unit,
 * w (weeks), d (days), h (hours), m (minutes) or s (seconds), in that
 * order, each unit once: "90s", "10m", "1h30m", "1.5h", "7d", "1w". A
 * number is digits with an optional fraction ("1.5", ".5"); the total must
 * be whole seconds ("1.5s" is refused), within [min, max]. Units are lower
 * case only: "10M" is no duration. Returns 0, or -1 with *errstr set.
 */
#define NUMPARSE_DURATION_SHAPE "not a duration (such as 90s, 10m, 1h30m, 1.5h, 7d or 1w)"
int numparse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *seconds,
		      const char **errstr);

/*
 * A point in time, from len bytes at s (not NUL-terminated), as Unix
 * milliseconds below NUMPARSE_TIME_MAX (2^53), truncated to the
 * millisecond:
 *   Unix seconds     digits, optionally "." and digits: "1764074096",
 *                    "1764074096.25"
 *   RFC 3339         YYYY-MM-DDTHH:MM:SS, optionally "." and digits, then
 *                    "Z" or an offset +hh:mm / -hh:mm: "2026-11-25T12:34:56Z",
 *                    "2026-11-25T13:34:56.5+01:00" ("T" and "Z" in either
 *                    case; seconds 00..60, a leap second read as :59.999)
 * Nothing before 1970 and no other spelling. Returns 0, or -1 with *errstr.
 */
#define NUMPARSE_TIME_MAX (UINT64_C(1) << 53)
int numparse_time(const char *s, size_t len, uint64_t *ms, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
