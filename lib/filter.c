/* SPDX-License-Identifier: MIT */
/*
 * filter.c - the Bloom filter core: probing, batching, fill statistics.
 *
 * One keyed SipHash-128 per key gives two 64-bit halves h1, h2. Every probe
 * position is derived from them, never from another hash:
 *
 *   classic   x = h1 mod m, y = h2 mod m
 *             for i in 0..k-1: probe x; x = (x + y) mod m; y = (y + i) mod m
 *             (enhanced double hashing, Dillinger & Manolios 2004: the i term
 *             keeps the sequence from cycling early when y shares a factor
 *             with m, so no prime m or odd h2 is needed)
 *
 *   blocked   block = floor(h1 * B / 2^64), B = m / 512 blocks ("fastrange":
 *             a multiply instead of a division, uniform for any B)
 *             for i in 0..k-1: probe bit (h2 * C[i]) >> 55 of the block
 *             C[i] = the i-th output of splitmix64 seeded with 0, lowest
 *             bit set (table below). Each probe is a multiplicative hash of
 *             all 64 bits of h2. A linear sequence such as the top bits of
 *             x + i*y would be cheaper, but its top 9 bits depend almost
 *             only on the top bits of x and y: keys sharing a block would
 *             share whole probe patterns, and the measured false-positive
 *             rate at p = 1e-4 came out near 5e-4. The k multiplies are
 *             independent of each other, so they pipeline.
 *
 *   dcso      dcso.c derives the k positions (FNV-1 and DCSO's sequence,
 *             modulo probe_bits, the DCSO file's own m); here they become
 *             words and masks like the others'.
 *
 *   counting  the classic sequence over m 4-bit counters; a probe is the
 *             word holding the counter and the mask of its nibble, so
 *             "set" (non-zero) is tested exactly as a bit is, and only
 *             adding and removing know about counts. Classic probing, not
 *             blocked: a counting filter is four times the memory of a
 *             classic one already, and a 512-counter block (256 bytes, four
 *             cache lines) would lose most of blocked's one-miss speed while
 *             still needing its extra bits; classic keeps the textbook sizing
 *             and estimates (sizing.c), read with counters for bits.
 *             A counter is incremented up to 15 and then stays there: a
 *             saturated counter may stand for more keys than it can count,
 *             so decrementing it could one day make it 0 under a key still
 *             in the filter. Removal decrements the others, and undoes
 *             itself when it meets a 0 (the key was never added): no
 *             counter changes for a key that was surely absent.
 *
 * Batches: a call hashes up to BATCH keys, prefetches every cache line those
 * keys will touch, then probes. The misses of a batch overlap instead of
 * queueing one after another, which is most of the speed of a big filter.
 *
 * Memory comes from an anonymous mmap: untouched pages are never backed, so
 * a filter sized for 1e9 keys costs only what the data actually touches, and
 * big filters ask for transparent huge pages (fewer TLB misses). A big
 * blocked filter can have the pages its next keys land in backed, and
 * their blocks loaded into cache, by the thread that hashed them
 * (filter_ready_hashed), and its tests (those of test-and-add too) run
 * eight probes at a time where the CPU has AVX-512 (blocked_simd.c).
 */
#include "filter.h"

#include "blocked_simd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "dcso.h"
#include "sizing.h"

#define BATCH 32
#define HUGE_PAGE_MIN (UINT64_C(2) << 20)

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
static inline uint64_t mul_high(uint64_t a, uint64_t b)
{
	return (uint64_t)(((u128)a * b) >> 64);
}
#else
static inline uint64_t mul_high(uint64_t a, uint64_t b)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;

	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
#endif

const char filter_err_nomem[] = "cannot allocate memory for the filter";
const char filter_err_limit[] = "filter exceeds the memory limit";

/* Process-wide bookkeeping of bit-array memory (see filter.h). */
static uint64_t memory_limit, memory_in_use, refused_bytes;

void filter_set_memory_limit(uint64_t bytes)
{
	memory_limit = bytes;
}

uint64_t filter_memory_limit(void)
{
	return memory_limit;
}

uint64_t filter_memory_in_use(void)
{
	return memory_in_use;
}

uint64_t filter_refused_bytes(void)
{
	return refused_bytes;
}

int filter_memory_allows(uint64_t bytes)
{
	if (memory_limit == 0 || (bytes <= memory_limit && memory_in_use <= memory_limit - bytes))
		return 1;
	refused_bytes = bytes;
	return 0;
}

/* probe_bits: 0 except for DCSO, whose m is probe_bits rounded up to 512. */
static int probe_bits_fit(const struct filter_params *p)
{
	if (p->layout != FILTER_DCSO)
		return p->probe_bits == 0;
	return p->probe_bits >= 1 && p->probe_bits <= p->m && p->m - p->probe_bits < FILTER_BLOCK_BITS;
}

