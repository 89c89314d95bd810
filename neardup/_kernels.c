/* Compiled kernels: per page, tokenize + word hashes and shingle sketches (SimHash + MinHash); per
 * pair, signature agreement (MinHash estimates) and sorted-set intersections (exact verification).
 *
 * Each function computes exactly what the numpy reference in `neardup.shingles`, `neardup.simhash`
 * and `neardup.minhash` computes; tests compare them on random Unicode and on real pages. The
 * kernels exist because the per-page Python work (the `\w+` regex, one dict lookup per word, a dozen
 * small numpy calls per document) cost more CPU than the HTML parser.
 *
 * Hashes (see neardup/shingles.py): a word hashes to XXH3-64 of its UTF-8 bytes (seed 0); a shingle
 * of words w1..wk to fmix64(sum_i h(wi) * P**(k-i) mod 2**64), P = 0x100000001B3.
 * MinHash is datasketch's "affine32" scheme: min over shingles of a_i * fmix32(low32(h)) + b_i mod 2**32.
 *
 * No numpy C API: arrays cross as bytes (native byte order), which numpy views with frombuffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define XXH_INLINE_ALL
#include "vendor/xxhash.h"

#define FNV_P 0x100000001B3ULL

/* --- tokenize ----------------------------------------------------------------------------- */

/* `re`'s \w for str patterns: Py_UNICODE_ISALNUM(ch) || ch == '_' (SRE_UNI_IS_WORD in CPython). */
static unsigned char ascii_word[128];

static inline int is_word(Py_UCS4 ch) {
    if (ch < 128) return ascii_word[ch];
    return Py_UNICODE_ISALNUM(ch);
}

