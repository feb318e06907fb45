/* SPDX-License-Identifier: MIT */
/*
 * test_lock.c - the lock of a file being updated: named .NAME.lock beside
 * it, held by one process at a time, released by lock_release or by the
 * holder's end, never left on a lock file that was replaced meanwhile.
 * And where the file being updated is (atomic.h): a symbolic link
 * followed, for the file and for its lock; a name of a descriptor told
 * apart; temporaries of processes that have ended removed, a live one's
 * kept.
 *
 * "Another process" is a forked child. Parent and child step in turn
 * through pipes, so no outcome depends on timing: where a test waits
 * (lock_wait with a deadline, a pause to let a child block), the result
 * is the same whichever side gets there first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "lock.h"
#include "unit.h"

static char dir[] = "/tmp/bftools-lock-XXXXXX";

static const char *path_in_dir(const char *name)
{
	static char path[4][128];	/* a test holds up to four at once */
	static int next;

	next = (next + 1) % 4;
	snprintf(path[next], sizeof path[next], "%s/%s", dir, name);
	return path[next];
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return status;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int path_is(const char *target, const char *want)
{
	char *got = lock_path(target);
	int same = got != NULL && strcmp(got, want) == 0;

	free(got);
	return same;
}

static void named_beside_the_target(void)
{
	CHECK(path_is("cc.bf", ".cc.bf.lock"));
	CHECK(path_is("dir/cc.bf", "dir/.cc.bf.lock"));
	CHECK(path_is("/a/b/state", "/a/b/.state.lock"));
	CHECK(path_is("/x", "/.x.lock"));
	CHECK(lock_path("dir/") == NULL && errno == EISDIR);
	CHECK(lock_path("") == NULL && errno == ENOENT);
}

