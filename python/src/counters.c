/* SPDX-License-Identifier: MIT */
/*
 * counters.c - bftools.Sketch (bfcount's HyperLogLog sketches, sketch.h)
 * and bftools.TopK (bftop's heavy-hitter summaries, topk.h), and
 * bftools.UpdateLock (lock.h: the lock the programs take to update a
 * file), over the library's own calls.
 *
 * Keys are cut and folded as the programs cut them (keys.h), hashed and
 * counted a chunk at a time with the GIL released. A summary's updates
 * depend on key order, so they run in the order given, on one thread at
 * a time (the object's lock).
 */
#include "pybftools.h"

#include <errno.h>
#include <string.h>

/* ---- feeding keys ---------------------------------------------------- */

typedef int feed_fn(void *obj, struct pybf_chunk *ch, const char **why);

/* Every chunk of s through fn, under the write lock, the GIL released. */
static int feed(void *obj, pthread_rwlock_t *rw, PyObject *name, struct pybf_source *s,
		feed_fn *fn)
{
	struct pybf_chunk ch;
	const char *why = NULL;
	int r = 0;

	if (pybf_chunk_init(&ch) < 0)
		return -1;
	while (r == 0 && (r = pybf_chunk_fill(&ch, s)) == 0 && ch.n > 0) {
		pybf_wrlock(rw);
		Py_BEGIN_ALLOW_THREADS
		r = fn(obj, &ch, &why);
		Py_END_ALLOW_THREADS
		pthread_rwlock_unlock(rw);
		if (r < 0)
			pybf_raise(pybf_error, name, why);
	}
	pybf_chunk_free(&ch);
	return r;
}

/* feed() over args (keys) or (buffer, itemsize): None, or NULL raised. */
static PyObject *feed_args(void *obj, pthread_rwlock_t *rw, PyObject *name, PyObject *args,
			   feed_fn *fn)
{
	PyObject *keys;
	Py_ssize_t itemsize = 0;
	struct pybf_source s;
	int r;

	if (!PyArg_ParseTuple(args, "O|n", &keys, &itemsize))
		return NULL;
	r = PyTuple_GET_SIZE(args) == 2 ? pybf_source_fixed(&s, keys, itemsize)
					: pybf_source_iter(&s, keys);
	if (r < 0)
		return NULL;
	r = feed(obj, rw, name, &s, fn);
	pybf_source_close(&s);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* A path argument opened for loading: the bytes path and its str name, or -1 raised. */
static int path_and_name(PyObject *arg, PyObject **path, PyObject **name)
{
	*path = pybf_path(arg);
	if (*path == NULL)
		return -1;
	*name = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(*path));
	if (*name != NULL)
		return 0;
	Py_CLEAR(*path);
	return -1;
}

/* ---- saving and merging, the same for both -------------------------- */

typedef int save_fn(const void *obj, const char *path, const char **why);
typedef int merge_fn(void *into, const void *from, const char **why);

/*
 * obj saved to the path arg names, under rw's read lock with the GIL
 * released; the object then goes by that name (*name). None, or NULL raised.
 */
static PyObject *save_locked(const void *obj, pthread_rwlock_t *rw, PyObject **name,
			     PyObject *arg, save_fn *fn)
{
	PyObject *path, *saved;
	const char *why = NULL;
	int r;

	if (path_and_name(arg, &path, &saved) < 0)
		return NULL;
	pybf_rdlock(rw);
	Py_BEGIN_ALLOW_THREADS
	r = fn(obj, PyBytes_AS_STRING(path), &why);
	Py_END_ALLOW_THREADS
	pthread_rwlock_unlock(rw);
	Py_DECREF(path);
	if (r < 0) {
		pybf_raise(pybf_error, saved, why);
		Py_DECREF(saved);
		return NULL;
	}
	Py_XSETREF(*name, saved);
	Py_RETURN_NONE;
}