static inline size_t put_utf8(unsigned char *out, Py_UCS4 ch) {
    if (ch < 0x80) { out[0] = (unsigned char)ch; return 1; }
    if (ch < 0x800) {
        out[0] = (unsigned char)(0xC0 | (ch >> 6));
        out[1] = (unsigned char)(0x80 | (ch & 0x3F));
        return 2;
    }
    if (ch < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (ch >> 12));
        out[1] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (ch & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (ch >> 18));
    out[1] = (unsigned char)(0x80 | ((ch >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (ch & 0x3F));
    return 4;
}

PyDoc_STRVAR(tokenize_doc,
"tokenize(folded: str) -> (joined: bytes, word_hashes: bytes)\n\n"
"Words of an already NFKC-normalized, case-folded text (runs of `\\w`, as `re` defines it for str),\n"
"as their UTF-8 joined by single spaces, and the XXH3-64 of each word's UTF-8 (uint64, native order).");

static PyObject *tokenize(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "tokenize() takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    /* Joined words are at most 4 bytes per code point (word characters) plus one space each. */
    unsigned char *joined = PyMem_Malloc((size_t)n * 4 + 1);
    /* At most one word per two code points (a word and its separator). */
    uint64_t *hashes = PyMem_Malloc(((size_t)n / 2 + 1) * sizeof(uint64_t));
    if (joined == NULL || hashes == NULL) {
        PyMem_Free(joined);
        PyMem_Free(hashes);
        return PyErr_NoMemory();
    }
    size_t pos = 0, n_words = 0;
    Py_ssize_t i = 0;
    if (kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(arg)) {
        const unsigned char *s = data;
        while (i < n) {
            while (i < n && !ascii_word[s[i]]) i++;
            if (i >= n) break;
            Py_ssize_t start = i;
            while (i < n && ascii_word[s[i]]) i++;
            if (n_words) joined[pos++] = ' ';
            size_t len = (size_t)(i - start);
            memcpy(joined + pos, s + start, len);
            hashes[n_words++] = XXH3_64bits(joined + pos, len);
            pos += len;
        }
    } else {
        while (i < n) {
            while (i < n && !is_word(PyUnicode_READ(kind, data, i))) i++;
            if (i >= n) break;
            if (n_words) joined[pos++] = ' ';
            size_t start = pos;
            Py_UCS4 ch;
            while (i < n && is_word(ch = PyUnicode_READ(kind, data, i))) {
                pos += put_utf8(joined + pos, ch);
                i++;
            }
            hashes[n_words++] = XXH3_64bits(joined + start, pos - start);
        }
    }
    PyObject *res = Py_BuildValue("(y#y#)", (const char *)joined, (Py_ssize_t)pos,
                                  (const char *)hashes, (Py_ssize_t)(n_words * sizeof(uint64_t)));
    PyMem_Free(joined);
    PyMem_Free(hashes);
    return res;
}

/* --- shingles ----------------------------------------------------------------------------- */

static inline uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6BU;
    h ^= h >> 13;
    h *= 0xC2B2AE35U;
    h ^= h >> 16;
    return h;
}

/* Shingle hashes of n word hashes (n >= 1), in order: n - min(k, n) + 1 of them, written to out. */
static size_t shingle_hashes(const uint64_t *wh, size_t n, size_t k, uint64_t *out) {
    size_t width = k < n ? k : n;
    size_t m = n - width + 1;
    for (size_t i = 0; i < m; i++) {
        uint64_t acc = wh[i];
        for (size_t j = 1; j < width; j++) acc = acc * FNV_P + wh[i + j];
        out[i] = fmix64(acc);
    }
    return m;
}

/* Distinct values of v (in place, order not kept), by an open-addressing set on the low bits
 * (the values are fmix64 outputs, so the low bits are uniform). Returns the distinct count. */
static size_t distinct64(uint64_t *v, size_t m, uint64_t *table, unsigned char *used, size_t cap) {
    memset(used, 0, cap);
    size_t mask = cap - 1, out = 0;
    for (size_t i = 0; i < m; i++) {
        uint64_t x = v[i];
        size_t slot = (size_t)x & mask;
        while (used[slot] && table[slot] != x) slot = (slot + 1) & mask;
        if (!used[slot]) {
            used[slot] = 1;
            table[slot] = x;
            v[out++] = x;
        }
    }
    return out;
}

/* AVX2 multiplies eight 32-bit lanes at once, where SSE2 has no 32-bit multiply: the MinHash loop is
   compiled for both and the loader picks one for the CPU (GCC and clang on x86-64 with ifunc support). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CPU_CLONES
#endif

/* mins[p] = min(mins[p], a[p] * fmix32(low32(h)) + b[p]) over the n hashes h. */
CPU_CLONES static void minhash_update(const uint64_t *hashes, size_t n, const uint32_t *a, const uint32_t *b,
                                      uint32_t *mins, size_t num_perm) {
    for (size_t i = 0; i < n; i++) {
        uint32_t x = fmix32((uint32_t)hashes[i]);
        for (size_t p = 0; p < num_perm; p++) {
            uint32_t v = a[p] * x + b[p];
            mins[p] = v < mins[p] ? v : mins[p];
        }
    }
}

/* One argument's buffer: its object, the item size it must hold, whether it is written, its name. */
typedef struct { PyObject *obj; Py_ssize_t itemsize; int writable; const char *name; } BufferSpec;

static void release_buffers(Py_buffer *views, int n) {
    for (int i = 0; i < n; i++) PyBuffer_Release(&views[i]);
}

/* All of the buffers (C-contiguous, whole items), or none of them and an exception. */
static int get_buffers(const BufferSpec *specs, Py_buffer *views, int n) {
    for (int i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | (specs[i].writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(specs[i].obj, &views[i], flags) < 0) {
            release_buffers(views, i);
            return -1;
        }
        if (views[i].len % specs[i].itemsize != 0) {
            PyErr_Format(PyExc_ValueError, "%s: a buffer of %zd-byte items expected", specs[i].name,
                         specs[i].itemsize);
            release_buffers(views, i + 1);
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(sketch_doc,
"sketch(word_hashes, k, a, b) -> (n_shingles: int, simhash: int, minhash: bytes)\n\n"
"Both fingerprints of one document from its word hashes (uint64 buffer): the number of distinct\n"
"k-shingle hashes, their 64-bit SimHash (one vote per distinct shingle; a tie gives 0), and the\n"
"MinHash signature (uint32 per permutation, parameters a and b as uint32 buffers) of their low 32 bits.\n"
"An empty document gives (0, 0, all 0xFFFFFFFF).");

static PyObject *sketch(PyObject *self, PyObject *args) {
    PyObject *wh_obj, *a_obj, *b_obj;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "OnOO", &wh_obj, &k, &a_obj, &b_obj)) return NULL;
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "shingle size must be at least 1");
        return NULL;
    }
    const BufferSpec specs[] = {{wh_obj, 8, 0, "word_hashes"}, {a_obj, 4, 0, "a"}, {b_obj, 4, 0, "b"}};
    Py_buffer views[3];
    if (get_buffers(specs, views, 3) < 0) return NULL;
    Py_buffer wh = views[0], av = views[1], bv = views[2];
    PyObject *res = NULL;
    size_t n = (size_t)wh.len / 8, num_perm = (size_t)av.len / 4;
    if ((size_t)bv.len / 4 != num_perm || num_perm == 0) {
        PyErr_SetString(PyExc_ValueError, "a and b must be non-empty and of the same length");
        goto done;
    }
    uint32_t *mins = PyMem_Malloc(num_perm * sizeof(uint32_t));
    if (mins == NULL) { PyErr_NoMemory(); goto done; }
    for (size_t p = 0; p < num_perm; p++) mins[p] = 0xFFFFFFFFU;
    uint64_t simhash = 0;
    size_t n_distinct = 0;
    if (n > 0) {
        size_t cap = 16;
        while (cap < 2 * n) cap <<= 1;
        uint64_t *sh = PyMem_Malloc(n * sizeof(uint64_t));
        uint64_t *table = PyMem_Malloc(cap * sizeof(uint64_t));
        unsigned char *used = PyMem_Malloc(cap);
        uint32_t (*hist)[256] = PyMem_Calloc(8, sizeof(uint32_t[256]));
        if (sh == NULL || table == NULL || used == NULL || hist == NULL) {
            PyMem_Free(sh); PyMem_Free(table); PyMem_Free(used); PyMem_Free(hist); PyMem_Free(mins);
            PyErr_NoMemory();
            goto done;
        }
        size_t m = shingle_hashes((const uint64_t *)wh.buf, n, (size_t)k, sh);
        n_distinct = distinct64(sh, m, table, used, cap);
        minhash_update(sh, n_distinct, av.buf, bv.buf, mins, num_perm);
        for (size_t i = 0; i < n_distinct; i++) {
            uint64_t h = sh[i];
            /* SimHash: a histogram of byte values per byte position, turned into bit counts below. */
            for (int byte = 0; byte < 8; byte++) hist[byte][(h >> (8 * byte)) & 0xFF]++;
        }
        for (int byte = 0; byte < 8; byte++) {
            for (int bit = 0; bit < 8; bit++) {
                uint64_t ones = 0;
                for (int value = 0; value < 256; value++)
                    if (value & (1 << bit)) ones += hist[byte][value];
                if (2 * ones > n_distinct) simhash |= 1ULL << (8 * byte + bit);
            }
        }
        PyMem_Free(sh); PyMem_Free(table); PyMem_Free(used); PyMem_Free(hist);
    }
    res = Py_BuildValue("(nKy#)", (Py_ssize_t)n_distinct, (unsigned long long)simhash,
                        (const char *)mins, (Py_ssize_t)(num_perm * sizeof(uint32_t)));
    PyMem_Free(mins);
done:
    release_buffers(views, 3);
    return res;
}

