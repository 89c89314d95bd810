"""HTML normalization (strip fast path vs the BeautifulSoup reference, main mode) and degenerate pages."""

from __future__ import annotations

import random
import sys
from itertools import islice

import pytest
from conftest import SAMPLE_CRAWL, VOCAB, words_text
from hypothesis import given
from hypothesis import strategies as st
from oracles import normalize_html_bs4, stripped_parts_bs4

from neardup import normalize
from neardup.config import DEFAULT_STRIP_TAGS
from neardup.ingest import detect_format, read_raw
from neardup.normalize import (
    TOO_COMPLEX,
    degenerate_reason,
    normalize_html,
    parse_page,
    stripped_parts,
)
from neardup.records import validate
from neardup.shingles import words

_WORDS = VOCAB[:25]
_ENTITIES = ["&amp;", "&eacute;", "&nbsp;", "&lt;b&gt;", "&#169;", "&quot;", "&uuml;ber", "&#x263A;"]
_INLINE = ["b", "i", "em", "strong", "a", "span", "code", "small", "sup"]


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _rich_text(rng: random.Random, depth: int = 0) -> str:
    """Text with nested inline tags, entities, comments and <br>s."""
    parts = []
    for _ in range(rng.randint(2, 6)):
        kind = rng.random()
        if kind < 0.4:
            parts.append(_phrase(rng, rng.randint(1, 6)))
        elif kind < 0.6 and depth < 3:
            tag = rng.choice(_INLINE)
            attrs = ' href="/x"' if tag == "a" else ""
            # glued to the neighbour on purpose: "foo<b>bar</b>" is one run of text in both parsers
            parts.append(f"<{tag}{attrs}>{_rich_text(rng, depth + 1)}</{tag}>")
        elif kind < 0.7:
            parts.append(rng.choice(_ENTITIES))
        elif kind < 0.8:
            parts.append(f"<!-- {_phrase(rng, 3)} -->")
        elif kind < 0.9:
            parts.append(rng.choice(["<br>", "<br/>", "<br />"]))
        else:
            parts.append(rng.choice(["\n", "\t", "  "]))
    return rng.choice(["", " "]).join(parts)


def _boilerplate(rng: random.Random) -> str:
    blocks = [
        f"<nav><ul><li><a href='/'>{_phrase(rng, 2)}</a></li><li>{_phrase(rng, 2)}</li></ul></nav>",
        f"<header><h1>{_phrase(rng, 3)}</h1></header>",
        f"<footer><p>&copy; {_phrase(rng, 4)}</p></footer>",
        f"<script>var x = '{_phrase(rng, 3)}'; if (a < b) {{ document.write('<p>no</p>'); }}</script>",
        f"<style>body {{ color: red; }} /* {_phrase(rng, 2)} */</style>",
        f"<form action='/s'><label>{_phrase(rng, 2)}</label><input type='text' name='q'>"
        f"<input type='hidden' name='csrf' value='{rng.getrandbits(64):x}'><button>{_phrase(rng, 1)}</button></form>",
        f"<aside><h3>{_phrase(rng, 2)}</h3><p>{_phrase(rng, 5)}</p></aside>",
        f"<input type='hidden' name='token' value='{_phrase(rng, 1)}'>",
        f"<noscript>{_phrase(rng, 3)}</noscript>",
        f"<iframe src='/ad'>{_phrase(rng, 2)}</iframe>",
        f"<svg width='10' height='10'><title>{_phrase(rng, 2)}</title><text x='0' y='0'>{_phrase(rng, 1)}</text></svg>",
        f"<template><p>{_phrase(rng, 3)}</p></template>",
    ]
    return "".join(rng.sample(blocks, rng.randint(3, len(blocks))))


