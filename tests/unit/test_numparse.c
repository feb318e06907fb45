/* SPDX-License-Identifier: MIT */
/*
 * test_numparse.c - table-driven tests of counts, rates and hex keys.
 *
 * Every accepted input is checked for its exact value; every rejected input
 * for the exact message, so a wrong reason ("too large" for a fraction) is
 * caught, and for leaving the output untouched.
 */
#include <float.h>
#include <locale.h>
#include <stdint.h>
#include <string.h>

#include "numparse.h"
#include "unit.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char NOT_NUMBER[] = "not a number";
static const char NOT_WHOLE[] = "not a whole number";
static const char TOO_LARGE[] = "too large";
static const char NEGATIVE[] = "must not be negative";
static const char BAD_SUFFIX[] = "unknown suffix (use k, M, G, T or P)";
static const char RANGE[] = "must be between 0 and 1 (exclusive)";
static const char BAD_KEY[] = "must be 32 hexadecimal digits";

struct count_ok {
	const char *in;
	uint64_t want;
};

struct count_bad {
	const char *in;
	uint64_t min, max;
	const char *msg;
};

static void test_count_accepts(void)
{
	static const struct count_ok cases[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "1000000", 1000000 },
		{ "007", 7 },
		{ "1e9", 1000000000 },
		{ "1E3", 1000 },
		{ "1e+3", 1000 },
		{ "10M", 10000000 },
		{ "1K", 1000 },
		{ "1k", 1000 },
		{ "2.5G", 2500000000 },
		{ "1.5e3k", 1500000 },
		{ "3T", UINT64_C(3000000000000) },
		{ "2P", UINT64_C(2000000000000000) },
		{ ".5k", 500 },
		{ "5.", 5 },
		{ "1.000", 1 },
		{ "1.5e1", 15 },
		{ "12345e-2k", 123450 },
		{ "1000e-3", 1 },
		{ "0.0", 0 },
		{ "0e-5", 0 },
		{ "0e999999999999999999999", 0 },
		{ "0.001k", 1 },
		{ "1e19", UINT64_C(10000000000000000000) },
		{ "18446744073709551615", UINT64_MAX },
		{ "18446744073709551615.000", UINT64_MAX },
		{ "18.446744073709551615e18", UINT64_MAX },
		{ "0000000000000000000000000000042", 42 },
		{ "100000000000000000000000000000e-28", 10 },
	};

	for (size_t i = 0; i < NELEM(cases); i++) {
		uint64_t v = 12345;
		const char *err = "unset";
		int rc = numparse_count(cases[i].in, 0, UINT64_MAX, &v, &err);

		CHECKF(rc == 0, "'%s' rejected: %s", cases[i].in, err ? err : "(null)");
		CHECKF(v == cases[i].want, "'%s' gave %llu", cases[i].in, (unsigned long long)v);
		CHECKF(err == NULL, "'%s' left errstr set", cases[i].in);
	}
}

