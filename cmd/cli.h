/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what every bftools program does the same way: messages and exit
 * codes, option values, reading the input files batch by batch, checked
 * output. The only shared code that prints or exits; lib/ does neither.
 *
 * Messages are "PROG: WHAT: WHY" on stderr. Exit status follows grep:
 * 0 selected/success, 1 nothing selected, 2 trouble.
 */
#ifndef BFTOOLS_CLI_H
#define BFTOOLS_CLI_H

#include <stddef.h>
#include <getopt.h>
#include <stdint.h>

#include "cascade.h"
#include "filter.h"
#include "keys.h"
#include "line.h"
#include "writer.h"

#define EXIT_NONE 1
#define EXIT_TROUBLE 2

/* Records handed to a program's worker per call. */
#define CLI_BATCH 4096

extern const char *cli_progname;

/* Name the program; install the temp-file cleanup for SIGINT/SIGTERM. */
void cli_init(const char *progname);

void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void cli_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, then "Try 'PROG --help'...", exit 2. */
_Noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long with the messages worded here: call with an optstring that
 * starts with ':'; it reports an unknown option or a missing argument as
 * a usage error naming it.
 */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);

/* --help: print text on stdout (checked), exit 0. --version likewise. */
_Noreturn void cli_help(const char *text);
_Noreturn void cli_version(void);

/* Option values; a bad one is a usage error naming the option. */
uint64_t cli_count(const char *option, const char *arg, uint64_t min, uint64_t max);
double cli_rate(const char *option, const char *arg);
void cli_hex_key(const char *option, const char *arg, unsigned char key[16]);
enum filter_layout cli_layout(const char *arg);
enum filter_hash cli_hash(const char *arg);

/* -k N and -t C, shared by every program that reads keys. */
void cli_field_option(struct key_spec *spec, const char *arg);
void cli_separator_option(struct key_spec *spec, const char *arg);

/*
 * Fail early, before reading any input, when path could not be written at
 * the end: its directory missing or not writable.
 */
void cli_check_destination(const char *path);

/* Load a filter file ("-" is stdin); a bad one is fatal, naming the file. */
struct cascade *cli_load_filter(const char *path);
/* Save a filter to path atomically, or to stdout when path is NULL. */
void cli_save_filter(const struct cascade *c, const char *path);

/*
 * Read the inputs (none, or "-", is stdin) and hand their records to fn in
 * batches of at most CLI_BATCH. fn returns 0 to go on, 1 to stop early.
 * An unreadable input is reported and skipped. Returns 0 when all inputs
 * were read (or fn stopped), -1 when any could not be.
 */
typedef int (*cli_batch_fn)(void *ctx, const struct line *records, size_t n);
int cli_each_batch(char *const *paths, int npaths, char delim, cli_batch_fn fn, void *ctx);

/* stdout through a checked writer. */
void cli_stdout_init(struct writer *w, int line_buffered);
/* Flush, then exit 2 on any write error ("PROG: write error: ..."). */
void cli_stdout_finish(struct writer *w);
/* A write failed: report and exit 2. */
_Noreturn void cli_write_error(int err);

/* "2.7 GB", "512 B": decimal units, as disks and the docs count. */
const char *cli_human_bytes(uint64_t bytes, char buf[32]);

/* Grow-on-demand byte array for per-key flags. Fatal when out of memory. */
unsigned char *cli_flags(unsigned char **flags, size_t *cap, size_t n);

#endif