def _content(rng: random.Random) -> str:
    blocks = []
    for _ in range(rng.randint(2, 6)):
        kind = rng.randrange(6)
        if kind == 0:
            blocks.append(f"<p>{_rich_text(rng)}</p>")
        elif kind == 1:
            blocks.append(f"<h2>{_rich_text(rng)}</h2>")
        elif kind == 2:
            items = "".join(f"<li>{_rich_text(rng)}</li>" for _ in range(rng.randint(1, 4)))
            blocks.append(f"<ul>{items}</ul>")
        elif kind == 3:
            cells = "".join(f"<td>{_phrase(rng, 2)}</td>" for _ in range(3))
            blocks.append(f"<table><tr>{cells}</tr><tr>{cells}</tr></table>")
        elif kind == 4:
            blocks.append(f"<div class='c'><div>{_rich_text(rng)}</div>{_phrase(rng, 3)}</div>")
        else:
            blocks.append(_rich_text(rng))  # bare text straight in the body
    return "".join(blocks)


def generated_page(seed: int) -> str:
    rng = random.Random(seed)
    head = f"<head><meta charset='utf-8'><title>{_phrase(rng, 3)}</title>"
    if rng.random() < 0.5:
        head += "<link rel='canonical' href='https://example.com/c'><style>p { margin: 0 }</style>"
    head += "</head>"
    body_parts = [_boilerplate(rng), f"<main><article>{_content(rng)}</article></main>", _boilerplate(rng)]
    if rng.random() < 0.5:
        body_parts.insert(1, _content(rng))
    doctype = "<!DOCTYPE html>" if rng.random() < 0.7 else ""
    return f"{doctype}<html>{head}<body>{''.join(body_parts)}</body></html>"


@pytest.mark.parametrize("seed", range(40))
def test_strip_fast_path_equals_bs4_reference(seed: int) -> None:
    html = generated_page(seed)
    fast = normalize_html(html, mode="strip")
    ref = normalize_html_bs4(html)
    assert words(fast) == words(ref)
    assert len(words(fast)) > 0


def test_strip_removes_boilerplate_and_keeps_inline_text() -> None:
    html = (
        "<html><head><title>Title words</title><script>var hidden = 1;</script></head><body>"
        "<nav>Home About</nav><header>Site name</header>"
        "<p>Alpha<b>beta</b> gamma<br>delta &amp; epsilon <!-- secret comment --></p>"
        "<form><input type='hidden' value='tok'>Search here</form>"
        "<aside>Related</aside><footer>Copyright</footer><style>.x{}</style></body></html>"
    )
    assert normalize_html(html, mode="strip") == "Alpha beta gamma delta & epsilon"
    assert words(normalize_html_bs4(html)) == ["alpha", "beta", "gamma", "delta", "epsilon"]


def test_strip_tags_are_configurable() -> None:
    html = "<body><nav>menu</nav><p>text</p><footer>foot</footer></body>"
    assert normalize_html(html, mode="strip", strip_tags=("footer",)) == "menu text"
    assert normalize_html_bs4(html, strip_tags=("footer",)) == "menu text"


def test_parse_page_reads_the_title() -> None:
    html = (
        "<html><head><title>  My   Page </title><link rel='canonical' href=' https://example.com/x '>"
        "</head><body><p>hello</p></body></html>"
    )
    page = parse_page(html, mode="strip")
    assert (page.text, page.title) == ("hello", "My Page")
    page = parse_page("<p>no head</p>", mode="strip")
    assert (page.text, page.title) == ("no head", "")
    article = " ".join(f"word{i}" for i in range(60))
    page = parse_page(
        f"<title> My  Page </title><body><article><p>{article}</p></article></body>", mode="main"
    )
    assert (page.text, page.title) == (article, "My Page")
    # main mode reads the document's title element: an SVG <title> before it is not one
    page = parse_page(
        f"<body><svg><title>icon</title></svg><title>Real</title><p>{article}</p></body>", mode="main"
    )
    assert page.title == "Real"


def test_stripped_parts_are_the_bs4_references_on_the_sample() -> None:
    sample = SAMPLE_CRAWL
    records = [
        r for r in map(validate, islice(read_raw(sample, detect_format(sample)), 400)) if isinstance(r, dict)
    ]
    pages = [r["html"] for r in records if r.get("html")]
    assert len(pages) == 400
    assert [stripped_parts(h) for h in pages] == [stripped_parts_bs4(h) for h in pages]


