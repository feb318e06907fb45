/* SPDX-License-Identifier: MIT */
/*
 * stopwatch.h - where a run's wall time goes, for the measurements on a
 * lent many-core machine (tests/bench/threads-lent.sh), which get one call
 * and must come back with the bottleneck as well as the ratios.
 *
 * Built in only with -DBFTOOLS_STOPWATCH (make bench-threads-static makes
 * such a bfuniq and bfbuild beside the plain ones); otherwise STOPWATCH is
 * its statement and the rest nothing, so the programs carry none of it.
 * Laps are kept per thread: the calling thread of an ordered run is the
 * one whose time matters (every batch waits for it).
 */
#ifndef BFTOOLS_STOPWATCH_H
#define BFTOOLS_STOPWATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* What a lap of the calling thread was spent on. */
enum stopwatch_lap {
	LAP_WAIT_BATCH,		/* for the reader to fill the next batch */
	LAP_WAIT_WORK,		/* for others to finish its batch's work */
	LAP_WAIT_PARTS,		/* for others to finish its batch's parts */
	LAP_HELP,		/* doing parts meanwhile */
	LAP_SPLIT,		/* splitting batches into parts */
	LAP_CONSUME,		/* the program's ordered step */
	LAP_LOCK,		/* taking the pipeline's mutex */
	LAPS
};

#ifdef BFTOOLS_STOPWATCH
double stopwatch_now(void);
void stopwatch_lap(enum stopwatch_lap lap, double seconds);
/*
 * One line on stderr: "stopwatch: WHAT: wall W s; CPU of this thread so
 * far C s (user, system)", then each lap taken since the last report
 * (seconds/count); since is stopwatch_now() at the start of WHAT. The
 * laps start again.
 */
void stopwatch_report(const char *what, double since);
#define STOPWATCH(lap, stmt)                                      \
	do {                                                      \
		double stopwatch_start_ = stopwatch_now();        \
		stmt;                                             \
		stopwatch_lap((lap), stopwatch_now() - stopwatch_start_); \
	} while (0)
#else
#define stopwatch_now() 0.0
#define stopwatch_report(what, since) ((void)(what), (void)(since))
#define STOPWATCH(lap, stmt) \
	do {                 \
		stmt;        \
	} while (0)
#endif

#ifdef __cplusplus
}
#endif

#endif
