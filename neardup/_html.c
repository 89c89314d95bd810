/* Main-content extraction and tag stripping in C, over a vendored lexbor (neardup/vendor/lexbor, Apache-2.0).
 *
 * `extract(html, main, strip_tags, min_words)` parses a page once and returns (text, title, main_words), text
 * and title with whitespace collapsed exactly as `" ".join(s.split())` collapses it; main_words is the number
 * of words main extraction found (before the fallback below; with main=False, the text's).
 *
 * main=True gives the text of resiliparse's `extract_plain_text(main_content=True, alt_texts=False,
 * preserve_formatting=False)`. It is a port of resiliparse 1.1.0's public rules (resiliparse/extract/
 * html2text.pyx, Apache-2.0, Janek Bevendorff): its root selection, skipped elements, tag, attribute and
 * class/id rules, link-cluster test and block separators. resiliparse 2 rewrote them in Rust, in a crate that
 * is not published as source with the Python package; where 2.0.1 decides differently, found by feeding both
 * the same pages, this file follows 2.0.1:
 *   - the article pattern needs one of its words (1.1.0's optional group, with the space it appends to every
 *     class, whitelisted every element that has a class and no id from the block rules);
 *   - the footer, nav, search, sidebar, modal and gallery patterns take only whitespace as a word boundary
 *     (not - or _), footer words and nav take -/_ suffixes such as _banner or -menu, nav's links-
 *     alternative needs a suffix and is bounded like the rest, the sidebar prefixes lost left and right,
 *     and "more-" / "other-" are no longer "recommended";
 *   - a style hiding an element counts without a class or id too; an <article> is whitelisted from the
 *     class rules of block elements, as an article class is;
 *   - the main-content root must match the selectors exactly once, counting each selector an element matches
 *     (class="article-body main-content" is two);
 *   - table cells are separated (1.1.0 glued them: "Country of originChina").
 * tests/test_html.py checks the two against each other, live: every rule case, random class names and ids,
 * random page structures, and every page of the bundled sample.
 * comments=False (a neardup rule, not resiliparse's) also leaves out, below the body's first two levels, every
 * element whose class or id names a reader comment thread or one comment (RE_COMMENTS): an original's thread
 * would otherwise outweigh its article, and a print or syndicated copy of it, which carries none, would hold
 * a small share of its shingles (Jaccard 0.1-0.4 on the sample's commented originals: not an LSH candidate).
 * Where fewer than `min_words` words remain (listing pages, link hubs), the text is that of main=False
 * instead, from the same parsed document.
 *
 * main=False is the classic recipe (BeautifulSoup's in `neardup.normalize` is the reference): the text nodes of
 * <body>, space-separated, outside the elements named in `strip_tags` and outside <input type=hidden>.
 *
 * The title is the document's <title> element (an <svg><title> is not one), as lexbor reads it.
 *
 * A page over one of the parser's bounds (see parse_bounded: nesting, attributes per element and per page,
 * formatting elements) raises PageTooComplex instead; every walk is linear in the page, so no shape of page costs more.
 *
 * Each thread keeps one lexbor document (cleaned between pages), the compiled patterns and a memo of
 * class/id verdicts (templates repeat their class names on every page); the GIL is released while a page
 * is parsed and walked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <lexbor/dom/dom.h>
#include <lexbor/html/html.h>
#include <lexbor/html/parser.h>
#include <lexbor/html/tree.h>

#define XXH_INLINE_ALL
#include "vendor/xxhash.h"

/* --- growable byte buffer --------------------------------------------------------------------- */
typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static int buf_reserve(buf_t *b, size_t extra) {
    if (b->n + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(buf_t *b, const void *s, size_t n) {
    if (buf_reserve(b, n + 1)) return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* Keep a buffer that one huge page grew, but not forever. */
static void buf_trim(buf_t *b) {
    b->n = 0;
    if (b->cap > (8u << 20)) {
        free(b->p);
        b->p = NULL;
        b->cap = 0;
    }
}

/* --- whitespace as Python's str.split() sees it, on UTF-8 -------------------------------------- */
/* Length of the whitespace character at s (0 if none): ASCII \t\n\v\f\r, \x1c-\x1f and space; U+0085,
 * U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (Py_UNICODE_ISSPACE). */
static inline size_t py_space(const unsigned char *s, const unsigned char *end) {
    unsigned char c = s[0];
    if (c < 0x80) return (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) ? 1 : 0;
    if (c == 0xC2 && s + 1 < end) return (s[1] == 0x85 || s[1] == 0xA0) ? 2 : 0;
    if (s + 2 >= end) return 0;
    if (c == 0xE1) return (s[1] == 0x9A && s[2] == 0x80) ? 3 : 0;
    if (c == 0xE2) {
        if (s[1] == 0x80) return (s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF) && s[2] >= 0x80 ? 3 : 0;
        return (s[1] == 0x81 && s[2] == 0x9F) ? 3 : 0;
    }
    if (c == 0xE3) return (s[1] == 0x80 && s[2] == 0x80) ? 3 : 0;
    return 0;
}

/* Append `" ".join(src.split())` to out; returns the number of words, or -1 when out of memory. */
static Py_ssize_t collapse_into(buf_t *out, const char *src, size_t n) {
    const unsigned char *s = (const unsigned char *)src, *end = s + n;
    if (buf_reserve(out, n + 1)) return -1;
    char *o = out->p + out->n;
    Py_ssize_t words = 0;
    int in_space = 1;
    while (s < end) {
        size_t w = py_space(s, end);
        if (w) {
            in_space = 1;
            s += w;
            continue;
        }
        if (in_space) {
            if (words) *o++ = ' ';
            words++;
            in_space = 0;
        }
        *o++ = (char)*s++;
    }
    out->n = (size_t)(o - out->p);
    return words;
}

/* --- per-thread state ------------------------------------------------------------------------- */
/* The class/id patterns (case-insensitive but for other_junk), as POSIX EREs: resiliparse's RE2 patterns with
 * `(?:` as `(` and `\s` as RE2's [\t\n\f\r ], changed where 2.0.1 decides otherwise (see the top).
 * tests/test_html.py runs them through Python's re too, and compares the verdicts.
 * glibc lets an anchor inside a group match at a newline, so the anchors are compiled as two sentinel
 * bytes that frame every subject: ^ as \x01, $ as \x02 (and those bytes in a subject become \x03). */
#define BOL '\x01'
#define EOL '\x02'

enum {
    RE_DISPLAY_CLS, RE_SIGNIN, RE_SOCIAL, RE_OTHER_JUNK,                      /* on class */
    RE_SKIP_LINK, RE_LOGO, RE_ADS, RE_ARTICLE, RE_HEADER, RE_FOOTER, RE_NAV, /* on "class id" */
    RE_RECOMMENDED, RE_SEARCH, RE_SIDEBAR, RE_MODAL, RE_GALLERY, RE_PRINT,
    RE_COMMENTS,                                                             /* neardup's own, on "class id" */
    RE_LANDMARK,                                                             /* on id */
    RE_DISPLAY_CSS,                                                          /* on style */
    N_RE
};
#define FIRST_BOTH RE_SKIP_LINK
#define FIRST_ID RE_LANDMARK

static const struct {
    const char *pattern;
    int icase;
} PATTERNS[N_RE] = {
    {"(^|[ \t\n\f\r])((is|visually)[_-])?(display-none|hidden|invisible|collapsed|h-0|nocontent|expandable)(-xs|-sm|-lg|-2?xl)?($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r_-])((log[_-]?in|sign[_-]?(in|up)|account)|user[_-](info|profile|settings|actions))($|[ \t\n\f\r_-])", 1},
    {"(^|[ \t\n\f\r]|__|--|mobile-|desktop-|l-|m-|c-)(social(media|search)?|share(daddy)?|syndication|newsletter|sharing|follow|email|likes?|(give[_-]?)?feedback|(brand[_-])?engagement|facebook|twitter|subscribe|wa|jp|aptf-follow)([_-]?(post|links?|section|icons?|btn|buttons?|target))?($|[ \t\n\f\r_-])", 1},
    {"(^|[ \t\n\f\r])short-view-count|spinner($|[ \t\n\f\r_-])", 0},
    {"(^|[ \t\n\f\r])(link[_-]?)?(skip([_-]?(to|link))?|scroll[_-]?(up|down)|next|prev(ious)?|permalink|pagination|skip-to-(main-)?content)($|[ \t\n\f\r]|[_-]?(post|article))", 1},
    {"(brand(ing)?[_-]*)?logo($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])((google|wide)[_-]?ads?|ad(vert|vertise(ment|link)?|$|_[a-f0-9]+)|sponsor(ed)?|promoted|paid|(wide)?banner|donate)($|[ \t\n\f\r_-])", 1},
    {"(^|[ \t\n\f\r_-])(article|entry|post|story|single[_-]?post|(main[_-])?content|body|text|page)($|[ \t\n\f\r_-])", 1},
    {"(^|[ \t\n\f\r])(l|m|wp|global|page|site|full|sticky)[_-]*header([_-]?wrap(per)?|bar)?($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])((global|page|site)[_-]*)?(footer|copyright|legal|fcontainer|cookie|consent)([_-](banner|notice|consent|bar|container|wrap(per)?))?($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])((l|m|wp|main|site|page|sub|article|global|sticky|main)[_-]*)?(nav(igation|bar)?([_-](bar|menu|wrapper|container))?|menu([_-]item)?|drop[_-]?down|bread[_-]?crumbs?|links?[_-]?(bar|box|list|container|section|wrapp(er)))($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r_-])(trends|trending|recommended|featured|popular|editors?[_-]picks|related|read-next|related[_-]?(links|articles|posts|guides|stories))($|[ \t\n\f\r_-])", 1},
    {"(^|[ \t\n\f\r])search([_-]?(bar|facility|box))?($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])((l|wp|global|sticky)[_-]*)?((side|sticky)[_-]?(bars?|box)|one-third)($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])(wp-|p-|-l)?(modal|popup|lightbox)([_-]*(window|pane|box))?($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])(gallery|carousel)($|[ \t\n\f\r])", 1},
    {"(^|[ \t\n\f\r])print[_-]", 1},
    /* a reader comment thread's container or one comment (WordPress, Disqus, most CMS themes): whole tokens, so
     * an article's "comments-open" or "no-comments" marker class is not one */
    {"(^|[ \t\n\f\r])(comments?|comment[_-]?(list|section|thread|area|respond)|comments[_-](list|section|thread|area|wrap(per)?|container)|disqus[_-]thread|respond)($|[ \t\n\f\r])", 1},
    {"^((l|wp|global|page|site|full|sticky)[_-]*)?((head|foot)(er)?|right)$", 1},
    {"(^|;[ \t\n\f\r]*)(display[ \t\n\f\r]?:[ \t\n\f\r]?none|visibility[ \t\n\f\r]?:[ \t\n\f\r]?hidden)($|[ \t\n\f\r]?;)", 1},
};

/* Verdicts of the patterns on one key (class + id, or style), memoized: open addressing, cleared when
 * half full. */
typedef struct {
    uint64_t hash;
    uint32_t off, len, mask, used;
} slot_t;

#define MEMO_SLOTS (1u << 14)

typedef struct {
    slot_t *slots;
    size_t count;
    buf_t keys;
} memo_t;

struct sums;

typedef struct {
    lxb_html_document_t *doc;
    regex_t re[N_RE];
    locale_t c_locale;
    memo_t memo;
    buf_t raw, out, scratch;
    int drop_comments; /* main text without reader comment threads (RE_COMMENTS), for this page */
    struct sums *sums; /* per node of the page being walked, see subtree_sums */
    size_t nsums, cap_sums;
    size_t rule_bytes; /* pattern matching done on the page being walked, see verdicts */
    int oom;
} state_t;

static pthread_key_t state_key;

static void state_free(void *p) {
    state_t *st = p;
    if (!st) return;
    if (st->doc) lxb_html_document_destroy(st->doc);
    for (int i = 0; i < N_RE; i++) regfree(&st->re[i]);
    if (st->c_locale) freelocale(st->c_locale);
    free(st->memo.slots);
    free(st->memo.keys.p);
    free(st->raw.p);
    free(st->out.p);
    free(st->scratch.p);
    free(st->sums);
    free(st);
}

/* This thread's state, created on first use (with the GIL held: it may set a Python error). */
static state_t *get_state(void) {
    state_t *st = pthread_getspecific(state_key);
    if (st) return st;
    st = calloc(1, sizeof *st);
    if (!st) return (state_t *)PyErr_NoMemory();
    st->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    st->memo.slots = calloc(MEMO_SLOTS, sizeof(slot_t));
    st->doc = lxb_html_document_create();
    if (!st->c_locale || !st->memo.slots || !st->doc) {
        state_free(st);
        return (state_t *)PyErr_NoMemory();
    }
    /* Byte-wise patterns, whatever LC_CTYPE the process runs under (RE2 folds ASCII the same way). */
    locale_t old = uselocale(st->c_locale);
    int i = 0;
    char pattern[1024];
    for (; i < N_RE; i++) {
        size_t n = strlen(PATTERNS[i].pattern);
        if (n >= sizeof pattern) break;
        for (size_t j = 0; j <= n; j++) {
            char c = PATTERNS[i].pattern[j];
            pattern[j] = c == '^' ? BOL : c == '$' ? EOL : c;
        }
        int flags = REG_EXTENDED | REG_NOSUB | (PATTERNS[i].icase ? REG_ICASE : 0);
        if (regcomp(&st->re[i], pattern, flags) != 0) break;
    }
    uselocale(old);
    if (i < N_RE) {
        for (int j = 0; j < i; j++) regfree(&st->re[j]);
        memset(st->re, 0, sizeof st->re);
        state_free(st);
        PyErr_Format(PyExc_RuntimeError, "neardup._html: pattern %d does not compile", i);
        return NULL;
    }
    if (pthread_setspecific(state_key, st) != 0) {
        state_free(st);
        return (state_t *)PyErr_NoMemory();
    }
    return st;
}

/* --- the patterns, memoized ------------------------------------------------------------------- */
typedef struct {
    const char *p;
    size_t n;
} sv_t;

/* A subject framed by the anchor sentinels; empty subjects match nothing (regex_search_not_empty). */
static inline int pattern_hit(state_t *st, int i, const char *s) { return s[2] != EOL && regexec(&st->re[i], s, 0, NULL, 0) == 0; }

/* A subject framed by the anchor sentinels: BOL, a, a space if asked, c, EOL, NUL. */
static int put_subject2(buf_t *b, sv_t a, int space, sv_t c) {
    if (buf_reserve(b, a.n + c.n + 6)) return -1;
    char *o = b->p + b->n;
    *o++ = BOL; /* twice: an anchor consumes one, and two anchors may meet ("ad(...|$)($|...)") */
    *o++ = BOL;
    for (size_t i = 0; i < a.n; i++) *o++ = (a.p[i] == BOL || a.p[i] == EOL) ? '\x03' : a.p[i];
    if (space) *o++ = ' ';
    for (size_t i = 0; i < c.n; i++) *o++ = (c.p[i] == BOL || c.p[i] == EOL) ? '\x03' : c.p[i];
    *o++ = EOL;
    *o++ = EOL;
    *o++ = 0;
    b->n = (size_t)(o - b->p);
    return 0;
}

static const sv_t EMPTY = {"", 0};

/* The verdicts as a bit mask: the class patterns on cls, the "class id" ones on both, landmark on id. */
static uint32_t eval_class_id(state_t *st, sv_t cls, sv_t id) {
    buf_t *b = &st->scratch;
    b->n = 0;
    if (put_subject2(b, cls, 0, EMPTY)) return 0;
    size_t both = b->n;
    /* "cls id" as resiliparse joins them: a space after a non-empty class, even with no id */
    if (put_subject2(b, cls, cls.n > 0, id)) return 0;
    size_t idoff = b->n;
    if (put_subject2(b, id, 0, EMPTY)) return 0;
    uint32_t mask = 0;
    locale_t old = uselocale(st->c_locale);
    for (int i = 0; i < RE_DISPLAY_CSS; i++) {
        const char *s = b->p + (i < FIRST_BOTH ? 0 : i < FIRST_ID ? both : idoff);
        if (pattern_hit(st, i, s)) mask |= 1u << i;
    }
    uselocale(old);
    return mask;
}

static uint32_t eval_style(state_t *st, sv_t style) {
    buf_t *b = &st->scratch;
    b->n = 0;
    if (put_subject2(b, style, 0, EMPTY)) return 0;
    locale_t old = uselocale(st->c_locale);
    uint32_t mask = pattern_hit(st, RE_DISPLAY_CSS, b->p) ? 1u << RE_DISPLAY_CSS : 0;
    uselocale(old);
    return mask;
}

/* The patterns' cost grows with the bytes they read (~0.3 us a byte, for all of them) and ~6 us a call. So of a
 * value they read at most MAX_RULE_VALUE_BYTES, cut after its last whitespace within them (real class lists are
 * far shorter: the sample's longest is 24 bytes; a 5 MB one cost 1.6 s); and a page may have them read at most
 * MAX_RULE_BYTES, each distinct value counted as its bytes and RULE_EVAL_BYTES more (~0.6 s; the sample's pages
 * need at most 26,000): over it the page is too complex. */
#define MAX_RULE_VALUE_BYTES 2048
#define RULE_EVAL_BYTES 64
#define MAX_RULE_BYTES 2000000
#define RULE_BUDGET_SPENT ((uint32_t)1 << 31) /* verdicts' answer once the page is over MAX_RULE_BYTES */

static inline int c_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); } /* C isspace */

/* v, cut to what the patterns read */
static sv_t rule_value(sv_t v) {
    if (v.n <= MAX_RULE_VALUE_BYTES) return v;
    size_t n = MAX_RULE_VALUE_BYTES;
    while (n && !c_space((unsigned char)v.p[n])) n--;
    return (sv_t){v.p, n};
}

/* kind 0: (class, id); kind 1: style. The key is kind, len(a), a, b. */
static uint32_t verdicts(state_t *st, int kind, sv_t a, sv_t b) {
    memo_t *m = &st->memo;
    a = rule_value(a);
    b = rule_value(b);
    uint32_t alen = (uint32_t)a.n;
    char head[5];
    head[0] = (char)kind;
    memcpy(head + 1, &alen, 4);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    XXH3_64bits_update(&hs, head, 5);
    XXH3_64bits_update(&hs, a.p, a.n);
    XXH3_64bits_update(&hs, b.p, b.n);
    uint64_t h = XXH3_64bits_digest(&hs);
    size_t klen = 5 + a.n + b.n;
    size_t i = (size_t)h & (MEMO_SLOTS - 1);
    for (;; i = (i + 1) & (MEMO_SLOTS - 1)) {
        slot_t *s = &m->slots[i];
        if (!s->used) break;
        if (s->hash == h && s->len == klen) {
            const char *k = m->keys.p + s->off;
            if (memcmp(k, head, 5) == 0 && memcmp(k + 5, a.p, a.n) == 0 && memcmp(k + 5 + a.n, b.p, b.n) == 0)
                return s->mask;
        }
    }
    st->rule_bytes += klen + RULE_EVAL_BYTES;
    if (st->rule_bytes > MAX_RULE_BYTES) return RULE_BUDGET_SPENT;
    uint32_t mask = kind == 0 ? eval_class_id(st, a, b) : eval_style(st, a);
    if (m->count * 2 >= MEMO_SLOTS || m->keys.n + klen > UINT32_MAX / 2) { /* full: start again */
        memset(m->slots, 0, MEMO_SLOTS * sizeof(slot_t));
        m->count = 0;
        m->keys.n = 0;
        i = (size_t)h & (MEMO_SLOTS - 1);
    }
    size_t off = m->keys.n;
    if (buf_put(&m->keys, head, 5) || buf_put(&m->keys, a.p, a.n) || buf_put(&m->keys, b.p, b.n)) {
        m->keys.n = off;
        return mask; /* no memory to remember it: still the right verdict */
    }
    slot_t *s = &m->slots[i];
    s->hash = h;
    s->off = (uint32_t)off;
    s->len = (uint32_t)klen;
    s->mask = mask;
    s->used = 1;
    m->count++;
    return mask;
}

/* --- node helpers ----------------------------------------------------------------------------- */

static sv_t strip_sv(sv_t s) {
    while (s.n && c_space((unsigned char)s.p[0])) s.p++, s.n--;
    while (s.n && c_space((unsigned char)s.p[s.n - 1])) s.n--;
    return s;
}

static inline int sv_eq(sv_t s, const char *lit) { return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0; }

static int sv_in(sv_t s, const char *const *list) {
    for (; *list; list++)
        if (sv_eq(s, *list)) return 1;
    return 0;
}

typedef struct {
    sv_t cls, id, style, rel, itemprop, aria_hidden, aria_expanded, role, type;
    int hidden, data_ad;
} attrs_t;

static void read_attrs(lxb_dom_element_t *el, attrs_t *a) {
    memset(a, 0, sizeof *a);
    for (lxb_dom_attr_t *at = el->first_attr; at; at = at->next) {
        sv_t v = {"", 0};
        if (at->value && at->value->data) v = (sv_t){(const char *)at->value->data, at->value->length};
        switch (at->node.local_name) {
        case LXB_DOM_ATTR_CLASS: a->cls = v; continue;
        case LXB_DOM_ATTR_ID: a->id = v; continue;
        case LXB_DOM_ATTR_STYLE: a->style = v; continue;
        case LXB_DOM_ATTR_REL: a->rel = v; continue;
        case LXB_DOM_ATTR_TYPE: a->type = v; continue;
        default: break;
        }
        size_t len;
        const lxb_char_t *name = lxb_dom_attr_local_name(at, &len);
        sv_t nm = {(const char *)name, name ? len : 0};
        if (sv_eq(nm, "hidden")) a->hidden = 1;
        else if (sv_eq(nm, "itemprop")) a->itemprop = v;
        else if (sv_eq(nm, "aria-hidden")) a->aria_hidden = v;
        else if (sv_eq(nm, "aria-expanded")) a->aria_expanded = v;
        else if (sv_eq(nm, "role")) a->role = v;
        else if (sv_eq(nm, "data-ad") || sv_eq(nm, "data-advertisement") || sv_eq(nm, "data-text-ad")) a->data_ad = 1;
    }
    if (!a->cls.p) a->cls = EMPTY;
    if (!a->id.p) a->id = EMPTY;
    if (!a->style.p) a->style = EMPTY;
}

static int is_block(lxb_tag_id_t t) {
    switch (t) {
    case LXB_TAG_ADDRESS: case LXB_TAG_ARTICLE: case LXB_TAG_ASIDE: case LXB_TAG_BLOCKQUOTE: case LXB_TAG_BR:
    case LXB_TAG_CENTER: case LXB_TAG_DETAILS: case LXB_TAG_DD: case LXB_TAG_DT: case LXB_TAG_DIV: case LXB_TAG_DL:
    case LXB_TAG_FIELDSET: case LXB_TAG_FIGCAPTION: case LXB_TAG_FIGURE: case LXB_TAG_FOOTER: case LXB_TAG_FORM:
    case LXB_TAG_H1: case LXB_TAG_H2: case LXB_TAG_H3: case LXB_TAG_H4: case LXB_TAG_H5: case LXB_TAG_H6:
    case LXB_TAG_HEADER: case LXB_TAG_HGROUP: case LXB_TAG_HR: case LXB_TAG_LI: case LXB_TAG_MAIN: case LXB_TAG_NAV:
    case LXB_TAG_OL: case LXB_TAG_P: case LXB_TAG_PRE: case LXB_TAG_SECTION: case LXB_TAG_TABLE: case LXB_TAG_TR:
    case LXB_TAG_UL:
        return 1;
    default:
        return 0;
    }
}

/* Elements skipped with their subtrees: resiliparse's selectors for alt_texts=False, form_fields=False,
 * noscript=False ("embed" and "img" are not among them: a missing comma joins them to "embedimg"). */
static int is_skipped_tag(lxb_tag_id_t t) {
    switch (t) {
    case LXB_TAG_SCRIPT: case LXB_TAG_STYLE: case LXB_TAG_IFRAME: case LXB_TAG_FRAME: case LXB_TAG_TEMPLATE:
    case LXB_TAG_OBJECT: case LXB_TAG_VIDEO: case LXB_TAG_AUDIO: case LXB_TAG_AREA: case LXB_TAG_SVG:
    case LXB_TAG_FIGCAPTION: case LXB_TAG_FIGURE: case LXB_TAG_NOSCRIPT: case LXB_TAG_TEXTAREA: case LXB_TAG_INPUT:
    case LXB_TAG_BUTTON: case LXB_TAG_SELECT: case LXB_TAG_OPTION: case LXB_TAG_LABEL:
        return 1;
    default:
        return 0;
    }
}

/* resiliparse's pre-order step that also visits an element again ("end tag") on the way up. */
static lxb_dom_node_t *next_node(const lxb_dom_node_t *root, lxb_dom_node_t *node, size_t *depth, int *end_tag) {
    if (!*end_tag && node->first_child) {
        ++*depth;
        return node->first_child;
    }
    if (!node->next && node != root) {
        --*depth;
        *end_tag = 1;
        return node->parent;
    }
    *end_tag = 0;
    if (node == root) return NULL;
    return node->next;
}

/* The pre-order successor of n in root's subtree (root itself excluded), into n's children if asked. */
static inline lxb_dom_node_t *subtree_next(lxb_dom_node_t *root, lxb_dom_node_t *n, int descend) {
    if (descend && n->first_child) return n->first_child;
    while (n != root && !n->next) n = n->parent;
    return n == root ? NULL : n->next;
}

/* --- subtree sums, memoized per node ---------------------------------------------------------- */
/* resiliparse's link-cluster test (_is_link_cluster) reads the collapsed (C isspace runs as one space) text
 * length of an element's subtree and the sum of that length over the <a> elements in it; the footer rule asks
 * whether an element is the (recursively) last one of a direct child of <body>. Answered from scratch for
 * every element of a chain of nested <div>s, each costs its subtree (or its path to <body>): quadratic in the
 * depth. So each node's answer is kept, built from its children's (or its parent's), and a page costs one
 * pass. node->user holds the node's index + 1 in st->sums (lexbor creates nodes zeroed; the index is checked
 * against the slot's node, so a stale value is never trusted). */
typedef struct sums {
    lxb_dom_node_t *node;
    size_t text_len; /* collapsed text of the subtree, as if its text nodes were one string */
    size_t link_len; /* the sum of text_len over the <a> elements strictly inside */
    uint8_t done, has_text, first_space, last_space;
    uint8_t has_next; /* footer rule: 0 not known yet, 1 no, 2 yes */
} sums_t;

static sums_t *sums_slot(state_t *st, lxb_dom_node_t *n) {
    uintptr_t i = (uintptr_t)n->user;
    if (i && i <= st->nsums && st->sums[i - 1].node == n) return &st->sums[i - 1];
    if (st->nsums == st->cap_sums) {
        size_t cap = st->cap_sums ? st->cap_sums * 2 : 1024;
        sums_t *p = realloc(st->sums, cap * sizeof *p);
        if (!p) {
            st->oom = 1;
            return NULL;
        }
        st->sums = p;
        st->cap_sums = cap;
    }
    sums_t *s = &st->sums[st->nsums++];
    memset(s, 0, sizeof *s);
    s->node = n;
    n->user = (void *)(uintptr_t)st->nsums;
    return s;
}

/* Fill in n's sums, from its own text or from its children's (all done). */
static int sums_finish(state_t *st, lxb_dom_node_t *n) {
    sums_t *s = sums_slot(st, n);
    if (!s) return -1;
    if (s->done) return 0;
    size_t len = 0, links = 0;
    int has = 0, first = 0, last = 0;
    if (n->type == LXB_DOM_NODE_TYPE_TEXT) {
        lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(n);
        const unsigned char *t = cd->data.data;
        int last_space = 0;
        for (size_t i = 0; i < cd->data.length; i++) {
            int sp = c_space(t[i]);
            if (!sp || !last_space) len++;
            last_space = sp;
        }
        if (cd->data.length) has = 1, first = c_space(t[0]), last = last_space;
    } else {
        for (lxb_dom_node_t *c = n->first_child; c; c = c->next) {
            const sums_t *cs = sums_slot(st, c); /* exists: no realloc, s stays valid */
            if (!cs) return -1;
            links += cs->link_len;
            if (c->type == LXB_DOM_NODE_TYPE_ELEMENT && c->local_name == LXB_TAG_A) links += cs->text_len;
            if (!cs->has_text) continue;
            if (!has) first = cs->first_space;
            len += cs->text_len - (has && last && cs->first_space); /* a space run across the seam counts once */
            has = 1;
            last = cs->last_space;
        }
    }
    s->text_len = len;
    s->link_len = links;
    s->has_text = (uint8_t)has;
    s->first_space = (uint8_t)first;
    s->last_space = (uint8_t)last;
    s->done = 1;
    return 0;
}

/* The sums of top's subtree: a post-order walk that stops at subtrees already summed. */
static const sums_t *subtree_sums(state_t *st, lxb_dom_node_t *top) {
    lxb_dom_node_t *n = top;
    for (;;) {
        for (;;) {
            sums_t *s = sums_slot(st, n);
            if (!s) return NULL;
            if (s->done || !n->first_child) break;
            n = n->first_child;
        }
        if (sums_finish(st, n)) return NULL;
        while (n != top && !n->next) {
            n = n->parent;
            if (sums_finish(st, n)) return NULL;
        }
        if (n == top) return sums_slot(st, top);
        n = n->next;
    }
}

static int is_link_cluster(state_t *st, lxb_dom_node_t *node, double max_ratio, size_t max_length) {
    const sums_t *s = subtree_sums(st, node);
    if (!s) return 0; /* out of memory: st->oom fails the page */
    size_t text = s->text_len, links = s->link_len;
    if (max_length && text > max_length) return 0;
    return links && (double)links / (double)text > max_ratio;
}

/* The footer rule: whether a node on the way from node up to a direct child of <body> has a next sibling
 * (a text node right after it passed over). The answer is the same for every node on that way, so each
 * is told it. */
static int has_next_below_body(state_t *st, lxb_dom_node_t *node) {
    int found = 0;
    lxb_dom_node_t *p = node;
    while (p && p->parent && p->parent->local_name != LXB_TAG_BODY) {
        const sums_t *s = sums_slot(st, p);
        if (!s) return 0;
        if (s->has_next) {
            found = s->has_next == 2;
            break;
        }
        lxb_dom_node_t *q = p->next && p->next->type == LXB_DOM_NODE_TYPE_TEXT ? p->next : p;
        if (q->next) {
            found = 1;
            break;
        }
        p = p->parent;
    }
    for (lxb_dom_node_t *x = node; x != p; x = x->parent) {
        sums_t *s = sums_slot(st, x);
        if (!s) return 0;
        s->has_next = (uint8_t)(found ? 2 : 1);
    }
    return found;
}

/* A text node of one private-use code point (an icon font) or a pilcrow (an anchor link). */
static int is_unprintable_pua(lxb_dom_node_t *node) {
    lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(node);
    sv_t t = strip_sv((sv_t){(const char *)cd->data.data, cd->data.length});
    if (t.n > 3) return 0;
    if (t.n == 2 && (unsigned char)t.p[0] == 0xC2 && (unsigned char)t.p[1] == 0xB6) return 1;
    if (t.n == 3) { /* as resiliparse compares it: the three bytes read as a little-endian integer */
        uint32_t cp = (unsigned char)t.p[0] | (unsigned)(unsigned char)t.p[1] << 8 | (unsigned)(unsigned char)t.p[2] << 16;
        if (cp >= 0x8080ee && cp <= 0xbfa3ef) return 1;
    }
    return 0;
}

static const char *const SKIP_REL[] = {"author", "icon", "search", "prev", "next", "tag", NULL};
static const char *const SKIP_ITEMPROP[] = {"datePublished", "author", "url", NULL};
static const char *const SKIP_ROLES[] = {"alert", "banner", "checkbox", "comment", "complementary", "contentinfo",
    "dialog", "img", "menu", "menubar", "menuitem", "navigation", "presentation", "radio", "search", "searchbox",
    "separator", "tab", "toolbar", "tooltip", NULL};

#define HAS(bit) (mask & (1u << (bit)))

/* resiliparse's _is_main_content_node (comments and post meta kept, hidden elements not). */
static int is_main_content(state_t *st, lxb_dom_node_t *node, size_t body_depth) {
    if (node->type == LXB_DOM_NODE_TYPE_TEXT) return !is_unprintable_pua(node);
    if (node->type != LXB_DOM_NODE_TYPE_ELEMENT) return 1;
    lxb_tag_id_t tag = node->local_name;

    /* Section 1: tag names */
    switch (tag) {
    case LXB_TAG_BODY: case LXB_TAG_MAIN: case LXB_TAG_H1:
        return 1;
    case LXB_TAG_FOOTER: {
        if (body_depth < 3 || is_link_cluster(st, node, 0.2, 0)) return 0;
        /* kept only if it is not the (recursively) last element of a direct child of <body> */
        return has_next_below_body(st, node);
    }
    case LXB_TAG_UL:
        if (body_depth < 4 || is_link_cluster(st, node, 0.2, 0)) return 0;
        break;
    case LXB_TAG_ARTICLE: /* teasers */
        if (body_depth > 2 && is_link_cluster(st, node, 0.2, 500)) return 0;
        break;
    case LXB_TAG_NAV: case LXB_TAG_ASIDE: case LXB_TAG_AUDIO: case LXB_TAG_VIDEO: case LXB_TAG_TIME:
        return 0;
    default:
        break;
    }

    /* Section 2: rel and ARIA attributes */
    attrs_t a;
    read_attrs(lxb_dom_interface_element(node), &a);
    if (a.hidden) return 0;
    sv_t rel = strip_sv(a.rel);
    if (rel.n && sv_in(rel, SKIP_REL)) return 0;
    sv_t itemprop = strip_sv(a.itemprop);
    if (itemprop.n && sv_in(itemprop, SKIP_ITEMPROP)) return 0;
    if (sv_eq(strip_sv(a.aria_hidden), "true")) return 0;
    if (sv_eq(strip_sv(a.aria_expanded), "false")) return 0;
    /* resiliparse 1.1.0 read the style only of elements with a class or id; 2.0.1 reads every element's */
    if (a.style.n && verdicts(st, 1, a.style, EMPTY)) return 0;

    /* Section 3: class and id, any element */
    if (!a.cls.n && !a.id.n) {
        if (tag == LXB_TAG_DIV) return body_depth <= 5 || !is_link_cluster(st, node, 0.6, 800);
        return 1;
    }
    uint32_t mask = verdicts(st, 0, a.cls, a.id);
    if (HAS(RE_DISPLAY_CLS)) return 0;
    if ((tag == LXB_TAG_A || tag == LXB_TAG_DIV || tag == LXB_TAG_LI) && HAS(RE_SKIP_LINK)) return 0;
    if (body_depth > 2 && (HAS(RE_SIGNIN) || HAS(RE_SOCIAL))) return 0;
    if (HAS(RE_LOGO) || HAS(RE_ADS) || a.data_ad || HAS(RE_OTHER_JUNK)) return 0;
    if (st->drop_comments && body_depth > 2 && HAS(RE_COMMENTS)) return 0;

    /* Section 4: class and id, block elements only */
    if (!is_block(tag) && tag != LXB_TAG_TD) return 1;
    if (sv_eq(rel, "main")) return 1; /* sic: resiliparse tests rel here, not role */
    sv_t role = strip_sv(a.role);
    if (role.n && sv_in(role, SKIP_ROLES)) return 0;
    if (tag == LXB_TAG_ARTICLE || HAS(RE_ARTICLE)) return 1; /* 2.0.1 whitelists <article> here too */
    if (HAS(RE_LANDMARK) || HAS(RE_HEADER) || HAS(RE_FOOTER) || HAS(RE_NAV) || HAS(RE_RECOMMENDED) ||
        HAS(RE_SEARCH) || HAS(RE_SIDEBAR) || HAS(RE_MODAL) || HAS(RE_GALLERY) || HAS(RE_PRINT))
        return 0;
    if (body_depth > 2 && tag == LXB_TAG_DIV && is_link_cluster(st, node, 0.6, 1500)) return 0;
    return 1;
}

/* --- the two walks ---------------------------------------------------------------------------- */
static const char *const ROOT_CLASSES[] = {"article-body", "articleBody", "contentBody", "article-text",
    "main-content", "postcontent", "post-content", "single-post", NULL};

/* How many of ROOT_CLASSES are among the whitespace-separated tokens of `cls` (ASCII case-insensitively in
 * quirks mode, as lexbor's class selectors match): each is a selector of its own, and resiliparse 2.0.1 counts
 * an element once per selector it matches. */
static inline int html_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

static int root_class_count(sv_t cls, int quirks) {
    int count = 0;
    for (const char *const *c = ROOT_CLASSES; *c; c++) {
        size_t len = strlen(*c), i = 0;
        while (i < cls.n) {
            while (i < cls.n && html_space(cls.p[i])) i++;
            size_t j = i;
            while (j < cls.n && !html_space(cls.p[j])) j++;
            if (j - i == len && (quirks ? strncasecmp(*c, cls.p + i, len) : memcmp(*c, cls.p + i, len)) == 0) {
                count++;
                break;
            }
            i = j;
        }
    }
    return count;
}

/* The element under body that resiliparse's main-content selectors match exactly once, or body. */
static lxb_dom_node_t *main_root(lxb_dom_node_t *body, int quirks) {
    lxb_dom_node_t *found = NULL;
    size_t count = 0;
    for (lxb_dom_node_t *n = body->first_child; n; n = subtree_next(body, n, 1)) {
        if (n->type == LXB_DOM_NODE_TYPE_ELEMENT) {
            attrs_t a;
            read_attrs(lxb_dom_interface_element(n), &a);
            size_t matches = (size_t)root_class_count(a.cls, quirks) + sv_eq(a.role, "main");
            if (matches) {
                found = n;
                if ((count += matches) > 1) return body;
            }
        }
    }
    return count == 1 ? found : body;
}

/* Main-content text into st->raw: text nodes concatenated, a space at each block element's start and end. */
static int walk_main(state_t *st, lxb_dom_node_t *body, int quirks) {
    lxb_dom_node_t *root = main_root(body, quirks);
    size_t base_depth = 0;
    for (lxb_dom_node_t *p = root; p->local_name != LXB_TAG_BODY && p->parent; p = p->parent) base_depth++;
    buf_t *out = &st->raw;
    size_t depth = 0;
    int end_tag = 0, margin = 0;
    lxb_dom_node_t *node = root;
    while (node) {
        int keep = node->type == LXB_DOM_NODE_TYPE_ELEMENT || node->type == LXB_DOM_NODE_TYPE_TEXT;
        /* An element seen again on the way up passed these tests on the way down. */
        if (keep && !end_tag) {
            if (node != root && node->type == LXB_DOM_NODE_TYPE_ELEMENT && is_skipped_tag(node->local_name)) keep = 0;
            else if (!is_main_content(st, node, depth + base_depth)) keep = 0;
        }
        if (!keep) {
            end_tag = 1;
            node = next_node(root, node, &depth, &end_tag);
            continue;
        }
        if (node->type == LXB_DOM_NODE_TYPE_TEXT) {
            lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(node);
            if (margin && out->n && buf_put(out, " ", 1)) return -1;
            margin = 0;
            if (buf_put(out, cd->data.data, cd->data.length)) return -1;
        } else if (is_block(node->local_name) || node->local_name == LXB_TAG_TD || node->local_name == LXB_TAG_TH) {
            margin = 1; /* resiliparse 1.1.0 glued table cells ("Country of originChina"); 2.0.1 does not */
        }
        node = next_node(root, node, &depth, &end_tag);
    }
    return 0;
}

typedef struct {
    const char *name;
    size_t len;
} name_t;

#define MAX_STRIP_TAGS 64 /* exported: Config refuses longer lists */

static int strip_match(lxb_dom_node_t *n, const name_t *tags, size_t ntags) {
    size_t len;
    const lxb_char_t *name = lxb_dom_element_local_name(lxb_dom_interface_element(n), &len);
    if (!name) return 0;
    for (size_t i = 0; i < ntags; i++)
        if (tags[i].len == len && strncasecmp(tags[i].name, (const char *)name, len) == 0) return 1;
    if (n->local_name == LXB_TAG_INPUT) {
        attrs_t a;
        read_attrs(lxb_dom_interface_element(n), &a);
        if (a.type.n == 6 && strncasecmp(a.type.p, "hidden", 6) == 0) return 1;
    }
    return 0;
}

/* Tag-stripped text into st->raw: body's text nodes outside the stripped elements, space-separated. */
static int walk_strip(state_t *st, lxb_dom_node_t *body, const name_t *tags, size_t ntags) {
    buf_t *out = &st->raw;
    for (lxb_dom_node_t *n = body->first_child; n;) {
        int descend = 1;
        if (n->type == LXB_DOM_NODE_TYPE_TEXT) {
            lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(n);
            if (buf_put(out, cd->data.data, cd->data.length) || buf_put(out, " ", 1)) return -1;
        } else if (n->type == LXB_DOM_NODE_TYPE_ELEMENT && strip_match(n, tags, ntags)) {
            descend = 0;
        }
        n = subtree_next(body, n, descend);
    }
    return 0;
}

/* --- the parse, with a budget --------------------------------------------------------------------- */
/* The HTML tree builder costs more than linear time on some shapes: each start tag of a <div>, <p>, <ul>...
 * looks for an open <p> through the stack of open elements ("has a p element in button scope"), so a chain of
 * 50,000 nested <div>s costs 50,000^2 / 2 steps; each new formatting element (<b>, <font>...) is compared
 * with the list of active ones (the Noah's Ark clause), and text re-opens every formatting element a closed
 * <p> left in that list; each attribute of a tag is compared with the ones before it. A page over one of
 * these bounds is refused ("page too complex") rather than parsed. Real pages are far from them (none of the
 * 13,000 pages of the sample and of make_crawl's crawl comes near); Chromium and WebKit stop nesting at 512
 * open elements (kMaximumHTMLParserDOMTreeDepth), and 256 keeps the stack walks of an 8 MB page of the
 * deepest nesting allowed under a second (bench/pathological.py). (A document's
 * tokenizer keeps repeated attributes; the tree builder drops them, scanning the element's attributes for each:
 * quadratic in their number, so a page's attributes cost the sum over its elements of their number squared, a
 * repeated <html> or <body> start tag counting its attributes times the ones its element already has:
 * MAX_ATTRIBUTE_SQUARES bounds it, 1,000 times the most a page of the sample or of make_sample's realsize
 * crawl has (30,056), and a page at it costs ~0.1 s: bench/pathological.py's attributes-256-repeated.)
 * Each bound is checked
 * as each token is handed to the tree builder, so a hostile page is stopped within one token of its bound. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_OPEN_ELEMENTS 256
#define MAX_ATTRIBUTES 256       /* of one element */
#define MAX_ATTRIBUTE_SQUARES 30000000 /* each start tag's attributes, squared, summed over the page */
#define MAX_FORMATTING 256       /* the list of active formatting elements, markers included */
#define PUSH_BUDGET_FREE 4096    /* elements opened beyond one per two bytes of HTML (re-opened formatting) */

typedef struct {
    lxb_html_tokenizer_token_f inner;
    void *inner_ctx;
    lxb_html_tree_t *tree;
    size_t opened, max_opened;   /* elements pushed on the stack of open elements, and the bound */
    size_t depth_sum, max_depth_sum; /* their depths summed, and its bound (0: none) */
    size_t start_tags, max_elements; /* start tags, and a bound on them + opened (0: none) */
    size_t attribute_squares;    /* each token's attributes, squared, summed */
    size_t merged_attrs[2];      /* attributes the <html> and the <body> start tags carried */
    const char *too_complex;     /* why the page was refused, or NULL */
} guard_t;

static lxb_html_token_t *guard_token(lxb_html_tokenizer_t *tkz, lxb_html_token_t *token, void *ctx) {
    guard_t *g = ctx;
    size_t attrs = 0;
    for (lxb_html_token_attr_t *a = token->attr_first; a; a = a->next) {
        if (++attrs > MAX_ATTRIBUTES) {
            g->too_complex = "an element has more than " STR(MAX_ATTRIBUTES) " attributes";
            goto stop;
        }
    }
    g->attribute_squares += attrs * attrs;
    if ((token->tag_id == LXB_TAG_HTML || token->tag_id == LXB_TAG_BODY) && !(token->type & LXB_HTML_TOKEN_TYPE_CLOSE)) {
        /* a repeated <html> or <body> adds its attributes to the one element, each compared with its own */
        size_t *merged = &g->merged_attrs[token->tag_id == LXB_TAG_BODY];
        g->attribute_squares += attrs * *merged;
        *merged += attrs;
    }
    if (g->attribute_squares > MAX_ATTRIBUTE_SQUARES) {
        g->too_complex = "more attributes than the page's budget (each element's number of attributes, squared, "
                         "summed over the page, over " STR(MAX_ATTRIBUTE_SQUARES) ")";
        goto stop;
    }
    if (token->tag_id >= LXB_TAG_A && !(token->type & LXB_HTML_TOKEN_TYPE_CLOSE)) g->start_tags++;
    size_t before = g->tree->open_elements->length;
    token = g->inner(tkz, token, g->inner_ctx);
    if (!token) return NULL;
    size_t after = g->tree->open_elements->length;
    if (after > before) {
        g->opened += after - before;
        g->depth_sum += (before + 1 + after) * (after - before) / 2;
    }
    if (after > MAX_OPEN_ELEMENTS)
        g->too_complex = "more than " STR(MAX_OPEN_ELEMENTS) " elements nested";
    else if (g->tree->active_formatting->length > MAX_FORMATTING)
        g->too_complex = "more than " STR(MAX_FORMATTING) " formatting elements open";
    else if (g->opened > g->max_opened)
        g->too_complex = "more elements than the HTML's size allows (formatting elements re-opened)";
    else if (g->max_depth_sum && g->depth_sum > g->max_depth_sum)
        g->too_complex = "elements nested too deep for resiliparse";
    else if (g->max_elements && g->start_tags + g->opened > g->max_elements)
        g->too_complex = "too many elements for resiliparse";
    else
        return token;
stop:
    tkz->status = LXB_STATUS_STOPPED;
    return NULL;
}

/* Parse data into st->doc under the bounds; *too_complex says which one stopped it. 0, or -1 when lexbor
 * failed (out of memory). */
static int parse_bounded(state_t *st, const char *data, size_t n, size_t max_depth_sum, size_t max_elements,
                         const char **too_complex) {
    lxb_html_document_t *doc = st->doc;
    lxb_html_document_clean(doc);
    /* clean() keeps the last page's quirks mode, which changes how the next page parses */
    doc->dom_document.compat_mode = LXB_DOM_DOCUMENT_CMODE_NO_QUIRKS;
    if (lxb_html_document_parse_chunk_begin(doc) != LXB_STATUS_OK) return -1;
    lxb_html_parser_t *parser = doc->dom_document.parser;
    lxb_html_tokenizer_t *tkz = parser->tkz;
    guard_t g = {tkz->callback_token_done, tkz->callback_token_ctx, parser->tree, 0, n / 2 + PUSH_BUDGET_FREE,
                 0, max_depth_sum, 0, max_elements, 0, {0, 0}, NULL};
    lxb_html_tokenizer_callback_token_done_set(tkz, guard_token, &g);
    lxb_status_t status = lxb_html_document_parse_chunk(doc, (const lxb_char_t *)data, n);
    if (status == LXB_STATUS_OK) status = lxb_html_document_parse_chunk_end(doc);
    lxb_html_tokenizer_callback_token_done_set(tkz, g.inner, g.inner_ctx);
    *too_complex = g.too_complex;
    return g.too_complex || status == LXB_STATUS_OK ? 0 : -1;
}

/* --- Python ----------------------------------------------------------------------------------- */
static PyObject *PageTooComplex;

/* The strip tags into tags[MAX_STRIP_TAGS]: their number, or -1 with a Python error. */
static Py_ssize_t read_tags(PyObject *tags_obj, name_t *tags) {
    Py_ssize_t ntags = PyTuple_GET_SIZE(tags_obj);
    if (ntags > MAX_STRIP_TAGS) {
        PyErr_Format(PyExc_ValueError, "at most %d strip tags, not %zd", MAX_STRIP_TAGS, ntags);
        return -1;
    }
    for (Py_ssize_t i = 0; i < ntags; i++) {
        PyObject *t = PyTuple_GET_ITEM(tags_obj, i);
        if (!PyUnicode_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "strip tags must be str");
            return -1;
        }
        tags[i].name = PyUnicode_AsUTF8AndSize(t, (Py_ssize_t *)&tags[i].len);
        if (!tags[i].name) return -1;
    }
    return ntags;
}

