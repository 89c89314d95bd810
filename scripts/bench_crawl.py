#!/usr/bin/env python3
"""The 16 KB bench crawl: a deterministic SYNTHETIC multi-site web-crawl dump generator (stdlib only).

    python scripts/make_sample.py --profile bench --pages N --seed S --out crawl.jsonl.gz --truth truth.csv
    python scripts/bench_crawl.py --pages N --seed S --out crawl.jsonl.gz [--truth truth.csv]
                         [--gold gold.jsonl.gz] [--compresslevel 1]

The crawl of the README's speed figures at 100k and 1M pages (bench/bench.py generates and caches it):
fast at large page counts, constant memory. Its bytes equal those of the team's earlier `make_crawl.py` for
the same --pages and --seed, so the figures measured on that tool's crawls hold for this one.

Output: gzip JSON-lines, one record per line:
    {"url": str, "html": str, "fetched_at": ISO-8601 str, "status": int}

--truth writes a CSV header `url,true_cluster,kind` then ONE ROW PER RECORD, in
record order (row i describes line i; the same url can appear twice, e.g. a
re-fetch).  true_cluster groups records whose *content* is the same document:
  kind = original            first fetch of a document (cluster c<docid>)
         utm_mirror          same page, tracking query string appended
         scheme_twin         http:// vs https:// twin
         www_twin            www. vs bare host twin
         trailing_slash      path with/without trailing slash
         refetch_noise       same url re-fetched; only token/timestamp/banner/etc differ
         exact_refetch       same url re-fetched, byte-identical html (CDN cache hit)
         stale_recrawl       same url, small real edit (price change / one sentence)
         regional_mirror     store page on de./fr./uk. subdomain, same SKU, local currency
         syndicated          article re-published on another site's template + attribution
         print_version       printer-friendly rendering (?print=1 or /print/ path)
         pagination_artifact ?page=1 of a listing / single-page article
         degenerate_access_denied | degenerate_loading | degenerate_soft404
                             content-free pages (~2%); cluster deg-<type> (one per type):
                             a pipeline should DROP these rather than keep one per cluster.
Product siblings (same site + product family) share a long spec-table skeleton and
the site's shipping/returns text but have different descriptions: they are NOT
duplicates (distinct clusters) and form the main hard-negative set.

--gold (optional, extra) writes {"url", "text"} lines with the true main-content
text of each record (empty for degenerate pages), for extractor-quality checks.

Everything is a pure function of --seed (and --pages): the same arguments give a
byte-identical output, whatever --jobs is.  Memory is constant in --pages (~130 MB
RSS at 300k pages): every document's content is regenerated from its own
per-document seed, so duplicates need no stored state.

Output gzip is multi-member (one member per 200 records, compressed in the worker
processes); gzip/zcat, Python's gzip, pandas and DuckDB read it as one stream.
Throughput on the 2-core box: ~2,000-2,700 pages/s with --jobs 2 (default), ~1,400-2,100
with --jobs 1 (host contention moves these a lot); avg HTML ~16 KB, ~5.6 KB gzipped.

Mix (seed 42, 50k): ~83% originals (products ~38%, articles ~37%, docs ~9%,
listings ~16% of them), ~15% duplicate variants, ~2% degenerate; ~17% of records
are redundant (records - clusters).  Sites: 14-26, ~60% semantic-HTML templates
(<header>/<nav>/<aside>/<footer>), ~40% div-soup templates (id="header" ...), so
tag-based boilerplate stripping leaks on the latter -- deliberately.
"""

import argparse
import bisect
import contextlib
import csv
import datetime as _dt
import gc
import gzip
import itertools
import json
import os
import random
import sys
import time
from operator import itemgetter

# ----------------------------------------------------------------------------
# vocabulary (Zipfian): real function words at the head, pseudo-words after
# ----------------------------------------------------------------------------
FUNCTION_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "been",
    "one",
    "all",
    "we",
    "their",
    "has",
    "would",
    "when",
    "if",
    "more",
    "no",
    "out",
    "so",
    "said",
    "what",
    "up",
    "its",
    "about",
    "into",
    "than",
    "them",
    "can",
    "only",
    "other",
    "new",
    "some",
    "could",
    "time",
    "these",
    "two",
    "may",
    "then",
    "do",
    "first",
    "any",
    "my",
    "now",
    "such",
    "like",
    "our",
    "over",
    "man",
    "me",
    "even",
    "most",
    "made",
    "after",
    "also",
    "did",
    "many",
    "before",
    "must",
    "through",
    "back",
    "years",
    "where",
    "much",
    "your",
    "way",
    "well",
    "down",
    "should",
    "because",
    "each",
    "just",
    "those",
    "people",
    "how",
    "too",
    "little",
    "state",
    "good",
    "very",
    "make",
    "world",
    "still",
    "own",
    "see",
    "men",
    "work",
    "long",
    "get",
    "here",
    "between",
    "both",
    "life",
    "being",
    "under",
    "never",
    "day",
    "same",
    "another",
    "know",
    "while",
    "last",
    "might",
    "us",
    "great",
    "old",
    "year",
    "off",
    "come",
    "since",
    "against",
    "go",
    "came",
    "right",
    "used",
    "take",
    "three",
]

ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "br",
    "cr",
    "dr",
    "fr",
    "gr",
    "pr",
    "tr",
    "bl",
    "cl",
    "fl",
    "pl",
    "sl",
    "st",
    "sp",
    "sc",
    "sk",
    "sm",
    "sn",
    "sw",
    "th",
    "sh",
    "ch",
    "wh",
    "qu",
    "",
    "",
    "",
]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "u", "ea", "ou", "ai", "y", "oo"]
CODAS = [
    "",
    "",
    "",
    "",
    "",
    "",
    "n",
    "r",
    "s",
    "t",
    "l",
    "m",
    "n",
    "r",
    "s",
    "t",
    "nd",
    "nt",
    "st",
    "ck",
    "ng",
    "rd",
    "ll",
    "ss",
    "x",
    "th",
    "sh",
    "ct",
    "mp",
]
SUFFIXES = ["", "", "", "", "", "", "ing", "ed", "er", "ly", "tion", "ment", "ness", "al", "s", "es", "s"]


def _build_vocab(n=40000, seed=1234567):
    rng = random.Random(seed)
    seen = set(FUNCTION_WORDS)
    words = list(FUNCTION_WORDS)
    while len(words) < n:
        # shorter words are more frequent: draw syllable count by rank bucket
        frac = len(words) / n
        nsyl = 1 + (rng.random() < 0.35 + 0.5 * frac) + (rng.random() < 0.35 * frac)
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(nsyl))
        if rng.random() < 0.35:
            w += rng.choice(SUFFIXES)
        if 2 <= len(w) <= 14 and w not in seen:
            seen.add(w)
            words.append(w)
    return words


VOCAB = _build_vocab()
# Zipf-Mandelbrot sampling by 16-bit table lookup (C-speed gather, cache-resident
# tables): HEAD_TABLE holds ranks < HEAD_N in proportion to their mass; a share of
# positions equal to the tail's mass is then overwritten from TAIL_TABLE (ranks
# >= HEAD_N, also mass-proportional, every tail word at least one slot).
HEAD_N = 2500
_p = [1.0 / (_r + 2.7) ** 1.07 for _r in range(len(VOCAB))]
TAIL_MASS = sum(_p[HEAD_N:]) / sum(_p)


