/* SPDX-License-Identifier: MIT */
/*
 * numparse.c - checked parsing of counts, rates and keys typed by users.
 *
 * One small scanner reads the decimal shape both numbers share:
 *
 *   number   = [ "-" ] mantissa [ exponent ]
 *   mantissa = digits [ "." [ digits ] ] | "." digits
 *   exponent = ( "e" | "E" ) [ "+" | "-" ] digits
 *
 * then a count may add one SI suffix (k K M G T P) and a rate one "%".
 * The whole string must be consumed: no blanks, no leading "+" (rejected as
 * "not a number", to keep one spelling per value), no hex, no "inf"/"nan".
 * Only the ASCII characters above are looked at, never the locale, so a
 * program that called setlocale() still reads "0.5" the same way.
 *
 * Counts are computed exactly in integers, never through double: the
 * mantissa's significant digits D and a decimal exponent E with value
 * D * 10^E, trailing zeros folded into E. E < 0 then means "not a whole
 * number"; otherwise D is multiplied up with overflow checks. Exponents are
 * saturated while scanning, so "1e400" or a million-digit exponent is a
 * plain "too large", never signed overflow.
 *
 * Rates go through double, where rounding is harmless: up to 19 significant
 * digits are kept, and a value like "0.0001" is a single correctly rounded
 * division (1 / 10^4), so it equals the C literal 1e-4 exactly.
 *
 * Durations (window lengths) are terms of a number and a unit, w d h m s,
 * largest first ("1h30m", "1.5h", "1w"), added exactly in integers to
 * whole seconds. Times (a window's clock, read from input fields) are Unix
 * seconds or RFC 3339 date-times, to the millisecond, in integers: the
 * civil date becomes days since 1970 by Hinnant's days_from_civil, so no
 * timezone database or locale is consulted (mktime would consult both).
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "numparse.h"

/* Beyond this magnitude an exponent only ever means overflow or underflow. */
#define EXP_LIMIT INT64_C(1000000)

/* The most decimal digits a uint64_t can need (UINT64_MAX has 20). */
#define UINT64_DIGITS 20

/* The most significant digits a rate keeps: 10^19 - 1 fits in a uint64_t. */
#define RATE_DIGITS 19

struct decimal {
	int negative;
	const char *ip; /* integer-part digits */
	size_t ilen;
	const char *fp; /* fraction-part digits */
	size_t flen;
	int64_t exp; /* from the exponent part; stops growing past EXP_LIMIT */
};

/* Significant digits D and decimal exponent E: the value is D * 10^E. */
struct digits {
	size_t first; /* index of the first nonzero digit */
	size_t count; /* how many significant digits; 0 for the value zero */
	int64_t scale;
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t span_digits(const char *s)
{
	size_t n = 0;

	while (is_digit(s[n]))
		n++;
	return n;
}

static void set_err(const char **errstr, const char *msg)
{
	if (errstr)
		*errstr = msg;
}

/* Reads "[eE][+-]digits" at s; returns the end, or NULL if malformed. */
static const char *scan_exponent(const char *s, int64_t *exp)
{
	int negative = 0;
	int64_t e = 0;

	*exp = 0;
	if (*s != 'e' && *s != 'E')
		return s;
	s++;
	if (*s == '+' || *s == '-')
		negative = *s++ == '-';
	if (!is_digit(*s))
		return NULL;
	for (; is_digit(*s); s++)
		if (e < EXP_LIMIT)
			e = e * 10 + (*s - '0');
	*exp = negative ? -e : e;
	return s;
}

/* Reads a number in the grammar above; returns its end, or NULL if none. */
static const char *scan_decimal(const char *s, struct decimal *d)
{
	d->negative = *s == '-';
	if (d->negative)
		s++;
	d->ip = s;
	d->ilen = span_digits(s);
	s += d->ilen;
	d->fp = s;
	d->flen = 0;
	if (*s == '.') {
		d->fp = ++s;
		d->flen = span_digits(s);
		s += d->flen;
	}
	if (d->ilen == 0 && d->flen == 0)
		return NULL;
	return scan_exponent(s, &d->exp);
}

static char digit_at(const struct decimal *d, size_t k)
{
	return k < d->ilen ? d->ip[k] : d->fp[k - d->ilen];
}

/* Strips leading and trailing zeros; trailing ones move into the scale. */
static void significant_digits(const struct decimal *d, struct digits *g)
{
	size_t n = d->ilen + d->flen;
	size_t last = n;

	g->first = 0;
	while (g->first < n && digit_at(d, g->first) == '0')
		g->first++;
	while (last > g->first && digit_at(d, last - 1) == '0')
		last--;
	g->count = last - g->first;
	/* String lengths fit in int64_t on every system POSIX allows. */
	g->scale = d->exp - (int64_t)d->flen + (int64_t)(n - last);
}

static int64_t suffix_power(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 3;
	case 'M':
		return 6;
	case 'G':
		return 9;
	case 'T':
		return 12;
	case 'P':
		return 15;
	default:
		return -1;
	}
}

