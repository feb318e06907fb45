/* SPDX-License-Identifier: MIT */
/*
 * line.h - a byte span: one input record, key or word.
 *
 * The data is not NUL-terminated and may contain NUL bytes; it points into a
 * buffer owned by whoever produced the span (the line reader, a key set).
 */
#ifndef BFTOOLS_LINE_H
#define BFTOOLS_LINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct line {
	const char *data;
	size_t len;
};

#ifdef __cplusplus
}
#endif

#endif
