/* SPDX-License-Identifier: MIT */
/*
 * cli.c - the shared command-line layer of the bftools programs.
 *
 * Everything here either prints or exits, which is why it is not in lib/:
 * the library reports through return values and static messages, and this
 * file turns them into "PROG: WHAT: WHY" lines and grep's exit codes.
 */
#include "cli.h"
#include "cli_fields.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "dcso.h"
#include "format.h"
#include "keyfile.h"
#include "lines.h"
#include "lock.h"
#include "numparse.h"
#include "ranges.h"
#include "sketch.h"
#include "walk.h"

const char *cli_progname = "bftools";
int cli_progress_mode = -1;
const char *cli_key_file;
static int keys_optional;
static int dcso_readable;
static int no_wait;		/* --no-wait */
void (*cli_progress_detail)(char *buf, size_t len);

#define MEMORY_ENV "BFTOOLS_MAX_MEMORY"

#define THREADS_ENV "BFTOOLS_THREADS"

static const char *memory_env;	/* BFTOOLS_MAX_MEMORY, until applied */
static int threads_option;	/* -j was given */
static int memory_option;	/* --max-memory was given */

/* A memory size: SI units, as bfinfo and -v print them (1G = 1e9 bytes). */
static uint64_t memory_size(const char *what, const char *arg)
{
	const char *why;
	uint64_t bytes;

	if (numparse_count(arg, 1, UINT64_MAX, &bytes, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", what, arg, why);
	return bytes;
}

void cli_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');
	const char *limit = getenv(MEMORY_ENV);

	cli_progname = slash ? slash + 1 : progname;
	atomic_remove_on_signals();
	memory_env = limit;
}

/*
 * The environment's limit applies once the options are read, so that a bad
 * value does not stand in the way of --help, and --max-memory overrides it.
 */
static void apply_memory_env(void)
{
	if (memory_env && *memory_env && filter_memory_limit() == 0 && !memory_option)
		filter_set_memory_limit(memory_size(MEMORY_ENV, memory_env));
	memory_env = NULL;
}

/* -j N, or BFTOOLS_THREADS (what names it in the message). */
static int thread_count(const char *what, const char *arg)
{
	const char *why;
	int threads;

	if (pipeline_parse_threads(arg, &threads, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", what, arg, why);
	return threads;
}

/*
 * Like the memory limit: a bad BFTOOLS_THREADS is refused once the options
 * are read (not silently ignored, as a typo would cost a run's speed
 * unnoticed), unless -j overrides it. An empty one is unset.
 */
static void apply_threads_env(void)
{
	const char *env = getenv(THREADS_ENV);

	if (!threads_option && env && *env)
		pipeline_set_threads(thread_count(THREADS_ENV, env));
}

int cli_common_option(int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_THREADS:
		pipeline_set_threads(thread_count("thread count", arg));
		threads_option = 1;
		return 1;
	case CLI_OPT_MAX_MEMORY:
		filter_set_memory_limit(memory_size("memory limit", arg));
		memory_option = 1;
		return 1;
	case CLI_OPT_PROGRESS:
		cli_progress_mode = 1;
		return 1;
	case CLI_OPT_NO_PROGRESS:
		cli_progress_mode = 0;
		return 1;
	case CLI_OPT_KEY_FILE:
		cli_key_file = arg;
		return 1;
	case CLI_OPT_NO_WAIT:
		no_wait = 1;
		return 1;
	default:
		return 0;
	}
}

void cli_keys_optional(void)
{
	keys_optional = 1;
}

void cli_dcso_readable(void)
{
	dcso_readable = 1;
}

/* Why a DCSO filter (dcso.h) cannot be used here, or NULL when it can. */
static const char *dcso_unusable(void)
{
	static char text[160];

	if (!dcso_readable) {
		snprintf(text, sizeof text,
			 "a DCSO bloom filter, not a bftools filter (%s does not take those)",
			 cli_progname);
		return text;
	}
	if (cli_key_file)
		return "a DCSO bloom filter has no key: --key-file does not apply";
	return NULL;
}

static void read_key_file(unsigned char key[16])
{
	const char *why;

	if (keyfile_read(cli_key_file, key, &why) < 0)
		cli_fatal("%s: %s", cli_key_file, why);
}

uint32_t cli_new_key(unsigned char key[16])
{
	const char *why;

	if (cli_key_file == NULL) {
		if (filter_random_key(key) < 0)
			cli_fatal("cannot get a random key: %s", strerror(errno));
		return 0;
	}
	if (access(cli_key_file, F_OK) == 0)
		read_key_file(key);
	else if (keyfile_create(cli_key_file, key, &why) < 0)
		cli_fatal("%s: cannot create the key file: %s", cli_key_file, why);
	return FILTER_KEY_EXTERNAL;
}

/*
 * A loaded filter and --key-file: supply a key kept outside, or check that
 * a key file agrees with the key the filter carries.
 */
int cli_key_needed(const struct filter_params *p, const char *name, unsigned char key[16])
{
	if (p->flags & FILTER_KEY_EXTERNAL) {
		if (cli_key_file == NULL && keys_optional)
			return 0;
		if (cli_key_file == NULL)
			cli_fatal("%s: the filter's key is kept in a key file: give it with --key-file", name);
		read_key_file(key);
		return 1;
	}
	if (cli_key_file) {
		read_key_file(key);
		if (filter_key_fingerprint(key) != p->fingerprint)
			cli_fatal("%s: the filter carries its own key, which is not the key in %s", name, cli_key_file);
	}
	return 0;
}

static void apply_key_file(struct cascade *c, const char *name)
{
	unsigned char key[16];
	const char *why;

	if (cli_key_needed(cascade_params(c), name, key) && cascade_supply_key(c, key, &why) < 0)
		cli_fatal("%s: the key in %s is not this filter's key", name, cli_key_file);
}

const char *cli_explain(const char *why)
{
	static char text[320];
	char need[32], limit[32], used[32];
	uint64_t bytes = filter_refused_bytes();

	if (why == filter_err_limit)
		snprintf(text, sizeof text,
			 "filter needs %s (%llu bytes), over the memory limit of %s with %s already in use (--max-memory or " MEMORY_ENV ")",
			 cli_human_bytes(bytes, need), (unsigned long long)bytes,
			 cli_human_bytes(filter_memory_limit(), limit),
			 cli_human_bytes(filter_memory_in_use(), used));
	else if (why == filter_err_nomem)
		snprintf(text, sizeof text, "cannot allocate %s (%llu bytes) for the filter: out of memory",
			 cli_human_bytes(bytes, need), (unsigned long long)bytes);
	else
		return why;
	return text;
}

static void progress_finish(void);

static void vreport(const char *fmt, va_list ap)
{
	progress_finish();	/* a message never shares a line with progress */
	fprintf(stderr, "%s: ", cli_progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

void cli_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	exit(EXIT_TROUBLE);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname);
	exit(EXIT_TROUBLE);
}

/* The long option that name (len bytes, maybe an abbreviation) selects. */
static const struct option *long_option_named(const struct option *longopts, const char *name,
					      size_t len)
{
	const struct option *found = NULL;
	size_t matches = 0;

	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		if (strlen(o->name) == len)
			return o;
		found = o;
		matches++;
	}
	return matches == 1 ? found : NULL;	/* an ambiguous prefix selects nothing */
}

int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c == -1) {
		apply_memory_env();
		apply_threads_env();
	}
	if (c == ':')
		cli_usage_error("option '%s' requires an argument", argv[optind - 1]);
	if (c != '?')
		return c;
	/* for long options optopt holds the option's code, not a letter */
	if (strncmp(argv[optind - 1], "--", 2) == 0) {
		const char *arg = argv[optind - 1], *equals = strchr(arg, '=');
		const struct option *o = equals ? long_option_named(longopts, arg + 2,
								    (size_t)(equals - arg - 2)) : NULL;

		if (o && o->has_arg == no_argument)
			cli_usage_error("option '--%s' doesn't allow an argument", o->name);
		cli_usage_error("unrecognized option '%s'", arg);
	}
	cli_usage_error("invalid option -- '%c'", optopt);
}

