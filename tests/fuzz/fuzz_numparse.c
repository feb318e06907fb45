/* SPDX-License-Identifier: MIT */
/*
 * fuzz_numparse.c - libFuzzer harness for the number parsers (numparse.h).
 *
 * The input, up to its first NUL, is the string a user typed; each parser
 * gets a NUL-terminated copy. Checked against plainly written references
 * that take a different road to the answer:
 *
 *   numparse_count  accepted exactly when the reference accepts: the
 *                   grammar of numparse.h, not negative, a whole number
 *                   that fits in 64 bits, found by writing the value out
 *                   as a digit string and comparing it with UINT64_MAX's;
 *                   the same value; within [min, max] for every pair of
 *                   bounds tried, and refused just outside the value
 *   numparse_rate   an accepted rate lies in [DBL_MIN, 1); where the
 *                   string is in the grammar it agrees with strtod (to a
 *                   relative 1e-12, away from the edges 0 and 1 where a
 *                   last-place rounding may decide)
 *   numparse_hex_key accepted exactly for 32 hex digits, and the key
 *                   printed back in hex is the input in lower case
 *   numparse_duration accepted exactly for digits and one of s, m, h, d
 *                   whose seconds fit in 64 bits and the bounds tried; the
 *                   same seconds
 *   numparse_time   accepted exactly when a reference that counts days
 *                   year by year accepts, with the same milliseconds; it
 *                   gets exactly the input's bytes in a buffer of their
 *                   size, so reading one past the end is an ASan report
 *
 * and every refusal comes with a message.
 */
#define _GNU_SOURCE	/* fuzz.h: memfd_create */

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "numparse.h"

/* The shape numparse.h describes: [-] mantissa [exponent] [suffix]. */
struct parsed {
	int negative;
	char *digits;		/* mantissa digits, the point removed (a new buffer) */
	size_t ndigits, nfrac;	/* nfrac of them after the point */
	long exp;		/* saturated at +-EXP_CAP */
	char suffix;		/* 0, or the one byte after the number */
};

/* Far beyond any exponent that could matter next to a mantissa of fuzz size. */
#define EXP_CAP 100000000L

static size_t take_digits(const char *s, struct parsed *p)
{
	size_t n = 0;

	while (isdigit((unsigned char)s[n]))
		p->digits[p->ndigits++] = s[n++];
	return n;
}

static size_t take_exponent(const char *s, long *exp)
{
	size_t i = 1;
	int neg = s[i] == '-';

	*exp = 0;
	if (s[i] == '-' || s[i] == '+')
		i++;
	if (!isdigit((unsigned char)s[i]))
		return 0;
	for (; isdigit((unsigned char)s[i]); i++)
		if (*exp < EXP_CAP)
			*exp = *exp * 10 + (s[i] - '0');
	if (neg)
		*exp = -*exp;
	return i;
}

/* 1 when s is in the grammar, plus at most one trailing byte (p->suffix). */
static int parse_shape(const char *s, struct parsed *p)
{
	size_t i = 0, n;

	memset(p, 0, sizeof *p);
	p->digits = malloc(strlen(s) + 1);
	fuzz_check(p->digits != NULL, "out of memory");
	p->negative = s[0] == '-';
	i += (size_t)p->negative;
	i += take_digits(s + i, p);
	if (s[i] == '.') {
		n = take_digits(s + i + 1, p);
		p->nfrac = n;
		i += 1 + n;
	}
	if (p->ndigits == 0)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		if ((n = take_exponent(s + i, &p->exp)) == 0)
			return 0;
		i += n;
	}
	p->suffix = s[i];
	return s[i] == '\0' || s[i + 1] == '\0';
}

static long suffix_power(char c)
{
	static const char si[] = "kKMGTP";
	static const long power[] = { 3, 3, 6, 9, 12, 15 };
	const char *at = c ? strchr(si, c) : NULL;

	return at ? power[at - si] : c ? -1 : 0;
}

/* digits[first..last) * 10^scale, when it is a whole number of at most 64 bits. */
static int ref_value(const struct parsed *p, size_t first, size_t last, long scale, uint64_t *v)
{
	char value[21];
	size_t n = last - first;

	if (scale < 0)
		return 0;	/* a fraction is left */
	if ((long)n + scale > 20)
		return 0;	/* more than 20 digits: over UINT64_MAX */
	memcpy(value, p->digits + first, n);
	memset(value + n, '0', (size_t)scale);
	value[n + (size_t)scale] = '\0';
	if (n + (size_t)scale == 20 && strcmp(value, "18446744073709551615") > 0)
		return 0;
	*v = strtoull(value, NULL, 10);
	return 1;
}

