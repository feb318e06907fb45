/* SPDX-License-Identifier: MIT */
/*
 * signals.c - stopping on SIGTERM, SIGINT and SIGHUP with what was read
 * saved, and --checkpoint: a snapshot of the filter written by a forked
 * child, every DURATION or every N lines. A timed one is taken on time
 * while the input is quiet too (cli_checkpoint_when_idle).
 *
 * Delivered, not just written: a line write(2) put in a pipe is not yet
 * read, and a reader killed then never gets it. A state recording its key
 * would make every later run skip a line nobody received. So before a
 * snapshot, and before the final save (cli_await_delivery), the program
 * waits until the reader of its output pipe has taken every byte
 * (FIONREAD on the pipe says how many are left). The writer does not stop
 * for it between snapshots: the cost is a pipe's drain per snapshot
 * (README, "Promises, measured"). A reader gone with bytes unread is
 * what a write to it would meet: SIGPIPE, or EPIPE where that is
 * ignored. What can be known ends at the reader's read(2): what it did
 * with the line after, nobody can tell.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcso.h"
#include "format.h"
#include "layout.h"
#include "lines.h"
#include "numparse.h"

/*
 * Stopping on a signal (cli_stop_on_signals): the handler only notes the
 * first signal and writes a byte to a pipe; every input reader polls that
 * pipe beside its input (lines_stop_when_readable), so a read blocked on
 * `tail -f` ends at once. What was read is finished in order, and the
 * caller saves and exits with cli_stop_signal().
 */
/* atomic: the reader thread reads it (a lock-free atomic is safe in a handler) */
static atomic_int stop_signal;
static atomic_int stops;	/* how many signals came: a wait ends at a new one */
static int stop_pipe[2] = { -1, -1 };

static void note_stop_signal(int sig)
{
	int saved = errno;

	int none = 0;

	atomic_compare_exchange_strong(&stop_signal, &none, sig);
	atomic_fetch_add(&stops, 1);
	if (write(stop_pipe[1], "s", 1) < 0) {
		/* full (a byte is there already) or closed: nothing to do */
	}
	errno = saved;
}

/*
 * Whether sig was ignored when the program started: nohup ignores SIGHUP
 * so that a job outlives its terminal, and a signal ignored so stays
 * ignored here, as it does for the temporary files (atomic.c).
 */
static int ignored(int sig)
{
	struct sigaction old;

	return sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
	       old.sa_handler == SIG_IGN;
}

void cli_stop_on_signals(void)
{
	static const int signals[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;

	if (pipe(stop_pipe) < 0)
		cli_fatal("cannot watch for signals: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		(void)fcntl(stop_pipe[i], F_SETFD, FD_CLOEXEC);
	(void)fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = note_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
		if (!ignored(signals[i]))
			(void)sigaction(signals[i], &sa, NULL);
	lines_stop_when_readable(stop_pipe[0]);
}

int cli_stop_signal(void)
{
	return atomic_load(&stop_signal);
}

int cli_wait_readable(int fd)
{
	struct pollfd fds[2] = { { fd, POLLIN, 0 }, { stop_pipe[0], POLLIN, 0 } };
	nfds_t n = stop_pipe[0] < 0 ? 1 : 2;
	int ready;

	for (;;) {
		ready = poll(fds, n, -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0 || fds[0].revents)
			return 0;	/* readable, at its end, or for read(2) to report */
		if (n == 2 && fds[1].revents)
			return 1;
	}
}

/* Whether the readers of the pipe fd have all gone (its write end reports POLLERR). */
static int reader_gone(int fd)
{
	struct pollfd p = { fd, 0, 0 };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLERR);
}

/* What a write to a pipe with no reader meets: SIGPIPE, or EPIPE where it is ignored. */
static _Noreturn void as_broken_pipe(void)
{
	pipeline_halt();
	raise(SIGPIPE);
	cli_write_error(EPIPE);
}

int cli_await_delivery(int fd)
{
	struct timespec pause = { 0, 50000 };	/* 50 us, doubled up to 10 ms */
	int before = atomic_load(&stops), unread;
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return 0;	/* a file, a terminal: write(2) returning is all there is */
	for (;;) {
		if (ioctl(fd, FIONREAD, &unread) < 0 || unread <= 0)
			return 0;
		if (reader_gone(fd))
			as_broken_pipe();
		if (atomic_load(&stops) != before)
			return 1;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 10000000L)
			pause.tv_nsec *= 2;
	}
}

