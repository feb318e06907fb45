/* SPDX-License-Identifier: MIT */
/*
 * filter.c - bftools.Filter: a filter file's contents (a fixed filter, a
 * growing cascade, a window, a DCSO filter) asked and changed from
 * Python, through the same library calls as the programs.
 *
 * Keys are cut as bfgrep cuts a line's (keyset_build: the whole line, or
 * field= and separator= as -k and -t; ASCII case folded when the filter
 * says so), hashed many at once (filter_hash: SipHash in SIMD lanes) and
 * probed in chunks with the GIL released. A read-write lock per object
 * lets Python threads test one filter together while adds take turns.
 * test_and_add counts insertions as bfuniq does (only the keys new to the
 * filter), add as bfbuild does, so files saved from here match theirs.
 */
#include "pybftools.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	PyObject_HEAD
	struct cascade *c;	/* a filter or cascade, or NULL when w is set */
	struct window *w;
	struct key_spec spec;	/* fold_case follows the filter's flags */
	pthread_rwlock_t rw;
	int rw_ready;
	PyObject *name;		/* str: the path it was loaded from or saved to, or NULL */
	int disk_known;
	uint64_t disk_bytes;
} FilterObject;

enum op { OP_TEST, OP_ADD, OP_TEST_AND_ADD };

static const struct filter_params *params_of(const FilterObject *f)
{
	return f->w ? window_params_of(f->w) : cascade_params(f->c);
}

static int ready(FilterObject *f)
{
	if (f->c != NULL || f->w != NULL)
		return 0;
	PyErr_SetString(pybf_error, "the filter was not initialised");
	return -1;
}

/* ---- the work, without the GIL --------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A window's generations count as bfuniq's seen-set (1) or bfbuild's (0). */
static void window_mode(struct window *w, int new_only)
{
	w->count_new_only = new_only;
	for (size_t g = 0; g < w->ngen; g++)
		w->gen[g]->count_new_only = new_only;
}

static int window_op(struct window *w, enum op op, const struct line *keys, const uint64_t *h,
		     size_t n, unsigned char *present, const char **why)
{
	uint64_t now = now_ms();
	int was = w->count_new_only, r;

	if (op == OP_TEST) {
		*why = cascade_err_no_key;
		return window_test_hashed(w, keys, h, n, now, present);
	}
	window_mode(w, op == OP_TEST_AND_ADD);
	r = window_test_and_add_hashed(w, keys, h, n, NULL, now, present, NULL, why);
	window_mode(w, was);
	return r;
}

static int cascade_op(struct cascade *c, enum op op, const struct line *keys, const uint64_t *h,
		      size_t n, unsigned char *present, const char **why)
{
	int was = c->count_new_only, r;

	if (op == OP_TEST) {
		*why = cascade_err_no_key;
		return cascade_test_hashed(c, keys, h, n, present);
	}
	/* a DCSO filter counts the keys that set a new bit, its N, as bfbuild keeps it */
	if (op == OP_ADD && layout_has(cascade_params(c)->layout, LAYOUT_FOREIGN))
		return cascade_test_and_add_hashed(c, keys, h, n, present, NULL, why);
	if (op == OP_ADD)
		return cascade_add_hashed(c, keys, h, n, why);
	c->count_new_only = 1;
	r = cascade_test_and_add_hashed(c, keys, h, n, present, NULL, why);
	c->count_new_only = was;
	return r;
}

/* Cut, hash and ask one chunk; answers in ch->answer. 0, or -1 with *why. */
static int run_chunk(FilterObject *f, enum op op, struct pybf_chunk *ch, const char **why)
{
	const struct filter *hasher = f->w ? window_hasher(f->w) : cascade_hasher(f->c);
	const uint64_t *h = NULL;
	size_t n;
	int r;

	if (pybf_chunk_cut(ch, &f->spec) < 0) {
		*why = strerror(ENOMEM);
		return -1;
	}
	n = ch->ks.count;
	memset(ch->present, 0, n);
	if (hasher != NULL && n > 0 && filter_hash(hasher, ch->ks.keys, n, ch->h) == 0)
		h = ch->h;
	if (f->w)
		r = window_op(f->w, op, ch->ks.keys, h, n, ch->present, why);
	else
		r = cascade_op(f->c, op, ch->ks.keys, h, n, ch->present, why);
	if (r == 0)
		pybf_chunk_answers(ch);
	return r;
}

