/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run a fuzz harness over saved inputs, without libFuzzer.
 *
 *   replay DIR|FILE...
 *
 * Linked with one harness, it feeds every regular file in the given
 * directories (in name order, dot-files skipped) and every given file to
 * LLVMFuzzerTestOneInput, once each. A harness reports a broken invariant
 * by aborting, so surviving the run is passing. This is how `make check`
 * replays the corpora with gcc, and how a crash input is reproduced under
 * any compiler and sanitizer. Prints "replayed N inputs" at the end; exit
 * 0, or 2 when a path cannot be read (an empty corpus would hide that).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The harness linked in (fuzz_*.c); libFuzzer declares it the same way. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file in a new buffer (one byte more, so an empty file is not NULL). */
static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (fp == NULL)
		return -1;
	if (fstat(fileno(fp), &st) < 0 || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(fp);
		return -1;
	}
	*size = fread(buf, 1, (size_t)st.st_size, fp);
	if (ferror(fp) || *size != (size_t)st.st_size) {
		fclose(fp);
		free(buf);
		errno = EIO;
		return -1;
	}
	fclose(fp);
	*data = buf;
	return 0;
}

static int run_file(const char *path)
{
	uint8_t *data;
	size_t size;

	if (read_file(path, &data, &size) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's entry names, sorted; *n of them. */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			char **bigger = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);

			if (bigger == NULL)
				break;
			names = bigger;
		}
		if ((names[*n] = strdup(e->d_name)) != NULL)
			(*n)++;
	}
	closedir(d);
	if (*n > 0)
		qsort(names, *n, sizeof *names, by_name);
	return names;
}

/* Every regular file in dir; returns how many ran, or -1. */
static long run_dir(const char *dir)
{
	size_t n;
	char **names = list_dir(dir, &n);
	long ran = 0;

	if (names == NULL && n == 0) {
		fprintf(stderr, "replay: %s: cannot list, or empty\n", dir);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		struct stat st;

		if (path != NULL) {
			snprintf(path, len, "%s/%s", dir, names[i]);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && run_file(path) == 0)
				ran++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		long ran;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			ran = run_dir(argv[i]);
		else
			ran = run_file(argv[i]) == 0 ? 1 : -1;
		if (ran < 0)
			status = 2;
		else
			total += ran;
	}
	printf("replayed %ld inputs\n", total);
	return status;
}
