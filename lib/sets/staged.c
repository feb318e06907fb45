/* SPDX-License-Identifier: MIT */
/*
 * staged.c - the table of a staged filter's blocks (staged.h): open
 * addressing with linear probing, keyed by the block's first word index,
 * grown by doubling at three quarters full. A slot is 9 words, the key
 * plus one (so that an all-zero slot is free) and the block, so a probe
 * that finds its key has the block in the same cache lines.
 */
#include "staged.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SLOT_WORDS (1 + STAGED_BLOCK_WORDS)
#define FIRST_CAPACITY 1024
#define SLOTS_HUGE (UINT64_C(2) << 20)

/*
 * Slots for capacity entries, zeroed. A big table (tens of MB before a
 * -n 1e9 filter goes dense) is written all over at random: mapped with
 * huge pages asked for, it costs a fault per 2 MiB rather than per 4 KiB
 * (35,000 faults of a pipe-limit run, half a second where faults are dear).
 */
static uint64_t *slots_alloc(uint64_t capacity)
{
	size_t bytes = (size_t)capacity * SLOT_WORDS * sizeof(uint64_t);
	void *p;

	if (bytes < SLOTS_HUGE)
		return calloc((size_t)capacity, SLOT_WORDS * sizeof(uint64_t));
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void slots_free(uint64_t *slots, uint64_t capacity)
{
	size_t bytes = (size_t)capacity * SLOT_WORDS * sizeof(uint64_t);

	if (slots == NULL)
		return;
	if (bytes < SLOTS_HUGE)
		free(slots);
	else
		munmap(slots, bytes);
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
	slots_free(s->slots, s->capacity);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The slot a block's search starts at: blocks are 8 words apart, so base / 8 is the block number. */
static uint64_t home(uint64_t base, uint64_t capacity)
{
	return ((base / STAGED_BLOCK_WORDS) * UINT64_C(0x9e3779b97f4a7c15)) >> 32 & (capacity - 1);
}

/* The slot holding base, or the free slot where it would go. */
static uint64_t *find(const struct staged *s, uint64_t base)
{
	for (uint64_t i = home(base, s->capacity);; i = (i + 1) & (s->capacity - 1)) {
		uint64_t *slot = s->slots + i * SLOT_WORDS;

		if (slot[0] == 0 || slot[0] == base + 1)
			return slot;
	}
}

static int grow(struct staged *s, uint64_t capacity)
{
	uint64_t *old = s->slots, old_capacity = s->capacity;

	if (capacity > SIZE_MAX / (SLOT_WORDS * sizeof(uint64_t)))
		return -1;
	s->slots = slots_alloc(capacity);
	if (s->slots == NULL) {
		s->slots = old;
		return -1;
	}
	s->capacity = capacity;
	for (uint64_t i = 0; i < old_capacity; i++) {
		const uint64_t *from = old + i * SLOT_WORDS;

		if (from[0] != 0)
			memcpy(find(s, from[0] - 1), from, SLOT_WORDS * sizeof(uint64_t));
	}
	slots_free(old, old_capacity);
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
	uint64_t *slot;

	if (s->capacity == 0)
		return NULL;
	slot = find(s, base);
	if (slot[0] == 0) {
		if (!insert)
			return NULL;
		slot[0] = base + 1;
		s->used++;
	}
	return slot + 1;
}

void staged_each(const struct staged *s, void (*each)(void *ctx, uint64_t base, const uint64_t *words),
		 void *ctx)
{
	for (uint64_t i = 0; i < s->capacity; i++) {
		const uint64_t *slot = s->slots + i * SLOT_WORDS;

		if (slot[0] != 0)
			each(ctx, slot[0] - 1, slot + 1);
	}
}

void staged_clear(struct staged *s)
{
	slots_free(s->slots, s->capacity);
	s->slots = NULL;
	s->capacity = 0;
	s->used = 0;
}