def test_stripped_parts_of_a_page_too_complex_to_parse() -> None:
    """BeautifulSoup took seconds on a page of 100,000 comments and minutes on deep nesting; the view is
    parsed as strip mode parses, under the same bounds."""
    assert stripped_parts("<nav>" + "<div>" * 600) == [(TOO_COMPLEX, "more than 256 elements nested")]
    many = "<html><body>" + "<!--c--><nav>n</nav>" * 100_000
    assert stripped_parts(many) == [("nav", "n")] * 100_000


def test_stripped_parts_lists_what_was_removed() -> None:
    html = "<body><nav>menu <aside>inner</aside></nav><p>kept</p><script>x=1</script><footer>foot</footer></body>"
    parts = stripped_parts(html, strip_tags=DEFAULT_STRIP_TAGS)
    assert ("nav", "menu inner") in parts
    assert ("script", "") in parts
    assert ("footer", "foot") in parts
    assert all(tag != "aside" for tag, _ in parts)  # inside nav: removed with it


# --- main mode -----------------------------------------------------------------------------------
ARTICLE = (
    "The river authority published its annual report on water quality this week, finding that the "
    "northern tributaries recovered faster than expected after the drought. Engineers credited the new "
    "wetland buffers, which slow runoff and trap sediment before it reaches the main channel. Farmers "
    "along the valley said irrigation schedules had changed little, but several noted clearer water in "
    "the spring. The report recommends extending the buffers to the southern reaches and monitoring "
    "nitrate levels monthly rather than quarterly, a change that would require two additional field "
    "technicians and a modest increase in the laboratory budget for the coming fiscal year."
)


def _templated(article: str) -> str:
    nav = "".join(f"<li><a href='/s{i}'>Section number {i} of the site</a></li>" for i in range(12))
    return (
        "<html><head><title>River report</title></head><body>"
        f"<div id='header'><nav><ul>{nav}</ul></nav></div>"
        f"<main><article><h1>River report</h1><p>{article}</p></article></main>"
        "<footer><p>Copyright Example Media Group. All rights reserved. Privacy policy. Terms of use. "
        "Contact the newsroom. Subscribe to our newsletter for daily updates.</p></footer>"
        "</body></html>"
    )


def test_main_mode_keeps_article_and_drops_nav_and_footer() -> None:
    text = normalize_html(_templated(ARTICLE), mode="main")
    toks = words(text)
    assert " ".join(words(ARTICLE)) in " ".join(toks)  # the whole article, in order
    assert "section" not in toks  # nav links
    assert "copyright" not in toks and "newsletter" not in toks  # footer


def test_main_mode_falls_back_to_strip_on_link_pages() -> None:
    # a hub of links has no main content: the stripped text is used instead
    links = "".join(f"<li><a href='/a{i}'>headline {i}</a></li>" for i in range(8))
    html = f"<html><body><nav>menu</nav><ul>{links}</ul></body></html>"
    assert normalize_html(html, mode="main") == normalize_html(html, mode="strip")


# --- degenerate pages ----------------------------------------------------------------------------
def _reason(text: str, title: str = "", status: int | None = 200, min_words: int = 30) -> str | None:
    return degenerate_reason(text, title=title, status=status, n_words=len(words(text)), min_words=min_words)


LONG = " ".join(["content"] * 200)


@pytest.mark.parametrize(
    ("text", "title", "status", "expected"),
    [
        ("Sorry, the page you requested could not be found. Try the search.", "Example", 200, "soft-404"),
        ("Oops! " + " ".join(["link"] * 40), "Page not found - Example", 200, "soft-404"),
        ("Error 404: nothing here " + " ".join(["menu"] * 30), "Example", 200, "soft-404"),
        ("nothing", "404 - Example", 200, "soft-404"),
        (
            "Access denied. You do not have permission to access this server. " + " ".join(["x"] * 30),
            "",
            200,
            "blocked",
        ),
        (
            "Checking your browser before accessing the site " + " ".join(["x"] * 30),
            "Just a moment...",
            200,
            "blocked",
        ),
        ("Please verify you are human to continue " + " ".join(["x"] * 30), "", 200, "blocked"),
        ("Loading... " + " ".join(["x"] * 30), "", 200, "loading"),
        ("You need to enable JavaScript to run this app. " + " ".join(["x"] * 30), "", 200, "loading"),
        ("just a few words here", "Fine title", 200, "too short"),
        (LONG, "Fine title", 500, "status 500"),
        (LONG, "Fine title", 404, "status 404"),
        (LONG, "Fine title", 301, "status 301"),
        (LONG, "Fine title", 200, None),
        (LONG, "Fine title", None, None),
        (LONG, "Fine title", 204, None),
    ],
)
def test_degenerate_reason(text: str, title: str, status: int | None, expected: str | None) -> None:
    assert _reason(text, title, status) == expected


