/* Compiled kernels: per page, tokenize + word hashes and shingle sketches (SimHash + MinHash); per
 * pair, signature agreement (MinHash estimates), sorted-set intersections (exact verification) and the
 * word diff's matching blocks (a copy's category).
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
#include <errno.h>
#include <string.h>
#include <unistd.h>

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

/* --- MD5 of many pages at once ------------------------------------------------------------------------------
   One MD5 is a chain of dependent 32-bit steps (~5 cycles a byte): eight messages hashed side by side in the
   lanes of one vector run in about the time of one. A lane that reaches its message's last whole block hands
   the tail and the padding to the one-lane code and takes the next message. Same digests as hashlib.md5. */
static const uint32_t md5_K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const uint32_t md5_init[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

#define MD5_F(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define MD5_G(b, c, d) ((c) ^ ((d) & ((b) ^ (c))))
#define MD5_H(b, c, d) ((b) ^ (c) ^ (d))
#define MD5_I(b, c, d) ((c) ^ ((b) | ~(d)))
#define MD5_STEP(f, a, b, c, d, m, k, s) \
    do {                                  \
        a += f(b, c, d) + (m) + (k);      \
        a = (a << (s)) | (a >> (32 - (s))); \
        a += b;                           \
    } while (0)
/* The 64 steps over the block's words M[0..15], for scalars and for vectors alike. */
#define MD5_ROUNDS(a, b, c, d, M)                                                                       \
    do {                                                                                                \
        for (int i = 0; i < 16; i += 4) {                                                               \
            MD5_STEP(MD5_F, a, b, c, d, M[i], md5_K[i], 7);                                             \
            MD5_STEP(MD5_F, d, a, b, c, M[i + 1], md5_K[i + 1], 12);                                    \
            MD5_STEP(MD5_F, c, d, a, b, M[i + 2], md5_K[i + 2], 17);                                    \
            MD5_STEP(MD5_F, b, c, d, a, M[i + 3], md5_K[i + 3], 22);                                    \
        }                                                                                               \
        for (int i = 16; i < 32; i += 4) {                                                              \
            MD5_STEP(MD5_G, a, b, c, d, M[(5 * i + 1) & 15], md5_K[i], 5);                              \
            MD5_STEP(MD5_G, d, a, b, c, M[(5 * i + 6) & 15], md5_K[i + 1], 9);                          \
            MD5_STEP(MD5_G, c, d, a, b, M[(5 * i + 11) & 15], md5_K[i + 2], 14);                        \
            MD5_STEP(MD5_G, b, c, d, a, M[(5 * i + 16) & 15], md5_K[i + 3], 20);                        \
        }                                                                                               \
        for (int i = 32; i < 48; i += 4) {                                                              \
            MD5_STEP(MD5_H, a, b, c, d, M[(3 * i + 5) & 15], md5_K[i], 4);                              \
            MD5_STEP(MD5_H, d, a, b, c, M[(3 * i + 8) & 15], md5_K[i + 1], 11);                         \
            MD5_STEP(MD5_H, c, d, a, b, M[(3 * i + 11) & 15], md5_K[i + 2], 16);                        \
            MD5_STEP(MD5_H, b, c, d, a, M[(3 * i + 14) & 15], md5_K[i + 3], 23);                        \
        }                                                                                               \
        for (int i = 48; i < 64; i += 4) {                                                              \
            MD5_STEP(MD5_I, a, b, c, d, M[(7 * i) & 15], md5_K[i], 6);                                  \
            MD5_STEP(MD5_I, d, a, b, c, M[(7 * i + 7) & 15], md5_K[i + 1], 10);                         \
            MD5_STEP(MD5_I, c, d, a, b, M[(7 * i + 14) & 15], md5_K[i + 2], 15);                        \
            MD5_STEP(MD5_I, b, c, d, a, M[(7 * i + 21) & 15], md5_K[i + 3], 21);                        \
        }                                                                                               \
    } while (0)

static inline uint32_t load_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void md5_block(uint32_t st[4], const unsigned char *p) {
    uint32_t M[16];
    for (int w = 0; w < 16; w++) M[w] = load_le32(p + 4 * w);
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
    MD5_ROUNDS(a, b, c, d, M);
    st[0] += a, st[1] += b, st[2] += c, st[3] += d;
}

#define MD5_LANES 8
typedef uint32_t md5_vec __attribute__((vector_size(4 * MD5_LANES)));

/* `blocks` 64-byte blocks of each lane's message from `at[l]` (a lane whose `step` is 0 rereads one block). */
CPU_CLONES static void md5_lanes(md5_vec st[4], const unsigned char *const at[MD5_LANES],
                                 const size_t step[MD5_LANES], size_t blocks) {
    for (size_t n = 0; n < blocks; n++) {
        md5_vec M[16];
        for (int w = 0; w < 16; w++)
            for (int l = 0; l < MD5_LANES; l++) M[w][l] = load_le32(at[l] + n * step[l] + 4 * w);
        md5_vec a = st[0], b = st[1], c = st[2], d = st[3];
        MD5_ROUNDS(a, b, c, d, M);
        st[0] += a, st[1] += b, st[2] += c, st[3] += d;
    }
}

/* The message's tail (under 64 bytes of its `len`) and the padding, on state `st`; the hex digest into `hex`. */
static void md5_finish(uint32_t st[4], const unsigned char *tail, size_t len, char hex[32]) {
    unsigned char last[128] = {0};
    size_t rest = len % 64;
    memcpy(last, tail, rest);
    last[rest] = 0x80;
    size_t size = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) last[size - 8 + i] = (unsigned char)(bits >> (8 * i));
    md5_block(st, last);
    if (size == 128) md5_block(st, last + 64);
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        unsigned char byte = (unsigned char)(st[i / 4] >> (8 * (i % 4)));
        hex[2 * i] = digits[byte >> 4];
        hex[2 * i + 1] = digits[byte & 15];
    }
}

