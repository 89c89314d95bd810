"""Rewritten-URL codes: the same partition of the URLs as rewriting every URL with `rewrite_key` (the
reference below), for any rule set, rewriting only the URLs a rule may change."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import url_images
from neardup.url_images import BaseParts, image_codes
from neardup.urls import UrlKey, UrlRule, bare_host, rewrite_key, url_key


def reference_urls(keys: Sequence[UrlKey], rules: Sequence[UrlRule]) -> list[tuple[object, ...]]:
    """Every key rewritten by the rules of its host and of the host it aliases: (host, path, query)."""
    ops: dict[str, list[UrlRule]] = defaultdict(list)
    target: dict[str, str] = {}
    for r in rules:
        if r.kind == "host_alias":
            target[bare_host(r.name + r.host)] = r.host
        else:
            ops[bare_host(r.host)].append(r)
    out: list[tuple[object, ...]] = []
    for key in keys:
        host = target.get(bare_host(key.host), key.host)
        mine = ops.get(bare_host(host))
        new = rewrite_key(key, host, mine) if mine else UrlKey(key.scheme, host, key.path, key.query)
        out.append((new.host, new.path, new.query))
    return out


def reference_codes(keys: Sequence[UrlKey], rules: Sequence[UrlRule]) -> np.ndarray:
    """`reference_urls` numbered: equal codes, equal rewritten URLs."""
    return pd.factorize(pd.Series(reference_urls(keys, rules), dtype=object))[0]


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


URLS = [
    "https://example.com/story/1",
    "https://example.com/story/1?sessionid=a",
    "https://example.com/story/1?sessionid=b&x=1",
    "https://example.com/story/1?x=1",
    "https://example.com/print/story/1",
    "https://example.com/Print/story/1",
    "https://example.com/story/1/print",
    "https://example.com/Story/1",
    "https://example.com/story/1;jsessionid=AB",
    "https://example.com/story/1;JSESSIONID=AB?sessionid=c",
    "https://m.example.com/story/1",
    "https://www.m.example.com/story/1",
    "https://www.example.com/story/1",
    "https://uk.example.com/story/1?sessionid=z",
    "https://m.other.org/a/print",
    "https://other.org/a",
    "https://other.org/A",
    "https://other.org/a?page=2",
    "https://sprint.example.com/printer",
    "https://example.com/PRINT/story/2",
    "https://example.com/a;b/story/3",
    "https://example.com/a;jsessionid=9;b/story/3",
]
RULES = [
    UrlRule("example.com", "drop_param", "sessionid"),
    UrlRule("example.com", "drop_segment", "print"),
    UrlRule("example.com", "drop_path_param", "jsessionid"),
    UrlRule("example.com", "fold_case"),
    UrlRule("example.com", "host_alias", "m."),
    UrlRule("example.com", "host_alias", "uk."),
    UrlRule("other.org", "host_alias", "m."),
    UrlRule("other.org", "drop_segment", "print"),
    UrlRule("other.org", "fold_case"),
    UrlRule("other.org", "drop_param", "page"),
    UrlRule("nowhere.net", "drop_param", "x"),
    UrlRule("example.com", "drop_segment", "a;b"),
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(URLS), min_size=1, max_size=25),
    st.lists(st.sampled_from(RULES), max_size=6, unique=True),
)
def test_codes_partition_urls_as_rewriting_every_url_does(urls: list[str], rules: list[UrlRule]) -> None:
    keys = [k for k in map(url_key, dict.fromkeys(urls)) if k is not None]
    parts = BaseParts.of(keys)
    codes = image_codes(parts, np.arange(len(keys)), rules)
    assert same_partition(codes, reference_codes(keys, rules))


def test_a_rule_that_applies_only_after_another_is_applied_in_any_order() -> None:
    keys = [k for k in map(url_key, URLS) if k is not None]
    fold, drop = UrlRule("example.com", "fold_case"), UrlRule("example.com", "drop_segment", "print")
    for rules in ([fold, drop], [drop, fold]):
        codes = image_codes(BaseParts.of(keys), np.arange(len(keys)), rules)
        assert same_partition(codes, reference_codes(keys, rules))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.host}-{r.kind}-{r.name}")
def test_only_urls_a_rule_may_change_are_rewritten(rule: UrlRule, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [k for k in map(url_key, URLS) if k is not None]
    parts = BaseParts.of(keys)
    rewritten: list[object] = []  # the paths and queries rewritten

    def counted(fn: Callable[[Any, Sequence[UrlRule]], Any]) -> Callable[[Any, Sequence[UrlRule]], Any]:
        def call(part: Any, rules: Sequence[UrlRule]) -> Any:
            rewritten.append(part)
            return fn(part, rules)

        return call

    monkeypatch.setattr(url_images, "rewrite_path", counted(url_images.rewrite_path))
    monkeypatch.setattr(url_images, "rewrite_query", counted(url_images.rewrite_query))
    codes = image_codes(parts, np.arange(len(keys)), [rule])
    assert same_partition(codes, reference_codes(keys, [rule]))
    if rule.kind == "host_alias":
        assert rewritten == []  # a host is moved by its code, no URL is rewritten
        return
    mine = [k for k in keys if bare_host(k.host) == bare_host(rule.host)]
    changed = [k for k in mine if rewrite_key(k, k.host, [rule]) != k]
    part_of = (lambda k: k.query) if rule.kind == "drop_param" else (lambda k: k.path)
    assert {part_of(k) for k in changed} <= set(rewritten) <= {part_of(k) for k in mine}
    assert len(rewritten) <= len(mine) / 2
    assert len(rewritten) == len(set(rewritten))  # each distinct path or query once


def test_a_query_on_many_paths_is_rewritten_once() -> None:
    urls = [f"https://example.com/story/{i}?utm_source=feed" for i in range(50)]
    keys = [k for k in map(url_key, urls) if k is not None]
    parts = BaseParts.of(keys)
    rule = UrlRule("example.com", "drop_param", "utm_source")
    codes = image_codes(parts, np.arange(len(keys)), [rule])
    assert same_partition(codes, reference_codes(keys, [rule]))
    assert sum(len(kept) for kept in parts.rewrites.values()) == 1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(URLS), min_size=1, max_size=25),
    st.lists(st.sampled_from(RULES), min_size=1, max_size=6, unique=True),
)
def test_a_key_a_rule_does_not_touch_is_rewritten_alike_without_it(
    urls: list[str], rules: list[UrlRule]
) -> None:
    keys = [k for k in map(url_key, dict.fromkeys(urls)) if k is not None]
    with_all = reference_urls(keys, rules)
    parts = BaseParts.of(keys)
    for rule in rules:
        without = reference_urls(keys, [r for r in rules if r != rule])
        for i in np.flatnonzero(~parts.touches(rule)).tolist():
            assert with_all[i] == without[i], (rule, keys[i])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(URLS), min_size=1, max_size=25),
    st.lists(st.sampled_from(RULES), max_size=6, unique=True),
    st.lists(st.sampled_from(RULES), max_size=6, unique=True),
)
def test_urls_rewritten_under_two_rule_sets_compare_equal_by_their_parts(
    urls: list[str], first: list[UrlRule], second: list[UrlRule]
) -> None:
    keys = [k for k in map(url_key, dict.fromkeys(urls)) if k is not None]
    parts = BaseParts.of(keys)
    a = url_images.image_parts(parts, np.arange(len(keys)), first)
    b = url_images.image_parts(parts, np.arange(len(keys)), second)
    ids = np.concatenate([a.ids(parts.widths()), b.ids(parts.widths())])
    rewritten = [*reference_urls(keys, first), *reference_urls(keys, second)]
    assert same_partition(pd.factorize(ids)[0], pd.factorize(pd.Series(rewritten, dtype=object))[0])


@pytest.mark.parametrize(
    "paths",
    [
        ["/story/1", "/Story/1", "/a;b/c", "/PRINT/x"],
        ["/story/1", "/Straße/İstanbul", "/ΣΟΦΙΑ;x=1", "/café"],
    ],
    ids=["ascii", "unicode"],
)
def test_what_a_path_has_is_found_as_python_finds_it(paths: list[str]) -> None:
    keys = [UrlKey("https", "example.com", p, ()) for p in paths]
    parts = BaseParts.of(keys)
    assert parts.upper.tolist() == [p.lower() != p for p in paths]
    assert parts.semicolon.tolist() == [";" in p for p in paths]
    assert parts.lower_paths.tolist() == [p.lower() for p in paths]


def test_a_parameter_s_values_are_coded_per_query() -> None:
    urls = [
        "https://a.com/x?s=1",
        "https://a.com/y?s=1&t=2",
        "https://a.com/z?s=2",
        "https://a.com/w?s=1&s=2",
    ]
    urls += ["https://a.com/v?t=1"]
    keys = [k for k in map(url_key, urls) if k is not None]
    parts = BaseParts.of(keys)
    values = parts.param_values("s")[parts.query].tolist()
    assert values[0] == values[1] != values[2]
    assert len({values[0], values[2], values[3]}) == 3  # (1,), (2,) and (1, 2)
    assert values[4] == -1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="ab/;.Ü-%é", max_size=12), max_size=30, unique=True),
    st.lists(st.text(alphabet="ab/;.Ü-%é", max_size=12), max_size=10),
)
def test_the_text_index_finds_each_known_text_and_no_other(known: list[str], wanted: list[str]) -> None:
    """The distinct paths are Arrow strings, looked up by a hash of their bytes (`url_images.TextIndex`):
    a rewritten path equal to a known one gets its code, any other none."""
    index = url_images.TextIndex.of(pa.array(known, type=pa.string()))
    asked = wanted + known
    expected = [known.index(t) if t in known else -1 for t in asked]
    assert index.codes_of(asked).tolist() == expected


def test_the_text_hashes_are_of_the_bytes_alone() -> None:
    """Equal strings hash alike wherever they sit in an array (its chunks of bytes, a slice, empty ones
    around them)."""
    texts = ["", "/a", "/a/b", "", "/é", "/a"] * 3
    whole = url_images.text_hashes(pa.array(texts, type=pa.string()))
    piecewise = np.concatenate(
        [url_images.text_hashes(pa.array(texts, type=pa.string()).slice(i, 1)) for i in range(len(texts))]
    )
    assert whole.tolist() == piecewise.tolist()
    assert len(set(whole.tolist())) == len(set(texts))


@given(st.lists(st.text(max_size=80), max_size=40), st.integers(0, 5))
@settings(max_examples=200, deadline=None)
def test_the_compiled_text_hashes_are_the_numpy_ones(texts: list[str], skip: int) -> None:
    """The kernel's hashes (`_kernels.text_hashes`) are those of the numpy form (`bytes_hashes`), for any
    strings, empty and multi-byte ones among them, and an array that starts past its buffers' start."""
    array = pa.array(texts, type=pa.string()).slice(min(skip, len(texts)))
    large = array.cast(pa.large_string())
    _, offsets, data = large.buffers()
    expected = url_images.bytes_hashes(
        np.frombuffer(offsets, dtype=np.int64)[large.offset : large.offset + len(large) + 1],
        np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(0, dtype=np.uint8),
    )
    assert url_images.kernels is not None  # built in place for the tests
    assert url_images.text_hashes(array).tolist() == (expected.tolist() if len(array) else [])


def test_the_distinct_paths_are_held_as_arrow_strings() -> None:
    keys = [k for k in map(url_key, URLS) if k is not None]
    parts = BaseParts.of(keys)
    assert isinstance(parts.paths, pa.StringArray)
    assert parts.paths.to_pylist() == list(dict.fromkeys(k.path for k in keys))
