/* neardup._archives.utf8_html: the page of an HTTP response block in one pass, for the common case.

`utf8_html(block)` reads a response's status line and the three headers decoding needs, undoes chunked
transfer and a gzip Content-Encoding (libdeflate), and decodes an HTML payload whose charset resolves to
UTF-8 (the HTTP header's, a UTF-8 BOM, the page's <meta charset>, or all-ASCII bytes). It answers only
where it is sure to give what `readers.payload` (parse_http, decode_body, sniff_mime, decode_html) gives:
any other response (another charset, a type to sniff, a coding it does not undo, a duplicate header, bytes
that are not UTF-8, anything it does not parse exactly as those do) is None, and the Python path reads it.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <ctype.h>
#include <string.h>

#include "_archives.h"
#include "libdeflate/libdeflate.h"


typedef struct {
    const unsigned char *p;
    size_t n;
} Span;

static int is_space(unsigned char c) {  /* Python's bytes whitespace (bytes.strip, regex \s) */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static Span strip(Span s) {
    while (s.n && is_space(s.p[0])) s.p++, s.n--;
    while (s.n && is_space(s.p[s.n - 1])) s.n--;
    return s;
}

static int lower_is(Span s, const char *word) { return lower_equal(s.p, s.n, word); }

static int lower_starts(const unsigned char *p, size_t n, const char *word) {
    size_t k = strlen(word);
    return n >= k && lower_is((Span){p, k}, word);
}

static int is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f');
}

/* The status code of `\s*HTTP/\d(?:\.\d)?[ \t]+(\d{3})(?:\s|$)` over the header, without its leading
   blanks (0: not read here). */
static int status_code(Span head) {
    const unsigned char *p = head.p;
    size_t n = head.n, i = 5;
    if (n < 10 || memcmp(p, "HTTP/", 5) != 0 || !isdigit(p[i])) return 0;
    i++;
    if (i + 1 < n && p[i] == '.' && isdigit(p[i + 1])) i += 2;
    size_t blanks = i;
    while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
    if (i == blanks || i + 3 > n || !isdigit(p[i]) || !isdigit(p[i + 1]) || !isdigit(p[i + 2])) return 0;
    if (i + 3 < n && !is_space(p[i + 3])) return 0;
    return (p[i] - '0') * 100 + (p[i + 1] - '0') * 10 + (p[i + 2] - '0');
}

enum { H_TYPE, H_ENCODING, H_TRANSFER, N_HEADERS };
static const char *HEADER_NAMES[N_HEADERS] = {"content-type", "content-encoding", "transfer-encoding"};

/* The three headers, as `parse_http`'s regex finds them on the lines after the status line; 0 when one is
   named twice or holds a byte that is not printable ASCII or a tab (whose trimming by Python's str.strip
   this does not copy). */
static int headers(Span head, Span *out, int *seen) {
    const unsigned char *line = memchr(head.p, '\n', head.n);
    const unsigned char *end = head.p + head.n;
    while (line != NULL) {
        line++;
        size_t left = (size_t)(end - line);
        for (int h = 0; h < N_HEADERS; h++) {
            size_t k = strlen(HEADER_NAMES[h]);
            if (!lower_starts(line, left, HEADER_NAMES[h])) continue;
            size_t i = k;
            while (i < left && (line[i] == ' ' || line[i] == '\t')) i++;
            if (i >= left || line[i] != ':') continue;
            i++;
            size_t v = i;
            while (i < left && line[i] != '\r' && line[i] != '\n') i++;
            if (seen[h]) return 0;
            for (size_t j = v; j < i; j++)
                if (line[j] >= 0x7f || (line[j] < 0x20 && line[j] != '\t')) return 0;
            out[h] = strip((Span){line + v, i - v});
            seen[h] = 1;
        }
        line = memchr(line, '\n', left);
    }
    return 1;
}

/* A chunked body's payload into `*out` (malloc'd), as `payload._dechunk` joins it when every chunk is
   whole and a last chunk ends it; 0 otherwise. */
