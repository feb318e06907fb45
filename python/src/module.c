/* SPDX-License-Identifier: MIT */
/*
 * module.c - the bftools._bftools extension module: its exceptions, and
 * keys taken from Python objects a chunk at a time.
 *
 * A chunk's records point into a buffer's bytes (a NumPy array's items, a
 * file's lines) where there is one; keys from Python objects (str as
 * UTF-8, bytes) are copied, their objects let go at once. The library
 * then cuts, hashes and probes them with the GIL released. It does not decide what a key is: the cut is
 * keyset_build's, the one every program uses.
 */
#include "pybftools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

PyObject *pybf_error;
PyObject *pybf_format_error;

PyObject *pybf_raise(PyObject *exc, PyObject *name, const char *why)
{
	if (name != NULL && name != Py_None)
		PyErr_Format(exc, "%U: %s", name, why);
	else
		PyErr_SetString(exc, why);
	return NULL;
}

/* ---- sources of keys ------------------------------------------------ */

int pybf_source_iter(struct pybf_source *s, PyObject *obj)
{
	memset(s, 0, sizeof *s);
	if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
		Py_INCREF(obj);
		s->seq = obj;
		return 0;
	}
	s->iter = PyObject_GetIter(obj);
	return s->iter == NULL ? -1 : 0;
}

int pybf_source_fixed(struct pybf_source *s, PyObject *buffer, Py_ssize_t itemsize)
{
	memset(s, 0, sizeof *s);
	if (itemsize < 0) {
		PyErr_SetString(PyExc_ValueError, "itemsize must not be negative");
		return -1;
	}
	if (PyObject_GetBuffer(buffer, &s->view, PyBUF_C_CONTIGUOUS) < 0)
		return -1;
	s->itemsize = itemsize;
	s->count = itemsize ? s->view.len / itemsize : s->view.len;
	return 0;
}

size_t pybf_lines_count(const char *data, size_t len)
{
	size_t n = 0;
	const char *end = data + len, *nl;

	while (data < end && (nl = memchr(data, '\n', (size_t)(end - data))) != NULL) {
		n++;
		data = nl + 1;
	}
	return n + (data < end);
}

void pybf_source_close(struct pybf_source *s)
{
	if (s->seq != NULL)
		Py_DECREF(s->seq);
	else if (s->iter != NULL)
		Py_DECREF(s->iter);
	else if (s->view.obj != NULL)
		PyBuffer_Release(&s->view);
	memset(s, 0, sizeof *s);
}

/* ---- chunks ------------------------------------------------------------ */

/*
 * Chunks given back, kept for the next call (the GIL guards them: every
 * init and free runs with it). A chunk's arrays are some 5 MB, first
 * touched a page at a time: made anew for each call, a contains_many of
 * 1e7 keys faulted 3,000 pages in. A chunk whose key bytes grew past
 * twice the usual (one long key) gives those back first.
 */
#define SPARE_CHUNKS 2
static struct pybf_chunk spare[SPARE_CHUNKS];
static int spares;

static void chunk_free_arrays(struct pybf_chunk *ch)
{
	keyset_free(&ch->ks);
	free(ch->records);
	free(ch->h);
	free(ch->present);
	free(ch->answer);
	free(ch->offset);
	free(ch->bytes);
	memset(ch, 0, sizeof *ch);
}

int pybf_chunk_init(struct pybf_chunk *ch)
{
	if (spares > 0) {
		*ch = spare[--spares];
		return 0;
	}
	memset(ch, 0, sizeof *ch);
	ch->records = malloc(PYBF_CHUNK * sizeof *ch->records);
	ch->h = malloc(2 * PYBF_CHUNK * sizeof *ch->h);
	ch->present = malloc(PYBF_CHUNK);
	ch->answer = malloc(PYBF_CHUNK);
	ch->offset = malloc(PYBF_CHUNK * sizeof *ch->offset);
	if (ch->records && ch->h && ch->present && ch->answer && ch->offset)
		return 0;
	chunk_free_arrays(ch);
	PyErr_NoMemory();
	return -1;
}

void pybf_chunk_free(struct pybf_chunk *ch)
{
	pybf_chunk_release(ch);
	if (ch->records != NULL && spares < SPARE_CHUNKS) {
		if (ch->cap > 2 * PYBF_CHUNK_BYTES) {
			free(ch->bytes);
			ch->bytes = NULL;
			ch->cap = 0;
		}
		spare[spares++] = *ch;
		memset(ch, 0, sizeof *ch);
		return;
	}
	chunk_free_arrays(ch);
}

