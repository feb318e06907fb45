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
#include "format.h"
#include "keys.h"
#include "line.h"
#include "pipeline.h"
#include "sketch.h"
#include "writer.h"

#define EXIT_NONE 1
#define EXIT_TROUBLE 2

/*
 * The threads-and-progress group: options every program takes, handled
 * by cli_common_option:
 *   -j N, --threads=N   threads for reading, hashing, testing and adding
 *                       (default: $BFTOOLS_THREADS, else the CPUs online
 *                       up to 8); the output is the same for every N.
 *                       Add "j:" to the program's optstring.
 *   --max-memory=SIZE   refuse filters whose bit arrays would exceed SIZE
 *                       bytes (default: $BFTOOLS_MAX_MEMORY, else no limit)
 *   --progress, --no-progress   force or silence progress on stderr
 *                       (default: shown when stderr is a terminal)
 * Put CLI_COMMON_OPTIONS before the terminating entry of a program's
 * struct option table.
 */
enum {
	CLI_OPT_MAX_MEMORY = 1000,
	CLI_OPT_PROGRESS,
	CLI_OPT_NO_PROGRESS,
	CLI_OPT_KEY_FILE,
	CLI_OPT_NO_WAIT,
	CLI_OPT_NO_DECOMPRESS,
	CLI_OPT_THREADS = 'j',
};
#define CLI_COMMON_OPTIONS                                                   \
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },            \
	{ "key-file", required_argument, NULL, CLI_OPT_KEY_FILE },          \
	{ "max-memory", required_argument, NULL, CLI_OPT_MAX_MEMORY },      \
	{ "progress", no_argument, NULL, CLI_OPT_PROGRESS },                \
	{ "no-progress", no_argument, NULL, CLI_OPT_NO_PROGRESS }
#define CLI_COMMON_HELP                                                      \
	"  -j, --threads=N       use N threads (default: the CPUs, up to 8);\n" \
	"                        the output is the same for every N\n"       \
	"      --key-file=FILE   the filters' key is kept in FILE, not in them\n" \
	CLI_COMMON_HELP_REST
/* The same without --key-file, for bftop, which refuses it (its own key). */
#define CLI_COMMON_HELP_NO_KEY_FILE                                          \
	"  -j, --threads=N       use N threads (default: the CPUs, up to 8);\n" \
	"                        the output is the same for every N\n"       \
	CLI_COMMON_HELP_REST
#define CLI_COMMON_HELP_REST                                                 \
	"      --max-memory=SIZE refuse filters larger than SIZE bytes in memory\n" \
	"      --progress        show progress on stderr even when not a terminal\n" \
	"      --no-progress     never show progress\n"

/*
 * --no-wait, for the programs that update a file in place (bfbuild,
 * bfuniq, bfmerge): put CLI_NO_WAIT_OPTION in the option table and
 * CLI_NO_WAIT_HELP in --help; cli_common_option handles it.
 */
#define CLI_NO_WAIT_OPTION { "no-wait", no_argument, NULL, CLI_OPT_NO_WAIT }
/*
 * After the options: --no-wait is refused unless this run updates a file
 * in place (updates nonzero); needs names what it takes ("-f STATE").
 */
void cli_no_wait_needs(int updates, const char *needs);
#define CLI_NO_WAIT_HELP                                                     \
	"      --no-wait         fail at once if another bftools process is\n"  \
	"                        updating the file, instead of waiting\n"

/*
 * --no-decompress, in the key group (cli_fields.h: CLI_KEY_OPTIONS, whose
 * parser handles it; its help line is here for the key group's). Without
 * it an input (file or standard input) whose first bytes are the magic of
 * gzip, zstd, xz, bzip2 or lz4 is read decompressed (lib/io/instream.h),
 * and as a stream, never in ranges; one in a format recognised but not
 * decoded is refused.
 */
#define CLI_DECOMPRESS_HELP                                                  \
	"      --no-decompress   read compressed inputs (gzip, zstd, xz, bzip2,\n" \
	"                        lz4) as they are, not decompressed\n"

/*
 * --key-file: the key file given, or NULL. New filters take their key from
 * it (cli_new_key); loaded filters whose key is kept outside need it.
 */