static int dechunk(Span body, unsigned char **out, size_t *out_n) {
    unsigned char *buf = malloc(body.n ? body.n : 1);
    size_t n = 0, pos = 0;
    if (buf == NULL) return 0;
    for (;;) {
        const unsigned char *eol = memchr(body.p + pos, '\n', body.n - pos);
        if (eol == NULL) break;
        size_t at = (size_t)(eol - body.p);
        const unsigned char *semi = memchr(body.p + pos, ';', at - pos);
        Span field = strip((Span){body.p + pos, (semi ? (size_t)(semi - body.p) : at) - pos});
        if (field.n == 0 || field.n > 12) break;
        size_t size = 0;
        for (size_t i = 0; i < field.n; i++) {
            if (!is_hex(field.p[i])) goto fail;
            unsigned char c = field.p[i] | 32;
            size = size * 16 + (size_t)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        if (size == 0) {
            *out = buf;
            *out_n = n;
            return 1;
        }
        if (size > body.n - at - 1) break;  /* cut off inside the chunk */
        memcpy(buf + n, body.p + at + 1, size);
        n += size;
        pos = at + 1 + size;
        if (pos + 2 <= body.n && body.p[pos] == '\r' && body.p[pos + 1] == '\n') pos += 2;
        else if (pos + 1 <= body.n && body.p[pos] == '\n') pos += 1;
    }
fail:
    free(buf);
    return 0;
}

/* A gzip body inflated into `*out` (malloc'd): one member, sound, at most `limit` bytes, not followed by
   another member; 0 otherwise. */
static int gunzip(Span body, size_t limit, unsigned char **out, size_t *out_n) {
    if (body.n < 18 || body.p[0] != 0x1f || body.p[1] != 0x8b || body.p[2] != 0x08) return 0;
    const unsigned char *t = body.p + body.n - 4;
    size_t size = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
    if (size > limit) return 0;
    unsigned char *buf = malloc(size ? size : 1);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t in_n = 0, got = 0;
    enum libdeflate_result r = LIBDEFLATE_BAD_DATA;
    if (buf != NULL && d != NULL) {
        Py_BEGIN_ALLOW_THREADS
        r = libdeflate_gzip_decompress_ex(d, body.p, body.n, buf, size, &in_n, &got);
        Py_END_ALLOW_THREADS
    }
    if (d != NULL) libdeflate_free_decompressor(d);
    int another = r == LIBDEFLATE_SUCCESS && body.n - in_n >= 3 && memcmp(body.p + in_n, "\x1f\x8b\x08", 3) == 0;
    if (r != LIBDEFLATE_SUCCESS || another) {
        free(buf);
        return 0;
    }
    *out = buf;
    *out_n = got;
    return 1;
}

/* The charset label of the Content-Type's last `charset=` parameter, trimmed of blanks and quotes. */
static int charset_param(Span ctype, Span *label) {
    const unsigned char *semi = memchr(ctype.p, ';', ctype.n);
    int found = 0;
    while (semi != NULL) {
        const unsigned char *start = semi + 1, *end = ctype.p + ctype.n;
        semi = memchr(start, ';', (size_t)(end - start));
        Span param = {start, (size_t)((semi ? semi : end) - start)};
        const unsigned char *eq = memchr(param.p, '=', param.n);
        if (eq == NULL) continue;
        Span key = strip((Span){param.p, (size_t)(eq - param.p)});
        if (!lower_is(key, "charset")) continue;
        /* .strip() then .strip("\"'"), as `_codec` does */
        Span v = strip((Span){eq + 1, param.n - (size_t)(eq + 1 - param.p)});
        while (v.n && (v.p[0] == '"' || v.p[0] == '\'')) v.p++, v.n--;
        while (v.n && (v.p[v.n - 1] == '"' || v.p[v.n - 1] == '\'')) v.n--;
        *label = v;
        found = 1;
    }
    return found;
}

static int is_utf8_label(Span label) { return lower_is(label, "utf-8") || lower_is(label, "utf8"); }

static int is_word(unsigned char c) { return isalnum(c) || c == '_'; }  /* \w of a bytes pattern */

static int is_label_char(unsigned char c) {
    return isalnum(c) || c == '_' || c == '.' || c == ':' || c == '+' || c == '-';
}

/* `<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]{1,40})` (ignoring case) over the first 4096
   bytes: 1 with its label, 0 for no match. */
static int meta_charset(Span body, Span *label) {
    size_t n = body.n < 4096 ? body.n : 4096;
    const unsigned char *p = body.p;
    for (size_t i = 0; i + 5 <= n; i++) {
        if (p[i] != '<' || !lower_starts(p + i + 1, n - i - 1, "meta")) continue;
        size_t j = i + 5;
        if (j < n && is_word(p[j])) continue;
        for (; j < n && p[j] != '>'; j++) {  /* each place `charset` may start, leftmost first */
            if (!lower_starts(p + j, n - j, "charset") || (j > 0 && is_word(p[j - 1]))) continue;
            size_t k = j + 7;
            while (k < n && is_space(p[k])) k++;
            if (k >= n || p[k] != '=') continue;
            k++;
            while (k < n && is_space(p[k])) k++;
            if (k < n && (p[k] == '"' || p[k] == '\'')) k++;  /* a quote is no label character: taken if there */
            while (k < n && is_space(p[k])) k++;
            size_t v = k;
            while (k < n && k - v < 40 && is_label_char(p[k])) k++;
            if (k == v) continue;
            *label = (Span){p + v, k - v};
            return 1;
        }
    }
    return 0;
}

static int all_ascii(Span s) {
    for (size_t i = 0; i < s.n; i++)
        if (s.p[i] >= 0x80) return 0;
    return 1;
}

static const unsigned char *BINARY_MAGIC[] = {
    (const unsigned char *)"\x89PNG", (const unsigned char *)"GIF8", (const unsigned char *)"\xff\xd8\xff",
    (const unsigned char *)"%PDF-", (const unsigned char *)"PK\x03\x04", (const unsigned char *)"\x1f\x8b",
};

static int binary_start(Span body) {
    Span head = {body.p, body.n < 1024 ? body.n : 1024};
    while (head.n && is_space(head.p[0])) head.p++, head.n--;
    for (size_t m = 0; m < sizeof BINARY_MAGIC / sizeof *BINARY_MAGIC; m++) {
        size_t k = strlen((const char *)BINARY_MAGIC[m]);
        if (head.n >= k && memcmp(head.p, BINARY_MAGIC[m], k) == 0) return 1;
    }
    return 0;
}

/* The page of a decoded body: (status, html, charset source) when its charset resolves to UTF-8 and it
   decodes; `http_utf8` when the Content-Type names UTF-8 (one naming another charset is not read here). */
static PyObject *utf8_page(Span body, int http_utf8, int status) {
    Span label;
    const char *source;
    int bom = body.n >= 3 && memcmp(body.p, "\xef\xbb\xbf", 3) == 0;
    int utf16_bom = body.n >= 2 && (memcmp(body.p, "\xff\xfe", 2) == 0 || memcmp(body.p, "\xfe\xff", 2) == 0);
    if (http_utf8) {
        source = "http";
    } else if (bom) {
        source = "bom";
    } else if (utf16_bom) {
        return Py_NewRef(Py_None);
    } else if (meta_charset(body, &label)) {
        if (!is_utf8_label(label)) return Py_NewRef(Py_None);
        source = "meta";
    } else if (all_ascii(body)) {
        source = "ascii";
    } else {
        return Py_NewRef(Py_None);  /* detected */
    }
    if (bom) body.p += 3, body.n -= 3;
    PyObject *html = PyUnicode_DecodeUTF8((const char *)body.p, (Py_ssize_t)body.n, NULL);
    if (html == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return NULL;
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return Py_BuildValue("(iNs)", status, html, source);
}

const char utf8_html_doc[] =
"utf8_html(block, limit) -> (status, html, charset_source) | None\n\n"
"The page of an HTTP response block (status line, header, body) when it is HTML whose charset resolves\n"
"to UTF-8, read as readers.payload reads it (a Content-Encoding inflated to at most `limit` bytes); None\n"
"for any block it leaves to that path.";

static int contains_lower(Span s, const char *word) {
    for (size_t i = 0; i < s.n; i++)
        if (lower_starts(s.p + i, s.n - i, word)) return 1;
    return 0;
}

PyObject *utf8_html(PyObject *module, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*n", &buf, &limit)) return NULL;
    PyObject *result = NULL;
    unsigned char *owned = NULL, *inflated = NULL;
    Span block = {buf.buf, (size_t)buf.len};
    const unsigned char *sep = memmem(block.p, block.n, "\r\n\r\n", 4);
    if (sep == NULL) goto none;
    Span head = {block.p, (size_t)(sep - block.p)}, body = {sep + 4, block.n - head.n - 4};
    Span h[N_HEADERS] = {{0}};
    int seen[N_HEADERS] = {0};
    int status = status_code(head);
    if (status == 0 || !headers(head, h, seen)) goto none;
    /* the type and a charset the header names: known before the body is undone */
    Span ctype = seen[H_TYPE] ? h[H_TYPE] : (Span){(const unsigned char *)"", 0}, label;
    const unsigned char *semi = memchr(ctype.p, ';', ctype.n);
    Span declared = strip((Span){ctype.p, semi ? (size_t)(semi - ctype.p) : ctype.n});
    int http_charset = charset_param(ctype, &label);
    if (!(lower_is(declared, "text/html") || lower_is(declared, "application/xhtml+xml"))
        || (http_charset && !is_utf8_label(label)))  /* another charset, or one to look up */
        goto none;
    if (seen[H_TRANSFER] && contains_lower(h[H_TRANSFER], "chunked")) {
        size_t n;
        if (!dechunk(body, &owned, &n)) goto none;
        body = (Span){owned, n};
    }
    if (seen[H_ENCODING] && h[H_ENCODING].n && !lower_is(h[H_ENCODING], "identity")) {
        size_t n;
        if (!(lower_is(h[H_ENCODING], "gzip") || lower_is(h[H_ENCODING], "x-gzip"))
            || !gunzip(body, (size_t)limit, &inflated, &n))
            goto none;
        body = (Span){inflated, n};
    }
    if (binary_start(body)) goto none;
    result = utf8_page(body, http_charset, status);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    free(owned);
    free(inflated);
    PyBuffer_Release(&buf);
    return result;
}