/* run_chunk under the object's lock, the GIL released for big chunks. */
static int run_locked(FilterObject *f, enum op op, struct pybf_chunk *ch, const char **why)
{
	int r;

	if (op == OP_TEST)
		pybf_rdlock(&f->rw);
	else
		pybf_wrlock(&f->rw);
	if (ch->n < 64) {
		r = run_chunk(f, op, ch, why);
	} else {
		Py_BEGIN_ALLOW_THREADS
		r = run_chunk(f, op, ch, why);
		Py_END_ALLOW_THREADS
	}
	pthread_rwlock_unlock(&f->rw);
	return r;
}

/*
 * A second thread for run_source. Filling a chunk from a list of str is
 * Python's work (the GIL held: an object a key), cutting, hashing and
 * asking it the library's (no GIL): one after the other, contains_many
 * of 1e7 keys took 3-4 times as long as bfgrep -c on two threads. With
 * the helper asking chunk i while the caller fills chunk i + 1, a call
 * costs the larger of the two. The helper takes the object's lock for
 * each chunk as run_locked does, with pthread calls (it has no GIL to
 * let go of); the caller waits for it with the GIL released, so that a
 * Python thread holding the lock can always finish.
 */
enum job { JOB_ASK, JOB_COPY };

struct helper {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	FilterObject *f;
	enum op op;
	enum job job;
	struct pybf_chunk *ch;	/* the chunk submitted */
	PyObject *const *items;	/* JOB_COPY: keys copied from items[0..nitems) */
	size_t nitems, copied;
	int busy, quit, r;
	const char *why;
};

