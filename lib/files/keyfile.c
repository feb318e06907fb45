/* SPDX-License-Identifier: MIT */
/*
 * keyfile.c - read and create key files (see keyfile.h).
 *
 * A key file is tiny and precious: reading insists on a regular file of the
 * exact form, so a wrong path (a filter, a directory, an empty file) is an
 * error rather than some other 16 bytes; creating uses O_EXCL so a key that
 * exists is never overwritten, and syncs before reporting success.
 */
#include "keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "numparse.h"

#define KEY_HEX 32

static int fail(const char **errstr, const char *msg)
{
	*errstr = msg;
	return -1;
}

/* Filters use an all-zero key to mean "kept outside, not supplied". */
static int all_zero(const unsigned char key[16])
{
	for (int i = 0; i < 16; i++)
		if (key[i])
			return 0;
	return 1;
}

/* Up to len bytes of fd, retrying short reads; the count, or -1. */
static ssize_t read_up_to(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int keyfile_read(const char *path, unsigned char key[16], const char **errstr)
{
	char text[KEY_HEX + 3];
	struct stat st;
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(errstr, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(errstr, "not a key file (not a regular file)");
	}
	len = read_up_to(fd, text, sizeof text - 1);
	close(fd);
	if (len < 0)
		return fail(errstr, strerror(errno));
	if (len == KEY_HEX + 1 && text[KEY_HEX] == '\n')
		len = KEY_HEX;
	text[len] = '\0';
	if (len != KEY_HEX || numparse_hex_key(text, key, errstr) < 0)
		return fail(errstr, "not a key file (expected 32 hexadecimal digits)");
	if (all_zero(key))
		return fail(errstr, "an all-zero key is not a key (it marks a key not yet supplied)");
	return 0;
}

int keyfile_create(const char *path, unsigned char key[16], const char **errstr)
{
	char text[KEY_HEX + 2];
	int fd;

	do
		if (filter_random_key(key) < 0)
			return fail(errstr, strerror(errno));
	while (all_zero(key));	/* 2^-128: the loop is for the record */
	for (int i = 0; i < 16; i++)
		snprintf(text + 2 * i, 3, "%02x", key[i]);
	text[KEY_HEX] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(errstr, strerror(errno));
	if (write(fd, text, KEY_HEX + 1) != KEY_HEX + 1 || fsync(fd) < 0) {
		*errstr = strerror(errno ? errno : EIO);
		close(fd);
		unlink(path);
		return -1;
	}
	if (close(fd) < 0) {
		*errstr = strerror(errno);
		unlink(path);
		return -1;
	}
	return 0;
}
