/* neardup._archives: what its two parts give the module (_archives.c). */
#ifndef NEARDUP_ARCHIVES_H
#define NEARDUP_ARCHIVES_H
#include <Python.h>
#include <string.h>

/* Whether the `n` bytes at `p` are `word` (lower-case ASCII) in any case: header names, types, labels. */
static inline int lower_equal(const unsigned char *p, size_t n, const char *word) {
    if (strlen(word) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c >= 'A' && c <= 'Z') c += 32;
        if (c != (unsigned char)word[i]) return 0;
    }
    return 1;
}

int warc_members_add(PyObject *module);               /* _warc_members.c: the MemberReader type */
PyObject *utf8_html(PyObject *module, PyObject *args);  /* _payload.c */
extern const char utf8_html_doc[];

#endif
