/* neardup._archives.MemberReader: the records of a WARC.gz written a gzip member per record, in one loop.

A `MemberReader` inflates member after member of a buffer (the file, memory-mapped) with libdeflate
(vendor/libdeflate, MIT), checks each member's CRC and length, splits its record into the WARC header and
the block, and makes each page-like record's capture (the `WarcCapture` class it is given, called with its
fields in order) or, for a record that is not a page, its type's name. It reads only what it is sure of: a
member that is not exactly one complete, well-formed record (blank lines after it) with a plain ASCII
header (the fields it keeps named once, the three FastWARC reads by exact name spelled as the standard
spells them) stops the loop there, and the caller reads on from that offset with FastWARC, which names
what is wrong. So every record it returns is one FastWARC returns the same: a fast path over the common
case, not a second WARC parser with its own answers.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "_archives.h"
#include "libdeflate/libdeflate.h"

#define FIRST_OUT (1u << 20)   /* the inflate buffer's first size; it grows to the largest record read */
#define MAX_OUT (64u << 20)    /* a record larger than this is left to FastWARC, which streams it */

enum { MORE = 0, END = 1, STOPPED = 2 };

/* The WARC header fields read, by lower-case name. */
enum {
    F_TYPE, F_URI, F_DATE, F_ID, F_CTYPE, F_DIGEST, F_TRUNC, F_REFERS, F_REF_URI, F_REF_DATE, F_LENGTH, N_FIELDS
};
static const char *FIELD_NAMES[N_FIELDS] = {
    "warc-type", "warc-target-uri", "warc-date", "warc-record-id", "content-type", "warc-payload-digest",
    "warc-truncated", "warc-refers-to", "warc-refers-to-target-uri", "warc-refers-to-date", "content-length",
};
/* FastWARC reads these three by their exact spelling (its record type, Content-Type and length). */
static const char *EXACT_NAMES[N_FIELDS] = {
    [F_TYPE] = "WARC-Type", [F_CTYPE] = "Content-Type", [F_LENGTH] = "Content-Length",
};

/* The record types, as FastWARC names them; the first four are pages. */
#define N_TYPES 8
#define N_PAGE_TYPES 4
static const char *TYPE_NAMES[N_TYPES] = {
    "response", "resource", "revisit", "conversion", "request", "metadata", "warcinfo", "continuation",
};
static PyObject *type_strings[N_TYPES];

typedef struct {
    const unsigned char *p;
    size_t n;
    int seen;
} Field;

typedef struct {
    PyObject_HEAD
    struct libdeflate_decompressor *inflater;
    unsigned char *out;
    size_t out_size;
    /* a one-stream file's inflated bytes at hand (`feed`), read from `stream_at`; `stream_base` is the stream
       offset of the buffer's first byte */
    unsigned char *stream;
    size_t stream_size, stream_len, stream_at;
    Py_ssize_t stream_base;
} MemberReader;

static void reader_dealloc(MemberReader *self) {
    if (self->inflater) libdeflate_free_decompressor(self->inflater);
    PyMem_RawFree(self->out);
    PyMem_RawFree(self->stream);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int reader_init(MemberReader *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "", kwlist)) return -1;
    if (self->inflater == NULL) self->inflater = libdeflate_alloc_decompressor();
    if (self->inflater == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Inflate the gzip member at `in`: its record's length in `*out_n` and the member's in `*in_n`; 0 when the
   member is not one whole, sound member of at most MAX_OUT bytes. */
static int inflate_member(MemberReader *self, const unsigned char *in, size_t avail, size_t *in_n,
                          size_t *out_n) {
    if (avail < 18 || in[0] != 0x1f || in[1] != 0x8b || in[2] != 0x08) return 0;
    for (;;) {
        if (self->out == NULL) {
            self->out = PyMem_RawMalloc(FIRST_OUT);
            if (self->out == NULL) return 0;
            self->out_size = FIRST_OUT;
        }
        enum libdeflate_result r;
        Py_BEGIN_ALLOW_THREADS
        r = libdeflate_gzip_decompress_ex(self->inflater, in, avail, self->out, self->out_size, in_n, out_n);
        Py_END_ALLOW_THREADS
        if (r == LIBDEFLATE_SUCCESS) return 1;
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE || self->out_size >= MAX_OUT) return 0;
        unsigned char *grown = PyMem_RawMalloc(self->out_size * 4);
        if (grown == NULL) return 0;
        PyMem_RawFree(self->out);
        self->out = grown;
        self->out_size *= 4;
    }
}

