#!/usr/bin/env python3
"""Generate a small, realistic, deterministic synthetic web crawl with ground truth (stdlib only).

    python scripts/make_sample.py --out sample_data/crawl.jsonl.gz --truth sample_data/truth.csv --seed 7
    python scripts/make_sample.py --profile realsize --pages 5000 --out real.jsonl.gz --truth real.csv --seed 11

--profile sample (default): ~13 KB pages, the bundled sample.  --profile realsize: the same crawl with the
weight of real pages (inline CSS and bundle scripts, JSON-LD, page-state JSON, an SVG sprite, a mega-menu, a
consent platform's vendor list; 0-300 comments on 60% of articles): median ~85 KB, p90 ~175 KB.
--profile realtail: realsize with the heavier inline-script tail of real crawls: median ~95 KB, mean ~150 KB,
p90 ~300 KB, p99 ~1 MB.
--profile bench: the 16 KB bench crawl of the README's 100k and 1M-page figures (`scripts/bench_crawl.py`, its
own generator and kinds: 14-26 sites, ~17% redundant records, ~2% degenerate), written in parallel and in
constant memory (~2,000 pages/s on 2 cores); `bench/bench.py` generates it.

--out: gzip JSON lines, one fetch per line:
    {"url": str, "html": str, "fetched_at": "2026-03-14T08:15:00Z", "status": int}
Records come in per-day, per-site crawl batches (like a polite crawler's host queues),
in time order inside a batch.  Output bytes are a pure function of --seed and --pages
(random.Random(seed), timestamps from a fixed base date, gzip mtime=0).

--truth: CSV `url,true_cluster,kind`, ONE ROW PER RECORD in record order (row i describes
line i; a URL can occur twice, e.g. a re-fetch).  true_cluster groups records whose content
is the same document ("c<docid>"); every variant shares its original's cluster.  Kinds:
  original          first fetch of a document
  utm_mirror        same page, tracking parameters appended (utm_*, gclid, fbclid, ref)
  scheme_twin       http:// twin of an https:// page
  www_twin          www.host vs bare host
  trailing_slash    /path vs /path/
  refetch_noise     same URL a later day; only CSRF tokens, timestamps, the rotated promo
                    banner and the "trending now" widget differ
  exact_refetch     same URL a later day, byte-identical HTML
  stale_recrawl     same URL a later day with ONE real edit (a product price, or one
                    sentence of an article / docs page)
  regional_mirror   store product on a de./uk. subdomain: same product, other currency
  syndicated        article republished inside ANOTHER site's template + attribution line (without the
                    original's author box, related list and comment thread)
  syndicated_partial  a cut-short syndicated copy: the first 40-80% of the paragraphs and a link to the rest
  print_version     printer-friendly bare HTML (?print=1 or /print/ path)
  noise_in_content  re-fetch with a promo box / "recommended for you" box / session link
                    INSIDE the main content (<article> or <div class="content">)
  degenerate_soft404 | degenerate_access_denied | degenerate_loading
                    content-free pages wrapped in a real site template (status 200, 403 or
                    404; a soft-404 is "page not found" or "this article has been removed"); clusters
                    deg-soft404 | deg-access_denied | deg-loading
  degenerate_consent  a consent platform's wall ("Before you continue to ...", "Bevor Sie zu ... weitergehen",
                    ...: English, German, French, Spanish, Italian, Dutch, Portuguese, Polish) served at an
                    article's URL; cluster deg-consent
  degenerate_paywall | degenerate_login  (realsize and realtail only) a paywall or login wall at an article's
                    URL inside the site's own template: the article's headline, byline and first 1-3 paragraphs
                    as a teaser, then the gate's prompt, in the same eight languages; clusters deg-paywall |
                    deg-login. News articles of these profiles end with a membership box ("Already a subscriber?
                    Log in ..."): a paywall's words on a page that is content.
Every variant is fetched on a later day than its original (so it also comes later in the file).

Hard negatives (kind `original`, each its own cluster, NOT duplicates of each other):
  * product siblings: same store + product family share a long spec-table skeleton, the
    highlights, a series blurb and the store's shipping/returns text; descriptions, reviews
    and a few spec rows differ, so after tag stripping they look fairly similar;
  * "Morning Briefing" columns: same template, title pattern, intro and sign-off, other text;
  * pages sharing one ~150-word legal disclaimer paragraph, different bodies.

Articles (a quarter of them in the sample, 60% in realsize) carry a reader comment thread inside the article
container, after the text, with an author box (The Harbor Ledger, Quiet Kettle) and a "Read more" related list:
the original's main text then holds far more than the article, and a print or syndicated copy is a small part
of it (the containment size guard's hard case).

Text: a fixed lexicon (~860 real English words at the head of each part-of-speech list,
~4,200 pseudo-words behind them, Zipf-like frequencies, per-topic jargon) fed through a
small sentence grammar, so it reads like (slightly odd) English.
"""

import argparse
import collections
import csv
import gzip
import io
import json
import os
import random
import time
from datetime import datetime, timedelta

# %-formatting is deliberate: the HTML templates use %(name)s because their CSS/JS is full of braces;
# word lists are kept as readable text blocks.
# ruff: noqa: UP031, SIM905

# ---------------------------------------------------------------------------------------------
# lexicon and sentence grammar (fixed, independent of --seed)
# ---------------------------------------------------------------------------------------------
REAL_NOUNS = """
time year way day thing world school state family group country problem hand part place case week company system
program question work government number night point home water room area money story fact month lot right study book
word business issue side kind head house service friend power hour game line end member law car city community name
team minute idea body level office door person art history party result change morning reason moment teacher force
market price product plan project design model quality report policy budget season council value feature customer
user version release update option network process decision experience road street bridge river harbor park event
festival board committee election vote tax rate cost plant garden kitchen recipe meal flavor oven sauce bread trail
jacket tent coast island station port ferry library hospital clinic student parent neighbor resident driver worker
owner manager official expert analyst volunteer visitor shop store farm field schedule tool file server account
error setting request response window screen battery charger speaker signal sensor cable device app platform answer
article audience balance basket beach benefit bill bottle box branch building bus button cabin camera campaign
capital card career center chain chair challenge channel chapter character choice church class client climate club
coffee college color comment concern condition conference contract corner county course court crowd culture cup
dance deal debate demand department detail dinner director discussion distance district doctor dog dream drink
effort engine entry exercise factor failure fan fee figure film finding fire floor flight food forest form fund
future gap gift goal guide habit hall heart hill holiday income industry interest interview item journey judge key
land language lead lesson letter light limit list loan lunch machine map match material meeting memory message
method middle mind mission mountain movie museum note order outcome page paper path pattern payment peak period
piece pilot pitch plate player pocket population position post pressure profit property proposal purpose range
reader record region rent repair resource restaurant review risk role roof route rule salary sale sample scale scene
score seat sector shelter shift site size skill solution song source space speech sport stage standard step stock
storm strategy structure style supply surface table target task taste term test theme theory ticket topic tour town
track trade training trip truck trust unit valley vehicle venue view village visit voice wall wave weekend wind
winter yard""".split()
REAL_VERBS = """
add allow appear ask believe call change consider continue create decide describe develop expect explain follow
happen help include improve increase introduce involve join learn look move need offer open prepare produce provide
reach receive remain remember report require return serve share start suggest support talk test track turn use visit
wait walk want watch work launch review replace reduce announce confirm warn claim argue deliver measure handle
compare connect install update publish release approve reject record finish attract discover mention notice promise
present protect collect complete count cover raise enjoy explore extend fix focus gather limit manage mark miss
order pass pick push reflect remove repair respond save search select settle sign solve struggle train travel treat
unlock welcome worry accept achieve act adopt affect aim apply arrange assess assist assume attend avoid bake blend
boil borrow brew calculate celebrate check clean climb close coach combine complain contain convert cook cross
decline define delay demand deploy determine display doubt earn edit enable encourage enter establish estimate
examine exchange expand export express fail fill filter gain hire host identify ignore imagine import inform inspect
invest invite link list load lower maintain match merge monitor negotiate obtain operate organize own paint perform
post predict prefer preserve prevent process prove purchase qualify rank recommend recover refuse register relax
rely rent request rescue resolve restore retire reveal roast schedule score secure shape shift sort spray store
stretch suffer supply surprise survive switch target taste thank tour trade transform trust upgrade vote wander wash
weigh wonder""".split()
REAL_ADJS = """
new good high old great big local small large national young different long important public recent early strong
clear full special simple modern major final main common free quick quiet bright careful solid fresh light heavy
durable compact reliable popular annual digital regional practical useful open private rural urban warm cold dry
soft sharp smooth narrow wide deep safe busy cheap expensive rare familiar unusual steady gradual official
independent seasonal global technical natural historic coastal northern southern active affordable ancient available
basic bold broad calm central certain cheerful classic clean comfortable complex crisp critical crowded current
curious dark daily direct distant easy electric empty entire equal essential exact extra fair famous fast fine flat
flexible foreign formal former friendly generous gentle golden grand green healthy helpful hidden honest huge ideal
initial inner latest legal likely live loose loud lucky massive mobile modest nearby negative normal obvious online
organic original outdoor overall perfect personal physical plain pleasant positive powerful precise pretty previous
primary proper rapid raw ready real red regular relevant remote rich round royal sandy secure senior serious severe
short silent similar single slow smart social sound spare specific stable standard strict successful sudden sunny
sweet tall thin tiny total tough traditional typical unique upper usual valuable various vast visible vital weekly
whole wild wooden""".split()
ADVS = """also still already often usually quickly clearly recently nearly simply finally really largely slightly
widely mostly quietly openly rarely currently generally easily""".split()
PREPS = """in on at for with from about across after before during under over between without through into
around near behind against toward beyond""".split()
FIRST_NAMES = """Anna Ben Clara David Elena Farid Grace Hannah Isaac Jonas Kara Leo Maya Nina Omar Priya Quinn Rosa
Sam Tara Umar Vera Will Yusuf Zoe Amir Beth Carl Dana Emil Fiona Gabe Hugo Iris Jade Kim Lena Marco Noah Olga Paul
Rita Sofia Theo""".split()
ONSETS = "b c d f g h k l m n p r s t v w b d g l m n p r s t br cr dr fr gr pr tr bl cl fl pl st sp th sh ch".split()
ONSETS += [""] * 3
VOWELS = "a e i o u a e i o u a e i o ea ou ai".split()
CODAS = [""] * 8 + "n r s t l m nd nt st ck ng rd ll".split()
DETS_SG = ["the"] * 6 + ["a"] * 4 + "this that each every its their our one".split()
DETS_PL = ["the"] * 5 + "some many several most these their our few two three other".split()
MODALS = "will could should may might can would must".split()
LINKS = "but and while although because so as since".split()
PRONOUNS = [("they", True), ("we", True), ("it", False), ("she", False), ("he", False)]
CONNECTORS = [
    "However,",
    "Meanwhile,",
    "In addition,",
    "For example,",
    "As a result,",
    "Still,",
    "In the end,",
    "At the same time,",
    "Last year,",
    "On the other hand,",
    "In practice,",
    "By contrast,",
    "For now,",
    "Until recently,",
    "Earlier this month,",
]
ROLES = [
    "a spokesperson",
    "an analyst",
    "the director",
    "a manager",
    "a researcher",
    "a teacher",
    "a volunteer",
    "the owner",
    "a resident",
    "an official",
    "an organizer",
    "an engineer",
    "a professor",
    "the head chef",
]
SMALL = {"a", "an", "the", "of", "in", "on", "at", "for", "to", "and", "with", "from", "by"}