static void finish_stdio_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_write_error(errno);
}

void cli_help(const char *text)
{
	fputs(text, stdout);
	finish_stdio_stdout();
	exit(0);
}

void cli_version(void)
{
	printf("%s (bftools) %s\n"
	       "Copyright (C) 2026 the bftools developers.\n"
	       "License MIT: <https://opensource.org/licenses/MIT>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n",
	       cli_progname, BFTOOLS_VERSION);
	finish_stdio_stdout();
	exit(0);
}

uint64_t cli_count(const char *option, const char *arg, uint64_t min, uint64_t max)
{
	const char *why;
	uint64_t value;

	if (numparse_count(arg, min, max, &value, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	return value;
}

double cli_rate(const char *option, const char *arg)
{
	const char *why;
	double value;

	if (numparse_rate(arg, &value, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
	return value;
}

void cli_hex_key(const char *option, const char *arg, unsigned char key[16])
{
	const char *why;

	if (numparse_hex_key(arg, key, &why) < 0)
		cli_usage_error("invalid %s '%s': %s", option, arg, why);
}

enum filter_layout cli_layout(const char *arg)
{
	if (strcmp(arg, "blocked") == 0)
		return FILTER_BLOCKED;
	if (strcmp(arg, "classic") == 0)
		return FILTER_CLASSIC;
	cli_usage_error("invalid layout '%s': expected 'blocked' or 'classic'", arg);
}

enum filter_hash cli_hash(const char *arg)
{
	if (strcmp(arg, "siphash13") == 0)
		return FILTER_SIPHASH_1_3;
	if (strcmp(arg, "siphash24") == 0)
		return FILTER_SIPHASH_2_4;
	cli_usage_error("invalid hash '%s': expected 'siphash13' or 'siphash24'", arg);
}

void cli_field_option(struct key_spec *spec, const char *arg)
{
	const char *why = NULL;

	fieldlist_free(spec->fields);
	spec->fields = NULL;
	/* one item that starts like a number is read (and refused) as one */
	if (strpbrk(arg, ",-") == NULL && arg[0] >= '0' && arg[0] <= '9')
		spec->field = (unsigned long)cli_count("field number", arg, 1, UINT32_MAX - 1);
	else if ((spec->fields = fieldlist_parse(arg, &spec->field, &why)) == NULL && why)
		cli_usage_error("invalid field list '%s': %s", arg, why);
	if (spec->fields)
		spec->field = 0;
}

void cli_separator_option(struct key_spec *spec, const char *arg)
{
	if (strcmp(arg, "\\t") == 0)
		spec->separator = '\t';
	else if (strlen(arg) == 1)
		spec->separator = (unsigned char)arg[0];
	else
		cli_usage_error("invalid separator '%s': expected one character", arg);
}

const char *cli_display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "(standard input)" : path;
}

size_t cli_stdin_uses(char *const *paths, size_t n)
{
	size_t uses = 0;

	for (size_t i = 0; i < n; i++)
		uses += strcmp(paths[i], "-") == 0;
	return uses;
}

void cli_check_destination(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	/* the new file is made beside path and renamed over it */
	if (access(dir, W_OK | X_OK) < 0)
		cli_fatal("%s: cannot write here: %s", path, strerror(errno));
}

/* ---- taking turns at updating a file ---------------------------------- */

#define LOCK_NOTICE_DELAY 1.0	/* seconds of waiting before saying so */

static struct lock update_lock = LOCK_INIT;

int cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether path is replaced by rename when saved: a regular file, or none yet. */
static int renamed_over(const char *path)
{
	struct stat st;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &st) < 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode);
}

_Noreturn static void lock_failed(const char *path, const char *why)
{
	static char *lock_file;	/* static: still reachable at exit, for LeakSanitizer */

	lock_file = lock_path(path);
	if (lock_file == NULL)
		cli_fatal("%s: cannot lock it for updating: %s", path, why);
	cli_fatal("%s: cannot lock it for updating: %s: %s", path, lock_file, why);
}

void cli_lock_update(const char *path)
{
	const char *why;
	int r;

	if (update_lock.fd >= 0 || !renamed_over(path))
		return;
	r = lock_try(&update_lock, path, &why);
	if (r == 1 && no_wait)
		cli_fatal("%s: another bftools process is updating it (--no-wait: not waiting)", path);
	if (r == 1)
		r = lock_wait(&update_lock, path, LOCK_NOTICE_DELAY, &why);
	if (r == 1) {
		cli_warn("%s: waiting for another bftools process to release it", path);
		r = lock_wait(&update_lock, path, -1.0, &why);
	}
	if (r < 0)
		lock_failed(path, why);
}

void cli_unlock(void)
{
	lock_release(&update_lock);
}

/* ---- progress -------------------------------------------------------- */

#define PROGRESS_INTERVAL 0.25	/* seconds between updates */
#define PROGRESS_DELAY 0.5	/* on a terminal, quick jobs show nothing */

static struct {
	int tty, drawn;
	double start, last;
	uint64_t lines, bytes, total;	/* total 0: size unknown */
	const char *label;		/* file being loaded or saved */
} progress;

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int progress_wanted(void)
{
	return cli_progress_mode == 1 || (cli_progress_mode < 0 && isatty(STDERR_FILENO));
}

static void progress_start(uint64_t total, const char *label)
{
	progress.tty = isatty(STDERR_FILENO);
	progress.start = progress.last = seconds_now();
	progress.lines = progress.bytes = 0;
	progress.total = total;
	progress.label = label;
}

/* On a terminal the line is redrawn in place; elsewhere each is a new line. */
static void progress_show(const char *text)
{
	if (progress.tty)
		fprintf(stderr, "\r%s: %s\033[K", cli_progname, text);
	else
		fprintf(stderr, "%s: %s\n", cli_progname, text);
	progress.drawn = 1;
}

static void progress_finish(void)
{
	if (progress.drawn && progress.tty)
		fputs("\r\033[K", stderr);
	progress.drawn = 0;
}

static const char *human_count(uint64_t n, char buf[32])
{
	if (n < 10000)
		snprintf(buf, 32, "%llu", (unsigned long long)n);
	else if (n < 1000000)
		snprintf(buf, 32, "%.1fk", (double)n / 1e3);
	else if (n < UINT64_C(1000000000))
		snprintf(buf, 32, "%.1fM", (double)n / 1e6);
	else
		snprintf(buf, 32, "%.2fG", (double)n / 1e9);
	return buf;
}

/* " [=====>     ] 45% ETA 0:12" when the total is known, else "". */
static void progress_bar(char *out, size_t len, uint64_t done, uint64_t total, double elapsed)
{
	double share = total ? (double)done / (double)total : 0.0;
	char bar[21];
	int filled = (int)(share * 20.0), eta;

	if (total == 0 || done == 0) {
		*out = '\0';
		return;
	}
	if (share > 1.0)
		share = 1.0, filled = 20;
	memset(bar, ' ', 20);
	memset(bar, '=', (size_t)filled);
	bar[20] = '\0';
	eta = (int)(elapsed * (1.0 - share) / share);
	snprintf(out, len, " [%s] %3.0f%% ETA %d:%02d", bar, share * 100.0, eta / 60, eta % 60);
}

/* Whether to draw now: throttled, and on a terminal not before the delay. */
static int progress_due(int final)
{
	double now = seconds_now();

	if (!progress_wanted())
		return 0;
	if (final)
		return progress.tty ? 0 : 1;
	if (now - progress.last < PROGRESS_INTERVAL ||
	    (progress.tty && now - progress.start < PROGRESS_DELAY))
		return 0;
	progress.last = now;
	return 1;
}

static void input_progress(int final)
{
	char text[256], lines[32], size[32], speed[32], bar[64], detail[96] = "";
	double elapsed = seconds_now() - progress.start;
	double rate = elapsed > 0 ? (double)progress.bytes / elapsed : 0.0;

	if (!progress_due(final))
		return;
	if (cli_progress_detail)
		cli_progress_detail(detail, sizeof detail);
	progress_bar(bar, sizeof bar, progress.bytes, progress.total, elapsed);
	snprintf(text, sizeof text, "%s lines, %s (%s/s)%s%s%s", human_count(progress.lines, lines),
		 cli_human_bytes(progress.bytes, size), cli_human_bytes((uint64_t)rate, speed),
		 *detail ? ", " : "", detail, bar);
	progress_show(text);
}

/* format_progress_fn: share of a filter file loaded or saved. */
static void file_progress(void *ctx, int saving, uint64_t done, uint64_t total)
{
	char text[256], size[32], bar[64];
	double elapsed = seconds_now() - progress.start;

	(void)ctx;
	if (!progress_due(done == total))
		return;
	progress_bar(bar, sizeof bar, done, total, elapsed);
	snprintf(text, sizeof text, "%s %s: %s%s", saving ? "saving" : "loading",
		 progress.label ? progress.label : "filter", cli_human_bytes(total, size), bar);
	progress_show(text);
}

/* Total size of the inputs when all are regular files, else 0. */
static uint64_t inputs_size(char *const *paths, int npaths)
{
	uint64_t total = 0;
	struct stat st;

	for (int i = 0; i < npaths; i++) {
		int r = strcmp(paths[i], "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(paths[i], &st);

		if (r < 0 || !S_ISREG(st.st_mode))
			return 0;
		total += (uint64_t)st.st_size;
	}
	return total;
}

void cli_progress_loading(const char *name)
{
	progress_start(0, name);
	format_set_progress(file_progress, NULL);
}

void cli_progress_done(void)
{
	progress_finish();
}

const char *cli_key_file_disagrees(const struct cascade *c)
{
	static char text[300];
	unsigned char key[16];

	if (cli_key_file == NULL)
		return NULL;
	if (cascade_params(c)->layout == FILTER_DCSO)
		return "a DCSO bloom filter has no key (--key-file does not apply)";
	read_key_file(key);
	if (filter_key_fingerprint(key) == cascade_params(c)->fingerprint)
		return NULL;
	snprintf(text, sizeof text, "the key in %s is not this filter's key", cli_key_file);
	return text;
}

struct cascade *cli_load_filter(const char *path)
{
	const char *why;
	struct cascade *c;

	progress_start(0, cli_display_name(path));
	format_set_progress(file_progress, NULL);
	c = format_load_path(path, &why);
	progress_finish();

	if (c == NULL && why == format_err_sketch)
		cli_fatal("%s: %s (bfcount -s, bfmerge and bfinfo read sketches)", cli_display_name(path), why);
	if (c == NULL)
		cli_fatal("%s: %s", cli_display_name(path), cli_explain(why));
	return cli_loaded_filter(c, path);
}

struct cascade *cli_loaded_filter(struct cascade *c, const char *path)
{
	const char *why;

	if (cascade_params(c)->layout != FILTER_DCSO) {
		apply_key_file(c, cli_display_name(path));
		return c;
	}
	if ((why = dcso_unusable()) != NULL) {
		cascade_free(c);
		cli_fatal("%s: %s", cli_display_name(path), why);
	}
	return c;
}

void cli_load_any(const char *path, struct cascade **c, struct window **w, struct sketch **sk)
{
	const char *why, *name = cli_display_name(path);
	unsigned char key[16];

	progress_start(0, name);
	format_set_progress(file_progress, NULL);
	if (format_load_any_path(path, c, w, sk, &why) < 0 && why == format_err_sketch)
		cli_fatal("%s: %s (bfcount -s, bfmerge and bfinfo read sketches)", name, why);
	if (*c == NULL && (w == NULL || *w == NULL) && (sk == NULL || *sk == NULL))
		cli_fatal("%s: %s", name, cli_explain(why));
	progress_finish();
	if (sk != NULL && *sk != NULL) {
		cli_sketch_key(*sk, name, 0);
		return;
	}
	if (*c != NULL) {
		*c = cli_loaded_filter(*c, path);
		return;
	}
	if (cli_key_needed(window_params_of(*w), name, key) && window_supply_key(*w, key, &why) < 0)
		cli_fatal("%s: the key in %s is not this filter's key", name, cli_key_file);
}

struct format_reader *cli_open_filter(const char *path, struct cascade **shape, int *fd)
{
	const char *why;
	struct format_reader *r;

	*fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		cli_fatal("%s: %s", path, strerror(errno));
	progress_start(0, cli_display_name(path));
	format_set_progress(file_progress, NULL);
	r = format_open(*fd, shape, &why);
	if (r == NULL && why == format_err_sketch)	/* bfmerge's first input was a filter */
		cli_fatal("%s: %s: sketches and filters cannot be merged", cli_display_name(path), why);
	if (r == NULL)
		cli_fatal("%s: %s", cli_display_name(path), why);
	return r;
}

void cli_warn_over_capacity(const struct cascade *c, double rate)
{
	double distinct;
	char count[64];

	if (!(rate > CASCADE_OVER_CAPACITY_SLACK * c->target_p))
		return;
	distinct = cascade_estimate_count(c);
	if (isinf(distinct))	/* every bit set */
		snprintf(count, sizeof count, "every bit set: too many keys to estimate");
	else
		snprintf(count, sizeof count, "about %.0f distinct keys", distinct);
	cli_warn("warning: filter over capacity: estimated false-positive rate %.3g exceeds target %g (%s, capacity %llu)",
		 rate, c->target_p, count, (unsigned long long)c->capacity);
}

static void save_filter(const struct cascade *f, const char *path)
{
	const char *why;

	if (path == NULL) {
		if (format_save(f, STDOUT_FILENO, &why) < 0)
			cli_fatal("write error: %s", why);
		return;
	}
	if (format_save_path(f, path, &why) < 0)
		cli_fatal("%s: %s", path, why);
}

/* A DCSO filter goes back in its own format, gzipped or not as it came. */
static void save_dcso(const struct cascade *c, const char *path)
{
	const char *why;

	if (path == NULL && dcso_save(c, STDOUT_FILENO, c->dcso_gzip, &why) < 0)
		cli_fatal("write error: %s", why);
	if (path != NULL && dcso_save_path(c, path, c->dcso_gzip, &why) < 0)
		cli_fatal("%s: %s", path, why);
}

void cli_save_filter(const struct cascade *f, const char *path)
{
	if (cascade_params(f)->layout == FILTER_DCSO) {
		save_dcso(f, path);
		return;
	}
	progress_start(0, path ? path : "(standard output)");
	format_set_progress(file_progress, NULL);
	save_filter(f, path);
	progress_finish();
}

/* ---- sketches -------------------------------------------------------- */

void cli_sketch_key(struct sketch *s, const char *name, int need_key)
{
	unsigned char key[16];
	const char *why;

	/* Callers pass a loaded sketch: where loading can fail they call the
	 * _Noreturn cli_fatal first, which cppcheck's cross-file pass takes
	 * for a function that returns (a false report). */
	/* cppcheck-suppress ctunullpointer */
	if (s->needs_key) {
		if (cli_key_file == NULL && !need_key)
			return;
		if (cli_key_file == NULL)
			cli_fatal("%s: the sketch's key is kept in a key file: give it with --key-file", name);
		read_key_file(key);
		if (sketch_supply_key(s, key, &why) < 0)
			cli_fatal("%s: the key in %s is not this sketch's key", name, cli_key_file);
		return;
	}
	if (cli_key_file) {
		read_key_file(key);
		if (filter_key_fingerprint(key) != s->fingerprint)
			cli_fatal("%s: the sketch carries its own key, which is not the key in %s", name, cli_key_file);
	}
}

const char *cli_sketch_key_file_disagrees(const struct sketch *s)
{
	static char text[300];
	unsigned char key[16];

	if (cli_key_file == NULL)
		return NULL;
	read_key_file(key);
	if (filter_key_fingerprint(key) == s->fingerprint)
		return NULL;
	snprintf(text, sizeof text, "the key in %s is not this sketch's key", cli_key_file);
	return text;
}

struct sketch *cli_load_sketch(const char *path, int need_key)
{
	const char *why, *name = cli_display_name(path);
	struct sketch *s = sketch_load_path(path, &why);

	if (s == NULL && why == sketch_err_filter)
		cli_fatal("%s: %s (bfcount -f counts filters)", name, why);
	if (s == NULL)
		cli_fatal("%s: %s", name, why);
	cli_sketch_key(s, name, need_key);
	return s;
}

void cli_sketch_difference(const struct sketch *a, const struct sketch *b, const char *what,
			   char *out, size_t len)
{
	if (strcmp(what, "precision") == 0)
		snprintf(out, len, "precision (%u vs %u)", sketch_precision(a), sketch_precision(b));
	else if (strcmp(what, "normalisation") == 0)
		snprintf(out, len, "normalisation (%s vs %s)",
			 a->flags & FILTER_FOLD_CASE ? "case folded" : "none",
			 b->flags & FILTER_FOLD_CASE ? "case folded" : "none");
	else
		snprintf(out, len, "%s", what);
}

void cli_save_sketch(const struct sketch *s, const char *path)
{
	const char *why;

	if (path == NULL && sketch_save(s, STDOUT_FILENO, &why) < 0)
		cli_fatal("write error: %s", why);
	if (path != NULL && sketch_save_path(s, path, &why) < 0)
		cli_fatal("%s: %s", path, why);
}

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
	double now = seconds_now();
	pid_t pid;

	if (cp->last_time == 0.0)
		cp->last_time = now;	/* the interval counts from the start */
	if (cp->seconds > 0.0 ? now - cp->last_time < cp->seconds
			      : cp->lines == 0 || lines - cp->last_lines < cp->lines)
		return;
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

void cli_checkpoint_finish(struct cli_checkpoint *cp)
{
	checkpoint_busy(cp, 1);
}

/*
 * The reader side of cli_each_batch: the inputs in turn, each
 * batch in a slot with what consume needs to report it. An input that
 * cannot be opened or read becomes a slot of its own carrying the error,
 * so it is reported in its place in the output's order. Each input's
 * first slot says so (begins) and its end is a slot of its own (ends,
 * after the last batch, or with the read error), so that per-input
 * answers (bfgrep -c) come in order too. Inputs are numbered from 1; the
 * consumer skips the rest of one by raising skip to its number, which the
 * reader reads before each batch.
 */
struct input_slot {
	struct lines_batch batch;
	uint64_t bytes_read;	/* input bytes consumed up to this batch's end */
	int err;		/* errno of the open or read error this slot reports */
	int fatal;		/* err is out of memory: stop */
	const char *name;	/* the input err is about, or the batch came from */
	uint64_t first_line;	/* the line number of the batch's first record */
	const char *path;	/* the input the slot belongs to, as given (path_copy) */
	char *path_copy;	/* the slot's own: a walk's names do not last */
	size_t path_cap;
	unsigned input;		/* its number; 0 for one that could not be opened */
	int begins, ends;	/* the input's first slot; its last */
	int last;		/* the input is the last one */
	struct line header;	/* --header: the input's, in its first slot */
	int has_header;
	char why[200];		/* not empty: what is wrong with the input (its header) */
};

struct inputs {
	char *const *paths;
	int npaths;
	int next;		/* paths[next] is the next input to open */
	struct walk *walk;	/* -r: the inputs are the files under paths */
	int fd;			/* the input being read, or -1 */
	const char *name;
	unsigned current;	/* the number of the input being read */
	int fresh;		/* nothing of it has been handed out yet */
	struct lines_reader *reader;
	uint64_t base;		/* bytes of the inputs before this one */
	uint64_t lines;		/* records of this input read so far */
	char delim;
	int status;
	atomic_uint skip;	/* inputs up to this number are not read further */
	const struct cli_stage *stage;
	const struct cli_input_events *events;
	void *ctx;
	int more;		/* inputs follow these (cli_each_input_ranged) */
	struct input_slot slots[CLI_SLOTS];
};

static int quiet_inputs, recursive_inputs;

void cli_quiet_inputs(void)
{
	quiet_inputs = 1;
}

void cli_recursive_inputs(void)
{
	recursive_inputs = 1;
}

static void inputs_close_current(struct inputs *in)
{
	if (in->reader == NULL)
		return;
	in->base += lines_bytes_read(in->reader);
	lines_close(in->reader);
	in->reader = NULL;
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
}

/* s's own copy of the input's path, for the consumer; -1 when out of memory. */
static int slot_path(struct input_slot *s, const char *path)
{
	size_t len = strlen(path) + 1;

	if (len > s->path_cap) {
		char *bigger = realloc(s->path_copy, len);

		if (bigger == NULL)
			return -1;
		s->path_copy = bigger;
		s->path_cap = len;
	}
	memcpy(s->path_copy, path, len);
	s->path = s->path_copy;
	return 0;
}

/* A slot that only reports an error, about the input at path; name it with display. */
static int error_slot(struct input_slot *s, int err, const char *path, int display,
		      size_t *units)
{
	s->batch.n = 0;
	s->err = err;
	if (slot_path(s, path) < 0) {
		s->err = ENOMEM;
		s->path = "";
	}
	s->fatal = s->err == ENOMEM;
	s->name = display ? cli_display_name(s->path) : s->path;
	*units = 0;
	return 1;
}

/*
 * The next input's path: 1, 0 at the end, -1 with errno when a walk could
 * not read a directory (*path names it). A walk is never cancelled midway
 * (pipeline.h): it holds directories open.
 */
static int next_path(struct inputs *in, const char **path)
{
	int r, err = 0, state;

	if (atomic_load(&stop_signal) != 0)	/* a signal to save and stop: no more input */
		return 0;
	if (in->walk == NULL) {
		if (in->next == in->npaths)
			return 0;
		*path = in->paths[in->next++];
		return 1;
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	r = walk_next(in->walk, path, &err);
	pthread_setcancelstate(state, &state);
	errno = err;
	return r;
}

/* Open the next input; 1 when one is open, 0 at the end, -1 with errno. */
static int inputs_open_next(struct inputs *in)
{
	const char *path;
	int found = next_path(in, &path);

	if (found <= 0) {
		in->name = found < 0 ? path : NULL;
		return found;
	}
	in->name = path;
	in->lines = 0;
	in->fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0)
		return -1;
	in->reader = lines_open(in->fd, in->delim);
	if (in->reader != NULL) {
		in->current++;
		in->fresh = 1;
		return 1;
	}
	if (in->fd != STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
	errno = ENOMEM;
	return -1;
}

/* --header: take it from s, the input's first batch; -1: the input ends here (s says why). */
static int header_taken(struct inputs *in, struct input_slot *s, size_t *units)
{
	s->first_line++;
	s->has_header = 1;
	if (cli_header_take(&s->batch, &s->header, s->why, sizeof s->why) == 0)
		return 0;
	inputs_close_current(in);
	s->ends = 1;
	s->batch.n = 0;
	*units = 0;
	return -1;
}

/* The next batch of the open input into s, or its end (read error, skipped, end of input). */
static int fill_from_current(struct inputs *in, struct input_slot *s, size_t *units)
{
	long n = 0;

	if (slot_path(s, in->name) < 0)
		return error_slot(s, ENOMEM, "", 0, units);
	s->input = in->current;
	s->last = in->walk == NULL && in->next == in->npaths && !in->more;
	s->begins = in->fresh;
	in->fresh = 0;
	if (atomic_load_explicit(&in->skip, memory_order_relaxed) < in->current)
		n = lines_next_owned(in->reader, &s->batch);
	if (n > 0) {
		s->bytes_read = in->base + lines_bytes_read(in->reader);
		s->name = cli_display_name(s->path);	/* the slot's copy: it lasts */
		s->first_line = in->lines + 1;
		in->lines += (uint64_t)n;
		if (s->begins && cli_header_on() && header_taken(in, s, units) < 0)
			return 1;
		if (in->stage->prepare(in->ctx, (unsigned)(s - in->slots), s->batch.records,
				       s->batch.n, units) < 0)
			return error_slot(s, ENOMEM, in->name, 0, units);
		return 1;
	}
	s->ends = 1;
	if (n < 0) {
		int err = errno;

		inputs_close_current(in);
		return error_slot(s, err, in->name, 1, units);
	}
	inputs_close_current(in);
	s->batch.n = 0;
	*units = 0;
	return 1;
}

static int inputs_fill(void *ctx, unsigned slot, size_t *units)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];

	s->err = 0;
	s->why[0] = '\0';
	s->has_header = 0;
	s->begins = s->ends = 0;
	s->input = 0;
	if (in->reader == NULL) {
		int opened = inputs_open_next(in);

		if (opened == 0)
			return 0;
		if (opened < 0)
			return error_slot(s, errno, in->name, 0, units);
	}
	return fill_from_current(in, s, units);
}

/* Where the batch being consumed came from (cli_batch_origin). */
static const char *batch_name;
static uint64_t batch_first_line;

void cli_batch_origin(const char **name, uint64_t *first_line)
{
	*name = batch_name;
	*first_line = batch_first_line;
}

static void inputs_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct inputs *in = ctx;

	in->stage->work(in->ctx, slot, from, to);
}