int filter_params_check(const struct filter_params *p, const char **errstr)
{
	if (p->layout != FILTER_BLOCKED && p->layout != FILTER_CLASSIC &&
	    p->layout != FILTER_COUNTING && p->layout != FILTER_DCSO)
		*errstr = "unknown layout";
	else if (p->hash != FILTER_SIPHASH_2_4 && p->hash != FILTER_SIPHASH_1_3 && p->hash != FILTER_FNV1)
		*errstr = "unknown hash function";
	else if ((p->layout == FILTER_DCSO) != (p->hash == FILTER_FNV1))
		*errstr = "the DCSO layout goes with the FNV-1 hash and nothing else";
	else if (p->flags & ~FILTER_FLAGS_KNOWN)
		*errstr = "unknown key-normalisation flags";
	else if (p->layout == FILTER_DCSO && p->flags != 0)
		*errstr = "a DCSO filter has no key and no key normalisation";
	else if (p->k < 1 || p->k > FILTER_K_MAX)
		*errstr = "number of hashes (k) out of range 1..64";
	else if (p->m < FILTER_BLOCK_BITS || p->m > FILTER_M_MAX)
		*errstr = "size (m) out of range 512..2^46 bits";
	else if (p->m % FILTER_BLOCK_BITS != 0)
		*errstr = "size (m) not a multiple of 512";
	else if (p->capacity < 1)
		*errstr = "capacity must be at least 1";
	else if (!(p->target_p > 0.0 && p->target_p < 1.0))
		*errstr = "target rate out of range (0, 1)";
	else if (!probe_bits_fit(p))
		*errstr = "probed bits not 0, or for DCSO not within the last 512 bits of m";
	else
		return 0;
	return -1;
}

uint64_t filter_array_bytes(const struct filter_params *p)
{
	return p->layout == FILTER_COUNTING ? p->m / 2 : p->m / 8;
}

size_t filter_bytes(const struct filter *f)
{
	return (size_t)filter_array_bytes(&f->params);
}

/* The array's 64-bit words: m / 64 bits, or m / 16 counters (m is a multiple of 512). */
static uint64_t array_words(const struct filter *f)
{
	return filter_array_bytes(&f->params) / 8;
}

static int key_is_unknown(const unsigned char key[16])
{
	static const unsigned char none[16];

	return memcmp(key, none, sizeof none) == 0;
}

/*
 * A zeroed bit array: an anonymous mapping; or, in a build with
 * -DBFTOOLS_FILTER_HEAP=BYTES, heap memory aligned to a cache line for
 * arrays up to BYTES. The fuzz harnesses are built so: AddressSanitizer
 * guards heap blocks with redzones, so a step past a small array is a
 * report, where in a mapping it lands unseen in the rest of the page; and
 * loading a small filter then costs no mmap and munmap. (back_spans'
 * madvise refuses unaligned spans, and then stops asking.)
 */
#ifdef BFTOOLS_FILTER_HEAP
#define ON_HEAP(bytes) ((bytes) <= (uint64_t)(BFTOOLS_FILTER_HEAP))
#else
#define ON_HEAP(bytes) 0
#endif

static void *array_alloc(uint64_t bytes)
{
	void *bits;

	if (ON_HEAP(bytes))
		return posix_memalign(&bits, 64, (size_t)bytes) == 0 ? memset(bits, 0, (size_t)bytes) : NULL;
	bits = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return bits == MAP_FAILED ? NULL : bits;
}

static void array_free(void *bits, uint64_t bytes)
{
	if (ON_HEAP(bytes))
		free(bits);
	else
		munmap(bits, (size_t)bytes);
}

/* The backed-pages bitmap of a filter that filter_ready_hashed backs, else NULL. */
static uint64_t *new_backed_map(const struct filter_params *p, uint64_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	uint64_t spans = (bytes + FILTER_BACK_SPAN - 1) / FILTER_BACK_SPAN;

	if (p->layout == FILTER_BLOCKED && bytes >= FILTER_READY_MIN)
		return calloc((size_t)((spans + 63) / 64), sizeof(uint64_t));	/* NULL: not served */
#endif
	(void)p, (void)bytes;
	return NULL;
}

struct filter *filter_new(const struct filter_params *p, const char **errstr)
{
	struct filter *f;
	void *bits;
	uint64_t bytes;

	if (filter_params_check(p, errstr) < 0)
		return NULL;
	bytes = filter_array_bytes(p);
	if (bytes > SIZE_MAX) {
		*errstr = "filter too large for this machine";
		return NULL;
	}
	if (!filter_memory_allows(bytes)) {
		*errstr = filter_err_limit;
		return NULL;
	}
	f = calloc(1, sizeof *f);
	if (f == NULL) {
		*errstr = strerror(errno);
		return NULL;
	}
	bits = array_alloc(bytes);
	if (bits == NULL) {
		refused_bytes = bytes;
		*errstr = filter_err_nomem;
		free(f);
		return NULL;
	}
	memory_in_use += bytes;
#ifdef MADV_HUGEPAGE
	if (bytes >= HUGE_PAGE_MIN)
		(void)madvise(bits, (size_t)bytes, MADV_HUGEPAGE);
#endif
	f->params = *p;
	/* a key kept outside and not supplied is all zero: keep the file's fingerprint */
	if (!(p->flags & FILTER_KEY_EXTERNAL) || !key_is_unknown(p->key))
		f->params.fingerprint = filter_key_fingerprint(p->key);
	f->words = bits;
	siphash_key_from_bytes(&f->sipkey, p->key);
	f->backed = new_backed_map(p, bytes);
	return f;
}