FILLER = " ".join(["menu"] * 35)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Before you continue to Google We use cookies and data to deliver and maintain services", "consent"),
        ("Bevor Sie zu Google weitergehen Wir verwenden Cookies und Daten", "consent"),
        ("Avant d'accéder à Google Nous utilisons des cookies et des données", "consent"),
        ("Antes de ir a Google Usamos cookies y datos para ofrecer nuestros servicios", "consent"),
        ("Prima di continuare su Google Utilizziamo cookie e dati", "consent"),
        ("Voordat je verdergaat naar Google We gebruiken cookies en gegevens", "consent"),
        ("Antes de continuar para o Google Usamos cookies e dados", "consent"),
        ("Zanim przejdziesz do Google Używamy plików cookie i danych", "consent"),
        ("We value your privacy. We and our partners store and access information on a device", "consent"),
        ("Subscribe to continue reading. Already a subscriber? Log in", "paywall"),
        ("Jetzt weiterlesen mit SZ Plus. Dieser Artikel ist nur für Abonnenten", "paywall"),
        ("Cet article est réservé aux abonnés. Déjà abonné ? Connectez-vous", "paywall"),
        ("Este contenido es exclusivo para suscriptores", "paywall"),
        ("Questo articolo è riservato agli abbonati", "paywall"),
        ("Dit artikel is alleen voor abonnees", "paywall"),
        ("Este conteúdo é exclusivo para assinantes", "paywall"),
        ("Ten artykuł jest dostępny tylko dla subskrybentów", "paywall"),
        ("This domain is for sale! Buy this domain today", "parked"),
        ("Diese Domain steht zum Verkauf", "parked"),
        ("Ce domaine est à vendre", "parked"),
        ("Este dominio está a la venta", "parked"),
        ("Questo dominio è in vendita", "parked"),
        ("Dit domein is te koop", "parked"),
        ("Este domínio está à venda", "parked"),
        ("Ta domena jest na sprzedaż", "parked"),
        ("Bitte aktivieren Sie JavaScript, um diese Seite zu nutzen", "loading"),
        ("Veuillez activer JavaScript pour utiliser ce site", "loading"),
        ("Habilite JavaScript para usar esta aplicación", "loading"),
        ("Abilita JavaScript per continuare", "loading"),
        ("Schakel JavaScript in om deze site te gebruiken", "loading"),
        ("Ative o JavaScript para continuar", "loading"),
        ("Włącz JavaScript, aby kontynuować", "loading"),
        ("Zugriff verweigert. Sind Sie ein Roboter?", "blocked"),
        ("Accès refusé. Êtes-vous un robot ?", "blocked"),
        ("Acceso denegado. ¿Eres un robot?", "blocked"),
        ("Accesso negato. Sei un robot?", "blocked"),
        ("Toegang geweigerd. Ben je een robot?", "blocked"),
        ("Acesso negado. Você é um robô?", "blocked"),
        ("Odmowa dostępu. Czy jesteś robotem?", "blocked"),
        ("Seite nicht gefunden. Die angeforderte Seite existiert nicht", "soft-404"),
        ("Page introuvable. Cette page n'existe pas", "soft-404"),
        ("Página no encontrada", "soft-404"),
        ("Pagina non trovata", "soft-404"),
        ("Pagina niet gevonden", "soft-404"),
        ("Página não encontrada", "soft-404"),
        ("Nie znaleziono strony", "soft-404"),
    ],
)
def test_walls_and_failures_in_many_languages_are_set_aside(text: str, expected: str) -> None:
    assert _reason(f"{text} {FILLER}") == expected
    # the same words in a long page are content: the rule reads short pages only
    assert _reason(f"{text} {LONG}") is None


def test_every_phrase_names_its_reason_on_a_short_page() -> None:
    for reason, phrase in normalize._PATTERNS:
        assert _reason(f"{phrase} {FILLER}") == reason, phrase