/* A batch for the program, unless its input is being skipped: what consume said. */
static int consume_batch(struct inputs *in, unsigned slot)
{
	struct input_slot *s = &in->slots[slot];
	int rc;

	if (s->batch.n == 0 || atomic_load(&in->skip) >= s->input)
		return 0;
	batch_name = s->name;
	batch_first_line = s->first_line;
	rc = in->stage->consume(in->ctx, slot, s->batch.records, s->batch.n);
	if (rc == CLI_SKIP_INPUT)
		atomic_store(&in->skip, s->input);
	progress.lines += s->batch.n;
	progress.bytes = s->bytes_read;
	input_progress(0);
	return rc;
}

static int inputs_consume(void *ctx, unsigned slot)
{
	struct inputs *in = ctx;
	struct input_slot *s = &in->slots[slot];
	const struct cli_input_events *ev = in->events;
	int rc, stop;

	if (s->fatal)
		cli_fatal("%s", strerror(s->err));
	if (s->begins && ev)
		ev->begin(in->ctx, s->path);
	if (s->err != 0) {
		if (!quiet_inputs)
			cli_warn("%s: %s", s->name, strerror(s->err));
		in->status = -1;
	}
	if (s->why[0] != '\0') {
		cli_warn("%s: %s", s->name, s->why);
		in->status = -1;
	} else if (s->has_header) {
		cli_header_pass(in->ctx, s->header);
	}
	rc = consume_batch(in, slot);
	/*
	 * Skipping the rest of the last input is the end: no need to wait
	 * for a read that may never return (tail -f | bfgrep -m 1).
	 */
	stop = rc == 1 || (rc == CLI_SKIP_INPUT && s->last);
	if ((s->ends || (rc == CLI_SKIP_INPUT && s->last)) && ev && ev->end(in->ctx, s->path))
		stop = 1;
	return stop;
}