void filter_free(struct filter *f)
{
	if (f == NULL)
		return;
	if (f->words != NULL) {	/* a shape read by format_open has no bits */
		array_free(f->words, filter_bytes(f));
		memory_in_use -= filter_bytes(f);
	}
	free(f->backed);
	free(f);
}

int filter_random_key(unsigned char key[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t r = getrandom(key + got, 16 - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

uint64_t filter_key_fingerprint(const unsigned char key[16])
{
	static const char message[] = "bftools key fingerprint v1";
	struct siphash_key sk;

	siphash_key_from_bytes(&sk, key);
	return siphash_2_4_64(&sk, message, sizeof message - 1);
}

int filter_supply_key(struct filter *f, const unsigned char key[16], const char **errstr)
{
	if (filter_key_fingerprint(key) != f->params.fingerprint) {
		*errstr = "the key does not match the filter's key fingerprint";
		return -1;
	}
	memcpy(f->params.key, key, sizeof f->params.key);
	siphash_key_from_bytes(&f->sipkey, key);
	return 0;
}

static void hash_key(const struct filter *f, const struct line *key, uint64_t h[2])
{
	if (f->params.hash == FILTER_SIPHASH_2_4)
		siphash_2_4_128(&f->sipkey, key->data, key->len, h);
	else
		siphash_1_3_128(&f->sipkey, key->data, key->len, h);
}

/*
 * Probe positions of one key for the layouts that probe anywhere (classic,
 * counting, DCSO): word indexes and bit masks (counting: the counter's
 * nibble).
 */
struct probes {
	uint64_t word[FILTER_K_MAX];
	uint64_t mask[FILTER_K_MAX];
};

/*
 * A batch's probes. A blocked key is its block's first word, plus either
 * its bits as a mask over the block's 8 words (to add: 8 word operations
 * on one cache line) or, for a batch that is only tested, its SipHash
 * halves, from which the bits are derived as they are tested: the test
 * stops at the first bit clear, so an absent key costs one or two probes
 * on average, not k. The other layouts need their k words and masks, 1 KB
 * a key, kept apart.
 */
struct batch {
	uint64_t base[BATCH];
	_Alignas(64) uint64_t block[BATCH][FILTER_BLOCK_BITS / 64];
	int masked;		/* blocked: block[] holds the masks, else use h */
	const uint64_t *h;	/* blocked: the keys' (h1, h2), 2 per key */
	uint64_t own[2 * BATCH];	/* the hashes, when the caller brought none */
	struct probes pr[BATCH];
};

/* Odd multipliers for the in-block probes (see the file comment). */
static const uint64_t probe_multiplier[FILTER_K_MAX] = {
	UINT64_C(0xe220a8397b1dcdaf), UINT64_C(0x6e789e6aa1b965f5), UINT64_C(0x06c45d188009454f),
	UINT64_C(0xf88bb8a8724c81ed), UINT64_C(0x1b39896a51a8749b), UINT64_C(0x53cb9f0c747ea2eb),
	UINT64_C(0x2c829abe1f4532e1), UINT64_C(0xc584133ac916ab3d), UINT64_C(0x3ee5789041c98ac3),
	UINT64_C(0xf3b8488c368cb0a7), UINT64_C(0x657eecdd3cb13d09), UINT64_C(0xc2d326e0055bdef7),
	UINT64_C(0x8621a03fe0bbdb7b), UINT64_C(0x8e1f7555983aa92f), UINT64_C(0xb54e0f1600cc4d19),
	UINT64_C(0x84bb3f97971d80ab), UINT64_C(0x7d29825c75521255), UINT64_C(0xc3cf17102b7f7f87),
	UINT64_C(0x3466e9a083914f65), UINT64_C(0xd81a8d2b5a4485ad), UINT64_C(0xdb01602b100b9ed7),
	UINT64_C(0xa9038a921825f10d), UINT64_C(0xedf5f1d90dca2f6b), UINT64_C(0x54496ad67bd2634d),
	UINT64_C(0xdd7c01d4f5407269), UINT64_C(0x935e82f1db4c4f7b), UINT64_C(0x69b82ebc92233301),
	UINT64_C(0x40d29eb57de1d511), UINT64_C(0xa2f09dabb45c6317), UINT64_C(0xee521d7a0f4d3873),
	UINT64_C(0xf16952ee72f3454f), UINT64_C(0x377d35dea8e40225), UINT64_C(0x0c7de8064963bab1),
	UINT64_C(0x05582d37111ac529), UINT64_C(0xd254741f599dc6f7), UINT64_C(0x69630f7593d108c3),
	UINT64_C(0x417ef96181daa383), UINT64_C(0x3c3c41a3b43343a1), UINT64_C(0x6e19905dcbe531df),
	UINT64_C(0x4fa9fa7324851729), UINT64_C(0x84eb4454a792922b), UINT64_C(0x134f7096918175cf),
	UINT64_C(0x07dc930b302278a9), UINT64_C(0x12c015a97019e937), UINT64_C(0xcc06c31652ebf439),
	UINT64_C(0xecee65630a691e37), UINT64_C(0x3e84ecb1763e79ad), UINT64_C(0x690ed476743aae49),
	UINT64_C(0x774615d7b1a1f2e1), UINT64_C(0x22b353f04f4f52db), UINT64_C(0xe3ddd86ba71a5eb1),
	UINT64_C(0xdf268adeb6513357), UINT64_C(0x2098eb73d4367d77), UINT64_C(0x03d6845323ce3c71),
	UINT64_C(0xc952c5620043c715), UINT64_C(0x9b196bca844f1705), UINT64_C(0x30260345dd9e0ec1),
	UINT64_C(0xcf448a5882bb9699), UINT64_C(0xf4a578dccbc87657), UINT64_C(0xbfdeaed9a17b3c8f),
	UINT64_C(0xed79402d1d5c5d7b), UINT64_C(0x55f070ab1cbbf171), UINT64_C(0x3e00a34929a88f1d),
	UINT64_C(0xe255b237b8bb18fb),
};

static inline uint64_t blocked_base(const struct filter *f, const uint64_t h[2])
{
	return mul_high(h[0], f->params.m / FILTER_BLOCK_BITS) * 8;
}

static inline uint64_t blocked_bit(const uint64_t h[2], uint32_t i)
{
	return (h[1] * probe_multiplier[i]) >> 55;
}

static void blocked_probes(const struct filter *f, const uint64_t h[2],
			   uint64_t block[FILTER_BLOCK_BITS / 64])
{
	memset(block, 0, FILTER_BLOCK_BITS / 8);
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i);

		block[bit >> 6] |= UINT64_C(1) << (bit & 63);
	}
}

/* Are all of the key's bits set in its block? Stops at the first that is not. */
static int blocked_all_set(const struct filter *f, const uint64_t *w, const uint64_t h[2])
{
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i);

		if (!(w[bit >> 6] & UINT64_C(1) << (bit & 63)))
			return 0;
	}
	return 1;
}