extern const char *cli_key_file;

/*
 * Programs that never hash keys (bfmerge, bfinfo, bfcount on filters) call
 * this: they load filters whose key is kept outside without the key file,
 * comparing fingerprints instead.
 */
void cli_keys_optional(void);

/*
 * Programs that can use a DCSO bloom filter (dcso.h: no key, no growth,
 * never saved in the bftools format) call this; for the others
 * cli_load_filter refuses one, saying which programs read them.
 */
void cli_dcso_readable(void);

/*
 * The key of a new filter: from --key-file (created, mode 0600, with a
 * fresh random key if missing), else fresh from getrandom(2). Returns the
 * flags to add to the filter (FILTER_KEY_EXTERNAL for a key file).
 */
uint32_t cli_new_key(unsigned char key[16]);

/*
 * --key-file against a loaded filter's params p (name for messages): 1 with
 * key[] filled when its key is kept outside and must be supplied; 0 when
 * nothing is to be done. A missing or disagreeing key file is fatal.
 */
int cli_key_needed(const struct filter_params *p, const char *name, unsigned char key[16]);

/* Handle one of the common options; returns 1 if c was one. */
int cli_common_option(int c, const char *arg);

/*
 * A library message, with the sizes added when it is about memory: "filter
 * needs 2.7 GB (2740000000 bytes), over the memory limit of 1.0 GB".
 */
const char *cli_explain(const char *why);

extern const char *cli_progname;
/* -1: progress when stderr is a terminal; 0: never; 1: always. */
extern int cli_progress_mode;

/* Name the program; install the temp-file cleanup for SIGINT/SIGTERM. */
void cli_init(const char *progname);

void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void cli_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, then "Try 'PROG --help'...", exit 2. */
_Noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long with the messages worded here: call with an optstring that
 * starts with ':'; it reports an unknown option, a missing argument or a
 * value option given twice as a usage error naming it.
 */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);
/*
 * cli_getopt refuses an option that takes a value given a second time
 * ("-o given twice: it takes one value"), in every program alike, except
 * the options whose letters a program lists here before parsing: those
 * that collect their values (bfgrep -f FILTER, bftop -s SUMMARY).
 */
void cli_repeatable_options(const char *letters);

/*
 * --help: print text on stdout (checked), then the rule every program
 * keeps for its options (CLI_OPTIONS_RULE), exit 0. --version likewise.
 */
#define CLI_OPTIONS_RULE                                                     \
	"\nAn option that takes a value may be given once, unless it collects\n" \
	"values; an option that cannot apply to the run is refused.\n"
_Noreturn void cli_help(const char *text);
_Noreturn void cli_version(void);

/* Option values; a bad one is a usage error naming the option. */
uint64_t cli_count(const char *option, const char *arg, uint64_t min, uint64_t max);
/*
 * The report group, for the programs that print a report (bfbuild's,
 * bfuniq's -v statistics, bfcount's count, bfinfo's and bftop's output):
 * --json, or --report=json, prints it as JSON on its usual stream; for
 * bfbuild and bfuniq it implies -v. --json means JSON output in every
 * program; JSON Lines input is --jsonl (cli_fields.h). CLI_REPORT_OPTIONS
 * in the option table, CLI_REPORT_HELP in --help; cli_report_option
 * handles them (another --report than json is refused).
 */
enum { CLI_OPT_REPORT = 1200, CLI_OPT_REPORT_JSON };
#define CLI_REPORT_OPTIONS                                                   \
	{ "json", no_argument, NULL, CLI_OPT_REPORT_JSON },                 \
	{ "report", required_argument, NULL, CLI_OPT_REPORT }
#define CLI_REPORT_HELP                                                      \
	"      --json            the report as JSON (also spelled --report=json)\n"
/* Handle an option of the report group; 1 when c was one. */
int cli_report_option(int c, const char *arg);
/* Whether --json or --report=json was given. */
int cli_reports_json(void);
/* A report as one JSON object on stderr: fmt gives its members, without the braces. */
void cli_report_object(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A field's number: digits only, never 1k or 1e3 (a count's spellings). */
uint64_t cli_field_number(const char *option, const char *arg, uint64_t min, uint64_t max);
double cli_rate(const char *option, const char *arg);
void cli_hex_key(const char *option, const char *arg, unsigned char key[16]);
enum filter_layout cli_layout(const char *arg);
enum filter_hash cli_hash(const char *arg);

