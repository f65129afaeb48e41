/* The staging core of wheelspec.optimized.WheelTimer in C: schedule and cancel at the cost of one
 * C call each.
 *
 * WheelTimer (optimized/app_timer.py) stages an application's schedules and cancels and hands them
 * to the engine in batches (its module docstring is the design).  This type holds the staging
 * state and does the per-operation part; everything else -- the flushes, the engine, the clock,
 * growing the tables, the rare cases of schedule -- stays in Python.  The same interface is written
 * in Python in app_stage.py (PyStage), which is the readable statement of what this file does and
 * what runs when this extension is not built; tests/test_app_timer.py runs both in lockstep with the
 * reference model.
 *
 * Layout, per timer id: row[id] = {handle of the id's pending timer or -1, its payload (a strong
 * reference) or NULL}, 16 bytes side by side, so that a cancel at a random id reads and writes
 * one cache line (the handle to match, the payload to release).
 * The stage:
 *   hot[0 .. nhot-1]      free ids this stage may hand out; schedule takes hot[nhot-1]
 *   sids, sdel [0 .. nadd-1]   the staged adds: id and delay, in call order
 *   scan [0 .. ncan-1]         the staged cancels' ids, in call order
 *   rel [0 .. nrel-1]          the payloads of those cancels, still referenced: their release waits
 *                              for the flush (_release), where a loop that prefetches a few objects
 *                              ahead pays for them together.  Dropping each payload's reference
 *                              inside cancel cost the cancel a cache miss of its own on a random
 *                              object (611 -> 430 ns per cancel at 10^6 pending without it).
 * A handle is gen * 2**31 + 2 * id (the generation counts every timer made); cancel finds the row
 * as (handle & MASK) >> 1 and matches the whole handle, so a stale handle cancels nothing.
 *
 * schedule's fast path needs an exact int delay in [due_below, max_delay] and a free id in the
 * stage; anything else calls the Python method _schedule_slow(delay, payload), which validates,
 * handles the timers due at once, restages, and comes back here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define STEP ((int64_t)1 << 31)      /* a handle's generation unit: MAX_ID + 1 */
#define MASK (STEP - 2)              /* MAX_ID - 1: the row bits of a handle, bit 0 dropped */

typedef struct {
    int64_t h;      /* the handle of the id's pending timer, or -1 */
    PyObject *p;    /* its payload, or NULL */
} Row;

typedef struct {
    PyObject_HEAD
    Row *row;
    Py_ssize_t cap;
    int64_t *hot;
    Py_ssize_t nhot, hotcap;
    int64_t *sids, *sdel;
    Py_ssize_t nadd, addcap;
    int64_t *scan;
    Py_ssize_t ncan, cancap;
    PyObject **rel;       /* the staged cancels' payloads, released by _release() after the flush */
    Py_ssize_t nrel, relcap;
    long long seq;        /* gen * STEP of the last handle made */
    long long due_below;  /* delays below this are due at once (the Python side keeps it current) */
    long long max_delay;
    PyObject *slow_name;  /* "_schedule_slow" */
} Stage;

static int grow_i64(int64_t **a, Py_ssize_t *cap, Py_ssize_t need)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    int64_t *b = PyMem_Realloc(*a, (size_t)n * sizeof(int64_t));
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *a = b;
    *cap = n;
    return 0;
}

static int grow_ptr(PyObject ***a, Py_ssize_t *cap, Py_ssize_t need)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    PyObject **b = PyMem_Realloc(*a, (size_t)n * sizeof(PyObject *));
    if (b == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *a = b;
    *cap = n;
    return 0;
}

static int Stage_init(Stage *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"capacity", "stage_limit", "max_delay", NULL};
    Py_ssize_t cap, limit;
    long long max_delay;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nnL", kw, &cap, &limit, &max_delay))
        return -1;
    if (cap < 1 || limit < 1) {
        PyErr_SetString(PyExc_ValueError, "capacity and stage_limit must be >= 1");
        return -1;
    }
    if (self->row != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a staging core is initialised once");
        return -1;
    }
    self->row = PyMem_Malloc((size_t)cap * sizeof(Row));
    if (self->row == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < cap; i++)
        self->row[i] = (Row){-1, NULL};
    self->cap = cap;
    /* the stage's adds never outnumber its ids, which are at most stage_limit */
    self->sids = PyMem_Malloc((size_t)limit * sizeof(int64_t));
    self->sdel = PyMem_Malloc((size_t)limit * sizeof(int64_t));
    if (self->sids == NULL || self->sdel == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->addcap = limit;
    if (grow_i64(&self->hot, &self->hotcap, limit) < 0 || grow_i64(&self->scan, &self->cancap, 64) < 0)
        return -1;
    if (grow_ptr(&self->rel, &self->relcap, 64) < 0)
        return -1;
    self->max_delay = max_delay;
    self->slow_name = PyUnicode_InternFromString("_schedule_slow");
    return self->slow_name == NULL ? -1 : 0;
}