/* The page as UTF-8; lone surrogates replaced, as a browser would (*encoded then holds the bytes). */
static const char *utf8_of(PyObject *html, Py_ssize_t *n, PyObject **encoded) {
    const char *data = PyUnicode_AsUTF8AndSize(html, n);
    if (data) return data;
    PyErr_Clear();
    *encoded = PyUnicode_AsEncodedString(html, "utf-8", "replace");
    if (!*encoded) return NULL;
    *n = PyBytes_GET_SIZE(*encoded);
    return PyBytes_AS_STRING(*encoded);
}

typedef struct {
    name_t tags[MAX_STRIP_TAGS];
    Py_ssize_t ntags;
    const char *data; /* the page as UTF-8, n bytes, held by the str or by encoded */
    Py_ssize_t n;
    PyObject *encoded;
} page_args_t;

/* An entry point's page and strip tags read, and this thread's state with a document: the state, or NULL
 * with a Python error (and nothing to release). */
static state_t *begin_page(PyObject *html, PyObject *tags_obj, page_args_t *a) {
    a->encoded = NULL;
    if ((a->ntags = read_tags(tags_obj, a->tags)) < 0) return NULL;
    if (!(a->data = utf8_of(html, &a->n, &a->encoded))) return NULL;
    state_t *st = get_state();
    if (st && !st->doc && !(st->doc = lxb_html_document_create())) { /* the last huge page's re-create failed */
        PyErr_NoMemory();
        st = NULL;
    }
    if (!st) Py_CLEAR(a->encoded);
    return st;
}