/* The hex MD5s of `n` messages into `hex` (32 characters each). */
static void md5_many_bytes(const unsigned char *const *msg, const size_t *len, size_t n, char *hex) {
    static const unsigned char idle[64] = {0};
    md5_vec st[4];
    const unsigned char *at[MD5_LANES];
    size_t step[MD5_LANES], left[MD5_LANES], which[MD5_LANES];
    int busy[MD5_LANES];
    size_t next = 0;
    for (int l = 0; l < MD5_LANES; l++) busy[l] = 0;
    for (;;) {
        int any = 0;
        for (int l = 0; l < MD5_LANES; l++) {
            while (!busy[l] || left[l] == 0) { /* its whole blocks done: the lane finishes, takes the next */
                if (busy[l]) {
                    uint32_t s[4] = {st[0][l], st[1][l], st[2][l], st[3][l]};
                    md5_finish(s, at[l], len[which[l]], hex + 32 * which[l]);
                    busy[l] = 0;
                }
                if (next == n) break;
                which[l] = next++;
                at[l] = msg[which[l]], left[l] = len[which[l]] / 64, step[l] = 64, busy[l] = 1;
                for (int k = 0; k < 4; k++) st[k][l] = md5_init[k];
            }
            any |= busy[l];
        }
        if (!any) return;
        size_t blocks = SIZE_MAX;
        for (int l = 0; l < MD5_LANES; l++)
            if (busy[l] && left[l] < blocks) blocks = left[l];
        for (int l = 0; l < MD5_LANES; l++)
            if (!busy[l]) at[l] = idle, step[l] = 0;
        md5_lanes(st, at, step, blocks);
        for (int l = 0; l < MD5_LANES; l++)
            if (busy[l]) at[l] += blocks * 64, left[l] -= blocks;
    }
}

PyDoc_STRVAR(utf8_size_doc,
             "utf8_size(s: str, /) -> int\n\n"
             "The length of s's UTF-8, which CPython caches on the str (md5_many, the parser and pyarrow read\n"
             "that form). UnicodeEncodeError for a lone surrogate, as s.encode('utf-8') raises.");

static PyObject *utf8_size(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "utf8_size takes a str, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    if (!PyUnicode_AsUTF8AndSize(arg, &n)) return NULL;
    return PyLong_FromSsize_t(n);
}

PyDoc_STRVAR(md5_many_doc,
             "md5_many(pages: list[str | bytes], /) -> list[str]\n\n"
             "The hex MD5 of each page's bytes (a str's UTF-8, read from the form CPython caches on it), as\n"
             "hashlib.md5(page).hexdigest() gives, eight pages at a time. UnicodeEncodeError for a str with a\n"
             "lone surrogate.");