/*
 * paths[0..npaths) through the ordered pipeline, their bytes counted on
 * from *base (updated); more: other inputs follow them. Returns the
 * inputs' status; *stopped is set when the program stopped the run.
 */
static int ordered_inputs(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
			  const struct cli_input_events *events, void *ctx, uint64_t *base,
			  int more, int *stopped)
{
	static const struct pipeline_fns fns = { inputs_fill, inputs_work, inputs_consume };
	struct inputs in;

	memset(&in, 0, sizeof in);
	in.paths = paths;
	in.npaths = npaths;
	if (recursive_inputs && (in.walk = walk_open(in.paths, (size_t)in.npaths)) == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	in.fd = -1;
	in.delim = delim;
	in.base = *base;
	in.more = more;
	atomic_init(&in.skip, 0);
	in.stage = stage;
	in.events = events;
	in.ctx = ctx;
	*stopped = pipeline_run(&fns, &in, pipeline_threads()) != 0;
	inputs_close_current(&in);
	walk_close(in.walk);
	for (unsigned i = 0; i < CLI_SLOTS; i++) {
		lines_batch_free(&in.slots[i].batch);
		free(in.slots[i].path_copy);
	}
	*base = in.base;
	return in.status;
}

static char *const standard_input[] = { "-" };

int cli_each_input(char *const *paths, int npaths, char delim, const struct cli_stage *stage,
		   const struct cli_input_events *events, void *ctx)
{
	uint64_t base = 0;
	int status, stopped;

	if (npaths == 0 && !recursive_inputs) {
		paths = standard_input;
		npaths = 1;
	}
	/* the size of what a walk finds is known only at its end */
	progress_start(recursive_inputs ? 0 : inputs_size(paths, npaths), NULL);
	status = ordered_inputs(paths, npaths, delim, stage, events, ctx, &base, 0, &stopped);
	input_progress(1);
	progress_finish();
	return status;
}

/* What cli_each_input_ranged passes along to each input it reads in ranges. */
struct ranged_run {
	char delim;
	const struct cli_stage *stage;
	const struct cli_input_events *events;
	void *ctx;
	uint64_t base;		/* bytes of the inputs before, for progress */
};

/* One input read in ranges by every thread: the batch each has in hand, and progress. */
struct ranged_input {
	struct ranges *rs;
	const struct ranged_run *run;
	struct lines_batch batches[CLI_SLOTS];
	atomic_int out_of_memory;	/* a prepare failed: stop */
	atomic_uint_least64_t lines;	/* records consumed */
	uint64_t lines_before;		/* of the inputs before this one */
};

static int ranged_fill(void *ctx, unsigned slot, size_t *units)
{
	struct ranged_input *r = ctx;
	struct lines_batch *b = &r->batches[slot];

	if (atomic_load_explicit(&r->out_of_memory, memory_order_relaxed) ||
	    ranges_next(r->rs, (int)slot, b) <= 0)
		return 0;
	if (r->run->stage->prepare(r->run->ctx, slot, b->records, b->n, units) == 0)
		return 1;
	atomic_store(&r->out_of_memory, 1);
	*units = 0;
	b->n = 0;	/* consumed as nothing */
	return 1;
}

static void ranged_work(void *ctx, unsigned slot, size_t from, size_t to)
{
	struct ranged_input *r = ctx;

	r->run->stage->work(r->run->ctx, slot, from, to);
}

/* Any thread; slot 0 is the calling thread, which alone draws progress. */
static int ranged_consume(void *ctx, unsigned slot)
{
	struct ranged_input *r = ctx;
	const struct lines_batch *b = &r->batches[slot];
	uint64_t lines;
	int rc;

	if (b->n == 0)
		return 0;
	rc = r->run->stage->consume(r->run->ctx, slot, b->records, b->n);
	lines = atomic_fetch_add_explicit(&r->lines, b->n, memory_order_relaxed) + b->n;
	if (slot == 0) {
		progress.lines = r->lines_before + lines;
		progress.bytes = r->run->base + ranges_bytes_read(r->rs);
		input_progress(0);
	}
	return rc;
}

/*
 * Input path, open on fd, read in ranges [start, end) by threads: begin,
 * the run, the read error if any, end. Returns the input's status (0 or
 * -1); *stopped is set when the program stopped the run.
 */
static int read_in_ranges(const struct ranged_run *run, const char *path, int fd, uint64_t start,
			  uint64_t end, int threads, int *stopped)
{
	static const struct pipeline_free_fns fns = { ranged_fill, ranged_work, ranged_consume };
	struct ranged_input r = { .run = run, .lines_before = progress.lines };
	int rc, err;

	r.rs = ranges_open(fd, start, end, run->delim, threads, 0);
	if (r.rs == NULL)
		cli_fatal("%s", strerror(ENOMEM));
	atomic_init(&r.out_of_memory, 0);
	atomic_init(&r.lines, 0);
	if (run->events)
		run->events->begin(run->ctx, path);
	rc = pipeline_run_free(&fns, &r, threads);
	err = ranges_error(r.rs);
	if (atomic_load(&r.out_of_memory) || err == ENOMEM)
		cli_fatal("%s", strerror(ENOMEM));
	progress.lines = r.lines_before + atomic_load(&r.lines);
	progress.bytes = run->base + ranges_bytes_read(r.rs);
	ranges_close(r.rs);
	for (unsigned i = 0; i < CLI_SLOTS; i++)
		lines_batch_free(&r.batches[i]);
	if (err != 0 && !quiet_inputs)
		cli_warn("%s: %s", cli_display_name(path), strerror(err));
	*stopped = rc == 1 || (run->events && run->events->end(run->ctx, path));
	return err != 0 ? -1 : 0;
}

/*
 * How many threads should read path in ranges, with the bytes [*start,
 * *end) to read: more than 1 only for a regular file big enough
 * (standard input too, from its offset). 1: read it as a stream.
 */
static int ranged_plan(const char *path, int threads, uint64_t *start, uint64_t *end)
{
	int is_stdin = strcmp(path, "-") == 0;
	struct stat st;
	off_t at = 0;

	if ((is_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st)) < 0 || !S_ISREG(st.st_mode))
		return 1;
	if (is_stdin && (at = lseek(STDIN_FILENO, 0, SEEK_CUR)) < 0)
		return 1;
	if (st.st_size <= at)
		return 1;
	*start = (uint64_t)at;
	*end = (uint64_t)st.st_size;
	return ranges_threads(*end - *start, threads);
}