static PyObject *extract(PyObject *self, PyObject *args) {
    PyObject *html, *tags_obj;
    int main_mode;
    int comments = 1;
    Py_ssize_t min_words, max_depth_sum = 0, max_elements = 0, max_names = 0;
    if (!PyArg_ParseTuple(args, "UpO!n|nnnp", &html, &main_mode, &PyTuple_Type, &tags_obj, &min_words, &max_depth_sum,
                          &max_elements, &max_names, &comments))
        return NULL;
    page_args_t a;
    state_t *st = begin_page(html, tags_obj, &a);
    if (!st) return NULL;
    const name_t *tags = a.tags;
    Py_ssize_t ntags = a.ntags, n = a.n;
    const char *data = a.data;
    PyObject *encoded = a.encoded;
    int failed = 0;
    Py_ssize_t words = 0, main_words = -1;
    size_t text_len = 0;
    const char *too_complex = NULL;
    Py_BEGIN_ALLOW_THREADS
    st->raw.n = st->out.n = 0;
    st->nsums = 0;
    st->rule_bytes = 0;
    st->oom = 0;
    st->drop_comments = !comments;
    if (parse_bounded(st, data, (size_t)n, max_depth_sum > 0 ? (size_t)max_depth_sum : 0,
                      max_elements > 0 ? (size_t)max_elements : 0, &too_complex) != 0) {
        failed = 1;
    } else if (!too_complex && max_names > 0 &&
               lexbor_hash_entries_count(st->doc->dom_document.tags) +
                       lexbor_hash_entries_count(st->doc->dom_document.attrs) >
                   (size_t)max_names) {
        /* the names HTML does not define, each kept once in the document's tables */
        too_complex = "too many distinct tag and attribute names for resiliparse";
    } else if (!too_complex) {
        lxb_dom_node_t *body = lxb_dom_interface_node(lxb_html_document_body_element(st->doc));
        if (body) {
            if (main_mode) {
                failed = walk_main(st, body, st->doc->dom_document.compat_mode == LXB_DOM_DOCUMENT_CMODE_QUIRKS) != 0;
                if (st->rule_bytes > MAX_RULE_BYTES)
                    too_complex = "more distinct class, id and style values than the page's budget of pattern matching";
                if (!failed && !too_complex) words = collapse_into(&st->out, st->raw.p ? st->raw.p : "", st->raw.n);
                main_words = words;
                if (!failed && !too_complex && words >= 0 && words < min_words) { /* no main content found: strip instead */
                    st->raw.n = st->out.n = 0;
                    main_mode = 0;
                }
            }
            if (!failed && !too_complex && !main_mode) {
                failed = walk_strip(st, body, tags, (size_t)ntags) != 0;
                if (!failed) words = collapse_into(&st->out, st->raw.p ? st->raw.p : "", st->raw.n);
            }
            if (words < 0 || st->oom) failed = 1;
        }
        text_len = st->out.n;
        size_t tlen = 0;
        const lxb_char_t *title = failed ? NULL : lxb_html_document_title(st->doc, &tlen);
        if (title && tlen && collapse_into(&st->out, (const char *)title, tlen) < 0) failed = 1;
    }
    Py_END_ALLOW_THREADS
    Py_XDECREF(encoded);
    PyObject *result = NULL;
    if (failed) {
        PyErr_NoMemory();
    } else if (too_complex) {
        PyErr_SetString(PageTooComplex, too_complex);
    } else {
        const char *p = st->out.p ? st->out.p : "";
        PyObject *text = PyUnicode_DecodeUTF8(p, (Py_ssize_t)text_len, "replace");
        PyObject *title = text ? PyUnicode_DecodeUTF8(p + text_len, (Py_ssize_t)(st->out.n - text_len), "replace") : NULL;
        if (title) result = Py_BuildValue("(OOn)", text, title, main_words >= 0 ? main_words : words);
        Py_XDECREF(text);
        Py_XDECREF(title);
    }
    if (st->cap_sums > (1u << 16)) {
        free(st->sums);
        st->sums = NULL;
        st->cap_sums = st->nsums = 0;
    }
    /* a huge page, or one of very many tag or attribute names (lexbor's name tables keep their size, and
     * each page clears them): give its memory back */
    if ((size_t)n > (4u << 20) || st->doc->dom_document.tags->table_size > (1u << 16) ||
        st->doc->dom_document.attrs->table_size > (1u << 16)) {
        lxb_html_document_destroy(st->doc);
        st->doc = lxb_html_document_create(); /* NULL when out of memory: the next call tries again */
    }
    buf_trim(&st->raw);
    buf_trim(&st->out);
    return result;
}