static PyObject *md5_many(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "md5_many takes a list of str or bytes");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = NULL;
    const unsigned char **msg = PyMem_Malloc(sizeof(*msg) * (size_t)(n ? n : 1));
    size_t *len = PyMem_Malloc(sizeof(*len) * (size_t)(n ? n : 1));
    char *hex = PyMem_Malloc(32 * (size_t)(n ? n : 1));
    if (!msg || !len || !hex) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t size;
        const char *p;
        if (PyUnicode_Check(items[i])) {
            p = PyUnicode_AsUTF8AndSize(items[i], &size);
            if (!p) goto done;
        } else if (PyBytes_Check(items[i])) {
            p = PyBytes_AS_STRING(items[i]), size = PyBytes_GET_SIZE(items[i]);
        } else {
            PyErr_Format(PyExc_TypeError, "md5_many: a str or bytes expected, not %.100s",
                         Py_TYPE(items[i])->tp_name);
            goto done;
        }
        msg[i] = (const unsigned char *)p, len[i] = (size_t)size;
    }
    md5_many_bytes(msg, len, (size_t)n, hex); /* the list holds every page meanwhile */
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *s = PyUnicode_FromStringAndSize(hex + 32 * i, 32);
        if (!s) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, s);
    }
done:
    PyMem_Free(msg);
    PyMem_Free(len);
    PyMem_Free(hex);
    Py_DECREF(seq);
    return out;
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

/* A band's key of one row of `rows` values (candidates.band_keys). */
static inline uint64_t row_key(const uint32_t *row, size_t rows) {
    uint64_t key = row[0];
    for (size_t c = 1; c < rows; c++) key = fmix64(key * 0x9E3779B97F4A7C15ULL + row[c]);
    return key;
}

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
        out[i] = row_key((const uint32_t *)(base + i * stride), rows);
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(&ov, 1);
    PyBuffer_Release(&bv);
    return res;
}

PyDoc_STRVAR(size_class_keys_doc,
"size_class_keys(block, own, distances, out) -> None\n\n"
"The size-class bucket keys of one band (block as for band_keys; own: each row's size class, int64;\n"
"distances: int64, D of them) into out (uint64, n * (1 + D)): with m = band key * 0x9E3779B97F4A7C15,\n"
"out[i] = fmix64(m + own[i]) | 1 (the indexed entry), out[(1 + j) * n + i] = fmix64(m + own[i] + d_j) & ~1\n"
"(the queries), as candidates.size_class_keys computes them with numpy. Runs without the GIL.");

static PyObject *size_class_keys(PyObject *self, PyObject *args) {
    PyObject *block_obj, *own_obj, *dist_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &block_obj, &own_obj, &dist_obj, &out_obj)) return NULL;
    Py_buffer bv;
    if (PyObject_GetBuffer(block_obj, &bv, PyBUF_RECORDS_RO) < 0) return NULL;
    const BufferSpec specs[] = {{own_obj, 8, 0, "own"}, {dist_obj, 8, 0, "distances"}, {out_obj, 8, 1, "out"}};
    Py_buffer views[3];
    if (get_buffers(specs, views, 3) < 0) {
        PyBuffer_Release(&bv);
        return NULL;
    }
    PyObject *res = NULL;
    size_t n = bv.ndim == 2 ? (size_t)bv.shape[0] : 0, n_d = (size_t)views[1].len / 8;
    if (bv.ndim != 2 || bv.itemsize != 4 || bv.strides[1] != 4 || bv.shape[1] < 1 || bv.strides[0] < 0 ||
        (size_t)views[0].len / 8 != n || (size_t)views[2].len / 8 != n * (1 + n_d)) {
        PyErr_SetString(PyExc_ValueError, "size_class_keys: block must be n x rows uint32 with rows back to "
                        "back, own n int64, out n * (1 + len(distances)) uint64");
        goto done;
    }
    const char *base = bv.buf;
    size_t rows = (size_t)bv.shape[1], stride = (size_t)bv.strides[0];
    const uint64_t *own = views[0].buf, *dist = views[1].buf;
    uint64_t *out = views[2].buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        uint64_t m = row_key((const uint32_t *)(base + i * stride), rows) * 0x9E3779B97F4A7C15ULL + own[i];
        out[i] = fmix64(m) | 1;
        for (size_t j = 0; j < n_d; j++) out[(1 + j) * n + i] = fmix64(m + dist[j]) & ~(uint64_t)1;
    }
    Py_END_ALLOW_THREADS
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(views, 3);
    PyBuffer_Release(&bv);
    return res;
}