/* JOB_ASK: ch cut, hashed and asked under the object's lock; r and why. */
static void helper_ask(struct helper *h)
{
	const char *why = NULL;
	int r;

	if (h->op == OP_TEST)
		pthread_rwlock_rdlock(&h->f->rw);
	else
		pthread_rwlock_wrlock(&h->f->rw);
	r = run_chunk(h->f, h->op, h->ch, &why);
	pthread_rwlock_unlock(&h->f->rw);
	h->r = r;
	h->why = why;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->busy && !h->quit)
			pthread_cond_wait(&h->cv, &h->mu);
		if (!h->busy)
			break;
		pthread_mutex_unlock(&h->mu);
		if (h->job == JOB_COPY)
			h->copied = pybf_chunk_copy_plain(h->ch, h->items, h->nitems);
		else
			helper_ask(h);
		pthread_mutex_lock(&h->mu);
		h->busy = 0;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* The helper started, every signal blocked in it (Python's handlers run on the main thread): 0, or -1. */
static int helper_start(struct helper *h, FilterObject *f, enum op op)
{
	sigset_t all, old;
	int r;

	memset(h, 0, sizeof *h);
	h->f = f;
	h->op = op;
	if (pthread_mutex_init(&h->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&h->cv, NULL) != 0) {
		pthread_mutex_destroy(&h->mu);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&h->thread, NULL, helper_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		return -1;
	}
	return 0;
}

static void helper_give(struct helper *h, enum job job, struct pybf_chunk *ch)
{
	pthread_mutex_lock(&h->mu);
	h->job = job;
	h->ch = ch;
	h->busy = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static void helper_submit(struct helper *h, struct pybf_chunk *ch)
{
	helper_give(h, JOB_ASK, ch);
}

/* The helper copying the plain keys of items[0..n) into ch (pybf_chunk_copy_plain). */
static void helper_copy(struct helper *h, struct pybf_chunk *ch, PyObject *const *items, size_t n)
{
	h->items = items;
	h->nitems = n;
	helper_give(h, JOB_COPY, ch);
}

/* Until the helper's job is done. */
static void helper_idle(struct helper *h)
{
	pthread_mutex_lock(&h->mu);
	while (h->busy)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

/*
 * How many keys the helper copied, waited for with the GIL held: letting
 * it go would let Python code change the items being read.
 */
static size_t helper_copied(struct helper *h)
{
	helper_idle(h);
	return h->copied;
}

/* The submitted chunk's result (GIL held on entry and return): 0, or -1 with *why. */
static int helper_wait(struct helper *h, const char **why)
{
	Py_BEGIN_ALLOW_THREADS
	helper_idle(h);
	Py_END_ALLOW_THREADS
	*why = h->why;
	return h->r;
}

static void helper_stop(struct helper *h)
{
	pthread_mutex_lock(&h->mu);
	h->quit = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	Py_BEGIN_ALLOW_THREADS
	pthread_join(h->thread, NULL);
	Py_END_ALLOW_THREADS
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
}

/* One chunk's answers into k (NULL: none wanted), or its failure raised: 0 or -1. */
static int chunk_done(FilterObject *f, int r, const char *why, struct pybf_chunk *ch, struct pybf_sink *k)
{
	if (r < 0) {
		pybf_raise(pybf_error, f->name, why);
		return -1;
	}
	return k != NULL ? pybf_sink_put(k, ch->answer, ch->n) : 0;
}

/*
 * Every chunk of s through op, answers into k (NULL: none wanted), one
 * chunk after another: a source of one chunk, a run of one thread
 * (BFTOOLS_THREADS=1), or no thread to be had.
 */
static int run_serially(FilterObject *f, enum op op, struct pybf_source *s, struct pybf_sink *k,
			struct pybf_chunk *ch)
{
	const char *why = NULL;

	while (ch->n > 0) {
		int r = run_locked(f, op, ch, &why);

		if (chunk_done(f, r, why, ch, k) < 0 || pybf_chunk_fill(ch, s) < 0)
			return -1;
	}
	return 0;
}

/* The same with the helper asking chunk ch[cur] while ch[!cur] is filled. */
static int run_overlapped(struct helper *h, struct pybf_source *s, struct pybf_sink *k,
			  struct pybf_chunk ch[2])
{
	int cur = 0;

	while (ch[cur].n > 0) {
		const char *why = NULL;
		int filled, r;

		helper_submit(h, &ch[cur]);
		filled = pybf_chunk_fill(&ch[!cur], s);
		r = helper_wait(h, &why);
		if (chunk_done(h->f, r, why, &ch[cur], k) < 0)
			return -1;
		if (filled < 0)
			return -1;
		cur = !cur;
	}
	return 0;
}

/*
 * Both chunks of a round asked at once: ch[0] by the helper, ch[1] here,
 * filled from fill_from first when that is not NULL (while the helper
 * works); their answers into k in order: 0, or -1 raised. Only tests: an
 * add or test-and-add is a chunk at a time, in order.
 */
static int ask_pair(struct helper *h, struct pybf_source *fill_from, struct pybf_sink *k,
		    struct pybf_chunk ch[2])
{
	const char *why0 = NULL, *why1 = NULL;
	int filled = 0, r0, r1 = 0;

	helper_submit(h, &ch[0]);
	if (fill_from != NULL)
		filled = pybf_chunk_fill(&ch[1], fill_from);
	if (filled == 0 && ch[1].n > 0)
		r1 = run_locked(h->f, OP_TEST, &ch[1], &why1);
	r0 = helper_wait(h, &why0);
	if (chunk_done(h->f, r0, why0, &ch[0], k) < 0 || filled < 0)
		return -1;
	return ch[1].n > 0 ? chunk_done(h->f, r1, why1, &ch[1], k) : 0;
}

/*
 * Tests over a buffer (a NumPy array, a file's bytes): filling a chunk is
 * next to nothing there, so the two threads each ask one of two chunks.
 */
static int run_paired(struct helper *h, struct pybf_source *s, struct pybf_sink *k,
		      struct pybf_chunk ch[2])
{
	for (;;) {
		if (ask_pair(h, s, k, ch) < 0)
			return -1;
		if (ch[1].n == 0)
			return 0;
		if (pybf_chunk_fill(&ch[0], s) < 0)
			return -1;
		if (ch[0].n == 0)
			return 0;
	}
}

/*
 * Tests over a list or tuple. Taking keys from Python objects is most of
 * the work there, and the objects can only be read while no Python code
 * runs: so each round, holding the GIL, the caller copies the keys of the
 * next PYBF_CHUNK items while the helper copies those of the PYBF_CHUNK
 * after them (plain ones: the caller goes on with any other, the helper
 * idle), then each thread asks one of the two chunks (ask_pair).
 */
static int run_split(struct helper *h, struct pybf_source *s, struct pybf_sink *k,
		     struct pybf_chunk ch[2])
{
	/* the first chunk, filled before there was a helper, asked alone */
	if (ask_pair(h, NULL, k, ch) < 0)
		return -1;
	for (;;) {
		PyObject *const *items = PySequence_Fast_ITEMS(s->seq);
		Py_ssize_t size = PySequence_Fast_GET_SIZE(s->seq), pos = s->pos, end, mid, reached;
		size_t mine, theirs;

		if (pos >= size)
			return 0;
		end = size - pos > 2 * (Py_ssize_t)PYBF_CHUNK ? pos + 2 * (Py_ssize_t)PYBF_CHUNK : size;
		mid = pos + (end - pos + 1) / 2;
		pybf_chunk_release(&ch[0]);
		pybf_chunk_release(&ch[1]);
		helper_copy(h, &ch[1], items + mid, (size_t)(end - mid));
		mine = pybf_chunk_copy_plain(&ch[0], items + pos, (size_t)(mid - pos));
		theirs = helper_copied(h);
		reached = pybf_chunk_copy_items(&ch[0], s, pos + (Py_ssize_t)mine, mid);
		if (reached < 0)
			return -1;
		if (reached < mid) {	/* cut short: the helper's keys would leave a gap */
			pybf_chunk_release(&ch[1]);
			s->pos = reached;
		} else {
			s->pos = mid + (Py_ssize_t)theirs;
		}
		pybf_chunk_place(&ch[0]);
		pybf_chunk_place(&ch[1]);
		if (ask_pair(h, NULL, k, ch) < 0)
			return -1;
	}
}

static int run_source(FilterObject *f, enum op op, struct pybf_source *s, struct pybf_sink *k)
{
	struct pybf_chunk ch[2];
	struct helper h;
	int r;

	if (pybf_chunk_init(&ch[0]) < 0)
		return -1;
	r = pybf_chunk_fill(&ch[0], s);
	/* a full first chunk (by keys or bytes): more may follow, worth a second thread */
	if (r == 0 && (ch[0].n == PYBF_CHUNK || ch[0].used >= PYBF_CHUNK_BYTES) && pipeline_threads() > 1) {
		if (pybf_chunk_init(&ch[1]) < 0) {
			PyErr_Clear();	/* no memory for a second chunk: one at a time */
		} else if (helper_start(&h, f, op) == 0) {
			if (op == OP_TEST && s->seq != NULL)
				r = run_split(&h, s, k, ch);
			else if (op == OP_TEST && s->iter == NULL)
				r = run_paired(&h, s, k, ch);
			else
				r = run_overlapped(&h, s, k, ch);
			helper_stop(&h);
			pybf_chunk_free(&ch[1]);
			pybf_chunk_free(&ch[0]);
			return r;
		} else {
			pybf_chunk_free(&ch[1]);
		}
	}
	if (r == 0)
		r = run_serially(f, op, s, k, &ch[0]);
	pybf_chunk_free(&ch[0]);
	return r;
}

/* ---- batch methods ------------------------------------------------------ */

static PyObject *finish_run(int r, enum op op, struct pybf_source *s, struct pybf_sink *k)
{
	pybf_source_close(s);
	if (r < 0) {
		pybf_sink_close(k);
		return NULL;
	}
	if (op == OP_ADD) {
		pybf_sink_close(k);
		Py_RETURN_NONE;
	}
	return pybf_sink_finish(k);
}

static PyObject *filter_run(FilterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "op", "keys", "out", NULL };
	PyObject *keys, *out = Py_None;
	struct pybf_source s;
	struct pybf_sink k;
	int op, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "iO|O", names, &op, &keys, &out) || ready(self) < 0)
		return NULL;
	if (op < OP_TEST || op > OP_TEST_AND_ADD)
		return PyErr_Format(PyExc_ValueError, "no such operation: %d", op);
	if (pybf_sink_open(&k, op == OP_ADD ? Py_None : out) < 0)
		return NULL;
	if (pybf_source_iter(&s, keys) < 0) {
		pybf_sink_close(&k);
		return NULL;
	}
	if (s.seq != NULL && op != OP_ADD && pybf_sink_expect(&k, PySequence_Fast_GET_SIZE(s.seq)) < 0) {
		pybf_source_close(&s);
		pybf_sink_close(&k);
		return NULL;
	}
	r = run_source(self, (enum op)op, &s, &k);
	return finish_run(r, (enum op)op, &s, &k);
}