/* The elements named in strip_tags, in document order, outside one another: [(tag, text)], the text of each
 * (its text nodes space-separated, collapsed) but for <script> and <style>, whose text is "". */
static PyObject *stripped_parts(PyObject *self, PyObject *args) {
    PyObject *html, *tags_obj;
    if (!PyArg_ParseTuple(args, "UO!", &html, &PyTuple_Type, &tags_obj)) return NULL;
    page_args_t a;
    state_t *st = begin_page(html, tags_obj, &a);
    if (!st) return NULL;
    const name_t *tags = a.tags;
    Py_ssize_t ntags = a.ntags;
    const char *too_complex = NULL;
    int failed = parse_bounded(st, a.data, (size_t)a.n, 0, 0, &too_complex);
    Py_XDECREF(a.encoded);
    if (failed) return PyErr_NoMemory();
    if (too_complex) {
        PyErr_SetString(PageTooComplex, too_complex);
        return NULL;
    }
    PyObject *parts = PyList_New(0);
    lxb_dom_node_t *top = lxb_dom_interface_node(st->doc);
    for (lxb_dom_node_t *e = top->first_child; parts && e;) {
        size_t len;
        const lxb_char_t *name = e->type == LXB_DOM_NODE_TYPE_ELEMENT
            ? lxb_dom_element_local_name(lxb_dom_interface_element(e), &len) : NULL;
        size_t i = 0;
        while (name && i < (size_t)ntags && !(tags[i].len == len && strncasecmp(tags[i].name, (const char *)name, len) == 0))
            i++;
        if (!name || i == (size_t)ntags) {
            e = subtree_next(top, e, 1);
            continue;
        }
        st->raw.n = st->out.n = 0;
        int bad = 0;
        if (e->local_name != LXB_TAG_SCRIPT && e->local_name != LXB_TAG_STYLE) {
            for (lxb_dom_node_t *t = e->first_child; t && !bad; t = subtree_next(e, t, 1)) {
                if (t->type != LXB_DOM_NODE_TYPE_TEXT) continue;
                lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(t);
                bad = buf_put(&st->raw, cd->data.data, cd->data.length) || buf_put(&st->raw, " ", 1);
            }
            bad = bad || collapse_into(&st->out, st->raw.p ? st->raw.p : "", st->raw.n) < 0;
        }
        PyObject *tag = bad ? PyErr_NoMemory() : PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)len, "replace");
        PyObject *text = tag ? PyUnicode_DecodeUTF8(st->out.p ? st->out.p : "", (Py_ssize_t)st->out.n, "replace") : NULL;
        PyObject *item = text ? PyTuple_Pack(2, tag, text) : NULL;
        if (!item || PyList_Append(parts, item) < 0) Py_CLEAR(parts);
        Py_XDECREF(tag);
        Py_XDECREF(text);
        Py_XDECREF(item);
        e = subtree_next(top, e, 0);
    }
    buf_trim(&st->raw);
    buf_trim(&st->out);
    return parts;
}

