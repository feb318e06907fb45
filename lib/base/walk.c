/* SPDX-License-Identifier: MIT */
/*
 * walk.c - the files under some paths, depth first, names in byte order
 * (walk.h says what is visited and what is passed over).
 *
 * A stack of levels, one per directory entered: each holds the
 * directory's names, read and sorted when it is entered (readdir's order
 * is the file system's, and differs between machines), and how far the
 * walk has got. The path being handed out is built in one buffer: a
 * level keeps the length of its directory's path there, with the '/',
 * and each name is written after it. Memory is the names of the
 * directories on the current path, never the whole tree.
 *
 * Entries are told apart with lstat, so a symbolic link is seen as a
 * link and passed over; the paths given are looked at with stat, so a
 * link given is followed, as grep -r follows links on its command line.
 */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct level {
	char **names;		/* the directory's entries, sorted */
	size_t n, next;
	size_t prefix;		/* bytes of buf before a name: the directory's path and '/' */
};

struct walk {
	char *const *paths;
	size_t npaths, next_path;
	int implicit;		/* no paths: the working directory, not entered yet */
	struct level *levels;
	size_t depth, levels_cap;
	char *buf;		/* the path being handed out */
	size_t buf_cap;
};

/* What one step of the walk found. */
enum step { STEP_FILE, STEP_AGAIN, STEP_ERROR, STEP_END };

struct walk *walk_open(char *const *paths, size_t n)
{
	struct walk *w = calloc(1, sizeof *w);

	if (w == NULL)
		return NULL;
	w->paths = paths;
	w->npaths = n;
	w->implicit = n == 0;
	return w;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void walk_close(struct walk *w)
{
	if (w == NULL)
		return;
	while (w->depth > 0) {
		w->depth--;
		free_names(w->levels[w->depth].names, w->levels[w->depth].n);
	}
	free(w->levels);
	free(w->buf);
	free(w);
}

/* buf := its first len bytes, then text. -1 when out of memory. */
static int put_path(struct walk *w, size_t len, const char *text)
{
	size_t need = len + strlen(text) + 2;	/* a '/' may follow, and the NUL */

	if (need > w->buf_cap) {
		char *bigger = realloc(w->buf, need * 2);

		if (bigger == NULL)
			return -1;
		w->buf = bigger;
		w->buf_cap = need * 2;
	}
	strcpy(w->buf + len, text);
	return 0;
}

static int by_bytes(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add a copy of name to names[*n], growing the array. -1 when out of memory. */
static int add_name(char ***names, size_t *n, size_t *cap, const char *name)
{
	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 16;
		char **bigger = realloc(*names, more * sizeof *bigger);

		if (bigger == NULL)
			return -1;
		*names = bigger;
		*cap = more;
	}
	if (((*names)[*n] = strdup(name)) == NULL)
		return -1;
	++*n;
	return 0;
}

/* The entries of directory d but . and .., sorted; -1 with errno. */
static int read_names(DIR *d, char ***names, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;

	*names = NULL;
	*n = 0;
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (add_name(names, n, &cap, e->d_name) < 0)
			break;	/* errno is ENOMEM */
	}
	if (errno != 0) {
		int err = errno;

		free_names(*names, *n);
		errno = err;
		return -1;
	}
	if (*n > 1)	/* an empty directory has no array to sort */
		qsort(*names, *n, sizeof **names, by_bytes);
	return 0;
}

/* Enter the directory whose path is in buf ("" for the working directory). */
static enum step enter(struct walk *w)
{
	struct level l = { 0 };
	size_t len = strlen(w->buf);
	DIR *d = opendir(len ? w->buf : ".");
	int rc;

	if (d == NULL)
		return STEP_ERROR;
	rc = read_names(d, &l.names, &l.n);
	closedir(d);
	if (rc < 0)
		return STEP_ERROR;
	if (w->depth == w->levels_cap) {
		size_t more = w->levels_cap ? 2 * w->levels_cap : 8;
		struct level *bigger = realloc(w->levels, more * sizeof *bigger);

		if (bigger == NULL) {
			free_names(l.names, l.n);
			errno = ENOMEM;
			return STEP_ERROR;
		}
		w->levels = bigger;
		w->levels_cap = more;
	}
	l.prefix = len == 0 || w->buf[len - 1] == '/' ? len : len + 1;
	w->levels[w->depth++] = l;
	return STEP_AGAIN;
}

/* The next path given: a file to hand out, or a directory to enter. */
static enum step next_operand(struct walk *w)
{
	struct stat st;
	const char *path;

	if (w->implicit) {
		w->implicit = 0;
		return put_path(w, 0, "") < 0 ? STEP_ERROR : enter(w);
	}
	if (w->next_path == w->npaths)
		return STEP_END;
	path = w->paths[w->next_path++];
	if (put_path(w, 0, path) < 0)
		return STEP_ERROR;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return enter(w);
	return STEP_FILE;
}

/* The next entry of the innermost directory, or leave it. */
static enum step next_entry(struct walk *w)
{
	struct level *l = &w->levels[w->depth - 1];
	struct stat st;

	if (l->next == l->n) {
		free_names(l->names, l->n);
		w->depth--;
		return STEP_AGAIN;
	}
	if (l->prefix > 0)
		w->buf[l->prefix - 1] = '/';
	if (put_path(w, l->prefix, l->names[l->next++]) < 0)
		return STEP_ERROR;
	if (lstat(w->buf, &st) < 0)
		return STEP_ERROR;
	if (S_ISDIR(st.st_mode))
		return enter(w);
	return S_ISREG(st.st_mode) ? STEP_FILE : STEP_AGAIN;
}

int walk_next(struct walk *w, const char **path, int *err)
{
	enum step s;

	do {
		errno = 0;
		s = w->depth > 0 ? next_entry(w) : next_operand(w);
	} while (s == STEP_AGAIN);
	if (s == STEP_END)
		return 0;
	*path = w->buf != NULL && *w->buf ? w->buf : ".";
	if (s == STEP_FILE)
		return 1;
	*err = errno ? errno : ENOMEM;
	return -1;
}
