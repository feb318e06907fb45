/* SPDX-License-Identifier: MIT */
/*
 * sketch.c - HyperLogLog sketches keyed like filters: hashing with the
 * filter's SipHash key, the counter (hll.c), merging, and per-thread shards
 * merged at the end. No file I/O: the sketch file is sketch_file.c's.
 *
 * Hashing: h1 (the first 64-bit half) of SipHash-1-3-128 or -2-4-128 of
 * the key's bytes under the 16-byte key, after ASCII case folding with
 * flag bit 0 (the caller folds); the same h1 a filter of that hash and key
 * derives its probes from. bfcount's default key is "bfcount-hll-key1",
 * the fixed key it counted streams with before sketches were saved, so a
 * count is the same whether the sketch is saved or not.
 */
#include "sketch.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const unsigned char sketch_default_key[16] = "bfcount-hll-key1";

static int bad(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

/* ---- the sketch -------------------------------------------------------- */

static int check_hash_and_flags(enum filter_hash hash, uint32_t flags, const char **errstr)
{
	if (hash != FILTER_SIPHASH_1_3 && hash != FILTER_SIPHASH_2_4)
		return bad(errstr, "unknown hash function");
	if (flags & ~FILTER_FLAGS_KNOWN)
		return bad(errstr, "unknown key flags");
	return 0;
}

/* A sketch with every field but the key's: hll allocated, insertions 0. */
static struct sketch *sketch_alloc(unsigned precision, enum filter_hash hash, uint32_t flags,
				   const char **errstr)
{
	struct sketch *s;

	if (precision < HLL_PRECISION_MIN || precision > HLL_PRECISION_MAX) {
		*errstr = "precision out of range 4..18";
		return NULL;
	}
	if (check_hash_and_flags(hash, flags, errstr) < 0)
		return NULL;
	s = calloc(1, sizeof *s);
	if (s == NULL || (s->hll = hll_new(precision)) == NULL) {
		free(s);
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	s->hash = hash;
	s->flags = flags;
	return s;
}

static void set_key(struct sketch *s, const unsigned char key[16])
{
	memcpy(s->key, key, 16);
	siphash_key_from_bytes(&s->sipkey, key);
	s->fingerprint = filter_key_fingerprint(key);
	s->needs_key = 0;
}

struct sketch *sketch_new(unsigned precision, enum filter_hash hash, uint32_t flags,
			  const unsigned char key[16], const char **errstr)
{
	struct sketch *s = sketch_alloc(precision, hash, flags, errstr);

	if (s != NULL)
		set_key(s, key);
	return s;
}

struct sketch *sketch_new_keyless(unsigned precision, enum filter_hash hash, uint32_t flags,
				  uint64_t fingerprint, const char **errstr)
{
	struct sketch *s = sketch_alloc(precision, hash, flags, errstr);

	if (s != NULL) {
		s->fingerprint = fingerprint;
		s->needs_key = 1;
	}
	return s;
}

struct sketch *sketch_new_like(const struct sketch *model, const char **errstr)
{
	struct sketch *s = sketch_alloc(sketch_precision(model), model->hash, model->flags, errstr);

	if (s == NULL)
		return NULL;
	memcpy(s->key, model->key, 16);
	s->sipkey = model->sipkey;
	s->fingerprint = model->fingerprint;
	s->needs_key = model->needs_key;
	return s;
}

void sketch_free(struct sketch *s)
{
	if (s == NULL)
		return;
	hll_free(s->hll);
	free(s);
}

int sketch_supply_key(struct sketch *s, const unsigned char key[16], const char **errstr)
{
	if (filter_key_fingerprint(key) != s->fingerprint)
		return bad(errstr, "the key is not this sketch's key");
	set_key(s, key);
	return 0;
}

/* Keys hashed at a time by sketch_hash: both halves of each on the stack (4 KiB). */
#define HASH_GROUP 256

void sketch_hash(const struct sketch *s, const struct line *keys, size_t n, uint64_t *out)
{
	uint64_t both[2 * HASH_GROUP];

	/* many at once: SIMD lanes where the CPU has them (siphash_many.c), then h1 of each */
	for (size_t at = 0; at < n; at += HASH_GROUP) {
		size_t group = n - at < HASH_GROUP ? n - at : HASH_GROUP;

		if (s->hash == FILTER_SIPHASH_2_4)
			siphash_2_4_128_many(&s->sipkey, keys + at, group, both);
		else
			siphash_1_3_128_many(&s->sipkey, keys + at, group, both);
		for (size_t i = 0; i < group; i++)
			out[at + i] = both[2 * i];
	}
}

void sketch_add_hashed(struct sketch *s, const uint64_t *hashes, size_t n)
{
	hll_add_many(s->hll, hashes, n);
	/* saturates: 2^64 keys are beyond any stream, but not beyond a forged file */
	s->insertions = s->insertions > UINT64_MAX - n ? UINT64_MAX : s->insertions + n;
}

unsigned sketch_precision(const struct sketch *s)
{
	return hll_precision(s->hll);
}

double sketch_estimate(const struct sketch *s)
{
	return hll_estimate(s->hll);
}

double sketch_relative_error(const struct sketch *s)
{
	return hll_relative_error(s->hll);
}

int sketch_is_exact(const struct sketch *s)
{
	return hll_is_exact(s->hll);
}

uint64_t sketch_registers_nonzero(const struct sketch *s)
{
	static uint8_t registers[(size_t)1 << HLL_PRECISION_MAX];	/* single-threaded, as the library is */
	size_t m = (size_t)1 << sketch_precision(s);
	uint64_t n = 0;

	hll_registers(s->hll, registers);
	for (size_t i = 0; i < m; i++)
		n += registers[i] != 0;
	return n;
}

int sketch_compatible(const struct sketch *a, const struct sketch *b, const char **what)
{
	if (sketch_precision(a) != sketch_precision(b))
		*what = "precision";
	else if (a->hash != b->hash)
		*what = "hash function";
	else if (a->fingerprint != b->fingerprint)
		*what = "key";
	/* where the key is kept does not matter: the fingerprints agreed */
	else if ((a->flags ^ b->flags) & ~FILTER_KEY_EXTERNAL)
		*what = "normalisation";
	else
		return 1;
	return 0;
}

int sketch_merge(struct sketch *into, const struct sketch *from, const char **errstr)
{
	static char message[48];
	const char *what;

	if (!sketch_compatible(into, from, &what)) {
		snprintf(message, sizeof message, "different %s", what);
		return bad(errstr, message);
	}
	if (into->insertions > UINT64_MAX - from->insertions)
		return bad(errstr, "insertion counts overflow");
	if (hll_merge(into->hll, from->hll) < 0)	/* the precisions agreed: cannot happen */
		return bad(errstr, "different precision");
	into->insertions += from->insertions;
	return 0;
}

/* ---- counting on several threads -------------------------------------- */

/*
 * One partial counter and its lock, alone on its cache lines: the lock
 * and the count are written on every add, and a neighbour's writes would
 * make them bounce between cores.
 */
struct shard {
	_Alignas(64) pthread_mutex_t lock;
	struct hll *hll;
	uint64_t insertions;
};

struct sketch_shards {
	struct sketch *into;
	unsigned n;
	struct shard *shards;	/* n of them, 64-byte aligned */
};

/*
 * The partial this thread used last: it starts there, so each thread
 * keeps to one partial, whose registers stay in its core's cache.
 */
static _Thread_local unsigned shard_hint;

struct sketch_shards *sketch_shards_new(struct sketch *s, unsigned n, const char **errstr)
{
	struct sketch_shards *sh = calloc(1, sizeof *sh);
	unsigned made = 0;

	n = n < 1 ? 1 : n > SKETCH_SHARDS_MAX ? SKETCH_SHARDS_MAX : n;
	if (sh != NULL)
		sh->shards = aligned_alloc(64, n * sizeof *sh->shards);
	for (; sh != NULL && sh->shards != NULL && made < n; made++) {
		struct shard *one = &sh->shards[made];

		if ((one->hll = hll_new(sketch_precision(s))) == NULL)
			break;
		if (pthread_mutex_init(&one->lock, NULL) != 0) {
			hll_free(one->hll);
			break;
		}
		one->insertions = 0;
	}
	if (sh == NULL || made < n) {
		if (sh != NULL)
			sh->n = made;
		sketch_shards_free(sh);
		*errstr = strerror(ENOMEM);
		return NULL;
	}
	sh->into = s;
	sh->n = n;
	return sh;
}

/* A partial no other thread holds, locked; the one last used if it is free. */
static struct shard *take_shard(struct sketch_shards *sh)
{
	unsigned first = shard_hint % sh->n;

	for (unsigned i = 0; i < sh->n; i++) {
		unsigned k = (first + i) % sh->n;

		if (pthread_mutex_trylock(&sh->shards[k].lock) == 0) {
			shard_hint = k;
			return &sh->shards[k];
		}
	}
	/* more threads than partials: wait for ours */
	pthread_mutex_lock(&sh->shards[first].lock);
	return &sh->shards[first];
}

void sketch_shards_add(struct sketch_shards *sh, const uint64_t *hashes, size_t n)
{
	struct shard *one = take_shard(sh);

	hll_add_many(one->hll, hashes, n);
	one->insertions += n;	/* 2^64 keys in one process: beyond any stream */
	pthread_mutex_unlock(&one->lock);
}

double sketch_shards_estimate(struct sketch_shards *sh)
{
	struct hll *all = hll_new(sketch_precision(sh->into));
	double estimate;

	if (all == NULL)
		return NAN;
	hll_merge(all, sh->into->hll);
	for (unsigned i = 0; i < sh->n; i++) {
		pthread_mutex_lock(&sh->shards[i].lock);
		hll_merge(all, sh->shards[i].hll);
		pthread_mutex_unlock(&sh->shards[i].lock);
	}
	estimate = hll_estimate(all);
	hll_free(all);
	return estimate;
}

void sketch_shards_merge(struct sketch_shards *sh)
{
	struct sketch *s = sh->into;

	for (unsigned i = 0; i < sh->n; i++) {
		uint64_t n = sh->shards[i].insertions;

		hll_merge(s->hll, sh->shards[i].hll);	/* one precision: cannot fail */
		/* saturating, as sketch_add_hashed: a forged file may start near the top */
		s->insertions = s->insertions > UINT64_MAX - n ? UINT64_MAX : s->insertions + n;
	}
}

void sketch_shards_free(struct sketch_shards *sh)
{
	if (sh == NULL)
		return;
	for (unsigned i = 0; sh->shards != NULL && i < sh->n; i++) {
		pthread_mutex_destroy(&sh->shards[i].lock);
		hll_free(sh->shards[i].hll);
	}
	free(sh->shards);
	free(sh);
}