def _table(ws, ps, size=1 << 16):
    sc = size / sum(ps)
    t = []
    for w_, p_ in zip(ws, ps, strict=True):
        t.extend([w_] * max(1, int(p_ * sc + 0.5)))
    while len(t) < size:
        t.extend(t[: size - len(t)])
    return t[:size]


HEAD_TABLE = _table(VOCAB[:HEAD_N], _p[:HEAD_N])
_tail_floor = sum(_p[HEAD_N:]) / (1 << 16)
TAIL_TABLE = _table(VOCAB[HEAD_N:], [max(x, _tail_floor) for x in _p[HEAD_N:]])
TAIL_STRIDE = max(2, int(round(1.0 / TAIL_MASS)))
del _p
_MASK_HI4 = bytes(b & 0x0F for b in range(256))
# topics: 60 topic lexicons of 400 mid-frequency words each (own Zipf inside)
_trng = random.Random(99)
TOPICS = [_trng.sample(VOCAB[2000:30000], 400) for _ in range(60)]
_tp = [1.0 / (r + 1) ** 0.9 for r in range(400)]
_ts = 4096 / sum(_tp)
TOPIC_RANKS = []
for _r in range(400):
    TOPIC_RANKS.extend([_r] * max(1, int(_tp[_r] * _ts + 0.5)))
TOPIC_RANKS = (TOPIC_RANKS * 2)[:4096]
TOPIC_TABLES = [[t[r] for r in TOPIC_RANKS] for t in TOPICS]  # 60 x 4096 refs
TOPIC_ID = {id(t): k for k, t in enumerate(TOPICS)}


gc.freeze()  # big static tables: keep them out of every GC pass


def _draw(rng, table, n, bits):
    """n draws from a 2**bits lookup table (bits in (12, 16)), stdlib only."""
    if n <= 0:
        return []
    if bits == 16:
        idx = memoryview(rng.randbytes(2 * n)).cast("H")
    else:
        b = bytearray(rng.randbytes(2 * n))
        b[1::2] = b[1::2].translate(_MASK_HI4)
        idx = memoryview(b).cast("H")
    if n == 1:
        return [table[idx[0]]]
    return list(itemgetter(*idx)(table))


SPEC_LABELS = [
    "Brand",
    "Model",
    "Model number",
    "Colour",
    "Material",
    "Weight",
    "Dimensions",
    "Height",
    "Width",
    "Depth",
    "Capacity",
    "Power",
    "Voltage",
    "Battery",
    "Battery life",
    "Charging time",
    "Connectivity",
    "Bluetooth version",
    "Wi-Fi",
    "Display",
    "Resolution",
    "Refresh rate",
    "Processor",
    "Memory",
    "Storage",
    "Operating system",
    "Ports",
    "Water resistance",
    "Warranty",
    "Country of origin",
    "Certifications",
    "In the box",
    "Care instructions",
    "Noise level",
    "Max load",
    "Temperature range",
    "Frame",
    "Finish",
    "Assembly required",
    "Recommended age",
    "Energy class",
    "Speed",
    "Sensor",
    "Lens",
    "Zoom",
    "Frequency response",
    "Impedance",
    "Driver size",
    "Cable length",
    "Mounting",
    "Compatibility",
    "Fabric",
    "Sole",
    "Closure",
    "Lining",
    "Fit",
    "Season",
    "Pattern",
    "Heel height",
    "Volume",
    "Lid",
    "Handle",
]
COLOURS = [
    "black",
    "white",
    "silver",
    "graphite",
    "navy",
    "red",
    "olive",
    "sand",
    "teal",
    "burgundy",
    "charcoal",
    "ivory",
    "mustard",
    "slate",
    "rose",
]
MATERIALS = [
    "aluminium",
    "stainless steel",
    "ABS plastic",
    "oak",
    "walnut",
    "cotton",
    "recycled polyester",
    "leather",
    "nylon",
    "glass",
    "ceramic",
    "bamboo",
]
BANNER_TEXT = [
    "Free shipping on orders over $50",
    "Spring sale: up to 40% off selected items",
    "Subscribe and save 10% today",
    "New arrivals every Friday",
    "Download our app for exclusive deals",
    "Members get early access to the sale",
    "Limited time: buy one get one half price",
    "Join our newsletter for weekly picks",
    "Gift cards now available",
    "Extended returns through January",
]
REGIONS = {
    "de": ("EUR", "\u20ac", 0.93, "de-DE"),
    "fr": ("EUR", "\u20ac", 0.93, "fr-FR"),
    "uk": ("GBP", "\u00a3", 0.79, "en-GB"),
}
CODE_TOKENS = [
    "def",
    "return",
    "import",
    "class",
    "self",
    "None",
    "True",
    "for",
    "in",
    "if",
    "else",
    "await",
    "async",
    "with",
    "as",
    "yield",
    "lambda",
    "config",
    "client",
    "request",
    "response",
    "options",
    "timeout",
    "retry",
    "buffer",
]