PyDoc_STRVAR(members_in_doc,
"members_in(keys, shift, wanted, out) -> int\n\n"
"The positions i, in ascending order, where keys[i] >> shift is one of the values of wanted (sorted and\n"
"distinct: the search assumes it), written to the first entries of out; returns how many. keys, wanted:\n"
"uint64; out: int64, as long as keys. A bit table of the wanted values' low bits (about one bit in 64 set)\n"
"rules out most keys before a binary search. Runs without the GIL.");

static PyObject *members_in(PyObject *self, PyObject *args) {
    PyObject *k_obj, *w_obj, *out_obj;
    int shift;
    if (!PyArg_ParseTuple(args, "OiOO", &k_obj, &shift, &w_obj, &out_obj)) return NULL;
    if (shift < 0 || shift > 63) {
        PyErr_SetString(PyExc_ValueError, "members_in: shift must be 0 to 63");
        return NULL;
    }
    const BufferSpec specs[] = {{k_obj, 8, 0, "keys"}, {w_obj, 8, 0, "wanted"}, {out_obj, 8, 1, "out"}};
    Py_buffer views[3];
    if (get_buffers(specs, views, 3) < 0) return NULL;
    Py_buffer kv = views[0], wv = views[1], ov = views[2];
    PyObject *res = NULL;
    size_t n = (size_t)kv.len / 8, m = (size_t)wv.len / 8;
    if ((size_t)ov.len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "members_in: out must be as long as keys");
        goto done;
    }
    unsigned bits = 16;
    while (bits < 32 && ((size_t)1 << (bits - 6)) < m) bits++;
    const uint64_t mask = ((uint64_t)1 << bits) - 1;
    uint8_t *table = calloc(((size_t)1 << bits) / 8, 1);
    if (table == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const uint64_t *keys = kv.buf, *wanted = wv.buf;
    int64_t *out = ov.buf;
    size_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t j = 0; j < m; j++) {
        uint64_t lo = wanted[j] & mask;
        table[lo >> 3] |= (uint8_t)(1u << (lo & 7));
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t v = keys[i] >> shift, lo = v & mask;
        if (!((table[lo >> 3] >> (lo & 7)) & 1)) continue;
        size_t a = 0, b = m;  /* the first wanted value >= v */
        while (a < b) {
            size_t mid = a + (b - a) / 2;
            if (wanted[mid] < v) a = mid + 1; else b = mid;
        }
        if (a < m && wanted[a] == v) out[count++] = (int64_t)i;
    }
    Py_END_ALLOW_THREADS
    free(table);
    res = PyLong_FromSize_t(count);
done:
    release_buffers(views, 3);
    return res;
}

PyDoc_STRVAR(text_hashes_doc,
"text_hashes(offsets, data, out) -> None\n\n"
"A 64-bit hash of each of the strings data[offsets[i]:offsets[i + 1]] (offsets: int64, one more than out;\n"
"data: bytes; out: uint64), written to out: the sum of each byte times 0x100000001B3 to the power of its\n"
"position (1-based, modulo 2**64), XOR the length times 0x9E3779B97F4A7C15 (neardup.url_images.text_hashes,\n"
"whose numpy form gives the same values). Runs without the GIL.");

static PyObject *text_hashes(PyObject *self, PyObject *args) {
    PyObject *o_obj, *d_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &o_obj, &d_obj, &out_obj)) return NULL;
    const BufferSpec specs[] = {{o_obj, 8, 0, "offsets"}, {d_obj, 1, 0, "data"}, {out_obj, 8, 1, "out"}};
    Py_buffer views[3];
    if (get_buffers(specs, views, 3) < 0) return NULL;
    Py_buffer ov = views[0], dv = views[1], outv = views[2];
    PyObject *res = NULL;
    size_t n = (size_t)outv.len / 8;
    const int64_t *offsets = ov.buf;
    if ((size_t)ov.len / 8 != n + 1) {
        PyErr_SetString(PyExc_ValueError, "text_hashes: offsets must be one longer than out");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (offsets[i] < 0 || offsets[i] > offsets[i + 1] || offsets[i + 1] > (int64_t)dv.len) {
            PyErr_SetString(PyExc_ValueError, "text_hashes: offsets out of order or past the data");
            goto done;
        }
    }
    const uint8_t *data = dv.buf;
    uint64_t *out = outv.buf;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        uint64_t sum = 0, power = 1;
        for (int64_t j = offsets[i]; j < offsets[i + 1]; j++) {
            power *= UINT64_C(0x100000001B3);
            sum += (uint64_t)data[j] * power;
        }
        out[i] = ((uint64_t)(offsets[i + 1] - offsets[i]) * UINT64_C(0x9E3779B97F4A7C15)) ^ sum;
    }
    Py_END_ALLOW_THREADS
    res = Py_None;
    Py_INCREF(res);
