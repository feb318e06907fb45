/* SPDX-License-Identifier: MIT */
/*
 * info.c - Filter.info(): the object bfinfo --json prints for a filter,
 * a DCSO filter or a window, as a dict with the same keys, in the same
 * order, from the same library figures (cmd/bfinfo.c is the model; the
 * tests compare the two on the same files). Numbers bfinfo writes as
 * null (an infinite estimate, a size on disk not known) are None.
 */
#include "pybftools.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

/* d[key] = value, value's reference taken over; -1 when either failed. */
static int put(PyObject *d, const char *key, PyObject *value)
{
	int r;

	if (value == NULL)
		return -1;
	r = PyDict_SetItemString(d, key, value);
	Py_DECREF(value);
	return r;
}

static int put_u64(PyObject *d, const char *key, uint64_t v)
{
	return put(d, key, PyLong_FromUnsignedLongLong(v));
}

static int put_none(PyObject *d, const char *key)
{
	Py_INCREF(Py_None);
	return put(d, key, Py_None);
}

/* A double, None where bfinfo writes null (not finite). */
static int put_double(PyObject *d, const char *key, double v)
{
	return isfinite(v) ? put(d, key, PyFloat_FromDouble(v)) : put_none(d, key);
}

static int put_str(PyObject *d, const char *key, const char *s)
{
	return put(d, key, PyUnicode_FromString(s));
}

static int put_bool(PyObject *d, const char *key, int v)
{
	return put(d, key, PyBool_FromLong(v));
}

static int put_name(PyObject *d, PyObject *name)
{
	if (name == NULL)
		return put_none(d, "file");
	Py_INCREF(name);
	return put(d, "file", name);
}

/* "keys": a whole number, or None when every bit is set. */
static int put_keys(PyObject *d, double estimate)
{
	return isfinite(estimate) ? put_u64(d, "keys", (uint64_t)llround(estimate)) : put_none(d, "keys");
}

static const char *hash_name(enum filter_hash hash)
{
	return hash == FILTER_SIPHASH_2_4 ? "SipHash-2-4-128" : "SipHash-1-3-128";
}

static double ratio(uint64_t part, uint64_t whole)
{
	return whole == 0 ? 0.0 : (double)part / (double)whole;
}

static uint64_t stage_bits(const struct filter *f)
{
	return layout_of(f->params.layout)->probed(&f->params);
}

static int is_counting(const struct filter *f)
{
	return layout_has(f->params.layout, LAYOUT_COUNTERS);
}

struct totals {
	uint64_t bits, bits_set;
};

static PyObject *stage_info(const struct filter *f, struct totals *t)
{
	PyObject *d = PyDict_New();
	uint64_t set = filter_bits_set(f);
	int bad;

	if (d == NULL)
		return NULL;
	t->bits += stage_bits(f);
	t->bits_set += set;
	bad = put_str(d, "layout", layout_of(f->params.layout)->name) | put_u64(d, "bits", f->params.m) |
	      put_u64(d, "hashes", f->params.k) | put_u64(d, "capacity", f->params.capacity) |
	      put_double(d, "target_rate", f->params.target_p) |
	      put_u64(d, "insertions", f->insertions) |
	      (is_counting(f) ? put_u64(d, "removals", f->removals) : 0) |
	      put_u64(d, "bits_set", set) |
	      (is_counting(f) ? put_u64(d, "saturated_counters", filter_saturated(f)) : 0) |
	      put_double(d, "fill", ratio(set, stage_bits(f))) |
	      put_double(d, "estimated_elements", filter_estimate_count(f)) |
	      put_double(d, "estimated_rate", filter_current_fpr(f));
	if (bad) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *stages_info(const struct cascade *c, struct totals *t)
{
	PyObject *list = PyList_New((Py_ssize_t)c->nstages);

	for (size_t i = 0; list != NULL && i < c->nstages; i++) {
		PyObject *s = stage_info(c->stages[i], t);

		if (s == NULL)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, s);
	}
	return list;
}

static int header_info(PyObject *d, const struct cascade *c)
{
	const struct filter_params *p = cascade_params(c);
	char fp[17];

	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)p->fingerprint);
	return put_u64(d, "format_version", FORMAT_VERSION) |
	       put_str(d, "kind", c->growth == 0 ? "fixed" : "growing") |
	       (c->growth ? put_u64(d, "growth", c->growth) : put_none(d, "growth")) |
	       (c->growth ? put_u64(d, "tighten", c->tighten) : put_none(d, "tighten")) |
	       put_u64(d, "stage_count", c->nstages) | put_str(d, "hash", hash_name(p->hash)) |
	       put_str(d, "key_fingerprint", fp) |
	       put_bool(d, "key_external", (p->flags & FILTER_KEY_EXTERNAL) != 0) |
	       put_bool(d, "fold_case", (p->flags & FILTER_FOLD_CASE) != 0) |
	       put_u64(d, "capacity", c->capacity) | put_double(d, "target_rate", c->target_p) |
	       put_u64(d, "insertions", cascade_insertions(c)) |
	       put_keys(d, cascade_estimate_count(c));
}

