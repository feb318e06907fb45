/* SPDX-License-Identifier: MIT */
/*
 * cputime.c - `make bench-threads`' stopwatch: runs `sh -c CMD` and prints
 * its wall time and CPU time (user + system, of the shell and everything it
 * waited for), in seconds, as "WALL CPU".
 *
 *   cputime CMD
 *
 * Why not /usr/bin/time: the machines lent for the 16-core figures have no
 * GNU time and no network to install it, and a static build of this file
 * travels with the static programs. The wall time is taken here too,
 * around fork and wait, so a shell's start-up between two `date` calls no
 * longer counts. Exit status: CMD's (2 when it could not be run, 128 + the
 * signal when one ended it).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: cputime CMD\n", stderr);
		return 2;
	}
	double start = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("cputime: fork");
		return 2;
	}
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", argv[1], (char *)NULL);
		perror("cputime: /bin/sh");
		_exit(127);
	}
	int status;
	struct rusage usage;
	if (wait4(pid, &status, 0, &usage) < 0) {
		perror("cputime: wait");
		return 2;
	}
	double wall = now() - start;
	printf("%.4f %.4f\n", wall, seconds(&usage.ru_utime) + seconds(&usage.ru_stime));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