/* -k N and -t C, shared by every program that reads keys. */
void cli_field_option(struct key_spec *spec, const char *arg);
void cli_separator_option(struct key_spec *spec, const char *arg);

/*
 * Fail early, before reading any input, when path could not be written at
 * the end: the directory where it leads (symbolic links followed) missing
 * or not writable. A device, a FIFO or a name of a descriptor
 * (/dev/stdout) is written in place, as a stream: nothing to check.
 */
void cli_check_destination(const char *path);

/*
 * The same for a state (-f), which is read and then replaced: a device, a
 * FIFO or a name of a descriptor is refused, exit 2.
 */
void cli_check_state(const char *path);

/*
 * Updating a file in place (read, change, rename over it): take its lock
 * (lock.h) before reading it, so that bftools processes updating one file
 * take turns instead of losing each other's work. Waits for another
 * holder, saying so on stderr once after about a second; with --no-wait,
 * fatal at once. Nothing for "-" or a path that is not a regular file
 * (nothing is renamed over those); a missing path is locked, since it is
 * about to be created. A symbolic link's file is locked, not the link.
 * Held until cli_unlock or exit; taking it again is nothing.
 */
void cli_lock_update(const char *path);
void cli_unlock(void);

/* Whether paths a and b both exist and are one file (device and inode). */
int cli_same_file(const char *a, const char *b);

/* How messages name a path: "-" is "(standard input)". */
const char *cli_display_name(const char *path);

/* How many of paths[0..n) are "-" (standard input can be read only once). */
size_t cli_stdin_uses(char *const *paths, size_t n);

/* Load a filter file ("-" is stdin); a bad one is fatal, naming the file. */
struct cascade *cli_load_filter(const char *path);
/* What cli_load_filter does after loading c from path: the key file, DCSO. */
struct cascade *cli_loaded_filter(struct cascade *c, const char *path);
/*
 * Load path, whatever it holds: a filter in *c, a windowed filter in *w,
 * a sketch in *sk, the others NULL; a NULL w or sk refuses that kind. A
 * bad file is fatal, naming it; a key file is applied as cli_load_filter
 * does.
 */
void cli_load_any(const char *path, struct cascade **c, struct window **w, struct sketch **sk);
/*
 * Open a filter file for streaming ("-" is stdin), with progress: *shape
 * gets its headers, *fd the descriptor to close after the reader (unless it
 * is stdin). A file that cannot be opened or read is fatal, naming it.
 */
struct format_reader *cli_open_filter(const char *path, struct cascade **shape, int *fd);

/*
 * For programs that load filters themselves (to go on after a bad one):
 * show progress for loading name, then end it. And check --key-file against
 * a loaded filter: NULL when it agrees (or none was given), else what is
 * wrong.
 */
void cli_progress_loading(const char *name);
void cli_progress_done(void);
const char *cli_key_file_disagrees(const struct cascade *c);

/*
 * "PROG: warning: filter over capacity: estimated false-positive rate R
 * exceeds target P (about N distinct keys, capacity C)" when rate (c's
 * cascade_current_fpr) is over CASCADE_OVER_CAPACITY_SLACK times the
 * target; nothing otherwise.
 */
void cli_warn_over_capacity(const struct cascade *c, double rate);

/*
 * Programs that use a filter as it is (bfgrep, bfuniq -f, bfcount -f)
 * call this: from then on cli_load_any warns once per filter loaded whose
 * false-positive rate at its fill (cascade_current_fpr) is over
 * CLI_OVERFULL_FACTOR times its target: "PROG: FILE: warning: filter
 * over-full: false-positive rate R at its fill, over 10 times its target
 * P (about N distinct keys, capacity C)". Windows are not checked.
 */
#define CLI_OVERFULL_FACTOR 10
void cli_warn_overfull_loads(void);
/* Whether c is the last filter loaded that was so warned about (not to say it twice). */
int cli_warned_overfull(const struct cascade *c);