/* Reads the optional SI suffix at end and checks nothing follows it. */
static int count_suffix(const char *end, int64_t *power, const char **errstr)
{
	*power = 0;
	if (*end == '\0')
		return 0;
	*power = suffix_power(*end);
	if (*power >= 0 && end[1] == '\0')
		return 0;
	if (end[1] == '\0' && is_letter(*end))
		set_err(errstr, "unknown suffix (use k, M, G, T or P)");
	else
		set_err(errstr, "not a number");
	return -1;
}

/* D * 10^scale as a uint64_t, for a whole number (scale >= 0). */
static int digits_value(const struct decimal *d, const struct digits *g,
			uint64_t *out, const char **errstr)
{
	uint64_t v = 0;

	if (g->count > UINT64_DIGITS || g->scale > UINT64_DIGITS)
		goto too_large;
	for (size_t k = g->first; k < g->first + g->count; k++) {
		unsigned dig = (unsigned)(digit_at(d, k) - '0');

		if (v > (UINT64_MAX - dig) / 10)
			goto too_large;
		v = v * 10 + dig;
	}
	for (int64_t i = 0; i < g->scale; i++) {
		if (v > UINT64_MAX / 10)
			goto too_large;
		v *= 10;
	}
	*out = v;
	return 0;
too_large:
	set_err(errstr, "too large");
	return -1;
}

static int check_bounds(uint64_t v, uint64_t min, uint64_t max, const char **errstr)
{
	if (v > max) {
		set_err(errstr, "too large");
		return -1;
	}
	if (v >= min)
		return 0;
	set_err(errstr, min == 1 ? "must be at least 1" : "too small");
	return -1;
}

int numparse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   const char **errstr)
{
	struct decimal d;
	struct digits g;
	const char *end;
	int64_t power;
	uint64_t v = 0;

	if (s == NULL || *s == '\0') {
		set_err(errstr, "empty");
		return -1;
	}
	end = scan_decimal(s, &d);
	if (end == NULL) {
		set_err(errstr, "not a number");
		return -1;
	}
	if (count_suffix(end, &power, errstr) != 0)
		return -1;
	if (d.negative) {
		set_err(errstr, "must not be negative");
		return -1;
	}
	significant_digits(&d, &g);
	g.scale += power;
	if (g.count > 0 && g.scale < 0) {
		set_err(errstr, "not a whole number");
		return -1;
	}
	if (g.count > 0 && digits_value(&d, &g, &v, errstr) != 0)
		return -1;
	if (check_bounds(v, min, max, errstr) != 0)
		return -1;
	*out = v;
	set_err(errstr, NULL);
	return 0;
}

/*
 * m * 10^e in double. Powers of ten up to 10^22 are exact doubles, so for
 * m <= 2^53 and |e| <= 22 the result is correctly rounded. Beyond that the
 * division is split so that 10^-e itself never overflows to infinity before
 * the true value would underflow.
 */
