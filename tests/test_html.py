"""neardup._html, the C extractor over lexbor: resiliparse 1.1.0's main-content rules, tag stripping,
whitespace collapsing, and hostile pages."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import _html
from neardup.config import DEFAULT_STRIP_TAGS
from neardup.normalize import MAIN_FALLBACK_WORDS, parse_page

CASES = json.loads((Path(__file__).parent / "data" / "extract_cases.json").read_text())["cases"]


# --- main-content rules ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_main_text_is_resiliparse_110s(case: dict) -> None:
    """Each case exercises one rule; its expected text is resiliparse 1.1.0's (scripts/make_extract_cases.py)."""
    text, _ = _html.extract(case["html"], True, DEFAULT_STRIP_TAGS, 0)
    assert text == case["text"]


def test_the_cases_exercise_both_outcomes_of_the_rules() -> None:
    """A case file where nothing is dropped (or everything) would test little: most cases drop some of the
    page's text (against all of its text nodes), and some keep all of it."""
    every_text = [_html.extract(c["html"], False, ("template",), 0)[0] for c in CASES]
    dropped = sum(c["text"] != full for c, full in zip(CASES, every_text, strict=True))
    assert dropped >= 30 and len(CASES) - dropped >= 10, dropped


# The RE2 patterns of resiliparse 1.1.0 (resiliparse/extract/html2text.pyx), verbatim, in the order of
# _html.c's PATTERNS; True: case-insensitive.
RE2_PATTERNS = [
    (r"(?:^|\s)(?:(?:is|visually)[_-])?(?:display-none|hidden|invisible|collapsed|h-0|nocontent|expandable)(?:-xs|-sm|-lg|-2?xl)?(?:$|\s)", True),
    (r"(?:^|[\s_-])(?:(?:log[_-]?in|sign[_-]?(?:in|up)|account)|user[_-](?:info|profile|settings|actions))(?:$|[\s_-])", True),
    (r"(?:^|\s|__|--|mobile-|desktop-|l-|m-|c-)(?:social(?:media|search)?|share(?:daddy)?|syndication|newsletter|sharing|follow|email|likes?|(?:give[_-]?)?feedback|(?:brand[_-])?engagement|facebook|twitter|subscribe|wa|jp|aptf-follow)(?:[_-]?(?:post|links?|section|icons?|btn|buttons?|target))?(?:$|[\s_-])", True),
    (r"(?:^|\s)short-view-count|spinner(?:$|[\s_-])", False),
    (r"(?:^|\s)(?:link[_-]?)?(?:skip(?:[_-]?(?:to|link))?|scroll[_-]?(?:up|down)|next|prev(?:ious)?|permalink|pagination|skip-to-(?:main-)?content)(?:$|\s|[_-]?(?:post|article))", True),
    (r"(?:brand(?:ing)?[_-]*)?logo(?:$|\s)", True),
    (r"(?:^|\s)(?:(?:google|wide)[_-]?ads?|ad(?:vert|vertise(?:ment|link)?|$|_[a-f0-9]+)|sponsor(?:ed)?|promoted|paid|(?:wide)?banner|donate)(?:$|[\s_-])", True),
    (r"(?:^|[\s_-])(?:article|entry|post|story|single[_-]?post|(?:main[_-])?content|body|text|page)?(?:$|[\s_-])", True),
    (r"(?:^|\s)(?:l|m|wp|global|page|site|full|sticky)[_-]*header(?:[_-]?wrap(?:per)?|bar)?(?:$|\s)", True),
    (r"(?:^|[\s_-])(?:global|page|site|copyright)?(?:footer|copyright|cookie|consent|legal|fcontainer)(?:$|[\s_-])", True),
    (r"(?:^|\s)(?:(?:l|m|wp|main|site|page|sub|article|global|sticky|main)[_-]*)?(?:nav(?:igation)?|menu(?:[_-]item)?|drop[_-]?down|bread[_-]?crumbs?)|(?:links?[_-]?(?:bar|box|list|container|section|wrapp(?:er))?)(?:$|[\s_-])", True),
    (r"(?:^|[\s_-])(?:trends|trending|recommended|featured|popular|editors?[_-]picks|related|read-next|(?:related|more|other)[_-]?(?:links|articles|posts|guides|stories))(?:$|[\s_-])", True),
    (r"(?:^|[\s_-])search(?:[_-]?(?:bar|facility|box))?(?:$|\s)", True),
    (r"(?:^|\s)(?:(?:l|wp|right|left|global|sticky)[_-]*)?(?:(?:side|sticky)[_-]?(?:bars?|box)|one-third)(?:$|[\s_-])", True),
    (r"(?:^|\s)(?:wp-|p-|-l)?(?:modal|popup|lightbox)(?:[_-]*(?:window|pane|box))?(?:$|[\s_-])", True),
    (r"(?:^|[\s_-])(?:gallery|carousel)(?:$|[\s_-])", True),
    (r"(?:^|\s)print[_-]", True),
    (r"^(?:(?:l|wp|global|page|site|full|sticky)[_-]*)?(?:(?:head|foot)(?:er)?|right)$", True),
    (r"(?:^|;\s*)(?:display\s?:\s?none|visibility\s?:\s?hidden)(?:$|\s?;)", True),
]
CLASS_ONLY, BOTH, ID_ONLY, STYLE = range(0, 4), range(4, 17), 17, 18
assert len(RE2_PATTERNS) == _html.N_PATTERNS

