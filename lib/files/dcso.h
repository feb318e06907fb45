/* SPDX-License-Identifier: MIT */
/*
 * dcso.h - the DCSO bloom filter format, so that filters made by DCSO's
 * `bloom` tool (github.com/DCSO/bloom; flor in Python and fleur in C share
 * the format) work with bftools, and bftools can make filters for them.
 * Byte layout, hashing and sizing are drawn in dcso.c and man/bf.5.
 *
 * A DCSO filter is loaded into a one-stage cascade (growth 0) whose stage
 * has layout FILTER_DCSO and hash FILTER_FNV1, no flags and no key:
 *
 *   params.probe_bits   the file's m, the bits probed (any 1..2^46)
 *   params.m            probe_bits rounded up to a multiple of 512: the bit
 *                       array as allocated; the bits past probe_bits stay 0
 *   params.capacity     the file's n;  params.target_p the file's p
 *   params.k            the file's k (1..64; more is refused)
 *   cascade newest_keys the file's N: keys that set at least one new bit,
 *                       as cascade_test_and_add counts them (cascade_add on
 *                       a fixed filter does not count: use test-and-add to
 *                       keep N as DCSO's tools do); the stage's insertions
 *                       are set to N on loading too
 *
 * The free-form data DCSO files may carry after the bits is read (a gzip
 * member to its end, so its CRC is checked) and kept in the cascade
 * (dcso_data), with whether the file was gzipped (dcso_gzip), so that
 * dcso_save writes the filter back as it came.
 *
 * What the format lacks, and bftools' own format has: the hash has no key,
 * so anyone can compute which keys collide and pollute or probe a filter
 * whose contents they can influence; nothing checks the bytes of a plain
 * file (a gzip file has gzip's CRC-32, nothing more); and the header
 * fields are not cross-checked by the reference reader. This module
 * validates what it can (version, k, m, n, p, the length of the bits, no
 * bit set past m).
 *
 * The library never prints: failures return NULL/-1 with a static message
 * in *errstr.
 */
#ifndef BFTOOLS_DCSO_H
#define BFTOOLS_DCSO_H

#include <stddef.h>
#include <stdint.h>

#include "cascade.h"
#include "layout_dcso.h"	/* the probe rule, dcso_fnv1_64 */
#include "filter.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DCSO_HEADER_LEN 48u
#define DCSO_VERSION 1u

/* Bytes dcso_sniff reads at most to tell a DCSO filter from anything else. */
#define DCSO_SNIFF_MAX ((size_t)64 << 10)

/*
 * Whether the first len bytes of a file open a DCSO filter: 1 yes, 0 no,
 * -1 cannot tell yet (more bytes needed). A DCSO filter starts with its
 * version word, 01 00 00 00 00 00 00 00, or is a gzip member whose content
 * starts so.
 */
int dcso_detect(const unsigned char *start, size_t len);

/*
 * Read the start of fd into buf (cap bytes; at most DCSO_SNIFF_MAX are
 * read) until dcso_detect can tell or the file ends: *len bytes were read,
 * *eof says whether the file ended. Returns 1 (a DCSO filter), 0 (not),
 * or -1 with *errstr when reading fails.
 */
int dcso_sniff(int fd, unsigned char *buf, size_t cap, size_t *len, int *eof,
	       const char **errstr);

/*
 * Load a DCSO filter, plain or gzipped, from fd whose first len bytes were
 * already read into start (eof: and nothing follows them). Returns a
 * one-stage cascade, or NULL with *errstr.
 */
struct cascade *dcso_load(int fd, const unsigned char *start, size_t len, int eof,
			  const char **errstr);

/*
 * The params of a new, empty DCSO filter for n keys at rate p, sized as
 * the reference does: m = ceil(-n ln p / (ln 2)^2), k = ceil(m ln 2 / n).
 * Returns 0, or -1 with *errstr (k above 64, m above 2^46, bad n or p).
 */
int dcso_params(uint64_t n, double p, struct filter_params *params, const char **errstr);

/*
 * Write c, a cascade holding one FILTER_DCSO stage, to fd in the DCSO
 * format: byte for byte what the reference writes for the same filter
 * (its dcso_data after the bits), gzipped when gzip is set. Returns 0, or
 * -1 with *errstr. Does not fsync or close fd.
 */
int dcso_save(const struct cascade *c, int fd, int gzip, const char **errstr);

/* dcso_save to path atomically (see atomic.h). Returns 0, or -1 with *errstr. */
int dcso_save_path(const struct cascade *c, const char *path, int gzip, const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