static double scale10(uint64_t m, int64_t e)
{
	static const double exact[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	const int64_t nexact = (int64_t)(sizeof exact / sizeof exact[0]);
	double x = (double)m;

	if (e >= 0)
		return e < nexact ? x * exact[e] : x * pow(10.0, (double)e);
	if (-e < nexact)
		return x / exact[-e];
	if (-e <= DBL_MAX_10_EXP)
		return x / pow(10.0, (double)-e);
	return x / 1e300 / pow(10.0, (double)(-e - 300));
}

/* The first RATE_DIGITS significant digits; the rest are dropped into scale. */
static double digits_double(const struct decimal *d, const struct digits *g)
{
	size_t keep = g->count < RATE_DIGITS ? g->count : RATE_DIGITS;
	uint64_t m = 0;

	for (size_t k = g->first; k < g->first + keep; k++)
		m = m * 10 + (uint64_t)(digit_at(d, k) - '0');
	return scale10(m, g->scale + (int64_t)(g->count - keep));
}

int numparse_rate(const char *s, double *out, const char **errstr)
{
	struct decimal d;
	struct digits g;
	const char *end;
	double p;

	if (s == NULL || *s == '\0') {
		set_err(errstr, "empty");
		return -1;
	}
	end = scan_decimal(s, &d);
	if (end == NULL || (end[0] != '\0' && !(end[0] == '%' && end[1] == '\0'))) {
		set_err(errstr, "not a number");
		return -1;
	}
	significant_digits(&d, &g);
	if (*end == '%')
		g.scale -= 2;
	p = g.count > 0 ? digits_double(&d, &g) : 0.0;
	if (d.negative || g.count == 0 || !(p < 1.0)) {
		set_err(errstr, "must be between 0 and 1 (exclusive)");
		return -1;
	}
	if (p < DBL_MIN) {
		set_err(errstr, "too small");
		return -1;
	}
	*out = p;
	set_err(errstr, NULL);
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int numparse_hex_key(const char *s, unsigned char key[16], const char **errstr)
{
	size_t n = 0;

	/* Validate everything first so that key is untouched on error. */
	while (s != NULL && n < 33 && hex_value(s[n]) >= 0)
		n++;
	if (n != 32 || s[32] != '\0') {
		set_err(errstr, "must be 32 hexadecimal digits");
		return -1;
	}
	for (size_t i = 0; i < 16; i++)
		key[i] = (unsigned char)(hex_value(s[2 * i]) << 4 | hex_value(s[2 * i + 1]));
	set_err(errstr, NULL);
	return 0;
}

/* ---- durations and times --------------------------------------------- */

/* The units of a duration, largest first, and their seconds. */
static const char duration_units[] = "wdhms";
static const uint64_t duration_scale[] = { 604800, 86400, 3600, 60, 1 };

/*
 * More fraction digits than this (trailing zeros aside) never make whole
 * seconds: a week is 2^7 3^3 5^2 7 seconds, so a fraction of k digits that
 * does not end in 0 gives whole seconds only when k <= 7. Twelve keeps
 * fraction * scale below 10^12 * 2^20 < 2^60.
 */
#define DURATION_FRACTION_DIGITS 12

static int duration_error(const char **errstr, const char *msg)
{
	set_err(errstr, msg);
	return -1;
}

/* The digits at s as *v, their count in *n; -1 on overflow. */
static int duration_digits(const char *s, uint64_t *v, size_t *n)
{
	for (*v = 0, *n = 0; is_digit(s[*n]); (*n)++) {
		uint64_t digit = (uint64_t)(s[*n] - '0');

		if (*v > (UINT64_MAX - digit) / 10)
			return -1;
		*v = 10 * *v + digit;
	}
	return 0;
}

/* whole + frac / pow10 units of scale seconds, added to *total, exactly. */
static int duration_add(uint64_t whole, uint64_t frac, uint64_t pow10, uint64_t scale,
			uint64_t *total, const char **errstr)
{
	uint64_t part;

	if ((frac * scale) % pow10 != 0)
		return duration_error(errstr, "not a whole number of seconds");
	part = frac * scale / pow10;	/* below scale */
	if (whole > (UINT64_MAX - part) / scale || whole * scale + part > UINT64_MAX - *total)
		return duration_error(errstr, "too large");
	*total += whole * scale + part;
	return 0;
}

/*
 * One term, number then unit, at s: number = digits [ "." digits ] or
 * "." digits. *unit is the index of the largest unit still allowed. Adds
 * the term's seconds to *total; returns its length, or -1 with *errstr.
 */
static int64_t duration_term(const char *s, size_t *unit, uint64_t *total,
			     const char **errstr)
{
	uint64_t whole, frac = 0, pow10 = 1;
	size_t ni, nf = 0, keep, len;
	const char *u;

	if (duration_digits(s, &whole, &ni) < 0)
		return duration_error(errstr, "too large");
	if (s[ni] == '.' && (nf = span_digits(s + ni + 1)) == 0)
		return duration_error(errstr, NUMPARSE_DURATION_SHAPE);
	len = ni + (nf > 0 ? 1 + nf : 0);
	u = s[len] != '\0' ? strchr(duration_units, s[len]) : NULL;
	if (len == 0 || u == NULL)
		return duration_error(errstr, NUMPARSE_DURATION_SHAPE);
	if ((size_t)(u - duration_units) < *unit)
		return duration_error(errstr, "units out of order (largest first, each once: 1h30m)");
	*unit = (size_t)(u - duration_units) + 1;
	for (keep = nf; keep > 0 && s[ni + keep] == '0'; keep--)
		;
	if (keep > DURATION_FRACTION_DIGITS)
		return duration_error(errstr, "not a whole number of seconds");
	for (size_t k = 1; k <= keep; k++, pow10 *= 10)
		frac = 10 * frac + (uint64_t)(s[ni + k] - '0');
	if (duration_add(whole, frac, pow10, duration_scale[u - duration_units], total, errstr) < 0)
		return -1;
	return (int64_t)len + 1;
}

int numparse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *seconds,
		      const char **errstr)
{
	uint64_t total = 0;
	size_t unit = 0;

	if (s == NULL || *s == '\0')
		return duration_error(errstr, "empty");
	while (*s != '\0') {
		int64_t n = duration_term(s, &unit, &total, errstr);

		if (n < 0)
			return -1;
		s += n;
	}
	if (check_bounds(total, min, max, errstr) != 0)
		return -1;
	*seconds = total;
	set_err(errstr, NULL);
	return 0;
}

/* n digits at s as a number; -1 when any is not a digit. */
static int64_t fixed_digits(const char *s, size_t n)
{
	int64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = 10 * v + (s[i] - '0');
	}
	return v;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The milliseconds of an optional ".digits" at s[*i]; advances *i. */
static int64_t fraction_ms(const char *s, size_t len, size_t *i)
{
	int64_t ms = 0, scale = 100;

	if (*i >= len || s[*i] != '.')
		return 0;
	if (++*i >= len || !is_digit(s[*i]))
		return -1;
	for (; *i < len && is_digit(s[*i]); ++*i, scale /= 10)
		ms += scale * (s[*i] - '0');
	return ms;
}

static int days_in_month(int64_t y, int64_t m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

/* The "+hh:mm", "-hh:mm" or "Z" ending an RFC 3339 time, in seconds east of UTC. */
static int offset_seconds(const char *s, size_t len, int64_t *off)
{
	int64_t hh, mm;

	if (len == 1 && (s[0] == 'Z' || s[0] == 'z')) {
		*off = 0;
		return 0;
	}
	if (len != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':')
		return -1;
	hh = fixed_digits(s + 1, 2);
	mm = fixed_digits(s + 4, 2);
	if (hh < 0 || mm < 0 || hh > 23 || mm > 59)
		return -1;
	*off = (s[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
	return 0;
}

static int rfc3339_ms(const char *s, size_t len, int64_t *out)
{
	int64_t y, mo, d, h, mi, sec, frac, off;
	size_t i = 19;

	if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
	    s[13] != ':' || s[16] != ':')
		return -1;
	y = fixed_digits(s, 4);
	mo = fixed_digits(s + 5, 2);
	d = fixed_digits(s + 8, 2);
	h = fixed_digits(s + 11, 2);
	mi = fixed_digits(s + 14, 2);
	sec = fixed_digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h < 0 || h > 23 ||
	    mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return -1;
	frac = fraction_ms(s, len, &i);
	if (frac < 0 || offset_seconds(s + i, len - i, &off) < 0)
		return -1;
	if (sec == 60) {	/* a leap second: the last instant of its minute */
		sec = 59;
		frac = 999;
	}
	*out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) - off) * 1000 + frac;
	return 0;
}

static int unix_ms(const char *s, size_t len, int64_t *out)
{
	int64_t sec = 0, frac;
	size_t i = 0;

	for (; i < len && is_digit(s[i]); i++) {
		if (sec > INT64_C(1) << 44)	/* past NUMPARSE_TIME_MAX already */
			return -1;
		sec = 10 * sec + (s[i] - '0');
	}
	if (i == 0)
		return -1;
	frac = fraction_ms(s, len, &i);
	if (frac < 0 || i != len)
		return -1;
	*out = sec * 1000 + frac;
	return 0;
}

int numparse_time(const char *s, size_t len, uint64_t *ms, const char **errstr)
{
	int64_t v;

	if (len == 0)
		return set_err(errstr, "empty"), -1;
	if ((len > 4 && s[4] == '-' ? rfc3339_ms(s, len, &v) : unix_ms(s, len, &v)) < 0)
		return set_err(errstr, "not a time (Unix seconds or RFC 3339)"), -1;
	if (v < 0 || (uint64_t)v >= NUMPARSE_TIME_MAX)
		return set_err(errstr, "time out of range"), -1;
	*ms = (uint64_t)v;
	set_err(errstr, NULL);
	return 0;
}