static int is_blank(unsigned char c) { return c == ' ' || c == '\t'; }

/* The version line: as FastWARC takes it (WARC/1.0, WARC/1.1, or WARC/0.x of at most 9 characters). */
static int version_line(const unsigned char *p, size_t n) {
    if (n == 8 && (memcmp(p, "WARC/1.0", 8) == 0 || memcmp(p, "WARC/1.1", 8) == 0)) return 1;
    return n > 7 && n <= 9 && memcmp(p, "WARC/0.", 7) == 0;
}

/* Split a record into its header fields and the offset of its block; 0 when the header is not one this
   reader is sure to read as FastWARC does (anything but printable ASCII and tabs, a folded line, a line
   without a colon, a field kept named twice, a FastWARC field spelled otherwise, no CRLF ending). */
static int parse_header(const unsigned char *rec, size_t n, Field *fields, size_t *block_at) {
    const unsigned char *nl = memchr(rec, '\n', n < 16 ? n : 16);
    if (nl == NULL || nl == rec || nl[-1] != '\r' || !version_line(rec, (size_t)(nl - 1 - rec))) return 0;
    size_t at = (size_t)(nl - rec) + 1;
    for (;;) {
        if (at + 2 > n) return 0;
        if (rec[at] == '\r' && rec[at + 1] == '\n') {
            *block_at = at + 2;
            return 1;
        }
        if (is_blank(rec[at])) return 0;  /* a folded line */
        size_t colon = 0, end = at;
        for (; end < n && rec[end] != '\r'; end++) {
            unsigned char c = rec[end];
            if ((c < 0x20 && c != '\t') || c > 0x7e) return 0;
            if (c == ':' && colon == 0) colon = end;
        }
        if (end + 1 >= n || rec[end + 1] != '\n' || colon == 0) return 0;
        size_t k0 = at, k1 = colon, v0 = colon + 1, v1 = end;
        while (k0 < k1 && is_blank(rec[k1 - 1])) k1--;
        while (v0 < v1 && is_blank(rec[v0])) v0++;
        while (v1 > v0 && is_blank(rec[v1 - 1])) v1--;
        for (int f = 0; f < N_FIELDS; f++) {
            if (!lower_equal(rec + k0, k1 - k0, FIELD_NAMES[f])) continue;
            if (fields[f].seen || (EXACT_NAMES[f] && memcmp(rec + k0, EXACT_NAMES[f], k1 - k0) != 0)) return 0;
            fields[f].p = rec + v0;
            fields[f].n = v1 - v0;
            fields[f].seen = 1;
            break;
        }
        at = end + 2;
    }
}

static PyObject *field_str(const Field *f) {
    if (!f->seen) Py_RETURN_NONE;
    return PyUnicode_DecodeASCII((const char *)f->p, (Py_ssize_t)f->n, NULL);
}

/* A WARC URI as `warc._uri` takes it: `<>` taken off as a pair, blanks around it trimmed. */
static PyObject *uri_str(const Field *f, int none_if_empty) {
    const unsigned char *p = f->seen ? f->p : (const unsigned char *)"";
    size_t n = f->seen ? f->n : 0;
    if (n >= 2 && p[0] == '<' && p[n - 1] == '>') {
        p++;
        n -= 2;
        while (n && is_blank(p[0])) p++, n--;
        while (n && is_blank(p[n - 1])) n--;
    }
    if (n == 0 && none_if_empty) Py_RETURN_NONE;
    return PyUnicode_DecodeASCII((const char *)p, (Py_ssize_t)n, NULL);
}

/* Whether the member's bytes after the block, [at, n), are blank lines (the CRLF CRLF a record ends with, or
   more, or none), which FastWARC passes over before the next record. */