done:
    release_buffers(views, 3);
    return res;
}

/* --- word_blocks: difflib's matching blocks over two texts' words --------------------------- */

/* One word's key: its span in a text, and the key's hash. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t start, len;
} KeySpan;

static inline int in_set(Py_UCS4 ch, int pkind, const void *pdata, Py_ssize_t plen) {
    for (Py_ssize_t k = 0; k < plen; k++)
        if (PyUnicode_READ(pkind, pdata, k) == ch) return 1;
    return 0;
}

/* The keys of `text`'s words (split as str.split() splits, on Py_UNICODE_ISSPACE): each word stripped of
 * the characters of `punct` at both ends, or the word itself where nothing is left (neardup.diff._word_key).
 * Appends to spans (grown as needed); returns the count or -1 on no memory. */
static Py_ssize_t word_keys(PyObject *text, int pkind, const void *pdata, Py_ssize_t plen,
                            const unsigned char *ascii_punct, KeySpan **spans, size_t *cap, size_t used) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, count = 0;
    while (i < n) {
        while (i < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        if (i >= n) break;
        Py_ssize_t start = i;
        while (i < n && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        Py_ssize_t lo = start, hi = i;
        while (lo < hi) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, lo);
            if (ch < 128 ? !ascii_punct[ch] : !in_set(ch, pkind, pdata, plen)) break;
            lo++;
        }
        while (hi > lo) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, hi - 1);
            if (ch < 128 ? !ascii_punct[ch] : !in_set(ch, pkind, pdata, plen)) break;
            hi--;
        }
        if (lo == hi) lo = start, hi = i;
        if (used + (size_t)count >= *cap) {
            size_t grown = *cap ? *cap * 2 : 1024;
            KeySpan *s = realloc(*spans, grown * sizeof(KeySpan));
            if (s == NULL) return -1;
            *spans = s, *cap = grown;
        }
        (*spans)[used + (size_t)count] = (KeySpan){kind, data, lo, hi - lo};
        count++;
    }
    return count;
}

static inline uint64_t span_hash(const KeySpan *s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (Py_ssize_t k = 0; k < s->len; k++) h = (h ^ PyUnicode_READ(s->kind, s->data, s->start + k)) * FNV_P;
    return fmix64(h ^ (uint64_t)s->len);
}

static inline int span_equal(const KeySpan *x, const KeySpan *y) {
    if (x->len != y->len) return 0;
    for (Py_ssize_t k = 0; k < x->len; k++)
        if (PyUnicode_READ(x->kind, x->data, x->start + k) != PyUnicode_READ(y->kind, y->data, y->start + k))
            return 0;
    return 1;
}

typedef struct {
    const int32_t *a, *b;
    const int32_t *b2j_start, *b2j_pos;  /* the positions in b of id v: b2j_pos[b2j_start[v]..b2j_start[v+1]) */
    int32_t *len[2];                      /* the match length ending at b[j - 1], at index j, per row parity */
    int64_t *stamp[2];                    /* the row counter that wrote len[.][j] */
    int64_t row;
} Matcher;

/* difflib.SequenceMatcher.find_longest_match(alo, ahi, blo, bhi) without junk: the longest a[i:i+k] ==
 * b[j:j+k] in the ranges, the smallest i and then the smallest j among the longest. */