/*
 * Save a filter to path atomically, or to stdout when path is NULL; a
 * DCSO filter in the DCSO format, as it came (dcso.h).
 */
void cli_save_filter(const struct cascade *c, const char *path);

/*
 * For programs that keep state in a file (bfuniq -f, bfbuild -f): on
 * SIGTERM, SIGINT or SIGHUP stop reading input (a read blocked on a pipe
 * included), finish every line already read, in order, and return from
 * cli_each_batch as at the end of input; the program then saves and exits
 * with 128 + cli_stop_signal(). A second signal changes nothing: the save goes on.
 * cli_stop_signal is the signal caught, or 0.
 */
void cli_stop_on_signals(void);
int cli_stop_signal(void);

/*
 * Wait until the reader of fd, when fd is a pipe or a FIFO, has read every
 * byte written to it, so that a state saved next records only delivered
 * lines. 0 when it has (at once for anything else than a pipe); 1 when a
 * signal came during the wait (the caller then saves nothing more). A
 * reader gone with bytes unread ends the program as a write would:
 * SIGPIPE, or "write error" and exit 2 where SIGPIPE is ignored.
 */
int cli_await_delivery(int fd);

/*
 * --checkpoint=INTERVAL (bfuniq -f, bfbuild -f): save the state every
 * INTERVAL while the input goes on: a duration (30s, 10m, 1h) or a line
 * count (1e6, 10M). A save is a fork()ed child writing a copy-on-write
 * snapshot to a temporary file and renaming it over the state, so the
 * stream pauses only for the fork. Output written up to the snapshot is
 * flushed before it, and read by the reader of an output pipe before it
 * (cli_await_delivery), so the state saved holds no key whose line was
 * not delivered. While a snapshot is still being written the next one
 * waits. A snapshot that fails ends the run, exit 2. A DCSO state is
 * saved as DCSO, as at the end.
 * A timed snapshot is taken on time while the input is quiet as well
 * (cli_checkpoint_when_idle), but not when no line came since the last.
 */
struct cli_checkpoint {
	double seconds;		/* interval in seconds, or 0 */
	uint64_t lines;		/* interval in lines, or 0 */
	double last_time;	/* when the last snapshot began */
	uint64_t last_lines;	/* lines read when it began */
	long child;		/* pid of the snapshot being written, or 0 */
	const char *path;	/* where it is written, for messages */
	uint64_t saved, failed;	/* snapshots finished, and failed */
};
void cli_checkpoint_option(struct cli_checkpoint *cp, const char *arg);
/* At a batch boundary: every line so far added and out written; snapshot c (or w) to path if due. */
void cli_checkpoint_due(struct cli_checkpoint *cp, const struct cascade *c, const struct window *w,
			const char *path, struct writer *out, uint64_t lines);
/*
 * A timed interval: have cli_each_batch call idle(ctx) between batches
 * while its input is quiet, at least once a second; idle calls
 * cli_checkpoint_due as consume does. A line count: nothing to do.
 */
void cli_checkpoint_when_idle(const struct cli_checkpoint *cp, void (*idle)(void *ctx));
/* Before the final save: wait for a snapshot still being written (it must not land after). */
void cli_checkpoint_finish(struct cli_checkpoint *cp);

/*
 * Sketches (sketch.h), the keyed HyperLogLog counts of bfcount -o. Load
 * one ("-" is stdin); a bad one is fatal, naming the file. Its key is
 * handled as a filter's: with need_key (keys will be hashed) a sketch
 * whose key is kept outside needs --key-file; a key file given is checked
 * against the sketch's key either way.
 */
struct sketch *cli_load_sketch(const char *path, int need_key);
/* --key-file against a sketch just loaded (name for messages); fatal when wrong. */
void cli_sketch_key(struct sketch *s, const char *name, int need_key);
/* For bfinfo, which goes on after a bad file: NULL when --key-file agrees, else what is wrong. */
const char *cli_sketch_key_file_disagrees(const struct sketch *s);
/* Save a sketch to path atomically, or to stdout when path is NULL. */
void cli_save_sketch(const struct sketch *s, const char *path);
/*
 * What differs between sketches a and b, sketch_compatible's what, in
 * words with the values where they are not secret: "precision (12 vs 16)".
 */