static PyObject *collapse(PyObject *self, PyObject *arg) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!s) return NULL;
    buf_t b = {0};
    if (collapse_into(&b, s, (size_t)n) < 0) {
        free(b.p);
        return PyErr_NoMemory();
    }
    PyObject *r = PyUnicode_DecodeUTF8(b.p ? b.p : "", (Py_ssize_t)b.n, "strict");
    free(b.p);
    return r;
}

/* For tests: the pattern verdicts on (class, id, style) as a bit mask, in PATTERNS' order. */
static PyObject *rule_flags(PyObject *self, PyObject *args) {
    const char *cls, *id, *style;
    Py_ssize_t ncls, nid, nstyle;
    if (!PyArg_ParseTuple(args, "s#s#s#", &cls, &ncls, &id, &nid, &style, &nstyle)) return NULL;
    state_t *st = get_state();
    if (!st) return NULL;
    st->rule_bytes = 0;
    uint32_t mask = verdicts(st, 0, (sv_t){cls, (size_t)ncls}, (sv_t){id, (size_t)nid});
    mask |= verdicts(st, 1, (sv_t){style, (size_t)nstyle}, EMPTY);
    return PyLong_FromUnsignedLong(mask);
}

/* The MD5 (hex) of a str's UTF-8 and its length in bytes, hashed from CPython's cached UTF-8 form of the str:
 * the form extract and pyarrow read too, so a page is encoded once rather than once more for its hash.
 * UnicodeEncodeError for a lone surrogate, as str.encode("utf-8") raises. */