static void test_count_rejects(void)
{
	static const struct count_bad cases[] = {
		{ "", 0, UINT64_MAX, "empty" },
		{ "1.5", 0, UINT64_MAX, NOT_WHOLE },
		{ "1e-3", 0, UINT64_MAX, NOT_WHOLE },
		{ "0.0k", 1, UINT64_MAX, "must be at least 1" },
		{ "0.0005k", 0, UINT64_MAX, NOT_WHOLE },
		{ "1.0001k", 0, UINT64_MAX, NOT_WHOLE },
		{ "1e20", 0, UINT64_MAX, TOO_LARGE },
		{ "18446744073709551616", 0, UINT64_MAX, TOO_LARGE },
		{ "18446744073709551615.5", 0, UINT64_MAX, NOT_WHOLE },
		{ "18446744073709551616000e-3", 0, UINT64_MAX, TOO_LARGE },
		{ "19e18", 0, UINT64_MAX, TOO_LARGE },
		{ "1e400", 0, UINT64_MAX, TOO_LARGE },
		{ "1e99999999999999999999999999", 0, UINT64_MAX, TOO_LARGE },
		{ "1e-99999999999999999999999999", 0, UINT64_MAX, NOT_WHOLE },
		{ "100000P", 0, UINT64_MAX, TOO_LARGE },
		{ "0x10", 0, UINT64_MAX, NOT_NUMBER },
		{ " 5", 0, UINT64_MAX, NOT_NUMBER },
		{ "5 ", 0, UINT64_MAX, NOT_NUMBER },
		{ "5\n", 0, UINT64_MAX, NOT_NUMBER },
		{ "-5", 0, UINT64_MAX, NEGATIVE },
		{ "-0", 0, UINT64_MAX, NEGATIVE },
		{ "+5", 0, UINT64_MAX, NOT_NUMBER },
		{ "--5", 0, UINT64_MAX, NOT_NUMBER },
		{ "abc", 0, UINT64_MAX, NOT_NUMBER },
		{ ".", 0, UINT64_MAX, NOT_NUMBER },
		{ "-", 0, UINT64_MAX, NOT_NUMBER },
		{ "e5", 0, UINT64_MAX, NOT_NUMBER },
		{ "1e", 0, UINT64_MAX, NOT_NUMBER },
		{ "1e+", 0, UINT64_MAX, NOT_NUMBER },
		{ "1.2.3", 0, UINT64_MAX, NOT_NUMBER },
		{ "1,000", 0, UINT64_MAX, NOT_NUMBER },
		{ "1_000", 0, UINT64_MAX, NOT_NUMBER },
		{ "inf", 0, UINT64_MAX, NOT_NUMBER },
		{ "nan", 0, UINT64_MAX, NOT_NUMBER },
		{ "1kk", 0, UINT64_MAX, NOT_NUMBER },
		{ "1k5", 0, UINT64_MAX, NOT_NUMBER },
		{ "k", 0, UINT64_MAX, NOT_NUMBER },
		{ "2.5x", 0, UINT64_MAX, BAD_SUFFIX },
		{ "10m", 0, UINT64_MAX, BAD_SUFFIX },
		{ "1g", 0, UINT64_MAX, BAD_SUFFIX },
		{ "1E", 0, UINT64_MAX, NOT_NUMBER },
		{ "1%", 0, UINT64_MAX, NOT_NUMBER },
		{ "0", 1, UINT64_MAX, "must be at least 1" },
		{ "9", 10, UINT64_MAX, "too small" },
		{ "11", 0, 10, TOO_LARGE },
		{ "1k", 0, 999, TOO_LARGE },
	};

	for (size_t i = 0; i < NELEM(cases); i++) {
		uint64_t v = 12345;
		const char *err = NULL;
		int rc = numparse_count(cases[i].in, cases[i].min, cases[i].max, &v, &err);

		CHECKF(rc == -1, "'%s' accepted as %llu", cases[i].in, (unsigned long long)v);
		CHECKF(err != NULL && strcmp(err, cases[i].msg) == 0, "'%s': got '%s', want '%s'",
		       cases[i].in, err ? err : "(null)", cases[i].msg);
		CHECKF(v == 12345, "'%s' wrote the output on error", cases[i].in);
	}
}

static void test_count_bounds_are_inclusive(void)
{
	uint64_t v;
	const char *err;

	CHECK(numparse_count("1", 1, 10, &v, &err) == 0 && v == 1);
	CHECK(numparse_count("10", 1, 10, &v, &err) == 0 && v == 10);
	CHECK(numparse_count("5", 5, 5, &v, &err) == 0 && v == 5);
	CHECK(numparse_count("4", 5, 5, &v, &err) == -1);
	CHECK(numparse_count("6", 5, 5, &v, &err) == -1);
}

static void test_count_null_input_is_empty(void)
{
	uint64_t v;
	const char *err = NULL;

	CHECK(numparse_count(NULL, 0, 10, &v, &err) == -1);
	CHECK(err != NULL && strcmp(err, "empty") == 0);
	CHECK(numparse_count("7", 0, 10, &v, NULL) == 0 && v == 7);
	CHECK(numparse_count("x", 0, 10, &v, NULL) == -1);
}