static void taken_before_the_target_exists_and_kept(void)
{
	struct lock l = LOCK_INIT, a = LOCK_INIT, b = LOCK_INIT;
	const char *why, *target = path_in_dir("new.bf");
	const char *lock_file = path_in_dir(".new.bf.lock");
	struct stat st;

	CHECK(lock_try(&l, target, &why) == 0);
	CHECK(l.fd >= 0);
	CHECK(!exists(target));	/* the target is the caller's to create */
	CHECK(stat(lock_file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
	CHECK((fcntl(l.fd, F_GETFD) & FD_CLOEXEC) != 0);
	lock_release(&l);
	CHECK(l.fd == -1);
	lock_release(&l);	/* twice is nothing */
	CHECK(exists(lock_file));	/* never removed: see lock.c */
	/* a second lock in one process is a second holder: refused while the first holds */
	CHECK(lock_try(&a, target, &why) == 0);
	CHECK(lock_try(&b, target, &why) == 1 && b.fd == -1);
	lock_release(&a);
	CHECK(lock_try(&b, target, &why) == 0);
	lock_release(&b);
	unlink(lock_file);
}

/*
 * A child that takes the lock of target, writes one byte to *ready, and
 * holds it until *go is closed; then it releases (explicitly when
 * release, else by ending) and exits 0. -1 when it cannot start.
 */
static pid_t start_holder(const char *target, int release, int *ready, int *go)
{
	int up[2], down[2];
	pid_t pid;

	if (pipe(up) < 0 || pipe(down) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct lock l = LOCK_INIT;
		const char *why;
		char c;

		close(up[0]);
		close(down[1]);
		if (lock_try(&l, target, &why) != 0)
			_exit(2);
		if (write(up[1], "h", 1) != 1)
			_exit(3);
		while (read(down[0], &c, 1) > 0)
			;
		if (release)
			lock_release(&l);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	*ready = up[0];
	*go = down[1];
	return pid;
}

static void one_holder_at_a_time(int release)
{
	struct lock l = LOCK_INIT;
	const char *why, *target = path_in_dir("shared.bf");
	int ready, go;
	char c;
	pid_t pid = start_holder(target, release, &ready, &go);

	CHECK(pid > 0);
	CHECK(read(ready, &c, 1) == 1);	/* the child holds it now */
	close(ready);
	CHECK(lock_try(&l, target, &why) == 1 && l.fd == -1);
	CHECK(lock_wait(&l, target, 0.1, &why) == 1 && l.fd == -1);
	close(go);
	/* however the child lets go, a waiter gets the lock */
	CHECK(lock_wait(&l, target, -1.0, &why) == 0);
	CHECK(child_status(pid) == 0);
	lock_release(&l);
	unlink(path_in_dir(".shared.bf.lock"));
}

static void released_explicitly(void)
{
	one_holder_at_a_time(1);
}

static void released_when_the_holder_ends(void)
{
	one_holder_at_a_time(0);
}

/*
 * A waiter blocked on a lock file that is replaced (deleted and made
 * anew, say) must not run on the old one once it is released: the new
 * one is held by another, so the waiter starts again and waits for that.
 */
static void a_replaced_lock_file_is_not_trusted(void)
{
	struct lock old = LOCK_INIT, fresh = LOCK_INIT;
	const char *why, *target = path_in_dir("moved.bf");
	const char *lock_file = path_in_dir(".moved.bf.lock");
	const char *other = path_in_dir("other");
	int fd, status;
	pid_t pid;

	CHECK(lock_try(&old, target, &why) == 0);
	pid = fork();
	if (pid == 0) {
		struct lock l = LOCK_INIT;

		lock_release(&old);	/* fork shares the parent's lock: let go of this copy */
		_exit(lock_wait(&l, target, -1.0, &why) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	pause_ms(200);	/* lets the child block on the old file; not needed for the outcome */
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK(rename(other, lock_file) == 0);
	CHECK(lock_try(&fresh, target, &why) == 0);
	lock_release(&old);
	pause_ms(300);
	/* still waiting: the lock it got, if any, guards nothing now */
	CHECK(waitpid(pid, &status, WNOHANG) == 0);
	lock_release(&fresh);
	status = child_status(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unlink(lock_file);
}

static void a_symbolic_link_is_not_followed(void)
{
	struct lock l = LOCK_INIT;
	const char *why = NULL, *target = path_in_dir("linked.bf");
	const char *lock_file = path_in_dir(".linked.bf.lock");
	const char *victim = path_in_dir("victim");

	CHECK(symlink("victim", lock_file) == 0);
	CHECK(lock_try(&l, target, &why) == -1 && l.fd == -1);
	CHECK(strstr(why, "symbolic link") != NULL);
	CHECK(!exists(victim));
	unlink(lock_file);
	CHECK(mkdir(lock_file, 0755) == 0);
	CHECK(lock_try(&l, target, &why) == -1 && l.fd == -1);
	rmdir(lock_file);
}

static int resolves_to(const char *target, const char *want, int want_fd)
{
	int fd;
	char *got = atomic_resolve(target, &fd);
	int same = got != NULL && strcmp(got, want) == 0 && fd == want_fd;

	free(got);
	return same;
}

static void links_followed_descriptors_named(void)
{
	char real[128], link[128], chain[128], loop[128], want[160];

	/* copies: path_in_dir's buffers are reused after four calls */
	snprintf(real, sizeof real, "%s", path_in_dir("real.bf"));
	snprintf(link, sizeof link, "%s", path_in_dir("link.bf"));
	snprintf(chain, sizeof chain, "%s", path_in_dir("chain.bf"));
	snprintf(loop, sizeof loop, "%s", path_in_dir("loop.bf"));

	CHECK(symlink("real.bf", link) == 0);	/* relative: beside the link */
	CHECK(symlink(link, chain) == 0);	/* absolute, to a link */
	CHECK(resolves_to(link, real, -1));
	CHECK(resolves_to(chain, real, -1));
	CHECK(resolves_to(real, real, -1));	/* missing: made there */
	snprintf(want, sizeof want, "%s/.real.bf.lock", dir);
	CHECK(path_is(link, want));	/* the file's lock, not the link's */
	CHECK(resolves_to("/dev/stdout", "/dev/stdout", 1));
	CHECK(resolves_to("/dev/fd/7", "/dev/fd/7", 7));
	CHECK(resolves_to("/proc/self/fd/12", "/proc/self/fd/12", 12));
	CHECK(resolves_to("/dev/fd/x", "/dev/fd/x", -1));
	unlink(chain);
	CHECK(symlink("/proc/self/fd/1", chain) == 0);	/* as /dev/stdout is */
	CHECK(resolves_to(chain, "/proc/self/fd/1", 1));
	unlink(chain);
	CHECK(symlink("loop.bf", loop) == 0);
	CHECK(resolves_to(loop, "", -1) == 0 && errno == ELOOP);
	unlink(loop);
	unlink(link);
}

static void dead_temporaries_removed_live_ones_kept(void)
{
	struct atomic_file af;
	const char *why = NULL, *target = path_in_dir("t.bf");	/* the only call here */
	char dead[160], live[160], other[160];
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(0);
	CHECK(waitpid(pid, &status, 0) == pid);
	snprintf(dead, sizeof dead, "%s/.t.bf.%ld.AbCdEf", dir, (long)pid);
	snprintf(live, sizeof live, "%s/.t.bf.%ld.AbCdEf", dir, (long)getppid());
	snprintf(other, sizeof other, "%s/.u.bf.%ld.AbCdEf", dir, (long)pid);
	close(open(dead, O_WRONLY | O_CREAT, 0600));
	close(open(live, O_WRONLY | O_CREAT, 0600));
	close(open(other, O_WRONLY | O_CREAT, 0600));
	CHECK(atomic_open(&af, target, &why) == 0);
	CHECK(strstr(af.temp, ".t.bf.") != NULL);
	CHECK(kill(pid, 0) == 0 || exists(dead) == 0);	/* unless the PID was reused at once */
	CHECK(exists(live));
	CHECK(exists(other));
	CHECK(atomic_commit(&af, &why) == 0);
	unlink(target);
	unlink(live);
	unlink(other);
	unlink(dead);
}

void suite_lock(void)
{
	if (mkdtemp(dir) == NULL) {
		unit_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	unit_run("lock: the lock of dir/NAME is the file dir/.NAME.lock", named_beside_the_target);
	unit_run("lock: taken before the target exists, close-on-exec, the lock file kept", taken_before_the_target_exists_and_kept);
	unit_run("lock: another process waits while it is held, and gets it once released", released_explicitly);
	unit_run("lock: a holder that ends releases it", released_when_the_holder_ends);
	unit_run("lock: a waiter does not trust a lock file replaced while it waited", a_replaced_lock_file_is_not_trusted);
	unit_run("lock: a symbolic link or a directory as lock file is refused", a_symbolic_link_is_not_followed);
	unit_run("atomic: links followed (the lock too), descriptor names told apart", links_followed_descriptors_named);
	unit_run("atomic: temporaries of ended processes removed, a live one's kept", dead_temporaries_removed_live_ones_kept);
	rmdir(dir);
}