static int Stage_traverse(Stage *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    if (self->row != NULL)
        for (Py_ssize_t i = 0; i < self->cap; i++)
            Py_VISIT(self->row[i].p);
    for (Py_ssize_t i = 0; i < self->nrel; i++)
        Py_VISIT(self->rel[i]);
    return 0;
}

static int Stage_clear(Stage *self)
{
    if (self->row != NULL)
        for (Py_ssize_t i = 0; i < self->cap; i++)
            Py_CLEAR(self->row[i].p);
    while (self->nrel > 0) {
        PyObject *p = self->rel[--self->nrel];
        Py_DECREF(p);
    }
    return 0;
}

static void Stage_dealloc(Stage *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Stage_clear(self);
    PyMem_Free(self->row);
    PyMem_Free(self->hot);
    PyMem_Free(self->sids);
    PyMem_Free(self->sdel);
    PyMem_Free(self->scan);
    PyMem_Free(self->rel);
    Py_XDECREF(self->slow_name);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* -- the hot path ----------------------------------------------------------------------------- */
static PyObject *Stage_schedule(Stage *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "schedule(delay_ms, payload=None)");
        return NULL;
    }
    PyObject *payload = nargs == 2 ? args[1] : Py_None;
    if (PyLong_CheckExact(args[0]) && self->nhot > 0 && self->nadd < self->addcap) {
        int overflow = 0;
        long long d = PyLong_AsLongLongAndOverflow(args[0], &overflow);
        if (!overflow && d >= self->due_below && d <= self->max_delay) {
            int64_t id = self->hot[--self->nhot];
            Row *r = &self->row[id];
            assert(id >= 0 && id < self->cap && r->h == -1 && r->p == NULL);
            self->seq += STEP;
            int64_t h = self->seq + 2 * id;
            r->h = h;
            Py_INCREF(payload);
            r->p = payload;
            self->sids[self->nadd] = id;
            self->sdel[self->nadd] = d;
            self->nadd++;
            return PyLong_FromLongLong(h);
        }
    }
    PyObject *call[3] = {(PyObject *)self, args[0], payload};
    return PyObject_VectorcallMethod(self->slow_name, call, 3, NULL);
}

/* The row of a handle, or -1 for an int that is not a handle of this timer; -2 with an error set. */
static Py_ssize_t row_of(Stage *self, PyObject *handle, int64_t *h)
{
    if (!PyLong_Check(handle)) {
        PyErr_Format(PyExc_TypeError, "a handle is an int, got %.100s", Py_TYPE(handle)->tp_name);
        return -2;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(handle, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    int64_t id = (v & MASK) >> 1;
    if (id >= self->cap || self->row[id].h != v)
        return -1;
    *h = v;
    return id;
}

static PyObject *Stage_cancel(Stage *self, PyObject *handle)
{
    int64_t h;
    Py_ssize_t id = row_of(self, handle, &h);
    if (id == -2)
        return NULL;
    if (id < 0)
        Py_RETURN_FALSE;
    if (self->ncan == self->cancap && grow_i64(&self->scan, &self->cancap, self->ncan + 1) < 0)
        return NULL;
    if (self->nrel == self->relcap && grow_ptr(&self->rel, &self->relcap, self->nrel + 1) < 0)
        return NULL;
    Row *r = &self->row[id];
    self->rel[self->nrel++] = r->p;  /* the reference moves to the release buffer */
    r->h = -1;
    r->p = NULL;
    self->scan[self->ncan++] = id;
    Py_RETURN_TRUE;
}

static PyObject *Stage_is_pending(Stage *self, PyObject *handle)
{
    int64_t h;
    Py_ssize_t id = row_of(self, handle, &h);
    if (id == -2)
        return NULL;
    return PyBool_FromLong(id >= 0);
}

/* -- what the Python side calls between operations --------------------------------------------- */
/* a bytearray, so that numpy's frombuffer gives a writable array (what the engine's kernels take) */
static PyObject *i64_bytes(const int64_t *a, Py_ssize_t n)
{
    return PyByteArray_FromStringAndSize((const char *)a, n * (Py_ssize_t)sizeof(int64_t));
}

/* _take_adds() -> (ids, delays): bytearrays of int64, int64 native order; the staged adds are cleared */
static PyObject *Stage_take_adds(Stage *self, PyObject *unused)
{
    PyObject *ids = i64_bytes(self->sids, self->nadd);
    PyObject *dels = ids ? i64_bytes(self->sdel, self->nadd) : NULL;
    if (dels == NULL) {
        Py_XDECREF(ids);
        return NULL;
    }
    self->nadd = 0;
    return Py_BuildValue("(NN)", ids, dels);
}

/* _take_cancels() -> ids: a bytearray of int64; the staged cancels are cleared (their ids are free again) */
static PyObject *Stage_take_cancels(Stage *self, PyObject *unused)
{
    PyObject *ids = i64_bytes(self->scan, self->ncan);
    if (ids != NULL)
        self->ncan = 0;
    return ids;
}

static int buffer_i64(PyObject *obj, Py_buffer *view)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || (strcmp(view->format, "q") && strcmp(view->format, "l")
                                                         && strcmp(view->format, "<q") && strcmp(view->format, "<l")
                                                         && strcmp(view->format, "=q") && strcmp(view->format, "=l"))) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a contiguous int64 buffer");
        return -1;
    }
    return 0;
}