void cli_sketch_difference(const struct sketch *a, const struct sketch *b, const char *what,
			   char *out, size_t len);

/*
 * Read the inputs (none, or "-", is stdin) in batches, on a reader thread
 * beside the calling one, with -j's other threads sharing the work
 * (lib/pipeline.h), through three steps:
 *   prepare  reader thread, as soon as a batch is read: set *units to the
 *            work it holds (keys); return 0, or -1 when out of memory
 *   work     any thread, on disjoint ranges [from, to) of a slot's
 *            units: what can run in any order (hashing keys, testing them
 *            against a filter nobody changes, OR-ing bits into one)
 *   consume  calling thread, in input order: what must run in order
 *            (adding, output); 0 to go on, 1 to stop
 * State a batch needs lives in the program's arrays of CLI_SLOTS, indexed
 * by slot; records stay valid until consume returns. An input that cannot
 * be opened is reported in its place in the order, and skipped. Returns 0
 * when all inputs were read (or consume stopped), -1 when any could not be.
 *
 * A failure mid-input is a clean cut (the programs' man pages): a bad
 * record (cut, below), damaged compressed data, a CSV quote never closed
 * or a failed read. The records before it are split and consumed as
 * usual, in order, as a run over those records alone would; then one
 * message "PROG: NAME:LINE: WHY" naming the first record not taken, the
 * input's end event (bfgrep -c's count of the prefix), and the run stops:
 * no later record or input is read, and the result is -1, so a program
 * finishes as after any input error (output flushed, state saved, exit
 * 2) and a rerun from that line on neither repeats nor loses a record.
 */
#define CLI_SLOTS PIPELINE_SLOTS
struct cli_stage {
	int (*prepare)(void *ctx, unsigned slot, const struct line *records, size_t n,
		       size_t *units);
	void (*work)(void *ctx, unsigned slot, size_t from, size_t to);
	int (*consume)(void *ctx, unsigned slot, const struct line *records, size_t n);
	/*
	 * Optional: the ordered step cut in parts (lib/io/pipeline.h): split
	 * on the calling thread, in input order, after work (1: in parts,
	 * 0: consume does it whole); part `part` of the slot on any thread;
	 * consume after all its parts. A batch without records (an input's
	 * error, a quiet input's checkpoint) is never split.
	 */
	int (*split)(void *ctx, unsigned slot, const struct line *records, size_t n);
	void (*part)(void *ctx, unsigned slot, unsigned part);
	unsigned parts;		/* 0: no parts */
	int overlap;		/* as pipeline_fns.overlap */
	/*
	 * Optional, with parts: any thread, after all parts of a batch that
	 * split said 1 to, before its consume (pipeline_fns.finish): what
	 * consume would do that needs only this batch, done beside the
	 * consumes of others.
	 */
	void (*finish)(void *ctx, unsigned slot, const struct line *records, size_t n);
	/*
	 * Optional, with parts: the thread that did a batch's last work,
	 * after it and before split (pipeline_fns.worked): what split can
	 * have done ahead (owners_presort), so that the calling thread only
	 * checks it.
	 */
	void (*split_ahead)(void *ctx, unsigned slot, const struct line *records, size_t n);
	/*
	 * Optional, for ordered runs: calling thread, in input order, after
	 * the slot's work and before its split or consume (once a slot):
	 * the number of its records before the first bad one (a line not
	 * JSON, a time that cannot be read), n when none is, with what is
	 * wrong with it in why (why_len bytes). When fewer than n, the
	 * program has already dropped what the rest gave (keyset_truncate),
	 * and split and consume see only the records before it.
	 */
	size_t (*cut)(void *ctx, unsigned slot, const struct line *records, size_t n, char *why,
		      size_t why_len);
};
int cli_each_batch(char *const *paths, int npaths, char delim,
			    const struct cli_stage *stage, void *ctx);

