/* SPDX-License-Identifier: MIT */
/*
 * test_partition.c - a key's partition of N (partition.h): the derived
 * key and a few partitions as tests/partition_ref.py, written from
 * bf(5)'s text, computes them; the multiply-high against a slow
 * shift-and-add product; every partition used, evenly, and none
 * outside [0, N).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "partition.h"
#include "siphash.h"
#include "unit.h"

static const unsigned char key_bytes[16] = {
	0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7,
	0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf,
};

/* K' and partitions printed by tests/partition_ref.py for the key 00..0f. */
static void test_reference_values(void)
{
	struct partition p;
	const char *url = "https://example.com/page/1";

	CHECK(partition_init(&p, key_bytes, 16) == 0);
	CHECK(p.key.k0 == 0x59f3940f6ce328d0u && p.key.k1 == 0x68606bd6242de8f1u);
	CHECK(partition_of(&p, "", 0) == 8);
	CHECK(partition_of(&p, "hello", 5) == 8);
	CHECK(partition_of(&p, url, strlen(url)) == 4);
	CHECK(partition_init(&p, key_bytes, 1000000007) == 0);
	CHECK(partition_of(&p, "hello", 5) == 555424896);
}

/* The high word of h * n by shifting and adding, one bit of n at a time. */
static uint64_t slow_scale(uint64_t h, uint64_t n)
{
	uint64_t hi = 0, lo = 0;

	for (int bit = 63; bit >= 0; bit--) {
		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		if (n >> bit & 1) {
			uint64_t sum = lo + h;

			hi += sum < lo;
			lo = sum;
		}
	}
	return hi;
}

static void test_scale(void)
{
	uint64_t state = 34;

	CHECK(partition_scale(0, 7) == 0);
	CHECK(partition_scale(UINT64_MAX, 7) == 6);
	CHECK(partition_scale(UINT64_MAX, UINT64_MAX) == UINT64_MAX - 1);
	CHECK(partition_scale(UINT64_C(1) << 63, 3) == 1);
	CHECK(partition_scale(12345, 1) == 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t h = unit_splitmix64(&state), n = unit_splitmix64(&state) >> (i % 64);

		CHECKF(partition_scale(h, n) == slow_scale(h, n), "h %llu n %llu",
		       (unsigned long long)h, (unsigned long long)n);
	}
}

/*
 * 160,000 keys into 16: each partition expects 10,000, sd
 * sqrt(160000 * 1/16 * 15/16) = 97; 10,500 and 9,500 are 5 sd away.
 */
static void test_even(void)
{
	struct partition p;
	uint64_t counts[16] = { 0 };
	char key[32];

	CHECK(partition_init(&p, key_bytes, 16) == 0);
	for (int i = 0; i < 160000; i++) {
		int len = snprintf(key, sizeof key, "key-%d", i);
		uint64_t at = partition_of(&p, key, (size_t)len);

		CHECK(at < 16);
		counts[at]++;
	}
	for (int i = 0; i < 16; i++)
		CHECKF(counts[i] > 9500 && counts[i] < 10500, "partition %d: %llu", i,
		       (unsigned long long)counts[i]);
}

/* The derived key is not the key: the filters' hash and the partition's differ. */
static void test_domain_separated(void)
{
	struct partition p;
	struct siphash_key k;
	int same = 0;

	siphash_key_from_bytes(&k, key_bytes);
	CHECK(partition_init(&p, key_bytes, 1) == 0);
	CHECK(p.key.k0 != k.k0 && p.key.k1 != k.k1);
	for (int i = 0; i < 64; i++)
		same += siphash_2_4_64(&p.key, &i, sizeof i) == siphash_2_4_64(&k, &i, sizeof i);
	CHECK(same == 0);
	CHECK(partition_of(&p, "anything", 8) == 0);
}

static void test_no_partitions(void)
{
	struct partition p;

	CHECK(partition_init(&p, key_bytes, 0) == -1);
}

void suite_partition(void)
{
	unit_run("partition: derived key and partitions as the reference computes them", test_reference_values);
	unit_run("partition: multiply-high equals the slow 128-bit product", test_scale);
	unit_run("partition: 160,000 keys share 16 partitions within 5 sd", test_even);
	unit_run("partition: the derived key is not the partitioning key", test_domain_separated);
	unit_run("partition: no partitions is refused", test_no_partitions);
}
