"""URL keys in bulk equal `url_key`, `UrlKey.text` and the trap pattern URL for URL, on the common shape and
on every other."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.url_keys import _trap_pattern, key_texts, trap_patterns, url_keys_many
from neardup.urls import UrlKey, url_key

EDGES = [
    "https://example.com",
    "HTTP://Example.COM./A/B//?b=2&a=1&a=0#frag?x",
    "http://example.com?x",
    "http://example.com#a?b",
    "https://example.com/a?q=red+shoes&x=%41%2F&&flag&=v",
    "https://example.com/a;jsessionid=AB12?x=1",
    "https://example.com:8080/a/12345/abc123def",
    "https://user@example.com/a",
    "https://[::1]/a",
    " https://example.com/padded ",
    "https://example.com/tab\there",
    "https://exämple.com/ü?ö=1",
    "ftp://example.com/a",
    "mailto:someone@example.com",
    "not a url",
    "http://./",
    "http:///path",
    "https://example.com/2024/01/02/story-42",
    "https://example.com/calendar/2024/12?day=3&view=week",
    "https://example.com/x/ABCDEF/abc_de-12/a12345",
    "https://example.com/123456/abcdef/abc12/abcdef1//7/",
    "https://example.com/a\n",
    "https://example.com/a\nb",
    "https://example.com/\ud800/12",  # a lone surrogate: no UTF-8, parsed one by one
    "",
]


def _same_as_one_by_one(urls: list[str]) -> None:
    keys = url_keys_many(urls)
    assert keys == [url_key(u) for u in urls]
    parsed = [k for k in keys if k is not None]
    assert key_texts(parsed) == [k.text() for k in parsed]
    assert trap_patterns(parsed) == [_trap_pattern(k) for k in parsed]


def test_edge_cases_equal_url_key() -> None:
    _same_as_one_by_one(EDGES)


def test_keys_of_no_url_are_none_and_texts_of_other_keys_are_their_own() -> None:
    assert url_keys_many(["no url", "https://a.example/"]) == [None, UrlKey("https", "a.example", "/", ())]
    odd = [UrlKey("", "", "mailto:x@y", ()), UrlKey("https", "h", "rel", ())]
    assert key_texts(odd) == [k.text() for k in odd]


_ALPHABET = "aZ09.-_/?#&=;:@%+~! \t\nü[]"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda scheme, host, rest: f"{scheme}://{host}{rest}",
            st.sampled_from(["http", "https", "HTTPS", "ftp", "hTtP"]),
            st.text(alphabet="abcXYZ019.-:@[]", max_size=12),
            st.text(alphabet=_ALPHABET, max_size=40),
        )
        | st.text(alphabet=_ALPHABET + "htps:", max_size=30),
        max_size=20,
    )
)
def test_any_urls_equal_url_key(urls: list[str]) -> None:
    _same_as_one_by_one(urls)


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single(n: int) -> None:
    _same_as_one_by_one(["https://example.com/a/123"][:n])
