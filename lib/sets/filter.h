/* SPDX-License-Identifier: MIT */
/*
 * filter.h - the Bloom filter core: m bits (or counters), k probes, four
 * layouts.
 *
 * A filter is an array of m positions (m a multiple of 512), bits or, for
 * the counting layout, 4-bit counters, and k probes per key. Each key is
 * hashed once with keyed SipHash-128; the probe positions are derived
 * from the two 64-bit halves by enhanced double hashing (Dillinger &
 * Manolios 2004), so no other hashing is ever done.
 *
 *   classic  the textbook layout: k positions anywhere in the m bits.
 *   blocked  all k positions of a key fall inside one 512-bit (64-byte,
 *            one cache line) block chosen by the first hash half, so a
 *            lookup costs one memory miss instead of k (Putze, Sanders &
 *            Singler 2007). It needs a little more memory for the same
 *            false-positive rate; sizing.h accounts for that.
 *   dcso     a filter read from, or to be written as, a DCSO bloom file:
 *            keyless FNV-1 and its own probe sequence (dcso.h), for
 *            interoperation only.
 *   counting a counting Bloom filter (Fan, Cao, Almeida & Broder 2000):
 *            classic probing over m 4-bit counters instead of bits, so
 *            keys can be removed. It is sized as classic (m counters
 *            where classic has m bits) and takes 4 bits of memory per
 *            counter, four times classic's. A key is present when all
 *            its counters are non-zero; adding increments them, removing
 *            decrements them; a counter that ever reached 15 stays at 15
 *            (saturated), since it may stand for more than 15 keys. So as
 *            long as only keys that were added are removed, a key added
 *            more often than removed keeps every counter above 0: deletion
 *            introduces no false negative.
 *
 * Bit i of the filter is bit (i % 64) of words[i / 64]; on disk the words
 * are little-endian, so bit i is bit (i % 8) of byte i / 8. Counter i of a
 * counting filter is bits 4 (i % 16) .. 4 (i % 16) + 3 of words[i / 16]:
 * on disk the low nibble of byte i / 2 for even i, the high one for odd i.
 *
 * The add/test calls are batch-shaped: they hash a batch of keys, touch the
 * cache lines they need back to back so the misses overlap, then probe.
 * The library never prints or exits; failures return NULL/-1 and a static
 * message through errstr.
 */
#ifndef BFTOOLS_FILTER_H
#define BFTOOLS_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "filter_types.h"
#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Memory policy. filter_new refuses a bit array that would take the bytes
 * held by live filters past the limit (0, the default, means no limit), so
 * a program can refuse filters bigger than a policy allows before touching
 * memory. When filter_new fails for memory, *errstr is one of these two
 * messages and filter_refused_bytes() tells the size it could not have.
 */
extern const char filter_err_nomem[];	/* mmap failed */
extern const char filter_err_limit[];	/* over the limit */
void filter_set_memory_limit(uint64_t bytes);
uint64_t filter_memory_limit(void);
/* Bytes held by live filters' bit arrays. */
uint64_t filter_memory_in_use(void);
/*
 * Whether bytes more would fit under the limit; if not, records them for
 * filter_refused_bytes. For callers that must check a total up front.
 */
int filter_memory_allows(uint64_t bytes);
uint64_t filter_refused_bytes(void);

/* Check a parameter set; returns 0, or -1 naming the bad field in *errstr. */
int filter_params_check(const struct filter_params *p, const char **errstr);

/*
 * A new, empty filter. The bit array is mapped lazily: pages never touched
 * cost no memory. Returns NULL with *errstr set (bad params, out of memory).
 */
struct filter *filter_new(const struct filter_params *p, const char **errstr);
void filter_free(struct filter *f);

/*
 * Size of the array for params p in bytes: m / 8, or m / 2 for counting
 * (4 bits per counter). 64-bit, for any valid m on any host.
 */
uint64_t filter_array_bytes(const struct filter_params *p);

/* Size of f's array in bytes (filter_array_bytes; it is in memory, so it fits). */
size_t filter_bytes(const struct filter *f);

/* Fill key[] with 16 bytes from getrandom(2). Returns 0 or -1 (errno). */
int filter_random_key(unsigned char key[16]);

/*
 * A 64-bit fingerprint of a key, safe to show: SipHash-2-4-64 under the key
 * of the fixed message "bftools key fingerprint v1". Equal keys give equal
 * fingerprints; the fingerprint reveals nothing usable about the key.
 */
uint64_t filter_key_fingerprint(const unsigned char key[16]);

/* Add n keys (counting: increment each probed counter, saturating at 15). */
void filter_add(struct filter *f, const struct line *keys, size_t n);