/* The reference count: 1 with *v, or 0 when refused (for any bounds). */
static int ref_count(const char *s, uint64_t *v)
{
	struct parsed p;
	size_t first = 0, last;
	long power;
	int ok = 0;

	if (!parse_shape(s, &p) || p.negative || (power = suffix_power(p.suffix)) < 0)
		goto out;
	while (first < p.ndigits && p.digits[first] == '0')
		first++;
	ok = 1;
	*v = 0;
	if (first == p.ndigits)
		goto out;
	last = p.ndigits;
	while (p.digits[last - 1] == '0')
		last--;
	/* the trailing zeros go back in as powers of ten */
	ok = ref_value(&p, first, last, p.exp + power - (long)p.nfrac + (long)(p.ndigits - last), v);
out:
	free(p.digits);
	return ok;
}

static void check_count_bounds(const char *s, uint64_t min, uint64_t max, int ok, uint64_t v)
{
	const char *err = NULL;
	uint64_t got = 0;
	int rc = numparse_count(s, min, max, &got, &err);
	int want = ok && v >= min && v <= max;

	fuzz_check((rc == 0) == want, "count accepted exactly when in the grammar and the bounds");
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused count says why");
	fuzz_check(rc != 0 || (got == v && got >= min && got <= max), "the count's value");
}

static void check_count(const char *s)
{
	static const uint64_t bounds[][2] = {
		{ 0, UINT64_MAX }, { 1, UINT64_MAX }, { 1, UINT64_C(1) << 46 }, { 1, 64 },
		{ 512, UINT64_C(1) << 46 }, { 1000, 1000 },
	};
	uint64_t v = 0;
	int ok = ref_count(s, &v);

	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
		check_count_bounds(s, bounds[i][0], bounds[i][1], ok, v);
	if (!ok)
		return;
	check_count_bounds(s, v, v, ok, v);
	if (v < UINT64_MAX)
		check_count_bounds(s, v + 1, UINT64_MAX, ok, v);
	if (v > 0)
		check_count_bounds(s, 0, v - 1, ok, v);
}

/* Where strtod and numparse must agree: inside the grammar, away from the edges. */
static void check_rate_reference(const char *s, int rc, double got)
{
	struct parsed p;
	int shaped = parse_shape(s, &p) && (p.suffix == '\0' || p.suffix == '%');
	double want = shaped ? strtod(s, NULL) : 0.0;

	free(p.digits);
	if (!shaped)
		return;
	if (p.suffix == '%')
		want /= 100.0;
	if (p.negative || want <= 0.0 || want >= 1.000001)
		fuzz_check(rc != 0, "a rate outside (0, 1) is refused");
	if (p.negative || want < 1e-300 || want > 0.999999)
		return;
	fuzz_check(rc == 0, "a rate strtod reads in (0, 1) is accepted");
	fuzz_check(fabs(got - want) <= 1e-12 * want, "the rate agrees with strtod");
}

static void check_rate(const char *s)
{
	const char *err = NULL;
	double got = 0.0;
	int rc = numparse_rate(s, &got, &err);

	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused rate says why");
	fuzz_check(rc != 0 || (got >= DBL_MIN && got < 1.0), "an accepted rate lies in [DBL_MIN, 1)");
	check_rate_reference(s, rc, got);
}

static void check_hex_key(const char *s)
{
	unsigned char key[16];
	const char *err = NULL;
	char back[33];
	size_t len = strlen(s), hex = strspn(s, "0123456789abcdefABCDEF");
	int rc = numparse_hex_key(s, key, &err);

	fuzz_check((rc == 0) == (len == 32 && hex == 32), "a key is exactly 32 hex digits");
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused key says why");
	if (rc != 0)
		return;
	for (size_t i = 0; i < 16; i++)
		snprintf(back + 2 * i, 3, "%02x", key[i]);
	for (size_t i = 0; i < 32; i++)
		fuzz_check(back[i] == tolower((unsigned char)s[i]), "the key prints back as typed");
}

/* ---- durations ------------------------------------------------------ */

/* The reference duration in seconds: 1 with *v, or 0 (not one, or over 64 bits). */
static int ref_duration(const char *s, uint64_t *v)
{
	static const char units[] = "smhd";
	static const uint64_t scale[] = { 1, 60, 3600, 86400 };
	size_t n = strspn(s, "0123456789");
	const char *u;

	*v = 0;
	if (n == 0 || s[n] == '\0' || s[n + 1] != '\0' || (u = strchr(units, s[n])) == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (__builtin_mul_overflow(*v, 10, v) || __builtin_add_overflow(*v, (uint64_t)(s[i] - '0'), v))
			return 0;
	return !__builtin_mul_overflow(*v, scale[u - units], v);
}

static void check_duration(const char *s)
{
	static const uint64_t bounds[][2] = {
		{ 0, UINT64_MAX }, { 1, UINT64_C(1) << 40 }, { 60, 86400 },
	};
	uint64_t v, got;
	int ok = ref_duration(s, &v);

	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const char *err = NULL;
		int want = ok && v >= bounds[i][0] && v <= bounds[i][1];
		int rc = numparse_duration(s, bounds[i][0], bounds[i][1], &got, &err);

		fuzz_check((rc == 0) == want, "a duration accepted exactly when the reference accepts");
		fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused duration says why");
		fuzz_check(rc != 0 || got == v, "the duration's seconds");
	}
}

