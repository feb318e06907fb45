/* SPDX-License-Identifier: MIT */
/*
 * test_keyfile.c - key files: created private and never overwritten, read
 * back exactly, and anything but 32 hex digits refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyfile.h"
#include "unit.h"

static char dir[] = "/tmp/bftools-keyfile-XXXXXX";

static const char *path_in_dir(const char *name)
{
	static char path[128];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void created_private_and_read_back(void)
{
	unsigned char made[16], read_back[16];
	const char *why, *path = path_in_dir("new.key");
	struct stat st;

	CHECK(keyfile_create(path, made, &why) == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 33);
	CHECK(keyfile_read(path, read_back, &why) == 0);
	CHECK(memcmp(made, read_back, 16) == 0);
	/* an existing key file is never replaced */
	CHECK(keyfile_create(path, made, &why) < 0);
	CHECK(keyfile_read(path, made, &why) == 0 && memcmp(made, read_back, 16) == 0);
	unlink(path);
}

static void exact_hex_is_read(void)
{
	static const unsigned char want[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
						0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff };
	unsigned char key[16];
	const char *why, *path = path_in_dir("hex.key");

	CHECK(write_text(path, "000102030405060708090a0b0c0d0eFF") == 0);
	CHECK(keyfile_read(path, key, &why) == 0 && memcmp(key, want, 16) == 0);
	CHECK(write_text(path, "000102030405060708090a0b0c0d0eff\n") == 0);
	CHECK(keyfile_read(path, key, &why) == 0 && memcmp(key, want, 16) == 0);
	unlink(path);
}

static void anything_else_is_refused(void)
{
	static const char *const bad[] = {
		"", "\n", "000102030405060708090a0b0c0d0e", "000102030405060708090a0b0c0d0e0f0",
		"000102030405060708090a0b0c0d0e0f\n\n", "000102030405060708090a0b0c0d0e0g",
		" 000102030405060708090a0b0c0d0e0f", "000102030405060708090a0b0c0d0e0f \n",
	};
	unsigned char key[16];
	const char *why = NULL, *path = path_in_dir("bad.key");

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(write_text(path, bad[i]) == 0);
		CHECKF(keyfile_read(path, key, &why) < 0, "accepted case %zu", i);
		CHECK(strstr(why, "not a key file") != NULL);
	}
	CHECK(write_text(path, "00000000000000000000000000000000\n") == 0);
	CHECK(keyfile_read(path, key, &why) < 0 && strstr(why, "all-zero") != NULL);
	unlink(path);
	CHECK(keyfile_read(path, key, &why) < 0);	/* missing */
	CHECK(keyfile_read(dir, key, &why) < 0 && strstr(why, "regular") != NULL);
}

void suite_keyfile(void)
{
	if (mkdtemp(dir) == NULL) {
		unit_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	unit_run("keyfile: created mode 0600, read back exactly, never overwritten", created_private_and_read_back);
	unit_run("keyfile: 32 hex digits, either case, one optional newline", exact_hex_is_read);
	unit_run("keyfile: anything else is refused as not a key file", anything_else_is_refused);
	rmdir(dir);
}