/* _release(): drop the references of the cancelled payloads (the end of a flush).  The buffer is
 * detached first: a payload's finaliser may call back into this timer, and whatever it cancels
 * then goes to a fresh buffer that the next flush releases. */
#define RELEASE_AHEAD 16
static PyObject *Stage_release(Stage *self, PyObject *unused)
{
    PyObject **buf = self->rel;
    Py_ssize_t n = self->nrel, cap = self->relcap;
    self->rel = NULL;
    self->nrel = self->relcap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
#if defined(__GNUC__)
        if (i + RELEASE_AHEAD < n)
            __builtin_prefetch(buf[i + RELEASE_AHEAD], 1, 0);
#endif
        Py_DECREF(buf[i]);
    }
    if (self->rel == NULL) {  /* nothing was cancelled meanwhile: keep the buffer */
        self->rel = buf;
        self->relcap = cap;
    }
    else
        PyMem_Free(buf);
    Py_RETURN_NONE;
}

/* _close(ids) -> list of payloads: the timers of ids fired; their rows close, in order */
static PyObject *Stage_close(Stage *self, PyObject *obj)
{
    Py_buffer v;
    if (buffer_i64(obj, &v) < 0)
        return NULL;
    const int64_t *ids = v.buf;
    Py_ssize_t n = v.len / 8;
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        PyBuffer_Release(&v);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t id = ids[i];
        if (id < 0 || id >= self->cap || self->row[id].p == NULL) {
            PyBuffer_Release(&v);
            Py_DECREF(out);
            return PyErr_Format(PyExc_AssertionError, "WheelTimer: fired id %lld has no pending timer", (long long)id);
        }
        self->row[id].h = -1;
        PyList_SET_ITEM(out, i, self->row[id].p);  /* the list takes the table's reference */
        self->row[id].p = NULL;
    }
    PyBuffer_Release(&v);
    return out;
}

/* _load_stage(ids): the free ids this stage hands out, first id first */
static PyObject *Stage_load_stage(Stage *self, PyObject *obj)
{
    Py_buffer v;
    if (buffer_i64(obj, &v) < 0)
        return NULL;
    Py_ssize_t n = v.len / 8;
    if (self->nhot != 0 || self->nadd != 0 || n > self->addcap) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_AssertionError, "WheelTimer: a stage is loaded only when the last one is flushed and empty");
        return NULL;
    }
    if (grow_i64(&self->hot, &self->hotcap, n) < 0) {
        PyBuffer_Release(&v);
        return NULL;
    }
    const int64_t *ids = v.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t id = ids[n - 1 - i];
        if (id < 0 || id >= self->cap || self->row[id].h != -1) {
            PyBuffer_Release(&v);
            return PyErr_Format(PyExc_AssertionError, "WheelTimer: id %lld is not free", (long long)id);
        }
        self->hot[i] = id;
    }
    self->nhot = n;
    PyBuffer_Release(&v);
    Py_RETURN_NONE;
}