/* LSD radix sort of uint32, 8 bits a pass; tmp has room for n. */
static void radix_sort32(uint32_t *v, uint32_t *tmp, size_t n) {
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++) count[((v[i] >> shift) & 0xFF) + 1]++;
        for (int c = 0; c < 256; c++) count[c + 1] += count[c];
        for (size_t i = 0; i < n; i++) tmp[count[(v[i] >> shift) & 0xFF]++] = v[i];
        memcpy(v, tmp, n * sizeof(uint32_t));
    }
}

PyDoc_STRVAR(shingle_set32_doc,
"shingle_set32(word_hashes, k) -> bytes\n\n"
"The document's distinct shingles as sorted uint32 (the low 32 bits of the shingle hashes: the values\n"
"MinHash sketches), from its word hashes (uint64 buffer).");

static PyObject *shingle_set32(PyObject *self, PyObject *args) {
    PyObject *wh_obj;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "On", &wh_obj, &k)) return NULL;
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "shingle size must be at least 1");
        return NULL;
    }
    const BufferSpec specs[] = {{wh_obj, 8, 0, "word_hashes"}};
    Py_buffer wh;
    if (get_buffers(specs, &wh, 1) < 0) return NULL;
    size_t n = (size_t)wh.len / 8;
    PyObject *res = NULL;
    if (n == 0) {
        res = PyBytes_FromStringAndSize(NULL, 0);
        goto done;
    }
    uint64_t *sh = PyMem_Malloc(n * sizeof(uint64_t));
    uint32_t *low = PyMem_Malloc(n * sizeof(uint32_t));
    uint32_t *tmp = PyMem_Malloc(n * sizeof(uint32_t));
    if (sh == NULL || low == NULL || tmp == NULL) {
        PyMem_Free(sh); PyMem_Free(low); PyMem_Free(tmp);
        PyErr_NoMemory();
        goto done;
    }
    size_t m = shingle_hashes((const uint64_t *)wh.buf, n, (size_t)k, sh);
    for (size_t i = 0; i < m; i++) low[i] = (uint32_t)sh[i];
    radix_sort32(low, tmp, m);
    size_t out = 1;
    for (size_t i = 1; i < m; i++)
        if (low[i] != low[out - 1]) low[out++] = low[i];
    res = PyBytes_FromStringAndSize((const char *)low, (Py_ssize_t)(out * sizeof(uint32_t)));
    PyMem_Free(sh); PyMem_Free(low); PyMem_Free(tmp);
