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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	fuzz_check(s != NULL, "out of memory");
	memcpy(s, data, size);
	s[size] = '\0';
	check_count(s);
	check_rate(s);
	check_hex_key(s);
	free(s);
	return 0;
}
