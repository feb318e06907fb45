/* SPDX-License-Identifier: MIT */
/*
 * walk.h - the files under some paths, as grep -r visits them.
 *
 * Each path given is taken as it is (a symbolic link followed): a
 * directory is walked, anything else is handed out for the caller to
 * open (so a missing one is reported when it is opened, in its place).
 * In a directory, entries come in byte order of their names, depth
 * first, each subdirectory's files where its name falls; symbolic links,
 * devices, FIFOs and sockets found there are passed over, as grep -r
 * passes them (following links could loop, and a FIFO could block for
 * ever). A directory that cannot be read is reported in its place and
 * the walk goes on.
 *
 * Deliberately absent: following links inside directories (grep -R),
 * include and exclude patterns, and the order of the directory on disk,
 * which grep keeps and which differs from one file system to the next.
 */
#ifndef BFTOOLS_WALK_H
#define BFTOOLS_WALK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct walk;

/*
 * A walk over paths[0..n), which must outlive it; with n = 0 over the
 * working directory, its files named without a leading "./" (as grep -r
 * names them). NULL when out of memory.
 */
struct walk *walk_open(char *const *paths, size_t n);

/*
 * The next file: 1 with *path set, 0 at the end, or -1 with *path the
 * directory or entry that could not be read and *err its errno. *path
 * stays valid until the next call.
 */
int walk_next(struct walk *w, const char **path, int *err);

void walk_close(struct walk *w);

#ifdef __cplusplus
}
#endif

#endif
