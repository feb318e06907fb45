/* SPDX-License-Identifier: MIT */
/*
 * test_siphash.c - SipHash against the reference known-answer vectors, plus
 * the properties bftools relies on: the variants differ, alignment does not
 * matter, and the key matters.
 *
 * The vectors live in tests/data/siphash-vectors.txt (key 00..0f,
 * message i = bytes 00..i-1, output as little-endian out[0] then out[1]).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "siphash.h"
#include "unit.h"

#define MIN_VECTORS 64

struct vector_counts {
	unsigned sip64, sip128;
};

static const unsigned char key_bytes[16] = {
	0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7,
	0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf,
};

static void put_le64(unsigned char *p, uint64_t w)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(w >> (8 * i));
}

/* Parse exactly 2*n hex digits into n bytes; -1 on any other length or junk. */
static int parse_hex(const char *hex, unsigned char *out, size_t n)
{
	if (strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return 0;
}

/* Our output for vector i of the given width, as the reference's bytes. */
static void compute(size_t width, size_t i, unsigned char got[16])
{
	struct siphash_key key;
	unsigned char msg[256];
	uint64_t out[2];

	for (size_t j = 0; j < i; j++)
		msg[j] = (unsigned char)j;
	siphash_key_from_bytes(&key, key_bytes);
	if (width == 8) {
		put_le64(got, siphash_2_4_64(&key, msg, i));
		return;
	}
	siphash_2_4_128(&key, msg, i, out);
	put_le64(got, out[0]);
	put_le64(got + 8, out[1]);
}

/* Check one data line; returns 0 when it matched, -1 (after a message) if not. */
static int check_line(const char *line, struct vector_counts *n)
{
	char kind[32], hex[80];
	unsigned char want[16], got[16];
	unsigned i;
	size_t width;

	if (sscanf(line, "%31s %u %79s", kind, &i, hex) != 3 || i >= 256) {
		printf("#   malformed vector line: %s", line);
		return -1;
	}
	width = strcmp(kind, "vectors_sip64") == 0 ? 8 : 16;
	if (width == 16 && strcmp(kind, "vectors_sip128") != 0) {
		printf("#   unknown vector kind: %s\n", kind);
		return -1;
	}
	if (parse_hex(hex, want, width) != 0) {
		printf("#   bad hex in: %s", line);
		return -1;
	}
	compute(width, i, got);
	if (memcmp(got, want, width) != 0) {
		printf("#   mismatch: %s", line);
		return -1;
	}
	if (width == 8)
		n->sip64++;
	else
		n->sip128++;
	return 0;
}

static void test_reference_vectors(void)
{
	char path[4096], line[256];
	struct vector_counts n = { 0, 0 };
	int bad = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/siphash-vectors.txt", unit_testdata_dir());
	f = fopen(path, "r");
	CHECKF(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (check_line(line, &n) != 0)
			bad++;
	}
	fclose(f);
	CHECKF(bad == 0, "%d vector(s) failed", bad);
	CHECKF(n.sip64 >= MIN_VECTORS, "only %u sip64 vectors", n.sip64);
	CHECKF(n.sip128 >= MIN_VECTORS, "only %u sip128 vectors", n.sip128);
}

/* The 64-bit output is not simply the first half of the 128-bit one. */
static void test_64_and_128_differ(void)
{
	struct siphash_key key;
	uint64_t out[2];

	siphash_key_from_bytes(&key, key_bytes);
	siphash_2_4_128(&key, "hello", 5, out);
	CHECK(siphash_2_4_64(&key, "hello", 5) != out[0]);
}

static void test_1_3_differs_from_2_4(void)
{
	static const char *msgs[] = { "", "a", "hello, world", "0123456789abcdef0" };
	struct siphash_key key;

	siphash_key_from_bytes(&key, key_bytes);
	for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
		uint64_t a[2], b[2];
		size_t len = strlen(msgs[i]);

		siphash_2_4_128(&key, msgs[i], len, a);
		siphash_1_3_128(&key, msgs[i], len, b);
		CHECKF(a[0] != b[0] && a[1] != b[1], "message %zu", i);
	}
}

