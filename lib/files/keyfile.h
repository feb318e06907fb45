/* SPDX-License-Identifier: MIT */
/*
 * keyfile.h - a filter's 128-bit SipHash key kept in a file of its own.
 *
 * Whoever knows the key can choose keys that collide in a filter: pollute
 * it (fill it so everything tests present) or forge false positives for
 * chosen strings (Gerbet, Kumar & Lauradoux 2015). A filter file normally
 * carries its key, which is fine while the file is private. For filters
 * that are published or shared, the key stays in a key file (mode 0600)
 * and the filter stores only its fingerprint.
 *
 * The file holds exactly 32 hexadecimal digits, optionally followed by a
 * newline.
 */
#ifndef BFTOOLS_KEYFILE_H
#define BFTOOLS_KEYFILE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Read the key in path. Returns 0, or -1 with *errstr. */
int keyfile_read(const char *path, unsigned char key[16], const char **errstr);

/*
 * Create path (it must not exist) with a fresh random key, mode 0600,
 * synced to disk. Returns 0 and the key, or -1 with *errstr.
 */
int keyfile_create(const char *path, unsigned char key[16], const char **errstr);

#ifdef __cplusplus
}
#endif

#endif
