/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - JSON strings out of any bytes (RFC 8259), for the programs'
 * JSON reports (bfinfo --json, bftop --json).
 *
 * Keys and file names are bytes, not necessarily UTF-8, and a JSON text
 * must be UTF-8. Valid UTF-8 goes out as it is (but " and \ escaped, and
 * control characters and DEL as \u00XX); each byte of a sequence that is
 * not valid UTF-8 goes out as the escape \udcXX, XX the byte: Python's
 * "surrogateescape" convention, the one os.fsdecode uses for file names,
 * so json.loads reads any output and s.encode("utf-8", "surrogateescape")
 * gives back the exact bytes. Valid UTF-8 never contains such a code point
 * (surrogates are not encodable), so the mapping cannot be mistaken.
 */
#ifndef BFTOOLS_JSON_OUT_H
#define BFTOOLS_JSON_OUT_H

#include <stddef.h>

#include "writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* data[0..len) as one JSON string, quotes included. 0, or -1 with errno (writer_put's). */
int json_out_string(struct writer *w, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
