/* SPDX-License-Identifier: MIT */
/*
 * stopwatch.c - the laps of stopwatch.h, in a build with -DBFTOOLS_STOPWATCH
 * only (a bench build for a lent machine); empty otherwise.
 */
#ifdef BFTOOLS_STOPWATCH
#define _GNU_SOURCE 1	/* RUSAGE_THREAD */
#endif
#include "stopwatch.h"

#ifdef BFTOOLS_STOPWATCH
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static const char *const lap_names[LAPS] = { "wait-batch", "wait-work", "wait-parts", "help",
					     "split", "consume", "lock" };
static _Thread_local double lap_seconds[LAPS];
static _Thread_local unsigned long lap_count[LAPS];

double stopwatch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void stopwatch_lap(enum stopwatch_lap lap, double seconds)
{
	lap_seconds[lap] += seconds;
	lap_count[lap]++;
}

static double seconds_of(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

void stopwatch_report(const char *what, double since)
{
	struct rusage ru = { 0 };

#ifdef RUSAGE_THREAD
	getrusage(RUSAGE_THREAD, &ru);
#endif
	fprintf(stderr, "stopwatch: %s: wall %.3f s; CPU of this thread so far %.3f s (user %.3f, system %.3f)",
		what, stopwatch_now() - since, seconds_of(&ru.ru_utime) + seconds_of(&ru.ru_stime),
		seconds_of(&ru.ru_utime), seconds_of(&ru.ru_stime));
	for (int lap = 0; lap < LAPS; lap++) {
		if (lap_count[lap] > 0)
			fprintf(stderr, "; %s %.3f s/%lu", lap_names[lap], lap_seconds[lap],
				lap_count[lap]);
		lap_seconds[lap] = 0;
		lap_count[lap] = 0;
	}
	fputc('\n', stderr);
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int stopwatch_not_built;
#endif