def pseudo_words(rng, n, suffixes, seen):
    """n new pronounceable pseudo-words of 1-2 syllables plus a suffix."""
    out = []
    while len(out) < n:
        w = "".join(
            rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(rng.randint(1, 2))
        )
        w += rng.choice(suffixes)
        if 3 <= len(w) <= 10 and w not in seen and w[-1] not in "yo":
            seen.add(w)
            out.append(w)
    return out


def plural(w):  # also the 3rd-person singular of a verb
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w[:-1] + "ies" if w.endswith("y") and w[-2] not in "aeiou" else w + "s"


def past(v):
    if v.endswith("e"):
        return v + "d"
    return v[:-1] + "ied" if v.endswith("y") and v[-2] not in "aeiou" else v + "ed"


def zipf_table(words, size=8192, s=1.1, q=2.5):
    """Lookup table in which word of rank r appears ~ 1/(r+q)^s of the time (at least once)."""
    k = size / sum(1.0 / (r + q) ** s for r in range(len(words)))
    return [w for r, w in enumerate(words) for _ in range(max(1, round(k / (r + q) ** s)))]


class Lexicon:
    def __init__(self):
        rng = random.Random("neardup-sample-lexicon-v1")
        seen = set(REAL_NOUNS + REAL_VERBS + REAL_ADJS + ADVS)
        nouns = REAL_NOUNS + pseudo_words(rng, 2300, [""] * 6 + "er ment ness ity age ure ist".split(), seen)
        verbs = REAL_VERBS + pseudo_words(rng, 700, [""] * 5 + ["ate", "ize", "en"], seen)
        adjs = REAL_ADJS + pseudo_words(rng, 800, "al ous ive ic ful less able ent ish ed".split(), seen)
        self.surnames = [
            w.capitalize() for w in pseudo_words(rng, 300, [""] * 3 + "son ley er ton man".split(), seen)
        ]
        self.places = [
            w.capitalize() for w in pseudo_words(rng, 120, [""] * 3 + "ford port mont dale".split(), seen)
        ]
        self.size = len(nouns) + len(verbs) + len(adjs) + len(ADVS) + len(self.surnames) + len(self.places)
        self.nouns, self.adjs, self.verbs = zipf_table(nouns, 16384), zipf_table(adjs), zipf_table(verbs)
        self.pasts, self.s3 = [past(v) for v in self.verbs], [plural(v) for v in self.verbs]
        self.advs, self.preps = zipf_table(ADVS, 512), zipf_table(PREPS, 512)
        # 30 topics: jargon drawn from the mid/long tail, with its own Zipf inside the topic
        self.topics = [
            (zipf_table(rng.sample(nouns[150:], 150), 2048), zipf_table(rng.sample(adjs[60:], 50), 512))
            for _ in range(30)
        ]


LEX = Lexicon()


def title_case(s):
    return " ".join(w if (i and w in SMALL) else w[:1].upper() + w[1:] for i, w in enumerate(s.split()))


def slugify(s):
    return "-".join("".join(c for c in s.lower() if c.isalnum() or c == " ").split())[:70]


class Writer:
    """The sentence grammar, bound to one rng and one topic."""

    def __init__(self, rng, topic):
        self.rng, self.r = rng, rng.random
        self.tn, self.ta = LEX.topics[topic]

    def pick(self, t):
        return t[int(self.r() * len(t))]

    def noun(self):
        return self.pick(self.tn if self.r() < 0.2 else LEX.nouns)

    def adj(self):
        return self.pick(self.ta if self.r() < 0.2 else LEX.adjs)

    def name(self):
        return "%s %s" % (self.pick(FIRST_NAMES), self.pick(LEX.surnames))

    def np(self, of=True):
        """Noun phrase -> (text, is_plural)."""
        r = self.r
        pl = r() < 0.3
        words = ([self.adj()] if r() < 0.35 else []) + [plural(self.noun()) if pl else self.noun()]
        x = r()
        if x < 0.03:
            det = self.pick(LEX.places) + "'s"
        elif x < 0.07 and pl:
            det = self.pick(["about %d", "more than %d", "nearly %d", "%d"]) % (2 + int(r() * 300))
        else:
            det = self.pick(DETS_PL if pl else DETS_SG)
            det = "an" if det == "a" and words[0][0] in "aeiou" else det
        s = det + " " + " ".join(words)
        return (s + " of " + self.np(False)[0] if of and r() < 0.2 else s), pl

    def vp(self, pl):
        x, obj = self.r(), self.np
        if x < 0.3:
            return "%s %s" % (self.pick(LEX.pasts), obj()[0])
        if x < 0.45:
            return "%s %s %s" % ("have" if pl else "has", self.pick(LEX.pasts), obj()[0])
        if x < 0.6:
            return "%s %s %s" % (self.pick(MODALS), self.pick(LEX.verbs), obj()[0])
        if x < 0.7:
            return "%s %s%s" % (
                "are" if pl else "is",
                self.pick(LEX.advs) + " " if self.r() < 0.3 else "",
                self.adj(),
            )
        if x < 0.8:
            return "%s that %s" % (self.pick(LEX.pasts), self.clause())
        if x < 0.9:
            v = self.pick(["plan", "want", "hope", "need", "expect", "try"])
            return "%s to %s %s" % (v if pl else plural(v), self.pick(LEX.verbs), obj()[0])
        return "%s %s" % (self.pick(LEX.verbs if pl else LEX.s3), obj()[0])

    def clause(self):
        subj, pl = self.pick(PRONOUNS) if self.r() < 0.15 else self.np()
        return "%s %s" % (subj, self.vp(pl))

    def sentence(self, quotes=False):
        r = self.r
        s = self.clause()
        if r() < 0.6:
            s += " %s %s" % (self.pick(LEX.preps), self.np()[0])
        if r() < 0.2:
            s += ", %s %s" % (self.pick(LINKS), self.clause())
        if r() < 0.15:
            s = self.pick(CONNECTORS) + " " + s
        s = s[0].upper() + s[1:]
        if quotes and r() < 0.08:
            return '"%s," said %s, %s at %s.' % (s, self.name(), self.pick(ROLES), self.pick(LEX.places))
        return s + ("?" if r() < 0.02 else ".")

    def paragraphs(self, n_words, lo=2, hi=6, quotes=False):
        """Paragraphs (lists of sentences) totalling about n_words words."""
        paras, count = [], 0
        while count < n_words:
            paras.append([self.sentence(quotes) for _ in range(self.rng.randint(lo, hi))])
            count += sum(s.count(" ") + 1 for s in paras[-1])
        return paras

    def bare_np(self):
        return self.np(False)[0].split(" ", 1)[1]

    def headline(self):
        subj = "%s %s" % (self.adj() if self.r() < 0.5 else self.pick(LEX.places), self.noun())
        h = "%s %s %s" % (subj, self.pick(LEX.s3), self.bare_np())
        if self.r() < 0.5:
            h += " %s %s" % (
                self.pick(["after", "in", "for", "despite", "amid", "before"]),
                self.np(False)[0],
            )
        return title_case(h)


# ---------------------------------------------------------------------------------------------
# sites and page templates
# ---------------------------------------------------------------------------------------------
BANNERS = {
    "store": "Spring sale: up to 40% off selected items|Free shipping on orders over $50|New: download our "
    "app for iOS and Android|Members get early access to every sale|Gift cards now available",
    "news": "Subscribe today and get your first month free|Join 50,000 readers who get our weekly digest|"
    "Live coverage: follow our blog for updates|Support local journalism: become a member",
    "docs": "Quillstack 4.2 is out: read the release notes|Join QuillConf 2026 in Lisbon, May 12-14|"
    "The v3 API will be retired on June 30, 2026|Take the 2026 developer survey",
}
FOOTERS = {
    "store": "Shop: New arrivals, Best sellers, Sale, Gift cards|Help: Shipping, Returns, Order status, Size "
    "guide, Contact us|Company: About us, Careers, Stores|Legal: Terms of sale, Privacy policy, "
    "Cookie settings, Accessibility",
    "news": "Sections: Local, Business, Sports, Opinion, Obituaries|Services: Subscribe, Newsletters, "
    "E-edition, Archives, Advertise|Company: About us, Contact the newsroom, Corrections, Careers|"
    "Legal: Terms of use, Privacy policy, Cookie settings, Do not sell my info",
    "docs": "Docs: Getting started, Guides, API reference, Changelog|Community: Forum, Discord, GitHub, "
    "Contributing|Company: About, Blog, Pricing, Status|Legal: Terms, Privacy, Security",
}
DISCLAIMER = (
    "The information in this article is provided for general informational purposes only and does not constitute "
    "financial, legal, tax or investment advice. Nothing published on this site should be read as a recommendation to "
    "buy, sell or hold any security, product or service. While we make every effort to ensure that the information is "
    "accurate and up to date at the time of publication, prices, rates, terms and availability change frequently and "
    "may differ from what is shown. We may receive compensation from some of the companies mentioned, which can "
    "influence which products we write about and where they appear, but it does not affect our editorial judgment. "
    "Readers should consult a qualified professional about their own circumstances before making any decision. Past "
    "performance is not a reliable indicator of future results, and all investments carry risk, including the possible "
    "loss of principal. Use of this site is subject to our Terms of Use and Privacy Policy."
)
SHIPPING = (
    "<p>Orders placed before 2 p.m. on a business day ship the same day from our warehouse. Standard delivery takes "
    "3&ndash;5 business days and is free on orders over {free}; express delivery arrives in 1&ndash;2 business days "
    "for a flat fee. You will receive a tracking link by email as soon as your parcel leaves us. We ship to all "
    "addresses in the mainland, including PO boxes, but not to freight forwarders.</p><p>Not quite right? Return any "
    "unused item in its original packaging within {days} days of delivery for a full refund. Start a return from your "
    "account page, print the prepaid label and drop the parcel at any carrier location. Refunds are issued to the "
    "original payment method within 5 business days of the item reaching our returns centre. Items marked as final "
    "sale, gift cards and opened personal-care products cannot be returned. Warranty claims are handled separately; "
    "see our warranty page for details.</p>"
)
SPEC_ROWS = {  # "label: option/option/..." rows; {n} {N} {phrase} are filled per family, {sku} {colour} per product
    "common": "Model number: {sku}|Colour: {colour}|Weight: {N} g|Dimensions: {N} x {n} x {n} mm|Country of origin: "
    "Vietnam/Portugal/China/Taiwan/Mexico|Warranty: 2 years/5 years/Lifetime|Certifications: CE, UKCA/RoHS/"
    "bluesign/OEKO-TEX 100|In the box: {phrase}|Care instructions: Hand wash/Wipe clean/Machine wash",
    "pinecrest": "Size: S/M/L/XL|Material: Recycled nylon/Ripstop polyester/Merino wool/Aluminium 7001/Canvas|Lining: "
    "Mesh/Fleece/Taffeta/None|Water resistance: 10,000 mm HH/20,000 mm HH/DWR finish|Temperature range: "
    "-{n} \u00b0C to 10 \u00b0C|Packed size: {n} x {n} cm|Capacity: {n} L|Frame: Aluminium/Fibreglass/"
    "Frameless|Closure: YKK zip/Buckle/Drawcord|Fit: Regular/Relaxed/Athletic|Season: 3-season/4-season/"
    "All year|Max load: {n} kg|Pockets: {n}|Hood: Adjustable/Packable/None|Insulation: {phrase}|Seams: "
    "Taped/Welded/Stitched|Sole: Vibram/Rubber/EVA|Drop: {n} mm|Poles: {n}|Fill power: 600/700/800",
    "voltbarn": "Battery: {N} mAh|Battery life: Up to {n} hours|Charging time: {n} hours|Connectivity: Bluetooth 5.3/"
    "Wi-Fi 6/USB-C|Ports: {n} x USB-C/2 x USB-A, 1 x USB-C/HDMI 2.1|Power: {n} W|Voltage: 100-240 V/5 V|"
    "Noise level: {n} dB|Compatibility: iOS, Android/Windows, macOS/{phrase}|Mounting: VESA 100/Desk stand/"
    "Wall mount|Cable length: 1.{n} m|Driver size: {n} mm|Frequency response: 20 Hz-20 kHz/{n} Hz-40 kHz|"
    "Sensor: {phrase}|Display: {n}-inch IPS/{n}-inch OLED/None|Resolution: 1920 x 1080/2560 x 1440|Refresh "
    "rate: 60 Hz/144 Hz|Codec: SBC, AAC/aptX Adaptive/LDAC|Microphone: {n} mics/Dual beamforming|Water "
    "resistance: IPX4/IPX5/IP67|Range: {n} m|Material: Aluminium/ABS plastic/Recycled plastic",
}
SPEC = {
    k: [(lab, opts.split("/")) for lab, opts in (row.split(": ") for row in v.split("|"))]
    for k, v in SPEC_ROWS.items()
}
REGIONS = {"de": ("EUR", 0.92, "de-DE"), "uk": ("GBP", 0.79, "en-GB")}


