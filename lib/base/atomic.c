/* SPDX-License-Identifier: MIT */
/*
 * atomic.c - replace a file all at once or not at all.
 *
 *   atomic_open    mkstemp(".<basename>.XXXXXX") in the target's directory
 *                  (rename(2) is only atomic within one file system), mode
 *                  of the file it replaces, else 0666 & ~umask
 *   atomic_commit  fsync, checked close, rename over the target, fsync the
 *                  directory so the rename itself survives a crash
 *   atomic_abort   close and unlink the temporary file
 *
 * A target that exists and is not a regular file (/dev/null, a FIFO, a
 * terminal) is opened and written directly: renaming over a device node
 * would replace the node, and "atomic" means nothing for a stream anyway.
 * A symbolic link is replaced by the new file, not followed.
 *
 * Signals: pending temporary names live in a small static table of plain
 * char arrays, so the handler needs nothing but unlink(2), sigaction(2) and
 * raise(3), all async-signal-safe. The table is only changed with the
 * cleanup signals blocked, so the handler never sees half an entry. More
 * than PENDING_MAX temporaries at once still work; the extra ones are just
 * not cleaned up on a signal.
 *
 * Deliberately absent: keeping the old file's owner or ACLs, and locking
 * against other writers (here the last rename wins; callers that read the
 * file before replacing it take turns through lock.h).
 */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>	/* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PENDING_MAX 8
#define PENDING_PATH PATH_MAX
#define TEMP_SUFFIX ".XXXXXX"

static char pending_path[PENDING_MAX][PENDING_PATH];
static volatile sig_atomic_t pending_used[PENDING_MAX];

static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGPIPE, SIGTERM };
#define NSIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])

/* ---- the pending table ------------------------------------------------ */

static void block_cleanup_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
	int saved = errno;

	sigprocmask(SIG_SETMASK, old, NULL);
	errno = saved;
}

/* Call with the cleanup signals blocked. */
static void register_temp(const char *path)
{
	size_t len = strlen(path);

	if (len >= PENDING_PATH)
		return;
	for (size_t i = 0; i < PENDING_MAX; i++) {
		if (pending_used[i])
			continue;
		memcpy(pending_path[i], path, len + 1);
		pending_used[i] = 1;
		return;
	}
}

/* Call with the cleanup signals blocked. */
static void unregister_temp(const char *path)
{
	for (size_t i = 0; i < PENDING_MAX; i++) {
		if (pending_used[i] && strcmp(pending_path[i], path) == 0) {
			pending_used[i] = 0;
			return;
		}
	}
}

static void remove_pending_and_die(int sig)
{
	struct sigaction dfl;

	for (size_t i = 0; i < PENDING_MAX; i++)
		if (pending_used[i])
			unlink(pending_path[i]);
	dfl.sa_handler = SIG_DFL;
	dfl.sa_flags = 0;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);	/* pending until we return, then the default action */
}

