/* What main-content extraction could cost in C: parse with lexbor, walk <body>, skip subtrees by tag and by
 * class/id tokens, collect the text. An experiment for bench/lexbor_probe.py, not part of neardup: the rules
 * are a crude 30-word stand-in for resiliparse's, enough to time the walk and to see how close the text comes.
 *
 *   probe PAGES.bin [reuse] [OUT.bin]    PAGES.bin: (uint32 length, UTF-8 bytes) per page
 *
 * Prints CPU ms per page (best of 3 passes). With "reuse", one lexbor document is cleaned and reused for
 * every page instead of created and destroyed per page. OUT.bin gets each page's text, framed the same way.
 */
#include <lexbor/html/html.h>
#include <lexbor/dom/dom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *BAD[] = {"nav","navbar","navigation","menu","footer","sidebar","ad","ads","advert","banner",
  "social","share","sharing","comment","comments","related","recommended","promo","promoted","cookie","consent",
  "breadcrumb","breadcrumbs","popup","modal","newsletter","subscribe","search","widget","sponsored","login",NULL};

static int bad_token(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i]==' '||s[i]=='\t'||s[i]=='\n'||s[i]=='-'||s[i]=='_')) i++;
        size_t j = i;
        while (j < n && !(s[j]==' '||s[j]=='\t'||s[j]=='\n'||s[j]=='-'||s[j]=='_')) j++;
        if (j > i) for (const char **b = BAD; *b; b++) if (strlen(*b)==j-i && memcmp(*b, s+i, j-i)==0) return 1;
        i = j;
    }
    return 0;
}

static int skip(lxb_dom_node_t *node, size_t depth) {
    if (node->type != LXB_DOM_NODE_TYPE_ELEMENT) return 0;
    switch (node->local_name) {
    case LXB_TAG_SCRIPT: case LXB_TAG_STYLE: case LXB_TAG_NOSCRIPT: case LXB_TAG_IFRAME: case LXB_TAG_TEMPLATE:
    case LXB_TAG_SVG: case LXB_TAG_NAV: case LXB_TAG_ASIDE: case LXB_TAG_INPUT: case LXB_TAG_BUTTON:
    case LXB_TAG_SELECT: case LXB_TAG_OPTION: case LXB_TAG_LABEL: case LXB_TAG_TEXTAREA: case LXB_TAG_FIGURE:
    case LXB_TAG_AUDIO: case LXB_TAG_VIDEO: case LXB_TAG_TIME: return 1;
    case LXB_TAG_FOOTER: case LXB_TAG_HEADER: if (depth < 3) return 1; break;
    default: break;
    }
    lxb_dom_element_t *el = lxb_dom_interface_element(node);
    size_t len;
    if (el->attr_class) { const lxb_char_t *v = lxb_dom_attr_value(el->attr_class, &len); if (v && bad_token(v, len)) return 1; }
    if (el->attr_id) { const lxb_char_t *v = lxb_dom_attr_value(el->attr_id, &len); if (v && bad_token(v, len)) return 1; }
    if (lxb_dom_element_has_attribute(el, (const lxb_char_t*)"hidden", 6)) return 1;
    return 0;
}

/* The text of <body> under the probe's rules, space-separated text nodes, into `out`; returns its length. */
static size_t walk_body(lxb_html_document_t *doc, char *out) {
    lxb_dom_node_t *root = lxb_dom_interface_node(lxb_html_document_body_element(doc));
    if (!root) return 0;
    size_t depth = 0, o = 0; lxb_dom_node_t *node = root->first_child;
    while (node) {
        int descend = 0;
        if (node->type == LXB_DOM_NODE_TYPE_TEXT) {
            lxb_dom_character_data_t *cd = lxb_dom_interface_character_data(node);
            memcpy(out + o, cd->data.data, cd->data.length); o += cd->data.length; out[o++] = ' ';
        } else if (node->type == LXB_DOM_NODE_TYPE_ELEMENT && !skip(node, depth + 1)) descend = 1;
        if (descend && node->first_child) { node = node->first_child; depth++; continue; }
        while (node && node != root && !node->next) { node = node->parent; depth--; }
        if (!node || node == root) break;
        node = node->next;
    }
    return o;
}

/* For bench/lexbor_probe.py --quality (ctypes): "title\0text" of one page into `out` (room for 2 x n + 64
 * bytes: text nodes plus a separator each cannot exceed the input), one document reused across calls. */
size_t probe_extract(const unsigned char *html, size_t n, char *out) {
    static lxb_html_document_t *doc = NULL;
    if (!doc) doc = lxb_html_document_create(); else lxb_html_document_clean(doc);
    lxb_html_document_parse(doc, html, n);
    size_t tlen = 0;
    const lxb_char_t *title = lxb_html_document_title(doc, &tlen);
    if (title) memcpy(out, title, tlen);
    out[tlen] = 0;
    return tlen + 1 + walk_body(doc, out + tlen + 1);
}

#ifndef PROBE_LIB
int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: probe PAGES.bin [reuse] [OUT.bin]\n"); return 2; }
    FILE *f = fopen(argv[1], "rb"); if (!f) { perror(argv[1]); return 2; }
    fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(sz);
    if (fread(buf, 1, sz, f) != (size_t)sz) { perror("read"); return 2; }
    fclose(f);
    int reuse = argc > 2 && strcmp(argv[2], "reuse") == 0;
    char *out = malloc(1 << 24);
    FILE *dump = argc > 3 ? fopen(argv[3], "wb") : NULL;
    for (int rep = 0; rep < 3; rep++) {
        size_t total = 0; int pages = 0; long off = 0;
        struct timespec t0, t1; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        lxb_html_document_t *doc = lxb_html_document_create();
        while (off < sz) {
            unsigned int n; memcpy(&n, buf + off, 4); off += 4;
            if (reuse) lxb_html_document_clean(doc); else { lxb_html_document_destroy(doc); doc = lxb_html_document_create(); }
            lxb_html_document_parse(doc, buf + off, n); off += n; pages++;
            size_t o = walk_body(doc, out);
            total += o;
            if (rep == 0 && dump) { unsigned int oo = o; fwrite(&oo, 4, 1, dump); fwrite(out, 1, o, dump); }
        }
        lxb_html_document_destroy(doc);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        double ms = ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / pages;
        printf("%s: %d pages, %.4f CPU-ms/page, avg text %zu bytes\n", reuse ? "reuse doc" : "new doc", pages, ms, total / pages);
    }
    if (dump) fclose(dump);
    return 0;
}
#endif