static int blank_lines(const unsigned char *rec, size_t at, size_t n) {
    if (at > n) return 0;
    for (; at < n; at++)
        if (rec[at] != '\r' && rec[at] != '\n') return 0;
    return 1;
}

static int record_type(const Field *f) {
    if (!f->seen) return -1;
    for (int t = 0; t < N_TYPES; t++)
        if (lower_equal(f->p, f->n, TYPE_NAMES[t])) return t;
    return -1;
}

static int content_length(const Field *f, size_t *length) {
    if (!f->seen || f->n == 0 || f->n > 15) return 0;
    size_t v = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->p[i] < '0' || f->p[i] > '9') return 0;
        v = v * 10 + (size_t)(f->p[i] - '0');
    }
    *length = v;
    return 1;
}

/* A record's header (`parse_header` over its first `n` bytes), its type and its Content-Length; 0 when one of
   them is not read here. */
static int record_head(const unsigned char *rec, size_t n, Field *fields, size_t *block_at, int *type,
                       size_t *length) {
    return parse_header(rec, n, fields, block_at) && (*type = record_type(&fields[F_TYPE])) >= 0
           && content_length(&fields[F_LENGTH], length);
}

/* The capture of a page-like record: `make(*fields)` in `WarcCapture`'s field order. */
static PyObject *capture(PyObject *make, int type, const Field *fields, size_t offset, PyObject *warc_file,
                         const unsigned char *block, size_t block_n, PyObject *offset_in) {
    PyObject *args[17] = {NULL};
    PyObject *result = NULL;
    args[0] = Py_NewRef(type_strings[type]);
    args[1] = uri_str(&fields[F_URI], 0);
    args[2] = field_str(&fields[F_DATE]);
    args[3] = field_str(&fields[F_ID]);
    args[4] = PyLong_FromSize_t(offset);
    args[5] = Py_NewRef(warc_file);
    args[6] = PyBytes_FromStringAndSize((const char *)block, (Py_ssize_t)block_n);
    args[7] = field_str(&fields[F_CTYPE]);
    args[8] = field_str(&fields[F_DIGEST]);
    args[9] = field_str(&fields[F_TRUNC]);
    args[10] = Py_NewRef(Py_None);  /* original */
    args[11] = field_str(&fields[F_REFERS]);
    args[12] = Py_NewRef(offset_in);
    args[13] = Py_NewRef(Py_None);  /* pending */
    args[14] = Py_NewRef(Py_False);  /* forward */
    args[15] = uri_str(&fields[F_REF_URI], 1);
    args[16] = field_str(&fields[F_REF_DATE]);
    for (int i = 0; i < 17; i++)
        if (args[i] == NULL) goto done;
    result = PyObject_Vectorcall(make, args, 17, NULL);
done:
    for (int i = 0; i < 17; i++) Py_XDECREF(args[i]);
    return result;
}

/* Append a record's item to `items`: a page-like record's capture, another's type name; -1 on an error. */
static int append_record(PyObject *items, PyObject *make, int type, const Field *fields, size_t offset,
                         PyObject *warc_file, const unsigned char *block, size_t length, PyObject *offset_in) {
    PyObject *item = type < N_PAGE_TYPES
        ? capture(make, type, fields, offset, warc_file, block, length, offset_in)
        : Py_NewRef(type_strings[type]);
    if (item == NULL) return -1;
    int err = PyList_Append(items, item);
    Py_DECREF(item);
    return err;
}

/* A read's answer, (items, next, status, last), with the buffer released; NULL (the error set) without items. */
static PyObject *answer(PyObject *items, Py_buffer *buf, size_t pos, int status, Py_ssize_t last) {
    PyBuffer_Release(buf);
    if (items == NULL) return NULL;
    return Py_BuildValue("(Nnin)", items, (Py_ssize_t)pos, status, last);
}

