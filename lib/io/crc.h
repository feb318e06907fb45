/* SPDX-License-Identifier: MIT */
/*
 * crc.h - the CRC-32 of gzip (and zlib's crc32), at the speed of memory,
 * alone or made while copying. Private to lib/ (gzindex.c, pgzip.c and the
 * unit tests).
 *
 * Why: loading a full 1 GiB filter is a copy of its stored blocks into
 * fresh memory and a CRC-32 of all of it (issue 33). libdeflate's CRC
 * (~15 GB/s a core with 128-bit PCLMULQDQ) was a fifth of the load, and a
 * second pass over what was just written. Where the CPU has VPCLMULQDQ
 * with AVX-512, the bytes are folded 256 at a time in four 512-bit
 * registers as they are copied, one pass; elsewhere it is libdeflate's
 * CRC of each 16 KiB right after copying it, while it is in cache.
 */
#ifndef BFTOOLS_CRC_H
#define BFTOOLS_CRC_H

#include <stddef.h>
#include <stdint.h>

/* crc extended by p[0..n): zlib's crc32(crc, p, n) (0 starts a CRC). */
uint32_t crc_update(uint32_t crc, const void *p, size_t n);

/* Copies src[0..n) to dst (which must not overlap it) and returns crc_update(crc, src, n). */
uint32_t crc_copy(void *dst, const void *src, size_t n, uint32_t crc);

/* Tests: 0 uses the portable path even where the CPU has the SIMD one. */
void crc_simd_enable(int on);

/* "vpclmulqdq" when the SIMD path is used here, else "libdeflate". */
const char *crc_impl(void);

#endif
