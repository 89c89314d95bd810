/* neardup._archives: what its two parts give the module (_archives.c). */
#ifndef NEARDUP_ARCHIVES_H
#define NEARDUP_ARCHIVES_H
#include <Python.h>

int warc_members_add(PyObject *module);               /* _warc_members.c: the MemberReader type */
PyObject *utf8_html(PyObject *module, PyObject *args);  /* _payload.c */
extern const char utf8_html_doc[];

#endif
