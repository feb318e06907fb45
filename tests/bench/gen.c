/* SPDX-License-Identifier: MIT */
/*
 * gen.c - the benchmark's deterministic input: URL-like lines.
 *
 *   gen corpus N            N lines, about half of them repeats
 *   gen keys FIRST COUNT STRIDE
 *                           the URLs of ids FIRST, FIRST+STRIDE, ... (COUNT
 *                           of them, all distinct): pattern lists and the
 *                           keys of a sparse filter
 *   gen numbers COUNT       the decimal numbers 0 .. COUNT-1: short distinct
 *                           keys to fill a big filter quickly
 *   gen zipf N DISTINCT S SEED
 *                           N lines, the URLs of ids 0 .. DISTINCT-1 drawn
 *                           with probability proportional to 1/(id+1)^S
 *                           (Zipf's law, skew S), from splitmix64 seeded
 *                           with SEED: bftop's tests, accuracy and bench
 *   gen zipfcounts N DISTINCT S SEED
 *                           the exact counts of that stream, as uniq -c
 *                           prints them, in id order (not sorted)
 *
 * The corpus: line j is either the next fresh id (with probability 1/2,
 * and always for the first line) or a repeat of an id drawn uniformly from
 * all the ids issued so far, so repeats reach back across the whole stream
 * (no locality for a cache to exploit) and about N/2 lines are distinct.
 * Fresh ids are 0, 1, 2, ... in order, so `gen keys 0 D 1` lists exactly
 * the distinct lines of a corpus with D distinct lines, and ids at or past
 * D never occur in it.
 *
 * An id's URL is a pure function of the id: scheme, host, two path words
 * from a hash of the id, then the id itself in base 36 (XOR a constant, a
 * bijection) and a suffix that starts with a character base 36 never uses.
 * So distinct ids give distinct lines, and lines average about 60 bytes.
 *
 * The random numbers are splitmix64 from a fixed seed: the same N gives the
 * same bytes on every machine and every run. Deliberately absent: any
 * locale, stdio line buffering, and anything beyond C11 and POSIX.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED UINT64_C(0x62667475726c7331)
#define ID_MASK UINT64_C(0x5f3759df9e3779b9)
#define LINE_MAX_BYTES 256

static const char *const schemes[4] = { "https://", "https://", "https://", "http://" };
static const char *const subdomains[8] = {
	"www.", "", "m.", "cdn.", "www.", "api.", "blog.", "shop.",
};
static const char *const words[64] = {
	"alpha", "news", "shop", "media", "cloud", "data", "blue", "north",
	"river", "stone", "green", "city", "open", "fast", "star", "home",
	"market", "travel", "sport", "music", "video", "photo", "mail", "bank",
	"health", "food", "games", "books", "tech", "daily", "world", "local",
	"press", "radio", "store", "forum", "wiki", "maps", "jobs", "cars",
	"auto", "farm", "garden", "school", "learn", "pets", "art", "design",
	"film", "style", "kids", "money", "coin", "trade", "build", "craft",
	"sea", "sky", "sun", "moon", "fire", "ice", "wind", "rock",
};
static const char *const tlds[8] = {
	".com", ".org", ".net", ".de", ".io", ".co.uk", ".fr", ".info",
};
static const char *const suffixes[8] = {
	".html", "", "?ref=home", ".php", "/", "?page=2", ".htm", "?utm_source=feed",
};

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *state)
{
	*state += UINT64_C(0x9e3779b97f4a7c15);
	return mix(*state);
}

/*
 * A number below bound (bound > 0) from the top bits of r, by the high half
 * of r * bound; 32 x 32 bits are plenty for ids below 2^32 and keep it C11.
 */
static uint64_t below(uint64_t r, uint64_t bound)
{
	if (bound <= UINT32_MAX)
		return ((r >> 32) * bound) >> 32;
	return (r >> 1) % bound;
}

static size_t put(char *at, const char *s)
{
	size_t n = strlen(s);

	memcpy(at, s, n);
	return n;
}

static size_t put_base36(char *at, uint64_t v)
{
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
		v /= 36;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		at[i] = tmp[n - 1 - i];
	return n;
}

static size_t put_decimal(char *at, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		at[i] = tmp[n - 1 - i];
	return n;
}

/* "/YYYY/MM", a year 2010..2025 and a month, as news sites put in paths. */
static size_t put_date(char *at, uint64_t r)
{
	unsigned year = 2010 + (unsigned)(r & 15), month = 1 + (unsigned)((r >> 4) % 12);

	at[0] = '/';
	at[1] = '2';
	at[2] = '0';
	at[3] = (char)('0' + year % 100 / 10);
	at[4] = (char)('0' + year % 10);
	at[5] = '/';
	at[6] = (char)('0' + month / 10);
	at[7] = (char)('0' + month % 10);
	return 8;
}

/* Write the URL of id at `at` (room for LINE_MAX_BYTES), newline included. */
static size_t url(char *at, uint64_t id)
{
	uint64_t h = mix(id ^ SEED);
	uint64_t host = h & 0xfff; /* 4096 hosts: many URLs share one */
	size_t n = 0;

	n += put(at + n, schemes[(h >> 12) & 3]);
	n += put(at + n, subdomains[host & 7]);
	n += put(at + n, words[(host >> 3) & 63]);
	n += put(at + n, words[(host >> 6) & 63]);
	n += put(at + n, tlds[(host >> 9) & 7]);
	at[n++] = '/';
	n += put(at + n, words[(h >> 14) & 63]);
	at[n++] = '/';
	n += put(at + n, words[(h >> 20) & 63]);
	n += put_date(at + n, h >> 29);
	at[n++] = '/';
	n += put_base36(at + n, (id ^ ID_MASK) & UINT64_C(0x0000ffffffffffff));
	n += put(at + n, suffixes[(h >> 37) & 7]);
	at[n++] = '\n';
	return n;
}