static PyObject *filter_run_fixed(FilterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "op", "buffer", "itemsize", "out", NULL };
	PyObject *buffer, *out = Py_None;
	Py_ssize_t itemsize;
	struct pybf_source s;
	struct pybf_sink k;
	int op, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "iOn|O", names, &op, &buffer, &itemsize, &out) ||
	    ready(self) < 0)
		return NULL;
	if (op < OP_TEST || op > OP_TEST_AND_ADD)
		return PyErr_Format(PyExc_ValueError, "no such operation: %d", op);
	if (pybf_sink_open(&k, op == OP_ADD ? Py_None : out) < 0)
		return NULL;
	if (pybf_source_fixed(&s, buffer, itemsize) < 0) {
		pybf_sink_close(&k);
		return NULL;
	}
	r = run_source(self, (enum op)op, &s, &k);
	return finish_run(r, (enum op)op, &s, &k);
}

/* One key through op: 1 or 0, or -1 raised. */
static int run_one(FilterObject *self, enum op op, PyObject *key)
{
	struct pybf_chunk ch;
	const char *why = NULL;
	int r;

	if (ready(self) < 0 || pybf_chunk_init(&ch) < 0)
		return -1;
	r = pybf_chunk_one(&ch, key);
	if (r == 0 && run_locked(self, op, &ch, &why) < 0) {
		pybf_raise(pybf_error, self->name, why);
		r = -1;
	}
	if (r == 0)
		r = ch.answer[0];
	pybf_chunk_free(&ch);
	return r;
}