/* _grow(capacity): more rows, all free */
static PyObject *Stage_grow(Stage *self, PyObject *arg)
{
    Py_ssize_t cap = PyLong_AsSsize_t(arg);
    if (cap == -1 && PyErr_Occurred())
        return NULL;
    if (cap <= self->cap)
        Py_RETURN_NONE;
    Row *r = PyMem_Realloc(self->row, (size_t)cap * sizeof(Row));
    if (r == NULL)
        return PyErr_NoMemory();
    self->row = r;
    for (Py_ssize_t i = self->cap; i < cap; i++)
        r[i] = (Row){-1, NULL};
    self->cap = cap;
    Py_RETURN_NONE;
}

/* _new_generation() -> the next generation's handle base (a timer that never reaches the table) */
static PyObject *Stage_new_generation(Stage *self, PyObject *unused)
{
    self->seq += STEP;
    return PyLong_FromLongLong(self->seq);
}

static PyObject *Stage_counts(Stage *self, PyObject *unused)
{
    return Py_BuildValue("(nnnn)", self->cap, self->nhot, self->nadd, self->ncan);
}

static PyObject *Stage_nbytes(Stage *self, PyObject *unused)
{
    Py_ssize_t b = self->cap * (Py_ssize_t)sizeof(Row)
                   + (self->hotcap + 2 * self->addcap + self->cancap) * (Py_ssize_t)sizeof(int64_t)
                   + self->relcap * (Py_ssize_t)sizeof(PyObject *);
    return PyLong_FromSsize_t(b);
}

static PyMethodDef Stage_methods[] = {
    {"schedule", (PyCFunction)(void (*)(void))Stage_schedule, METH_FASTCALL,
     "schedule(delay_ms, payload=None) -> handle"},
    {"cancel", (PyCFunction)Stage_cancel, METH_O, "cancel(handle) -> True iff it was pending"},
    {"is_pending", (PyCFunction)Stage_is_pending, METH_O, "is_pending(handle) -> bool"},
    {"_take_adds", (PyCFunction)Stage_take_adds, METH_NOARGS, NULL},
    {"_take_cancels", (PyCFunction)Stage_take_cancels, METH_NOARGS, NULL},
    {"_close", (PyCFunction)Stage_close, METH_O, NULL},
    {"_release", (PyCFunction)Stage_release, METH_NOARGS, NULL},
    {"_load_stage", (PyCFunction)Stage_load_stage, METH_O, NULL},
    {"_grow_rows", (PyCFunction)Stage_grow, METH_O, NULL},
    {"_new_generation", (PyCFunction)Stage_new_generation, METH_NOARGS, NULL},
    {"_counts", (PyCFunction)Stage_counts, METH_NOARGS, NULL},
    {"_stage_nbytes", (PyCFunction)Stage_nbytes, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Stage_members[] = {
    {"_due_below", T_LONGLONG, offsetof(Stage, due_below), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot Stage_slots[] = {
    {Py_tp_doc, "The staging core of WheelTimer (optimized/_apphot.c; the Python twin: app_stage.PyStage)."},
    {Py_tp_init, Stage_init},
    {Py_tp_dealloc, Stage_dealloc},
    {Py_tp_traverse, Stage_traverse},
    {Py_tp_clear, Stage_clear},
    {Py_tp_methods, Stage_methods},
    {Py_tp_members, Stage_members},
    {0, NULL},
};

static PyType_Spec Stage_spec = {
    .name = "wheelspec.optimized._apphot.CStage",
    .basicsize = sizeof(Stage),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = Stage_slots,
};

static int apphot_exec(PyObject *m)
{
    PyObject *t = PyType_FromModuleAndSpec(m, &Stage_spec, NULL);
    if (t == NULL)
        return -1;
    if (PyModule_AddObject(m, "CStage", t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot apphot_slots[] = {
    {Py_mod_exec, apphot_exec},
    {0, NULL},
};

static struct PyModuleDef apphot_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "wheelspec.optimized._apphot",
    .m_doc = "WheelTimer's staging core in C (see optimized/_apphot.c).",
    .m_size = 0,
    .m_slots = apphot_slots,
};

PyMODINIT_FUNC PyInit__apphot(void)
{
    return PyModuleDef_Init(&apphot_module);
}