void atomic_remove_on_signals(void)
{
	struct sigaction old, sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = remove_pending_and_die;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (size_t i = 0; i < NSIGNALS; i++) {
		if (sigaction(cleanup_signals[i], NULL, &old) < 0)
			continue;
		/* Ignored at startup (nohup, a shell's trap ''): keep it so. */
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			continue;
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* ---- names and modes -------------------------------------------------- */

char *atomic_hidden_name(const char *target, const char *suffix)
{
	const char *slash = strrchr(target, '/');
	size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
	size_t baselen = strlen(target + dirlen), suffixlen = strlen(suffix) + 1;
	char *name;

	if (baselen == 0) {
		errno = *target ? EISDIR : ENOENT;
		return NULL;
	}
	name = malloc(dirlen + 1 + baselen + suffixlen);
	if (name == NULL)
		return NULL;
	memcpy(name, target, dirlen);
	name[dirlen] = '.';
	memcpy(name + dirlen + 1, target + dirlen, baselen);
	memcpy(name + dirlen + 1 + baselen, suffix, suffixlen);
	return name;
}

static mode_t default_mode(void)
{
	mode_t mask = umask(0);	/* the only way to read it: set, then put back */

	umask(mask);
	return 0666 & ~mask;
}

/* Open an existing non-regular target (a device, a FIFO) for writing in place. */
static int open_in_place(struct atomic_file *af, const char **errstr)
{
	do
		af->fd = open(af->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
	while (af->fd < 0 && errno == EINTR);
	if (af->fd < 0) {
		*errstr = strerror(errno);
		atomic_abort(af);
		return -1;
	}
	return 0;
}

static int open_temp(struct atomic_file *af, const char **errstr)
{
	sigset_t old;
	int err;

	af->temp = atomic_hidden_name(af->target, TEMP_SUFFIX);
	if (af->temp == NULL) {
		*errstr = strerror(errno);
		atomic_abort(af);
		return -1;
	}
	block_cleanup_signals(&old);
	af->fd = mkstemp(af->temp);
	err = errno;
	if (af->fd >= 0)
		register_temp(af->temp);
	restore_signals(&old);
	if (af->fd < 0) {
		free(af->temp);
		af->temp = NULL;
		*errstr = strerror(err);
		atomic_abort(af);
		return -1;
	}
	if (fchmod(af->fd, (mode_t)af->mode) < 0) {
		*errstr = strerror(errno);
		atomic_abort(af);
		return -1;
	}
	return 0;
}

int atomic_open(struct atomic_file *af, const char *target, const char **errstr)
{
	struct stat st;

	af->fd = -1;
	af->temp = NULL;
	af->target = strdup(target);
	if (af->target == NULL) {
		*errstr = strerror(ENOMEM);
		return -1;
	}
	af->mode = (int)default_mode();
	if (stat(target, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			*errstr = strerror(EISDIR);
			atomic_abort(af);
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return open_in_place(af, errstr);
		af->mode = (int)(st.st_mode & 07777);
	}
	return open_temp(af, errstr);
}

/* ---- commit and abort ------------------------------------------------- */

/* Make the rename durable. Some file systems cannot fsync a directory (EINVAL). */
static int sync_directory(const char *target, const char **errstr)
{
	const char *slash = strrchr(target, '/');
	char *dir;
	int fd, err = 0;

	if (slash == NULL)
		dir = strdup(".");
	else
		dir = strndup(target, slash == target ? 1 : (size_t)(slash - target));
	if (dir == NULL) {
		*errstr = strerror(ENOMEM);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)	/* a directory we may write but not read: nothing to sync with */
		return 0;
	if (fsync(fd) < 0 && errno != EINVAL)
		err = errno;
	close(fd);
	if (err != 0) {
		*errstr = strerror(err);
		return -1;
	}
	return 0;
}

static int commit_fail(struct atomic_file *af, int err, const char **errstr)
{
	*errstr = strerror(err);
	atomic_abort(af);
	return -1;
}

int atomic_commit(struct atomic_file *af, const char **errstr)
{
	sigset_t old;
	int fd = af->fd, ret;

	af->fd = -1;
	if (fsync(fd) < 0 && errno != EINVAL) {	/* EINVAL: a FIFO or a tty */
		int err = errno;

		close(fd);
		return commit_fail(af, err, errstr);
	}
	if (close(fd) < 0)
		return commit_fail(af, errno, errstr);
	if (af->temp == NULL) {	/* written in place */
		atomic_abort(af);
		return 0;
	}
	if (rename(af->temp, af->target) < 0)
		return commit_fail(af, errno, errstr);
	block_cleanup_signals(&old);
	unregister_temp(af->temp);
	restore_signals(&old);
	free(af->temp);
	af->temp = NULL;
	/* The new file is in place now; only its durability can still fail. */
	ret = sync_directory(af->target, errstr);
	atomic_abort(af);
	return ret;
}

void atomic_abort(struct atomic_file *af)
{
	sigset_t old;

	if (af->fd >= 0) {
		close(af->fd);
		af->fd = -1;
	}
	if (af->temp != NULL) {
		block_cleanup_signals(&old);
		unlink(af->temp);
		unregister_temp(af->temp);
		restore_signals(&old);
		free(af->temp);
		af->temp = NULL;
	}
	free(af->target);
	af->target = NULL;
}