static int filter_contains(PyObject *self, PyObject *key)
{
	return run_one((FilterObject *)self, OP_TEST, key);
}

static PyObject *filter_add_one(FilterObject *self, PyObject *key)
{
	if (run_one(self, OP_ADD, key) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *filter_test_and_add_one(FilterObject *self, PyObject *key)
{
	int r = run_one(self, OP_TEST_AND_ADD, key);

	return r < 0 ? NULL : PyBool_FromLong(r);
}

/* ---- loading and making -------------------------------------------------- */

/* The key in key_file for a loaded filter: supplied when kept outside, else checked. */
static int apply_key_file(FilterObject *f, PyObject *key_file)
{
	unsigned char key[16];
	PyObject *path = pybf_path(key_file);
	const char *why;
	int r;

	if (path == NULL)
		return -1;
	r = keyfile_read(PyBytes_AS_STRING(path), key, &why);
	Py_DECREF(path);
	if (r < 0) {
		pybf_raise(pybf_error, f->name, why);
		return -1;
	}
	if (!(params_of(f)->flags & FILTER_KEY_EXTERNAL)) {
		if (filter_key_fingerprint(key) == params_of(f)->fingerprint)
			return 0;
		pybf_raise(pybf_error, f->name, "the key file's key is not this filter's key");
		return -1;
	}
	r = f->w ? window_supply_key(f->w, key, &why) : cascade_supply_key(f->c, key, &why);
	if (r < 0)
		pybf_raise(pybf_error, f->name, why);
	return r;
}

static int load_fd(FilterObject *f, int fd)
{
	struct sketch *sk = NULL;
	const char *why = NULL;
	struct stat st;
	int r;

	Py_BEGIN_ALLOW_THREADS
	r = format_load_any(fd, &f->c, &f->w, &sk, &why);
	Py_END_ALLOW_THREADS
	if (r == 0 && sk != NULL) {
		sketch_free(sk);
		pybf_raise(pybf_format_error, f->name, "a sketch, not a filter (bftools.Sketch reads it)");
		return -1;
	}
	if (r < 0) {
		pybf_raise(pybf_format_error, f->name, why);
		return -1;
	}
	f->disk_known = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	f->disk_bytes = f->disk_known ? (uint64_t)st.st_size : 0;
	return 0;
}

static int load(FilterObject *f, PyObject *path_arg, PyObject *key_file)
{
	PyObject *path = pybf_path(path_arg);
	int fd, r;

	if (path == NULL)
		return -1;
	f->name = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path));
	fd = f->name ? open(PyBytes_AS_STRING(path), O_RDONLY | O_CLOEXEC) : -1;
	if (f->name != NULL && fd < 0)
		PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_arg);
	Py_DECREF(path);
	if (fd < 0)
		return -1;
	r = load_fd(f, fd);
	close(fd);
	if (r == 0 && key_file != Py_None)
		r = apply_key_file(f, key_file);
	return r;
}

static int layout_arg(const char *name, struct filter_params *p)
{
	const struct layout_ops *ops = layout_named(name);

	if (ops == NULL) {
		PyErr_Format(PyExc_ValueError, "no such layout: %s", name);
		return -1;
	}
	p->layout = ops->id;
	return 0;
}

static int make_dcso(FilterObject *f, uint64_t capacity, double rate)
{
	struct filter_params p;
	const char *why;

	if (dcso_params(capacity, rate, &p, &why) == 0)
		f->c = cascade_new_fixed(&p, &why);
	if (f->c == NULL)
		pybf_raise(pybf_error, NULL, why);
	return f->c ? 0 : -1;
}

struct shape {
	unsigned long long capacity;
	double rate;
	const char *layout;
	PyObject *key, *key_file;
	int fold_case, siphash24;
	unsigned growth, tighten;
};

static int make(FilterObject *f, const struct shape *s)
{
	struct filter_params p;
	const char *why = NULL;
	int flags;

	memset(&p, 0, sizeof p);
	if (strcmp(s->layout, "dcso") == 0)
		return make_dcso(f, s->capacity, s->rate);
	if (layout_arg(s->layout, &p) < 0)
		return -1;
	if ((flags = pybf_new_key(s->key, s->key_file, NULL, p.key)) < 0)
		return -1;
	p.hash = s->siphash24 ? FILTER_SIPHASH_2_4 : FILTER_SIPHASH_1_3;
	p.flags = (uint32_t)flags | (s->fold_case ? FILTER_FOLD_CASE : 0);
	p.capacity = s->capacity;
	p.target_p = s->rate;
	if (s->growth != 0)
		f->c = cascade_new_growing(&p, s->rate, s->growth, s->tighten, &why);
	else if (sizing_choose(p.layout, p.capacity, p.target_p, &p.m, &p.k, &why) == 0)
		f->c = cascade_new_fixed(&p, &why);
	if (f->c == NULL)
		pybf_raise(pybf_error, NULL, why);
	return f->c ? 0 : -1;
}

