/* SPDX-License-Identifier: MIT */
/*
 * failcall.c - an LD_PRELOAD shim that makes exactly one of a program's
 * own allocations, or one of its system calls, fail, for tests/failcall.bats:
 * run a command with the 1st failing, then the 2nd, ..., until it makes
 * fewer calls than that, and each run must end in a clean error or in the
 * right result, never in a crash.
 *
 *   FAIL_ALLOC=N          the Nth allocation (malloc, calloc, realloc,
 *                         posix_memalign, strdup, strndup; counted from 1)
 *                         returns NULL with ENOMEM
 *   FAIL_CALL=NAME:N:ERR  the Nth call of NAME (read, pread, write, close,
 *                         fsync, rename, fchmod, fstat) returns -1 with
 *                         errno ERR
 *   FAIL_LOG=PATH         "failed" is appended to PATH when the failure is
 *                         made; no line says the program made fewer calls
 *
 * Only calls made by the executable's own code count and fail: the
 * programs link the library statically, so that is bftools' code, while
 * libc's, zlib's and libgcov's internal allocations and I/O (libgcov
 * writes its counts at exit) pass through untouched. The caller is told
 * by the return address, against the executable's loaded code segments.
 * The counters are atomic: the pipeline's reader thread allocates too.
 * Nothing fails once exit(3) has begun the destructors: in a make
 * coverage build, libgcov (linked into the executable, so not told apart
 * by address) then allocates to write its counts, and does not survive a
 * NULL.
 *
 * The allocation functions are glibc's __libc_* entry points rather than
 * dlsym's answer, because dlsym itself allocates. Not for sanitizer or
 * valgrind builds, which replace malloc themselves.
 *
 * Build: cc -shared -fPIC -o failcall.so failcall.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

/* The executable's code: at most a few executable segments. */
static struct {
	uintptr_t lo, hi;
} code[4];
static size_t ncode;
static int ready;
static int exiting;	/* set at exit: nothing fails any more */

static long alloc_target;	/* FAIL_ALLOC, 0: none */
static long alloc_count;
static char call_name[16];	/* FAIL_CALL's NAME */
static long call_target;
static long call_count;
static int call_errno;

/* The first object dl_iterate_phdr reports is the executable itself. */
static int note_exe(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	for (int i = 0; i < info->dlpi_phnum && ncode < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			code[ncode].lo = info->dlpi_addr + ph->p_vaddr;
			code[ncode].hi = code[ncode].lo + ph->p_memsz;
			ncode++;
		}
	}
	return 1;	/* stop after the first */
}

static void stop_failing(void)
{
	__atomic_store_n(&exiting, 1, __ATOMIC_RELAXED);
}