static void longest_match(Matcher *m, int32_t alo, int32_t ahi, int32_t blo, int32_t bhi,
                          int32_t *bi, int32_t *bj, int32_t *bk) {
    int32_t besti = alo, bestj = blo, bestsize = 0;
    m->row += 2;  /* no row of an earlier call continues into this one */
    for (int32_t i = alo; i < ahi; i++) {
        int64_t row = ++m->row;
        int cur = (int)(row & 1), prev = cur ^ 1;
        int32_t v = m->a[i];
        if (v < 0) continue;
        const int32_t *pos = m->b2j_pos + m->b2j_start[v], *end = m->b2j_pos + m->b2j_start[v + 1];
        if (pos < end && *pos < blo) {  /* the first position >= blo (a common word has many) */
            const int32_t *lo = pos, *hi = end;
            while (lo < hi) {
                const int32_t *mid = lo + (hi - lo) / 2;
                if (*mid < blo) lo = mid + 1; else hi = mid;
            }
            pos = lo;
        }
        for (; pos < end && *pos < bhi; pos++) {
            int32_t j = *pos;
            int32_t k = (m->stamp[prev][j] == row - 1 ? m->len[prev][j] : 0) + 1;
            m->len[cur][j + 1] = k;
            m->stamp[cur][j + 1] = row;
            if (k > bestsize) besti = i - k + 1, bestj = j - k + 1, bestsize = k;
        }
    }
    while (besti > alo && bestj > blo && m->a[besti - 1] == m->b[bestj - 1]) besti--, bestj--, bestsize++;
    while (besti + bestsize < ahi && bestj + bestsize < bhi && m->a[besti + bestsize] == m->b[bestj + bestsize])
        bestsize++;
    *bi = besti, *bj = bestj, *bk = bestsize;
}

typedef struct { int32_t i, j, k; } Block;

static int block_order(const void *x, const void *y) {
    const Block *p = x, *q = y;
    return (p->i > q->i) - (p->i < q->i);
}

/* difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks(): blocks ascending, adjacent
 * ones joined, the (na, nb, 0) sentinel last. Returns the count, or -1 on no memory. */
static Py_ssize_t matching_blocks(const int32_t *a, int32_t na, const int32_t *b, int32_t nb, int32_t n_ids,
                                  Block **out) {
    Matcher m = {.a = a, .b = b, .row = 0};
    int32_t *start = calloc((size_t)n_ids + 1, sizeof(int32_t));
    int32_t *pos = malloc(((size_t)nb + 1) * sizeof(int32_t));
    int32_t *fill = malloc(((size_t)n_ids + 1) * sizeof(int32_t));
    m.len[0] = malloc(((size_t)nb + 1) * sizeof(int32_t));
    m.len[1] = malloc(((size_t)nb + 1) * sizeof(int32_t));
    m.stamp[0] = calloc((size_t)nb + 1, sizeof(int64_t));
    m.stamp[1] = calloc((size_t)nb + 1, sizeof(int64_t));
    /* each block found splits one range in two: at most min(na, nb) blocks, and as many ranges queued */
    size_t most = (size_t)(na < nb ? na : nb) + 1;
    Block *blocks = malloc((most + 1) * sizeof(Block));
    int32_t (*queue)[4] = malloc((most + 1) * sizeof(*queue));
    Py_ssize_t count = -1;
    if (!start || !pos || !fill || !m.len[0] || !m.len[1] || !m.stamp[0] || !m.stamp[1] || !blocks || !queue)
        goto done;
    for (int32_t j = 0; j < nb; j++) start[b[j] + 1]++;
    for (int32_t v = 0; v < n_ids; v++) start[v + 1] += start[v];
    memcpy(fill, start, ((size_t)n_ids + 1) * sizeof(int32_t));
    for (int32_t j = 0; j < nb; j++) pos[fill[b[j]]++] = j;
    m.b2j_start = start, m.b2j_pos = pos;
    size_t nq = 0, nblocks = 0;
    queue[nq][0] = 0, queue[nq][1] = na, queue[nq][2] = 0, queue[nq][3] = nb, nq++;
    while (nq) {
        nq--;
        int32_t alo = queue[nq][0], ahi = queue[nq][1], blo = queue[nq][2], bhi = queue[nq][3];
        int32_t i, j, k;
        longest_match(&m, alo, ahi, blo, bhi, &i, &j, &k);
        if (!k) continue;
        blocks[nblocks++] = (Block){i, j, k};
        if (alo < i && blo < j) queue[nq][0] = alo, queue[nq][1] = i, queue[nq][2] = blo, queue[nq][3] = j, nq++;
        if (i + k < ahi && j + k < bhi)
            queue[nq][0] = i + k, queue[nq][1] = ahi, queue[nq][2] = j + k, queue[nq][3] = bhi, nq++;
    }
    qsort(blocks, nblocks, sizeof(Block), block_order);
    size_t kept = 0;
    Block cur = {0, 0, 0};
    for (size_t t = 0; t < nblocks; t++) {
        if (cur.i + cur.k == blocks[t].i && cur.j + cur.k == blocks[t].j) {
            cur.k += blocks[t].k;
        } else {
            if (cur.k) blocks[kept++] = cur;
            cur = blocks[t];
        }
    }
    if (cur.k) blocks[kept++] = cur;
    blocks[kept++] = (Block){na, nb, 0};
    *out = blocks, blocks = NULL;
    count = (Py_ssize_t)kept;
done:
    free(start), free(pos), free(fill), free(m.len[0]), free(m.len[1]), free(m.stamp[0]), free(m.stamp[1]);
    free(blocks), free(queue);
    return count;
}