PyDoc_STRVAR(read_doc,
"read(buffer, start, max_records, max_bytes, make, warc_file, offset_in) -> (items, next, status, last)\n\n"
"The records of the gzip members of `buffer` from offset `start`: a page-like record as\n"
"`make(*fields)` (WarcCapture's fields in order, its offset the member's), another as its type's name.\n"
"Stops after `max_records` records or `max_bytes` of records inflated (status 0), at the end of the\n"
"buffer (1), or at a member it does not read (2): `next` is where to read on, `last` the offset of the\n"
"last record read (-1 for none).");

static PyObject *reader_read(MemberReader *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t start, max_records, max_bytes;
    PyObject *make, *warc_file, *offset_in;
    if (!PyArg_ParseTuple(args, "y*nnnOUU", &buf, &start, &max_records, &max_bytes, &make, &warc_file,
                          &offset_in))
        return NULL;
    PyObject *items = PyList_New(0);
    if (items == NULL) goto fail;
    const unsigned char *data = buf.buf;
    size_t size = (size_t)buf.len, pos = start < 0 ? 0 : (size_t)start, inflated = 0;
    Py_ssize_t last = -1;
    int status = MORE;
    for (;;) {
        if (pos >= size) {
            status = END;
            break;
        }
        if (PyList_GET_SIZE(items) >= max_records || inflated >= (size_t)max_bytes) break;
        size_t in_n, out_n, block_at, length;
        Field fields[N_FIELDS] = {{0}};
        int type;
        if (!inflate_member(self, data + pos, size - pos, &in_n, &out_n)
            || !record_head(self->out, out_n, fields, &block_at, &type, &length)
            || !blank_lines(self->out, block_at + length, out_n)) {
            status = STOPPED;
            break;
        }
        if (append_record(items, make, type, fields, pos, warc_file, self->out + block_at, length, offset_in) < 0)
            goto fail;
        last = (Py_ssize_t)pos;
        pos += in_n;
        inflated += out_n;
    }
    return answer(items, &buf, pos, status, last);
fail:
    Py_XDECREF(items);
    return answer(NULL, &buf, pos, status, last);
}

#define MAX_HEADER (1u << 20)  /* a WARC header longer than this is left to FastWARC */
enum { NEED_MORE = 3 };

/* Whether the record whose block ends at `at` is followed, after blank lines, by another record's version
   line or by the stream's end: 1 yes, 0 no, -1 when the bytes at hand do not tell (`*next` the next record). */
static int followed_well(const unsigned char *data, size_t at, size_t n, int final, size_t *next) {
    while (at < n && (data[at] == '\r' || data[at] == '\n')) at++;
    *next = at;
    if (at == n) return final ? 1 : -1;
    if (n - at < 5) return final ? 0 : (memcmp(data + at, "WARC/", n - at) == 0 ? -1 : 0);
    return memcmp(data + at, "WARC/", 5) == 0;
}

PyDoc_STRVAR(feed_doc,
"feed(data, base)\n\n"
"Add `data`, the next inflated bytes of a one-stream WARC, to those `read_stream` reads; with `base`\n"
"not -1, start over at stream offset `base` (the bytes at hand dropped).");