/*
 * Tell c how many keys the inputs will bring, as far as their files say
 * (lines_estimate; standard input only when redirected from a file): a
 * big filter they would make dense anyway is made so before the first
 * (cascade_expect_adds). Pipes, FIFOs, directories, compressed files:
 * not counted; nothing is opened that is not a regular file.
 */
void cli_expect_inputs(struct cascade *c, char *const *paths, int npaths, char delim);

/*
 * During consume: the line number of the batch's record r in its input
 * (records count from 1 per input), counting the lines --shard took out
 * before the program saw the batch.
 */
uint64_t cli_batch_line(size_t r);

/*
 * Whether the inputs ended at a clean cut (a failure mid-input, above):
 * then what was read before it is whole, and a program saves it, where
 * an input that could not be opened may leave it with nothing to save.
 */
int cli_inputs_cut(void);

/*
 * For programs that answer per input (bfgrep -c, -l, -H): cli_each_batch
 * with two more steps, on the calling thread, in input order:
 *   begin  before an input's first batch (an empty input has none)
 *   end    after its last batch, or after the read error that ended it
 *          (reported first); 0 to go on, 1 to stop
 * path is the input as given ("-" for standard input), valid during the
 * call only. An input that cannot be opened gets neither, only its
 * message. Here consume may also
 * return CLI_SKIP_INPUT: the rest of the input is not read (batches read
 * ahead are dropped) and its end comes next, as for bfgrep -l and -m.
 */
#define CLI_SKIP_INPUT 2
struct cli_input_events {
	void (*begin)(void *ctx, const char *path);
	int (*end)(void *ctx, const char *path);
};
int cli_each_input(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
		   const struct cli_input_events *events, void *ctx);

/*
 * cli_each_input for programs whose answers do not depend on the order of
 * records within an input (bfbuild's bits, bfgrep -c -l -L -q): with two
 * threads or more, an input that is a regular file big enough (standard
 * input too, from where it stands) is read in ranges by every thread at
 * once (lib/ranges.h), each thread running prepare, work and consume of
 * `ranged` on its own batches, slot = its number: consume then runs on
 * any thread, at the same time as other slots' steps, and must touch no
 * more than its slot's state and atomics. Its CLI_SKIP_INPUT ends the
 * input, 1 the run. Other inputs, and every input with -j 1 or -r, go
 * through cli_each_input with `ordered`. begin and end come on the
 * calling thread in input order as there, and a read error is reported
 * in its place as there (the records read in other ranges have been
 * consumed by then).
 */
int cli_each_input_ranged(char *const *paths, int npaths, char delim, const struct cli_stage *ordered,
			  const struct cli_stage *ranged, const struct cli_input_events *events,
			  void *ctx);

/*
 * cli_each_batch for ordered stages (bfuniq, bfbuild's ordered path, the
 * window adder): an input that cli_each_input_ranged would read in ranges
 * with two threads is read in fixed ranges on every thread instead of by
 * one reader (with -j 1 too), and its batches, batch i the records that
 * begin in range i, are split and consumed in file order as any input's:
 * the same batches whatever the thread count, so the same answers, down
 * to what a program does per batch. prepare and work of a batch then run
 * on any thread; consume (and a read error's message) in order on the
 * calling thread. Other inputs, and every input with -r, --header or
 * --csv, go through cli_each_batch (--json's go in ranges: a bad line's
 * number is counted in consume order).
 */
int cli_each_batch_ranged(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
			  void *ctx);

/*
 * From now on an input that cannot be opened or read is not reported
 * (grep -s); cli_each_batch still returns -1 for it.
 */
void cli_quiet_inputs(void);

/*
 * From now on the inputs are the files under the paths given (walk.h, as
 * grep -r), the working directory when there are none, instead of the
 * paths themselves or standard input; a directory that cannot be read is
 * reported in its place.
 */
void cli_recursive_inputs(void);

/*
 * A batch's keys and, when they can be hashed ahead (hasher is not NULL:
 * see cascade_hasher), room for their SipHash halves, 2 per key. The
 * batch calls of lib/ take hashes (NULL: they hash themselves).
 */
