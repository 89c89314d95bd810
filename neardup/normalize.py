"""HTML -> main text and title; and the degenerate-page test.

Two modes, both parsed once by lexbor (vendored, compiled into `neardup._html`):
- `strip`: the classic recipe. Remove `nav, footer, script, style, form, header, aside, noscript,
  iframe, svg, template` (configurable) and hidden inputs, take the remaining text nodes, collapse
  whitespace. A test proves it gives the same words as BeautifulSoup does (`tests/oracles.py`).
- `main`: main-content extraction, which also drops boilerplate that sits inside the content area or in a
  `<div id="header">` template. Two extractors:
  - `neardup` (default): resiliparse's rules in C (`neardup/_html.c`: 1.1's public rules, changed where
    2.0.1 decides otherwise); it gives resiliparse 2.0.1's text on every page checked (the 3,000 of the
    sample, 6,000 of make_crawl's), at about a fifth of its cost.
  - `resiliparse`: resiliparse's own `extract_plain_text(main_content=True)`, the reference that tests
    compare the default with.
  Both leave reader comment threads out unless `comments=True` (Config.comments); neardup's comment rule is
  its own (`_html.c`, RE_COMMENTS), so the two may differ on pages with a thread.

A page over one of the parser's bounds (`neardup/_html.c`: more than 256 elements nested or 256 attributes on
one element, formatting elements re-opened without end; in main mode, more distinct class, id and style values
than its budget of pattern matching) is not parsed: its text is empty and it is degenerate, "page too complex".
resiliparse's extractor has tighter bounds besides (elements, their depths summed, distinct names: below). So
no page shape costs more than linear time on any path (bench/pathological.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import _html
from .config import DEFAULT_STRIP_TAGS, Config
from .short_texts import TOO_SHORT

# The extractor keeps only a heading of link-heavy listing pages; below this many words of main text
# the page is normalized by tag stripping instead (measured: 460 of 5,000 make_crawl pages).
MAIN_FALLBACK_WORDS = 50


TOO_COMPLEX = "page too complex"  # the degenerate reason of a page over the parser's bounds
# resiliparse's extractor walks each block element's subtree: its cost grows with the sum of the elements'
# depths, and a page reaches it only below this bound (measured: 0.94 CPU-s for 12.5M, 100 chains of 500
# nested divs; a 5 MB page of ordinary nesting sums to ~4M).
RESILIPARSE_MAX_DEPTH_SUM = 10_000_000
# and it costs ~5 us per element (5.4 CPU-s for 1,000,000 unclosed <p>s): at most this many.
RESILIPARSE_MAX_ELEMENTS = 150_000
# Its lexbor keeps the tag and attribute names HTML does not define in hash tables of a fixed size, so its cost
# grows with the square of their number (40,000 distinct attribute names: 1.4 CPU-s; 70,000 tag names: 2.2):
# at most this many on a page (0.1 CPU-s; the sample's pages have at most 27).
RESILIPARSE_MAX_NAMES = 10_000


@dataclass(frozen=True, slots=True)
class ParsedPage:
    text: str
    title: str
    degenerate: str | None = None  # TOO_COMPLEX, or None
    # Words main extraction found, before the fallback to stripped text (None: as many as `text` holds).
    main_words: int | None = None


# What str.split() splits on (str.isspace()) besides the space itself; a test checks it against Python's own.
_ASCII_SPACES = ("\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f")
_SPACES = (
    *_ASCII_SPACES,
    "\x85",
    "\xa0",
    "\u1680",
    *map(chr, range(0x2000, 0x200B)),
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
)


def _collapse(text: str) -> str:
    """Whitespace runs as one space, no space at either end: `" ".join(text.split())`. resiliparse's text
    mostly is so already (5,990 of 6,000 pages); substring tests say so in a quarter of the split's time."""
    if (
        "  " in text
        or text[:1] == " "
        or text[-1:] == " "
        or any(c in text for c in (_ASCII_SPACES if text.isascii() else _SPACES))
    ):
        return " ".join(text.split())
    return text