static void init(void)
{
	const char *a = getenv("FAIL_ALLOC"), *c = getenv("FAIL_CALL");

	dl_iterate_phdr(note_exe, NULL);
	alloc_target = a ? strtol(a, NULL, 10) : 0;
	if (c && sscanf(c, "%15[a-z]:%ld:%d", call_name, &call_target, &call_errno) != 3)
		call_target = 0;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

/*
 * exit(3) runs its handlers newest first, and the destructors from a
 * handler that libc registers before the executable's code first runs;
 * registered by the executable's first call, stop_failing runs before them.
 */
static int first_call_from_exe(void)
{
	static int registered;

	if (!__atomic_exchange_n(&registered, 1, __ATOMIC_RELAXED))
		atexit(stop_failing);
	return !__atomic_load_n(&exiting, __ATOMIC_RELAXED);
}

static int from_exe(const void *ra)
{
	uintptr_t at = (uintptr_t)ra;

	if (__atomic_load_n(&exiting, __ATOMIC_RELAXED))
		return 0;
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		init();
	for (size_t i = 0; i < ncode; i++)
		if (at >= code[i].lo && at < code[i].hi)
			return first_call_from_exe();
	return 0;
}

/* Say that the failure was made: O_APPEND, no stdio, no allocation. */
static void log_failure(void)
{
	const char *path = getenv("FAIL_LOG");
	int fd;

	if (path == NULL || (fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0)
		return;
	if (write(fd, "failed\n", 7) != 7) {
		/* the test then sees no failure made and stops: nothing to add */
	}
	close(fd);
}

/* Whether this allocation, made from ra, is the one to fail. */
static int fail_alloc(const void *ra)
{
	if (!from_exe(ra) || alloc_target <= 0)
		return 0;
	if (__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED) != alloc_target)
		return 0;
	log_failure();
	errno = ENOMEM;
	return 1;
}

/* Whether this call of name, made from ra, is the one to fail. */
static int fail_call(const char *name, const void *ra)
{
	if (!from_exe(ra) || call_target <= 0 || strcmp(name, call_name) != 0)
		return 0;
	if (__atomic_add_fetch(&call_count, 1, __ATOMIC_RELAXED) != call_target)
		return 0;
	log_failure();
	errno = call_errno;
	return 1;
}

void *malloc(size_t size)
{
	return fail_alloc(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fail_alloc(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_alloc(__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (fail_alloc(__builtin_return_address(0)))
		return ENOMEM;
	if ((p = __libc_memalign(align, size)) == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

static char *copy(const char *s, size_t len)
{
	char *p = __libc_malloc(len + 1);

	if (p != NULL) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *strdup(const char *s)
{
	return fail_alloc(__builtin_return_address(0)) ? NULL : copy(s, strlen(s));
}

char *strndup(const char *s, size_t max)
{
	return fail_alloc(__builtin_return_address(0)) ? NULL : copy(s, strnlen(s, max));
}

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*fd_fn)(int);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*fchmod_fn)(int, mode_t);
typedef int (*fstat_fn)(int, struct stat *);

/* The real NAME as real, found once (dlsym may allocate: libc's, not counted). */
#define REAL(type, name)                                                  \
	static type real;                                                 \
	if (real == NULL) {                                               \
		void *sym = dlsym(RTLD_NEXT, name);                       \
		memcpy(&real, &sym, sizeof real);                         \
	}

ssize_t read(int fd, void *buf, size_t len)
{
	REAL(read_fn, "read");
	return fail_call("read", __builtin_return_address(0)) ? -1 : real(fd, buf, len);
}

/* The line reader's ranges (lib/io/lines.c) read with pread. */
ssize_t pread(int fd, void *buf, size_t len, off_t at)
{
	REAL(pread_fn, "pread");
	return fail_call("pread", __builtin_return_address(0)) ? -1 : real(fd, buf, len, at);
}

/* The same call where a 32-bit build asks for 64-bit offsets: counted as pread. */
ssize_t pread64(int fd, void *buf, size_t len, off64_t at)
{
	typedef ssize_t (*pread64_fn)(int, void *, size_t, off64_t);
	REAL(pread64_fn, "pread64");
	return fail_call("pread", __builtin_return_address(0)) ? -1 : real(fd, buf, len, at);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(write_fn, "write");
	return fail_call("write", __builtin_return_address(0)) ? -1 : real(fd, buf, len);
}

int close(int fd)
{
	REAL(fd_fn, "close");
	if (fail_call("close", __builtin_return_address(0))) {
		real(fd);	/* as Linux does: the descriptor is gone even so */
		errno = call_errno;
		return -1;
	}
	return real(fd);
}

int fsync(int fd)
{
	REAL(fd_fn, "fsync");
	return fail_call("fsync", __builtin_return_address(0)) ? -1 : real(fd);
}

int rename(const char *from, const char *to)
{
	REAL(rename_fn, "rename");
	return fail_call("rename", __builtin_return_address(0)) ? -1 : real(from, to);
}

int fchmod(int fd, mode_t mode)
{
	REAL(fchmod_fn, "fchmod");
	return fail_call("fchmod", __builtin_return_address(0)) ? -1 : real(fd, mode);
}

int fstat(int fd, struct stat *st)
{
	REAL(fstat_fn, "fstat");
	return fail_call("fstat", __builtin_return_address(0)) ? -1 : real(fd, st);
}