PyDoc_STRVAR(word_blocks_doc,
"word_blocks(left: str, right: str, punct: str) -> list[tuple[int, int, int]]\n\n"
"The matching blocks (i, j, k) of the two texts' words (str.split()), each word compared by its key: the\n"
"word stripped of the characters of `punct` at both ends, or the word itself if nothing is left. Exactly\n"
"difflib.SequenceMatcher(a=keys(left), b=keys(right), autojunk=False).get_matching_blocks(), the\n"
"(len(a), len(b), 0) sentinel included. Runs without the GIL.");

static PyObject *word_blocks(PyObject *self, PyObject *args) {
    PyObject *left, *right, *punct;
    if (!PyArg_ParseTuple(args, "UUU", &left, &right, &punct)) return NULL;
    int pkind = PyUnicode_KIND(punct);
    const void *pdata = PyUnicode_DATA(punct);
    Py_ssize_t plen = PyUnicode_GET_LENGTH(punct);
    unsigned char ascii_punct[128] = {0};
    for (Py_ssize_t k = 0; k < plen; k++) {
        Py_UCS4 ch = PyUnicode_READ(pkind, pdata, k);
        if (ch < 128) ascii_punct[ch] = 1;
    }
    KeySpan *spans = NULL;
    size_t cap = 0;
    int32_t *ids = NULL;
    uint64_t *table_hash = NULL;
    int32_t *table_id = NULL, *first_of = NULL;
    Block *blocks = NULL;
    PyObject *res = NULL;
    Py_ssize_t na = word_keys(left, pkind, pdata, plen, ascii_punct, &spans, &cap, 0);
    Py_ssize_t nb = na < 0 ? -1 : word_keys(right, pkind, pdata, plen, ascii_punct, &spans, &cap, (size_t)na);
    if (nb < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (na + nb >= INT32_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "word_blocks: too many words");
        goto done;
    }
    size_t n = (size_t)(na + nb), size = 16;
    while (size < 2 * n) size <<= 1;
    ids = malloc((n + 1) * sizeof(int32_t));
    table_hash = malloc(size * sizeof(uint64_t));
    table_id = malloc(size * sizeof(int32_t));
    first_of = malloc((n + 1) * sizeof(int32_t));
    if (!ids || !table_hash || !table_id || !first_of) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Each distinct key gets an id; a key of `left` absent from `right` keeps its id (it matches nothing). */
    for (size_t t = 0; t < size; t++) table_id[t] = -1;
    int32_t n_ids = 0;
    for (size_t w = 0; w < n; w++) {
        uint64_t h = span_hash(&spans[w]);
        size_t slot = (size_t)h & (size - 1);
        while (table_id[slot] >= 0 && !(table_hash[slot] == h && span_equal(&spans[first_of[table_id[slot]]], &spans[w])))
            slot = (slot + 1) & (size - 1);
        if (table_id[slot] < 0) {
            table_hash[slot] = h, table_id[slot] = n_ids, first_of[n_ids] = (int32_t)w, n_ids++;
        }
        ids[w] = table_id[slot];
    }
    count = matching_blocks(ids, (int32_t)na, ids + na, (int32_t)nb, n_ids, &blocks);
    failed = count < 0;
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    res = PyList_New(count);
    if (res == NULL) goto done;
    for (Py_ssize_t t = 0; t < count; t++) {
        PyObject *item = Py_BuildValue("(iii)", blocks[t].i, blocks[t].j, blocks[t].k);
        if (item == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        PyList_SET_ITEM(res, t, item);
    }
done:
    free(spans), free(ids), free(table_hash), free(table_id), free(first_of), free(blocks);
    return res;
}

/* --- reads of a spilled file ------------------------------------------------------------- */

PyDoc_STRVAR(pread_ranges_doc,
"pread_ranges(fd, starts, sizes, places, out) -> None\n\n"
"For each i, sizes[i] bytes of the file `fd` from byte starts[i] into out at byte places[i] (starts,\n"
"sizes, places int64), with pread in the order given: a system call a range (ranges that follow each\n"
"other in the file and in out are read as one), without the GIL. The file's pages are copied, not\n"
"mapped: they stay in the kernel's page cache, out of the caller's resident set.");

static PyObject *pread_ranges(PyObject *self, PyObject *args) {
    int fd;
    PyObject *st_obj, *sz_obj, *pl_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "iOOOO", &fd, &st_obj, &sz_obj, &pl_obj, &out_obj)) return NULL;
    const BufferSpec specs[] = {
        {st_obj, 8, 0, "starts"}, {sz_obj, 8, 0, "sizes"}, {pl_obj, 8, 0, "places"}, {out_obj, 1, 1, "out"},
    };
    Py_buffer views[4];
    if (get_buffers(specs, views, 4) < 0) return NULL;
    PyObject *res = NULL;
    size_t n = (size_t)views[0].len / 8;
    if ((size_t)views[1].len / 8 != n || (size_t)views[2].len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "pread_ranges: starts, sizes and places differ in length");
        goto done;
    }
    const int64_t *starts = views[0].buf, *sizes = views[1].buf, *places = views[2].buf;
    char *out = views[3].buf;
    int64_t out_len = (int64_t)views[3].len;
    for (size_t i = 0; i < n; i++) {
        if (starts[i] < 0 || sizes[i] < 0 || places[i] < 0 || places[i] > out_len - sizes[i]) {
            PyErr_SetString(PyExc_ValueError, "pread_ranges: a range is negative or outside out");
            goto done;
        }
    }
    int err = 0, short_read = 0;
    Py_BEGIN_ALLOW_THREADS
    size_t i = 0;
    while (i < n && !err && !short_read) {
        int64_t start = starts[i], size = sizes[i], place = places[i];
        size_t j = i + 1;  /* ranges that follow each other in the file and in out: one read */
        while (j < n && starts[j] == start + size && places[j] == place + size) size += sizes[j++];
        while (size > 0) {
            ssize_t got = pread(fd, out + place, (size_t)size, (off_t)start);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) { err = errno; break; }
            if (got == 0) { short_read = 1; break; }
            start += got, place += got, size -= got;
        }
        i = j;
    }
    Py_END_ALLOW_THREADS
    if (err) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    if (short_read) {
        PyErr_SetString(PyExc_EOFError, "pread_ranges: a range reaches past the end of the file");
        goto done;
    }
    Py_INCREF(Py_None);
    res = Py_None;