def parse_page(
    html: str,
    *,
    mode: str = "strip",
    strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS,
    extractor: str = "neardup",
    comments: bool = False,
) -> ParsedPage:
    """Parse once: the normalized text and the document's `<title>` (an `<svg><title>` is not one).
    `comments`: main text keeps reader comment threads (neardup's rule, or resiliparse's own switch).
    (`<link rel=canonical>` is read by ingest, from the raw head, for every page whatever the normalization.)"""
    if mode == "main" and extractor == "resiliparse":
        return _parse_resiliparse(html, strip_tags, comments)
    # Where the main text has fewer than MAIN_FALLBACK_WORDS words, `extract` returns the stripped text.
    try:
        text, title, main_words = _html.extract(
            html, mode == "main", strip_tags, MAIN_FALLBACK_WORDS, 0, 0, 0, comments
        )
    except _html.PageTooComplex:
        return ParsedPage("", "", TOO_COMPLEX)
    return ParsedPage(text, title, main_words=main_words)


def parse_configured(html: str, config: Config) -> ParsedPage:
    """`parse_page` under `config`'s normalization (its mode, strip tags, extractor and comments switch)."""
    return parse_page(
        html,
        mode=config.normalize,
        strip_tags=config.strip_tags,
        extractor=config.extractor,
        comments=config.comments,
    )


def _parse_resiliparse(html: str, strip_tags: tuple[str, ...], comments: bool) -> ParsedPage:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    # neardup's parser first, under the bounds resiliparse has not: a page over them never reaches it. Its
    # stripped text is the fallback.
    try:
        stripped_text, title, _ = _html.extract(
            html,
            False,
            strip_tags,
            0,
            RESILIPARSE_MAX_DEPTH_SUM,
            RESILIPARSE_MAX_ELEMENTS,
            RESILIPARSE_MAX_NAMES,
        )
    except _html.PageTooComplex:
        return ParsedPage("", "", TOO_COMPLEX)
    tree = HTMLTree.parse(html)
    text = _collapse(
        extract_plain_text(
            tree, main_content=True, alt_texts=False, preserve_formatting=False, comments=comments
        )
    )
    main_words = text.count(" ") + 1 if text else 0
    if main_words >= MAIN_FALLBACK_WORDS:
        return ParsedPage(text, _collapse(tree.title or ""), main_words=main_words)
    # No main content found (listing pages, link-heavy hubs): the stripped text.
    return ParsedPage(stripped_text, title, main_words=main_words)


def normalize_html(
    html: str,
    *,
    mode: str = "strip",
    strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS,
    extractor: str = "neardup",
    comments: bool = False,
) -> str:
    """Main text of a page (see the module docstring for the two modes)."""
    return parse_page(html, mode=mode, strip_tags=strip_tags, extractor=extractor, comments=comments).text


def stripped_parts(html: str, *, strip_tags: tuple[str, ...] = DEFAULT_STRIP_TAGS) -> list[tuple[str, str]]:
    """What `strip` mode removes, as (tag, text) pairs in document order (head included), for showing an
    analyst: the elements named in `strip_tags`, outside one another, with their text (none for script and
    style). Parsed as strip mode parses (lexbor, bounded); a page too complex to parse is one pair,
    (TOO_COMPLEX, the bound it is over). A test compares it with BeautifulSoup
    (`tests/oracles.py`)."""
    try:
        return _html.stripped_parts(html, strip_tags)
    except _html.PageTooComplex as exc:
        return [(TOO_COMPLEX, str(exc))]