/*
 * Set bits in a word of a blocked filter. One thread adds, but another may
 * be loading the same words ahead of it (filter_ready_hashed), so both
 * sides use relaxed atomic accesses: a plain store beside an atomic load
 * is a data race, undefined behaviour in C11. Relaxed loads and stores
 * order nothing and compile to the plain moves on x86-64 and arm64; the
 * read-modify-write need not be atomic, as only the adding thread writes.
 */
static inline void word_set_bits(uint64_t *w, uint64_t bits)
{
	__atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) | bits, __ATOMIC_RELAXED);
}

/* Set the key's bits in its block w; were they all set already? */
static int blocked_test_and_set(const struct filter *f, uint64_t *w, const uint64_t h[2])
{
	uint64_t missing = 0;

	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t bit = blocked_bit(h, i), mask = UINT64_C(1) << (bit & 63);

		missing |= mask & ~w[bit >> 6];
		word_set_bits(&w[bit >> 6], mask);
	}
	return missing == 0;
}

/* Position x as probe i: bit x, or for counting the nibble of counter x. */
static inline void place_probe(struct probes *pr, uint32_t i, uint64_t x, int counting)
{
	if (counting) {
		pr->word[i] = x >> 4;
		pr->mask[i] = UINT64_C(0xf) << ((x & 15) * 4);
		return;
	}
	pr->word[i] = x >> 6;
	pr->mask[i] = UINT64_C(1) << (x & 63);
}

/* The classic sequence, over m bits or, for counting, m counters. */
static void classic_probes(const struct filter *f, const uint64_t h[2], struct probes *pr)
{
	uint64_t m = f->params.m;
	uint64_t x = h[0] % m, y = h[1] % m;
	int counting = f->params.layout == FILTER_COUNTING;

	for (uint32_t i = 0; i < f->params.k; i++) {
		place_probe(pr, i, x, counting);
		/* x, y < m <= 2^46, so the sums cannot overflow */
		x += y;
		if (x >= m)
			x -= m;
		y += i;
		if (y >= m)
			y -= m;
	}
}

/* DCSO's probes (dcso.c) are bit positions: here they become words and masks. */
static void dcso_key_probes(const struct filter *f, const struct line *key, struct probes *pr)
{
	uint64_t positions[FILTER_K_MAX];

	dcso_probes(f, key, positions);
	for (uint32_t i = 0; i < f->params.k; i++) {
		pr->word[i] = positions[i] >> 6;
		pr->mask[i] = UINT64_C(1) << (positions[i] & 63);
	}
}

/* The probes of a layout that probes anywhere; hashed is the key's (h1, h2), or NULL. */
static void scattered_probes(const struct filter *f, const struct line *key, const uint64_t *hashed,
			     struct probes *pr)
{
	uint64_t own[2];
	const uint64_t *h = hashed;

	if (f->params.layout == FILTER_DCSO) {
		dcso_key_probes(f, key, pr);
		return;
	}
	if (h == NULL) {
		hash_key(f, key, own);
		h = own;
	}
	classic_probes(f, h, pr);
}

void filter_positions(const struct filter *f, struct line key, uint64_t *positions)
{
	struct probes pr;
	uint64_t h[2];

	if (f->params.layout == FILTER_BLOCKED) {
		hash_key(f, &key, h);
		for (uint32_t i = 0; i < f->params.k; i++)
			positions[i] = blocked_base(f, h) * 64 + blocked_bit(h, i);
		return;
	}
	scattered_probes(f, &key, NULL, &pr);
	for (uint32_t i = 0; i < f->params.k; i++) {
		uint64_t low = (uint64_t)__builtin_ctzll(pr.mask[i]);

		positions[i] = f->params.layout == FILTER_COUNTING ? pr.word[i] * 16 + low / 4
								   : pr.word[i] * 64 + low;
	}
}

