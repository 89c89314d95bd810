"""Word diff (segments, folding) and the escaping of untrusted page text for Streamlit Markdown."""

from __future__ import annotations

import random
import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.diff import diff_stats, word_blocks, word_diff
from neardup.ui.render import WORD_JOINER, diff_markdown, md_escape

WORDS = st.lists(st.sampled_from(["a", "b", "c", "river", "stone", "x1", "é"]), max_size=60)


def _side(segments: list, side: str) -> str:
    return " ".join(t for t in (s.left if side == "left" else s.right for s in segments) if t)


# --- word_diff ---------------------------------------------------------------------------------
# Words that repeat, differ only by punctuation around them ("Netz" / "Netz:"), are punctuation only, or
# are not ASCII; texts split on any whitespace str.split() knows, Unicode's included.
DIFF_WORDS = st.sampled_from(
    [
        "a",
        "b",
        "c",
        "a,",
        "(b)",
        "Netz",
        "Netz:",
        "«Netz»",
        "—",
        "...",
        "é",
        "ü;",
        "$18.99",
        "18.99",
        "x1",
        "日本",
    ]
)
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u2003", "\x1c"])


@st.composite
def diff_texts(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(DIFF_WORDS | st.text(min_size=1, max_size=4), max_size=80))
    return "".join(t + draw(SEPARATORS) for t in tokens)


@st.composite
def edited(draw: st.DrawFn, text: str) -> str:
    """`text` with a few words replaced, inserted or taken out (a re-fetch)."""
    words = text.split()
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(words)))
        words[at : at + draw(st.integers(0, 3))] = draw(st.lists(DIFF_WORDS, max_size=3))
    return " ".join(words)


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_compiled_blocks_are_difflibs(data: st.DataObject) -> None:
    left = data.draw(diff_texts())
    right = data.draw(diff_texts() | edited(left))
    assert word_blocks(left, right) == word_blocks(left, right, compiled=False)
    assert word_diff(left, right, context=2, fold_min=4) == word_diff(
        left, right, context=2, fold_min=4, compiled=False
    )


def test_compiled_blocks_are_difflibs_on_long_repetitive_texts() -> None:
    rng = random.Random(3)
    for _ in range(20):
        left = " ".join(rng.choice(["the", "a", "of", "river", "stone,", "(river)"]) for _ in range(3000))
        words = left.split()
        for _ in range(rng.randint(1, 30)):
            at = rng.randrange(len(words))
            words[at : at + rng.randint(0, 12)] = rng.choices(
                ["the", "new", "of", "$2.50"], k=rng.randint(0, 12)
            )
        right = " ".join(words)
        assert word_blocks(left, right) == word_blocks(left, right, compiled=False)


@settings(max_examples=200, deadline=None)
@given(WORDS, WORDS)
def test_segments_reconstruct_both_texts_when_nothing_is_folded(a: list[str], b: list[str]) -> None:
    left, right = " ".join(a), "  \n".join(b)  # any whitespace separates words
    segments = word_diff(left, right, fold_min=10_000)
    assert not [s for s in segments if s.op == "fold"]
    assert _side(segments, "left") == " ".join(a)
    assert _side(segments, "right") == " ".join(b)
    for s in segments:
        assert s.op in ("equal", "delete", "insert", "replace")
        if s.op == "equal":
            assert s.left == s.right
        if s.op == "delete":
            assert s.right == "" and s.left
        if s.op == "insert":
            assert s.left == "" and s.right


def test_identical_texts_are_one_equal_segment() -> None:
    segments = word_diff("one two three", "one  two\nthree")
    assert [(s.op, s.left, s.n_words) for s in segments] == [("equal", "one two three", 3)]
    assert diff_stats(segments) == {"changed_words": 0, "equal_words": 3}


def test_a_changed_word_is_a_replace() -> None:
    segments = word_diff("the price is 10 euros", "the price is 12 euros")
    assert [s.op for s in segments] == ["equal", "replace", "equal"]
    assert (segments[1].left, segments[1].right) == ("10", "12")
    assert diff_stats(segments) == {"changed_words": 1, "equal_words": 4}


def test_folding_hides_a_long_equal_run_and_counts_its_words() -> None:
    common = [f"w{i}" for i in range(100)]
    left = " ".join(["START", *common, "old"])
    right = " ".join(["BEGIN", *common, "new"])
    segments = word_diff(left, right, context=12, fold_min=40)
    assert [s.op for s in segments] == ["replace", "equal", "fold", "equal", "replace"]
    head, fold, tail = segments[1:4]
    assert head.left == " ".join(common[:12]) and tail.left == " ".join(common[-12:])
    assert fold.n_words == 100 - 24
    assert fold.left == fold.right == ""
    # the hidden words are counted as equal, and none of them is shown
    assert diff_stats(segments) == {"changed_words": 2, "equal_words": 100}
    shown = _side(segments, "left").split()
    assert "w50" not in shown and len(shown) == 2 + 24
    # the renderer says how many words it hides
    assert "76 equal words" in diff_markdown(segments, "left")