struct cli_keys {
	struct keyset set;
	uint64_t *hashes;
	size_t hashes_cap;
	/*
	 * Set by a program whose work step does nothing with a batch's keys
	 * but hash them: costly keys (keyset_deferrable) are then cut in the
	 * work step, on every thread, and the batch's units are its records
	 * until cli_keys_settle.
	 */
	int cut_in_work;
	/*
	 * Set where the ordered step gets the filter's lines ready itself
	 * (owners.h): hashing then leaves them alone, so a line is fetched
	 * once, by the thread that probes it, not also by another core.
	 */
	int ready_later;
};
/*
 * Reader thread: build the keys of records (with cut_in_work and a costly
 * spec, only make room for them); 0, or -1 when out of memory.
 */
int cli_keys_prepare(struct cli_keys *k, const struct key_spec *spec,
		     const struct filter *hasher, const struct line *records, size_t n);
/*
 * Either thread: cut units [from, to) when their keys are left to the
 * work step, then hash them with hasher (nothing when it is NULL), and get
 * their blocks in it ready for the adds to come (backed, and in cache:
 * filter_ready_hashed): for programs that add to hasher's cascade.
 */
void cli_keys_hash(struct cli_keys *k, const struct filter *hasher, size_t from, size_t to);
/*
 * Consume step, before anything reads k->set or k->hashes: keys cut in
 * the work step, and their hashes, compacted to keyset_build's keys
 * (keyset_compact). Nothing to do otherwise, or a second time.
 */
void cli_keys_settle(struct cli_keys *k);
/*
 * A cli_stage's cut for keys of records[0..n) (--json's bad lines): settle
 * k, then, when a record is not JSON and --bad-line is error, keep what
 * the records before the first such gave and say so in why. The records
 * before it: n when none is.
 */
size_t cli_keys_cut(struct cli_keys *k, size_t n, char *why, size_t why_len);

/*
 * A cli_stage's split for a blocked cascade shared out by region
 * (owners.h): settle slot's keys, then owners_split them, the answers to
 * go in *present (grown to fit, *cap its size). What owners_split said.
 */
struct owners;
struct cascade;
int cli_keys_split(struct cli_keys *k, struct owners *o, unsigned slot, struct cascade *c,
		   unsigned char **present, size_t *cap);
void cli_keys_free(struct cli_keys *k);

/* stdout through a checked writer. */
void cli_stdout_init(struct writer *w, int line_buffered);
/*
 * For a program whose output comes from its one ordered thread (bfuniq,
 * bfgrep's lines): with CLI_ASYNC_THREADS threads or more and no line
 * buffering, stdout's write(2) goes to a thread of its own
 * (writer_async), best effort. Fewer threads keep it on the calling
 * thread: on two cores a third thread only takes turns with the others.
 */
#define CLI_ASYNC_THREADS 4
void cli_stdout_async(struct writer *w);
/* Flush, then exit 2 on any write error ("PROG: write error: ..."). */
void cli_stdout_finish(struct writer *w);
/* A write failed: report and exit 2. */
_Noreturn void cli_write_error(int err);
/*
 * What a write error keeps, said after its reason ("(seen.bf not saved:
 * it holds ...)"): the one cut that cannot be clean (cli_each_batch).
 * path NULL: nothing to say.
 */
void cli_write_error_keeps(const char *path, const char *holds);

/*
 * An estimate of distinct keys in words: "about 6143 distinct keys", or
 * for a filter with every bit set (an infinite estimate) "every bit set:
 * too many keys to estimate", so that no message prints inf or nan.
 */
const char *cli_distinct_keys(double estimate, char text[64]);

/* "2.7 GB", "512 B": decimal units, as disks and the docs count. */
const char *cli_human_bytes(uint64_t bytes, char buf[32]);

/*
 * Progress on stderr (see cli_progress_mode): cli_each_batch reports lines,
 * bytes and rates, with a bar and ETA when the input's size is known, and
 * loading and saving filters report their share done. A program may add a
 * few words of its own (keys, fill) through cli_progress_detail.
 */
extern void (*cli_progress_detail)(char *buf, size_t len);

/* Grow-on-demand byte array for per-key flags. Fatal when out of memory. */
unsigned char *cli_flags(unsigned char **flags, size_t *cap, size_t n);

#endif