/*
 * Hash keys[0..n) (n <= BATCH; all at once, unless h brings the hashes)
 * into b, and prefetch every line they touch, so the probing that follows
 * finds them in cache. masks: blocked keys get their masks, to be added
 * (a batch that is only tested is faster without: see struct batch).
 */
static void prepare_batch(const struct filter *f, const struct line *keys, const uint64_t *h,
			  size_t n, int masks, struct batch *b)
{
	if (h == NULL && filter_hash(f, keys, n, b->own) == 0)
		h = b->own;
	if (f->params.layout == FILTER_BLOCKED) {
		b->h = h;
		b->masked = masks;
		for (size_t i = 0; i < n; i++) {
			b->base[i] = blocked_base(f, h + 2 * i);
			__builtin_prefetch(&f->words[b->base[i]], 1, 0);
			if (masks)
				blocked_probes(f, h + 2 * i, b->block[i]);
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		scattered_probes(f, &keys[i], h ? h + 2 * i : NULL, &b->pr[i]);
		for (uint32_t j = 0; j < f->params.k; j++)
			__builtin_prefetch(&f->words[b->pr[i].word[j]], 1, 0);
	}
}

static int probes_all_set(const struct filter *f, const struct batch *b, size_t i)
{
	const struct probes *pr = &b->pr[i];

	if (f->params.layout == FILTER_BLOCKED && !b->masked)
		return blocked_all_set(f, f->words + b->base[i], b->h + 2 * i);
	if (f->params.layout == FILTER_BLOCKED) {
		const uint64_t *w = f->words + b->base[i];
		uint64_t missing = 0;

		for (int j = 0; j < 8; j++)
			missing |= b->block[i][j] & ~w[j];
		return missing == 0;
	}
	for (uint32_t j = 0; j < f->params.k; j++)
		if ((f->words[pr->word[j]] & pr->mask[j]) == 0)
			return 0;
	return 1;
}

/* Blocked keys need their masks (prepare_batch with masks). */
static void probes_set(struct filter *f, const struct batch *b, size_t i)
{
	const struct probes *pr = &b->pr[i];

	if (f->params.layout == FILTER_BLOCKED) {
		uint64_t *w = f->words + b->base[i];

		for (int j = 0; j < 8; j++)
			word_set_bits(&w[j], b->block[i][j]);
		return;
	}
	for (uint32_t j = 0; j < f->params.k; j++)
		f->words[pr->word[j]] |= pr->mask[j];
}

/*
 * Counting: one more on each probed counter, none past 15. mask & -mask is
 * the nibble's lowest bit, so adding it is +1 on that counter alone (it is
 * below 15: no carry leaves the nibble).
 */
static void counters_increment(struct filter *f, const struct probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++) {
		uint64_t *w = &f->words[pr->word[j]], mask = pr->mask[j];

		if ((*w & mask) != mask)
			*w += mask & -mask;
	}
}

static void probes_add(struct filter *f, const struct batch *b, size_t i)
{
	if (f->params.layout == FILTER_COUNTING)
		counters_increment(f, &b->pr[i]);
	else
		probes_set(f, b, i);
}

void filter_add(struct filter *f, const struct line *keys, size_t n)
{
	filter_add_hashed(f, keys, NULL, n);
}

void filter_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	struct batch b;

	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;

		prepare_batch(f, keys + done, h ? h + 2 * done : NULL, len, 1, &b);
		for (size_t i = 0; i < len; i++)
			probes_add(f, &b, i);
	}
	f->insertions += n;
}

/*
 * OR bits into a word shared with other adding threads. The relaxed load
 * first skips words that hold the bits already (most, once a filter
 * fills), so their cache lines are not taken for writing; the fetch-or
 * makes concurrent adds to one word lose nothing. Relaxed: the bits order
 * nothing else, and the threads are joined before the filter is read.
 */
static inline void word_or_shared(uint64_t *w, uint64_t bits)
{
	if ((__atomic_load_n(w, __ATOMIC_RELAXED) & bits) != bits)
		__atomic_fetch_or(w, bits, __ATOMIC_RELAXED);
}

/* Blocked keys need their masks (prepare_batch with masks). */
static void probes_or_shared(struct filter *f, const struct batch *b, size_t i)
{
	const struct probes *pr = &b->pr[i];

	if (f->params.layout == FILTER_BLOCKED) {
		uint64_t *w = f->words + b->base[i];

		for (int j = 0; j < 8; j++)
			if (b->block[i][j] != 0)
				word_or_shared(&w[j], b->block[i][j]);
		return;
	}
	for (uint32_t j = 0; j < f->params.k; j++)
		word_or_shared(&f->words[pr->word[j]], pr->mask[j]);
}

int filter_add_shared(struct filter *f, const struct line *keys, const uint64_t *h, size_t n)
{
	struct batch b;

	if (f->params.layout == FILTER_COUNTING)
		return -1;
	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;

		prepare_batch(f, keys + done, h ? h + 2 * done : NULL, len, 1, &b);
		for (size_t i = 0; i < len; i++)
			probes_or_shared(f, &b, i);
	}
	return 0;
}