# --- degenerate pages -------------------------------------------------------------------------
# Phrases of pages that are not content, each matched on a short page's casefolded text (and its title). Besides
# English: German, French, Spanish, Italian, Dutch, Portuguese, Polish, in the wording the big block, consent and
# hosting services serve. Each phrase is long enough not to stand in a short real page (a news brief, a product):
# "antes de continuar" alone would, "antes de ir a" (Google's consent wall) does not.
_BLOCK = (
    "access denied",
    "403 forbidden",
    "you do not have permission to access",
    "request blocked",
    "are you a robot",
    "verify you are human",
    "checking your browser",
    "attention required",
    "unusual traffic",
    "captcha",
    "zugriff verweigert",
    "sind sie ein roboter",
    "ungewöhnlichen datenverkehr",
    "accès refusé",
    "êtes-vous un robot",
    "trafic inhabituel",
    "acceso denegado",
    "¿eres un robot",
    "eres un robot?",
    "tráfico inusual",
    "accesso negato",
    "sei un robot",
    "traffico insolito",
    "toegang geweigerd",
    "ben je een robot",
    "bent u een robot",
    "ongebruikelijk verkeer",
    "acesso negado",
    "você é um robô",
    "tráfego incomum",
    "odmowa dostępu",
    "czy jesteś robotem",
    "nietypowy ruch",
)
_SOFT404 = (
    "page not found",
    "404 not found",
    "error 404",
    "could not be found",
    "could not find the page",
    "couldn't find the page",
    "page you requested",
    "page you were looking for",
    "no longer available",
    "does not exist",
    "has been removed",
    "nothing was found",
    "seite nicht gefunden",
    "seite wurde nicht gefunden",
    "seite existiert nicht",
    "page introuvable",
    "page demandée n'existe pas",
    "cette page n'existe pas",
    "página no encontrada",
    "página que buscas no existe",
    "pagina non trovata",
    "pagina non esiste",
    "pagina niet gevonden",
    "pagina bestaat niet",
    "página não encontrada",
    "página não existe",
    "nie znaleziono strony",
    "strona nie istnieje",
    "strona nie została znaleziona",
)
_LOADING = (
    "loading...",
    "loading\u2026",
    "enable javascript",
    "javascript is required",
    "javascript is disabled",
    "please wait while",
    "javascript aktivieren",
    "aktivieren sie javascript",
    "javascript ist deaktiviert",
    "activer javascript",
    "activez javascript",
    "activez le javascript",
    "habilita javascript",
    "habilite javascript",
    "activa javascript",
    "active javascript",
    "abilita javascript",
    "abilitare javascript",
    "attiva javascript",
    "javascript inschakelen",
    "schakel javascript in",
    "ative o javascript",
    "ativar o javascript",
    "habilite o javascript",
    "włącz javascript",
    "włączyć javascript",
)
# Cookie and consent walls: the page a crawler gets instead of the article ("Before you continue to ...").
_CONSENT = (
    "before you continue to",
    "we value your privacy",
    "your privacy choices",
    "bevor sie zu",
    "bevor sie fortfahren",
    "bevor du fortfährst",
    "wir legen wert auf ihre privatsphäre",
    "avant d'accéder à",
    "avant de continuer vers",
    "le respect de votre vie privée est notre priorité",
    "antes de ir a",
    "antes de continuar a",
    "valoramos tu privacidad",
    "prima di continuare su",
    "prima di procedere su",
    "la tua privacy è importante",
    "voordat je verdergaat naar",
    "voordat u verdergaat naar",
    "wij waarderen uw privacy",
    "antes de continuar para",
    "antes de avançar para",
    "valorizamos a sua privacidade",
    "zanim przejdziesz do",
    "zanim przejdziesz dalej",
    "cenimy twoją prywatność",
)
# Paywalls: a teaser and a subscription offer instead of the text (matched on a short page, like every list
# here; `_PAYWALL_GATE` and `_LOGIN` also decide on a teaser page, `_gate_reason`).
_PAYWALL = (
    "subscribe to continue reading",
    "to continue reading, subscribe",
    "this article is for subscribers",
    "this content is for subscribers only",
    "already a subscriber? log in",
    "weiterlesen mit",
    "dieser artikel ist nur für abonnenten",
    "exklusiv für abonnenten",
    "cet article est réservé aux abonnés",
    "article réservé aux abonnés",
    "este contenido es exclusivo para suscriptores",
    "contenido exclusivo para suscriptores",
    "questo articolo è riservato agli abbonati",
    "contenuto riservato agli abbonati",
    "dit artikel is alleen voor abonnees",
    "alleen voor abonnees",
    "este conteúdo é exclusivo para assinantes",
    "conteúdo exclusivo para assinantes",
    "ten artykuł jest dostępny tylko dla subskrybentów",
    "treść dostępna tylko dla subskrybentów",
)
# What a paywall says where the article stops: the reader is asked to pay to read on. Each phrase speaks of
# reading on or of this article being kept for subscribers, so that a newsletter box ("subscribe to our
# newsletter"), a "Subscribe" link or a membership box under a free article ("Already a subscriber? Log in",
# "exclusive offers for subscribers") is not one.
_PAYWALL_GATE = (
    "subscribe to continue reading",
    "to continue reading, subscribe",
    "subscribe to keep reading",
    "subscribe to read the full article",
    "subscribe to read the rest",
    "subscribe to unlock this article",
    "continue reading with a subscription",
    "this article is for subscribers",
    "this content is for subscribers only",
    "this article is exclusive to subscribers",
    "you have reached your limit of free articles",
    "you've reached your free article limit",
    "weiterlesen mit",
    "um diesen artikel weiterzulesen",
    "abonnieren sie, um weiterzulesen",
    "dieser artikel ist nur für abonnenten",
    "cet article est réservé aux abonnés",
    "article réservé aux abonnés",
    "abonnez-vous pour lire la suite",
    "de cet article à lire",
    "este contenido es exclusivo para suscriptores",
    "suscríbete para seguir leyendo",
    "suscríbete para continuar leyendo",
    "questo articolo è riservato agli abbonati",
    "contenuto riservato agli abbonati",
    "abbonati per continuare a leggere",
    "dit artikel is alleen voor abonnees",
    "word abonnee om verder te lezen",
    "neem een abonnement om verder te lezen",
    "este conteúdo é exclusivo para assinantes",
    "assine para continuar lendo",
    "assine para continuar a ler",
    "ten artykuł jest dostępny tylko dla subskrybentów",
    "wykup subskrypcję, aby czytać dalej",
)
# Login walls: the site's sign-in prompt instead of the page. Each phrase asks to sign in to read, view or go on,
# so that a header's "Log in" link or a comment form's "You must be logged in to post a comment" is not one.
_LOGIN = (
    "log in to continue reading",
    "sign in to continue reading",
    "log in to read the full article",
    "sign in to read the full article",
    "log in to read this article",
    "sign in to read this article",
    "please log in to view this",
    "please sign in to view this",
    "you must be logged in to view",
    "you must be logged in to read",
    "you need to be logged in to view",
    "create a free account to continue reading",
    "register to continue reading",
    "sign in to continue to",
    "melden sie sich an, um weiterzulesen",
    "melde dich an, um weiterzulesen",
    "registrieren sie sich, um weiterzulesen",
    "bitte melden sie sich an, um",
    "sie müssen angemeldet sein, um",
    "connectez-vous pour lire la suite",
    "connectez-vous pour continuer",
    "identifiez-vous pour lire la suite",
    "vous devez être connecté pour",
    "inicia sesión para seguir leyendo",
    "inicia sesión para continuar",
    "regístrate para seguir leyendo",
    "debes iniciar sesión para",
    "accedi per continuare a leggere",
    "accedi per continuare",
    "registrati per continuare a leggere",
    "devi effettuare l'accesso per",
    "log in om verder te lezen",
    "log in om door te gaan",
    "registreer je om verder te lezen",
    "je moet ingelogd zijn om",
    "u moet ingelogd zijn om",
    "faça login para continuar",
    "entre para continuar lendo",
    "inicie sessão para continuar",
    "você precisa estar logado para",
    "cadastre-se para continuar lendo",
    "zaloguj się, aby czytać dalej",
    "zaloguj się, aby kontynuować",
    "zaloguj się, aby przeczytać",
    "musisz być zalogowany, aby",
)
# Parked domains: a registrar's for-sale page on a host that once had content.
_PARKED = (
    "this domain is for sale",
    "this domain may be for sale",
    "buy this domain",
    "domain is parked",
    "this domain has been registered",
    "diese domain steht zum verkauf",
    "diese domain kaufen",
    "ce domaine est à vendre",
    "este dominio está a la venta",
    "questo dominio è in vendita",
    "dit domein is te koop",
    "este domínio está à venda",
    "ta domena jest na sprzedaż",
)
_PATTERNS = [
    (reason, phrase.casefold())
    for reason, phrases in (
        ("blocked", _BLOCK),
        ("soft-404", _SOFT404),
        ("loading", _LOADING),
        ("consent", _CONSENT),
        ("paywall", _PAYWALL),
        ("login", _LOGIN),
        ("parked", _PARKED),
    )
    for phrase in phrases
]
_GATES = [
    (reason, phrase.casefold())
    for reason, phrases in (("paywall", _PAYWALL_GATE), ("login", _LOGIN))
    for phrase in phrases
]
# Every word of a gate phrase but its last is a whole word of a text where the phrase starts a word (the text's
# spaces are single): a phrase is searched for only in a text holding its longest such word, which a set of the
# text's words tells in one pass. On a realsize crawl's pages the rule costs ~1.2% of the parse's CPU this way,
# ~7% with a search of every phrase in every short text.
_GATES_BY_WORD: dict[str, list[tuple[str, str]]] = {}
for _reason, _phrase in _GATES:
    _GATES_BY_WORD.setdefault(max(_phrase.split(" ")[:-1], key=len), []).append((_reason, _phrase))
