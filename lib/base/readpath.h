/* SPDX-License-Identifier: MIT */
/*
 * readpath.h - a path to read from, as every loader takes it: "-" is
 * standard input, anything else is opened read-only. The library never
 * prints: failures are -1 with errno.
 */
#ifndef BFTOOLS_READPATH_H
#define BFTOOLS_READPATH_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The descriptor to read path from: STDIN_FILENO for "-", else path
 * opened read-only and close-on-exec (retried on EINTR); -1 with errno.
 */
int readpath_open(const char *path);

/* Close what readpath_open gave (standard input is left open). */
void readpath_close(int fd);

#ifdef __cplusplus
}
#endif

#endif