/* present[i] = 1 if keys[i] may be in the filter, 0 if surely not. */
void filter_test(const struct filter *f, const struct line *keys, size_t n,
		 unsigned char *present);

/*
 * Test and add in one pass: present[i] says whether keys[i] was (maybe) in
 * the filter before this call, counting the earlier keys of the same batch.
 * Returns how many keys were new. This is what de-duplication needs.
 * A bit filter sets the bits of new keys only (a present key's are set
 * already); a counting filter counts every key, present or not, so that
 * every key added can later be removed, once per time it was added,
 * without touching counters other keys rely on.
 */
size_t filter_test_and_add(struct filter *f, const struct line *keys, size_t n,
			   unsigned char *present);

/*
 * The batch calls split in two, so hashing can run on another thread than
 * probing: filter_hash writes each key's SipHash halves (h1, h2) to
 * h[2i], h[2i+1] and returns 0, or -1 for a DCSO filter (its probes are not
 * derived from SipHash). The _hashed calls take those halves (h may be
 * NULL: then they hash keys themselves) and give the answers of the calls
 * without _hashed. h must come from a filter with the same hash and key.
 */
int filter_hash(const struct filter *f, const struct line *keys, size_t n, uint64_t *h);
void filter_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h, size_t n);
void filter_test_hashed(const struct filter *f, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present);
size_t filter_test_and_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h,
				  size_t n, unsigned char *present);

/*
 * filter_add_hashed for several threads adding to f at once: each ORs its
 * keys' bits in with atomic operations, so the bits are the same whatever
 * the threads and their timing (OR is commutative). It does not count
 * f->insertions (the caller adds the keys once, in one thread) and must
 * not run beside anything else that changes f. h may be NULL. Returns 0,
 * or -1 for a counting filter (an increment is not an OR: use
 * filter_add_hashed on one thread).
 */
int filter_add_shared(struct filter *f, const struct line *keys, const uint64_t *h, size_t n);

/*
 * Get a big blocked filter (FILTER_READY_MIN bytes or more) ready for the
 * adds of these keys (hashes from filter_hash), from another thread than
 * the one adding, while it hashes ahead. Two things a random add into
 * gigabytes would otherwise wait for, one after another:
 *  - memory: such a filter is mapped untouched, and its first adds each
 *    wait for the kernel to clear a fresh 2 MiB page (a few thousand
 *    random keys reach every page). The pages a key lands in are asked
 *    for here, each 2 MiB span once (MADV_POPULATE_WRITE), where the
 *    system has it;
 *  - the miss: each key's block is loaded here, so the adding thread finds
 *    its cache line in the shared cache instead of in memory, behind an
 *    address translation that misses the TLB.
 * It changes no bit, so it may run while another thread adds; a filter of
 * another layout or size is left alone.
 */
/*
 * A big blocked filter about to hold many keys (loaded from a file that
 * says so, say): huge pages from now on, as a dense filter is written
 * everywhere anyway. Otherwise it becomes dense by itself, once its adds
 * pass FILTER_DENSE_KEYS_PER_SPAN a span (filter_ready_hashed). Nothing
 * for other filters.
 */
void filter_expect_dense(struct filter *f);
/*
 * A filter just made, to be added to (not loaded): while a big blocked
 * one holds few keys, the blocks they set are kept in a table rather than
 * in its array's pages (staged.h), every operation on keys and every
 * figure (bits set, rate) answering from there; it goes dense as
 * filter_expect_dense says, or is settled into its array by
 * filter_settle. Nothing for other filters.
 */
void filter_stage(struct filter *f);
/*
 * Before reading or writing f->words other than through the operations
 * above (a save, a merge): a staged filter's blocks written into its
 * array, page by page. The bits do not change, only where they are kept.
 */
void filter_settle(const struct filter *f);

/*
 * A staged filter's blocks, copied and sorted by base, into *blocks (n
 * of them; free it), every other block of the array being zero: 1. Not
 * staged (or no memory for the copies, when it is settled instead): 0,
 * and the array is the filter. For a save that need not settle.
 */
int filter_staged_blocks(const struct filter *f, struct filter_block **blocks, size_t *n);

/*
 * About n adds are coming (the lines of the input files, say): where
 * they would make f dense on their own (FILTER_DENSE_KEYS_PER_SPAN a
 * span, repeats counted as they are there), it is made dense now, before
 * the first: a 4 KiB page faulted for each of the first 670,000 keys of a
 * -n 1e9 filter, then those pages copied into huge pages, cost 20 times
 * the adds themselves where page faults are dear (a virtual machine's
 * shadow page tables: 12 us each). Fewer, or none known: nothing.
 */
void filter_expect_adds(struct filter *f, uint64_t n);

