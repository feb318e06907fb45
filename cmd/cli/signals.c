/* SPDX-License-Identifier: MIT */
/*
 * signals.c - stopping on SIGTERM, SIGINT and SIGHUP with what was read
 * saved, and --checkpoint: a snapshot of the filter written by a forked
 * child, every DURATION or every N lines. A timed one is taken on time
 * while the input is quiet too (cli_checkpoint_when_idle).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format.h"
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
static int stop_pipe[2] = { -1, -1 };

static void note_stop_signal(int sig)
{
	int saved = errno;

	int none = 0;

	atomic_compare_exchange_strong(&stop_signal, &none, sig);
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

/* Reap a finished snapshot; 1 while one is still being written. */
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
	if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		cp->saved++;
	else
		cp->failed++;	/* the child said why */
	return 0;
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
	r = w ? format_save_window_path(w, path, &why) : format_save_path(c, path, &why);

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

	if (cp->last_time == 0.0)
		cp->last_time = now;	/* the interval counts from the start */
	if (cp->seconds > 0.0 ? now - cp->last_time < cp->seconds
			      : cp->lines == 0 || lines - cp->last_lines < cp->lines)
		return;
	if (lines == cp->last_lines)
		return;	/* quiet since the last snapshot: the same state again */
	if (checkpoint_busy(cp, 0))
		return;
	/* what the snapshot holds must be on its way out first */
	if (out != NULL && writer_flush(out) < 0)
		cli_write_error(errno);
	pid = fork();
	if (pid == 0)
		write_snapshot(c, w, path);
	if (pid < 0) {
		cp->failed++;
		cli_warn("%s: checkpoint failed: cannot fork: %s", path, strerror(errno));
	}
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