/* ---- times ---------------------------------------------------------- */

/* n digits at p as a number, or -1. */
static long digits_at(const char *p, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

static int leap_year(long y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Days from 1970-01-01 to y-m-d, counted a year and a month at a time. */
FUZZ_UNTRACED static int64_t days_since_epoch(long y, long m, long d)
{
	static const int month_days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int64_t days = d - 1;

	for (long yy = 1970; yy < y; yy++)
		days += 365 + leap_year(yy);
	for (long yy = y; yy < 1970; yy++)
		days -= 365 + leap_year(yy);
	for (long mm = 1; mm < m; mm++)
		days += month_days[mm - 1] + (mm == 2 && leap_year(y));
	return days;
}

/* ".digits" at s[*i] (or nothing): milliseconds, truncated; -1 when malformed. */
static long ref_fraction(const char *s, size_t len, size_t *i)
{
	long ms = 0;
	size_t first;

	if (*i == len || s[*i] != '.')
		return 0;
	first = ++*i;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9')
		++*i;
	if (*i == first)
		return -1;
	for (size_t k = 0; k < 3; k++)
		ms = ms * 10 + (first + k < *i ? s[first + k] - '0' : 0);
	return ms;
}

/* Seconds east of UTC from "Z", "z", "+hh:mm" or "-hh:mm" (hh <= 23, mm <= 59). */
static int ref_offset(const char *s, size_t len, long *off)
{
	long hh, mm;

	if (len == 1 && (*s == 'Z' || *s == 'z')) {
		*off = 0;
		return 1;
	}
	if (len != 6 || (*s != '+' && *s != '-') || s[3] != ':')
		return 0;
	hh = digits_at(s + 1, 2);
	mm = digits_at(s + 4, 2);
	if (hh < 0 || hh > 23 || mm < 0 || mm > 59)
		return 0;
	*off = (*s == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
	return 1;
}

/* YYYY-MM-DDTHH:MM:SS[.f]offset as milliseconds (possibly negative); 1, or 0. */
static int ref_rfc3339(const char *s, size_t len, int64_t *ms)
{
	static const int month_days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long y, mo, d, h, mi, sec, frac, off;
	size_t i = 19;

	if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':'
	    || s[16] != ':')
		return 0;
	y = digits_at(s, 4), mo = digits_at(s + 5, 2), d = digits_at(s + 8, 2);
	h = digits_at(s + 11, 2), mi = digits_at(s + 14, 2), sec = digits_at(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return 0;
	if (d < 1 || d > month_days[mo - 1] + (mo == 2 && leap_year(y)))
		return 0;
	if ((frac = ref_fraction(s, len, &i)) < 0 || !ref_offset(s + i, len - i, &off))
		return 0;
	if (sec == 60)	/* a leap second reads as the last millisecond of its minute */
		sec = 59, frac = 999;
	*ms = ((days_since_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) - off) * 1000 + frac;
	return 1;
}

/* Unix seconds, digits [. digits]; 1 with *ms (saturated above 2^44 s, past the range), or 0. */
static int ref_unix(const char *s, size_t len, int64_t *ms)
{
	size_t i = 0;
	int64_t sec = 0;
	long frac;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		sec = sec > INT64_C(1) << 44 ? sec : sec * 10 + (s[i] - '0');
	if (i == 0 || (frac = ref_fraction(s, len, &i)) < 0 || i != len)
		return 0;
	*ms = sec * 1000 + frac;
	return 1;
}

static void check_time(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);	/* exactly the bytes: no NUL after them */
	const char *err = NULL;
	uint64_t got = 0;
	int64_t want = -1;
	int ok, rc;

	fuzz_check(s != NULL, "out of memory");
	memcpy(s, data, size);
	ok = size > 4 && s[4] == '-' ? ref_rfc3339(s, size, &want) : ref_unix(s, size, &want);
	ok = ok && want >= 0 && (uint64_t)want < NUMPARSE_TIME_MAX;
	rc = numparse_time(s, size, &got, &err);
	fuzz_check((rc == 0) == ok, "a time accepted exactly when the reference accepts");
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused time says why");
	fuzz_check(rc != 0 || (int64_t)got == want, "the time's milliseconds");
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	fuzz_check(s != NULL, "out of memory");
	memcpy(s, data, size);
	s[size] = '\0';
	check_count(s);
	check_rate(s);
	check_hex_key(s);
	check_duration(s);
	check_time(data, size);
	free(s);
	return 0;
}