/* path in ranges with threads: opened (and an open error reported) as a stream would be. */
static int ranged_input(const struct ranged_run *run, const char *path, uint64_t start,
			uint64_t end, int threads, int *stopped)
{
	int is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	int status;

	*stopped = 0;
	if (fd < 0) {
		if (errno == ENOMEM)
			cli_fatal("%s", strerror(errno));
		if (!quiet_inputs)
			cli_warn("%s: %s", path, strerror(errno));
		return -1;
	}
	status = read_in_ranges(run, path, fd, start, end, threads, stopped);
	/* standard input is left where one reader reading all of it would leave it */
	if (is_stdin && status == 0 && !*stopped)
		(void)lseek(fd, (off_t)end, SEEK_SET);
	if (!is_stdin)
		close(fd);
	return status;
}

int cli_each_input_ranged(char *const *paths, int npaths, char delim, const struct cli_stage *ordered,
			  const struct cli_stage *ranged, const struct cli_input_events *events,
			  void *ctx)
{
	struct ranged_run run = { delim, ranged, events, ctx, 0 };
	int threads = pipeline_threads(), status = 0, stopped = 0, i = 0;
	uint64_t start = 0, end = 0;

	if (threads < 2 || recursive_inputs || cli_header_on())
		return cli_each_input(paths, npaths, delim, ordered, events, ctx);
	if (npaths == 0) {
		paths = standard_input;
		npaths = 1;
	}
	progress_start(inputs_size(paths, npaths), NULL);
	while (i < npaths && !stopped && atomic_load(&stop_signal) == 0) {
		int use = ranged_plan(paths[i], threads, &start, &end), j = i + 1;

		if (use > 1) {
			status |= ranged_input(&run, paths[i], start, end, use, &stopped);
			run.base += end - start;
			i++;
			continue;
		}
		/* a run of inputs to read as streams: one ordered pipeline for them all */
		while (j < npaths && ranged_plan(paths[j], threads, &start, &end) <= 1)
			j++;
		status |= ordered_inputs(paths + i, j - i, delim, ordered, events, ctx, &run.base,
					 j < npaths, &stopped);
		i = j;
	}
	input_progress(1);
	progress_finish();
	return status;
}