class Site:
    def __init__(
        self,
        key,
        name,
        domain,
        kind,
        style,
        www,
        slash,
        canon,
        print_style,
        weight,
        color,
        font,
        sections,
        regions="",
        products="",
    ):
        self.key, self.name, self.domain, self.kind, self.style = key, name, domain, kind, style
        self.slash, self.canon, self.print_style, self.weight = slash, canon, print_style, weight
        self.color, self.font, self.sections = color, font, sections.split("|")
        self.regions, self.products = regions.split(), products.split("|")
        self.www = www
        self.host = ("www." if www else "") + ("docs." if kind == "docs" else "") + domain
        self.banners = BANNERS.get(kind, BANNERS["news"]).split("|")
        self.footer = [
            (h, ts.split(", "))
            for h, ts in (c.split(": ") for c in FOOTERS.get(kind, FOOTERS["news"]).split("|"))
        ]
        self.pool, self.popular, self.tree = [], [], None  # (title, path) of the site's documents
        r = random.Random("site-" + key)
        self.ga, self.asset = "G-%08X" % r.getrandbits(32), "%08x" % r.getrandbits(32)
        self.topics = r.sample(range(30), 6)
        self.authors = ["%s %s" % (r.choice(FIRST_NAMES), r.choice(LEX.surnames)) for _ in range(14)]

    def url(self, path, scheme="https", host=None, slash=None, query=""):
        slash = self.slash if slash is None else slash
        path = path if path.endswith("/") or not slash else path + "/"
        path = path if slash else path.rstrip("/") or "/"
        return "%s://%s%s%s" % (scheme, host or self.host, path, "?" + query if query else "")


SITES = [  # key, name, domain, kind, style, www, slash, canonical rate, print style, weight, colour, font, ...
    Site(
        "ledger",
        "The Harbor Ledger",
        "harborledger.com",
        "news",
        "semantic",
        True,
        False,
        0.95,
        "query",
        20,
        "#0b3d62",
        "Georgia,serif",
        "Local|Business|Politics|Climate|Sports|Opinion|Arts|Food",
    ),
    Site(
        "courier",
        "Valley Courier",
        "valleycourier.net",
        "news",
        "divsoup",
        False,
        True,
        0.4,
        "path",
        13,
        "#a4161a",
        "Arial,Helvetica,sans-serif",
        "News|Sports|Obituaries|Business|Schools|Weather",
    ),
    Site(
        "kettle",
        "Quiet Kettle",
        "quietkettle.org",
        "blog",
        "semantic",
        True,
        True,
        1.0,
        "query",
        11,
        "#6a994e",
        "'Lora',serif",
        "Recipes|Baking|Garden|Kitchen Notes|Travel",
    ),
    Site(
        "bench",
        "Tinker Bench",
        "tinkerbench.io",
        "blog",
        "divsoup",
        False,
        False,
        0.0,
        "path",
        9,
        "#f28c28",
        "Verdana,sans-serif",
        "Projects|Electronics|Woodwork|Reviews|Tools",
    ),
    Site(
        "pinecrest",
        "Pinecrest Outfitters",
        "pinecrestoutfitters.com",
        "store",
        "semantic",
        True,
        False,
        0.9,
        "query",
        17,
        "#2d6a4f",
        "'Inter',sans-serif",
        "Jackets|Tents|Backpacks|Footwear|Camp Kitchen",
        "de uk",
        "Jacket|Tent|Backpack|Trail Shoe|Headlamp|Sleeping Bag|Fleece|Rain Shell|Camp Stove|Water Bottle",
    ),
    Site(
        "voltbarn",
        "Voltbarn",
        "voltbarn.com",
        "store",
        "divsoup",
        False,
        True,
        0.6,
        "query",
        16,
        "#3a0ca3",
        "Tahoma,sans-serif",
        "Audio|Charging|Computing|Smart Home|Cameras",
        "uk",
        "Wireless Earbuds|Speaker|Charger|Smartwatch|Keyboard|Monitor|Router|Power Bank|Webcam|Headphones",
    ),
    Site(
        "quill",
        "Quillstack Docs",
        "quillstack.dev",
        "docs",
        "docs",
        False,
        True,
        1.0,
        "query",
        14,
        "#1d3557",
        "system-ui,sans-serif",
        "Getting started|Guides|Configuration|API reference|CLI",
    ),
]