done:
    release_buffers(&wh, 1);
    return res;
}

/* --- pair scoring ------------------------------------------------------------------------ */

PyDoc_STRVAR(count_equal_doc,
"count_equal(signatures, num_perm, a, b, out) -> None\n\n"
"For each pair i, the number of positions where signature rows a[i] and b[i] agree, into out[i].\n"
"signatures: uint32 rows of num_perm values, back to back; a, b: int64; out: int32. Runs without the GIL.");

static PyObject *count_equal(PyObject *self, PyObject *args) {
    PyObject *sig_obj, *a_obj, *b_obj, *out_obj;
    Py_ssize_t num_perm;
    if (!PyArg_ParseTuple(args, "OnOOO", &sig_obj, &num_perm, &a_obj, &b_obj, &out_obj)) return NULL;
    if (num_perm < 1) {
        PyErr_SetString(PyExc_ValueError, "num_perm must be at least 1");
        return NULL;
    }
    const BufferSpec specs[] = {
        {sig_obj, 4, 0, "signatures"}, {a_obj, 8, 0, "a"}, {b_obj, 8, 0, "b"}, {out_obj, 4, 1, "out"},
    };
    Py_buffer views[4];
    if (get_buffers(specs, views, 4) < 0) return NULL;
    Py_buffer sv = views[0], av = views[1], bv = views[2], ov = views[3];
    PyObject *res = NULL;
    size_t m = (size_t)num_perm, n_rows = (size_t)sv.len / 4 / m, n_pairs = (size_t)av.len / 8;
    if ((size_t)sv.len / 4 % m != 0 || (size_t)bv.len / 8 != n_pairs || (size_t)ov.len / 4 != n_pairs) {
        PyErr_SetString(PyExc_ValueError, "count_equal: signatures, a, b and out do not fit together");
        goto done;
    }
    const uint32_t *sig = sv.buf;
    const int64_t *a = av.buf, *b = bv.buf;
    int32_t *out = ov.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n_pairs; i++) {
        if (a[i] < 0 || b[i] < 0 || (size_t)a[i] >= n_rows || (size_t)b[i] >= n_rows) { bad = 1; break; }
        const uint32_t *x = sig + (size_t)a[i] * m, *y = sig + (size_t)b[i] * m;
        int32_t eq = 0;
        for (size_t p = 0; p < m; p++) eq += x[p] == y[p];
        out[i] = eq;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_IndexError, "count_equal: a row index is out of range");
        goto done;
    }
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(views, 4);
    return res;
}

PyDoc_STRVAR(intersect_counts_doc,
"intersect_counts(values, offsets, lens, a, b, out) -> None\n\n"
"|S_a[i] & S_b[i]| into out[i], where set s is values[offsets[s] : offsets[s] + lens[s]], sorted and\n"
"distinct (values uint32; offsets, lens, a, b, out int64). A merge per pair; runs without the GIL.");