int cli_each_batch(char *const *paths, int npaths, char delim,
			    const struct cli_stage *stage, void *ctx)
{
	return cli_each_input(paths, npaths, delim, stage, NULL, ctx);
}

int cli_keys_prepare(struct cli_keys *k, const struct key_spec *spec,
		     const struct filter *hasher, const struct line *records, size_t n)
{
	size_t count;

	if (keyset_build(&k->set, spec, records, n) < 0)
		return -1;
	count = k->set.count;
	if (hasher == NULL || count <= k->hashes_cap)
		return 0;
	free(k->hashes);
	k->hashes_cap = 0;
	if (count > SIZE_MAX / (2 * sizeof *k->hashes))
		return -1;
	k->hashes = malloc(2 * count * sizeof *k->hashes);
	if (k->hashes == NULL)
		return -1;
	k->hashes_cap = count;
	return 0;
}

void cli_keys_hash(struct cli_keys *k, const struct filter *hasher, size_t from, size_t to)
{
	if (hasher == NULL)
		return;
	filter_hash(hasher, k->set.keys + from, to - from, k->hashes + 2 * from);
	filter_ready_hashed(hasher, k->hashes + 2 * from, to - from);
}

void cli_keys_free(struct cli_keys *k)
{
	keyset_free(&k->set);
	free(k->hashes);
	k->hashes = NULL;
	k->hashes_cap = 0;
}

void cli_stdout_init(struct writer *w, int line_buffered)
{
	if (writer_init(w, STDOUT_FILENO, 1 << 17) < 0)
		cli_fatal("%s", strerror(ENOMEM));
	w->line_buffered = line_buffered;
}

void cli_write_error(int err)
{
	cli_fatal("write error: %s", strerror(err));
}

void cli_stdout_finish(struct writer *w)
{
	if (writer_finish(w) < 0)
		cli_write_error(errno);
	finish_stdio_stdout();
}

unsigned char *cli_flags(unsigned char **flags, size_t *cap, size_t n)
{
	if (n > *cap) {
		unsigned char *grown = realloc(*flags, n);

		if (grown == NULL)
			cli_fatal("%s", strerror(ENOMEM));
		*flags = grown;
		*cap = n;
	}
	return *flags;
}

const char *cli_human_bytes(uint64_t bytes, char buf[32])
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	double value = (double)bytes;
	size_t u = 0;

	while (value >= 1000.0 && u + 1 < sizeof units / sizeof units[0]) {
		value /= 1000.0;
		u++;
	}
	snprintf(buf, 32, u == 0 ? "%.0f %s" : "%.1f %s", value, units[u]);
	return buf;
}