/* A count with thousands of digits or a huge exponent stays well defined. */
static void test_count_long_inputs(void)
{
	static char buf[5000];
	uint64_t v = 0;
	const char *err;

	memset(buf, '0', sizeof buf - 2);
	buf[sizeof buf - 2] = '9';
	CHECK(numparse_count(buf, 0, UINT64_MAX, &v, &err) == 0 && v == 9);
	buf[0] = '1';
	CHECK(numparse_count(buf, 0, UINT64_MAX, &v, &err) == -1);
	CHECK(strcmp(err, TOO_LARGE) == 0);
	memset(buf, '0', sizeof buf - 1);
	buf[0] = '.';
	buf[sizeof buf - 2] = '1';
	CHECK(numparse_count(buf, 0, UINT64_MAX, &v, &err) == -1);
	CHECK(strcmp(err, NOT_WHOLE) == 0);
}

struct rate_ok {
	const char *in;
	double want;
};

static void test_rate_accepts(void)
{
	/* Short decimals are one correctly rounded division: exact equality holds. */
	static const struct rate_ok cases[] = {
		{ "1e-4", 1e-4 },
		{ "0.0001", 1e-4 },
		{ "0.01%", 1e-4 },
		{ "1%", 0.01 },
		{ ".01", 0.01 },
		{ "0.5", 0.5 },
		{ "5e-1", 0.5 },
		{ "50%", 0.5 },
		{ "99.9%", 0.999 },
		{ "0.999999", 0.999999 },
		{ "1E-4", 1e-4 },
		{ "1e-04", 1e-4 },
		{ "0.1e-2%", 1e-5 },
		{ "100e-4", 0.01 },
		{ "00.0100", 0.01 },
		{ "0.3", 0.3 },
	};

	for (size_t i = 0; i < NELEM(cases); i++) {
		double p = -1;
		const char *err = "unset";
		int rc = numparse_rate(cases[i].in, &p, &err);

		CHECKF(rc == 0, "'%s' rejected: %s", cases[i].in, err ? err : "(null)");
		CHECKF(p == cases[i].want, "'%s' gave %.17g", cases[i].in, p);
		CHECKF(err == NULL, "'%s' left errstr set", cases[i].in);
	}
}

/* Long inputs are rounded, not exact: within a relative 1e-15 is plenty. */
static void test_rate_long_mantissa(void)
{
	double p = 0;
	const char *err;

	CHECK(numparse_rate("0.12345678901234567890123456789", &p, &err) == 0);
	CHECKF(p > 0.123456789012345 && p < 0.123456789012346, "%.17g", p);
	CHECK(numparse_rate("123456789012345678901234567890e-31", &p, &err) == 0);
	CHECKF(p > 0.0123456789012345 && p < 0.0123456789012346, "%.17g", p);
	CHECK(numparse_rate("1e-300", &p, &err) == 0);
	CHECKF(p > 0.999999999999999e-300 && p < 1.000000000000001e-300, "%.17g", p);
	CHECK(numparse_rate("2.3e-308", &p, &err) == 0 && p >= DBL_MIN);
}

/* Below DBL_MIN a rate is subnormal or zero: refused, not rounded to 0. */
static void test_rate_tiny_is_too_small(void)
{
	static const char *cases[] = { "2.2e-308", "1e-320", "1e-400", "1e-99999999999999999999" };
	double p = -7;
	const char *err = NULL;

	for (size_t i = 0; i < NELEM(cases); i++) {
		CHECKF(numparse_rate(cases[i], &p, &err) == -1, "'%s' accepted", cases[i]);
		CHECKF(err != NULL && strcmp(err, "too small") == 0, "'%s': %s", cases[i], err);
	}
	CHECK(p == -7);
}

