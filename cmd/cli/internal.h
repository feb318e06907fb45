/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the files of the CLI layer (cmd/cli/) share among
 * themselves and no program needs: the programs include cli.h alone.
 *
 * The layer by concern, a file each:
 *   messages.c  "PROG: WHAT: WHY" lines, exit codes, --help, --version
 *   options.c   option values, the options every program takes, getopt
 *   sipkey.c    the SipHash key policy: --key-file, kept-outside keys
 *   store.c     loading and saving filters and sketches; update locks
 *   progress.c  the progress line on stderr
 *   signals.c   stopping on signals; checkpoints
 *   inputs.c    the inputs read in order through the batch pipeline
 *   ranged.c    regular files read in ranges by every thread
 *   inorder.c   a regular file read in ranges, consumed in file order
 *   keys.c      the keys of a batch, hashed on the workers
 *   output.c    checked standard output
 *   window.c    the window options (cli_window.h)
 *   fields.c    the key group, field lists, --header and --csv (cli_fields.h)
 *   shape.c     the filter-shape group (cli_shape.h)
 */
#ifndef BFTOOLS_CLI_INTERNAL_H
#define BFTOOLS_CLI_INTERNAL_H

#include <stdint.h>

#include "../cli.h"

#define MEMORY_ENV "BFTOOLS_MAX_MEMORY"

/* options.c: -k's text as given, for fields.c to read as JSON paths */
extern const char *cli_field_text;

/* options.c: --no-wait was given */
extern int cli_no_wait;
/* options.c: compressed inputs are decompressed (no --no-decompress) */
extern int cli_decompress;

/* messages.c: flush stdio's stdout; a write error is fatal */
void cli_stdio_finish(void);

/* signals.c: wait until fd is readable (or at its end); 1 when a stop signal came first. */
int cli_wait_readable(int fd);

/* sipkey.c */
void cli_read_key_file(unsigned char key[16]);
/* Why a DCSO filter cannot be used by this program, or NULL when it can. */
const char *cli_dcso_unusable(void);
/* A loaded filter's key from --key-file, where it is kept outside; checked otherwise. */
void cli_apply_key_file(struct cascade *c, const char *name);

/* progress.c */
double cli_seconds_now(void);
/* Loading or saving a filter file named label: progress by its bytes. */
void cli_progress_file(const char *label);
/* Reading inputs of total bytes (0: unknown). */
void cli_progress_inputs(uint64_t total);
/* Total size of the inputs when all are regular files, else 0. */
uint64_t cli_progress_inputs_size(char *const *paths, int npaths);
/* Lines and bytes of input read so far; cli_progress_at draws them when due. */
void cli_progress_set(uint64_t lines, uint64_t bytes);
void cli_progress_at(uint64_t lines, uint64_t bytes);
uint64_t cli_progress_lines(void);
/* The inputs' last report (where stderr is not a terminal), then the line cleared. */
void cli_progress_inputs_end(void);

/* inputs.c */
extern int cli_inputs_quiet, cli_inputs_recursive;
extern char *const cli_standard_input[];
/*
 * From now on, when an input read in order (not in ranges) gives no record
 * for ms, idle(ctx) is called on the calling thread between batches, and
 * again every ms while it stays quiet; ctx is cli_each_batch's.
 */
void cli_inputs_when_idle(unsigned ms, void (*idle)(void *ctx));
/*
 * paths[0..npaths) through the ordered pipeline, their bytes counted on
 * from *base (updated); more: other inputs follow them. Returns the
 * inputs' status; *stopped is set when the program stopped the run.
 */
int cli_ordered_inputs(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
		       const struct cli_input_events *events, void *ctx, uint64_t *base,
		       int more, int *stopped);
struct lines_batch;
/* The batch about to be consumed, b, and its first record's line number, for cli_batch_line. */
void cli_batch_lines_set(uint64_t first_line, const struct lines_batch *b);
/* The inputs ended at a clean cut (cli_inputs_cut). */
void cli_inputs_cut_set(void);

/* ranged.c */
/*
 * How many threads should read path in ranges, with the bytes [*start,
 * *end) to read: more than 1 only for a regular file big enough
 * (standard input too, from its offset) and not compressed. 1: read it as
 * a stream. -1 with errno: its first bytes could not be read.
 */
int cli_ranged_plan(const char *path, int threads, uint64_t *start, uint64_t *end);

/* inorder.c */
/*
 * path, open on fd, its bytes [start, end) (a record beginning at start)
 * read in ranges on every thread and consumed through stage in file
 * order, their bytes counted for progress from base. Returns the input's
 * status (0, or -1 after its read error was reported in its place);
 * *stopped is set when the program stopped the run.
 */
int cli_read_in_order(const char *path, int fd, uint64_t start, uint64_t end, char delim,
		      const struct cli_stage *stage, void *ctx, uint64_t base, int *stopped);

/* output.c */
/* stdout's writing thread, if any, done and stopped (for cli_fatal, before exit). */
void cli_stdout_halt(void);

#endif
