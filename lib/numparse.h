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
 * A duration: a decimal number and a unit, s (seconds), m (minutes), h
 * (hours) or d (days): "90s", "10m", "1.5h", "7d". More than 0 and at most
 * NUMPARSE_DURATION_MAX seconds (100 years). A bare number is not a
 * duration (callers may read it as a count). Returns 0 and the seconds,
 * or -1 with *errstr set.
 */
#define NUMPARSE_DURATION_MAX (100.0 * 365.25 * 86400.0)
int numparse_duration(const char *s, double *seconds, const char **errstr);

/*
 * A 128-bit key written as exactly 32 hexadecimal digits (either case),
 * byte 0 first. Returns 0, or -1 with *errstr set.
 */
int numparse_hex_key(const char *s, unsigned char key[16], const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