def test_long_article_mentioning_page_not_found_is_content() -> None:
    text = (
        "When the council's website returned a page not found error for the budget documents, reporters "
        "filed a records request instead. " + ARTICLE + " " + ARTICLE
    )
    assert len(words(text)) > 150
    assert "page not found" in text
    assert _reason(text, "Council budget documents") is None


def test_phrase_in_title_counts_up_to_a_longer_page() -> None:
    text = " ".join(["filler"] * 300)  # 300 words: too long for a body match, short enough for a title match
    assert _reason(text, "Page not found") == "soft-404"
    assert _reason(" ".join(["filler"] * 500), "Page not found") is None


def test_min_words_threshold() -> None:
    text = " ".join(["word"] * 30)
    assert _reason(text, min_words=30) is None
    assert _reason(text, min_words=31) == "too short"


def test_the_whitespace_collapse_knows_every_space_python_splits_on() -> None:
    spaces = {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}
    assert set(normalize._SPACES) == spaces - {" "}
    assert set(normalize._ASCII_SPACES) == {c for c in spaces if c.isascii()} - {" "}


@given(st.text(st.sampled_from(" a\t\n\xa0\u2003\u3000b\x1f\x85") | st.characters(), max_size=30))
def test_collapse_is_split_and_join(text: str) -> None:
    assert normalize._collapse(text) == " ".join(text.split())


def _shell(body: str, title: str) -> str:
    menu = "".join(
        f'<div class="mega"><a href="/s{i}">section {i} stories and more</a></div>' for i in range(90)
    )
    return (
        f"<html><head><title>{title}</title></head><body><div class='menu'>{menu}</div>{body}</body></html>"
    )


def test_a_loading_shell_with_a_long_template_is_set_aside() -> None:
    """No main content: the text falls back to the stripped template (450 words of mega-menu, past the title
    rule's word cap), but the title rule counts the words main extraction found, so the shell is set aside."""
    from neardup.batches import text_row
    from neardup.config import Config

    shell = _shell('<div id="app-root"><p>Loading... please enable JavaScript.</p></div>', "Loading\u2026")
    parsed = normalize.parse_page(shell, mode="main")
    assert len(parsed.text.split()) > normalize.MAX_WORDS_TITLE_MATCH and parsed.main_words < 50
    assert text_row(shell, None, 200, Config())["degenerate"] == "loading"
    # an article of 450 words under the same title is content
    article = _shell("<article><p>" + " ".join(["word"] * 450) + "</p></article>", "Loading\u2026")
    assert normalize.parse_page(article, mode="main").main_words >= 450
    assert text_row(article, None, 200, Config())["degenerate"] is None
    # and so is the same shell without the telling title: markup alone does not decide
    assert text_row(_shell("<p>app</p>", "Valley Courier"), None, 200, Config())["degenerate"] is None


def test_markup_noise_does_not_make_a_short_article_too_short() -> None:
    """Two fetches of one 67-word article, the second in a container the main extractor drops (main text: a
    couple of words): it falls back to the stripped text, so both are content with the same article words,
    not one content page and one "too short"."""
    rng = random.Random(1)
    article = " ".join(rng.choice(VOCAB) for _ in range(67))
    texts = []
    for container in ("post-body", "sidebar"):
        html = (
            "<html><head><title>Budget</title></head><body><header><a href='/'>Home</a> <a href='/news'>News</a>"
            f"</header><div class='{container}'><p>{article}</p></div><footer>Copyright Example</footer></body></html>"
        )
        parsed = normalize.parse_page(html, mode="main")
        n_words = len(words(parsed.text))
        reason = degenerate_reason(
            parsed.text,
            title=parsed.title,
            status=200,
            n_words=n_words,
            min_words=30,
            main_words=parsed.main_words,
        )
        assert reason is None, (container, parsed)
        texts.append(parsed.text)
    assert normalize.parse_page(html, mode="main").main_words < normalize.MAIN_FALLBACK_WORDS
    assert article in texts[0] and article in texts[1]


