/* SPDX-License-Identifier: MIT */
/*
 * atomic.c - replace a file all at once or not at all.
 *
 *   atomic_open    mkstemp(".<basename>.<pid>.XXXXXX") in the target's
 *                  directory (rename(2) is only atomic within one file
 *                  system), mode of the file it replaces, else 0666 & ~umask
 *                  (temporaries of processes that no longer exist removed
 *                  first)
 *   atomic_commit  fsync, checked close, rename over the target, fsync the
 *                  directory so the rename itself survives a crash
 *   atomic_commit_unsynced  the same without either fsync: all at once
 *                  for readers, but not made durable (after a crash of
 *                  the machine the target may be old, new, or short of
 *                  data), for intermediate files that a run after a crash
 *                  writes again
 *   atomic_abort   close and unlink the temporary file
 *
 * A target that exists and is not a regular file (/dev/null, a FIFO, a
 * terminal) is opened and written directly: renaming over a device node
 * would replace the node, and "atomic" means nothing for a stream anyway.
 * A name for one of our own descriptors (/dev/stdout, /dev/fd/N,
 * /proc/self/fd/N, or a link to one) is written through that descriptor:
 * it is a stream whatever it leads to, and renaming over /dev/stdout
 * would replace the link for everybody. A symbolic link is followed: the
 * file it leads to is replaced (the link stays a link), as an editor
 * saving through a link does; so is the lock (lock.c), so a run through
 * the link and one on the file itself take turns.
 *
 * Stale temporaries: a process killed by SIGKILL (or a crash) cannot
 * remove its temporary, and nothing else knew it. Its name carries the
 * PID of its maker, so the next atomic_open of the same target removes
 * those whose maker no longer exists (kill(pid, 0) says ESRCH). A live
 * process's temporary is never touched: its PID exists. A PID reused by
 * an unrelated process only keeps a stale file a while longer. Processes
 * on other machines (NFS) or in another PID namespace are not seen: their
 * PIDs mean nothing here, so a temporary of theirs may be removed, and
 * their rename then fails with an error, never with a mixed file. The
 * directory is read once per save: a cost in proportion to its entries.
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

#include <dirent.h>
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
#define TEMP_X "XXXXXX"
#define LINKS_MAX 40	/* symbolic links followed before ELOOP, as the kernel does */

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

/* ---- where a target leads -------------------------------------------- */

/* The descriptor a name stands for (/dev/stdout, /dev/fd/N, /proc/self/fd/N), or -1. */
static int descriptor_named(const char *path)
{
	static const char *const standard[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	const char *p;
	long n;
	char *end;

	for (int i = 0; i < 3; i++)
		if (strcmp(path, standard[i]) == 0)
			return i;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (strncmp(path, dirs[i], strlen(dirs[i])) != 0)
			continue;
		p = path + strlen(dirs[i]);
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		n = strtol(p, &end, 10);
		return *end == '\0' && errno == 0 && n <= INT_MAX ? (int)n : -1;
	}
	return -1;
}

/* Where the link at path leads: its text, relative to path's directory unless absolute. */
static char *link_destination(const char *path)
{
	char text[PATH_MAX];
	const char *slash = strrchr(path, '/');
	ssize_t len = readlink(path, text, sizeof text - 1);
	size_t dirlen;
	char *next;

	if (len < 0)
		return NULL;
	text[len] = '\0';
	dirlen = slash && text[0] != '/' ? (size_t)(slash - path) + 1 : 0;
	next = malloc(dirlen + (size_t)len + 1);
	if (next == NULL)
		return NULL;
	memcpy(next, path, dirlen);
	memcpy(next + dirlen, text, (size_t)len + 1);
	return next;
}

char *atomic_resolve(const char *target, int *fd)
{
	char *path = strdup(target), *next;
	struct stat st;

	*fd = -1;
	for (int hops = 0; path != NULL; hops++) {
		if ((*fd = descriptor_named(path)) >= 0)
			return path;
		if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
			return path;	/* a file, or none yet: made here */
		next = hops < LINKS_MAX ? link_destination(path) : NULL;
		if (hops >= LINKS_MAX)
			errno = ELOOP;
		free(path);
		path = next;
	}
	return NULL;
}

/* The PID in name when it is a temporary of base (".BASE.PID.XXXXXX"), else 0. */
static long temp_pid(const char *name, const char *base, size_t baselen)
{
	const char *p = name + 2 + baselen;
	char *end;
	long pid;

	if (name[0] != '.' || strncmp(name + 1, base, baselen) != 0 || name[1 + baselen] != '.')
		return 0;
	if (*p < '1' || *p > '9')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno != 0 || pid > INT_MAX || *end != '.' || strlen(end + 1) != sizeof TEMP_X - 1)
		return 0;
	return pid;
}

/*
 * Remove the temporaries of target whose maker no longer exists (see the
 * top of this file). Best effort: a directory that cannot be read keeps
 * them, and nothing here can make the save itself fail.
 */
static void remove_stale(const char *target)
{
	const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
	char *dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	long pid;

	free(dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		pid = temp_pid(e->d_name, base, strlen(base));
		if (pid == 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			(void)unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* A name for our own descriptor n: written through a duplicate of it. */
static int open_descriptor(struct atomic_file *af, int n, const char **errstr)
{
	af->fd = fcntl(n, F_DUPFD_CLOEXEC, 0);
	if (af->fd < 0) {
		*errstr = strerror(errno);
		atomic_abort(af);
		return -1;
	}
	return 0;
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
	char suffix[32];

	snprintf(suffix, sizeof suffix, ".%ld.%s", (long)getpid(), TEMP_X);
	af->temp = atomic_hidden_name(af->target, suffix);
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

	int named;

	af->fd = -1;
	af->temp = NULL;
	af->target = atomic_resolve(target, &named);
	if (af->target == NULL) {
		*errstr = strerror(errno);
		return -1;
	}
	if (named >= 0)
		return open_descriptor(af, named, errstr);
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
	remove_stale(af->target);
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

/* close (checked), fsync when durable, rename; then, durable, the directory synced. */
static int commit(struct atomic_file *af, int durable, const char **errstr)
{
	sigset_t old;
	int fd = af->fd, ret = 0;

	af->fd = -1;
	if (durable && fsync(fd) < 0 && errno != EINVAL) {	/* EINVAL: a FIFO or a tty */
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
	if (durable)
		ret = sync_directory(af->target, errstr);
	atomic_abort(af);
	return ret;
}

int atomic_commit(struct atomic_file *af, const char **errstr)
{
	return commit(af, 1, errstr);
}

int atomic_commit_unsynced(struct atomic_file *af, const char **errstr)
{
	return commit(af, 0, errstr);
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