/*
 * Undo the decrements of a key's first n probes. A decremented counter is
 * at most 13 now and a skipped one is 15, so 15 means "left alone"; a
 * counter probed twice was decremented twice and is incremented twice.
 */
static void counters_restore(struct filter *f, const struct probes *pr, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		uint64_t *w = &f->words[pr->word[j]], mask = pr->mask[j];

		if ((*w & mask) != mask)
			*w += mask & -mask;
	}
}

/*
 * Counting: one less on each probed counter but the saturated ones.
 * Returns 0, with every counter as it was, when one is already 0: the key
 * was never added, and its other counters belong to other keys.
 */
static int counters_decrement(struct filter *f, const struct probes *pr)
{
	for (uint32_t j = 0; j < f->params.k; j++) {
		uint64_t *w = &f->words[pr->word[j]], mask = pr->mask[j];
		uint64_t counter = *w & mask;

		if (counter == 0) {
			counters_restore(f, pr, j);
			return 0;
		}
		if (counter != mask)
			*w -= mask & -mask;
	}
	return 1;
}

size_t filter_remove(struct filter *f, const struct line *keys, size_t n)
{
	struct batch b;
	size_t absent = 0;

	if (f->params.layout != FILTER_COUNTING)
		return n;
	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;

		prepare_batch(f, keys + done, NULL, len, 1, &b);
		for (size_t i = 0; i < len; i++)
			absent += (size_t)!counters_decrement(f, &b.pr[i]);
	}
	f->removals += n - absent;
	return absent;
}

void filter_test(const struct filter *f, const struct line *keys, size_t n,
		 unsigned char *present)
{
	filter_test_hashed(f, keys, NULL, n, present);
}

void filter_test_hashed(const struct filter *f, const struct line *keys, const uint64_t *h,
			size_t n, unsigned char *present)
{
	struct batch b;

	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;

		prepare_batch(f, keys + done, h ? h + 2 * done : NULL, len, 0, &b);
		if (f->params.layout == FILTER_BLOCKED &&
		    blocked_test_many(f->words, b.base, b.h, len, f->params.k, probe_multiplier,
				      present + done) == 0)
			continue;
		for (size_t i = 0; i < len; i++)
			present[done + i] = (unsigned char)probes_all_set(f, &b, i);
	}
}

size_t filter_test_and_add(struct filter *f, const struct line *keys, size_t n,
			   unsigned char *present)
{
	return filter_test_and_add_hashed(f, keys, NULL, n, present);
}

/* Set once a kernel refuses MADV_POPULATE_WRITE (before 5.14): stop asking. */
static int populate_refused;

/* Have the 2 MiB spans the blocks at these words lie in backed, each span once. */
static void back_spans(const struct filter *f, const uint64_t *base, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uint64_t bytes = filter_array_bytes(&f->params);

	if (f->backed == NULL || __atomic_load_n(&populate_refused, __ATOMIC_RELAXED))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t span = base[i] * 8 / FILTER_BACK_SPAN;
		uint64_t *word = &f->backed[span / 64], bit = UINT64_C(1) << (span % 64);
		uint64_t start = span * FILTER_BACK_SPAN;
		uint64_t len = bytes - start < FILTER_BACK_SPAN ? bytes - start : FILTER_BACK_SPAN;

		if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
			continue;
		/* both threads may ask for the same span at once: the kernel serves it once */
		if (madvise((char *)f->words + start, (size_t)len, MADV_POPULATE_WRITE) != 0 &&
		    errno == EINVAL) {
			__atomic_store_n(&populate_refused, 1, __ATOMIC_RELAXED);
			return;
		}
		/* ENOMEM and the like: the add will fault it in itself, as without this */
		__atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
	}
#else
	(void)f, (void)base, (void)n;
#endif
}

/*
 * Load the cache line of each block at these words: prefetch them all,
 * then read one word of each, so the misses overlap. Only loads: what this
 * thread takes in is the line (into its caches and the shared L3) and the
 * address translation walk, both of which the adding thread would
 * otherwise wait for. Prefetches alone proved not enough (they do not hide
 * a miss whose translation misses the TLB); real loads are kept by
 * reading into a volatile. The loads are relaxed atomics because another
 * thread may be adding to these words; the values read are thrown away.
 */
static void load_blocks(const struct filter *f, const uint64_t *base, size_t n)
{
	volatile uint64_t sink;
	uint64_t acc = 0;

	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(&f->words[base[i]], 0, 3);
	for (size_t i = 0; i < n; i++)
		acc ^= __atomic_load_n(&f->words[base[i]], __ATOMIC_RELAXED);
	sink = acc;
	(void)sink;
}

/* Backed first: a load of a page never written would map the zero page, to be faulted again by the add. */
void filter_ready_hashed(const struct filter *f, const uint64_t *h, size_t n)
{
	if (f->words == NULL || f->params.layout != FILTER_BLOCKED ||
	    filter_array_bytes(&f->params) < FILTER_READY_MIN)
		return;
	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;
		uint64_t base[BATCH];

		for (size_t i = 0; i < len; i++)
			base[i] = blocked_base(f, h + 2 * (done + i));
		back_spans(f, base, len);
		load_blocks(f, base, len);
	}
}