# --- paywall and login walls inside a site's template ------------------------------------------------------
def _news_page(main: str, *, title: str = "Harbor council approves the ferry budget") -> str:
    """A real-size news page (~90 KB) around `main`, the article container's content: a header with "Log in" and
    "Subscribe" links, a mega-menu, inline bundle scripts and page-state JSON, a sidebar newsletter box, a footer
    with "Subscribe" and "Sign in" links."""
    rng = random.Random(title)
    menu = "".join(
        f"<li><a href='/s/{i}'>{' '.join(rng.choice(VOCAB) for _ in range(3))}</a></li>" for i in range(120)
    )
    bundle = ";".join(
        f"var m{i}=function(a,b){{return a.x{i}(b,{rng.randint(0, 9999)})}}" for i in range(2200)
    )
    state = ",".join(f'"k{i}":"{rng.getrandbits(64):x}"' for i in range(600))
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title} | The Harbor Ledger</title>"
        "<style>.paywall{padding:2rem}.regwall{border:1px solid}</style></head><body>"
        "<header class='site-header'><a href='/'>The Harbor Ledger</a> <a href='/account/login'>Log in</a> "
        "<a href='/subscribe'>Subscribe</a></header>"
        f"<nav class='mega-menu'><ul>{menu}</ul></nav>"
        f"<main id='main'><article class='article'>{main}</article>"
        "<aside class='sidebar'><h3>Get the newsletter</h3><p>The best of the Ledger in your inbox. Subscribe to "
        "our newsletter, unsubscribe any time.</p><form><input type='email'><button>Subscribe</button></form></aside>"
        "</main><footer><p>Subscribe | Sign in | Manage your subscription | Privacy | Terms</p><p>Copyright 2026 "
        f"The Harbor Ledger.</p></footer><script>{bundle}</script>"
        f"<script id='__NEXT_DATA__' type='application/json'>{{{state}}}</script></body></html>"
    )


def _article_main(paragraphs: list[str], *, tail: str = "") -> str:
    head = (
        "<h1>Harbor council approves the ferry budget</h1><p class='standfirst'>The vote ends a year of debate "
        "over the night crossings.</p><div class='byline'>By Nina Lake &middot; March 4, 2026</div>"
    )
    return head + "".join(f"<p>{p}</p>" for p in paragraphs) + tail


_THREAD = (
    "<section id='comments' class='comments'><h2>12 comments</h2><ol>"
    + "".join(
        f"<li class='comment'><p>{words_text(random.Random(i), 40)}</p><a href='#r{i}'>Reply</a></li>"
        for i in range(12)
    )
    + "</ol><p class='must-log-in'>You must be logged in to post a comment. <a href='/account/login'>Log in</a>"
    "</p></section>"
)
_MEMBERSHIP = (
    "<div class='membership-cta'><h3>Support local journalism</h3><p>Enjoy unlimited access to the Ledger from $1 "
    "a week. Already a subscriber? Log in to manage your account.</p></div>"
)


def _reason_of(html: str) -> str | None:
    from neardup.batches import text_row
    from neardup.config import Config

    return text_row(html, None, 200, Config())["degenerate"]


def _paragraphs(seed: int, n: int, words_each: int = 60) -> list[str]:
    return [words_text(random.Random(seed * 100 + i), words_each) for i in range(n)]