HEAD = """%(doctype)s
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(title)s %(sep)s %(site)s</title>
<meta name="description" content="%(desc)s">
%(canonical)s<meta property="og:title" content="%(title)s">
<meta property="og:site_name" content="%(site)s">
<meta property="og:type" content="%(ptype)s">
<meta property="og:url" content="%(og_url)s">
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="https://cdn.%(domain)s/assets/site.%(asset)s.css">
<style>*{box-sizing:border-box}body{margin:0;font-family:%(font)s;color:#1f2328;line-height:1.6}a{color:%(color)s}
.promo-bar,.topbar{background:%(color)s;color:#fff;text-align:center;padding:6px 12px;font-size:14px}
.cookie-banner{position:fixed;bottom:0;left:0;right:0;background:#111;color:#eee;padding:16px;z-index:99}
nav ul,.menu{list-style:none;display:flex;gap:18px;margin:0;padding:0}.sidebar{width:300px;font-size:14px}
h1{font-size:2.2rem;line-height:1.2}.byline,.meta{color:#666;font-size:14px}table{border-collapse:collapse;width:100%%}
th,td{border-bottom:1px solid #eee;padding:6px 8px;text-align:left}footer,#footer{background:#f4f4f4;padding:32px}
@media (max-width:768px){.sidebar{display:none}}</style>
<script type="application/ld+json">%(ld)s</script>
<script async src="https://www.googletagmanager.com/gtag/js?id=%(ga)s"></script>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag('js',new Date());
gtag('config','%(ga)s',{'anonymize_ip':true});</script>
%(extra_head)s</head>
"""
HTML5_DOCTYPE = '<!DOCTYPE html>\n<html lang="%s">\n<head>\n<meta charset="utf-8">'
XHTML_DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/'
    'xhtml1-transitional.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml" lang="%s">\n<head>\n'
    '<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />'
)
SEMANTIC = """<body class="page-%(ptype)s">
<div id="cookie-consent" class="cookie-banner" role="dialog"><p>We use cookies to improve your experience, measure
traffic and show relevant offers. You can change your choice at any time in <a href="/privacy#cookies">cookie
settings</a>.</p><button class="accept">Accept all</button> <button class="reject">Reject non-essential</button></div>
<div class="promo-bar">%(banner)s</div>
<header class="site-header"><a class="logo" href="/"><img src="/static/logo.svg" alt="%(site)s" width="160"
height="40"></a>
<nav class="main-nav" aria-label="Main">%(nav)s</nav>
<form class="search" action="/search" method="get" role="search"><input type="hidden" name="_token" value="%(csrf)s">
<input type="search" name="q" placeholder="Search %(site)s"><button type="submit">Search</button></form>
%(account)s</header>
<main id="main" class="layout">
<article class="%(ptype)s">
%(main)s
</article>
<aside class="sidebar">
<section class="widget trending"><h3>%(trending_title)s</h3>%(trending)s</section>
<section class="widget related"><h3>%(related_title)s</h3>%(related)s</section>
<section class="widget newsletter"><h3>Get the %(site)s newsletter</h3><p>The best of %(site)s in your inbox, twice a
week. No spam, unsubscribe any time.</p><form method="post" action="/newsletter/subscribe"><input type="hidden"
name="csrf_token" value="%(csrf)s"><input type="email" name="email" placeholder="you@example.com" required>
<button type="submit">Sign up</button></form></section>
</aside>
</main>
<footer class="site-footer">
<div class="footer-grid">%(footer)s</div>
<ul class="social"><li><a href="https://twitter.com/%(key)s">Twitter</a></li><li><a
href="https://www.instagram.com/%(key)s">Instagram</a></li><li><a href="/feed.xml">RSS</a></li></ul>
<p class="copyright">&copy; 2026 %(site)s. All rights reserved.</p>
<p class="build">Rendered %(ts)s</p>
</footer>
<script>window.__STATE__={"csrf":"%(csrf)s","renderedAt":"%(ts)s","page":"%(ptype)s"};</script>
<script src="https://cdn.%(domain)s/assets/app.%(asset)s.js" defer></script>
</body>
</html>
"""
DIVSOUP = """<body>
<div id="wrapper">
<div id="cookie-notice" style="display:none">This website uses cookies. By continuing to browse you agree to our use
of cookies. <a href="/cookie-policy">Learn more</a> <a href="#" class="cookie-ok">OK</a></div>
<div id="header">
<div class="logo"><a href="/"><img src="/images/logo.gif" alt="%(site)s" border="0" /></a></div>
<div class="topbar"><span class="promo">%(banner)s</span></div>
<div id="menu"><ul class="menu">%(menu)s</ul></div>
<div class="search-box"><form action="/search.php" method="post"><input type="hidden" name="csrf" value="%(csrf)s" />
<input type="text" name="keywords" size="20" /> <input type="submit" value="Go" /></form></div>
</div>
<div id="main-container">
<div class="left-col">
<div class="content">
%(main)s
</div>
</div>
<div class="sidebar">
<div class="widget most-read"><div class="widget-title">%(trending_title)s</div>%(trending)s</div>
<div class="widget related-links"><div class="widget-title">%(related_title)s</div>%(related)s</div>
<div class="widget newsletter-box"><div class="widget-title">Newsletter</div><p>Sign up for our free email newsletter
and get the latest %(what)s straight to your inbox.</p><form action="/newsletter.php" method="post"><input
type="hidden" name="token" value="%(csrf)s" /><input type="text" name="email" /><input type="submit"
value="Subscribe" /></form></div>
<div class="widget ad"><div class="ad-slot" id="div-gpt-ad-%(asset)s-0">Advertisement</div></div>
</div>
<div class="clear"></div>
</div>
<div id="footer">
<div class="footer-links">%(footer)s</div>
<div class="copyright">Copyright &copy; 2003-2026 %(site)s. All rights reserved. Reproduction in whole or in part
without permission is prohibited.</div>
<div class="generated">Page generated %(ts)s</div>
</div>
</div>
<script type="text/javascript">var _csrf="%(csrf)s";var _ts="%(ts)s";
$(function(){$(".cookie-ok").click(function(){$("#cookie-notice").hide();return false;});});</script>
</body>
</html>
"""
DOCS = """<body class="docs">
<div class="announcement">%(banner)s</div>
<header class="topbar"><a class="brand" href="/">Quillstack</a> <select class="version" aria-label="Version"><option
selected>v4.2 (latest)</option><option>v4.1</option><option>v3.x</option></select>
<form class="search" action="/search"><input type="hidden" name="_csrf" value="%(csrf)s"><input type="search" name="q"
placeholder="Search docs"></form><a href="https://github.com/quillstack/quillstack">GitHub</a></header>
<div class="docs-layout">
<nav class="docs-sidebar" aria-label="Documentation"><ul>%(tree)s</ul></nav>
<main class="docs-content">
<article class="doc">
%(main)s
</article>
</main>
<aside class="toc"><h4>On this page</h4>%(toc)s<h4>Popular pages</h4>%(trending)s<h4>See also</h4>%(related)s</aside>
</div>
<footer><p>&copy; 2026 Quillstack contributors. Documentation licensed under CC BY 4.0.</p><p>Last build %(ts)s</p>
</footer>
<script>window.__DOCS__={"csrf":"%(csrf)s","built":"%(ts)s"};</script>
<script src="/assets/search-index.js" defer></script>
</body>
</html>
"""
PRINT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s (Print) - %(site)s</title>
<meta name="robots" content="noindex,follow"><link rel="canonical" href="%(url)s">
<style>body{font:12pt Georgia,serif;margin:2cm;max-width:42em}</style></head>
<body onload="window.print()">
<h1>%(title)s</h1>
%(byline)s%(body)s<hr><p class="print-footer">Printed from %(url)s on %(date)s. &copy; 2026 %(site)s</p>
</body></html>
"""
BODIES = {"semantic": SEMANTIC, "divsoup": DIVSOUP, "docs": DOCS}


def links(items):
    return "<ul>%s</ul>" % "".join('<li><a href="%s">%s</a></li>' % (u, t) for t, u in items)


def render_page(s, P, nz, ts):
    """Fill site s's template; P is the page dict built by Crawl.render, nz the per-fetch noise rng.

    Only the CSRF token, timestamp, promo banner and trending widget come from nz, so two
    fetches of one URL differ in nothing else."""
    store, xhtml = s.kind == "store", s.style == "divsoup"
    csrf = "%032x" % nz.getrandbits(128)
    if s.style == "docs" and s.tree is None:  # static navigation tree
        s.tree = "".join(
            '<li class="group"><span>%s</span>%s</li>'
            % (sec, links([(t, s.url(p)) for t, p in s.pool if p.startswith("/%s/" % slugify(sec))][:6]))
            for sec in s.sections
        )
    v = dict(
        P,
        site=s.name,
        key=s.key,
        domain=s.domain,
        asset=s.asset,
        ga=s.ga,
        font=s.font,
        color=s.color,
        ts=ts,
        csrf=csrf,
        banner=nz.choice(s.banners),
        trending=links(nz.sample(s.popular, min(4, len(s.popular)))),
        doctype=(XHTML_DOCTYPE if xhtml else HTML5_DOCTYPE) % P["lang"],
        sep="-" if xhtml else "|",
        desc=P["desc"].replace('"', "")[:155],
        og_url=P["canonical"] or P["url"],
        canonical='<link rel="canonical" href="%s">\n' % P["canonical"] if P["canonical"] else "",
        extra_head="".join(
            '<link rel="alternate" hreflang="%s" href="%s">\n' % a for a in P.get("hreflang", ())
        )
        + ('<script type="text/javascript" src="/js/jquery-1.12.4.min.js"></script>\n' if xhtml else ""),
        ld=json.dumps(P["ld"], separators=(",", ":")),
        related=links(P["related"]),
        toc=links(P.get("toc", [])),
        nav=links([(x, "/%s/" % slugify(x)) for x in s.sections + ["Newsletter", "About"]]),
        tree=s.tree,
        menu='<li class="menu-item"><a href="/">Home</a></li>'
        + "".join('<li class="menu-item"><a href="/%s/">%s</a></li>' % (slugify(x), x) for x in s.sections),
        account='<a class="cart" href="/cart">Cart (0)</a>'
        if store
        else '<a href="/subscribe">Subscribe</a>',
        trending_title=("Hot right now" if xhtml else "Trending products")
        if store
        else ("Most read" if xhtml else "Trending now"),
        related_title=("Customers also viewed" if xhtml else "You may also like")
        if store
        else ("See also" if xhtml else "Related stories"),
        what="deals" if store else "headlines",
        footer="".join(
            '<div class="footer-col"><h4>%s</h4>%s</div>' % (h, links([(x, "/" + slugify(x)) for x in items]))
            for h, items in s.footer
        ),
    )
    return (HEAD % v + BODIES[s.style] % v).replace("%%CSRF%%", csrf)


# ---------------------------------------------------------------------------------------------
# documents: content is generated once per document; main_* render it (with optional edits)
# ---------------------------------------------------------------------------------------------
BASE = datetime(2026, 3, 2, 6, 0, 0)


class Doc:
    author = None  # articles only


def long_date(t):
    return "%s %d, %d" % (t.strftime("%B"), t.day, t.year)


def fmt_price(p, cur):
    if cur == "EUR":
        return ("%.2f\u00a0\u20ac" % p).replace(".", ",")
    return ("\u00a3%.2f" if cur == "GBP" else "$%.2f") % p


def make_article(d, rng, s, day):
    w = d.writer = Writer(rng, d.topic)
    d.section, d.author, d.date = rng.choice(s.sections), rng.choice(s.authors), day
    d.series = s.key == "ledger" and rng.random() < 0.05  # "Morning Briefing" column
    d.title = "Morning Briefing: %s %d" % (day.strftime("%A, %B"), day.day) if d.series else w.headline()
    n = rng.randint(400, 650) if d.series else min(1500, max(400, 380 + int(rng.lognormvariate(5.3, 0.7))))
    d.paras = w.paragraphs(n, quotes=s.kind == "news")
    d.dek, d.caption = w.sentence(), w.sentence()
    d.subheads = {k: title_case(w.bare_np()) for k in range(3, len(d.paras), rng.randint(3, 5))}
    d.disclaimer = rng.random() < 0.04
    d.tags = sorted({title_case(w.noun()) for _ in range(4)})
    d.comments = make_comments(w, rng, PROFILE["comments"](rng))
    d.author_box = s.key in ("ledger", "kettle")  # these CMSs print a bio under every article
    slug = slugify(d.title)
    d.path = {
        "ledger": "/%s/%s/%s" % (slugify(d.section), day.strftime("%Y/%m/%d"), slug),
        "courier": "/story/%d/%s" % (40000 + d.id, slug),
        "kettle": "/%s/%s" % (day.strftime("%Y/%m"), slug),
        "bench": "/posts/%s" % slug,
    }[s.key]


def make_family(rng, s):
    """A product family: siblings share spec skeleton, highlights, series blurb (and the shipping text)."""
    topic = rng.choice(s.topics)
    w = Writer(rng, topic)
    spec = [("Brand", s.name)] + [
        (
            k,
            rng.choice(opts)
            .replace("{phrase}", title_case("%s %s" % (w.adj(), w.noun())))
            .replace("{n}", str(rng.randint(2, 60)))
            .replace("{N}", str(rng.randint(100, 5000))),
        )
        for k, opts in SPEC["common"] + rng.sample(SPEC[s.key], rng.randint(16, 19))
    ]
    return {
        "name": "%s %s" % (s.name.split()[0], rng.choice(LEX.places)),
        "noun": rng.choice(s.products),
        "topic": topic,
        "spec": spec,
        "left": rng.randint(1, 6),
        "section": rng.choice(s.sections),
        "base": rng.choice([19, 29, 49, 79, 99, 129, 179, 249, 399]),
        "bullets": [w.sentence().rstrip(".") for _ in range(4)],
        "blurb": " ".join(w.sentence() for _ in range(4)),
    }


def make_product(d, rng, s, fam):
    w = d.writer = Writer(rng, fam["topic"])
    colour = rng.choice(
        ["Black", "Slate", "Olive", "Navy", "Sand", "Graphite", "Red", "White", "Teal", "Rust"]
    )
    d.family, d.section = fam, fam["section"]
    d.title = "%s %s%s, %s" % (
        fam["name"],
        rng.choice(["", "", "Pro ", "Lite ", "2 ", "Max "]),
        fam["noun"],
        colour,
    )
    d.sku = "%s-%05d" % (s.key[:2].upper(), 10000 + d.id)
    d.price = round(fam["base"] * rng.uniform(0.85, 1.25)) - 0.01
    d.bullets = fam["bullets"] + [w.sentence().rstrip(".")]
    d.paras = d.desc = w.paragraphs(rng.randint(80, 300), 2, 4)
    d.spec = [
        (
            k,
            "%d g" % rng.randint(80, 4000)
            if k == "Weight"
            else rng.choice("S M L XL".split())
            if k == "Size"
            else v.replace("{sku}", d.sku).replace("{colour}", colour),
        )
        for k, v in fam["spec"]
    ]
    d.rating = round(rng.uniform(3.4, 4.9), 1)
    d.reviews = [
        (
            rng.randint(3, 5),
            "%s %s." % (rng.choice(FIRST_NAMES), rng.choice(LEX.surnames)[0]),
            long_date(BASE - timedelta(days=rng.randint(5, 400))),
            " ".join(w.sentence() for _ in range(rng.randint(1, 3))),
        )
        for _ in range(rng.randint(0, 4))
    ]
    d.path = (
        "/products/%s" % slugify(d.title)
        if s.key == "pinecrest"
        else "/item/%s/%s" % (d.sku.lower(), slugify(d.title))
    )


def make_docpage(d, rng, s):
    w = d.writer = Writer(rng, d.topic)
    d.section = rng.choice(s.sections)
    a, b, v = w.noun(), w.noun(), w.pick(LEX.verbs)
    d.title = rng.choice(
        [
            "Configuring %s %s" % (a, plural(b)),
            "How to %s a %s" % (v, a),
            "The %s API" % a,
            "Troubleshooting %s errors" % a,
            "Working with %s" % plural(a),
            "%s settings" % a,
        ]
    )
    d.title = d.title[0].upper() + d.title[1:]
    d.paras, d.dek = w.paragraphs(rng.randint(250, 750), 2, 5), w.sentence()
    d.heads = {k: w.bare_np().capitalize() for k in range(1, len(d.paras), 2)}
    d.code = {}
    for k in range(2, len(d.paras), 3):
        a, b = w.noun(), w.noun()
        d.code[k] = rng.choice(
            [
                'from quillstack import Client\n\nclient = Client(api_key="YOUR_API_KEY", region="eu-west-1")\nresult = '
                'client.%s.%s(name="%s", timeout=%d)\nprint(result.status)'
                % (plural(a), w.pick(LEX.verbs), b, rng.randint(5, 120)),
                "$ quill %s --%s %s.yaml\n%s: ok (%d ms)"
                % (w.pick(LEX.verbs), a, b, plural(a), rng.randint(3, 900)),
                '%s:\n  %s: true\n  max_%s: %d\n  %s: "%s"'
                % (a, b, plural(a), rng.randint(2, 64), w.noun(), w.noun()),
            ]
        )
    d.path = "/%s/%s" % (slugify(d.section), slugify(d.title))


def edited(paras, edit):
    """Copy of the paragraphs with sentence edit=(paragraph, sentence, new_text) replaced."""
    paras = [list(p) for p in paras]
    if edit:
        paras[edit[0]][edit[1]] = edit[2]
    return paras


def make_comments(w, rng, n):
    """n reader comments: (name, date, text), 8-150 words each (median ~25)."""
    out = []
    for _ in range(n):
        n_words = min(150, max(8, int(rng.lognormvariate(3.2, 0.7))))
        text, count = [], 0
        while count < n_words:
            text.append(w.sentence())
            count += text[-1].count(" ") + 1
        out.append(
            (
                "%s %s" % (rng.choice(FIRST_NAMES), rng.choice(LEX.surnames))
                if rng.random() < 0.6
                else "%s%d" % (rng.choice(LEX.nouns), rng.randint(1, 999)),
                rng.randint(1, 30),
                " ".join(text),
            )
        )
    return out


def author_bio(s, name):
    """The same bio under every article of one author on one site."""
    w = Writer(random.Random("bio-%s-%s" % (s.key, name)), s.topics[0])
    return " ".join(w.sentence() for _ in range(3))


def article_extras(d, s):
    """What the CMS puts inside the article container after the text: author box, related list, comment thread."""
    out = []
    if d.author_box:
        out.append(
            '<div class="author-box"><img src="/media/authors/%s.jpg" alt="" width="96" height="96"><p><strong>'
            "About %s</strong> %s</p></div>\n" % (slugify(d.author), d.author, author_bio(s, d.author))
        )
    if d.related:
        out.append('<div class="related-articles"><h3>Read more</h3>%s</div>\n' % links(d.related))
    if d.comments:
        out.append(
            '<section id="comments" class="comments"><h2>%d comments</h2><ol class="comment-list">%s</ol>'
            "</section>\n"
            % (
                len(d.comments),
                "".join(
                    '<li class="comment depth-1" id="comment-%d-%d" data-comment-id="%d%03d"><article class='
                    '"comment-card"><footer class="comment-meta"><div class="comment-avatar"><img src="/avatars/%s'
                    '.png" alt="" width="48" height="48" loading="lazy" class="avatar avatar-48 photo"></div><div '
                    'class="comment-metadata"><span class="comment-author fn">%s</span> <time datetime="P%dD">%d '
                    'days ago</time></div></footer><div class="comment-body"><p>%s</p></div><div class="comment-'
                    'actions"><button class="vote up" data-action="upvote" aria-label="Upvote"><svg width="16" '
                    'height="16"><use href="#icon-up"></use></svg></button> <button class="vote down" data-action='
                    '"downvote" aria-label="Downvote"><svg width="16" height="16"><use href="#icon-down"></use></svg>'
                    '</button> <a class="reply" href="#comment-%d-%d" rel="nofollow">Reply</a> <a class="report" '
                    'href="/report?c=%d%03d" rel="nofollow">Report</a></div></article></li>'
                    % (d.id, i, d.id, i, slugify(name), name, days, days, text, d.id, i, d.id, i)
                    for i, (name, days, text) in enumerate(d.comments)
                ),
            )
        )
    return "".join(out)


def main_article(d, s, edit=None, inject=None, attribution="", extras=True, cut=None, gate=None):
    """The article container's content; `extras`: the site's own author box, related list and comments (a copy
    on another site has none); `cut`: only the first `cut` paragraphs and a link to the rest, or with `gate`
    (HTML) that gate in place of the rest (a paywall or login wall's teaser)."""
    sem, date = s.style != "divsoup", long_date(d.date)
    out = [
        attribution,
        '<h1 class="headline">%s</h1>\n<p class="standfirst">%s</p>\n' % (d.title, d.dek),
        '<div class="byline">By <a rel="author" href="/author/%s">%s</a> &middot; <time datetime="%s">%s</time>'
        "</div>" % (slugify(d.author), d.author, d.date.strftime("%Y-%m-%d"), date)
        if sem
        else '<div class="meta">By <a href="/author/%s">%s</a> | <span class="date">%s</span></div>'
        % (slugify(d.author), d.author, date),
        '\n<figure><img src="/media/%d.jpg" alt="" width="1200" height="675"><figcaption>%s Photo: %s</figcaption>'
        "</figure>\n" % (d.id, d.caption, d.author),
    ]
    if d.series:
        out.append(
            "<p>Good morning. Here is what you need to know to start your day in the harbor region, from the "
            "council chamber to the waterfront, in about five minutes.</p>\n"
        )
    for k, p in enumerate(edited(d.paras, edit)[:cut]):
        out.append(("<h2>%s</h2>\n" % d.subheads[k] if k in d.subheads else "") + "<p>%s</p>\n" % " ".join(p))
        if inject and k == inject[0]:
            out.append(inject[1])
    if gate is not None:
        out.append(gate)
        return "".join(out)
    if cut is not None:
        out.append(
            '<p class="read-more">Continue reading at <a href="%s">%s</a>.</p>\n' % (d.url, d.site.name)
        )
        return "".join(out)
    if d.series:
        out.append(
            "<p>That's it for today's briefing. Have a tip or a question? Write to us at briefing@harborledger"
            ".com, and sign up to get the Morning Briefing in your inbox every weekday at 6 a.m.</p>\n"
        )
    if d.disclaimer:
        out.append('<p class="disclaimer"><strong>Disclaimer:</strong> %s</p>\n' % DISCLAIMER)
    out.append(
        '<div class="tags">Filed under: %s</div>\n'
        % ", ".join('<a href="/tag/%s">%s</a>' % (slugify(t), t) for t in d.tags)
    )
    if PROFILE["bulk"] and s.kind == "news":
        out.append(MEMBERSHIP_BOX % {"site": s.name})
    if extras:
        out.append(article_extras(d, s))
    return "".join(out)


def main_product(d, s, price=None, region=None, inject=None):
    cur, fx = REGIONS[region][:2] if region else ("USD", 1.0)
    p = price or d.price
    p = max(1, round(p * fx)) - (0.05 if cur == "EUR" else 0.01) if region else p
    sec = "section" if s.style != "divsoup" else "div"
    rev = "".join(
        '<div class="review"><div class="stars" aria-label="%d out of 5">%s</div><p class="review-meta">%s '
        "&middot; Verified purchase &middot; %s</p><p>%s</p></div>\n"
        % (r[0], "\u2605" * r[0] + "\u2606" * (5 - r[0]), r[1], r[2], r[3])
        for r in d.reviews
    )
    return "".join(
        (
            '<nav class="breadcrumb"><a href="/">Home</a> / <a href="/collections/%s">%s</a> / <span>%s</span></nav>\n'
            '<div class="gallery"><img src="https://cdn.%s/img/%s-1.jpg" alt="%s" width="800" height="800"><img src='
            '"https://cdn.%s/img/%s-2.jpg" alt="" width="120" height="120"></div>\n'
            % (slugify(d.section), d.section, d.title, s.domain, d.sku, d.title, s.domain, d.sku),
            '<h1 itemprop="name">%s</h1>\n<div class="rating">%.1f out of 5 (%d reviews) &middot; SKU %s</div>\n'
            '<p class="price"><span itemprop="price" content="%.2f">%s</span> <span class="currency">%s</span></p>\n'
            % (d.title, d.rating, len(d.reviews), d.sku, p, fmt_price(p, cur), cur),
            '<form class="add-to-cart" method="post" action="/cart/add"><input type="hidden" name="product_id" value="%d">'
            '<input type="hidden" name="authenticity_token" value="%%%%CSRF%%%%"><label>Qty <input type="number" name="qty"'
            ' value="1" min="1"></label> <button type="submit">Add to cart</button></form>\n' % d.id,
            '<ul class="highlights">%s</ul>\n' % "".join("<li>%s</li>" % b for b in d.bullets),
            '<%s class="description"><h2>Description</h2>%s</%s>\n'
            % (sec, "".join("<p>%s</p>" % " ".join(x) for x in d.desc), sec),
            inject[1] if inject else "",
            '<%s class="series"><h2>About the %s series</h2><p>%s</p></%s>\n'
            % (sec, d.family["name"], d.family["blurb"], sec),
            '<%s class="specs"><h2>Specifications</h2><table class="spec-table"><tbody>%s</tbody></table></%s>\n'
            % (sec, "".join("<tr><th>%s</th><td>%s</td></tr>" % kv for kv in d.spec), sec),
            '<%s class="shipping"><h2>Shipping &amp; returns</h2>%s</%s>\n'
            % (
                sec,
                SHIPPING.format(
                    free=fmt_price(50 if cur == "USD" else 45, cur), days=30 if s.key == "pinecrest" else 14
                ),
                sec,
            ),
            '<%s class="reviews"><h2>Customer reviews</h2>%s</%s>'
            % (sec, rev or "<p>No reviews yet. Be the first to review this product.</p>", sec),
        )
    )


def main_docs(d, s, edit=None, inject=None):
    out = [
        '<nav class="breadcrumbs"><a href="/">Docs</a> &rsaquo; <a href="/%s/">%s</a></nav>\n<h1>%s</h1>\n<p class='
        '"lead">%s</p>\n' % (slugify(d.section), d.section, d.title, d.dek)
    ]
    for k, p in enumerate(edited(d.paras, edit)):
        if k in d.heads:
            out.append('<h2 id="%s">%s</h2>\n' % (slugify(d.heads[k]), d.heads[k]))
        out.append("<p>%s</p>\n" % " ".join(p))
        if k in d.code:
            out.append(
                '<pre><code class="language-%s">%s</code></pre>\n'
                % ("python" if "import" in d.code[k] else "text", d.code[k])
            )
        if k == 1:
            out.append(
                '<div class="admonition note"><p class="admonition-title">Note</p><p>%s</p></div>\n' % d.dek
            )
        if inject and k == inject[0]:
            out.append(inject[1])
    out.append(
        '<p class="edit-link"><a href="https://github.com/quillstack/docs/edit/main%s.md">Edit this page</a></p>'
        % d.path
    )
    return "".join(out)


MAIN = {"article": main_article, "product": main_product, "docs": main_docs}


# ---------------------------------------------------------------------------------------------
# the crawl
# ---------------------------------------------------------------------------------------------
VARIANT_WEIGHTS = {
    "utm_mirror": 16,
    "scheme_twin": 7,
    "www_twin": 7,
    "trailing_slash": 7,
    "refetch_noise": 16,
    "exact_refetch": 6,
    "stale_recrawl": 10,
    "regional_mirror": 8,
    "syndicated": 8,
    "print_version": 7,
    "noise_in_content": 8,
    "syndicated_partial": 4,
}
ELIGIBLE = {
    "www_twin": lambda d: d.site.kind != "docs",
    "regional_mirror": lambda d: d.type == "product",
    "syndicated": lambda d: d.type == "article",
    "syndicated_partial": lambda d: d.type == "article",
    "print_version": lambda d: d.type != "product",
}
TRACKING = [
    "utm_source=newsletter&utm_medium=email&utm_campaign=weekly_digest",
    "gclid=%s",
    "fbclid=%s",
    "utm_source=twitter&utm_medium=social",
    "utm_source=facebook&utm_medium=social&utm_campaign=spring26",
    "utm_source=google&utm_medium=cpc&utm_term=%s",
    "utm_source=partner&utm_medium=referral&ref=%s",
]

DEGENERATE = {  # kind: (title, possible statuses, main-content HTML)
    "soft404": (
        "Page not found",
        [200, 200, 200, 404],
        '<div class="error-page"><h1>Page not found</h1><p>Sorry, the '
        "page you requested could not be found. It may have been moved, renamed or deleted, or the link you "
        'followed may be out of date.</p><p>Try searching %site or go back to the <a href="/">homepage</a>.'
        "</p></div>",
    ),
    "access_denied": (
        "Access denied",
        [403, 403, 200],
        '<div class="error-page"><h1>Access denied</h1><p>403 '
        "Forbidden: you don't have permission to access this page on this server.</p><p>If you believe "
        "this is an error, contact support and quote reference #%ref.</p></div>",
    ),
    "loading": (
        "Loading\u2026",
        [200],
        '<div id="app-root"><div class="spinner" aria-busy="true"></div><p>Loading... '
        "please enable JavaScript to view this page.</p><noscript>This site requires JavaScript. Please enable "
        "JavaScript in your browser settings and reload the page.</noscript></div>"
        '<script src="/static/js/app.%ref.js"></script>',
    ),
}
REMOVED = (
    '<div class="notice"><h1>This article has been removed</h1><p>The article you are looking for has been '
    "removed by our editors or has expired. Stories on %site stay online for a limited time.</p><p>Browse the "
    'latest stories on the <a href="/">homepage</a>.</p></div>'
)
# Consent walls: the interstitial a consent platform serves instead of the page (lang: heading, text, buttons).
CONSENT = {
    "en": (
        "Before you continue to %site",
        "We use cookies and data to deliver and maintain our services, measure "
        "audience engagement and site statistics to understand how our services are used, and show personalised "
        "content and ads depending on your settings.",
        "Reject all|Accept all|More options",
    ),
    "en-tcf": (
        "We value your privacy",
        "We and our 142 partners store and access information on your device, such "
        "as cookies, and process personal data, such as unique identifiers, for personalised ads and content, "
        "ad and content measurement and audience insights.",
        "Disagree|Agree|Manage options",
    ),
    "de": (
        "Bevor Sie zu %site weitergehen",
        "Wir verwenden Cookies und Daten, um unsere Dienste bereitzustellen und "
        "zu betreiben, Zielgruppeninteraktionen und Websitestatistiken zu messen und personalisierte Inhalte und "
        "Werbung je nach Ihren Einstellungen anzuzeigen.",
        "Alle ablehnen|Alle akzeptieren|Weitere Optionen",
    ),
    "fr": (
        "Avant d'accéder à %site",
        "Nous utilisons des cookies et des données pour fournir et gérer nos services, "
        "mesurer l'audience et les statistiques du site, et afficher des contenus et des annonces personnalisés "
        "selon vos paramètres.",
        "Tout refuser|Tout accepter|Plus d'options",
    ),
    "es": (
        "Antes de ir a %site",
        "Usamos cookies y datos para ofrecer y mantener nuestros servicios, medir la "
        "interacción de la audiencia y las estadísticas del sitio, y mostrar contenido y anuncios personalizados "
        "según tu configuración.",
        "Rechazar todo|Aceptar todo|Más opciones",
    ),
    "it": (
        "Prima di continuare su %site",
        "Utilizziamo cookie e dati per fornire e gestire i nostri servizi, "
        "misurare il coinvolgimento del pubblico e le statistiche del sito, e mostrare contenuti e annunci "
        "personalizzati in base alle tue impostazioni.",
        "Rifiuta tutto|Accetta tutto|Altre opzioni",
    ),
    "nl": (
        "Voordat je verdergaat naar %site",
        "We gebruiken cookies en gegevens om onze services te leveren en te "
        "onderhouden, het publieksbereik en sitestatistieken te meten, en gepersonaliseerde content en "
        "advertenties te tonen op basis van je instellingen.",
        "Alles afwijzen|Alles accepteren|Meer opties",
    ),
    "pt": (
        "Antes de continuar para %site",
        "Utilizamos cookies e dados para fornecer e manter os nossos serviços, "
        "medir o envolvimento do público e as estatísticas do site, e mostrar conteúdo e anúncios personalizados "
        "consoante as suas definições.",
        "Rejeitar tudo|Aceitar tudo|Mais opções",
    ),
    "pl": (
        "Zanim przejdziesz do %site",
        "Używamy plików cookie i danych, aby dostarczać nasze usługi i dbać o nie, "
        "mierzyć zaangażowanie odbiorców i statystyki witryny oraz wyświetlać spersonalizowane treści i reklamy w "
        "zależności od Twoich ustawień.",
        "Odrzuć wszystko|Zaakceptuj wszystko|Więcej opcji",
    ),
}
CONSENT_PAGE = """<!DOCTYPE html>
<html lang="%(lang)s"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(heading)s</title><style>body{font-family:Arial,sans-serif;background:#f1f3f4}.wall{max-width:560px;
margin:8vh auto;background:#fff;border-radius:8px;padding:32px}button{margin:4px;padding:8px 16px}</style></head>
<body><div class="wall" role="dialog" aria-modal="true"><img src="/static/logo.svg" alt="%(site)s" width="120">
<h1>%(heading)s</h1><p>%(text)s</p><form method="post" action="/consent/save"><input type="hidden" name="continue"
value="%(url)s"><input type="hidden" name="consent_token" value="%(token)s">%(buttons)s</form></div>
<script>window.__cmp={"v":2,"token":"%(token)s"};</script></body></html>
"""

# Real-size profiles: a news site's box under every free article, inside the article container (so in its main
# text): the words of a paywall's offer on a page that is content.
MEMBERSHIP_BOX = (
    '<div class="membership-cta"><h3>Support local journalism</h3><p>Enjoy unlimited access to %(site)s, the app '
    "and the daily newsletter from $1 a week. Already a subscriber? Log in to manage your account.</p></div>\n"
)
# Paywall and login walls served at an article's URL inside the site's own template, in place of the article
# after its first lines (lang: heading, offer, the line under the buttons). Each heading is a gate's usual
# wording (neardup.normalize._PAYWALL_GATE, _LOGIN).
GATES = {
    "paywall": {
        "en": (
            "Subscribe to continue reading",
            "Get unlimited digital access to %site for $1 a week for the first three months, then $4 a week. "
            "Includes the app, the e-paper and every newsletter. Cancel anytime.",
            "Already a subscriber? Log in",
        ),
        "en-meter": (
            "You have reached your limit of free articles",
            "Subscribe now for unlimited access to award-winning local journalism, the puzzles and the daily "
            "briefing. Plans start at $1 for your first month.",
            "Already a subscriber? Sign in",
        ),
        "de": (
            "Jetzt weiterlesen mit %site Plus",
            "Alle Artikel auf %site lesen: die ersten vier Wochen für 1 Euro, danach 9,99 Euro im Monat. "
            "Jederzeit kündbar.",
            "Sie sind bereits Abonnent? Hier anmelden",
        ),
        "fr": (
            "Cet article est réservé aux abonnés",
            "Il vous reste 78 % de cet article à lire. Abonnez-vous pour lire la suite : 1 euro le premier mois, "
            "sans engagement.",
            "Vous êtes déjà abonné ? Connectez-vous",
        ),
        "es": (
            "Este contenido es exclusivo para suscriptores",
            "Suscríbete para seguir leyendo: acceso ilimitado a %site por 1 euro el primer mes. Cancela cuando "
            "quieras.",
            "¿Ya eres suscriptor? Inicia sesión",
        ),
        "it": (
            "Questo articolo è riservato agli abbonati",
            "Abbonati per continuare a leggere: accesso illimitato a %site a 1 euro per il primo mese. Disdici "
            "quando vuoi.",
            "Sei già abbonato? Accedi",
        ),
        "nl": (
            "Dit artikel is alleen voor abonnees",
            "Word abonnee om verder te lezen: onbeperkt toegang tot %site voor 1 euro per week. Maandelijks "
            "opzegbaar.",
            "Ben je al abonnee? Log in",
        ),
        "pt": (
            "Este conteúdo é exclusivo para assinantes",
            "Assine para continuar lendo: acesso ilimitado ao %site por 1,90 no primeiro mês. Cancele quando "
            "quiser.",
            "Já é assinante? Entre",
        ),
        "pl": (
            "Ten artykuł jest dostępny tylko dla subskrybentów",
            "Wykup subskrypcję, aby czytać dalej: nieograniczony dostęp do %site za 1 zł przez pierwszy miesiąc.",
            "Masz już subskrypcję? Zaloguj się",
        ),
    },
    "login": {
        "en": (
            "Log in to continue reading",
            "Sign in with your %site account to read the rest of this story. It is free and takes less than a "
            "minute.",
            "Don't have an account? Register. Forgot your password?",
        ),
        "en-register": (
            "Create a free account to continue reading",
            "Register with your email address to read this story and get five free articles every month.",
            "Already registered? Sign in",
        ),
        "de": (
            "Melden Sie sich an, um weiterzulesen",
            "Mit Ihrem kostenlosen %site-Konto lesen Sie diesen Artikel ganz und erhalten unseren Newsletter.",
            "Noch kein Konto? Jetzt registrieren. Passwort vergessen?",
        ),
        "fr": (
            "Connectez-vous pour lire la suite",
            "Créez gratuitement votre compte %site pour lire cet article en entier.",
            "Pas encore de compte ? Inscrivez-vous. Mot de passe oublié ?",
        ),
        "es": (
            "Inicia sesión para seguir leyendo",
            "Regístrate gratis en %site para leer esta noticia completa.",
            "¿No tienes cuenta? Regístrate. ¿Olvidaste tu contraseña?",
        ),
        "it": (
            "Accedi per continuare a leggere",
            "Registrati gratuitamente a %site per leggere l'articolo completo.",
            "Non hai un account? Registrati. Password dimenticata?",
        ),
        "nl": (
            "Log in om verder te lezen",
            "Maak gratis een %site-account aan om dit artikel helemaal te lezen.",
            "Nog geen account? Registreer je. Wachtwoord vergeten?",
        ),
        "pt": (
            "Faça login para continuar",
            "Cadastre-se gratuitamente no %site para ler a matéria completa.",
            "Não tem conta? Cadastre-se. Esqueceu a senha?",
        ),
        "pl": (
            "Zaloguj się, aby czytać dalej",
            "Załóż bezpłatne konto w %site, aby przeczytać cały artykuł.",
            "Nie masz konta? Zarejestruj się. Nie pamiętasz hasła?",
        ),
    },
}
# The gate's box as sites mark it up (a class main extraction keeps: the prompt is in the page's main text).
GATE_BOX = {
    "paywall": [
        '<div class="paywall" id="gateway-content"><h2>%(heading)s</h2><p>%(offer)s</p><form method="post" '
        'action="/subscribe/checkout"><input type="hidden" name="offer" value="%(token)s"><button type="submit">'
        "Subscribe</button></form><p>%(under)s</p></div>\n",
        '<section class="article-gate meter-wall" data-gate="hard"><p class="gate-title"><strong>%(heading)s</strong>'
        '</p><p>%(offer)s</p><p><a class="button" href="/offers?ref=gate">See the offers</a></p><p>%(under)s</p>'
        "</section>\n",
    ],
    "login": [
        '<div class="regwall" id="registration-wall"><h2>%(heading)s</h2><p>%(offer)s</p><form method="post" '
        'action="/account/signin"><label>Email <input type="email" name="email"></label><label>Password <input '
        'type="password" name="password"></label><input type="hidden" name="continue" value="%(token)s"><button '
        'type="submit">Continue</button></form><p>%(under)s</p></div>\n',
        '<div class="article-locked"><p class="locked-title"><strong>%(heading)s</strong></p><p>%(offer)s</p>'
        '<p><a class="button" href="/account/signin?next=%(token)s">Continue</a></p><p>%(under)s</p></div>\n',
    ],
}


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _thread(share, mu, sigma, cap):
    """Comment count of an article: none with probability 1 - share, else lognormal(mu, sigma) capped."""
    return lambda rng: min(cap, int(rng.lognormvariate(mu, sigma))) if rng.random() < share else 0


# --profile: `sample` pages are ~12 KB; `realsize` pages carry what real pages weigh (inline CSS and scripts,
# JSON-LD, an SVG sprite, a mega-menu, a consent-platform config, page-state JSON) and longer comment threads:
# median ~90 KB, p90 ~300 KB, as measured on 19,760 real crawled pages (issue 15).
# `realtail`: the realsize crawl with the heavier inline-script tail of the real pages (median ~95 KB, mean
# ~150 KB, p90 ~300 KB, p99 ~1 MB): the page weight the throughput target is stated at.
# "script": the inlined bundle's bytes, lognormal(mu, sigma) capped.
PROFILES = {
    "sample": {"comments": _thread(0.25, 2.5, 1.0, 150), "bulk": False},
    "realsize": {"comments": _thread(0.6, 3.2, 1.3, 300), "bulk": True, "script": (8.3, 1.8, 1.2e6)},
    "realtail": {"comments": _thread(0.6, 3.2, 1.3, 300), "bulk": True, "script": (9.8, 1.7, 1.5e6)},
}
PROFILE = PROFILES["sample"]


# How heavy each site's template is (1: a typical news template): light blogs and docs to heavy news and stores.
TEMPLATE_WEIGHT = {
    "ledger": 1.6,
    "courier": 1.0,
    "kettle": 0.2,
    "bench": 0.3,
    "pinecrest": 1.3,
    "voltbarn": 0.9,
    "quill": 0.4,
}


def css_rule(r):
    return ".%s-%s{%s}" % (
        r.choice(LEX.nouns),
        r.choice(["wrap", "item", "grid", "card", "btn", "icon"]),
        ";".join(
            "%s:%s"
            % (
                r.choice(
                    ["margin", "padding", "color", "display", "flex", "font-size", "border", "gap", "z-index"]
                ),
                r.choice(
                    ["0", "4px 8px", "#%06x" % r.getrandbits(24), "none", "1 1 auto", "1.125rem", "auto"]
                ),
            )
            for _ in range(r.randint(2, 6))
        ),
    )


class SiteBulk:
    """A site's fixed page weight (the same on every page of the site): inline CSS, SVG sprite, mega-menu, and a
    consent platform's vendor list on the heavier templates."""

    def __init__(self, s):
        r, x = random.Random("bulk-" + s.key), TEMPLATE_WEIGHT[s.key]
        w = Writer(r, s.topics[0])
        self.css = "<style>%s</style>\n" % "\n".join(css_rule(r) for _ in range(int(300 * x)))
        self.svg = '<svg xmlns="http://www.w3.org/2000/svg" style="display:none">%s</svg>\n' % "".join(
            '<symbol id="icon-%s" viewBox="0 0 24 24"><path d="%s"/></symbol>'
            % (
                r.choice(LEX.nouns),
                " ".join(
                    "M%d %dL%d %d" % tuple(r.randint(0, 24) for _ in range(4))
                    for _ in range(r.randint(4, 30))
                ),
            )
            for _ in range(int(40 * x))
        )
        cols = "".join(
            '<div class="mega-col"><h4>%s</h4>%s</div>'
            % (
                title_case(w.bare_np()),
                links(
                    [
                        (title_case(w.bare_np()), "/%s/%s" % (slugify(sec), slugify(w.bare_np())))
                        for _ in range(r.randint(6, 14))
                    ]
                ),
            )
            for sec in s.sections
            for _ in range(max(1, round(3 * x)))
        )
        tag = "nav" if s.style == "semantic" else "div"
        self.menu = '<%s class="mega-menu" aria-label="All sections">%s</%s>\n' % (tag, cols, tag)
        vendors = [
            {
                "id": i,
                "name": "%s %s"
                % (
                    title_case(r.choice(LEX.nouns)),
                    r.choice(["Media", "Ads", "Analytics", "Group", "Ltd", "Inc"]),
                ),
                "purposes": sorted(r.sample(range(1, 11), r.randint(1, 6))),
                "policyUrl": "https://%s.example/privacy" % slugify(r.choice(LEX.nouns)),
            }
            for i in range(int(100 * x))
        ]
        self.cmp = (
            (
                "<script>window.__tcfapi_config=%s;</script>\n"
                % json.dumps({"vendors": vendors}, separators=(",", ":"))
            )
            if x >= 1.3
            else ""
        )
        # minified bundle chunks, inlined a different number per page
        self.modules = [
            "!function(e,t){%s}(window,document);"
            % ";".join(
                "var %s=function(%s){return %s.%s(%d)}"
                % (
                    r.choice(LEX.nouns)[:3] + str(i),
                    "a,b",
                    r.choice("abcn"),
                    r.choice(LEX.verbs),
                    r.randint(0, 9999),
                )
                for i in range(60)
            )
            for _ in range(30)
        ]


BULK = {}


def add_bulk(html, s, P, nz):
    """Real-size page weight around a rendered page: the site's fixed bulk, a JSON-LD graph and page-state JSON
    (page props, ad and experiment config) and inlined bundle chunks (lognormal sizes with a long tail)."""
    b = BULK.get(s.key) or BULK.setdefault(s.key, SiteBulk(s))
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            P["ld"],
            {
                "@type": "BreadcrumbList",
                "itemListElement": [
                    {"@type": "ListItem", "position": i + 1, "name": t, "item": u}
                    for i, (t, u) in enumerate(P["related"])
                ],
            },
            {"@type": "Organization", "name": s.name, "logo": "https://cdn.%s/logo.png" % s.domain},
        ],
    }
    state = {
        "props": {
            "page": P["url"],
            "title": P["title"],
            "body": P["desc"],
            "related": P["related"],
            "ads": [
                {
                    "slot": "div-gpt-%x" % nz.getrandbits(32),
                    "sizes": [[300, 250], [728, 90]],
                    "targeting": {"kw": "%x" % nz.getrandbits(64)},
                }
                for _ in range(int(nz.lognormvariate(3.0, 1.7)))
            ],
        },
        "buildId": "%x" % nz.getrandbits(48),
    }
    head = (
        b.css
        + b.cmp
        + '<script type="application/ld+json">%s</script>\n' % json.dumps(graph, separators=(",", ":"))
    )
    html = html.replace("</head>", head + "</head>", 1)
    body = html.index(">", html.index("<body")) + 1
    html = html[:body] + "\n" + b.svg + b.menu + html[body:]
    tail = '<script id="__NEXT_DATA__" type="application/json">%s</script>\n' % json.dumps(
        state, separators=(",", ":")
    )
    mu, sigma, cap = PROFILE["script"]  # realsize: median ~4 KB, p90 ~40 KB, p99 ~270 KB
    chunks, want = [], min(cap, nz.lognormvariate(mu, sigma))
    while sum(map(len, chunks)) < want:
        chunks.append(nz.choice(b.modules))
    tail += "<script>%s</script>\n" % "".join(chunks)
    return html.replace("</body>", tail + "</body>", 1)