struct out {
	char buf[1 << 20];
	size_t used;
};

static int flush(struct out *o)
{
	if (o->used != 0 && fwrite(o->buf, 1, o->used, stdout) != o->used)
		return -1;
	o->used = 0;
	return 0;
}

/* Make room for one more line; -1 on a write error. */
static int room(struct out *o)
{
	if (sizeof o->buf - o->used >= LINE_MAX_BYTES)
		return 0;
	return flush(o);
}

static int corpus(struct out *o, uint64_t lines)
{
	uint64_t state = SEED, fresh = 0;

	for (uint64_t j = 0; j < lines; j++) {
		uint64_t r = splitmix64(&state);
		uint64_t id = fresh;

		if (fresh != 0 && (r & 1) == 0)
			id = below(r, fresh); /* the top bits: independent of bit 0 */
		else
			fresh++;
		if (room(o) != 0)
			return -1;
		o->used += url(o->buf + o->used, id);
	}
	return 0;
}

static int keys(struct out *o, uint64_t first, uint64_t count, uint64_t stride)
{
	for (uint64_t i = 0; i < count; i++) {
		if (room(o) != 0)
			return -1;
		o->used += url(o->buf + o->used, first + i * stride);
	}
	return 0;
}

static int numbers(struct out *o, uint64_t count)
{
	for (uint64_t i = 0; i < count; i++) {
		if (room(o) != 0)
			return -1;
		o->used += put_decimal(o->buf + o->used, i);
		o->buf[o->used++] = '\n';
	}
	return 0;
}

/*
 * Zipf by inversion: the cumulative weights of ids 0..distinct-1 in a
 * table (8 bytes an id), then for each line a uniform draw scaled to the
 * total and a binary search for the first id whose cumulative weight
 * reaches it.
 */
struct zipf {
	double *cdf, sum;
	uint64_t distinct, state;
};

static void zipf_init(struct zipf *z, uint64_t distinct, double skew, uint64_t seed)
{
	z->cdf = malloc((distinct ? distinct : 1) * sizeof *z->cdf);
	if (z->cdf == NULL || distinct == 0 || !(skew >= 0.0)) {
		fprintf(stderr, "gen: zipf: no memory, no ids, or a bad skew\n");
		exit(2);
	}
	z->sum = 0.0;
	for (uint64_t r = 0; r < distinct; r++)
		z->cdf[r] = (z->sum += pow((double)r + 1.0, -skew));
	z->distinct = distinct;
	z->state = seed;
}

static uint64_t zipf_next(struct zipf *z)
{
	double u = (double)(splitmix64(&z->state) >> 11) / 9007199254740992.0 * z->sum;
	uint64_t lo = 0, hi = z->distinct - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int zipf(struct out *o, uint64_t lines, uint64_t distinct, double skew, uint64_t seed)
{
	struct zipf z;

	zipf_init(&z, distinct, skew, seed);
	for (uint64_t j = 0; j < lines; j++) {
		if (room(o) != 0)
			return -1;
		o->used += url(o->buf + o->used, zipf_next(&z));
	}
	free(z.cdf);
	return 0;
}

/*
 * The exact counts of the same stream, as `sort | uniq -c` would give
 * them ("%7llu URL", in id order, ids that never occur left out), from
 * a counter per id instead of the stream: for checks at sizes where
 * sorting the stream would take longer than the check.
 */
static int zipf_counts(struct out *o, uint64_t lines, uint64_t distinct, double skew, uint64_t seed)
{
	struct zipf z;
	uint64_t *count = calloc(distinct ? distinct : 1, sizeof *count);

	zipf_init(&z, distinct, skew, seed);
	if (count == NULL) {
		fprintf(stderr, "gen: zipfcounts: no memory\n");
		exit(2);
	}
	for (uint64_t j = 0; j < lines; j++)
		count[zipf_next(&z)]++;
	for (uint64_t id = 0; id < distinct; id++) {
		if (count[id] == 0)
			continue;
		if (room(o) != 0)
			return -1;
		o->used += (size_t)snprintf(o->buf + o->used, 32, "%7llu ", (unsigned long long)count[id]);
		o->used += url(o->buf + o->used, id);
	}
	free(count);
	free(z.cdf);
	return 0;
}

static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "gen: not a number: %s\n", s);
		exit(2);
	}
	return (uint64_t)v;
}

static int run(int argc, char **argv, struct out *o)
{
	if (argc == 3 && strcmp(argv[1], "corpus") == 0)
		return corpus(o, number(argv[2]));
	if (argc == 5 && strcmp(argv[1], "keys") == 0)
		return keys(o, number(argv[2]), number(argv[3]), number(argv[4]));
	if (argc == 3 && strcmp(argv[1], "numbers") == 0)
		return numbers(o, number(argv[2]));
	if (argc == 6 && strcmp(argv[1], "zipf") == 0)
		return zipf(o, number(argv[2]), number(argv[3]), strtod(argv[4], NULL), number(argv[5]));
	if (argc == 6 && strcmp(argv[1], "zipfcounts") == 0)
		return zipf_counts(o, number(argv[2]), number(argv[3]), strtod(argv[4], NULL), number(argv[5]));
	fprintf(stderr, "usage: gen corpus N | gen keys FIRST COUNT STRIDE | gen numbers COUNT | gen zipf N DISTINCT S SEED | gen zipfcounts N DISTINCT S SEED\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct out o;

	if (run(argc, argv, &o) != 0 || flush(&o) != 0 || fclose(stdout) != 0) {
		perror("gen: write error");
		return 1;
	}
	return 0;
}