struct rate_bad {
	const char *in;
	const char *msg;
};

static void test_rate_rejects(void)
{
	static const struct rate_bad cases[] = {
		{ "", "empty" },
		{ "0", RANGE },
		{ "0.0", RANGE },
		{ "0%", RANGE },
		{ "1", RANGE },
		{ "1.0", RANGE },
		{ "100%", RANGE },
		{ "0.99999999999999999999", RANGE },
		{ "-0.1", RANGE },
		{ "-0", RANGE },
		{ "1.5", RANGE },
		{ "1e400", RANGE },
		{ "nan", NOT_NUMBER },
		{ "NaN", NOT_NUMBER },
		{ "inf", NOT_NUMBER },
		{ "infinity", NOT_NUMBER },
		{ "0x1p-4", NOT_NUMBER },
		{ "abc", NOT_NUMBER },
		{ "0.1x", NOT_NUMBER },
		{ "0,1", NOT_NUMBER },
		{ " 0.1", NOT_NUMBER },
		{ "0.1 ", NOT_NUMBER },
		{ "+0.1", NOT_NUMBER },
		{ "%", NOT_NUMBER },
		{ "1%%", NOT_NUMBER },
		{ "1%x", NOT_NUMBER },
		{ ".", NOT_NUMBER },
		{ "1e", NOT_NUMBER },
		{ "1e-", NOT_NUMBER },
		{ "1k", NOT_NUMBER },
	};

	for (size_t i = 0; i < NELEM(cases); i++) {
		double p = -7;
		const char *err = NULL;
		int rc = numparse_rate(cases[i].in, &p, &err);

		CHECKF(rc == -1, "'%s' accepted as %.17g", cases[i].in, p);
		CHECKF(err != NULL && strcmp(err, cases[i].msg) == 0, "'%s': got '%s', want '%s'",
		       cases[i].in, err ? err : "(null)", cases[i].msg);
		CHECKF(p == -7, "'%s' wrote the output on error", cases[i].in);
	}
}

/*
 * The locale's decimal point is never consulted. Try a few locales that use
 * a comma; where none is installed the test still checks the C locale.
 */
static void test_rate_ignores_locale(void)
{
	static const char *names[] = { "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "C.UTF-8" };
	double p = 0;
	uint64_t v = 0;
	const char *err;

	for (size_t i = 0; i < NELEM(names); i++)
		if (setlocale(LC_NUMERIC, names[i]) != NULL)
			break;
	CHECK(numparse_rate("0.25", &p, &err) == 0 && p == 0.25);
	CHECK(numparse_rate("0,25", &p, &err) == -1);
	CHECK(numparse_count("2.5k", 0, UINT64_MAX, &v, &err) == 0 && v == 2500);
	setlocale(LC_NUMERIC, "C");
}

static void test_hex_key_accepts(void)
{
	static const unsigned char want[16] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	};
	unsigned char key[16];
	const char *err = "unset";

	CHECK(numparse_hex_key("00112233445566778899aabbccddeeff", key, &err) == 0);
	CHECK(memcmp(key, want, 16) == 0 && err == NULL);
	CHECK(numparse_hex_key("00112233445566778899AABBCCDDEEFF", key, &err) == 0);
	CHECK(memcmp(key, want, 16) == 0);
	CHECK(numparse_hex_key("00112233445566778899aAbBcCdDeEfF", key, &err) == 0);
	CHECK(memcmp(key, want, 16) == 0);
}