static int dcso_header(PyObject *d, const struct cascade *c)
{
	return put_u64(d, "format_version", DCSO_VERSION) | put_str(d, "kind", "dcso") |
	       put_str(d, "hash", "FNV-1-64") | put_u64(d, "capacity", c->capacity) |
	       put_double(d, "target_rate", c->target_p) |
	       put_u64(d, "hashes", c->stages[0]->params.k) |
	       put_u64(d, "elements", c->newest_keys) | put_keys(d, cascade_estimate_count(c));
}

static int totals_info(PyObject *d, const struct cascade *c, const struct totals *t,
		       int disk_known, uint64_t disk_bytes)
{
	double rate = cascade_current_fpr(c);

	return put_u64(d, "bits", t->bits) | put_u64(d, "bits_set", t->bits_set) |
	       put_double(d, "fill", ratio(t->bits_set, t->bits)) |
	       put_double(d, "estimated_elements", cascade_estimate_count(c)) |
	       put_double(d, "estimated_rate", rate) |
	       put_bool(d, "over_capacity", rate > CASCADE_OVER_CAPACITY_SLACK * c->target_p) |
	       put_u64(d, "bytes_in_memory", cascade_bytes(c)) |
	       (disk_known ? put_u64(d, "bytes_on_disk", disk_bytes) : put_none(d, "bytes_on_disk"));
}

PyObject *pybf_info_cascade(const struct cascade *c, PyObject *name, int disk_known,
			    uint64_t disk_bytes)
{
	PyObject *d = PyDict_New(), *stages = NULL;
	struct totals t = { 0, 0 };
	int bad;

	if (d == NULL || put_name(d, name) < 0)
		goto fail;
	if (layout_has(cascade_params(c)->layout, LAYOUT_FOREIGN)) {
		t.bits = stage_bits(c->stages[0]);
		t.bits_set = filter_bits_set(c->stages[0]);
		bad = dcso_header(d, c);
	} else {
		bad = header_info(d, c);
		stages = stages_info(c, &t);
		bad |= put(d, "stages", stages);
	}
	if (bad || totals_info(d, c, &t, disk_known, disk_bytes))
		goto fail;
	return d;
fail:
	Py_XDECREF(d);
	return NULL;
}

static PyObject *generation_info(const struct window *w, size_t g)
{
	PyObject *d = PyDict_New();

	if (d == NULL)
		return NULL;
	if (put_u64(d, "number", w->gen_no[g]) | put_u64(d, "stages", w->gen[g]->nstages) |
	    put_u64(d, "insertions", cascade_insertions(w->gen[g])) |
	    put_u64(d, "bytes", cascade_bytes(w->gen[g]))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* The live generations at time at, as bfinfo lists them. */
static PyObject *live_info(const struct window *w, uint64_t at)
{
	size_t live = window_live_from(w, at);
	PyObject *list = PyList_New((Py_ssize_t)(w->ngen - live));

	for (size_t g = live; list != NULL && g < w->ngen; g++) {
		PyObject *one = generation_info(w, g);

		if (one == NULL)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)(g - live), one);
	}
	return list;
}

/*
 * The time a window is read at by the programs' rule (bftools(7),
 * window_read_time): the wall clock matters only to a wall-clock window.
 */
static uint64_t read_at(const struct window *w)
{
	struct timespec ts;
	uint64_t wall = 0;

	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		wall = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return window_read_time(w, wall);
}

PyObject *pybf_info_window(const struct window *w, PyObject *name)
{
	const struct window_params *wp = &w->wp;
	int time = wp->kind == WINDOW_TIME;
	uint64_t at = read_at(w);
	double e = window_estimate_count(w, at);
	char source[64];
	PyObject *d = PyDict_New();

	if (d == NULL)
		return NULL;
	if (put_name(d, name) | put_u64(d, "format_version", FORMAT_VERSION_WINDOW) |
	    put_str(d, "kind", time ? "time window" : "count window") |
	    put_u64(d, time ? "window_seconds" : "window_keys", wp->size) |
	    put_u64(d, "generations", wp->generations) |
	    put_bool(d, "refresh", (wp->flags & WINDOW_REFRESH) != 0) |
	    put_u64(d, time ? "clock_ms" : "clock_keys", w->clock) |
	    put_str(d, "clock_source", window_clock_words(wp, source)) |
	    put_u64(d, time ? "read_at_ms" : "read_at_keys", at) |
	    put_double(d, "target_rate", wp->target_p) | put_keys(d, e) |
	    put(d, "live", live_info(w, at)) | put_double(d, "estimated_elements", e) |
	    put_u64(d, "bytes", window_bytes(w))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}