void filter_blocks_of(const struct filter *f, const uint64_t *h, size_t n, uint64_t *base)
{
	for (size_t i = 0; i < n; i++)
		base[i] = blocked_base(f, h + 2 * i);
}

void filter_blocks_test(const struct filter *f, const uint64_t *base, const uint64_t *h,
			size_t n, unsigned char *present)
{
	if (blocked_test_many(f->words, base, h, n, f->params.k, probe_multiplier, present) == 0)
		return;
	for (size_t i = 0; i < n; i++)
		present[i] = (unsigned char)blocked_all_set(f, f->words + base[i], h + 2 * i);
}

/*
 * As blocked_test_and_add_simd: all tested at once (eight probes at a time
 * where the CPU can), then only the absent set, probe by probe, and asked
 * again as they are, so a repeat later in the batch meets its first copy.
 * Measured on a window's generations: a fifth less time than building
 * every key's mask (whose vector-cleared words stall the loads that read
 * them back). The lines are the caller's to have in cache.
 */
size_t filter_blocks_test_and_set(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	size_t fresh = 0;

	if (blocked_test_many(f->words, base, h, n, f->params.k, probe_multiplier, present) < 0)
		memset(present, 0, n);
	for (size_t i = 0; i < n; i++) {
		if (present[i])
			continue;
		present[i] = (unsigned char)blocked_test_and_set(f, f->words + base[i], h + 2 * i);
		fresh += !present[i];
	}
	return fresh;
}

size_t filter_blocks_test_and_add(struct filter *f, const uint64_t *base, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	f->insertions += n;
	return filter_blocks_test_and_set(f, base, h, n, present);
}

int filter_hash(const struct filter *f, const struct line *keys, size_t n, uint64_t *h)
{
	if (f->params.layout == FILTER_DCSO)
		return -1;
	/* many at once: SIMD lanes where the CPU has them (siphash_many.c) */
	if (f->params.hash == FILTER_SIPHASH_2_4)
		siphash_2_4_128_many(&f->sipkey, keys, n, h);
	else
		siphash_1_3_128_many(&f->sipkey, keys, n, h);
	return 0;
}

/*
 * A blocked batch b of n keys (prepared without masks) tested eight probes
 * at a time (blocked_simd, which must be usable), never building masks:
 * a key found present stays present, as adds only set bits; only the keys
 * found absent are added, probe by probe, and asked again as they are,
 * so a repeat later in the batch meets its first copy. For a filter of
 * gigabytes, where the adding thread waits on every line, this saved a
 * fifth of its time; for one that fits in the caches building the masks
 * is quicker, so it serves big filters only. Returns how many keys were
 * fresh.
 */
static size_t blocked_test_and_add_simd(struct filter *f, const struct batch *b, size_t n,
					unsigned char *present)
{
	size_t fresh = 0;

	(void)blocked_test_many(f->words, b->base, b->h, n, f->params.k, probe_multiplier, present);
	for (size_t i = 0; i < n; i++) {
		if (present[i])
			continue;
		present[i] = (unsigned char)blocked_test_and_set(f, f->words + b->base[i], b->h + 2 * i);
		fresh += !present[i];
	}
	return fresh;
}

size_t filter_test_and_add_hashed(struct filter *f, const struct line *keys, const uint64_t *h,
				  size_t n, unsigned char *present)
{
	struct batch b;
	size_t fresh = 0;
	/* counting counts every key: one that tests present may be a false positive */
	int count_all = f->params.layout == FILTER_COUNTING;
	/* measured: faster for a filter far bigger than the caches, slower for one in them */
	int simd = f->params.layout == FILTER_BLOCKED && filter_array_bytes(&f->params) >= FILTER_READY_MIN &&
		   blocked_simd_usable();

	for (size_t done = 0; done < n; done += BATCH) {
		size_t len = n - done < BATCH ? n - done : BATCH;

		prepare_batch(f, keys + done, h ? h + 2 * done : NULL, len, !simd, &b);
		if (simd) {
			fresh += blocked_test_and_add_simd(f, &b, len, present + done);
			continue;
		}
		/* in order, so a repeat later in the batch sees the earlier key */
		for (size_t i = 0; i < len; i++) {
			int seen = probes_all_set(f, &b, i);

			present[done + i] = (unsigned char)seen;
			fresh += (size_t)!seen;
			if (!seen || count_all)
				probes_add(f, &b, i);
		}
	}
	f->insertions += n;
	return fresh;
}

static unsigned popcount64(uint64_t w)
{
	return (unsigned)__builtin_popcountll(w);
}

/* The lowest bit of each 4-bit counter in a word. */
#define NIBBLE_LOW UINT64_C(0x1111111111111111)

/* Counting: the lowest bit of each counter of w set when the counter is non-zero. */
static uint64_t counters_nonzero(uint64_t w)
{
	return (w | w >> 1 | w >> 2 | w >> 3) & NIBBLE_LOW;
}

/* Positions a word holds: 64 bits, or 16 counters. */
static unsigned word_positions(const struct filter *f)
{
	return f->params.layout == FILTER_COUNTING ? 16 : 64;
}

