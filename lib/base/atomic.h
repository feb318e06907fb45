/* SPDX-License-Identifier: MIT */
/*
 * atomic.h - replace a file all at once or not at all.
 *
 * atomic_open creates a temporary file beside the target (same directory,
 * so rename(2) is atomic); atomic_commit checks, fsyncs and renames it into
 * place, then fsyncs the directory; atomic_abort removes it. Readers of the
 * target see the complete old file or the complete new one, never a mix.
 *
 * While a temporary file exists its name is registered so that the handlers
 * installed by atomic_remove_on_signals() can unlink it on SIGINT, SIGTERM,
 * SIGHUP or SIGPIPE before the signal takes its default action.
 */
#ifndef BFTOOLS_ATOMIC_H
#define BFTOOLS_ATOMIC_H

#ifdef __cplusplus
extern "C" {
#endif

struct atomic_file {
	int fd;			/* write the new contents here */
	char *target;		/* final path */
	char *temp;		/* temporary path, NULL once committed/aborted,
				   and NULL for a target written in place */
	int mode;		/* permission bits the new file gets */
};

/*
 * "dir/.base" + suffix for "dir/base", in memory the caller frees: the
 * temporary file's name (suffix ".PID.XXXXXX") and the lock file's
 * (lock.h). NULL with errno set: EISDIR for a name ending in '/', ENOENT
 * for "", ENOMEM.
 */
char *atomic_hidden_name(const char *target, const char *suffix);

/*
 * Where writing target leads, in memory the caller frees: the symbolic
 * links of its last component followed (a missing destination is where
 * the file will be made). A name for one of the process's descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one) sets *fd to
 * that descriptor, else *fd is -1. NULL with errno set (ELOOP, ENOMEM,
 * or readlink's).
 */
char *atomic_resolve(const char *target, int *fd);

/*
 * Returns 0, or -1 with *errstr set; af is then unusable. A symbolic link
 * is followed; a device, a FIFO or a name of a descriptor is written in
 * place (atomic.c); temporaries of target left by processes that no
 * longer exist are removed first.
 */
int atomic_open(struct atomic_file *af, const char *target, const char **errstr);

/* close (checked), fsync, rename. Returns 0, or -1 with *errstr (file aborted). */
int atomic_commit(struct atomic_file *af, const char **errstr);

/*
 * atomic_commit without its fsyncs (file and directory): readers still see
 * the old file or the new one whole, but after a crash of the machine the
 * target may be the old file, the new one, or one short of data. For
 * intermediate files that whatever runs after a crash writes again
 * (bfsplit --no-sync).
 */
int atomic_commit_unsynced(struct atomic_file *af, const char **errstr);

/* Remove the temporary file; safe to call after commit or abort. */
void atomic_abort(struct atomic_file *af);

/* Install the signal handlers described above. Call once, early. */
void atomic_remove_on_signals(void);

#ifdef __cplusplus
}
#endif

#endif