static void release(FilterObject *f)
{
	cascade_free(f->c);
	window_free(f->w);
	f->c = NULL;
	f->w = NULL;
	Py_CLEAR(f->name);
}

static int init_locked(FilterObject *self, PyObject *path, PyObject *capacity, struct shape *s,
		       unsigned long field, PyObject *sep);

static int filter_init(FilterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "path", "capacity", "rate", "layout", "key", "key_file",
				 "fold_case", "growth", "tighten", "siphash24", "field",
				 "separator", NULL };
	struct shape s = { 0, 0.01, "blocked", Py_None, Py_None, 0, 0, 0, 1 };
	PyObject *path = Py_None, *capacity = Py_None, *sep = Py_None;
	unsigned long field = 0;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$OdsOOpIIpkO", names, &path, &capacity,
					 &s.rate, &s.layout, &s.key, &s.key_file, &s.fold_case,
					 &s.growth, &s.tighten, &s.siphash24, &field, &sep))
		return -1;
	/* __init__ again: not under threads still asking the old filter */
	pybf_wrlock(&self->rw);
	r = init_locked(self, path, capacity, &s, field, sep);
	pthread_rwlock_unlock(&self->rw);
	return r;
}

static int init_locked(FilterObject *self, PyObject *path, PyObject *capacity, struct shape *s,
		       unsigned long field, PyObject *sep)
{
	int r;

	release(self);
	if (pybf_separator_arg(sep, &self->spec.separator) < 0)
		return -1;
	self->spec.field = field;
	if ((path == Py_None) == (capacity == Py_None)) {
		PyErr_SetString(PyExc_TypeError, "Filter(path) opens a file, Filter(capacity=N) makes a filter");
		return -1;
	}
	if (path != Py_None) {
		r = load(self, path, s->key_file);
	} else {
		s->capacity = PyLong_AsUnsignedLongLong(capacity);
		r = PyErr_Occurred() ? -1 : make(self, s);
	}
	if (r < 0) {
		release(self);
		return -1;
	}
	self->spec.fold_case = (params_of(self)->flags & FILTER_FOLD_CASE) != 0;
	return 0;
}

static PyObject *filter_new_object(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	FilterObject *self = (FilterObject *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (self == NULL)
		return NULL;
	self->spec.separator = -1;
	if (pthread_rwlock_init(&self->rw, NULL) != 0) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	self->rw_ready = 1;
	return (PyObject *)self;
}

static void filter_dealloc(FilterObject *self)
{
	release(self);
	if (self->rw_ready)
		pthread_rwlock_destroy(&self->rw);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ---- saving ------------------------------------------------------------ */

static int save_any(const FilterObject *f, const char *path, const char **why)
{
	if (f->w)
		return format_save_window_path(f->w, path, why);
	if (layout_has(cascade_params(f->c)->layout, LAYOUT_FOREIGN))
		return dcso_save_path(f->c, path, f->c->dcso_gzip, why);
	return format_save_path(f->c, path, why);
}

/* Save under path's update lock, as the programs take turns at a file. */
static int save_locked(FilterObject *f, const char *path, int wait, const char **why)
{
	struct lock l = LOCK_INIT;
	int r;

	r = wait ? lock_wait(&l, path, -1.0, why) : lock_try(&l, path, why);
	if (r == 1)
		*why = "another bftools process is updating it";
	if (r != 0)
		return -1;
	pthread_rwlock_rdlock(&f->rw);
	r = save_any(f, path, why);
	pthread_rwlock_unlock(&f->rw);
	lock_release(&l);
	return r;
}

static PyObject *filter_save(FilterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "path", "wait", NULL };
	PyObject *path_arg = Py_None, *path, *name;
	const char *why = NULL;
	int wait = 1, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op", names, &path_arg, &wait) || ready(self) < 0)
		return NULL;
	if (path_arg == Py_None && self->name == NULL)
		return PyErr_Format(PyExc_TypeError, "save() needs a path: the filter has no file yet");
	path = pybf_path(path_arg == Py_None ? self->name : path_arg);
	if (path == NULL)
		return NULL;
	name = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path));
	Py_BEGIN_ALLOW_THREADS
	r = save_locked(self, PyBytes_AS_STRING(path), wait, &why);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (name == NULL)
		return NULL;
	if (r < 0) {
		pybf_raise(pybf_error, name, why);
		Py_DECREF(name);
		return NULL;
	}
	Py_XSETREF(self->name, name);
	Py_RETURN_NONE;
}