/* from merged into into, each under its lock (write, read). None, or NULL raised. */
static PyObject *merge_locked(void *into, pthread_rwlock_t *into_rw, const void *from,
			      pthread_rwlock_t *from_rw, merge_fn *fn)
{
	const char *why = NULL;
	int r;

	pybf_wrlock(into_rw);
	pybf_rdlock(from_rw);
	r = fn(into, from, &why);
	pthread_rwlock_unlock(from_rw);
	pthread_rwlock_unlock(into_rw);
	if (r < 0)
		return PyErr_Format(pybf_error, "cannot be merged: %s", why);
	Py_RETURN_NONE;
}

static int save_sketch(const void *obj, const char *path, const char **why)
{
	return sketch_save_path(obj, path, why);
}

static int merge_sketch(void *into, const void *from, const char **why)
{
	return sketch_merge(into, from, why);
}

static int save_topk(const void *obj, const char *path, const char **why)
{
	return topk_file_save_path(obj, path, why);
}

static int merge_topk(void *into, const void *from, const char **why)
{
	return topk_merge(into, from, why);
}

/* ---- Sketch ----------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	struct sketch *s;
	struct key_spec spec;
	pthread_rwlock_t rw;
	PyObject *name;
} SketchObject;

static int sketch_feed(void *obj, struct pybf_chunk *ch, const char **why)
{
	SketchObject *self = obj;

	if (self->s->needs_key) {
		*why = "the sketch's key is kept in a key file: give key_file=";
		return -1;
	}
	if (pybf_chunk_cut(ch, &self->spec) < 0) {
		*why = strerror(ENOMEM);
		return -1;
	}
	sketch_hash(self->s, ch->ks.keys, ch->ks.count, ch->h);
	sketch_add_hashed(self->s, ch->h, ch->ks.count);
	return 0;
}

static PyObject *sketch_add_many(SketchObject *self, PyObject *args)
{
	return feed_args(self, &self->rw, self->name, args, sketch_feed);
}

static PyObject *sketch_add(SketchObject *self, PyObject *key)
{
	PyObject *one = PyTuple_Pack(1, key), *args, *r;

	if (one == NULL)
		return NULL;
	args = PyTuple_Pack(1, one);
	Py_DECREF(one);
	if (args == NULL)
		return NULL;
	r = sketch_add_many(self, args);
	Py_DECREF(args);
	return r;
}

static int sketch_load_file(SketchObject *self, PyObject *arg, PyObject *key_file)
{
	PyObject *path;
	const char *why = NULL;
	unsigned char key[16];
	int r = 0;

	if (path_and_name(arg, &path, &self->name) < 0)
		return -1;
	Py_BEGIN_ALLOW_THREADS
	self->s = sketch_load_path(PyBytes_AS_STRING(path), &why);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (self->s == NULL) {
		pybf_raise(errno == ENOENT ? PyExc_FileNotFoundError : pybf_format_error, self->name, why);
		return -1;
	}
	if (key_file != Py_None && self->s->needs_key) {
		r = pybf_new_key(Py_None, key_file, NULL, key) < 0 ? -1 : sketch_supply_key(self->s, key, &why);
		if (r < 0 && !PyErr_Occurred())
			pybf_raise(pybf_error, self->name, why);
	}
	return r;
}

static int sketch_init(SketchObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "path", "precision", "key", "key_file", "fold_case", "field",
				 "separator", NULL };
	PyObject *path = Py_None, *key = Py_None, *key_file = Py_None, *sep = Py_None;
	unsigned precision = HLL_PRECISION_DEFAULT;
	unsigned long field = 0;
	unsigned char k[16];
	const char *why = NULL;
	int fold = 0, flags;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$IOOpkO", names, &path, &precision, &key,
					 &key_file, &fold, &field, &sep) ||
	    pybf_separator_arg(sep, &self->spec.separator) < 0)
		return -1;
	sketch_free(self->s);
	self->s = NULL;
	Py_CLEAR(self->name);
	self->spec.field = field;
	if (path != Py_None) {
		if (sketch_load_file(self, path, key_file) < 0)
			return -1;
	} else {
		if ((flags = pybf_new_key(key, key_file, sketch_default_key, k)) < 0)
			return -1;
		self->s = sketch_new(precision, FILTER_SIPHASH_1_3,
				     (uint32_t)flags | (fold ? FILTER_FOLD_CASE : 0), k, &why);
		if (self->s == NULL)
			return pybf_raise(pybf_error, NULL, why) ? 0 : -1;
	}
	self->spec.fold_case = (self->s->flags & FILTER_FOLD_CASE) != 0;
	return 0;
}

static int sketch_ready(SketchObject *self)
{
	if (self->s != NULL)
		return 0;
	PyErr_SetString(pybf_error, "the sketch was not initialised");
	return -1;
}

static PyObject *sketch_count(SketchObject *self, PyObject *noargs)
{
	double e;

	(void)noargs;
	if (sketch_ready(self) < 0)
		return NULL;
	pybf_rdlock(&self->rw);
	e = sketch_estimate(self->s);
	pthread_rwlock_unlock(&self->rw);
	return PyFloat_FromDouble(e);
}

static Py_ssize_t sketch_len(PyObject *obj)
{
	PyObject *e = sketch_count((SketchObject *)obj, NULL);
	double v;

	if (e == NULL)
		return -1;
	v = PyFloat_AS_DOUBLE(e);
	Py_DECREF(e);
	return (Py_ssize_t)(v + 0.5);
}

static PyObject *sketch_error(SketchObject *self, PyObject *noargs)
{
	(void)noargs;
	if (sketch_ready(self) < 0)
		return NULL;
	return PyFloat_FromDouble(sketch_relative_error(self->s));
}

static PyObject *sketch_merge_other(SketchObject *self, PyObject *other)
{
	SketchObject *o = (SketchObject *)other;

	if (!PyObject_TypeCheck(other, &pybf_sketch_type))
		return PyErr_Format(PyExc_TypeError, "the other is a bftools.Sketch");
	if (sketch_ready(self) < 0 || sketch_ready(o) < 0)
		return NULL;
	if (o == self)
		Py_RETURN_NONE;
	return merge_locked(self->s, &self->rw, o->s, &o->rw, merge_sketch);
}

static PyObject *sketch_save_file(SketchObject *self, PyObject *arg)
{
	if (sketch_ready(self) < 0)
		return NULL;
	return save_locked(self->s, &self->rw, &self->name, arg, save_sketch);
}

static PyObject *sketch_get_precision(SketchObject *self, void *closure)
{
	(void)closure;
	return sketch_ready(self) < 0 ? NULL : PyLong_FromUnsignedLong(sketch_precision(self->s));
}

static PyObject *sketch_get_insertions(SketchObject *self, void *closure)
{
	(void)closure;
	return sketch_ready(self) < 0 ? NULL : PyLong_FromUnsignedLongLong(self->s->insertions);
}

static PyObject *sketch_new_object(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	SketchObject *self = (SketchObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (self == NULL)
		return NULL;
	self->spec.separator = -1;
	pthread_rwlock_init(&self->rw, NULL);
	return (PyObject *)self;
}

static void sketch_dealloc(SketchObject *self)
{
	sketch_free(self->s);
	Py_CLEAR(self->name);
	pthread_rwlock_destroy(&self->rw);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef sketch_methods[] = {
	{ "add", (PyCFunction)sketch_add, METH_O, "add(key): count one key." },
	{ "_add_many", (PyCFunction)sketch_add_many, METH_VARARGS,
	  "_add_many(keys) or _add_many(buffer, itemsize): count many keys." },
	{ "count", (PyCFunction)sketch_count, METH_NOARGS, "count(): the distinct keys, estimated." },
	{ "relative_error", (PyCFunction)sketch_error, METH_NOARGS,
	  "relative_error(): the estimate's relative standard error (0 while exact)." },
	{ "merge", (PyCFunction)sketch_merge_other, METH_O,
	  "merge(other): this sketch becomes the union of both." },
	{ "save", (PyCFunction)sketch_save_file, METH_O, "save(path): write the sketch file atomically." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef sketch_getset[] = {
	{ "precision", (getter)sketch_get_precision, NULL, "log2 of the registers", NULL },
	{ "insertions", (getter)sketch_get_insertions, NULL, "keys added, repeats included", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PySequenceMethods sketch_sequence = { .sq_length = sketch_len };

PyTypeObject pybf_sketch_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "bftools._bftools.Sketch",
	.tp_basicsize = sizeof(SketchObject),
	.tp_dealloc = (destructor)sketch_dealloc,
	.tp_as_sequence = &sketch_sequence,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "bfcount's HyperLogLog sketch (see bftools.Sketch).",
	.tp_methods = sketch_methods,
	.tp_getset = sketch_getset,
	.tp_init = (initproc)sketch_init,
	.tp_new = sketch_new_object,
};

/* ---- TopK ---------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	struct topk *t;
	struct key_spec spec;
	pthread_rwlock_t rw;
	PyObject *name;
} TopKObject;

static int topk_feed(void *obj, struct pybf_chunk *ch, const char **why)
{
	TopKObject *self = obj;

	if (pybf_chunk_cut(ch, &self->spec) < 0) {
		*why = strerror(ENOMEM);
		return -1;
	}
	topk_hash(self->t, ch->ks.keys, ch->ks.count, ch->h);
	topk_add_hashed(self->t, ch->ks.keys, ch->h, ch->ks.count);
	return 0;
}

static PyObject *topk_update(TopKObject *self, PyObject *args)
{
	return feed_args(self, &self->rw, self->name, args, topk_feed);
}

static int topk_load_file(TopKObject *self, PyObject *arg)
{
	PyObject *path;
	const char *why = NULL;

	if (path_and_name(arg, &path, &self->name) < 0)
		return -1;
	Py_BEGIN_ALLOW_THREADS
	self->t = topk_file_load_path(PyBytes_AS_STRING(path), &why);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (self->t != NULL)
		return 0;
	pybf_raise(errno == ENOENT ? PyExc_FileNotFoundError : pybf_format_error, self->name, why);
	return -1;
}

static int topk_init(TopKObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "path", "error", "confidence", "key", "fold_case", "field",
				 "separator", NULL };
	PyObject *path = Py_None, *key = Py_None, *sep = Py_None;
	double eps = TOPK_EPS_DEFAULT, confidence = 0.999;
	struct topk_params p;
	unsigned long field = 0;
	unsigned char k[16];
	const char *why = NULL;
	int fold = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$ddOpkO", names, &path, &eps, &confidence,
					 &key, &fold, &field, &sep) ||
	    pybf_separator_arg(sep, &self->spec.separator) < 0)
		return -1;
	topk_free(self->t);
	self->t = NULL;
	Py_CLEAR(self->name);
	self->spec.field = field;
	if (path != Py_None) {
		if (topk_load_file(self, path) < 0)
			return -1;
	} else {
		if (pybf_new_key(key, Py_None, topk_default_key, k) < 0)
			return -1;
		if (topk_size(eps, confidence, &p, &why) == 0)
			self->t = topk_new(&p, FILTER_SIPHASH_1_3, fold ? FILTER_FOLD_CASE : 0, k, &why);
		if (self->t == NULL) {
			PyErr_SetString(pybf_error, why);
			return -1;
		}
	}
	self->spec.fold_case = (self->t->flags & FILTER_FOLD_CASE) != 0;
	return 0;
}

static int topk_ready(TopKObject *self)
{
	if (self->t != NULL)
		return 0;
	PyErr_SetString(pybf_error, "the summary was not initialised");
	return -1;
}

static PyObject *item_tuple(const struct topk_item *it)
{
	size_t len = it->truncated ? TOPK_KEY_MAX : (size_t)it->len;

	return Py_BuildValue("(y#KKN)", (const char *)it->key, (Py_ssize_t)len,
			     (unsigned long long)(it->count - it->error),
			     (unsigned long long)it->upper, PyBool_FromLong(it->truncated));
}

static PyObject *items_list(const struct topk_item *items, size_t n)
{
	PyObject *list = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; list != NULL && i < n; i++) {
		PyObject *one = item_tuple(&items[i]);

		if (one == NULL)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, one);
	}
	return list;
}

static PyObject *topk_top(TopKObject *self, PyObject *args)
{
	Py_ssize_t want = -1;
	struct topk_item *items;
	PyObject *list;
	size_t n;

	if (!PyArg_ParseTuple(args, "|n", &want) || topk_ready(self) < 0)
		return NULL;
	pybf_rdlock(&self->rw);
	items = PyMem_RawMalloc(((size_t)self->t->kept + 1) * sizeof *items);
	n = items ? topk_items(self->t, items) : 0;
	if (want >= 0 && (size_t)want < n)
		n = (size_t)want;
	list = items ? items_list(items, n) : PyErr_NoMemory();
	pthread_rwlock_unlock(&self->rw);
	PyMem_RawFree(items);
	return list;
}

static PyObject *topk_bounds(TopKObject *self, PyObject *key)
{
	struct pybf_chunk ch;
	uint64_t lower = 0, upper = 0;
	int has_key;

	if (topk_ready(self) < 0 || pybf_chunk_init(&ch) < 0)
		return NULL;
	if (pybf_chunk_one(&ch, key) < 0 || pybf_chunk_cut(&ch, &self->spec) < 0) {
		pybf_chunk_free(&ch);
		return PyErr_Occurred() ? NULL : PyErr_NoMemory();
	}
	has_key = ch.ks.count == 1;
	pybf_rdlock(&self->rw);
	if (has_key) {
		topk_hash(self->t, ch.ks.keys, 1, ch.h);
		topk_query(self->t, ch.h, &lower, &upper);
	}
	pthread_rwlock_unlock(&self->rw);
	pybf_chunk_free(&ch);
	return Py_BuildValue("(KK)", (unsigned long long)lower, (unsigned long long)upper);
}

static PyObject *topk_merge_other(TopKObject *self, PyObject *other)
{
	TopKObject *o = (TopKObject *)other;

	if (!PyObject_TypeCheck(other, &pybf_topk_type))
		return PyErr_Format(PyExc_TypeError, "the other is a bftools.TopK");
	if (topk_ready(self) < 0 || topk_ready(o) < 0)
		return NULL;
	if (o == self)
		return PyErr_Format(pybf_error, "a summary is not merged with itself");
	return merge_locked(self->t, &self->rw, o->t, &o->rw, merge_topk);
}

static PyObject *topk_save_file(TopKObject *self, PyObject *arg)
{
	if (topk_ready(self) < 0)
		return NULL;
	return save_locked(self->t, &self->rw, &self->name, arg, save_topk);
}

static PyObject *topk_get_total(TopKObject *self, void *closure)
{
	(void)closure;
	return topk_ready(self) < 0 ? NULL : PyLong_FromUnsignedLongLong(self->t->total);
}

static PyObject *topk_get_capacity(TopKObject *self, void *closure)
{
	(void)closure;
	return topk_ready(self) < 0 ? NULL : PyLong_FromUnsignedLongLong(self->t->params.capacity);
}

static PyObject *topk_get_floor(TopKObject *self, void *closure)
{
	(void)closure;
	return topk_ready(self) < 0 ? NULL : PyLong_FromUnsignedLongLong(topk_floor(self->t));
}

static PyObject *topk_new_object(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	TopKObject *self = (TopKObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (self == NULL)
		return NULL;
	self->spec.separator = -1;
	pthread_rwlock_init(&self->rw, NULL);
	return (PyObject *)self;
}

static void topk_dealloc(TopKObject *self)
{
	topk_free(self->t);
	Py_CLEAR(self->name);
	pthread_rwlock_destroy(&self->rw);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef topk_methods[] = {
	{ "_update", (PyCFunction)topk_update, METH_VARARGS,
	  "_update(keys) or _update(buffer, itemsize): count keys, in order." },
	{ "_top", (PyCFunction)topk_top, METH_VARARGS,
	  "_top(n=-1): [(key, lower, upper, truncated)], most frequent first." },
	{ "bounds", (PyCFunction)topk_bounds, METH_O,
	  "bounds(key): (lower, upper), how often key surely occurred at least and at most." },
	{ "merge", (PyCFunction)topk_merge_other, METH_O,
	  "merge(other): this summary becomes that of both streams." },
	{ "save", (PyCFunction)topk_save_file, METH_O, "save(path): write the summary atomically." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef topk_getset[] = {
	{ "total", (getter)topk_get_total, NULL, "keys counted, repeats included", NULL },
	{ "capacity", (getter)topk_get_capacity, NULL, "keys kept", NULL },
	{ "floor", (getter)topk_get_floor, NULL, "the most a key not kept occurred", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject pybf_topk_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "bftools._bftools.TopK",
	.tp_basicsize = sizeof(TopKObject),
	.tp_dealloc = (destructor)topk_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "bftop's heavy-hitter summary (see bftools.TopK).",
	.tp_methods = topk_methods,
	.tp_getset = topk_getset,
	.tp_init = (initproc)topk_init,
	.tp_new = topk_new_object,
};

/* ---- UpdateLock ---------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	struct lock l;
	PyObject *path;		/* bytes */
} LockObject;