void pybf_chunk_release(struct pybf_chunk *ch)
{
	Py_CLEAR(ch->held);
	ch->n = 0;
	ch->used = 0;
}

/* A line's newline ends it; it is not part of the key (lines.h). */
static struct line record_of(const char *data, size_t len)
{
	struct line r;

	if (len > 0 && data[len - 1] == '\n')
		len--;
	r.data = data;
	r.len = len;
	return r;
}

static int plain_key(PyObject *item, struct line *out);

/*
 * A sequence's objects lie wherever Python put them, a cache miss each:
 * the one PREFETCH_AHEAD items on is asked for while one is copied.
 */
#define PREFETCH_AHEAD 8

/* The bytes of key (str as UTF-8, bytes as they are): 0, or -1 raised. */
static int key_bytes(PyObject *key, struct line *out)
{
	const char *data;
	Py_ssize_t len;

	if (plain_key(key, out))
		return 0;
	if (PyUnicode_Check(key)) {
		data = PyUnicode_AsUTF8AndSize(key, &len);
		if (data == NULL)
			return -1;
	} else if (PyBytes_Check(key)) {
		data = PyBytes_AS_STRING(key);
		len = PyBytes_GET_SIZE(key);
	} else {
		PyErr_Format(PyExc_TypeError, "a key is str or bytes, not %.100s",
			     Py_TYPE(key)->tp_name);
		return -1;
	}
	*out = record_of(data, (size_t)len);
	return 0;
}

static void fill_fixed(struct pybf_chunk *ch, struct pybf_source *s)
{
	const char *base = s->view.buf;

	while (ch->n < PYBF_CHUNK && s->pos < s->count) {
		const char *item = base + s->pos++ * s->itemsize;
		size_t len = (size_t)s->itemsize;

		while (len > 0 && item[len - 1] == '\0')
			len--;
		ch->records[ch->n++] = record_of(item, len);
	}
}

/* Lines as lines.h hands them out: without their newline; the last may lack one. */
static void fill_lines(struct pybf_chunk *ch, struct pybf_source *s)
{
	const char *base = s->view.buf;

	while (ch->n < PYBF_CHUNK && s->pos < s->count) {
		const char *start = base + s->pos;
		const char *nl = memchr(start, '\n', (size_t)(s->count - s->pos));
		size_t len = nl ? (size_t)(nl - start) : (size_t)(s->count - s->pos);

		ch->records[ch->n].data = start;
		ch->records[ch->n++].len = len;
		s->pos += (Py_ssize_t)len + (nl != NULL);
	}
}

/* Room for len more bytes of keys, calling nothing of Python's: 0, or -1 (no memory). */
static int grow_bytes(struct pybf_chunk *ch, size_t len)
{
	size_t cap = ch->cap ? ch->cap : PYBF_CHUNK_BYTES;
	char *grown;

	if (ch->bytes != NULL && len <= ch->cap - ch->used)
		return 0;
	while (cap - ch->used < len) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	if ((grown = realloc(ch->bytes, cap)) == NULL)
		return -1;
	ch->bytes = grown;
	ch->cap = cap;
	return 0;
}

/* The same, raising MemoryError: 0, or -1 raised. */
static int make_room(struct pybf_chunk *ch, size_t len)
{
	if (grow_bytes(ch, len) == 0)
		return 0;
	PyErr_NoMemory();
	return -1;
}

/* key's bytes appended to ch (room made). */
static void append_key(struct pybf_chunk *ch, struct line key)
{
	memcpy(ch->bytes + ch->used, key.data, key.len);
	ch->offset[ch->n] = ch->used;
	ch->records[ch->n++].len = key.len;
	ch->used += key.len;
}

