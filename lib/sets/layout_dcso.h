/* SPDX-License-Identifier: MIT */
/*
 * layout_dcso.h - the DCSO bloom layout's probe rule (layout_dcso.c),
 * for the file reader and writer (dcso.h) and for tests.
 */
#ifndef BFTOOLS_LAYOUT_DCSO_H
#define BFTOOLS_LAYOUT_DCSO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FNV-1 64 of len bytes (no key): what DCSO hashes keys with. */
uint64_t dcso_fnv1_64(const void *data, size_t len);

/* The k bit positions (each < probe_bits) DCSO's sequence gives key bytes. */
void dcso_probe_positions(const void *key, size_t len, uint64_t probe_bits, uint32_t k,
			  uint64_t *positions);

#ifdef __cplusplus
}
#endif

#endif