/* Positions of w that are set: bits, or non-zero counters. */
static unsigned word_set(const struct filter *f, uint64_t w)
{
	return popcount64(f->params.layout == FILTER_COUNTING ? counters_nonzero(w) : w);
}

double filter_sampled_fill(const struct filter *f, uint64_t samples)
{
	uint64_t words = array_words(f), step, set = 0, seen = 0;

	if (samples == 0)
		return 0.0;
	step = words / samples ? words / samples : 1;
	/* relaxed loads: the progress line samples a filter other threads may be adding to */
	for (uint64_t i = 0; i < words; i += step, seen++)
		set += word_set(f, __atomic_load_n(&f->words[i], __ATOMIC_RELAXED));
	return (double)set / (double)(seen * word_positions(f));
}

/*
 * Counting the bits of a whole array is the one loop where popcount speed
 * shows (bfinfo, -v, estimates, the current rate). Without -mpopcnt the
 * builtin is a libgcc routine, so on x86-64 a copy compiled for the popcnt
 * instruction is chosen at run time when the CPU has it.
 */
#define POPCOUNT_LOOP(name, attr)                                                 \
	attr static uint64_t name(const uint64_t *w, uint64_t n)                 \
	{                                                                         \
		uint64_t total = 0;                                               \
		for (uint64_t i = 0; i < n; i++)                                  \
			total += (uint64_t)__builtin_popcountll(w[i]);            \
		return total;                                                     \
	}

POPCOUNT_LOOP(popcount_portable, )
#if defined(__x86_64__) && defined(__GNUC__)
POPCOUNT_LOOP(popcount_hardware, __attribute__((target("popcnt"))))

static uint64_t popcount_words(const uint64_t *w, uint64_t n)
{
	static int has_popcnt = -1;

	if (has_popcnt < 0) {
		__builtin_cpu_init();
		has_popcnt = __builtin_cpu_supports("popcnt") != 0;
	}
	return has_popcnt ? popcount_hardware(w, n) : popcount_portable(w, n);
}
#else
static uint64_t popcount_words(const uint64_t *w, uint64_t n)
{
	return popcount_portable(w, n);
}
#endif

uint64_t filter_bits_set(const struct filter *f)
{
	uint64_t words = array_words(f), total = 0;

	if (f->params.layout == FILTER_COUNTING) {
		for (uint64_t i = 0; i < words; i++)
			total += popcount64(counters_nonzero(f->words[i]));
		return total;
	}
	return popcount_words(f->words, words);
}

uint64_t filter_saturated(const struct filter *f)
{
	uint64_t words = array_words(f), total = 0;

	if (f->params.layout != FILTER_COUNTING)
		return 0;
	for (uint64_t i = 0; i < words; i++) {
		uint64_t w = f->words[i];

		total += popcount64(w & w >> 1 & w >> 2 & w >> 3 & NIBBLE_LOW);
	}
	return total;
}

/* The bits a key's probes range over: m, or for DCSO the file's own m. */
static uint64_t probed_bits(const struct filter_params *p)
{
	return p->layout == FILTER_DCSO ? p->probe_bits : p->m;
}

/*
 * A key never added is a false positive when all k of its probes hit set
 * bits (non-zero counters). Probes are independent and uniform over their
 * range, so with a fraction q of the range set the chance is q^k: over the
 * whole array for classic, counting and DCSO, over the key's block for
 * blocked, averaged over the blocks.
 */
double filter_current_fpr(const struct filter *f)
{
	uint64_t blocks = f->params.m / FILTER_BLOCK_BITS;
	double hit[FILTER_BLOCK_BITS + 1], sum = 0.0;

	if (f->params.layout != FILTER_BLOCKED)
		return pow((double)filter_bits_set(f) / (double)probed_bits(&f->params), f->params.k);
	for (unsigned c = 0; c <= FILTER_BLOCK_BITS; c++)
		hit[c] = pow((double)c / FILTER_BLOCK_BITS, f->params.k);
	for (uint64_t b = 0; b < blocks; b++)
		sum += hit[popcount_words(f->words + b * 8, 8)];
	return sum / (double)blocks;
}

double filter_estimate_count(const struct filter *f)
{
	/* DCSO and counting probe anywhere in their bits or counters, as classic does */
	enum filter_layout layout = f->params.layout == FILTER_BLOCKED ? FILTER_BLOCKED : FILTER_CLASSIC;

	return sizing_estimate_count(layout, probed_bits(&f->params), f->params.k,
				     filter_bits_set(f));
}

int filter_compatible(const struct filter *a, const struct filter *b, const char **what)
{
	const struct filter_params *p = &a->params, *q = &b->params;

	if (p->layout != q->layout)
		*what = "layout";
	else if (p->m != q->m || p->probe_bits != q->probe_bits)
		*what = "size";
	else if (p->k != q->k)
		*what = "hashes";
	else if (p->hash != q->hash)
		*what = "hash function";
	else if (p->fingerprint != q->fingerprint)
		*what = "key";
	/* where the key is kept does not matter: the fingerprints agreed */
	else if ((p->flags ^ q->flags) & ~FILTER_KEY_EXTERNAL)
		*what = "normalisation";
	else
		return 1;
	return 0;
}
