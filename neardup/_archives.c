/* neardup._archives: the compiled parts of the web archive readers, over the vendored libdeflate.

- `MemberReader` (_warc_members.c): the records of a WARC.gz written a gzip member per record, in one loop
  (readers/warc_compiled.py), and the records of one gzipped as one stream, in the main process.
- `utf8_html` (_payload.c): the page of an HTTP response block in one pass, for the common case
  (readers/capture.py), in the workers.
Each reads only what it is sure to read as the Python and FastWARC path does, and leaves the rest to it.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_archives.h"

static PyMethodDef methods[] = {
    {"utf8_html", utf8_html, METH_VARARGS, utf8_html_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_archives", "The compiled parts of the web archive readers (libdeflate).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__archives(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (warc_members_add(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
