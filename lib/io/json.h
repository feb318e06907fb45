/* SPDX-License-Identifier: MIT */
/*
 * json.h - keys out of NDJSON lines: jq-style paths, a validating parser
 * that finds their values in one pass, and the text a value keys as.
 *
 * Paths (-k with --json): '.' alone (the whole line), then steps: .name
 * (letters, digits, '_', not starting with a digit), ."key" or .["key"]
 * (any key, JSON string syntax), [N] (an array index from 0). Several
 * paths are separated by commas.
 *
 * A value's key text: a string's characters (unescaped, UTF-8; a lone
 * surrogate escape becomes U+FFFD), a number, true, false or null as
 * written, an object or array in compact canonical form: no whitespace
 * outside strings, members in their order, and every string written with
 * the fewest escapes (\" \\ \b \f \n \r \t, other bytes below 0x20 as
 * \u00xx, nothing else escaped), so {"a":"\u00e9"} and { "a" : "é" } key
 * alike. The key text is never longer than the value as written.
 *
 * Not here: reading lines, splitting CSV (keys.c), messages.
 */
#ifndef BFTOOLS_JSON_H
#define BFTOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "line.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many paths, and documents nested at most this deep. */
#define JSON_PATHS_MAX 64
#define JSON_DEPTH_MAX 512

struct json_step {
	const char *key;	/* NULL for an index */
	size_t key_len;
	uint64_t index;
};

struct json_paths {
	struct json_step *steps;
	size_t *first, *count;	/* path i is steps[first[i] .. first[i] + count[i]) */
	size_t n;
	char *keys;		/* the steps' keys, unescaped */
};

/* Parse paths from text; NULL with *errstr on a bad one (or out of memory). */
struct json_paths *json_paths_parse(const char *text, const char **errstr);
void json_paths_free(struct json_paths *p);

/*
 * Check that doc is one JSON value (whitespace around it allowed) and find
 * each path's value: values[i] is the value's text as written, or has a
 * NULL data when the document has no such value. Returns 1, 0 when doc
 * is only whitespace (no value: nothing found), or -1 with *why when doc
 * is not JSON.
 */
int json_find(struct line doc, const struct json_paths *paths, struct line *values,
	      const char **why);

/*
 * The key text of value (as json_find found it) into out, which has room
 * for JSON_KEY_ROOM(value.len) bytes; its length. A string's text
 * unescaped; a number by value, as jq 1.6 prints it ("1", "1.5",
 * "1e+16", "1e-05"; 1.0 and 1e0 are "1"), every digit kept; an object or
 * array compact, its members in order, its strings and numbers in that
 * canonical form ("jq -c"); true, false and null as written.
 */
#define JSON_KEY_ROOM(len) (4 * (len) + 16)
size_t json_key_text(struct line value, char *out);

#ifdef __cplusplus
}
#endif

#endif