def test_folding_at_the_ends_keeps_context_only_towards_the_change() -> None:
    common = [f"w{i}" for i in range(60)]
    segments = word_diff(" ".join(common + ["x"]), " ".join(common + ["y"]), context=5, fold_min=40)
    assert [s.op for s in segments] == ["fold", "equal", "replace"]
    assert segments[0].n_words == 55
    segments = word_diff(" ".join(["x", *common]), " ".join(["y", *common]), context=5, fold_min=40)
    assert [s.op for s in segments] == ["replace", "equal", "fold"]
    assert segments[2].n_words == 55


def test_short_equal_runs_are_not_folded() -> None:
    common = " ".join(f"w{i}" for i in range(40))
    segments = word_diff(f"a {common} b", f"c {common} d", context=12, fold_min=40)
    assert "fold" not in [s.op for s in segments]


# --- md_escape: untrusted text in Markdown -----------------------------------------------------
PUNCT = set(string.punctuation)


def _all_punctuation_escaped(out: str) -> bool:
    """Every ASCII punctuation character is the second half of a backslash pair."""
    i = 0
    while i < len(out):
        ch = out[i]
        if ch == "\\":
            if i + 1 >= len(out) or out[i + 1] not in PUNCT:
                return False
            i += 2
            continue
        if ch in PUNCT:
            return False
        i += 1
    return True


def _unescape(out: str) -> str:
    result, i = [], 0
    while i < len(out):
        if out[i] == "\\":
            i += 1
        result.append(out[i])
        i += 1
    return "".join(result)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(string.printable + "äé€\u00a0\u2028"), max_size=80)
    | st.text(max_size=40)
)
def test_md_escape_escapes_every_ascii_punctuation(text: str) -> None:
    out = md_escape(text)
    assert _all_punctuation_escaped(out)
    assert "\n" not in out
    # nothing else changes but the whitespace (and the invisible joiners that break autolinks)
    assert _unescape(out).replace(WORD_JOINER, "") == " ".join(text.split()).replace(WORD_JOINER, "")


# remark-gfm's autolink-literal transform (mdast-util-gfm-autolink-literal, as bundled by Streamlit 1.67),
# run on the text after Markdown resolved the escapes. JavaScript's \w is ASCII, as re.ASCII makes it.
GFM_URL = re.compile(r"(?i)(https?://|www(?=\.))([-.\w]+)", re.ASCII)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
LINKY = [
    "https",
    "http",
    "HTTPS",
    "://",
    ":",
    "/",
    "www",
    "WWW",
    ".",
    "@",
    "mail",
    "evil",
    "example",
    "x",
    " ",
    "mailto:",
    "-",
    "_",
    "+",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINKY), max_size=20).map("".join))
def test_md_escape_leaves_no_autolink_literal(text: str) -> None:
    shown = _unescape(md_escape(text))
    assert not GFM_URL.search(shown) and not GFM_EMAIL.search(shown), shown


def test_md_escape_breaks_bare_urls_and_addresses() -> None:
    for text in ("https://evil.example/x", "www.evil.example", "mail@evil.example", "HTTP://EVIL.EXAMPLE"):
        shown = _unescape(md_escape(text))
        assert WORD_JOINER in shown and shown.replace(WORD_JOINER, "") == text
        assert not GFM_URL.search(shown) and not GFM_EMAIL.search(shown)


def test_md_escape_known_payloads() -> None:
    assert md_escape("<script>alert(1)</script>") == r"\<script\>alert\(1\)\<\/script\>"
    assert md_escape("[x](javascript:alert(1))") == r"\[x\]\(javascript\:alert\(1\)\)"
    assert md_escape("$x^2$") == r"\$x\^2\$"
    assert md_escape(":red[x]") == r"\:red\[x\]"
    assert md_escape("<img src=x onerror=alert(1)>") == r"\<img src\=x onerror\=alert\(1\)\>"
    assert md_escape("**bold** _it_ `code`  \n# h") == r"\*\*bold\*\* \_it\_ \`code\` \# h"
    assert md_escape(r"$\alert{1}$") == r"\$\\alert\{1\}\$"


def test_diff_markdown_escapes_page_text_but_keeps_its_own_markup() -> None:
    payload = "<script>alert(1)</script> [click](javascript:alert(1)) $x$"
    segments = word_diff(f"same {payload}", f"same {payload} :red[extra]")
    left, right = diff_markdown(segments, "left"), diff_markdown(segments, "right")
    assert r"\<script\>alert\(1\)" in left and "<script>" not in left
    assert ":green-background[" + md_escape(":red[extra]") + "]" in right
    assert diff_markdown([], "left") == ":gray[*(no text)*]"
