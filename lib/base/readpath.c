/* SPDX-License-Identifier: MIT */
/*
 * readpath.c - opening a path to read, "-" for standard input
 * (readpath.h), so that every loader treats names alike.
 */
#include "readpath.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int readpath_open(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return STDIN_FILENO;
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

void readpath_close(int fd)
{
	if (fd != STDIN_FILENO)
		close(fd);	/* read-only: nothing to lose */
}