class Crawl:
    """Builds self.records: (fetch time, seq, record dict, true_cluster, kind), in output order."""

    def __init__(self, seed, pages, profile="sample"):
        global PROFILE
        PROFILE = PROFILES[profile]
        self.rng = random.Random(seed)
        n_deg, n_dup = round(pages * 0.025), max(round(pages * 0.17), len(VARIANT_WEIGHTS))
        # real-size profiles: paywall and login walls at articles' URLs besides (their own rng: the sample's
        # bytes do not change)
        n_gate = round(pages * 0.015) if PROFILE["bulk"] else 0
        self.records = []
        self.docs = self.make_docs(pages - n_deg - n_dup - n_gate)
        for d in self.docs:
            self.emit(d.ts, self.render(d, d.url, d.ts), "c%d" % d.id, "original")
        kinds = list(VARIANT_WEIGHTS)  # every kind at least once, then by weight
        for kind in kinds + self.rng.choices(kinds, list(VARIANT_WEIGHTS.values()), k=n_dup - len(kinds)):
            self.variant(self.rng.choice([d for d in self.docs if ELIGIBLE.get(kind, bool)(d)]), kind)
        for _ in range(n_deg):
            self.degenerate()
        grng = random.Random("gates-%d" % seed)
        for i in range(n_gate):
            self.gate(grng, "paywall" if i % 5 < 3 else "login")
        # per-day, per-site crawl batches (registered domain), time order inside a batch
        self.records.sort(
            key=lambda r: (r[0].date(), ".".join(r[2]["url"].split("/")[2].split(".")[-2:]), r[:2])
        )

    def emit(self, ts, rec, cluster, kind):
        self.records.append((ts, len(self.records), rec, cluster, kind))

    def make_docs(self, n):
        rng, docs, used = self.rng, [], set()
        weighted = [s for s in SITES for _ in range(s.weight)]
        families = {s.key: [] for s in SITES}
        for i in range(n):
            d = Doc()
            d.id, d.site = i, rng.choice(weighted)
            s, drng = d.site, random.Random(rng.getrandbits(64))
            d.topic, d.canon = drng.choice(s.topics), drng.random() < s.canon
            d.ts = BASE + timedelta(seconds=rng.randrange(14 * 86400))
            d.type = {"store": "product", "docs": "docs"}.get(s.kind, "article")
            if d.type == "product":
                fams = families[s.key]
                if not fams or fams[-1]["left"] == 0:  # start a new family of 2-7 siblings
                    fams.append(make_family(random.Random(rng.getrandbits(64)), s))
                fam = fams[-1] if rng.random() < 0.8 else rng.choice(fams)
                fam["left"] = max(0, fam["left"] - 1)
                make_product(d, drng, s, fam)
            elif d.type == "docs":
                make_docpage(d, drng, s)
            else:
                back = drng.choice([0, 0, 0, 1, 2, 7, 30, 200])
                make_article(d, drng, s, (d.ts - timedelta(days=back)).replace(hour=0, minute=0, second=0))
            while d.path in used:  # keep URLs unique, like a CMS would
                d.path += "-2"
            used.add(d.path)
            d.url, d.drng = s.url(d.path), drng
            s.pool.append((d.title, d.path))
            docs.append(d)
        for s in SITES:  # the "trending" widget rotates through these
            s.popular = [(t, s.url(p)) for t, p in rng.sample(s.pool, min(12, len(s.pool)))]
        for d in docs:  # stable "related" widget per document
            pool = d.site.pool
            d.related = [
                (t, d.site.url(p)) for t, p in d.drng.sample(pool, min(5, len(pool))) if p != d.path
            ][:4]
        return docs

    def render(self, d, url, ts, status=200, site=None, main=None, canonical="auto", lang="en", **edits):
        """Full HTML fetch record for document d at url, inside site's (default: its own) template."""
        s, nz, t = site or d.site, random.Random(self.rng.getrandbits(64)), iso(ts)
        ld_type = {"article": "NewsArticle", "product": "Product", "docs": "TechArticle"}.get(
            d.type, "WebPage"
        )
        ld = {"@context": "https://schema.org", "@type": ld_type, "name": d.title}
        if d.type == "article":
            ld.update(datePublished=d.date.strftime("%Y-%m-%d"), author={"@type": "Person", "name": d.author})
        elif d.type == "product":
            ld.update(sku=d.sku, brand=d.site.name)
        P = {
            "title": d.title,
            "ptype": d.type,
            "url": url,
            "lang": lang,
            "ld": ld,
            "desc": " ".join(d.paras[0]),
            "main": MAIN[d.type](d, s, **edits) if main is None else main,
            "canonical": (d.url if d.canon else None) if canonical == "auto" else canonical,
            "related": d.related if s is d.site else [(t_, s.url(p)) for t_, p in nz.sample(s.pool, 4)],
        }
        if d.type == "product":
            P["hreflang"] = [("en-US", d.url)] + [
                (REGIONS[r][2], s.url(d.path, host=r + "." + s.domain)) for r in s.regions
            ]
        if d.type == "docs":
            P["toc"] = [(h, "#" + slugify(h)) for h in d.heads.values()]
        html = render_page(s, P, nz, t)
        return {
            "url": url,
            "html": add_bulk(html, s, P, nz) if PROFILE["bulk"] else html,
            "fetched_at": t,
            "status": status,
        }

    def variant(self, d, kind):
        rng, s, c = self.rng, d.site, "c%d" % d.id
        ts = d.ts + timedelta(seconds=rng.randint(86400, 9 * 86400))  # a later day than the original
        if kind == "utm_mirror":
            q = rng.choice(TRACKING)
            rec = self.render(
                d, s.url(d.path, query=q % ("%x" % rng.getrandbits(64)) if "%s" in q else q), ts
            )
        elif kind == "scheme_twin":
            rec = self.render(d, s.url(d.path, scheme="http"), ts)
        elif kind == "www_twin":
            rec = self.render(d, s.url(d.path, host=s.host[4:] if s.www else "www." + s.host), ts)
        elif kind == "trailing_slash":
            rec = self.render(d, s.url(d.path, slash=not s.slash), ts)
        elif kind == "refetch_noise":
            rec = self.render(d, d.url, ts)
        elif kind == "exact_refetch":
            rec = dict(next(r[2] for r in self.records if r[3] == c), fetched_at=iso(ts))
        elif kind == "stale_recrawl" and d.type == "product":
            rec = self.render(
                d, d.url, ts, price=round(d.price * rng.choice([0.8, 0.85, 0.9, 1.1, 1.15])) - 0.01
            )
        elif kind == "stale_recrawl":
            pi = rng.randrange(len(d.paras))
            rec = self.render(d, d.url, ts, edit=(pi, rng.randrange(len(d.paras[pi])), d.writer.sentence()))
        elif kind == "regional_mirror":
            reg = rng.choice(s.regions)
            url = s.url(d.path, host=reg + "." + s.domain)
            rec = self.render(d, url, ts, canonical=url, lang=REGIONS[reg][2], region=reg)
        elif kind in ("syndicated", "syndicated_partial"):
            host = rng.choice([x for x in SITES if x.kind in ("news", "blog") and x is not s])
            att = (
                '<p class="syndication-note"><em>This story was originally published by <a href="%s">%s</a> and is '
                "republished here with permission.</em></p>\n" % (d.url, s.name)
            )
            url = host.url(
                "/story/%d/%s" % (90000 + len(self.records), slugify(d.title))
                if host.key == "courier"
                else "/syndicated/" + slugify(d.title)
            )
            cut = (
                max(2, round(len(d.paras) * rng.uniform(0.4, 0.8))) if kind == "syndicated_partial" else None
            )
            rec = self.render(
                d,
                url,
                ts,
                site=host,
                main=main_article(d, host, attribution=att, extras=False, cut=cut),
                canonical=d.url if rng.random() < 0.5 else (url if host.canon else None),
            )
        elif kind == "print_version":
            url = s.url(d.path, query="print=1") if s.print_style == "query" else s.url("/print" + d.path)
            by = '<p class="byline">By %s, %s</p>\n' % (d.author, long_date(d.date)) if d.author else ""
            html = PRINT % {
                "title": d.title,
                "site": s.name,
                "url": d.url,
                "byline": by,
                "date": iso(ts)[:10],
                "body": "".join("<p>%s</p>\n" % " ".join(p) for p in d.paras),
            }
            rec = {"url": url, "html": html, "fetched_at": iso(ts), "status": 200}
        else:  # noise_in_content
            x = rng.random()
            if x < 0.4:
                box = (
                    '<div class="promo-inline"><strong>%s</strong> Use code SAVE%d at checkout &mdash; '
                    '<a href="/offers?src=inline">see the offer</a></div>\n'
                    % (rng.choice(s.banners), rng.randint(10, 30))
                )
            elif x < 0.75:
                box = '<div class="recommended-for-you"><h3>Recommended for you</h3>%s</div>\n' % links(
                    [(t, s.url(p)) for t, p in rng.sample(s.pool, 3)]
                )
            else:
                box = (
                    '<p class="session-link">Welcome back! <a href="/account/reading-list?sessionid=%032x">Continue '
                    'where you left off</a> or <a href="/logout?sid=%x">sign out</a>.</p>\n'
                    % (rng.getrandbits(128), rng.getrandbits(32))
                )
            rec = self.render(d, d.url, ts, inject=(rng.randrange(len(d.paras)), box))
        self.emit(ts, rec, c, kind)

    def degenerate(self):
        """A soft-404 / access-denied / JS-loading page in a real site template."""
        rng, d = self.rng, Doc()
        s = d.site = rng.choice([s for s in SITES for _ in range(s.weight)])
        kind = rng.choice(["soft404"] * 9 + ["access_denied"] * 6 + ["loading"] * 5 + ["consent"] * 3)
        if kind == "consent":
            return self.consent_wall(s)
        d.title, statuses, main = DEGENERATE[kind]
        if kind == "soft404" and rng.random() < 0.3:
            main = REMOVED
        d.id, d.type, d.canon, d.paras = -1, "error", False, [[d.title]]
        d.related = [(t, s.url(p)) for t, p in rng.sample(s.pool, 4)]
        if kind == "soft404":  # a plausible but dead link on this site
            d.path = rng.choice(s.pool)[1].rsplit("/", 1)[0] + "/" + slugify(Writer(rng, 0).headline())
        else:
            d.path = rng.choice(
                ["/account/orders", "/admin/", "/members/archive", "/wp-admin/"]
                if kind == "access_denied"
                else ["/app/saved", "/account/wishlist", "/live/updates"]
            )
        d.url, ts = s.url(d.path), BASE + timedelta(seconds=rng.randrange(20 * 86400))
        main = main.replace("%site", s.name).replace("%ref", "%x" % rng.getrandbits(40))
        rec = self.render(d, d.url, ts, status=rng.choice(statuses), main=main)
        self.emit(ts, rec, "deg-" + kind, "degenerate_" + kind)

    def gate(self, rng, kind):
        """A paywall or login wall at one of the articles' URLs (a later fetch than the article, or a URL variant
        of it), inside the site's own template: the article's headline, byline and first lines, then the gate.
        The teaser is part of the article, so it is contained in it."""
        d = rng.choice([d for d in self.docs if d.type == "article"])
        s, lang = d.site, rng.choice(sorted(GATES[kind]))
        heading, offer, under = (x.replace("%site", s.name) for x in GATES[kind][lang])
        box = rng.choice(GATE_BOX[kind]) % {
            "heading": heading,
            "offer": offer,
            "under": under,
            "token": "%016x" % rng.getrandbits(64),
        }
        # the first paragraph, or the first two or three (a teaser of 40-300 words)
        cut = rng.choice([1, 1, 2, 2, 3])
        ts = d.ts + timedelta(seconds=rng.randint(3600, 9 * 86400))
        url = rng.choice([d.url, d.url, s.url(d.path, query="utm_source=twitter&utm_medium=social")])
        rec = self.render(d, url, ts, main=main_article(d, s, cut=cut, gate=box), lang=lang[:2])
        self.emit(ts, rec, "deg-" + kind, "degenerate_" + kind)

    def consent_wall(self, s):
        """The consent interstitial a crawler got instead of one of the site's articles (status 200)."""
        rng = self.rng
        lang = rng.choice(sorted(CONSENT))
        heading, text, buttons = (x.replace("%site", s.name) for x in CONSENT[lang])
        url = s.url(rng.choice(s.pool)[1])
        ts = BASE + timedelta(seconds=rng.randrange(20 * 86400))
        html = CONSENT_PAGE % {
            "lang": lang[:2],
            "heading": heading,
            "text": text,
            "site": s.name,
            "url": url,
            "token": "%032x" % rng.getrandbits(128),
            "buttons": " ".join(
                '<button name="set" value="%d">%s</button>' % (i, b) for i, b in enumerate(buttons.split("|"))
            ),
        }
        self.emit(
            ts,
            {"url": url, "html": html, "fetched_at": iso(ts), "status": 200},
            "deg-consent",
            "degenerate_consent",
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=3000, help="number of records (default 3000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True, help="output .jsonl.gz")
    ap.add_argument("--truth", required=True, help="output truth CSV (url,true_cluster,kind)")
    ap.add_argument(
        "--profile",
        choices=sorted([*PROFILES, "bench"]),
        default="sample",
        help="sample: ~12 KB pages (the bundled sample); realsize: real pages' weight and comment threads; "
        "bench: the 16 KB bench crawl (scripts/bench_crawl.py), fast and in constant memory at any --pages",
    )
    a = ap.parse_args(argv)
    if a.pages < 100:
        ap.error("--pages must be at least 100 (every site needs a few documents)")
    if a.profile == "bench":
        from bench_crawl import write_crawl  # this script's folder is first on the path

        write_crawl(a.pages, a.seed, a.out, a.truth)
        return
    t0 = time.perf_counter()
    recs = Crawl(a.seed, a.pages, a.profile).records
    buf = io.BytesIO()
    level = 9 if a.profile == "sample" else 6  # realsize: ~0.7 GB of HTML per 5,000 pages
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=level, mtime=0) as gz:
        for r in recs:
            gz.write((json.dumps(r[2], ensure_ascii=False) + "\n").encode("utf-8"))
    for path in (a.out, a.truth):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(a.out, "wb") as f:
        f.write(buf.getvalue())
    with open(a.truth, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(
            [("url", "true_cluster", "kind")] + [(r[2]["url"], r[3], r[4]) for r in recs]
        )
    n, counts = len(recs), collections.Counter(r[4] for r in recs)
    print(
        "records=%d clusters=%d sites=%d lexicon_words=%d avg_html_bytes=%.0f gz_bytes=%d seconds=%.1f"
        % (
            n,
            len({r[3] for r in recs}),
            len(SITES),
            LEX.size,
            sum(len(r[2]["html"].encode()) for r in recs) / n,
            len(buf.getvalue()),
            time.perf_counter() - t0,
        )
    )
    for k, v in counts.most_common():
        print("  %-26s %5d  %5.1f%%" % (k, v, 100.0 * v / n))


if __name__ == "__main__":
    main()
