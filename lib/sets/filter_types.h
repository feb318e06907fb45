/* SPDX-License-Identifier: MIT */
/*
 * filter_types.h - a filter's data: its layouts and hashes, the
 * parameters that define it (the file header's), and the struct itself.
 * No functions: the core (filter.h) and each layout (layout.h) both read
 * these, and neither may include the other's header for them.
 */
#ifndef BFTOOLS_FILTER_TYPES_H
#define BFTOOLS_FILTER_TYPES_H

#include <stdint.h>

#include "siphash.h"

#ifdef __cplusplus
extern "C" {
#endif

enum filter_layout {
	FILTER_BLOCKED = 1,
	FILTER_CLASSIC = 2,
	FILTER_COUNTING = 3,	/* classic probes over 4-bit counters */
	/*
	 * A filter read from or written as a DCSO bloom file (dcso.h): its own
	 * FNV-1 probes modulo probe_bits; only with FILTER_FNV1, no flags.
	 * Never an id in a bftools file, hence a value apart from theirs.
	 */
	FILTER_DCSO = 16,
};

enum filter_hash {
	FILTER_SIPHASH_2_4 = 1,	/* SipHash-2-4-128 */
	FILTER_SIPHASH_1_3 = 2,	/* SipHash-1-3-128, the default */
	FILTER_FNV1 = 16,	/* FNV-1 64, no key: FILTER_DCSO only, never on disk */
};

/* Key-normalisation flags, recorded in the file and applied by every reader. */
#define FILTER_FOLD_CASE 0x1u	/* ASCII A-Z folded to a-z before hashing */
/*
 * The key is kept outside the file (a key file): the file stores only its
 * fingerprint, so publishing the filter does not publish the key.
 */
#define FILTER_KEY_EXTERNAL 0x2u
#define FILTER_FLAGS_KNOWN (FILTER_FOLD_CASE | FILTER_KEY_EXTERNAL)

#define FILTER_BLOCK_BITS 512u
#define FILTER_K_MAX 64u
/* 2^46 bits = 8 TiB of filter: far beyond any machine, far below overflow. */
#define FILTER_M_MAX (UINT64_C(1) << 46)

/* Everything that defines a filter's shape and meaning (the file header). */
struct filter_params {
	enum filter_layout layout;
	enum filter_hash hash;
	uint32_t flags;		/* FILTER_FOLD_CASE ... */
	uint32_t k;		/* probes per key, 1..FILTER_K_MAX */
	uint64_t m;		/* positions (bits, or counters), multiple of FILTER_BLOCK_BITS */
	uint64_t capacity;	/* distinct keys it was sized for */
	double target_p;	/* false-positive rate it was sized for */
	unsigned char key[16];	/* SipHash key; all zero while an external key is not supplied */
	/*
	 * filter_key_fingerprint(key). filter_new computes it from the key,
	 * except for a key kept outside and not yet supplied (all zero), whose
	 * fingerprint the caller (the file) gives.
	 */
	uint64_t fingerprint;
	/*
	 * FILTER_DCSO only (0 otherwise): the bits probed, the DCSO file's m,
	 * m - 511 .. m. m stays a multiple of 512 (the array as allocated);
	 * the bits from probe_bits on are never set.
	 */
	uint64_t probe_bits;
};

/* A block of a staged filter: its first word's index in the array, and its words (filter_staged_blocks). */
struct filter_block {
	uint64_t base;
	uint64_t words[FILTER_BLOCK_BITS / 64];
};

struct staged;		/* staged.h */
struct filter {
	struct filter_params params;
	uint64_t insertions;	/* keys added, repeats included */
	uint64_t removals;	/* counting: keys removed (not those found absent) */
	uint64_t *words;	/* filter_array_bytes / 8 words */
	struct siphash_key sipkey;
	/*
	 * blocked and big: FILTER_BACKED_HEAD words of state (keys made ready
	 * so far; whether the array is dense: 1 once huge pages are asked for
	 * and spans backed whole, 2 while one thread makes it so), then a bit
	 * per FILTER_BACK_SPAN of words known backed by memory; else NULL
	 */
	uint64_t *backed;
	/*
	 * A fresh big blocked filter's first blocks, kept in a table rather
	 * than in pages of words until it goes dense or the array is needed
	 * (staged.h, filter_stage); NULL when never staged.
	 */
	struct staged *staged;
};

/*
 * A blocked filter of FILTER_READY_MIN bytes or more is made ready for its
 * adds by the hashing thread (filter_ready_hashed), its pages backed a
 * FILTER_BACK_SPAN at a time.
 */
#define FILTER_READY_MIN (UINT64_C(64) << 20)
#define FILTER_BACK_SPAN (UINT64_C(2) << 20)
#define FILTER_BACKED_HEAD 2
/*
 * Keys per span, on average, from which such a filter is dense (512: a
 * key per 4 KiB page, so never more than a page a key; for a staged one,
 * blocks in its table, staged.h): before,
 * each key costs the 4 KiB page it lands in (1,000 keys into a filter
 * sized for 1e9: 4 MB, not the 2.1 GB that backing a 2 MiB span per key
 * cost); from then on, huge pages and whole spans backed ahead of the
 * adds, as every span will be written soon anyway.
 */
#define FILTER_DENSE_KEYS_PER_SPAN 512

#ifdef __cplusplus
}
#endif

#endif