_TITLE_404 = re.compile(r"^\s*(404|not found|page not found|error|access denied|forbidden|just a moment)\b")

# A matched phrase in the body marks a page degenerate only when the page is short: a long article
# that mentions "page not found" is content. Measured on the sample crawl (see README).
MAX_WORDS_BODY_MATCH = 150
MAX_WORDS_TITLE_MATCH = 400


# A paywall or login wall inside the site's own template shows the article's first lines as a teaser, then the
# gate's prompt where the article would go on: the main text is short and the prompt ends it. A page is a
# gate when a gate phrase (`_GATES`) follows at most MAX_TEASER_WORDS words of main text and at most
# MAX_WORDS_AFTER_GATE follow it (the offer: prices, what a subscription gives, "already a subscriber?").
# An article that quotes a gate's words has its own text around them; a template's "Subscribe" link or
# newsletter box is no gate phrase and is not main text. Calibrated on a 3,000-page `make_sample.py --profile
# realsize` crawl (seed 11): its 45 walls hold 70-253 words before the prompt and 21-41 from it on; its articles
# hold 400-1,500 words, and none of its 411 content pages of at most 550 words holds a gate phrase. The margins
# are wide for real teasers (a first screen of text) and offers (a list of plans).
MAX_TEASER_WORDS = 400
MAX_WORDS_AFTER_GATE = 150