/* A plain key's bytes (a str of ASCII or bytes, exactly): 1, else 0; reads the object only. */
static int plain_key(PyObject *item, struct line *out)
{
	if (PyUnicode_CheckExact(item) && PyUnicode_IS_COMPACT_ASCII(item)) {
		*out = record_of((const char *)PyUnicode_DATA(item), (size_t)PyUnicode_GET_LENGTH(item));
		return 1;
	}
	if (PyBytes_CheckExact(item)) {
		*out = record_of(PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
		return 1;
	}
	return 0;
}

size_t pybf_chunk_copy_plain(struct pybf_chunk *ch, PyObject *const *items, size_t n)
{
	size_t i;

	for (i = 0; i < n && ch->n < PYBF_CHUNK && ch->used < PYBF_CHUNK_BYTES; i++) {
		struct line key;

		if (i + PREFETCH_AHEAD < n)
			__builtin_prefetch(items[i + PREFETCH_AHEAD]);
		if (!plain_key(items[i], &key) || grow_bytes(ch, key.len) < 0)
			break;
		append_key(ch, key);
	}
	return i;
}

void pybf_chunk_place(struct pybf_chunk *ch)
{
	for (size_t i = 0; i < ch->n; i++)
		ch->records[i].data = ch->bytes + ch->offset[i];
}

/* item's key appended to ch: 0, or -1 raised. */
static int copy_key(struct pybf_chunk *ch, PyObject *item)
{
	struct line key;

	if (key_bytes(item, &key) < 0 || make_room(ch, key.len) < 0)
		return -1;
	append_key(ch, key);
	return 0;
}

/*
 * A list's or tuple's items, borrowed: nothing runs between taking one and
 * copying its key that could let it go, so none is held. Each is looked up
 * afresh (the list's length too), which costs nothing beside the copy and
 * holds whatever a key's conversion does.
 */
Py_ssize_t pybf_chunk_copy_items(struct pybf_chunk *ch, struct pybf_source *s, Py_ssize_t from,
				 Py_ssize_t to)
{
	Py_ssize_t i;

	for (i = from; i < to && ch->n < PYBF_CHUNK && ch->used < PYBF_CHUNK_BYTES; i++) {
		Py_ssize_t size = PySequence_Fast_GET_SIZE(s->seq);
		PyObject **items = PySequence_Fast_ITEMS(s->seq);

		if (i >= size)
			break;
		if (i + PREFETCH_AHEAD < size)
			__builtin_prefetch(items[i + PREFETCH_AHEAD]);
		if (copy_key(ch, items[i]) < 0)
			return -1;
	}
	return i;
}

/*
 * Keys from objects, each copied into the chunk's bytes and its object let
 * go at once. Holding every object until its chunk was asked, and letting
 * go of them then, cost two cache misses a key (an object's count is
 * written when taken and when let go, by then long out of cache): a third
 * of contains_many's time on a list of 1e7 str. The copies are contiguous
 * too, where the library hashes them. Until PYBF_CHUNK keys or
 * PYBF_CHUNK_BYTES bytes.
 */
static int fill_copied(struct pybf_chunk *ch, struct pybf_source *s)
{
	if (s->seq != NULL) {
		Py_ssize_t reached = pybf_chunk_copy_items(ch, s, s->pos, PY_SSIZE_T_MAX);

		pybf_chunk_place(ch);
		if (reached < 0)
			return -1;
		s->pos = reached;
		return 0;
	}
	while (ch->n < PYBF_CHUNK && ch->used < PYBF_CHUNK_BYTES) {
		PyObject *item = PyIter_Next(s->iter);
		int r;

		if (item == NULL)
			break;
		r = copy_key(ch, item);
		Py_DECREF(item);
		if (r < 0)
			return -1;
	}
	pybf_chunk_place(ch);	/* the bytes move no more: where each key lies */
	return PyErr_Occurred() ? -1 : 0;
}

int pybf_chunk_fill(struct pybf_chunk *ch, struct pybf_source *s)
{
	pybf_chunk_release(ch);
	if (s->iter == NULL && s->seq == NULL && s->itemsize == 0) {
		fill_lines(ch, s);
		return 0;
	}
	if (s->iter == NULL && s->seq == NULL) {
		fill_fixed(ch, s);
		return 0;
	}
	return fill_copied(ch, s);
}

int pybf_chunk_one(struct pybf_chunk *ch, PyObject *key)
{
	pybf_chunk_release(ch);
	if (key_bytes(key, &ch->records[0]) < 0)
		return -1;
	Py_INCREF(key);
	ch->held = key;
	ch->n = 1;
	return 0;
}

int pybf_chunk_cut(struct pybf_chunk *ch, const struct key_spec *spec)
{
	return keyset_build(&ch->ks, spec, ch->records, ch->n);
}

void pybf_chunk_answers(struct pybf_chunk *ch)
{
	memset(ch->answer, 0, ch->n);
	for (size_t j = 0; j < ch->ks.count; j++)
		ch->answer[ch->ks.record[j]] = ch->present[j];
}

/* ---- where answers go -------------------------------------------------- */

int pybf_sink_open(struct pybf_sink *k, PyObject *out)
{
	memset(k, 0, sizeof *k);
	if (out == NULL || out == Py_None) {
		k->list = PyList_New(0);
		return k->list == NULL ? -1 : 0;
	}
	if (PyObject_GetBuffer(out, &k->out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
		return -1;
	k->has_out = 1;
	return 0;
}

int pybf_sink_put(struct pybf_sink *k, const unsigned char *answer, size_t n)
{
	if (k->has_out) {
		if ((size_t)(k->out.len - k->pos) < n) {
			PyErr_SetString(PyExc_ValueError, "out has fewer items than there are keys");
			return -1;
		}
		memcpy((char *)k->out.buf + k->pos, answer, n);
		k->pos += (Py_ssize_t)n;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		PyObject *b = answer[i] ? Py_True : Py_False;

		if (k->pos < k->size) {
			Py_INCREF(b);
			PyList_SET_ITEM(k->list, k->pos, b);
		} else if (PyList_Append(k->list, b) < 0) {
			return -1;
		}
		k->pos++;
	}
	return 0;
}

/*
 * A big list's array of items in 2 MiB pages where the kernel gives them
 * (transparent huge pages on request), not 4 KiB ones: a list of 1e7
 * answers is 80 MB, 20,000 page faults at 4 KiB, and a fault can cost
 * 10 us on a virtual machine (a fifth of contains_many's time there).
 * Only the whole 2 MiB spans inside it are asked for; what else lies in
 * them is the array's own.
 */
static void back_in_huge_pages(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t span = (uintptr_t)2 << 20;
	uintptr_t start = ((uintptr_t)p + span - 1) & ~(span - 1), end = ((uintptr_t)p + len) & ~(span - 1);

	if (end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p, (void)len;
#endif
}

/*
 * The list made n long at once, its items NULL until put (a list whose
 * items are NULL is never seen by Python code: finish cuts it first;
 * freeing or collecting one skips NULL items).
 */
int pybf_sink_expect(struct pybf_sink *k, Py_ssize_t n)
{
	PyObject *list;

	if (k->has_out || k->pos > 0 || n <= 0)
		return 0;
	if ((list = PyList_New(n)) == NULL)
		return -1;
	back_in_huge_pages(((PyListObject *)list)->ob_item, (size_t)n * sizeof(PyObject *));
	Py_DECREF(k->list);
	k->list = list;
	k->size = n;
	return 0;
}

PyObject *pybf_sink_finish(struct pybf_sink *k)
{
	PyObject *list = k->list;

	if (!k->has_out) {
		k->list = NULL;
		if (k->pos < k->size) {	/* fewer keys than len() said: the NULL tail cut off */
			PyObject *cut = PyList_GetSlice(list, 0, k->pos);

			Py_DECREF(list);
			return cut;
		}
		return list;
	}
	if (k->pos != k->out.len) {
		pybf_sink_close(k);
		PyErr_SetString(PyExc_ValueError, "out has more items than there are keys");
		return NULL;
	}
	pybf_sink_close(k);
	Py_RETURN_NONE;
}

void pybf_sink_close(struct pybf_sink *k)
{
	Py_CLEAR(k->list);
	if (k->has_out)
		PyBuffer_Release(&k->out);
	k->has_out = 0;
}

/* ---- keys, paths, locks ---------------------------------------------- */

int pybf_key_arg(PyObject *obj, unsigned char key[16])
{
	const char *why;

	if (PyBytes_Check(obj) && PyBytes_GET_SIZE(obj) == 16) {
		memcpy(key, PyBytes_AS_STRING(obj), 16);
		return 0;
	}
	if (PyUnicode_Check(obj)) {
		const char *hex = PyUnicode_AsUTF8(obj);

		if (hex == NULL)
			return -1;
		if (numparse_hex_key(hex, key, &why) == 0)
			return 0;
		PyErr_Format(PyExc_ValueError, "key: %s", why);
		return -1;
	}
	PyErr_SetString(PyExc_TypeError, "key is 16 bytes or a str of 32 hexadecimal digits");
	return -1;
}

/* The key in a key file, made (mode 0600, random) when there is none yet, as --key-file does. */
static int key_from_file(PyObject *key_file, unsigned char out[16])
{
	PyObject *path = pybf_path(key_file);
	const char *why;
	int r;

	if (path == NULL)
		return -1;
	if (access(PyBytes_AS_STRING(path), F_OK) == 0)
		r = keyfile_read(PyBytes_AS_STRING(path), out, &why);
	else
		r = keyfile_create(PyBytes_AS_STRING(path), out, &why);
	if (r < 0)
		PyErr_Format(pybf_error, "%s: %s", PyBytes_AS_STRING(path), why);
	Py_DECREF(path);
	return r;
}

int pybf_new_key(PyObject *key, PyObject *key_file, const unsigned char *fallback,
		 unsigned char out[16])
{
	if (key != NULL && key != Py_None && key_file != NULL && key_file != Py_None) {
		PyErr_SetString(PyExc_ValueError, "give key or key_file, not both");
		return -1;
	}
	if (key != NULL && key != Py_None)
		return pybf_key_arg(key, out);
	if (key_file != NULL && key_file != Py_None)
		return key_from_file(key_file, out) < 0 ? -1 : (int)FILTER_KEY_EXTERNAL;
	if (fallback != NULL) {
		memcpy(out, fallback, 16);
		return 0;
	}
	if (filter_random_key(out) == 0)
		return 0;
	PyErr_SetFromErrno(PyExc_OSError);
	return -1;
}

PyObject *pybf_path(PyObject *obj)
{
	PyObject *path = NULL;

	if (!PyUnicode_FSConverter(obj, &path))
		return NULL;
	return path;
}

int pybf_separator_arg(PyObject *sep, int *out)
{
	const char *s;
	Py_ssize_t len;

	*out = -1;
	if (sep == Py_None)
		return 0;
	s = PyUnicode_Check(sep) ? PyUnicode_AsUTF8AndSize(sep, &len) : NULL;
	if (s != NULL && len == 1 && s[0] != '\n') {
		*out = (unsigned char)s[0];
		return 0;
	}
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_ValueError, "separator is one ASCII character, not a newline");
	return -1;
}

void pybf_rdlock(pthread_rwlock_t *l)
{
	if (pthread_rwlock_tryrdlock(l) == 0)
		return;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_rdlock(l);
	Py_END_ALLOW_THREADS
}

void pybf_wrlock(pthread_rwlock_t *l)
{
	if (pthread_rwlock_trywrlock(l) == 0)
		return;
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_wrlock(l);
	Py_END_ALLOW_THREADS
}

/* ---- the module -------------------------------------------------------- */

static PyObject *random_key(PyObject *mod, PyObject *noargs)
{
	unsigned char key[16];

	(void)mod;
	(void)noargs;
	if (filter_random_key(key) < 0)
		return PyErr_SetFromErrno(PyExc_OSError);
	return PyBytes_FromStringAndSize((const char *)key, 16);
}

static PyObject *count_lines(PyObject *mod, PyObject *buffer)
{
	Py_buffer view;
	size_t n;

	(void)mod;
	if (PyObject_GetBuffer(buffer, &view, PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	n = pybf_lines_count(view.buf, (size_t)view.len);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&view);
	return PyLong_FromSize_t(n);
}

static PyMethodDef module_methods[] = {
	{ "random_key", random_key, METH_NOARGS, "16 random bytes, a new filter's key." },
	{ "count_lines", count_lines, METH_O,
	  "count_lines(buffer): the lines in buffer, the last perhaps without its newline." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, "_bftools",
	"libbftools for Python: filters, sketches and heavy-hitter summaries.",
	-1, module_methods, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) == 0)
		return 0;
	Py_DECREF(t);
	return -1;
}

static int add_exceptions(PyObject *m)
{
	pybf_error = PyErr_NewExceptionWithDoc("bftools.Error",
		"A bftools library call failed; the message is the library's.", NULL, NULL);
	if (pybf_error == NULL)
		return -1;
	pybf_format_error = PyErr_NewExceptionWithDoc("bftools.FormatError",
		"A file is not what it was read as: not a bftools file, damaged, truncated.",
		pybf_error, NULL);
	if (pybf_format_error == NULL)
		return -1;
	Py_INCREF(pybf_error);
	Py_INCREF(pybf_format_error);
	if (PyModule_AddObject(m, "Error", pybf_error) < 0 ||
	    PyModule_AddObject(m, "FormatError", pybf_format_error) < 0)
		return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__bftools(void)
{
	PyObject *m = PyModule_Create(&module_def);

	if (m == NULL)
		return NULL;
	if (add_exceptions(m) < 0 ||
	    PyModule_AddStringConstant(m, "VERSION", BFTOOLS_VERSION) < 0 ||
	    add_type(m, &pybf_filter_type, "Filter") < 0 ||
	    add_type(m, &pybf_sketch_type, "Sketch") < 0 ||
	    add_type(m, &pybf_topk_type, "TopK") < 0 ||
	    add_type(m, &pybf_lock_type, "UpdateLock") < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
