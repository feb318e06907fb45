/* SPDX-License-Identifier: MIT */
/*
 * iosize.h - how many bytes the library's file buffers hold: what the
 * filter and sketch loaders (gzin.c) and the DCSO loader (dcso.c) read at
 * a time, the line reader's first buffer (lines.c), and what gzout.c
 * gathers before a write.
 *
 * 1 MiB by default: big enough that the cost of each system call
 * vanishes. A build may choose less with -DBFTOOLS_IO_BUFFER=BYTES, at
 * least IOSIZE_BUFFER_MIN: every result stays the same (the same filters
 * load, the same records, messages and file bytes come out), only the
 * reads and writes get smaller and more. The fuzz harnesses are built so
 * (tests/fuzz/run.sh): under AddressSanitizer, allocating and poisoning
 * 1 MiB per load costs more than loading a small file, and they load
 * thousands a second.
 *
 * Not below 64 KiB: to tell a file's kind, the loaders look up to
 * DCSO_SNIFF_MAX (64 KiB) ahead within one buffer, and a smaller one would
 * change what they can tell. The chunk a filter is compressed in
 * (format.c) is not this: it shapes the bytes of the file.
 */
#ifndef BFTOOLS_IOSIZE_H
#define BFTOOLS_IOSIZE_H

#include <stddef.h>

#define IOSIZE_BUFFER_MIN ((size_t)64 << 10)

#ifdef BFTOOLS_IO_BUFFER
#define IOSIZE_BUFFER ((size_t)(BFTOOLS_IO_BUFFER))
#else
#define IOSIZE_BUFFER ((size_t)1 << 20)
#endif

_Static_assert(IOSIZE_BUFFER >= IOSIZE_BUFFER_MIN, "BFTOOLS_IO_BUFFER below 64 KiB");

#endif