def _mix(*parts):
    """Deterministic 64-bit mix of ints (no salted hash())."""
    h = 0x9E3779B97F4A7C15
    for p in parts:
        h ^= (p + 0x9E3779B97F4A7C15 + ((h << 6) & 0xFFFFFFFFFFFFFFFF) + (h >> 2)) & 0xFFFFFFFFFFFFFFFF
        h = (h * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h


def words(rng, n, topic=None, tstride=4):
    w = _draw(rng, HEAD_TABLE, n, 16)
    if n > TAIL_STRIDE:
        off = int(rng.random() * TAIL_STRIDE)
        w[off::TAIL_STRIDE] = _draw(rng, TAIL_TABLE, len(range(off, n, TAIL_STRIDE)), 16)
    if topic is not None and n > tstride:
        off = int(rng.random() * tstride)
        m = len(range(off, n, tstride))
        w[off::tstride] = _draw(rng, TOPIC_TABLES[TOPIC_ID[id(topic)]], m, 12)
    return w


def _ri(rng, lo, hi):
    """randint(lo, hi) via one random() call (cheaper than randint)."""
    return lo + int(rng.random() * (hi - lo + 1))


def _text(rng, n_words, topic=None, para_lo=2, para_hi=7):
    """Return (list_of_paragraph_strings, list_of_sentence_strings-or-None).

    Words are drawn in bulk, then sentence ends, commas, numbers and paragraph
    breaks are spliced in with a handful of list assignments per sentence."""
    w = words(rng, n_words, topic, 3 + int(rng.random() * 3))
    n = len(w)
    rr = rng.random
    for _ in range(n // 30):  # commas
        k = int(rr() * n)
        w[k] = w[k] + ","
    for _ in range(n // 90):  # numbers
        k = int(rr() * n)
        w[k] = str(int(rr() * 2000))
    paras = []
    i = 0
    start = 0
    sent_in_para = 0
    target = para_lo + int(rr() * (para_hi - para_lo + 1))
    while i < n:
        w[i] = w[i].capitalize()
        e = i + 6 + int(rr() * 14) + int(rr() * 8)
        if e >= n:
            e = n
        last = w[e - 1]
        w[e - 1] = (last[:-1] if last[-1] == "," else last) + ("?" if rr() < 0.04 else ".")
        i = e
        sent_in_para += 1
        if sent_in_para >= target or i >= n:
            paras.append(" ".join(w[start:i]))
            start = i
            sent_in_para = 0
            target = para_lo + int(rr() * (para_hi - para_lo + 1))
    return paras


def sentences(rng, n_words, topic=None):
    """One-sentence-per-item list (used for small edits)."""
    return _text(rng, n_words, topic, 1, 1)


def paragraphs(rng, n_words, topic=None):
    return _text(rng, n_words, topic)


def title_words(rng, topic, k):
    tt = TOPIC_TABLES[TOPIC_ID[id(topic)]]
    gb = rng.getrandbits
    return " ".join([tt[gb(12)].capitalize() for _ in range(k)])


def slugify(s):
    return "-".join(s.lower().split())[:60]


# ----------------------------------------------------------------------------
# sites
# ----------------------------------------------------------------------------
def _name(rng):
    return "".join(
        rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(rng.randint(2, 3))
    )[:12]


def _css(rng, pfx):
    rules = []
    for i in range(rng.randint(45, 80)):
        sel = (
            "."
            + pfx
            + "-"
            + rng.choice(
                [
                    "nav",
                    "card",
                    "grid",
                    "btn",
                    "hero",
                    "meta",
                    "title",
                    "list",
                    "item",
                    "foot",
                    "side",
                    "promo",
                    "tag",
                    "price",
                    "spec",
                ]
            )
            + str(i)
        )
        props = ";".join(
            "%s:%s"
            % (
                rng.choice(
                    [
                        "margin",
                        "padding",
                        "color",
                        "font-size",
                        "line-height",
                        "border",
                        "display",
                        "background",
                        "gap",
                        "flex",
                    ]
                ),
                rng.choice(
                    [
                        "0",
                        "4px 8px",
                        "#%06x" % rng.getrandbits(24),
                        "1.4",
                        "flex",
                        "grid",
                        "1px solid #ddd",
                        "12px",
                        "auto",
                        "none",
                        "inherit",
                    ]
                ),
            )
            for _ in range(rng.randint(2, 5))
        )
        rules.append("%s{%s}" % (sel, props))
    return "\n".join(rules)


class Site:
    def __init__(self, idx, seed, kind):
        rng = random.Random(_mix(seed, 7, idx))
        self.idx, self.kind = idx, kind
        nm = _name(rng)
        self.name = nm.capitalize() + rng.choice(
            ["", " Gear", " Daily", " Times", " Docs", " Outfitters", " Press", " Hub", " Supply"]
        )
        tld = rng.choice([".com", ".com", ".com", ".net", ".org", ".io", ".co.uk"])
        if kind == "store":
            self.domain = nm + tld
            self.base_host = "store." + self.domain if rng.random() < 0.5 else self.domain
        elif kind == "docs":
            self.domain = nm + tld
            self.base_host = "docs." + self.domain
        else:
            self.domain = nm + tld
            self.base_host = self.domain
        self.www = kind != "docs" and not self.base_host.startswith("store.") and rng.random() < 0.6
        self.host = ("www." if self.www else "") + self.base_host
        self.scheme = "https" if rng.random() < 0.92 else "http"
        self.slash = rng.random() < 0.35  # canonical paths end with '/'
        self.semantic = rng.random() < 0.6  # <header>/<nav>/<footer> vs div soup
        self.pfx = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(2))
        r = rng.random()
        self.canon = "none" if r < 0.3 else ("self" if r < 0.9 else "home")  # 'home' = broken
        self.print_style = rng.choice(["query", "path"])
        self.regions = sorted(rng.sample(list(REGIONS), rng.randint(1, 3))) if kind == "store" else []
        self.lang = "en"
        self.topics = rng.sample(range(len(TOPICS)), 8)
        self.families = [(f, rng.choice(self.topics)) for f in range(rng.randint(12, 30))]
        self.categories = [
            title_words(rng, TOPICS[rng.choice(self.topics)], rng.randint(1, 2))
            for _ in range(rng.randint(8, 20))
        ]
        self.banners = rng.sample(BANNER_TEXT, 5)
        # site-wide shared text blocks (boilerplate-in-main for products)
        self.shipping = paragraphs(rng, rng.randint(160, 260), TOPICS[self.topics[0]])
        self.returns = paragraphs(rng, rng.randint(60, 120), TOPICS[self.topics[0]])
        self.author_pool = ["%s %s" % (_name(rng).capitalize(), _name(rng).capitalize()) for _ in range(25)]
        self.related_pool = [
            title_words(rng, TOPICS[rng.choice(self.topics)], rng.randint(3, 6)) for _ in range(60)
        ]
        self._render_static(rng)

    # ---- static template chunks -------------------------------------------
    def _render_static(self, rng):
        p, sem = self.pfx, self.semantic
        tag = (
            (lambda t, c: '<%s class="%s-%s">' % (t, p, c))
            if sem
            else (lambda t, c: '<div id="%s" class="%s-%s">' % (c, p, c))
        )
        end = (lambda t: "</%s>" % t) if sem else (lambda t: "</div>")
        self.tag, self.end = tag, end
        css = _css(rng, p)
        ga = "G-%010X" % rng.getrandbits(40)
        self.head_static = (
            '<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="generator" content="%s">\n<meta name="theme-color" content="#%06x">\n'
            '<link rel="icon" href="/favicon.ico">\n<link rel="preconnect" href="https://cdn.%s">\n'
            '<link rel="stylesheet" href="https://cdn.%s/assets/main.%08x.css">\n'
            "<style>\n%s\n</style>\n"
            '<script async src="https://www.googletagmanager.com/gtag/js?id=%s"></script>\n'
            "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
            'gtag("js",new Date());gtag("config","%s",{"anonymize_ip":true});'
            'window.__SITE__={"id":%d,"env":"prod","features":["search","wishlist","reviews"]};</script>\n'
            % (
                rng.choice(["WordPress 6.4.3", "Shopify", "Hugo 0.121", "Next.js", "Drupal 10", "custom"]),
                rng.getrandbits(24),
                self.domain,
                self.domain,
                rng.getrandbits(32),
                css,
                ga,
                ga,
                self.idx,
            )
        )
        nav_items = [c for c in self.categories] + ["About", "Contact", "Help", "Careers", "Blog"]
        nav = "".join(
            '<li class="%s-nav-item"><a href="/%s%s">%s</a></li>'
            % (p, slugify(c), "/" if self.slash else "", c)
            for c in nav_items
        )
        self.header_pre = (
            '%s<div class="%s-logo"><a href="/"><img src="/static/logo.svg" alt="%s"></a></div>'
            '<form class="%s-search" action="/search"><input type="search" name="q" placeholder="Search %s">'
            '<button type="submit">Search</button></form>%s<ul>%s</ul>%s'
            '<div class="%s-account"><a href="/login">Sign in</a> | <a href="/cart">Cart (0)</a></div>'
            '<div class="%s-promo" role="banner">'
            % (tag("header", "header"), p, self.name, p, self.name, tag("nav", "nav"), nav, end("nav"), p, p)
        )
        self.header_post = "</div>" + end("header") + "\n"
        cols = []
        for c in range(4):
            links = "".join(
                '<li><a href="/%s">%s</a></li>' % (slugify(x), x)
                for x in [title_words(rng, TOPICS[self.topics[c]], 2) for _ in range(rng.randint(5, 9))]
            )
            cols.append(
                '<div class="%s-foot-col"><h4>%s</h4><ul>%s</ul></div>'
                % (p, ["Shop", "Company", "Support", "Legal"][c], links)
            )
        self.footer_pre = (
            '%s%s<div class="%s-newsletter"><p>Sign up for our newsletter and never miss an update.</p>'
            '<input type="email" placeholder="you@example.com"><button>Subscribe</button></div>'
            '<p class="%s-legal">&copy; 2024 %s. All rights reserved. Prices include VAT where applicable. '
            "Use of this site constitutes acceptance of our Terms of Service and Privacy Policy.</p>"
            '<p class="%s-ts">Page generated ' % (tag("footer", "footer"), "".join(cols), p, p, self.name, p)
        )
        self.footer_post = "</p>" + end("footer") + "\n"

    # ---- urls ---------------------------------------------------------------
    def url(self, path, scheme=None, host=None, slash=None):
        if (self.slash if slash is None else slash) and not path.endswith("/"):
            path += "/"
        return "%s://%s%s" % (scheme or self.scheme, host or self.host, path)


# ----------------------------------------------------------------------------
# documents (pure functions of (seed, docid))
# ----------------------------------------------------------------------------
TYPE_BY_SITE = {
    "store": (("product", 0.72), ("listing", 0.2), ("article", 0.08)),
    "news": (("article", 0.82), ("listing", 0.18)),
    "blog": (("article", 0.9), ("listing", 0.1)),
    "docs": (("docs", 0.88), ("article", 0.07), ("listing", 0.05)),
}


class Doc:
    __slots__ = (
        "id",
        "site",
        "type",
        "rng_seed",
        "path",
        "title",
        "family",
        "topic",
        "sku",
        "price",
        "page_no",
        "cat",
    )


class Generator:
    def __init__(self, seed, pages):
        self.seed = seed
        rng = random.Random(_mix(seed, 1))
        n_sites = rng.randint(14, 26)
        kinds = ["store"] * 7 + ["news"] * 5 + ["blog"] * 5 + ["docs"] * 3
        rng.shuffle(kinds)
        self.sites = [Site(i, seed, kinds[i % len(kinds)]) for i in range(n_sites)]
        w = {"store": 1.6, "news": 1.3, "blog": 0.6, "docs": 0.8}
        self.site_cw = list(itertools.accumulate(w[s.kind] for s in self.sites))
        self.pages = pages
        self._fam_cache = {}
        self.t0 = _dt.datetime(2024, 3, 1, 0, 0, 0)
        self.window_s = 30 * 86400

    def doc(self, docid):
        d = Doc()
        d.id = docid
        r = random.Random(_mix(self.seed, 2, docid))
        site = self.sites[bisect.bisect(self.site_cw, r.random() * self.site_cw[-1])]
        d.site = site
        x, acc = r.random(), 0.0
        for t, pr in TYPE_BY_SITE[site.kind]:  # noqa: B007 (t: the type drawn, read after the loop)
            acc += pr
            if x < acc:
                break
        d.type = t
        d.rng_seed = _mix(self.seed, 3, docid)
        d.family = d.topic = d.sku = d.price = d.page_no = d.cat = None
        if t == "product":
            d.family, d.topic = site.families[r.randrange(len(site.families))]
            d.sku = "%s-%06d" % (site.pfx.upper(), docid)
            d.price = round(r.uniform(8, 900), 2) - 0.01 if r.random() < 0.7 else round(r.uniform(8, 900), 2)
            fam = random.Random(_mix(self.seed, 4, site.idx, d.family))
            fname = title_words(fam, TOPICS[d.topic], 2)
            d.title = "%s %s %s" % (site.name.split()[0], title_words(r, TOPICS[d.topic], 1), fname)
            d.path = "/p/%s-%s" % (slugify(d.title), d.sku.lower())
        elif t == "article":
            d.topic = site.topics[r.randrange(len(site.topics))]
            d.title = title_words(r, TOPICS[d.topic], r.randint(4, 9))
            dd = self.t0 - _dt.timedelta(days=r.randint(0, 900))
            d.path = "/%s/%04d/%02d/%s" % (
                "news" if site.kind == "news" else "blog",
                dd.year,
                dd.month,
                slugify(d.title),
            )
        elif t == "docs":
            d.topic = site.topics[r.randrange(len(site.topics))]
            d.title = title_words(r, TOPICS[d.topic], r.randint(2, 5))
            d.path = "/docs/v%d/%s/%s" % (
                r.randint(1, 4),
                slugify(title_words(r, TOPICS[d.topic], 1)),
                slugify(d.title),
            )
        else:
            d.cat = site.categories[r.randrange(len(site.categories))]
            d.page_no = 1 if r.random() < 0.45 else r.randint(2, 12)
            d.topic = site.topics[r.randrange(len(site.topics))]
            d.title = "%s%s" % (d.cat, "" if d.page_no == 1 else " - Page %d" % d.page_no)
            d.path = "/c/%s-%d" % (slugify(d.cat), docid)  # collection id: unique per listing doc
            if d.page_no > 1:
                d.path += "?page=%d" % d.page_no
        return d

    # ---- main-content renderers: return (html_main, plain_text, description) --
    def family_spec(self, site, family, topic):
        key = (site.idx, family)
        spec = self._fam_cache.get(key)
        if spec is None:  # bounded: <= sites x families entries
            fam = random.Random(_mix(self.seed, 9, site.idx, family))
            labels = fam.sample(SPEC_LABELS, fam.randint(26, 40))
            famvals = []
            for _ in labels:
                k = fam.randrange(9)
                famvals.append(
                    fam.choice(COLOURS)
                    if k == 0
                    else fam.choice(MATERIALS)
                    if k == 1
                    else "%d mm" % fam.randint(5, 900)
                    if k == 2
                    else "%d g" % fam.randint(40, 9000)
                    if k == 3
                    else "%d years" % fam.randint(1, 5)
                    if k == 4
                    else title_words(fam, TOPICS[topic], 2)
                    if k == 5
                    else ("Yes", "No", "Included")[k - 6]
                )
            spec = self._fam_cache[key] = (labels, famvals)
        return spec

    def main_product(self, d, edit_rng=None, region=None):
        site = d.site
        r = random.Random(d.rng_seed)
        labels, famvals = self.family_spec(site, d.family, d.topic)
        rows, txt = [], []
        rr = r.random
        tt = TOPIC_TABLES[d.topic]
        for lab, fv in zip(labels, famvals, strict=False):
            x = rr()
            v = (
                fv
                if x < 0.6
                else COLOURS[int(x * 1000) % len(COLOURS)]
                if x < 0.7
                else "%d mm" % (5 + int(rr() * 900))
                if x < 0.8
                else "%s-%d" % (d.sku, 1 + int(rr() * 99))
                if x < 0.9
                else "%s %s" % (tt[r.getrandbits(12)].capitalize(), tt[r.getrandbits(12)])
            )
            rows.append('<tr><th scope="row">%s</th><td>%s</td></tr>' % (lab, v))
            txt.append("%s %s" % (lab, v))
        desc = paragraphs(r, _ri(r, 80, 260), TOPICS[d.topic])
        price = d.price
        cur, sym, fx = "USD", "$", 1.0
        if region:
            cur, sym, fx, _ = REGIONS[region]
        if edit_rng is not None:
            price = round(price * edit_rng.choice([0.8, 0.85, 0.9, 1.05, 1.1, 1.2]), 2)
        p = round(price * fx, 2)
        bw = words(r, 60, TOPICS[d.topic])
        bullets = [
            " ".join(bw[k : k + 4 + (k * 7 + d.id) % 6]).capitalize()
            for k in range(0, 10 * r.randint(3, 6), 10)
        ]
        pfx = site.pfx
        html = (
            '<div class="%s-product" itemscope itemtype="https://schema.org/Product">'
            '<nav class="%s-crumbs"><a href="/">Home</a> &rsaquo; <a href="/c/x">%s</a></nav>'
            '<h1 itemprop="name">%s</h1><div class="%s-sku">SKU: %s</div>'
            '<div class="%s-price" itemprop="price" content="%.2f">%s%.2f <span>%s</span></div>'
            '<div class="%s-stock">In stock</div>'
            '<ul class="%s-bullets">%s</ul>'
            '<section class="%s-desc"><h2>Description</h2>%s</section>'
            '<section class="%s-spec"><h2>Specifications</h2><table class="%s-spec-table"><tbody>%s</tbody></table></section>'
            '<section class="%s-ship"><h2>Shipping &amp; delivery</h2>%s<h3>Returns</h3>%s</section>'
            "</div>"
            % (
                pfx,
                pfx,
                site.categories[d.family % len(site.categories)],
                d.title,
                pfx,
                d.sku,
                pfx,
                p,
                sym,
                p,
                cur,
                pfx,
                pfx,
                "".join("<li>%s</li>" % b for b in bullets),
                pfx,
                "".join("<p>%s</p>" % x for x in desc),
                pfx,
                pfx,
                "".join(rows),
                pfx,
                "".join("<p>%s</p>" % x for x in site.shipping),
                "".join("<p>%s</p>" % x for x in site.returns),
            )
        )
        text = "\n".join(
            [d.title, "SKU: " + d.sku, "%s%.2f %s" % (sym, p, cur)]
            + bullets
            + desc
            + txt
            + site.shipping
            + site.returns
        )
        return html, text, desc[0][:150]

    def main_article(self, d, edit_rng=None, attribution=None):
        site = d.site
        r = random.Random(d.rng_seed)
        paras = paragraphs(r, _ri(r, 300, 1500), TOPICS[d.topic])
        author = site.author_pool[r.randrange(len(site.author_pool))]
        date = (self.t0 - _dt.timedelta(days=r.randint(0, 900))).strftime("%B %d, %Y")
        if edit_rng is not None:
            i = edit_rng.randrange(len(paras))
            extra = sentences(edit_rng, edit_rng.randint(10, 25), TOPICS[d.topic])[0]
            if edit_rng.random() < 0.5:
                paras = paras[:i] + [paras[i] + " " + extra] + paras[i + 1 :]
            else:
                paras = paras[:i] + ["Update: " + extra] + paras[i:]
        subheads = {}
        for k in range(2, len(paras), _ri(r, 3, 6)):
            subheads[k] = title_words(r, TOPICS[d.topic], _ri(r, 2, 5))
        body = []
        for k, ptxt in enumerate(paras):
            if k in subheads:
                body.append("<h2>%s</h2>" % subheads[k])
            body.append("<p>%s</p>" % ptxt)
        att = ""
        if attribution:
            att = (
                '<p class="syndication">This article originally appeared on %s and is republished with permission.</p>'
                % attribution
            )
        pfx = site.pfx
        html = (
            '<article class="%s-article"><h1>%s</h1><div class="%s-byline">By <a rel="author" href="/author/%s">%s</a>'
            " &middot; <time>%s</time></div>%s%s</article>"
            % (pfx, d.title, pfx, slugify(author), author, date, att, "".join(body))
        )
        tparts = [d.title, "By %s \u00b7 %s" % (author, date)]
        if attribution:
            tparts.append(
                "This article originally appeared on %s and is republished with permission." % attribution
            )
        for k, ptxt in enumerate(paras):
            if k in subheads:
                tparts.append(subheads[k])
            tparts.append(ptxt)
        return html, "\n".join(tparts), paras[0][:150]

    def main_docs(self, d, edit_rng=None):
        r = random.Random(d.rng_seed)
        paras = paragraphs(r, _ri(r, 250, 900), TOPICS[d.topic])
        if edit_rng is not None:
            i = edit_rng.randrange(len(paras))
            paras[i] = paras[i] + " " + sentences(edit_rng, edit_rng.randint(8, 20), TOPICS[d.topic])[0]
        body, tparts = [], [d.title]
        for k, ptxt in enumerate(paras):
            if k % 3 == 1:
                h = title_words(r, TOPICS[d.topic], _ri(r, 1, 3))
                body.append('<h2 id="%s">%s</h2>' % (slugify(h), h))
                tparts.append(h)
            body.append("<p>%s</p>" % ptxt)
            tparts.append(ptxt)
            if k % 3 == 2:
                tp = TOPICS[d.topic]
                gb = r.getrandbits
                fn = tp[gb(16) % 400]
                lines = ["def %s(%s, %s):" % (fn, CODE_TOKENS[9 + gb(8) % 16], tp[gb(16) % 400])]
                for _ in range(_ri(r, 3, 9)):
                    lines.append(
                        "    "
                        + " ".join(
                            [
                                CODE_TOKENS[gb(8) % 25] if gb(1) else tp[gb(16) % 400]
                                for _ in range(_ri(r, 2, 6))
                            ]
                        )
                    )
                code = "\n".join(lines)
                body.append('<pre><code class="language-python">%s</code></pre>' % code)
                tparts.append(code)
        html = (
            '<div class="%s-doc"><h1>%s</h1>%s<div class="%s-feedback">Was this page helpful? '
            "<button>Yes</button><button>No</button></div></div>"
            % (d.site.pfx, d.title, "".join(body), d.site.pfx)
        )
        return html, "\n".join(tparts), paras[0][:150]

    def main_listing(self, d, edit_rng=None):
        site = d.site
        r = random.Random(d.rng_seed)
        items, tparts = [], [d.title]
        n = r.randint(18, 36)
        tw = [x.capitalize() for x in _draw(r, TOPIC_TABLES[d.topic], 5 * n, 12)]
        bw = words(r, 35 * n, TOPICS[d.topic])
        rr = r.random
        bpos = 0
        for j in range(n):
            t = " ".join(tw[5 * j : 5 * j + 2 + int(rr() * 4)])
            if site.kind == "store":
                pr = r.uniform(5, 500)
                L = 6 + int(rr() * 9)
                blurb = " ".join(bw[bpos : bpos + L])
                bpos += L
                items.append(
                    '<li class="%s-card"><a href="/p/%s"><img src="/img/%08x.jpg" alt="%s">'
                    '<h3>%s</h3></a><span class="%s-price">$%.2f</span><p>%s</p>'
                    '<span class="%s-rating">%.1f stars</span></li>'
                    % (
                        site.pfx,
                        slugify(t),
                        r.getrandbits(32),
                        t,
                        t,
                        site.pfx,
                        pr,
                        blurb,
                        site.pfx,
                        r.uniform(2.5, 5),
                    )
                )
                tparts += [t, "$%.2f" % pr, blurb]
            else:
                L = 15 + int(rr() * 21)
                blurb = " ".join(bw[bpos : bpos + L])
                bpos += L
                items.append(
                    '<li class="%s-teaser"><h3><a href="/news/%s">%s</a></h3><p>%s</p></li>'
                    % (site.pfx, slugify(t), t, blurb)
                )
                tparts += [t, blurb]
        pages = "".join('<a href="?page=%d">%d</a>' % (k, k) for k in range(1, 13))
        html = (
            '<div class="%s-listing"><h1>%s</h1><p class="%s-count">%d results</p><ul class="%s-grid">%s</ul>'
            '<div class="%s-pager">%s</div></div>'
            % (site.pfx, d.title, site.pfx, n * 12, site.pfx, "".join(items), site.pfx, pages)
        )
        tparts.insert(1, "%d results" % (n * 12))
        return html, "\n".join(tparts), "%s - %d results" % (d.title, n * 12)

    def main(self, d, edit_rng=None, region=None, attribution=None):
        if d.type == "product":
            return self.main_product(d, edit_rng, region)
        if d.type == "article":
            return self.main_article(d, edit_rng, attribution)
        if d.type == "docs":
            return self.main_docs(d, edit_rng)
        return self.main_listing(d, edit_rng)

    # ---- page assembly ----------------------------------------------------
    def page(self, site, d, main_html, desc, nrng, ts, canonical=None, lang="en", hreflang=None, title=None):
        p = site.pfx
        csrf = "%032x" % nrng.getrandbits(128)
        title = title or d.title
        extra = ""
        if canonical:
            extra += '<link rel="canonical" href="%s">\n' % canonical
        if hreflang:
            extra += "".join('<link rel="alternate" hreflang="%s" href="%s">\n' % hl for hl in hreflang)
        ld = json.dumps(
            {
                "@context": "https://schema.org",
                "@type": {"product": "Product", "article": "NewsArticle", "docs": "TechArticle"}.get(
                    d.type, "CollectionPage"
                ),
                "name": title,
                "url": d.path,
                "dateModified": ts,
            },
            separators=(",", ":"),
        )
        gb = nrng.getrandbits
        rp = site.related_pool
        aside_items = "".join(
            ['<li><a href="/r/%d">%s</a></li>' % (gb(17), rp[gb(16) % 60]) for _ in range(6)]
        )
        aside = '%s<h3>%s</h3><ul>%s</ul><div class="%s-ad" data-slot="%08x">Advertisement</div>%s' % (
            site.tag("aside", "sidebar"),
            "Customers also viewed" if d.type == "product" else "Related",
            aside_items,
            p,
            nrng.getrandbits(32),
            site.end("aside"),
        )
        live = ""
        if d.type == "product":
            live = '<div class="%s-live">%d people are viewing this right now</div>' % (p, 2 + gb(6))
        elif d.type == "article":
            live = '<div class="%s-comments">%d comments</div>' % (p, gb(9))
        main_open = (
            '<main id="content" class="%s-main">' % p
            if site.semantic
            else '<div id="content" class="%s-main">' % p
        )
        main_close = "</main>" if site.semantic else "</div>"
        return "".join(
            (
                '<!DOCTYPE html>\n<html lang="%s">\n<head>\n' % lang,
                site.head_static,
                "<title>%s | %s</title>\n" % (title, site.name),
                '<meta name="description" content="%s">\n' % desc.replace('"', ""),
                '<meta property="og:title" content="%s">\n<meta property="og:type" content="%s">\n'
                % (title, d.type),
                extra,
                '<script type="application/ld+json">%s</script>\n' % ld,
                '<script src="/static/app.js?v=%s&cb=%x" defer></script>\n'
                % (ts[:19].replace("-", "").replace(":", "").replace("T", ""), nrng.getrandbits(32)),
                '</head>\n<body class="%s-body %s-%s">\n' % (p, p, d.type),
                site.header_pre,
                site.banners[gb(16) % len(site.banners)],
                site.header_post,
                '<div class="%s-wrap">' % p,
                main_open,
                main_html,
                live,
                '<form class="%s-newsletter-inline" method="post" action="/subscribe">'
                '<input type="hidden" name="csrf_token" value="%s"><input type="email" name="email">'
                "<button>Get updates</button></form>" % (p, csrf),
                main_close,
                aside,
                "</div>\n",
                site.footer_pre,
                ts,
                " &middot; build %s" % csrf[:7],
                site.footer_post,
                '<script>window.__STATE__={"csrf":"%s","ts":"%s","ab":"%s"};</script>\n'
                % (csrf, ts, nrng.choice("ABCD")),
                "</body>\n</html>\n",
            )
        )

    def print_page(self, d, main_text_html, ts, url):
        return (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s (print)</title>'
            '<meta name="robots" content="noindex">'
            "<style>body{font-family:serif;max-width:40em}nav,aside,footer{display:none}</style>"
            '</head><body onload="window.print()">\n%s\n<hr><p class="print-footer">Printed from %s on %s</p>'
            "</body></html>\n" % (d.title, main_text_html, url, ts)
        )

    # ---- degenerate ---------------------------------------------------------
    def degenerate(self, site, nrng, ts):
        x = nrng.random()
        p = site.pfx
        path = "/%s/%s" % (
            nrng.choice(["p", "news", "docs", "c", "account", "search"]),
            "%08x" % nrng.getrandbits(32),
        )
        url = site.url(path)
        if x < 0.35:
            ray = "%016x" % nrng.getrandbits(64)
            html = (
                '<!DOCTYPE html>\n<html><head><title>Access denied</title><meta name="robots" content="noindex">'
                "<style>body{font-family:sans-serif;text-align:center}</style></head><body>"
                "<h1>Access denied</h1><p>You do not have permission to access this resource on this server.</p>"
                "<p>Reference #%s</p><p>Ray ID: %s &middot; %s</p></body></html>\n" % (ray[:8], ray, ts)
            )
            return url, html, (403 if nrng.random() < 0.6 else 200), "degenerate_access_denied"
        if x < 0.65:
            html = (
                '<!DOCTYPE html>\n<html lang="en"><head>%s<title>%s</title></head><body>'
                '<div id="root"><div class="%s-spinner">Loading\u2026</div></div>'
                "<noscript>You need to enable JavaScript to run this app.</noscript>"
                '<script src="/static/bundle.%08x.js?cb=%x"></script></body></html>\n'
                % (site.head_static, site.name, p, nrng.getrandbits(32), nrng.getrandbits(32))
            )
            return url, html, 200, "degenerate_loading"
        d = Doc()
        d.type, d.title, d.path = "soft404", "Page not found", path
        main = (
            '<div class="%s-404"><h1>Page not found</h1><p>Sorry, we could not find the page you were '
            'looking for. It may have been moved or deleted.</p><p><a href="/">Return to the homepage</a> or '
            "try searching.</p></div>" % p
        )
        return url, self.page(site, d, main, "Page not found", nrng, ts), 200, "degenerate_soft404"

    # ---- stream -------------------------------------------------------------
    VARIANTS = {
        "product": (
            ("utm_mirror", 14),
            ("scheme_twin", 6),
            ("www_twin", 6),
            ("trailing_slash", 7),
            ("refetch_noise", 26),
            ("exact_refetch", 3),
            ("stale_recrawl", 16),
            ("regional_mirror", 20),
            ("print_version", 2),
        ),
        "article": (
            ("utm_mirror", 18),
            ("scheme_twin", 5),
            ("www_twin", 5),
            ("trailing_slash", 6),
            ("refetch_noise", 22),
            ("exact_refetch", 3),
            ("stale_recrawl", 12),
            ("syndicated", 17),
            ("print_version", 9),
            ("pagination_artifact", 3),
        ),
        "docs": (
            ("utm_mirror", 8),
            ("scheme_twin", 8),
            ("www_twin", 4),
            ("trailing_slash", 14),
            ("refetch_noise", 34),
            ("exact_refetch", 6),
            ("stale_recrawl", 16),
            ("print_version", 10),
        ),
        "listing": (
            ("utm_mirror", 12),
            ("scheme_twin", 6),
            ("www_twin", 6),
            ("trailing_slash", 8),
            ("refetch_noise", 34),
            ("exact_refetch", 4),
            ("pagination_artifact", 30),
        ),
    }

    def plan(self, dup_rate=0.152, deg_rate=0.02):
        """Cheap sequential plan: yields (i, ts, what, arg...) tuples.  All the
        expensive rendering is a pure function of a plan item (see render)."""
        srng = random.Random(_mix(self.seed, 5))
        n_orig = 0
        recent = []  # ring buffer of recent doc ids (bounded)
        first = {}  # docid -> (record index, ts) for recent docs (bounded)
        N = self.pages
        vcw = {
            t: (list(itertools.accumulate(w for _, w in v)), [k for k, _ in v])
            for t, v in self.VARIANTS.items()
        }
        has_synd = {
            s.idx: bool([o for o in self.sites if o.kind in ("news", "blog") and o is not s])
            for s in self.sites
        }
        for i in range(N):
            ts = (
                self.t0 + _dt.timedelta(seconds=int(self.window_s * i / max(N, 1)) + srng.randrange(600))
            ).isoformat() + "Z"
            x = srng.random()
            if x < deg_rate:
                yield (i, ts, "deg", bisect.bisect(self.site_cw, srng.random() * self.site_cw[-1]))
                continue
            if x < deg_rate + dup_rate and n_orig > 10:
                if srng.random() < 0.7 and recent:
                    did = recent[srng.randrange(len(recent))]
                else:
                    did = srng.randrange(n_orig)
                d = self.doc(did)
                cw, names = vcw[d.type]
                kind = names[bisect.bisect(cw, srng.random() * cw[-1])]
                if kind == "regional_mirror" and not d.site.regions:
                    kind = "refetch_noise"
                if kind == "pagination_artifact" and d.type == "listing" and d.page_no != 1:
                    kind = "utm_mirror"
                if kind == "syndicated" and not has_synd[d.site.idx]:
                    kind = "utm_mirror"
                if kind == "exact_refetch" and did not in first:
                    kind = "refetch_noise"
                yield (i, ts, "var", did, kind, first.get(did))
                continue
            did = n_orig
            n_orig += 1
            recent.append(did)
            first[did] = (i, ts)
            if len(recent) > 3000:
                for old in recent[:1000]:
                    first.pop(old, None)
                del recent[:1000]
            yield (i, ts, "orig", did)

    def render(self, item, want_gold=False):
        """plan item -> (record_dict, true_cluster, kind, gold_text_or_None)."""
        i, ts, what = item[0], item[1], item[2]
        nrng = random.Random(_mix(self.seed, 6, i))
        if what == "deg":
            url, html, status, kind = self.degenerate(self.sites[item[3]], nrng, ts)
            return (
                {"url": url, "html": html, "fetched_at": ts, "status": status},
                "deg-" + kind.split("_", 1)[1],
                kind,
                "" if want_gold else None,
            )
        d = self.doc(item[3])
        if what == "var":
            kind = item[4]
            if kind == "exact_refetch":  # re-render the first fetch byte-for-byte
                oi, ots = item[5]
                rec, gold = self._render(d, random.Random(_mix(self.seed, 6, oi)), ots, want_gold)
                rec["fetched_at"] = ts
                return rec, "c%d" % d.id, kind, gold
            return self._variant(d, kind, nrng, ts, want_gold)
        rec, gold = self._render(d, nrng, ts, want_gold)
        return rec, "c%d" % d.id, "original", gold

    def records(self, want_gold=False):
        """Yield (record_dict, true_cluster, kind, gold_text_or_None) in order."""
        for item in self.plan():
            yield self.render(item, want_gold)

    def _canon(self, d, url_clean, variant):
        pol = d.site.canon
        if pol == "none":
            return None
        if pol == "home":
            return d.site.url("/")
        return url_clean

    def _render(self, d, nrng, ts, want_gold, edit_rng=None):
        site = d.site
        url = site.url(d.path)
        main_html, text, desc = self.main(d, edit_rng)
        canon = self._canon(d, url, "original")
        hl = None
        if site.regions and d.type == "product":
            hl = [("en", url)] + [
                (REGIONS[r][3], site.url(d.path, host=r + "." + site.base_host)) for r in site.regions
            ]
        html = self.page(site, d, main_html, desc, nrng, ts, canonical=canon, hreflang=hl)
        return {"url": url, "html": html, "fetched_at": ts, "status": 200}, (text if want_gold else None)

    def _variant(self, d, kind, nrng, ts, want_gold):
        site = d.site
        clean = site.url(d.path)
        cl = "c%d" % d.id
        if kind in ("refetch_noise", "stale_recrawl"):
            rec, gold = self._render(
                d,
                nrng,
                ts,
                want_gold,
                edit_rng=random.Random(_mix(self.seed, 8, d.id)) if kind == "stale_recrawl" else None,
            )
            return rec, cl, kind, gold
        main_html, text, desc = self.main(d)
        canon_clean = self._canon(d, clean, kind)
        if kind == "utm_mirror":
            q = "utm_source=%s&utm_medium=%s&utm_campaign=%s" % (
                nrng.choice(["newsletter", "twitter", "facebook", "google", "partner"]),
                nrng.choice(["email", "social", "cpc", "referral"]),
                "spring%02d" % nrng.randrange(40),
            )
            if nrng.random() < 0.3:
                q += "&fbclid=%x" % nrng.getrandbits(64)
            url = clean + ("&" if "?" in clean else "?") + q
        elif kind == "scheme_twin":
            url = site.url(d.path, scheme="http" if site.scheme == "https" else "https")
        elif kind == "www_twin":
            url = site.url(d.path, host=site.base_host if site.www else "www." + site.base_host)
        elif kind == "trailing_slash":
            if "?" in d.path:
                pth, q = d.path.split("?", 1)
                url = site.url(pth, slash=not site.slash) + "?" + q
            else:
                url = site.url(d.path, slash=not site.slash)
        elif kind == "pagination_artifact":
            url = clean + ("&page=1" if "?" in clean else "?page=1")
        elif kind == "print_version":
            if site.print_style == "query":
                url = clean + ("&" if "?" in clean else "?") + "print=1"
            else:
                url = site.url("/print" + d.path)
            html = self.print_page(d, main_html, ts, clean)
            return (
                {"url": url, "html": html, "fetched_at": ts, "status": 200},
                cl,
                kind,
                text if want_gold else None,
            )
        elif kind == "regional_mirror":
            reg = site.regions[nrng.randrange(len(site.regions))]
            host = reg + "." + site.base_host
            url = site.url(d.path, host=host)
            main_html, text, desc = self.main(d, region=reg)
            hl = [("en", clean)] + [
                (REGIONS[r][3], site.url(d.path, host=r + "." + site.base_host)) for r in site.regions
            ]
            html = self.page(
                site,
                d,
                main_html,
                desc,
                nrng,
                ts,
                canonical=url if site.canon != "none" else None,
                lang=REGIONS[reg][3][:2],
                hreflang=hl,
            )
            return (
                {"url": url, "html": html, "fetched_at": ts, "status": 200},
                cl,
                kind,
                text if want_gold else None,
            )
        elif kind == "syndicated":
            others = [s for s in self.sites if s.kind in ("news", "blog") and s is not site]
            host_site = others[_mix(d.id, 11) % len(others)]
            main_html, text, desc = self.main(d, attribution=site.name)
            path = "/%s/syndicated/%s" % ("news" if host_site.kind == "news" else "blog", slugify(d.title))
            url = host_site.url(path)
            canon = clean if nrng.random() < 0.5 else (url if host_site.canon != "none" else None)
            html = self.page(host_site, d, main_html, desc, nrng, ts, canonical=canon)
            return (
                {"url": url, "html": html, "fetched_at": ts, "status": 200},
                cl,
                kind,
                text if want_gold else None,
            )
        html = self.page(site, d, main_html, desc, nrng, ts, canonical=canon_clean)
        return (
            {"url": url, "html": html, "fetched_at": ts, "status": 200},
            cl,
            kind,
            text if want_gold else None,
        )


def _chunked(it, k):
    while True:
        c = list(itertools.islice(it, k))
        if not c:
            return
        yield c


def _bounded_imap(pool, chunks, depth):
    from collections import deque

    pending = deque()
    for c in chunks:
        pending.append(pool.apply_async(_worker_render, (c,)))
        if len(pending) >= depth:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


_W = {}


def _worker_init(seed, pages, want_gold, gz_level=None, gold_gz=False):
    _W["g"] = Generator(seed, pages)
    _W["gold"] = want_gold
    _W["gz"] = gz_level
    _W["gold_gz"] = gold_gz


def _worker_render(items):
    """Render a chunk of plan items -> (jsonl text, truth rows, gold jsonl text, html bytes)."""
    g, want_gold = _W["g"], _W["gold"]
    es = json.encoder.encode_basestring
    out, rows, gl = [], [], []
    hb = 0
    for item in items:
        rec, cl, kind, gold = g.render(item, want_gold)
        out.append(
            '{"url":%s,"html":%s,"fetched_at":"%s","status":%d}\n'
            % (es(rec["url"]), es(rec["html"]), rec["fetched_at"], rec["status"])
        )
        hb += len(rec["html"])
        rows.append((rec["url"], cl, kind))
        if want_gold:
            gl.append('{"url":%s,"text":%s}\n' % (es(rec["url"]), es(gold)))
    data = "".join(out).encode("utf-8")
    gdata = "".join(gl).encode("utf-8")
    # each chunk becomes one gzip member (RFC 1952 multi-member: gzip/zcat/python/
    # DuckDB/pandas read it as one stream); compression thus runs in the workers
    if _W["gz"] is not None:
        data = gzip.compress(data, _W["gz"], mtime=0)
    if want_gold and _W["gold_gz"]:
        gdata = gzip.compress(gdata, 1, mtime=0)
    return data, rows, gdata, hb


def default_jobs():
    """Render processes by default: the CPUs this process may use, at most 4."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cpus))


def write_crawl(pages, seed, out, truth=None, gold=None, compresslevel=1, jobs=None, quiet=False):
    """Write the crawl of `pages` records for `seed` to `out` (gzip if it ends in .gz; '-' = stdout), its
    truth CSV to `truth` and its gold main text to `gold` when given. The bytes depend on seed and pages
    only, not on `jobs`."""
    jobs = default_jobs() if jobs is None else jobs
    g = Generator(seed, pages)
    t0 = time.perf_counter()
    gz = compresslevel if out.endswith(".gz") else None
    n = nbytes = 0
    kinds = {}
    with contextlib.ExitStack() as files:
        f_out = sys.stdout.buffer if out == "-" else files.enter_context(open(out, "wb"))
        tw = None
        if truth:
            tw = csv.writer(
                files.enter_context(open(truth, "w", newline="", encoding="utf-8")), lineterminator="\n"
            )
            tw.writerow(["url", "true_cluster", "kind"])
        gf = files.enter_context(open(gold, "wb")) if gold else None
        initargs = (seed, pages, bool(gf), gz, bool(gold and gold.endswith(".gz")))
        chunks = _chunked(g.plan(), 200)
        if jobs > 1:
            import multiprocessing as mp

            pool = files.enter_context(
                mp.get_context("fork").Pool(jobs, initializer=_worker_init, initargs=initargs)
            )
            results = _bounded_imap(pool, chunks, 2 * jobs + 2)  # constant memory, ordered
        else:
            _worker_init(*initargs)
            results = map(_worker_render, chunks)
        for data, rows, gdata, hbytes in results:
            f_out.write(data)
            nbytes += hbytes
            n += len(rows)
            for _url, _cluster, kind in rows:
                kinds[kind] = kinds.get(kind, 0) + 1
            if tw:
                tw.writerows(rows)
            if gf:
                gf.write(gdata)
        f_out.flush()
    dt = time.perf_counter() - t0
    if not quiet:
        red = n - kinds.get("original", 0) - sum(1 for k in kinds if k.startswith("degenerate"))
        print(
            "pages=%d sites=%d seconds=%.1f pages_per_s=%.0f avg_html_bytes=%.0f redundant_records=%.1f%%"
            % (n, len(g.sites), dt, n / dt if dt else 0, nbytes / max(n, 1), 100.0 * red / max(n, 1)),
            file=sys.stderr,
        )
        print(
            "kinds: " + ", ".join("%s=%d" % kv for kv in sorted(kinds.items(), key=lambda kv: -kv[1])),
            file=sys.stderr,
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output .jsonl.gz (gzip if it ends in .gz; '-' = stdout)")
    ap.add_argument("--truth", help="write url,true_cluster,kind CSV (one row per record, same order)")
    ap.add_argument("--gold", help="write {url,text} gold main text per record (.jsonl.gz)")
    ap.add_argument("--compresslevel", type=int, default=1, help="gzip level (default 1: fast)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="render processes (default: CPU count, max 4); output is identical for any value",
    )
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    write_crawl(a.pages, a.seed, a.out, a.truth, a.gold, a.compresslevel, a.jobs, a.quiet)


if __name__ == "__main__":
    main()
