/* SPDX-License-Identifier: MIT */
/*
 * test_walk.c - the files under some paths, as grep -r visits them: byte
 * order, depth first, links and FIFOs inside passed over, links given
 * followed, files given handed out as they are, the working directory
 * named without "./".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "walk.h"

static char tmpdir[256];

static int touch(const char *rel)
{
	char path[512];
	int fd;

	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	return fd < 0 ? -1 : close(fd);
}

static int make_dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
	return mkdir(path, 0755);
}

/* The tree every test walks (in tmpdir). */
static int make_tree(void)
{
	char link[512];

	if (make_dir("d") < 0 || make_dir("d/sub") < 0 || make_dir("d/Z") < 0 ||
	    make_dir("d/empty") < 0)
		return -1;
	if (touch("d/b") < 0 || touch("d/a") < 0 || touch("d/sub/c") < 0 || touch("d/Z/z") < 0 ||
	    touch("top") < 0)
		return -1;
	snprintf(link, sizeof link, "%s/d/link", tmpdir);
	if (symlink("../top", link) < 0)
		return -1;
	snprintf(link, sizeof link, "%s/d/sublink", tmpdir);
	if (symlink("sub", link) < 0)
		return -1;
	snprintf(link, sizeof link, "%s/d/fifo", tmpdir);
	return mkfifo(link, 0644);
}

/* Every path a walk over paths[0..n) hands out, each followed by '\n'; "!" before errors. */
static void walk_all(char *const *paths, size_t n, char *out, size_t cap)
{
	struct walk *w = walk_open(paths, n);
	const char *path;
	int r, err;

	*out = '\0';
	CHECK(w != NULL);
	while (w != NULL && (r = walk_next(w, &path, &err)) != 0) {
		size_t len = strlen(out);

		snprintf(out + len, cap - len, "%s%s\n", r < 0 ? "!" : "", path);
	}
	walk_close(w);
}

static void files_come_depth_first_in_byte_order(void)
{
	char *paths[] = { "d" };
	char out[1024];

	CHECK(chdir(tmpdir) == 0);
	walk_all(paths, 1, out, sizeof out);
	/* Z before a (byte order), sub's file where sub falls; links, the FIFO and the empty directory give nothing */
	CHECKF(strcmp(out, "d/Z/z\nd/a\nd/b\nd/sub/c\n") == 0, "got:\n%s", out);
}

static void paths_given_are_taken_as_they_are(void)
{
	char *paths[] = { "top", "missing", "d/sublink", "d/link", "d/" };
	char out[1024];

	CHECK(chdir(tmpdir) == 0);
	walk_all(paths, 5, out, sizeof out);
	/* a missing file is handed out for its opener to report; links given are followed */
	CHECKF(strcmp(out, "top\nmissing\nd/sublink/c\nd/link\nd/Z/z\nd/a\nd/b\nd/sub/c\n") == 0,
	       "got:\n%s", out);
}

static void the_working_directory_is_named_without_dot_slash(void)
{
	char path[512], out[1024];

	snprintf(path, sizeof path, "%s/d", tmpdir);
	CHECK(chdir(path) == 0);
	walk_all(NULL, 0, out, sizeof out);
	CHECKF(strcmp(out, "Z/z\na\nb\nsub/c\n") == 0, "got:\n%s", out);
	CHECK(chdir(tmpdir) == 0);
}

static void an_unreadable_directory_is_reported_in_its_place(void)
{
	char *paths[] = { "d" };
	char path[512], out[1024];

	snprintf(path, sizeof path, "%s/d/sub", tmpdir);
	CHECK(chmod(path, 0) == 0);
	CHECK(chdir(tmpdir) == 0);
	if (access(path, R_OK) == 0) {	/* root reads it all the same */
		CHECK(chmod(path, 0755) == 0);
		return;
	}
	walk_all(paths, 1, out, sizeof out);
	CHECK(chmod(path, 0755) == 0);
	CHECKF(strcmp(out, "d/Z/z\nd/a\nd/b\n!d/sub\n") == 0, "got:\n%s", out);
}

static void no_scratch_directory(void)
{
	CHECKF(0, "mkdtemp %s failed", tmpdir);
}

static void remove_tree(void)
{
	static const char *const files[] = { "d/b", "d/a", "d/sub/c", "d/Z/z", "top", "d/link",
					     "d/sublink", "d/fifo" };
	static const char *const dirs[] = { "d/sub", "d/Z", "d/empty", "d", "" };
	char path[512];

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, dirs[i]);
		rmdir(path);
	}
}

void suite_walk(void)
{
	const char *base = getenv("TMPDIR");
	char here[4096];

	snprintf(tmpdir, sizeof tmpdir, "%s/bftools-walk-XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL || getcwd(here, sizeof here) == NULL || make_tree() < 0) {
		unit_run("walk: a scratch tree can be made", no_scratch_directory);
		return;
	}
	unit_run("walk: files come depth first, names in byte order; links, FIFOs inside passed over",
		 files_come_depth_first_in_byte_order);
	unit_run("walk: paths given are taken as they are: files, missing ones, links followed",
		 paths_given_are_taken_as_they_are);
	unit_run("walk: no paths is the working directory, named without ./",
		 the_working_directory_is_named_without_dot_slash);
	unit_run("walk: an unreadable directory is reported in its place, the walk goes on",
		 an_unreadable_directory_is_reported_in_its_place);
	if (chdir(here) != 0)
		perror(here);
	remove_tree();
}
