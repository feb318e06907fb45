/* SPDX-License-Identifier: MIT */
/*
 * staged.c - the table of a staged filter's blocks (staged.h): open
 * addressing with linear probing, keyed by the block's first word index,
 * grown by doubling at three quarters full. The keys (base + 1, so that
 * zero marks a free slot) lie in one array, eight to a cache line, and
 * the blocks in another, a line each: a search reads its keys a line at a
 * time and then the one block it wants. (Slots of key and block together,
 * 72 bytes, had a search that ran on past its home read two lines a slot,
 * and most searches of a filter filling up are inserts that run on.)
 */
#include "staged.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LINE_BYTES 64
#define SLOT_BYTES (sizeof(uint64_t) + STAGED_BLOCK_WORDS * sizeof(uint64_t))
#define FIRST_CAPACITY 1024
#define SLOTS_HUGE (UINT64_C(2) << 20)

_Static_assert(FIRST_CAPACITY * sizeof(uint64_t) % LINE_BYTES == 0, "the blocks start on a line");
_Static_assert(STAGED_BLOCK_WORDS * sizeof(uint64_t) == LINE_BYTES, "a block is a line");

/*
 * The keys and blocks of capacity slots, zeroed, in one allocation, the
 * blocks after the keys. A big table (tens of MB before a -n 1e9 filter
 * goes dense) is written all over at random: mapped with huge pages asked
 * for, it costs a fault per 2 MiB rather than per 4 KiB (35,000 faults of
 * a pipe-limit run, half a second where faults are dear).
 */
static uint64_t *slots_alloc(uint64_t capacity)
{
	size_t bytes = (size_t)capacity * SLOT_BYTES;
	void *p;

	if (bytes < SLOTS_HUGE) {
		if (posix_memalign(&p, LINE_BYTES, bytes) != 0)
			return NULL;
		return memset(p, 0, bytes);
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void slots_free(uint64_t *keys, uint64_t capacity)
{
	size_t bytes = (size_t)capacity * SLOT_BYTES;

	if (keys == NULL)
		return;
	if (bytes < SLOTS_HUGE)
		free(keys);
	else
		munmap(keys, bytes);
}

struct staged *staged_new(void)
{
	struct staged *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	s->active = 1;
	return s;
}

void staged_free(struct staged *s)
{
	if (s == NULL)
		return;
	slots_free(s->keys, s->capacity);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The slot a block's search starts at: blocks are 8 words apart, so base / 8 is the block number. */
static uint64_t home(uint64_t base, uint64_t capacity)
{
	return ((base / STAGED_BLOCK_WORDS) * UINT64_C(0x9e3779b97f4a7c15)) >> 32 & (capacity - 1);
}

/* The slot holding base, or the free slot where it would go. */
static uint64_t find(const struct staged *s, uint64_t base)
{
	for (uint64_t i = home(base, s->capacity);; i = (i + 1) & (s->capacity - 1))
		if (s->keys[i] == 0 || s->keys[i] == base + 1)
			return i;
}

/* The block of a slot: the blocks follow the keys, a cache line each. */
static uint64_t *block_at(const struct staged *s, uint64_t slot)
{
	return s->keys + s->capacity + slot * STAGED_BLOCK_WORDS;
}

static int grow(struct staged *s, uint64_t capacity)
{
	uint64_t *old_keys = s->keys, *old_blocks = old_keys + s->capacity, old_capacity = s->capacity;

	if (capacity > SIZE_MAX / SLOT_BYTES)
		return -1;
	s->keys = slots_alloc(capacity);
	if (s->keys == NULL) {
		s->keys = old_keys;
		return -1;
	}
	s->capacity = capacity;
	for (uint64_t i = 0; i < old_capacity; i++) {
		uint64_t to;

		if (old_keys[i] == 0)
			continue;
		to = find(s, old_keys[i] - 1);
		s->keys[to] = old_keys[i];
		memcpy(block_at(s, to), old_blocks + i * STAGED_BLOCK_WORDS, LINE_BYTES);
	}
	slots_free(old_keys, old_capacity);
	return 0;
}

int staged_reserve(struct staged *s, uint64_t n)
{
	uint64_t capacity = s->capacity ? s->capacity : FIRST_CAPACITY;

	/* at most three quarters full, so that a search ends soon */
	while ((s->used + n) * 4 > capacity * 3) {
		if (capacity > UINT64_MAX / 2)
			return -1;
		capacity *= 2;
	}
	return capacity == s->capacity ? 0 : grow(s, capacity);
}

uint64_t *staged_block(struct staged *s, uint64_t base, int insert)
{
	uint64_t slot;

	if (s->capacity == 0)
		return NULL;
	slot = find(s, base);
	if (s->keys[slot] == 0) {
		if (!insert)
			return NULL;
		s->keys[slot] = base + 1;
		s->used++;
	}
	return block_at(s, slot);
}

/*
 * Two passes: the keys' lines first, all at once; then, those in cache,
 * the lines of the blocks where the searches end (an insert's free slot
 * may yet be taken by an earlier key of the batch: a wasted prefetch).
 */
void staged_prefetch(const struct staged *s, const uint64_t *base, size_t n)
{
	if (s->capacity == 0)
		return;
	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(&s->keys[home(base[i], s->capacity)], 0, 3);
	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(block_at(s, find(s, base[i])), 1, 3);
}

void staged_each(const struct staged *s, void (*each)(void *ctx, uint64_t base, const uint64_t *words),
		 void *ctx)
{
	for (uint64_t i = 0; i < s->capacity; i++)
		if (s->keys[i] != 0)
			each(ctx, s->keys[i] - 1, block_at(s, i));
}

void staged_clear(struct staged *s)
{
	slots_free(s->keys, s->capacity);
	s->keys = NULL;
	s->capacity = 0;
	s->used = 0;
}
