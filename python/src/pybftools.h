/* SPDX-License-Identifier: MIT */
/*
 * pybftools.h - what the files of the Python extension module share: the
 * exceptions, keys from Python objects in batches, and the types.
 *
 * The module is a thin skin over libbftools: every format, hash and
 * estimate is the library's. It owns only the conversions (Python objects
 * to struct line, answers back to bools), the GIL, and a lock per object
 * so that Python threads may share one read-only while another writes.
 * It does not read lines from files: Python does that.
 */
#ifndef PYBFTOOLS_H
#define PYBFTOOLS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "bftools.h"

/* bftools.Error, and FormatError for files that cannot be read as asked. */
extern PyObject *pybf_error;
extern PyObject *pybf_format_error;

/* Raise exc with "NAME: why" (name may be NULL: then just why). Returns NULL. */
PyObject *pybf_raise(PyObject *exc, PyObject *name, const char *why);

/* Keys per batch handed to the library with the GIL released. */
#define PYBF_CHUNK 65536u
/* Bytes of an iterator's keys a batch copies before it ends (one longer key is taken whole). */
#define PYBF_CHUNK_BYTES ((size_t)8 << 20)

/*
 * Where keys come from: an iterator of str (UTF-8) or bytes objects, a
 * buffer of fixed-width items (a NumPy 'S' array: each item's trailing
 * NUL bytes are padding, as NumPy reads them), or a buffer of lines, each
 * ended by a newline but perhaps the last (a file's bytes, read whole).
 */
struct pybf_source {
	PyObject *seq;		/* a list or tuple, read by index (pos) */
	PyObject *iter;		/* else an iterator; both NULL for a buffer */
	Py_buffer view;		/* the buffer, when iter is NULL */
	Py_ssize_t itemsize, count, pos;	/* itemsize 0: lines; count, pos in bytes */
};

/*
 * Open a source over obj (iterable), or over a buffer of itemsize-byte
 * items (itemsize 0: of lines).
 */
int pybf_source_iter(struct pybf_source *s, PyObject *obj);
int pybf_source_fixed(struct pybf_source *s, PyObject *buffer, Py_ssize_t itemsize);
/* The records a buffer of lines holds (what a source of them gives). */
size_t pybf_lines_count(const char *data, size_t len);
void pybf_source_close(struct pybf_source *s);

/*
 * One chunk of records (the keys as given, a line's final newline taken
 * off), and the keys cut from them as the programs cut them (keys.h),
 * with their hashes and answers. A buffer's records point into it; keys
 * from Python objects are copied into bytes (held: the one object of
 * pybf_chunk_one, pointed into, until pybf_chunk_release).
 */
struct pybf_chunk {
	struct line *records;
	PyObject *held;
	size_t n;
	/* keys from objects, copied: their bytes and where each starts */
	char *bytes;
	size_t used, cap, *offset;
	struct keyset ks;
	uint64_t *h;
	unsigned char *present;	/* per key */
	unsigned char *answer;	/* per record */
};

int pybf_chunk_init(struct pybf_chunk *ch);
void pybf_chunk_free(struct pybf_chunk *ch);
/* Fill ch with up to PYBF_CHUNK records from s (GIL held): 0 and ch->n (0 at the end), or -1 raised. */
int pybf_chunk_fill(struct pybf_chunk *ch, struct pybf_source *s);
/* One key (str or bytes) as a chunk of one record: 0, or -1 raised. */
int pybf_chunk_one(struct pybf_chunk *ch, PyObject *key);
void pybf_chunk_release(struct pybf_chunk *ch);
/*
 * Copying keys from a list's or tuple's items by hand, two threads at once
 * (filter.c): pybf_chunk_copy_plain appends the keys of items[0..n) while
 * each is plain (exactly a str of ASCII, or bytes) and the chunk has room
 * for more keys, and says how many; it calls nothing of Python's, so a
 * thread without the GIL may run it while the holder of the GIL keeps
 * Python code from running (and so the items as they are).
 * pybf_chunk_copy_items appends those of s's items [from, to), of any
 * kind, GIL held, while the chunk has room: the index reached, or -1
 * raised. Then pybf_chunk_place points the records at the copies.
 */
size_t pybf_chunk_copy_plain(struct pybf_chunk *ch, PyObject *const *items, size_t n);
Py_ssize_t pybf_chunk_copy_items(struct pybf_chunk *ch, struct pybf_source *s, Py_ssize_t from,
				 Py_ssize_t to);
void pybf_chunk_place(struct pybf_chunk *ch);
/* Cut ch's keys with spec (no GIL needed): 0, or -1 when out of memory. */
int pybf_chunk_cut(struct pybf_chunk *ch, const struct key_spec *spec);
/* answer[record] = present[key] for every key cut, 0 for records without one. */
void pybf_chunk_answers(struct pybf_chunk *ch);

/*
 * Where answers go: a list of bools (out == NULL), or n bytes of a
 * writable buffer (a NumPy bool array).
 */
struct pybf_sink {
	PyObject *list;		/* its first pos items set; the rest, to size, NULL */
	Py_ssize_t size;
	Py_buffer out;
	int has_out;
	Py_ssize_t pos;
};
int pybf_sink_open(struct pybf_sink *k, PyObject *out);
/* A list sink's room for n answers made at once (n from len(keys)): 0, or -1 raised. */
int pybf_sink_expect(struct pybf_sink *k, Py_ssize_t n);
int pybf_sink_put(struct pybf_sink *k, const unsigned char *answer, size_t n);
/* The list, or None for a buffer; closes k. NULL raised (k closed) when count disagrees. */
PyObject *pybf_sink_finish(struct pybf_sink *k);
void pybf_sink_close(struct pybf_sink *k);

/* A 16-byte key from bytes or 32 hex digits: 0, or -1 raised. */
int pybf_key_arg(PyObject *obj, unsigned char key[16]);
/* The key of key=/key_file= for a new structure: flags to add (FILTER_KEY_EXTERNAL), or -1 raised. */
int pybf_new_key(PyObject *key, PyObject *key_file, const unsigned char *fallback,
		 unsigned char out[16]);
/* A path argument as bytes (os.fsencode): new reference, or NULL raised. */
PyObject *pybf_path(PyObject *obj);
/* separator=: None (-1: runs of blanks) or one character, not a newline; 0, or -1 raised. */
int pybf_separator_arg(PyObject *sep, int *out);

/* Reader-writer lock helpers that wait with the GIL released. */
void pybf_rdlock(pthread_rwlock_t *l);
void pybf_wrlock(pthread_rwlock_t *l);

extern PyTypeObject pybf_filter_type;
extern PyTypeObject pybf_sketch_type;
extern PyTypeObject pybf_topk_type;
extern PyTypeObject pybf_lock_type;

#endif