done:
    release_buffers(views, 4);
    return res;
}

static PyMethodDef methods[] = {
    {"tokenize", tokenize, METH_O, tokenize_doc},
    {"sketch", sketch, METH_VARARGS, sketch_doc},
    {"shingle_set32", shingle_set32, METH_VARARGS, shingle_set32_doc},
    {"count_equal", count_equal, METH_VARARGS, count_equal_doc},
    {"intersect_counts", intersect_counts, METH_VARARGS, intersect_counts_doc},
    {"band_keys", band_keys, METH_VARARGS, band_keys_doc},
    {"size_class_keys", size_class_keys, METH_VARARGS, size_class_keys_doc},
    {"members_in", members_in, METH_VARARGS, members_in_doc},
    {"md5_many", md5_many, METH_O, md5_many_doc},
    {"utf8_size", utf8_size, METH_O, utf8_size_doc},
    {"word_blocks", word_blocks, METH_VARARGS, word_blocks_doc},
    {"text_hashes", text_hashes, METH_VARARGS, text_hashes_doc},
    {"pread_ranges", pread_ranges, METH_VARARGS, pread_ranges_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "neardup._kernels",
    "Compiled kernels (tokenize, sketch, shingle_set32, count_equal, intersect_counts, band_keys, size_class_keys, members_in, md5_many, utf8_size, word_blocks, text_hashes, pread_ranges); see neardup/_kernels.c.", -1, methods,
};

PyMODINIT_FUNC PyInit__kernels(void) {
    for (int c = 0; c < 128; c++)
        ascii_word[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    return PyModule_Create(&module);
}