void cli_checkpoint_option(struct cli_checkpoint *cp, const char *arg)
{
	const char *why;

	uint64_t seconds;

	memset(cp, 0, sizeof *cp);
	if (numparse_duration(arg, 1, UINT64_MAX, &seconds, &why) == 0) {
		cp->seconds = (double)seconds;
		return;
	}
	if (numparse_count(arg, 1, UINT64_MAX, &cp->lines, &why) < 0)
		cli_usage_error("invalid --checkpoint '%s': not a duration (30s, 10m, 1h) or a line count", arg);
}

/*
 * Reap a finished snapshot; 1 while one is still being written. One that
 * failed ends the run, exit 2: going on would let the user believe the
 * state is kept while it is not (the child said why, on one line; the
 * state is what the last save left).
 */
static int checkpoint_busy(struct cli_checkpoint *cp, int wait)
{
	int status;
	pid_t got;

	if (cp->child == 0)
		return 0;
	do
		got = waitpid((pid_t)cp->child, &status, wait ? 0 : WNOHANG);
	while (got < 0 && errno == EINTR);
	if (got == 0)
		return 1;
	cp->child = 0;
	if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		cp->saved++;
		return 0;
	}
	cp->failed++;
	if (got < 0)
		cli_fatal("%s: checkpoint failed: %s", cp->path, strerror(errno));
	if (WIFSIGNALED(status))	/* it could not say why: say what we know */
		cli_fatal("%s: checkpoint failed: killed by signal %d", cp->path, WTERMSIG(status));
	pipeline_halt();
	exit(EXIT_TROUBLE);	/* the child said why */
}

/* The child: write the snapshot, atomically, and say nothing unless it fails. */
static _Noreturn void write_snapshot(const struct cascade *c, const struct window *w,
				      const char *path)
{
	const char *why;
	int r;

	/*
	 * Only this thread was copied into the child, and another may have
	 * held a lock at the fork: start no thread here (saves compress on
	 * this one alone) and touch nothing but the filter and the file.
	 */
	pipeline_set_threads(1);
	if (w != NULL)
		r = format_save_window_path(w, path, &why);
	else if (layout_has(cascade_params(c)->layout, LAYOUT_FOREIGN))	/* DCSO, as it came */
		r = dcso_save_path(c, path, c->dcso_gzip, &why);
	else
		r = format_save_path(c, path, &why);

	if (r < 0) {
		cli_warn("%s: checkpoint failed: %s", path, why);
		_exit(EXIT_TROUBLE);
	}
	_exit(0);
}

void cli_checkpoint_due(struct cli_checkpoint *cp, const struct cascade *c, const struct window *w,
			const char *path, struct writer *out, uint64_t lines)
{
	double now = cli_seconds_now();
	pid_t pid;

	cp->path = path;
	checkpoint_busy(cp, 0);	/* one that failed ends the run now, not at the next */
	if (cp->last_time == 0.0)
		cp->last_time = now;	/* the interval counts from the start */
	if (cp->seconds > 0.0 ? now - cp->last_time < cp->seconds
			      : cp->lines == 0 || lines - cp->last_lines < cp->lines)
		return;
	if (lines == cp->last_lines)
		return;	/* quiet since the last snapshot: the same state again */
	if (checkpoint_busy(cp, 0))
		return;
	/* what the snapshot holds must have been read from the output first */
	if (out != NULL && writer_flush(out) < 0)
		cli_write_error(errno);
	if (out != NULL && cli_await_delivery(out->fd) != 0)
		return;	/* a signal: the run is ending, and its save waits the same way */
	pid = fork();
	if (pid == 0)
		write_snapshot(c, w, path);
	if (pid < 0)
		cli_fatal("%s: checkpoint failed: cannot fork: %s", path, strerror(errno));
	cp->child = pid > 0 ? pid : 0;
	cp->last_time = now;
	cp->last_lines = lines;
}

/*
 * The reader wakes at least every half interval and at least once a
 * second while the input is quiet, so a snapshot comes at most that late:
 * a second or so on top of the interval.
 */
void cli_checkpoint_when_idle(const struct cli_checkpoint *cp, void (*idle)(void *ctx))
{
	double ms = cp->seconds * 500.0;

	if (cp->seconds > 0.0)
		cli_inputs_when_idle(ms < 1000.0 ? (unsigned)ms : 1000u, idle);
}

void cli_checkpoint_finish(struct cli_checkpoint *cp)
{
	checkpoint_busy(cp, 1);
}