static void test_hex_key_rejects(void)
{
	static const char *cases[] = {
		"",
		"0",
		"00112233445566778899aabbccddeef",   /* 31 digits */
		"00112233445566778899aabbccddeeff0", /* 33 digits */
		"0x112233445566778899aabbccddeeff",
		"00112233445566778899aabbccddeefg",
		" 00112233445566778899aabbccddeeff",
		"00112233445566778899aabbccddeeff ",
		"00112233445566778899aabbccddeeff\n",
		"00112233-4455-6677-8899-aabbccddeeff",
		"001122334455667788 9aabbccddeeff",
	};

	for (size_t i = 0; i < NELEM(cases); i++) {
		unsigned char key[16];
		const char *err = NULL;

		memset(key, 0x5a, sizeof key);
		CHECKF(numparse_hex_key(cases[i], key, &err) == -1, "'%s' accepted", cases[i]);
		CHECKF(err != NULL && strcmp(err, BAD_KEY) == 0, "'%s': got '%s'", cases[i],
		       err ? err : "(null)");
		CHECKF(key[0] == 0x5a && key[15] == 0x5a, "'%s' wrote the key on error", cases[i]);
	}
}

static void test_hex_key_null_input(void)
{
	unsigned char key[16];
	const char *err = NULL;

	CHECK(numparse_hex_key(NULL, key, &err) == -1 && err != NULL);
}