# Fragments that the patterns are made of, so that random joins hit and miss them. No \v and no
# non-ASCII: there Python's \s and case folding differ from RE2's.
_FRAGMENTS = ["nav", "Menu", "item", "site", "page", "header", "footer", "side", "bar", "box", "ad", "ads", "vert",
              "3f", "print", "hidden", "is", "display", "none", ":", ";", "visibility", "link", "s", "skip", "to",
              "post", "article", "content", "main", "logo", "brand", "share", "social", "wa", "c", "spinner",
              "SPINNER", "related", "more", "search", "modal", "wp", "gallery", "sign", "in", "up", "account",
              "user", "info", "right", "head", "foot", "er", "l", "m", "one-third", "x",
              "-", "_", "__", "--", " ", "  ", "\t", "\n", "\r", "\f", "\x01", "\x02", "\x03"]
_attr = st.lists(st.sampled_from(_FRAGMENTS), max_size=8).map("".join)


def _python_mask(cls: str, id_: str, style: str) -> int:
    both = cls + " " + id_ if cls else id_
    mask = 0
    for i, (pattern, icase) in enumerate(RE2_PATTERNS):
        subject = cls if i in CLASS_ONLY else both if i in BOTH else id_ if i == ID_ONLY else style
        # RE2's $ is the end of the text only (Python's also matches before a final newline): \Z
        if subject and re.search(pattern.replace("$", r"\Z"), subject, re.ASCII | (re.IGNORECASE if icase else 0)):
            mask |= 1 << i
    return mask


@settings(max_examples=400)
@given(_attr, _attr, _attr)
def test_posix_patterns_decide_as_the_re2_originals(cls: str, id_: str, style: str) -> None:
    assert _html.rule_flags(cls, id_, style) == _python_mask(cls, id_, style)


@pytest.mark.parametrize(("cls", "id_", "style"), [
    ("site-header", "", ""), ("main-nav", "x", ""), ("ad", "", ""), ("ad_3f2a", "", ""), ("sidebar", "", ""),
    ("", "footer", ""), ("", "site-header", ""), ("is-hidden", "", ""), ("x", "", "display: none;"),
    ("mobile-share-btn", "", ""), ("print-only", "", ""), ("SPINNER", "", ""), ("spinner", "", ""),
    ("ad\n", "", ""), ("x", "", "a\ndisplay:none"), ("x", "right\n", ""),  # glibc anchors at a newline
])
def test_posix_patterns_on_known_classes(cls: str, id_: str, style: str) -> None:
    assert _html.rule_flags(cls, id_, style) == _python_mask(cls, id_, style)
    assert _html.rule_flags(cls, id_, style) == _html.rule_flags(cls, id_, style)  # memoized: the same again


# --- whitespace ------------------------------------------------------------------------------------
_SPACE_CHARS = [c for c in map(chr, range(0x3001)) if c.isspace()] + ["\u3000"]


@given(st.lists(st.one_of(st.sampled_from(_SPACE_CHARS), st.text(max_size=5)), max_size=30).map("".join))
def test_collapse_is_split_and_join(s: str) -> None:
    assert _html.collapse(s) == " ".join(s.split())


def test_collapse_knows_every_python_space() -> None:
    spaces = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    assert _html.collapse(f"a{spaces}b") == "a b"
    assert _html.collapse("a\u200bb\ufeffc") == "a\u200bb\ufeffc"  # zero-width: not spaces to Python either


