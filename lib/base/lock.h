/* SPDX-License-Identifier: MIT */
/*
 * lock.h - serialise the processes that update one file.
 *
 * A program that loads a file, changes it and renames the result over it
 * (bfbuild -f, bfuniq -f, bfmerge -o onto an input) takes the file's lock
 * before it loads and releases it after the rename, so that a second one
 * works on the first one's result instead of losing it. The lock of
 * "dir/NAME" is an flock(2) on the lock file "dir/.NAME.lock", created
 * empty when missing and never removed (lock.c says why). Readers take no
 * lock: the rename already shows them the whole old file or the whole new
 * one, and they never wait.
 *
 * The lock is advisory: it orders the processes that ask for it and
 * nothing else. It is released by lock_release or when the process ends,
 * however it ends; its descriptor is close-on-exec, so a program the
 * holder runs does not hold it too. A child forked without exec does
 * share it (one open file description) until it closes l->fd.
 */
#ifndef BFTOOLS_LOCK_H
#define BFTOOLS_LOCK_H

#ifdef __cplusplus
extern "C" {
#endif

struct lock {
	int fd;			/* the locked lock file, or -1 */
};

/* A lock not held; what lock_release leaves. */
#define LOCK_INIT { -1 }

/*
 * The lock file of target: "dir/.NAME.lock" for "dir/NAME", where a
 * symbolic link named target leads (atomic_resolve). Returns a
 * string to free, or NULL with errno set (ENOMEM; EISDIR when target ends
 * in a slash; ENOENT when it is empty).
 */
char *lock_path(const char *target);

/*
 * Take the lock of target without waiting. Returns 0 (held), 1 (another
 * holds it: l is left as it was), or -1 with *errstr set (the lock file
 * cannot be created or opened, is a symbolic link or not a regular file).
 */
int lock_try(struct lock *l, const char *target, const char **errstr);

/*
 * Take the lock of target, waiting for it at most seconds (for as long as
 * it takes when seconds < 0). Returns 0, 1 when it was still held by
 * another at the end, or -1 with *errstr as for lock_try.
 */
int lock_wait(struct lock *l, const char *target, double seconds, const char **errstr);

/* Release a lock held (nothing when it is not); the lock file stays. */
void lock_release(struct lock *l);

#ifdef __cplusplus
}
#endif

#endif