@pytest.mark.parametrize(
    ("gate", "expected"),
    [
        (
            "<div class='paywall'><h2>Subscribe to continue reading</h2><p>Get unlimited digital access for $1 a week "
            "for three months. Cancel anytime.</p><form><button>Subscribe</button></form><p>Already a subscriber? "
            "Log in</p></div>",
            "paywall",
        ),
        (
            "<section class='article-gate'><p><strong>You have reached your limit of free articles</strong></p><p>"
            "Subscribe now for unlimited access.</p></section>",
            "paywall",
        ),
        (
            "<div class='paywall'><p>Il vous reste 78 % de cet article à lire.</p><p>Abonnez-vous pour lire la "
            "suite.</p></div>",
            "paywall",
        ),
        (
            "<div class='paywall'><p>Jetzt weiterlesen mit Ledger Plus</p><p>4 Wochen für 1 Euro.</p></div>",
            "paywall",
        ),
        (
            "<div class='regwall'><h2>Log in to continue reading</h2><p>Sign in with your Ledger account to read the "
            "rest of this story.</p><form><label>Email <input type='email'></label><label>Password <input "
            "type='password'></label></form><p>Don't have an account? Register.</p></div>",
            "login",
        ),
        ("<div class='article-locked'><p>Create a free account to continue reading.</p></div>", "login"),
        ("<div class='regwall'><p>Zaloguj się, aby czytać dalej</p></div>", "login"),
    ],
)
def test_a_teaser_with_a_gate_in_a_real_size_template_is_set_aside(gate: str, expected: str) -> None:
    """The article's headline and first paragraphs (here 120-240 words, over the short-page rule's 150), then a
    paywall or login prompt, inside a 90 KB template whose header, sidebar and footer say "Log in" and
    "Subscribe": a scrape failure. The full article in the same template, its membership box ("Already a
    subscriber? Log in") and comment thread ("You must be logged in to post a comment") included, is content."""
    for n in (2, 4):
        teaser = _news_page(_article_main(_paragraphs(1, n), tail=gate))
        assert len(teaser) > 80_000
        assert _reason_of(teaser) == expected, n
    article = _news_page(_article_main(_paragraphs(1, 12), tail=_MEMBERSHIP + _THREAD))
    assert _reason_of(article) is None


def test_a_short_article_with_subscribe_and_login_words_around_it_is_content() -> None:
    """A 150-word brief (short enough for the gate rule) whose template says "Log in" and "Subscribe", with the
    membership box under it in the article container and a comment thread asking to log in to comment."""
    brief = _news_page(_article_main(_paragraphs(2, 2, 70), tail=_MEMBERSHIP + _THREAD))
    parsed = normalize.parse_page(brief, mode="main")
    assert "already a subscriber? log in" in parsed.text.casefold()  # the box is main text
    assert len(words(parsed.text)) < normalize.MAX_TEASER_WORDS
    assert _reason_of(brief) is None


def test_an_article_quoting_a_gate_is_content() -> None:
    """A story about paywalls quotes the gate's words in its text: its own text goes on after them."""
    quote = (
        "<p>Readers who reach the tenth story of the month now see a box that says subscribe to continue reading, "
        "and the council's own bulletin answers it.</p>"
    )
    html = _news_page(
        _article_main(_paragraphs(3, 2), tail=quote + "".join(f"<p>{p}</p>" for p in _paragraphs(4, 4)))
    )
    assert _reason_of(html) is None
    # the same words as the end of a teaser are a gate
    assert _reason_of(_news_page(_article_main(_paragraphs(3, 2), tail=quote))) == "paywall"


def test_a_gate_after_a_long_article_is_not_a_teaser() -> None:
    """Past MAX_TEASER_WORDS of text before the prompt the page holds the article: content."""
    paragraphs = _paragraphs(5, 9)  # 540 words
    gate = "<div class='paywall'><h2>Subscribe to continue reading</h2></div>"
    assert _reason_of(_news_page(_article_main(paragraphs, tail=gate))) is None
    assert _reason_of(_news_page(_article_main(paragraphs[:3], tail=gate))) == "paywall"


def test_a_gate_on_a_page_without_main_content_is_set_aside() -> None:
    """Main extraction finds a few words (the teaser in a container it drops): the text is the stripped template,
    and a gate phrase anywhere in it decides."""
    shell = _shell(
        "<div class='widget'><p>Council approves ferry budget.</p><p>Log in to continue reading.</p></div>",
        "Ferry budget",
    )
    parsed = normalize.parse_page(shell, mode="main")
    assert parsed.main_words is not None and parsed.main_words < normalize.MAIN_FALLBACK_WORDS
    assert _reason_of(shell) == "login"
    assert (
        _reason_of(_shell("<div class='widget'><p>Council approves ferry budget.</p></div>", "Ferry budget"))
        is None
    )


def test_every_gate_phrase_sets_a_teaser_aside() -> None:
    teaser = " ".join(_paragraphs(6, 3))  # 180 words: past the short-page rule
    for reason, phrase in normalize._GATES:
        assert _reason(f"{teaser} {phrase} {FILLER}") == reason, phrase
        assert _reason(f"{teaser} {phrase} {LONG}") is None, phrase