# --- the two modes and the fallback ----------------------------------------------------------------
def test_fallback_to_stripped_text_below_the_word_floor() -> None:
    """A hub page whose main text is a heading: fewer than MAIN_FALLBACK_WORDS words, so the stripped text."""
    links = " ".join(f'<li><a href="/{i}">story number {i}</a></li>' for i in range(30))
    html = (f"<html><body><nav>site menu</nav><h1>Latest</h1><div class='x' id='y'>"
            f"<ul class='listing'>{links}</ul></div></body></html>")
    main_only, _ = _html.extract(html, True, DEFAULT_STRIP_TAGS, 0)
    assert main_only == "Latest"
    text, _ = _html.extract(html, True, DEFAULT_STRIP_TAGS, MAIN_FALLBACK_WORDS)
    assert text == _html.extract(html, False, DEFAULT_STRIP_TAGS, 0)[0]
    assert text.startswith("Latest story number 0") and "site menu" not in text


def test_strip_mode_drops_the_named_tags_and_hidden_inputs() -> None:
    html = ("<html><body><nav>menu</nav><p>one<b>two</b></p><input type='HIDDEN' value='v'>"
            "<footer>foot</footer><section>three</section></body></html>")
    assert _html.extract(html, False, DEFAULT_STRIP_TAGS, 0)[0] == "one two three"
    assert _html.extract(html, False, ("section",), 0)[0] == "menu one two foot"


def test_title_is_the_documents_title_element() -> None:
    html = ("<html><head><title>\n  Real   title </title></head><body>"
            "<svg><title>icon</title></svg><p>text</p></body></html>")
    assert _html.extract(html, True, DEFAULT_STRIP_TAGS, 0)[1] == "Real title"
    assert _html.extract("<html><body><svg><title>icon</title></svg></body></html>", False, (), 0)[1] == ""


def test_resiliparse_extractor_is_still_available() -> None:
    html = "<html><body>" + "<p>" + " ".join(["word"] * 80) + "</p></body></html>"
    assert parse_page(html, mode="main", extractor="resiliparse").text == parse_page(html, mode="main").text


# --- hostile input ---------------------------------------------------------------------------------
def test_lone_surrogates_do_not_raise() -> None:
    text, _ = _html.extract("<p>a\ud800b</p>", False, (), 0)
    assert text == "a?b"


def test_a_huge_page_then_a_small_one() -> None:
    """A page over 4 MB gives its parser memory back; the next page parses as usual."""
    big = "<html><body>" + "<p>lorem ipsum dolor</p>" * 250_000 + "</body></html>"
    text, _ = _html.extract(big, True, DEFAULT_STRIP_TAGS, 0)
    assert text.count("lorem") == 250_000
    assert _html.extract("<p>small page</p>", False, (), 0)[0] == "small page"


def test_deep_nesting_and_garbage() -> None:
    deep = "<div>" * 50_000 + "bottom" + "</div>" * 50_000
    assert _html.extract(deep, True, (), 0)[0] == "bottom"
    assert _html.extract(deep, False, (), 0)[0] == "bottom"
    for junk in ("", "<", "</p></body></html>", "<![CDATA[x]]>", "\x00\x00", "<html><body><table><td>x"):
        assert isinstance(_html.extract(junk, True, DEFAULT_STRIP_TAGS, MAIN_FALLBACK_WORDS)[0], str)


def test_a_quirks_mode_page_does_not_change_how_the_next_one_parses() -> None:
    """lexbor's document is reused between pages; a page without a doctype (quirks mode: class names match
    in any case) must not leave the next page in quirks mode."""
    # In quirks mode a <p> stays open around a <table>, so the <ul> foster-parented out of the table lands
    # in the <p>, one level deeper: deep enough (4) to be kept. In standards mode the table closes the <p>.
    quirks = ("<html><body><div><div><p>x<table><ul><li>item</li></ul><tr><td>cell</td></tr></table></p>"
              "</div></div></body></html>")
    standards = "<!doctype html>" + quirks
    assert _html.extract(quirks, True, (), 0)[0] == "x item cell"
    assert _html.extract(standards, True, (), 0)[0] == "x cell"


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        _html.extract(b"<p>bytes</p>", True, (), 0)
    with pytest.raises(TypeError):
        _html.extract("<p>x</p>", True, ["nav"], 0)
    with pytest.raises(TypeError):
        _html.extract("<p>x</p>", True, (1,), 0)


def test_threads_each_get_their_own_parser() -> None:
    """The GIL is released while a page is parsed: threads must not share a document."""
    pages = [c["html"] for c in CASES] * 8
    serial = [_html.extract(p, True, DEFAULT_STRIP_TAGS, 0) for p in pages]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda p: _html.extract(p, True, DEFAULT_STRIP_TAGS, 0), pages))
    assert threaded == serial