/* ---- what it holds -------------------------------------------------------- */

static double estimate(const FilterObject *f)
{
	return f->w ? window_estimate_count(f->w, f->w->clock) : cascade_estimate_count(f->c);
}

static PyObject *filter_count(FilterObject *self, PyObject *noargs)
{
	double e;

	(void)noargs;
	if (ready(self) < 0)
		return NULL;
	pybf_rdlock(&self->rw);
	e = estimate(self);
	pthread_rwlock_unlock(&self->rw);
	return PyFloat_FromDouble(e);
}

static Py_ssize_t filter_len(PyObject *obj)
{
	FilterObject *self = (FilterObject *)obj;
	double e;

	if (ready(self) < 0)
		return -1;
	pybf_rdlock(&self->rw);
	e = estimate(self);
	pthread_rwlock_unlock(&self->rw);
	if (!isfinite(e) || e >= 9.2e18) {
		PyErr_SetString(pybf_error, "every bit set: too many keys to estimate");
		return -1;
	}
	return (Py_ssize_t)llround(e);
}

/* The union of a and b (b may be NULL), new: the OR of their bits, as bfcount's union_of. */
static struct cascade *union_of(const struct cascade *a, const struct cascade *b, const char **why)
{
	struct cascade *u = cascade_new_like(a, why);

	if (u == NULL)
		return NULL;
	if (merge_into(u, a, MERGE_OR, why) == 0 &&
	    (b == NULL || (cascade_compatible(u, b, why) && merge_into(u, b, MERGE_OR, why) == 0)))
		return u;
	cascade_free(u);
	return NULL;
}

static FilterObject *other_filter(FilterObject *self, PyObject *other)
{
	if (!PyObject_TypeCheck(other, &pybf_filter_type)) {
		PyErr_SetString(PyExc_TypeError, "the other is a bftools.Filter");
		return NULL;
	}
	if (ready(self) < 0 || ready((FilterObject *)other) < 0)
		return NULL;
	if (self->w || ((FilterObject *)other)->w) {
		PyErr_SetString(pybf_error, "windows are not combined this way (bfmerge merges them)");
		return NULL;
	}
	return (FilterObject *)other;
}

/* |A u B| from the OR of the bits; with inter, |A| + |B| - |A u B| as bfcount --intersection. */
static PyObject *combined(FilterObject *self, PyObject *other_obj, int inter)
{
	FilterObject *other = other_filter(self, other_obj);
	const char *why = NULL;
	struct cascade *u, *ua = NULL, *ub = NULL;
	double value = 0.0;

	if (other == NULL)
		return NULL;
	pybf_rdlock(&self->rw);
	if (other != self)
		pybf_rdlock(&other->rw);
	u = union_of(self->c, other->c, &why);
	if (u != NULL && inter) {
		ua = union_of(self->c, NULL, &why);
		ub = ua ? union_of(other->c, NULL, &why) : NULL;
	}
	if (u != NULL && (!inter || ub != NULL))
		value = inter ? cascade_estimate_count(ua) + cascade_estimate_count(ub) -
				cascade_estimate_count(u) : cascade_estimate_count(u);
	if (other != self)
		pthread_rwlock_unlock(&other->rw);
	pthread_rwlock_unlock(&self->rw);
	cascade_free(ua);
	cascade_free(ub);
	if (u == NULL || (inter && ub == NULL))
		return PyErr_Format(pybf_error, "cannot be combined: %s%s",
				    u == NULL && why && strchr(why, ' ') == NULL ? "different " : "", why);
	cascade_free(u);
	return PyFloat_FromDouble(value);
}

static PyObject *filter_union(FilterObject *self, PyObject *other)
{
	return combined(self, other, 0);
}

static PyObject *filter_intersection(FilterObject *self, PyObject *other)
{
	return combined(self, other, 1);
}

static PyObject *filter_merge(FilterObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "other", "op", NULL };
	PyObject *other_obj;
	const char *opname = "or", *why = NULL;
	FilterObject *other;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s", names, &other_obj, &opname))
		return NULL;
	if ((other = other_filter(self, other_obj)) == NULL)
		return NULL;
	if (strcmp(opname, "or") != 0 && strcmp(opname, "and") != 0)
		return PyErr_Format(PyExc_ValueError, "op is 'or' or 'and', not %s", opname);
	if (other == self)
		Py_RETURN_NONE;	/* a filter OR or AND itself is itself */
	pybf_wrlock(&self->rw);
	pybf_rdlock(&other->rw);
	r = merge_into(self->c, other->c, strcmp(opname, "or") == 0 ? MERGE_OR : MERGE_AND, &why);
	pthread_rwlock_unlock(&other->rw);
	pthread_rwlock_unlock(&self->rw);
	if (r < 0)
		return PyErr_Format(pybf_error, "cannot be merged: %s", why);
	Py_RETURN_NONE;
}