static void test_duration(void)
{
	uint64_t v;
	const char *why;

	CHECK(numparse_duration("90s", 1, UINT64_MAX, &v, &why) == 0 && v == 90);
	CHECK(numparse_duration("10m", 1, UINT64_MAX, &v, &why) == 0 && v == 600);
	CHECK(numparse_duration("24h", 1, UINT64_MAX, &v, &why) == 0 && v == 86400);
	CHECK(numparse_duration("7d", 1, UINT64_MAX, &v, &why) == 0 && v == 604800);
	CHECK(numparse_duration("10", 1, UINT64_MAX, &v, &why) < 0);
	/* compound and fractional, as systemd and Go write them (issue 37) */
	CHECK(numparse_duration("1h30m", 1, UINT64_MAX, &v, &why) == 0 && v == 5400);
	CHECK(numparse_duration("1.5h", 1, UINT64_MAX, &v, &why) == 0 && v == 5400);
	CHECK(numparse_duration("1w", 1, UINT64_MAX, &v, &why) == 0 && v == 604800);
	CHECK(numparse_duration("1w2d3h4m5s", 1, UINT64_MAX, &v, &why) == 0 &&
	      v == 604800 + 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
	CHECK(numparse_duration(".5m", 1, UINT64_MAX, &v, &why) == 0 && v == 30);
	CHECK(numparse_duration("0.0078125w", 1, UINT64_MAX, &v, &why) == 0 && v == 4725);
	CHECK(numparse_duration("2.50000000000000000000m", 1, UINT64_MAX, &v, &why) == 0 &&
	      v == 150);
	CHECK(numparse_duration("1.5s", 1, UINT64_MAX, &v, &why) < 0 &&
	      strcmp(why, "not a whole number of seconds") == 0);
	CHECK(numparse_duration("0.0000000000001w", 1, UINT64_MAX, &v, &why) < 0 &&
	      strcmp(why, "not a whole number of seconds") == 0);
	CHECK(numparse_duration("30m1h", 1, UINT64_MAX, &v, &why) < 0 &&
	      strncmp(why, "units out of order", 18) == 0);
	CHECK(numparse_duration("1m1m", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("1.h", 1, UINT64_MAX, &v, &why) < 0 &&
	      strcmp(why, NUMPARSE_DURATION_SHAPE) == 0);
	CHECK(numparse_duration(".h", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("1h30", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("1H", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("1w1w", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("40000000000000w", 1, UINT64_MAX, &v, &why) < 0 &&
	      strcmp(why, "too large") == 0);
	CHECK(numparse_duration("18446744073709551615s1", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("1d18446744073709551615s", 1, UINT64_MAX, &v, &why) < 0 &&
	      strcmp(why, "too large") == 0);
	CHECK(numparse_duration("18446744073709551615s", 1, UINT64_MAX, &v, &why) == 0 &&
	      v == UINT64_MAX);
	CHECK(numparse_duration("10M", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("s", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("5ss", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("0s", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("99999999999999999999d", 1, UINT64_MAX, &v, &why) < 0);
	CHECK(numparse_duration("300000000000000000d", 1, UINT64_MAX, &v, &why) < 0);
}

static int time_of(const char *s, uint64_t *ms)
{
	const char *why;

	return numparse_time(s, strlen(s), ms, &why);
}

static void test_time(void)
{
	uint64_t v;

	CHECK(time_of("0", &v) == 0 && v == 0);
	CHECK(time_of("1764074096", &v) == 0 && v == UINT64_C(1764074096000));
	CHECK(time_of("1764074096.25", &v) == 0 && v == UINT64_C(1764074096250));
	CHECK(time_of("1764074096.9999", &v) == 0 && v == UINT64_C(1764074096999));
	/* date -u -d 2026-11-25T12:34:56Z +%s gives 1795610096 */
	CHECK(time_of("2026-11-25T12:34:56Z", &v) == 0 && v == UINT64_C(1795610096000));
	CHECK(time_of("2026-11-25t12:34:56z", &v) == 0 && v == UINT64_C(1795610096000));
	CHECK(time_of("2026-11-25T13:34:56.5+01:00", &v) == 0 && v == UINT64_C(1795610096500));
	CHECK(time_of("2026-11-25T11:04:56-01:30", &v) == 0 && v == UINT64_C(1795610096000));
	CHECK(time_of("1970-01-01T00:00:00Z", &v) == 0 && v == 0);
	CHECK(time_of("2024-02-29T00:00:00Z", &v) == 0 && v == UINT64_C(1709164800000));
	CHECK(time_of("2016-12-31T23:59:60Z", &v) == 0 && v == UINT64_C(1483228799999));
	CHECK(time_of("2023-02-29T00:00:00Z", &v) < 0);
	CHECK(time_of("1969-12-31T23:59:59Z", &v) < 0);
	CHECK(time_of("2026-11-25T12:34:56", &v) < 0);
	CHECK(time_of("2026-11-25 12:34:56Z", &v) < 0);
	CHECK(time_of("2026-11-25T24:00:00Z", &v) < 0);
	CHECK(time_of("2026-11-25T12:34:56.Z", &v) < 0);
	CHECK(time_of("2026-11-25T12:34:56+1:00", &v) < 0);
	CHECK(time_of("-5", &v) < 0);
	CHECK(time_of("12x", &v) < 0);
	CHECK(time_of("1.", &v) < 0);
	CHECK(time_of("", &v) < 0);
	CHECK(time_of("99999999999999999999", &v) < 0);
	CHECK(numparse_time("17640740961", 10, &v, NULL) == 0 && v == UINT64_C(1764074096000));
}

void suite_numparse(void)
{
	unit_run("numparse: durations are terms of w, d, h, m, s, largest first, in whole seconds", test_duration);
	unit_run("numparse: times are Unix seconds or RFC 3339, to the millisecond", test_time);
	unit_run("numparse: counts are exact, with exponents and SI suffixes", test_count_accepts);
	unit_run("numparse: bad counts are rejected with the reason", test_count_rejects);
	unit_run("numparse: count bounds are inclusive", test_count_bounds_are_inclusive);
	unit_run("numparse: a NULL count is empty and errstr may be NULL", test_count_null_input_is_empty);
	unit_run("numparse: very long counts neither overflow nor lose digits", test_count_long_inputs);
	unit_run("numparse: rates accept decimals, exponents and percentages", test_rate_accepts);
	unit_run("numparse: long rate mantissas and far exponents are rounded", test_rate_long_mantissa);
	unit_run("numparse: a rate below the smallest normal double is too small", test_rate_tiny_is_too_small);
	unit_run("numparse: rates outside (0, 1) or not numbers are rejected", test_rate_rejects);
	unit_run("numparse: the locale's decimal point is not consulted", test_rate_ignores_locale);
	unit_run("numparse: hex keys take 32 digits of either case", test_hex_key_accepts);
	unit_run("numparse: hex keys of any other shape are rejected", test_hex_key_rejects);
	unit_run("numparse: a NULL hex key is rejected", test_hex_key_null_input);
}
