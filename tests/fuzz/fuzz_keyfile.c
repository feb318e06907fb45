/* SPDX-License-Identifier: MIT */
/*
 * fuzz_keyfile.c - libFuzzer harness for reading key files (keyfile.h).
 *
 * The input is a key file's bytes. keyfile_read opens it by name
 * (/proc/self/fd/N of an anonymous file), and is checked against the
 * rule keyfile.h states, written out plainly here: accepted exactly for
 * 32 hexadecimal digits, optionally followed by one newline, that are not
 * all zero; the key is those digits, byte 0 first; every refusal says why.
 * The same bytes through a pipe are always refused: a key file is a
 * regular file.
 */
#define _GNU_SOURCE	/* fuzz.h: memfd_create */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "keyfile.h"

static int hex_value(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The reference: 1 and the key, or 0. */
static int ref_key(const uint8_t *data, size_t size, unsigned char key[16])
{
	unsigned any = 0;

	if (size != 32 && !(size == 33 && data[32] == '\n'))
		return 0;
	for (size_t i = 0; i < 16; i++) {
		int hi = hex_value(data[2 * i]), lo = hex_value(data[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return 0;
		key[i] = (unsigned char)(hi << 4 | lo);
		any |= key[i];
	}
	return any != 0;
}

/* keyfile_read of the descriptor's file by name. */
static int read_fd(int fd, unsigned char key[16], const char **err)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return keyfile_read(path, key, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char want[16], got[16];
	const char *err = NULL;
	int ok = ref_key(data, size, want), rc;
	struct feed f;

	feed_open(&f, FEED_FILE, data, size, 0, 1);
	rc = read_fd(f.fd, got, &err);
	feed_close(&f);
	fuzz_check((rc == 0) == ok, "a key file is accepted exactly when the rule says");
	fuzz_check(rc == 0 || (err != NULL && *err != '\0'), "a refused key file says why");
	fuzz_check(rc != 0 || memcmp(got, want, sizeof want) == 0, "the key is the file's digits");
	if (size <= FEED_SMALL) {
		err = NULL;
		feed_open(&f, FEED_PIPE, data, size, 0, 1);
		rc = read_fd(f.fd, got, &err);
		feed_close(&f);
		fuzz_check(rc < 0 && err != NULL, "a pipe is not a key file");
	}
	return 0;
}