/* FILTER_READY_MIN, FILTER_BACK_SPAN: filter_types.h */
void filter_ready_hashed(const struct filter *f, const uint64_t *h, size_t n);

/*
 * The blocked layout's probes split from the hashing and the block's
 * address, for a caller that probes several blocked filters of one m, k,
 * hash and key with the same keys (a window's generations): a key's block
 * is then at the same word in each, so it is found once, and the caller
 * can prefetch every filter's line before probing any.
 *   filter_blocks_of: base[i] = the first word of key i's block (h from
 *     filter_hash), the same for every blocked filter of f's m.
 *   filter_blocks_test: present[i] = whether key i's bits are all set.
 *   filter_blocks_test_and_add: in order, as filter_test_and_add_hashed
 *     (a repeat later in the batch meets its first copy); returns how
 *     many were new; f->insertions grows by n.
 *   filter_blocks_test_and_set: the same without counting insertions, so
 *     that threads owning disjoint sets of blocks (owners.h) may run it on
 *     one filter at once; the caller counts the keys.
 * f must be blocked.
 */
void filter_blocks_of(const struct filter *f, const uint64_t *h, size_t n, uint64_t *base);
void filter_blocks_test(const struct filter *f, const uint64_t *base, const uint64_t *h,
			size_t n, unsigned char *present);
size_t filter_blocks_test_and_add(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present);
size_t filter_blocks_test_and_set(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present);

/*
 * Remove n keys from a counting filter: each key's k counters are
 * decremented, except those at 15 (saturated: they may stand for more
 * keys than 15 and stay). A key with a counter at 0 was surely never
 * added (or was removed more often than added): it changes nothing and
 * is counted. Returns the number of such keys; f->removals grows by the
 * others. A key never added that tests present (a false positive) cannot
 * be told apart and is removed like the others: removing it takes counts
 * other keys own, so remove only keys that were added. Any layout but
 * counting removes nothing and returns n.
 */
size_t filter_remove(struct filter *f, const struct line *keys, size_t n);

/* The k positions (bit or counter indexes) key probes (for tests and diagnostics). */
void filter_positions(const struct filter *f, struct line key, uint64_t *positions);

/*
 * The fraction of bits set (counting: counters non-zero), estimated from
 * up to samples words spread evenly over the array: cheap enough to call
 * a few times a second on a filter of gigabytes (for progress displays;
 * filter_bits_set is exact).
 */
double filter_sampled_fill(const struct filter *f, uint64_t samples);

/*
 * Number of bits set, or for counting of counters non-zero: the positions
 * a probe finds "set" (a full pass over the array). The fill statistics
 * below read a counting filter's non-zero counters as classic's set bits.
 */
uint64_t filter_bits_set(const struct filter *f);

/* Number of counters at 15 (saturated) in a counting filter; 0 for others. */
uint64_t filter_saturated(const struct filter *f);

/*
 * The false-positive rate of the filter as it is now: the probability that
 * a key never added tests present, computed from the actual fill (per block
 * for the blocked layout).
 */
double filter_current_fpr(const struct filter *f);

/* Estimated number of distinct keys added, from the bits set. */
double filter_estimate_count(const struct filter *f);

/*
 * Every figure above that needs a pass over the array, in one place: what
 * a filter file stores beside its bits (format.h), so that it can be
 * described without them. filter_stats_of makes the passes (the very calls
 * above, so the figures are theirs to the last bit); the others derive
 * from the figures alone.
 */
struct filter_stats {
	uint64_t bits_set;	/* filter_bits_set */
	uint64_t saturated;	/* filter_saturated */
	double rate;		/* filter_current_fpr */
};
void filter_stats_of(const struct filter *f, struct filter_stats *s);
/* filter_estimate_count of a filter of params p whose figures are s. */
double filter_stats_estimate(const struct filter_params *p, const struct filter_stats *s);
/* The positions a probe can reach: m, or a DCSO filter's own m (its array is rounded up). */
uint64_t filter_probed(const struct filter_params *p);

/*
 * Supply the key of a filter whose key is kept outside. Returns 0, or -1
 * with *errstr when the key's fingerprint is not the filter's.
 */
int filter_supply_key(struct filter *f, const unsigned char key[16], const char **errstr);

/*
 * Whether two filters can be combined bit for bit (same layout, m, k, hash,
 * key (compared by fingerprint, so no key file is needed), flags). Returns 1, or 0 with *what naming the first field that
 * differs ("layout", "size", "hashes", "hash function", "key",
 * "normalisation").
 */
int filter_compatible(const struct filter *a, const struct filter *b, const char **what);

#ifdef __cplusplus
}
#endif

#endif