/* info(): bfinfo --json's object, built in info.c. */
PyObject *pybf_info_cascade(const struct cascade *c, PyObject *name, int disk_known,
			    uint64_t disk_bytes);
PyObject *pybf_info_window(const struct window *w, PyObject *name);

static PyObject *filter_info(FilterObject *self, PyObject *noargs)
{
	PyObject *d;

	(void)noargs;
	if (ready(self) < 0)
		return NULL;
	pybf_rdlock(&self->rw);
	if (self->w)
		d = pybf_info_window(self->w, self->name);
	else
		d = pybf_info_cascade(self->c, self->name, self->disk_known, self->disk_bytes);
	pthread_rwlock_unlock(&self->rw);
	return d;
}

static PyObject *get_layout(FilterObject *self, void *closure)
{
	(void)closure;
	if (ready(self) < 0)
		return NULL;
	return PyUnicode_FromString(layout_of(self->w ? self->w->layout : self->c->stages[0]->params.layout)->name);
}

static PyObject *get_fold_case(FilterObject *self, void *closure)
{
	(void)closure;
	if (ready(self) < 0)
		return NULL;
	return PyBool_FromLong((params_of(self)->flags & FILTER_FOLD_CASE) != 0);
}

static PyObject *get_path(FilterObject *self, void *closure)
{
	(void)closure;
	if (self->name == NULL)
		Py_RETURN_NONE;
	Py_INCREF(self->name);
	return self->name;
}

static PyGetSetDef filter_getset[] = {
	{ "layout", (getter)get_layout, NULL, "blocked, classic, counting or dcso", NULL },
	{ "fold_case", (getter)get_fold_case, NULL, "whether keys are ASCII case folded", NULL },
	{ "path", (getter)get_path, NULL, "the file it was loaded from or last saved to", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef filter_methods[] = {
	{ "_run", (PyCFunction)(void (*)(void))filter_run, METH_VARARGS | METH_KEYWORDS,
	  "_run(op, keys, out=None): keys from an iterable through op (0 test, 1 add, 2 test and add)." },
	{ "_run_fixed", (PyCFunction)(void (*)(void))filter_run_fixed, METH_VARARGS | METH_KEYWORDS,
	  "_run_fixed(op, buffer, itemsize, out=None): keys of itemsize bytes each, NUL padded;\n"
	  "itemsize 0: lines, each ended by a newline." },
	{ "add", (PyCFunction)filter_add_one, METH_O, "add(key): add one key." },
	{ "test_and_add", (PyCFunction)filter_test_and_add_one, METH_O,
	  "test_and_add(key): whether key was (maybe) present, adding it: bfuniq's question." },
	{ "save", (PyCFunction)(void (*)(void))filter_save, METH_VARARGS | METH_KEYWORDS,
	  "save(path=None, wait=True): write the file atomically, under the programs' update lock." },
	{ "count", (PyCFunction)filter_count, METH_NOARGS,
	  "count(): distinct keys estimated from the bits set (bfcount -f)." },
	{ "union", (PyCFunction)filter_union, METH_O,
	  "union(other): estimated distinct keys in either (bfcount --union)." },
	{ "intersection", (PyCFunction)filter_intersection, METH_O,
	  "intersection(other): estimated distinct keys in both (bfcount --intersection)." },
	{ "merge", (PyCFunction)(void (*)(void))filter_merge, METH_VARARGS | METH_KEYWORDS,
	  "merge(other, op='or'): OR (or AND) other into this filter, as bfmerge." },
	{ "info", (PyCFunction)filter_info, METH_NOARGS, "info(): what bfinfo --json says, as a dict." },
	{ NULL, NULL, 0, NULL },
};

static PySequenceMethods filter_sequence = {
	.sq_length = filter_len,
	.sq_contains = filter_contains,
};

PyTypeObject pybf_filter_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "bftools._bftools.Filter",
	.tp_basicsize = sizeof(FilterObject),
	.tp_dealloc = (destructor)filter_dealloc,
	.tp_as_sequence = &filter_sequence,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A bftools filter file's contents (see bftools.Filter).",
	.tp_methods = filter_methods,
	.tp_getset = filter_getset,
	.tp_init = (initproc)filter_init,
	.tp_new = filter_new_object,
};
