/* SPDX-License-Identifier: MIT */
/*
 * test_crc.c - crc.h's CRC-32 against zlib's crc32, the definition the
 * gzip trailer is checked with.
 *
 * The folding path takes 512 bytes and more, 256 at a time, and finishes
 * the tail with libdeflate: every length from 0 to 2100 (each tail length
 * and the edges around 512), at source and destination offsets that are
 * not aligned, from initial CRCs 0 and not 0, and a few MiB, with the SIMD
 * path on and off. crc_copy must copy exactly its bytes: those just past
 * the destination stay as they were. Data from a fixed-seed splitmix64.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crc.h"
#include "unit.h"

#define SMALL_MAX 2100
#define BIG ((size_t)3 << 20)
#define GUARD 64

static unsigned char *random_bytes(size_t n, uint64_t seed)
{
	unsigned char *p = malloc(n);

	for (size_t i = 0; p != NULL && i < n; i++)
		p[i] = (unsigned char)unit_splitmix64(&seed);
	return p;
}

/* crc_update and crc_copy of src[0..n) from crc against zlib; dst has n + GUARD bytes of room. */
static int agrees(const unsigned char *src, size_t n, uint32_t crc, unsigned char *dst)
{
	uint32_t want = (uint32_t)crc32(crc, src, (uInt)n);
	int ok;

	memset(dst, 0xa5, n + GUARD);
	ok = crc_update(crc, src, n) == want && crc_copy(dst, src, n, crc) == want && memcmp(dst, src, n) == 0;
	for (size_t i = n; ok && i < n + GUARD; i++)
		ok = dst[i] == 0xa5;
	return ok;
}

static void every_length_agrees(int simd)
{
	unsigned char *src = random_bytes(SMALL_MAX + 8, 71), *dst = malloc(SMALL_MAX + 8 + GUARD);

	crc_simd_enable(simd);
	CHECK(src != NULL && dst != NULL);
	for (size_t n = 0; n <= SMALL_MAX; n++)
		for (size_t off = 0; off < 4; off++) {
			uint32_t from = off % 2 ? 0 : 0x9e3779b9u + (uint32_t)n;

			CHECKF(agrees(src + off, n, from, dst + 3 - off), "simd %d: n %zu, offset %zu", simd, n, off);
		}
	crc_simd_enable(1);
	free(src);
	free(dst);
}

static void lengths_agree_with_simd(void) { every_length_agrees(1); }
static void lengths_agree_without_simd(void) { every_length_agrees(0); }

/* Megabytes, in one call and in pieces chained through the CRC (as gzindex and pgzip chain them). */
static void megabytes_agree_whole_and_chained(void)
{
	unsigned char *src = random_bytes(BIG + 1, 72), *dst = malloc(BIG + 1 + GUARD);
	uint32_t want, chained = 0;

	CHECK(src != NULL && dst != NULL);
	want = (uint32_t)crc32(0, src, (uInt)(BIG + 1));
	CHECK(agrees(src, BIG + 1, 0, dst));
	for (size_t off = 0, len = 65535; off < BIG + 1; off += len) {
		len = BIG + 1 - off < 65535 ? BIG + 1 - off : 65535;
		chained = crc_copy(dst + off, src + off, len, chained);
	}
	CHECK(chained == want && memcmp(dst, src, BIG + 1) == 0);
	CHECK(crc_update(crc_update(0, src, BIG / 2), src + BIG / 2, BIG / 2 + 1) == want);
	/* zeros, where every fold of a zero block is zero: only the initial value carries */
	memset(src, 0, BIG);
	CHECK(crc_update(0, src, BIG) == (uint32_t)crc32(0, src, (uInt)BIG));
	free(src);
	free(dst);
}

static void names_its_path(void)
{
	const char *impl = crc_impl();

	CHECK(strcmp(impl, "vpclmulqdq") == 0 || strcmp(impl, "libdeflate") == 0);
	crc_simd_enable(0);
	CHECK(strcmp(crc_impl(), "libdeflate") == 0);
	crc_simd_enable(1);
	CHECK(strcmp(crc_impl(), impl) == 0);
	printf("# crc: %s here\n", impl);
}

void suite_crc(void)
{
	unit_run("crc: every length 0..2100 at unaligned offsets equals zlib's crc32 (SIMD where there is one)",
		 lengths_agree_with_simd);
	unit_run("crc: every length 0..2100 at unaligned offsets equals zlib's crc32 (portable path)",
		 lengths_agree_without_simd);
	unit_run("crc: megabytes, whole and chained in stored-block pieces, equal zlib's crc32",
		 megabytes_agree_whole_and_chained);
	unit_run("crc: names the path it takes, and the portable one when SIMD is off", names_its_path);
}
