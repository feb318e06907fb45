/* SPDX-License-Identifier: MIT */
/*
 * bytes.h - integers in file headers: little-endian, written and read
 * byte by byte, never as a struct image, so a file is the same bytes on
 * every host. Shared by the readers and writers of bftools' own files
 * (format.c, sketch.c); small enough to be inline.
 *
 * Not installed: a library-internal header.
 */
#ifndef BFTOOLS_BYTES_H
#define BFTOOLS_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The low len bytes of v at p, least significant first. */
static inline void bytes_put_le(unsigned char *p, uint64_t v, unsigned len)
{
	for (unsigned i = 0; i < len; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t bytes_get_le(const unsigned char *p, unsigned len)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < len; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* An IEEE 754 binary64 by its bits, little-endian like the integers. */
static inline void bytes_put_double(unsigned char *p, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof bits);
	bytes_put_le(p, bits, 8);
}

static inline double bytes_get_double(const unsigned char *p)
{
	uint64_t bits = bytes_get_le(p, 8);
	double d;

	memcpy(&d, &bits, sizeof d);
	return d;
}

/* Whether p[0..len) are all zero: reserved fields must be. */
static inline int bytes_all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

#endif
