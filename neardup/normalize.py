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
# Paywalls: a teaser and a subscription offer instead of the text.
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
        ("parked", _PARKED),
    )
    for phrase in phrases
]
_TITLE_404 = re.compile(r"^\s*(404|not found|page not found|error|access denied|forbidden|just a moment)\b")

# A matched phrase in the body marks a page degenerate only when the page is short: a long article
# that mentions "page not found" is content. Measured on the sample crawl (see README).
MAX_WORDS_BODY_MATCH = 150
MAX_WORDS_TITLE_MATCH = 400


TOO_SHORT = "too short"


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

    Reasons: `status NNN` (not 2xx), `blocked`, `soft-404`, `loading`, `consent`, `paywall`, `parked`
    (matched phrases on a short page, or in the title), `too short` (fewer than `min_words` words of main text).
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
    if n_words < min_words:  # tried last: the store re-applies it for another min_words
        return TOO_SHORT
    return None