static PyObject *intersect_counts(PyObject *self, PyObject *args) {
    PyObject *v_obj, *off_obj, *len_obj, *a_obj, *b_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOOOO", &v_obj, &off_obj, &len_obj, &a_obj, &b_obj, &out_obj)) return NULL;
    const BufferSpec specs[] = {
        {v_obj, 4, 0, "values"}, {off_obj, 8, 0, "offsets"}, {len_obj, 8, 0, "lens"},
        {a_obj, 8, 0, "a"}, {b_obj, 8, 0, "b"}, {out_obj, 8, 1, "out"},
    };
    Py_buffer views[6];
    if (get_buffers(specs, views, 6) < 0) return NULL;
    Py_buffer vv = views[0], fv = views[1], lv = views[2], av = views[3], bv = views[4], ov = views[5];
    PyObject *res = NULL;
    size_t n_values = (size_t)vv.len / 4, n_sets = (size_t)fv.len / 8, n_pairs = (size_t)av.len / 8;
    if ((size_t)lv.len / 8 != n_sets || (size_t)bv.len / 8 != n_pairs || (size_t)ov.len / 8 != n_pairs) {
        PyErr_SetString(PyExc_ValueError, "intersect_counts: the buffers do not fit together");
        goto done;
    }
    const uint32_t *v = vv.buf;
    const int64_t *off = fv.buf, *len = lv.buf, *a = av.buf, *b = bv.buf;
    int64_t *out = ov.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t s = 0; s < n_sets && !bad; s++)
        if (off[s] < 0 || len[s] < 0 || (size_t)(off[s] + len[s]) > n_values) bad = 1;
    for (size_t i = 0; i < n_pairs && !bad; i++) {
        if (a[i] < 0 || b[i] < 0 || (size_t)a[i] >= n_sets || (size_t)b[i] >= n_sets) { bad = 1; break; }
        const uint32_t *x = v + off[a[i]], *xe = x + len[a[i]];
        const uint32_t *y = v + off[b[i]], *ye = y + len[b[i]];
        int64_t c = 0;
        while (x < xe && y < ye) {
            uint32_t p = *x, q = *y;
            c += p == q;
            x += p <= q;
            y += q <= p;
        }
        out[i] = c;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_IndexError, "intersect_counts: a set or pair index is out of range");
        goto done;
    }
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(views, 6);
    return res;
}

/* --- LSH band keys ----------------------------------------------------------------------- */

PyDoc_STRVAR(band_keys_doc,
"band_keys(block, out) -> None\n\n"
"One 64-bit key per row of a band (n x rows, uint32; the rows may be spaced, each row's values back to\n"
"back: a column slice of a signature matrix), into out (uint64, n): the row's first value, then for each\n"
"further value v, key = fmix64(key * 0x9E3779B97F4A7C15 + v) (wrapping), as candidates.band_keys computes\n"
"it with numpy. Runs without the GIL.");

static PyObject *band_keys(PyObject *self, PyObject *args) {
    PyObject *block_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO", &block_obj, &out_obj)) return NULL;
    Py_buffer bv;
    if (PyObject_GetBuffer(block_obj, &bv, PyBUF_RECORDS_RO) < 0) return NULL;
    const BufferSpec specs[] = {{out_obj, 8, 1, "out"}};
    Py_buffer ov;
    if (get_buffers(specs, &ov, 1) < 0) {
        PyBuffer_Release(&bv);
        return NULL;
    }
    PyObject *res = NULL;
    if (bv.ndim != 2 || bv.itemsize != 4 || bv.strides[1] != 4 || bv.shape[1] < 1 || bv.strides[0] < 0 ||
        (size_t)ov.len / 8 != (size_t)bv.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "band_keys: block must be n x rows uint32 with rows back to back, "
                        "out n uint64");
        goto done;
    }
    const char *base = bv.buf;
    size_t n = (size_t)bv.shape[0], rows = (size_t)bv.shape[1], stride = (size_t)bv.strides[0];
    uint64_t *out = ov.buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        const uint32_t *row = (const uint32_t *)(base + i * stride);
        uint64_t key = row[0];
        for (size_t c = 1; c < rows; c++) key = fmix64(key * 0x9E3779B97F4A7C15ULL + row[c]);
        out[i] = key;
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(&ov, 1);
    PyBuffer_Release(&bv);
    return res;
}

static PyMethodDef methods[] = {
    {"tokenize", tokenize, METH_O, tokenize_doc},
    {"sketch", sketch, METH_VARARGS, sketch_doc},
    {"shingle_set32", shingle_set32, METH_VARARGS, shingle_set32_doc},
    {"count_equal", count_equal, METH_VARARGS, count_equal_doc},
    {"intersect_counts", intersect_counts, METH_VARARGS, intersect_counts_doc},
    {"band_keys", band_keys, METH_VARARGS, band_keys_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "neardup._kernels",
    "Compiled kernels (tokenize, sketch, shingle_set32, count_equal, intersect_counts, band_keys); see neardup/_kernels.c.", -1, methods,
};

PyMODINIT_FUNC PyInit__kernels(void) {
    for (int c = 0; c < 128; c++)
        ascii_word[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    return PyModule_Create(&module);
}