static PyObject *reader_feed(MemberReader *self, PyObject *args) {
    Py_buffer data;
    Py_ssize_t base;
    if (!PyArg_ParseTuple(args, "y*n", &data, &base)) return NULL;
    if (base >= 0) {
        self->stream_len = self->stream_at = 0;
        self->stream_base = base;
    } else if (self->stream_at > 0) {  /* the bytes read go: the rest to the front */
        memmove(self->stream, self->stream + self->stream_at, self->stream_len - self->stream_at);
        self->stream_len -= self->stream_at;
        self->stream_base += (Py_ssize_t)self->stream_at;
        self->stream_at = 0;
    }
    size_t need = self->stream_len + (size_t)data.len;
    if (need > self->stream_size) {
        size_t size = self->stream_size ? self->stream_size : FIRST_OUT;
        while (size < need) size *= 2;
        unsigned char *grown = PyMem_RawRealloc(self->stream, size);
        if (grown == NULL) {
            PyBuffer_Release(&data);
            return PyErr_NoMemory();
        }
        self->stream = grown;
        self->stream_size = size;
    }
    memcpy(self->stream + self->stream_len, data.buf, (size_t)data.len);
    self->stream_len = need;
    PyBuffer_Release(&data);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(read_stream_doc,
"read_stream(final, max_records, max_bytes, make, warc_file, offset_in) -> (items, next, status, last)\n\n"
"The records of the one-stream WARC bytes fed so far (`feed`); `final` when the stream ends with them.\n"
"Items as `read` gives them, offsets in the inflated stream. A record is read when it is whole and\n"
"followed by blank lines and the next record's version line (or the end). Status: 0 after\n"
"`max_records` records or `max_bytes`, 1 at the end, 2 at a record it does not read, 3 when the next\n"
"record runs past the bytes fed (feed more); `next` is the stream offset to read on from, `last` that of\n"
"the last record read (-1 for none).");

static PyObject *reader_read_stream(MemberReader *self, PyObject *args) {
    Py_ssize_t max_records, max_bytes;
    int final;
    PyObject *make, *warc_file, *offset_in;
    if (!PyArg_ParseTuple(args, "pnnOUU", &final, &max_records, &max_bytes, &make, &warc_file, &offset_in))
        return NULL;
    PyObject *items = PyList_New(0);
    if (items == NULL) return NULL;
    const unsigned char *data = self->stream;
    size_t n = self->stream_len, pos = self->stream_at, taken = 0;
    size_t base = (size_t)self->stream_base;
    Py_ssize_t last = -1;
    int status = MORE;
    for (;;) {
        if (pos >= n) {
            status = final ? END : NEED_MORE;
            break;
        }
        if (PyList_GET_SIZE(items) >= max_records || taken >= (size_t)max_bytes) break;
        const unsigned char *rec = data + pos;
        size_t avail = n - pos, window = avail < MAX_HEADER ? avail : MAX_HEADER;
        const unsigned char *end = memmem(rec, window, "\r\n\r\n", 4);
        if (end == NULL) {
            status = (final || avail >= MAX_HEADER || (avail >= 5 && memcmp(rec, "WARC/", 5) != 0)) ? STOPPED
                                                                                                    : NEED_MORE;
            break;
        }
        size_t block_at, length, next;
        Field fields[N_FIELDS] = {{0}};
        int type, well = 0;
        if (!record_head(rec, (size_t)(end - rec) + 4, fields, &block_at, &type, &length) || length > MAX_OUT) {
            status = STOPPED;
            break;
        }
        if (block_at + length > avail
            || (well = followed_well(rec, block_at + length, avail, final, &next)) < 0) {
            status = final ? STOPPED : NEED_MORE;
            break;
        }
        if (!well) {
            status = STOPPED;
            break;
        }
        if (append_record(items, make, type, fields, base + pos, warc_file, rec + block_at, length, offset_in)
            < 0) {
            Py_DECREF(items);
            return NULL;
        }
        last = (Py_ssize_t)(base + pos);
        pos += next;
        taken += next;
    }
    self->stream_at = pos;
    return Py_BuildValue("(Nnin)", items, (Py_ssize_t)(base + pos), status, last);
}

static PyMethodDef reader_methods[] = {
    {"read", (PyCFunction)reader_read, METH_VARARGS, read_doc},
    {"feed", (PyCFunction)reader_feed, METH_VARARGS, feed_doc},
    {"read_stream", (PyCFunction)reader_read_stream, METH_VARARGS, read_stream_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MemberReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neardup._archives.MemberReader",
    .tp_doc = PyDoc_STR("Reads the records of a WARC.gz written a gzip member per record (libdeflate)."),
    .tp_basicsize = sizeof(MemberReader),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reader_init,
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_methods = reader_methods,
};

/* Adds `MemberReader` to the module (`_archives.c`). */
int warc_members_add(PyObject *m) {
    for (int t = 0; t < N_TYPES; t++) {
        type_strings[t] = PyUnicode_InternFromString(TYPE_NAMES[t]);
        if (type_strings[t] == NULL) return -1;
    }
    if (PyType_Ready(&MemberReaderType) < 0) return -1;
    return PyModule_AddObjectRef(m, "MemberReader", (PyObject *)&MemberReaderType);
}