/* Hash lengths 0..40 copied to offsets 0..15 of a buffer: all must agree. */
static void test_alignment_does_not_matter(void)
{
	unsigned char src[40], buf[64];
	struct siphash_key key;

	siphash_key_from_bytes(&key, key_bytes);
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(0xa5 ^ (i * 7));
	for (size_t len = 0; len <= sizeof src; len++) {
		uint64_t want24[2], want13[2], got[2];

		siphash_2_4_128(&key, src, len, want24);
		siphash_1_3_128(&key, src, len, want13);
		for (size_t off = 1; off < 16; off++) {
			memcpy(buf + off, src, len);
			siphash_2_4_128(&key, buf + off, len, got);
			CHECKF(got[0] == want24[0] && got[1] == want24[1], "2-4 len %zu off %zu", len, off);
			siphash_1_3_128(&key, buf + off, len, got);
			CHECKF(got[0] == want13[0] && got[1] == want13[1], "1-3 len %zu off %zu", len, off);
			CHECK(siphash_2_4_64(&key, buf + off, len) == siphash_2_4_64(&key, src, len));
		}
	}
}

/* Flipping any single key bit changes both output words of both variants. */
static void test_one_key_bit_changes_output(void)
{
	struct siphash_key key, flipped;
	const char msg[] = "the same line";
	uint64_t base24[2], base13[2], got[2];

	siphash_key_from_bytes(&key, key_bytes);
	siphash_2_4_128(&key, msg, sizeof msg - 1, base24);
	siphash_1_3_128(&key, msg, sizeof msg - 1, base13);
	for (unsigned bit = 0; bit < 128; bit++) {
		unsigned char kb[16];

		memcpy(kb, key_bytes, sizeof kb);
		kb[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		siphash_key_from_bytes(&flipped, kb);
		siphash_2_4_128(&flipped, msg, sizeof msg - 1, got);
		CHECKF(got[0] != base24[0] && got[1] != base24[1], "2-4 key bit %u", bit);
		siphash_1_3_128(&flipped, msg, sizeof msg - 1, got);
		CHECKF(got[0] != base13[0] && got[1] != base13[1], "1-3 key bit %u", bit);
	}
}

/* Key bytes are read as two little-endian words, whatever the host. */
static void test_key_bytes_are_little_endian(void)
{
	struct siphash_key key;

	siphash_key_from_bytes(&key, key_bytes);
	CHECK(key.k0 == UINT64_C(0x0706050403020100));
	CHECK(key.k1 == UINT64_C(0x0f0e0d0c0b0a0908));
}

/* len mod 256 goes into the last word, so a trailing NUL is not ignored. */
static void test_trailing_zero_byte_changes_output(void)
{
	static const unsigned char zeros[300];
	struct siphash_key key;

	siphash_key_from_bytes(&key, key_bytes);
	for (size_t len = 0; len < 20; len++)
		CHECKF(siphash_2_4_64(&key, zeros, len) != siphash_2_4_64(&key, zeros, len + 1),
		       "len %zu", len);
	CHECK(siphash_2_4_64(&key, zeros, 8) != siphash_2_4_64(&key, zeros, 264));
}

static void test_empty_message_may_be_null(void)
{
	struct siphash_key key;
	uint64_t a[2], b[2];

	siphash_key_from_bytes(&key, key_bytes);
	siphash_1_3_128(&key, NULL, 0, a);
	siphash_1_3_128(&key, "", 0, b);
	CHECK(a[0] == b[0] && a[1] == b[1]);
	CHECK(siphash_2_4_64(&key, NULL, 0) == siphash_2_4_64(&key, "x", 0));
}

void suite_siphash(void)
{
	unit_run("siphash: 2-4-64 and 2-4-128 match every reference vector", test_reference_vectors);
	unit_run("siphash: 64-bit output is not the first word of 128-bit", test_64_and_128_differ);
	unit_run("siphash: 1-3 differs from 2-4 on the same key and message", test_1_3_differs_from_2_4);
	unit_run("siphash: result does not depend on message alignment", test_alignment_does_not_matter);
	unit_run("siphash: flipping one key bit changes the output", test_one_key_bit_changes_output);
	unit_run("siphash: key bytes are read as little-endian words", test_key_bytes_are_little_endian);
	unit_run("siphash: an extra zero byte changes the output", test_trailing_zero_byte_changes_output);
	unit_run("siphash: the empty message may be passed as NULL", test_empty_message_may_be_null);
}