def _gate_reason(text: str, *, n_words: int, main_words: int | None) -> str | None:
    """`paywall` or `login` when a gate's prompt ends a short main text (see MAX_TEASER_WORDS), else None.
    Where main extraction found under MAIN_FALLBACK_WORDS words the text is the stripped page around them:
    a gate phrase anywhere in it decides, the teaser being those few words."""
    main = n_words if main_words is None else main_words
    if main > MAX_TEASER_WORDS + MAX_WORDS_AFTER_GATE:
        return None
    text_cf = text.casefold()
    # where the prompt may start: anywhere on a fallback page, else among the last MAX_WORDS_AFTER_GATE words
    if main < MAIN_FALLBACK_WORDS:
        words = text_cf.split(" ")
    else:
        words = text_cf.rsplit(" ", MAX_WORDS_AFTER_GATE)[-MAX_WORDS_AFTER_GATE:]
    start = len(text_cf) - sum(map(len, words)) - len(words) + 1
    first: tuple[int, str] | None = None
    for word in _GATES_BY_WORD.keys() & set(words):
        for reason, phrase in _GATES_BY_WORD[word]:
            at = text_cf.find(phrase, start)
            while at > 0 and text_cf[at - 1] != " ":  # the phrase starts a word
                at = text_cf.find(phrase, at + 1)
            if at >= 0 and (first is None or at < first[0]):
                first = (at, reason)
    if first is None:
        return None
    at, reason = first
    return reason if main < MAIN_FALLBACK_WORDS or text_cf.count(" ", 0, at) <= MAX_TEASER_WORDS else None


def degenerate_reason(
    text: str,
    *,
    title: str = "",
    status: int | None = None,
    n_words: int,
    min_words: int,
    main_words: int | None = None,
) -> str | None:
    """Why a page cannot be fingerprinted as content, or None when it can.

    Reasons: `status NNN` (not 2xx), `blocked`, `soft-404`, `loading`, `consent`, `paywall`, `login`, `parked`
    (matched phrases on a short page, or in the title), `paywall` or `login` besides for a teaser that a gate's
    prompt ends (`_gate_reason`), `too short` (fewer than `min_words` words of main text).
    `main_words`: the words main extraction found before falling back to the stripped text (`ParsedPage`). The
    title rule counts those: the template a page without main content falls back to (a mega-menu: 440 words on
    the realsize profile's "Loading..." shells) says nothing of how short the page is.
    """
    if status is not None and not 200 <= status < 300:
        return f"status {status}"
    head = text[:2000].casefold()
    title_cf = title.casefold()
    if min(n_words, n_words if main_words is None else main_words) < MAX_WORDS_TITLE_MATCH:
        for reason, phrase in _PATTERNS:
            if phrase in title_cf:
                return reason
        if _TITLE_404.match(title_cf):
            return "soft-404" if "404" in title_cf or "not found" in title_cf else "blocked"
    if n_words < MAX_WORDS_BODY_MATCH:
        for reason, phrase in _PATTERNS:
            if phrase in head:
                return reason
    gate = _gate_reason(text, n_words=n_words, main_words=main_words)
    if gate is not None:
        return gate
    if n_words < min_words:  # tried last: the store re-applies it for another min_words
        return TOO_SHORT
    return None