static PyObject *md5_new, *md5_kwargs; /* hashlib.md5, {"usedforsecurity": False} */
static PyObject *utf8_md5(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "utf8_md5 takes a str, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!p) return NULL;
    if (!md5_new) {
        PyObject *hashlib = PyImport_ImportModule("hashlib");
        md5_new = hashlib ? PyObject_GetAttrString(hashlib, "md5") : NULL;
        Py_XDECREF(hashlib);
        md5_kwargs = md5_new ? Py_BuildValue("{sO}", "usedforsecurity", Py_False) : NULL;
        if (!md5_kwargs) {
            Py_CLEAR(md5_new);
            return NULL;
        }
    }
    /* the view lives only inside this call, while the caller holds the str */
    PyObject *view = PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
    if (!view) return NULL;
    PyObject *args = PyTuple_Pack(1, view);
    Py_DECREF(view);
    if (!args) return NULL;
    PyObject *h = PyObject_Call(md5_new, args, md5_kwargs);
    Py_DECREF(args);
    if (!h) return NULL;
    PyObject *hex = PyObject_CallMethod(h, "hexdigest", NULL);
    Py_DECREF(h);
    if (!hex) return NULL;
    return Py_BuildValue("(Nn)", hex, n);
}

static PyMethodDef methods[] = {
    {"extract", extract, METH_VARARGS,
     "extract(html, main, strip_tags, min_words, max_depth_sum=0, max_elements=0, max_names=0, comments=True) -> "
     "(text, title, main_words): main_words counts the main text's words before any fallback to stripped text; "
     "see the module source for the rules; PageTooComplex over a bound (max_*: tighter ones, 0 for none; "
     "max_names bounds the distinct tag and attribute names HTML does not define); "
     "comments=False leaves reader comment threads out of the main text."},
    {"stripped_parts", stripped_parts, METH_VARARGS,
     "stripped_parts(html, strip_tags) -> [(tag, text)]: the elements that strip mode removes, outermost first."},
    {"collapse", collapse, METH_O, "collapse(s) -> ' '.join(s.split()), as extract collapses its text."},
    {"utf8_md5", utf8_md5, METH_O,
     "utf8_md5(s) -> (md5 hex digest, length) of s's UTF-8, hashed from the str's cached UTF-8 form."},
    {"rule_flags", rule_flags, METH_VARARGS, "rule_flags(cls, id, style) -> int: the class/id/style pattern verdicts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "neardup._html", NULL, -1, methods};

PyMODINIT_FUNC PyInit__html(void) {
    if (pthread_key_create(&state_key, state_free) != 0) return PyErr_NoMemory();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *patterns = PyTuple_New(N_RE);
    for (int i = 0; patterns && i < N_RE; i++) {
        PyObject *item = Py_BuildValue("(sO)", PATTERNS[i].pattern, PATTERNS[i].icase ? Py_True : Py_False);
        if (!item) Py_CLEAR(patterns);
        else PyTuple_SET_ITEM(patterns, i, item);
    }
    if (!patterns || PyModule_AddObject(m, "PATTERNS", patterns) < 0) {
        Py_XDECREF(patterns);
        Py_DECREF(m);
        return NULL;
    }
    PageTooComplex = PyErr_NewExceptionWithDoc("neardup._html.PageTooComplex",
        "The page is over one of the parser's bounds (nesting, attributes, formatting elements); the message "
        "says which.", PyExc_ValueError, NULL);
    if (!PageTooComplex || PyModule_AddObjectRef(m, "PageTooComplex", PageTooComplex) < 0 ||
        PyModule_AddIntConstant(m, "MAX_STRIP_TAGS", MAX_STRIP_TAGS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_OPEN_ELEMENTS", MAX_OPEN_ELEMENTS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_ATTRIBUTES", MAX_ATTRIBUTES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_ATTRIBUTE_SQUARES", MAX_ATTRIBUTE_SQUARES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RULE_VALUE_BYTES", MAX_RULE_VALUE_BYTES) < 0 ||
        PyModule_AddIntConstant(m, "RULE_EVAL_BYTES", RULE_EVAL_BYTES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RULE_BYTES", MAX_RULE_BYTES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
