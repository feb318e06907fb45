/* SPDX-License-Identifier: MIT */
/*
 * lock.c - serialise the processes that update one file (see lock.h).
 *
 * Why a lock file beside the target, and not a lock on the target itself:
 *
 *   - An update replaces the target by rename(2), so the inode a waiting
 *     process locked is, when it gets the lock, no longer the file: it
 *     would have to notice and start again on the new one, every time.
 *     The lock file is never renamed over, so the lock stays on the name.
 *   - The first bfuniq -f STATE creates STATE: there is no file to lock
 *     yet, and creating an empty one would show readers a file that is
 *     not a filter. The lock file can exist before the target does.
 *   - Writing the target already needs a writable directory (the new
 *     file is made beside it and renamed), so creating ".NAME.lock" there
 *     asks for nothing more; an existing lock file only needs to be
 *     readable (flock(2) works on a descriptor opened read-only), so one
 *     made by another user with the usual umask serves everybody.
 *
 * The lock file is never deleted. Deleting it after use would reopen the
 * race it closes: a process that opened the old one and one that created
 * a new one would each hold "the" lock. Having got the lock, a process
 * checks that the name still leads to the inode it locked (someone may
 * have deleted or replaced the lock file meanwhile) and starts again if
 * not.
 *
 * flock(2), not fcntl(2) locks: an fcntl lock belongs to the process and
 * is dropped when any descriptor of the file is closed, by anyone in it;
 * an flock lock belongs to the open file description, and the kernel
 * drops it when the last descriptor of that closes, so a crash or kill
 * releases it too. Linux maps flock onto fcntl locks on NFS, which works
 * between machines. O_NOFOLLOW: in a shared directory a planted symbolic
 * link must not make us create or lock some other file.
 *
 * Deliberately absent: waiting with a deadline by sleeping in flock (a
 * deadline is waited out by polling, with no signals involved), and any
 * notion of readers' locks.
 */
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"

#define LOCK_SUFFIX ".lock"
#define POLL_NS 20000000L	/* 20 ms between tries while waiting with a deadline */

static const char err_not_regular[] = "the lock file is not a regular file";
static const char err_symlink[] = "the lock file is a symbolic link";

/* Beside the file target leads to: a run through a symbolic link takes the file's lock. */
char *lock_path(const char *target)
{
	int named;
	char *real = atomic_resolve(target, &named), *path;

	if (real == NULL)
		return NULL;
	path = atomic_hidden_name(real, LOCK_SUFFIX);
	free(real);
	return path;
}

/* Open (creating if missing) the lock file; the descriptor, or -1 with *errstr. */
static int open_lock_file(const char *path, const char **errstr)
{
	struct stat st;
	int fd;

	do
		fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		*errstr = errno == ELOOP ? err_symlink : strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*errstr = err_not_regular;
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether path still names the file open as fd. */
static int still_named(int fd, const char *path)
{
	struct stat held, named;

	if (fstat(fd, &held) < 0 || lstat(path, &named) < 0)
		return 0;
	return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

enum { TAKEN, BUSY, RENAMED, FAILED };

/* One try at the lock file path: TAKEN (into l), BUSY, RENAMED (try again) or FAILED. */
static int attempt(struct lock *l, const char *path, int block, const char **errstr)
{
	int fd = open_lock_file(path, errstr), r;

	if (fd < 0)
		return FAILED;
	do
		r = flock(fd, LOCK_EX | (block ? 0 : LOCK_NB));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int busy = errno == EWOULDBLOCK;

		*errstr = strerror(errno);
		close(fd);
		return busy ? BUSY : FAILED;
	}
	if (!still_named(fd, path)) {
		close(fd);	/* the lock we got guards nothing any more */
		return RENAMED;
	}
	l->fd = fd;
	return TAKEN;
}

/* Until the lock is taken, found busy, or failed; the lock_try codes. */
static int take(struct lock *l, const char *target, int block, const char **errstr)
{
	char *path = lock_path(target);
	int r;

	if (path == NULL) {
		*errstr = strerror(errno);
		return -1;
	}
	do
		r = attempt(l, path, block, errstr);
	while (r == RENAMED);
	free(path);
	return r == TAKEN ? 0 : r == BUSY ? 1 : -1;
}

int lock_try(struct lock *l, const char *target, const char **errstr)
{
	return take(l, target, 0, errstr);
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int lock_wait(struct lock *l, const char *target, double seconds, const char **errstr)
{
	static const struct timespec pause = { 0, POLL_NS };
	double deadline = seconds_now() + seconds;
	int r;

	if (seconds < 0)
		return take(l, target, 1, errstr);
	while ((r = take(l, target, 0, errstr)) == 1 && seconds_now() < deadline)
		nanosleep(&pause, NULL);
	return r;
}

void lock_release(struct lock *l)
{
	if (l->fd < 0)
		return;
	close(l->fd);	/* drops the flock: this was its only descriptor */
	l->fd = -1;
}