static int lock_init_object(LockObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "path", NULL };
	PyObject *arg;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O", names, &arg))
		return -1;
	Py_CLEAR(self->path);
	self->path = pybf_path(arg);
	return self->path == NULL ? -1 : 0;
}

static PyObject *lock_acquire(LockObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "wait", NULL };
	double wait = -1.0;
	const char *why = NULL;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|d", names, &wait) || self->path == NULL)
		return self->path == NULL && !PyErr_Occurred() ? PyErr_Format(pybf_error, "no path") : NULL;
	if (self->l.fd >= 0)
		return PyErr_Format(pybf_error, "the lock is held already");
	Py_BEGIN_ALLOW_THREADS
	r = lock_wait(&self->l, PyBytes_AS_STRING(self->path), wait, &why);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return PyErr_Format(pybf_error, "%s: cannot lock it for updating: %s",
				    PyBytes_AS_STRING(self->path), why);
	return PyBool_FromLong(r == 0);
}

static PyObject *lock_release_object(LockObject *self, PyObject *noargs)
{
	(void)noargs;
	lock_release(&self->l);
	Py_RETURN_NONE;
}

static PyObject *lock_enter(LockObject *self, PyObject *noargs)
{
	PyObject *none = PyTuple_New(0), *r;

	(void)noargs;
	if (none == NULL)
		return NULL;
	r = lock_acquire(self, none, NULL);
	Py_DECREF(none);
	if (r == NULL)
		return NULL;
	Py_DECREF(r);
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *lock_exit(LockObject *self, PyObject *args)
{
	(void)args;
	lock_release(&self->l);
	Py_RETURN_FALSE;
}

static PyObject *lock_new_object(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	LockObject *self = (LockObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (self != NULL)
		self->l.fd = -1;
	return (PyObject *)self;
}

static void lock_dealloc(LockObject *self)
{
	lock_release(&self->l);
	Py_CLEAR(self->path);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef lock_methods[] = {
	{ "acquire", (PyCFunction)(void (*)(void))lock_acquire, METH_VARARGS | METH_KEYWORDS,
	  "acquire(wait=-1): take the lock, waiting at most wait seconds (< 0: as long as it takes); whether it was taken." },
	{ "release", (PyCFunction)lock_release_object, METH_NOARGS, "release(): let others update." },
	{ "__enter__", (PyCFunction)lock_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)lock_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject pybf_lock_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "bftools.UpdateLock",
	.tp_basicsize = sizeof(LockObject),
	.tp_dealloc = (destructor)lock_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "UpdateLock(path): the lock bfbuild, bfuniq and bfmerge take to update path.",
	.tp_methods = lock_methods,
	.tp_init = (initproc)lock_init_object,
	.tp_new = lock_new_object,
};
