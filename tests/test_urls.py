"""canonicalize_url: the spec's cases, and idempotence as a property."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.urls import TRACKING_PARAMS, UrlRule, apply_url_rules, canonicalize_url, host_of


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # lowercase scheme and host, http -> https
        ("HTTP://EXAMPLE.COM/a", "https://example.com/a"),
        ("HtTpS://Example.Org/a", "https://example.org/a"),
        # drop www.
        ("https://www.example.com/a", "https://example.com/a"),
        ("http://WWW.Example.com/a", "https://example.com/a"),
        # drop the fragment
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/a?x=1#top", "https://example.com/a?x=1"),
        # trailing slash dropped, but not on the root
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com/a/b//", "https://example.com/a/b"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com", "https://example.com/"),
        # path keeps its case
        ("https://Example.com/Some/MixedCase/Path", "https://example.com/Some/MixedCase/Path"),
        # default ports dropped, others kept
        ("http://example.com:80/a", "https://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8080/a", "https://example.com:8080/a"),
        # remaining parameters sorted
        ("https://example.com/a?b=2&a=1&c=3", "https://example.com/a?a=1&b=2&c=3"),
        ("https://example.com/s?q=red+shoes&page=2", "https://example.com/s?page=2&q=red%20shoes"),
        # not an absolute http(s) URL: stripped, otherwise unchanged
        ("  /relative/Path/  ", "/relative/Path/"),
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("ftp://Example.com/File", "ftp://Example.com/File"),
    ],
)
def test_canonicalize_url_spec_cases(url: str, expected: str) -> None:
    assert canonicalize_url(url) == expected


@pytest.mark.parametrize(
    "param",
    ["utm_source", "utm_medium", "utm_campaign", "UTM_Term", "utm_anything", *sorted(TRACKING_PARAMS)],
)
def test_tracking_params_are_dropped(param: str) -> None:
    url = f"https://example.com/article?id=7&{param}=abc&z=1"
    assert canonicalize_url(url) == "https://example.com/article?id=7&z=1"


def test_tracking_param_list_is_the_spec() -> None:
    assert {"gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "ref", "src"} == TRACKING_PARAMS


def test_params_that_only_resemble_tracking_are_kept() -> None:
    # "reference" and "source" are not "ref" / "src"; "xutm_source" does not start with utm_.
    url = "https://example.com/a?source=1&reference=2&xutm_source=3"
    assert canonicalize_url(url) == "https://example.com/a?reference=2&source=1&xutm_source=3"


def test_only_tracking_params_leaves_no_query() -> None:
    assert canonicalize_url("http://www.example.com/a/?utm_source=x&gclid=y#f") == "https://example.com/a"


def test_twins_collapse_to_one_string() -> None:
    twins = [
        "https://example.com/news/42",
        "http://example.com/news/42",
        "https://www.example.com/news/42/",
        "https://EXAMPLE.com/news/42?utm_source=newsletter&utm_medium=email",
        "https://example.com/news/42?fbclid=abc#comments",
    ]
    assert {canonicalize_url(u) for u in twins} == {"https://example.com/news/42"}


def test_repeated_www_is_stripped_but_a_www_domain_is_kept() -> None:
    # Found by the idempotence property: "www.www.com" once gave "www.com", then "com".
    assert canonicalize_url("http://www.www.example.com/a") == "https://example.com/a"
    assert canonicalize_url("http://www.www.com/") == "https://www.com/"
    assert canonicalize_url("https://www.com/") == "https://www.com/"


def test_host_of() -> None:
    assert host_of("https://example.com/a") == "example.com"
    assert host_of("https://www.example.com/a") == "example.com"
    assert host_of("not a url") == ""


# --- idempotence ---------------------------------------------------------------------------------
_label = st.one_of(
    st.sampled_from(["www", "news", "blog", "example", "Shop", "a"]),
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", min_size=1, max_size=8
    ).filter(lambda s: not s.startswith("-") and not s.endswith("-")),
)
_segment = st.text(alphabet="abcdefXYZ019-_.~%20", min_size=0, max_size=6)
_param_name = st.one_of(
    st.sampled_from(
        [
            "utm_source",
            "UTM_Medium",
            "utm_campaign",
            "gclid",
            "fbclid",
            "msclkid",
            "mc_cid",
            "mc_eid",
            "ref",
            "src",
            "id",
            "page",
            "q",
            "sort",
            "Ref",
        ]
    ),
    st.text(alphabet="abcxyz_", min_size=1, max_size=5),
)
_param_value = st.text(alphabet="abc XYZ019+&=/%?", max_size=6)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    www = draw(st.sampled_from(["", "www.", "WWW."]))
    labels = draw(st.lists(_label, min_size=1, max_size=3))
    tld = draw(st.sampled_from(["com", "org", "DE", "co.uk"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    segments = draw(st.lists(_segment, max_size=4))
    trailing = draw(st.sampled_from(["", "/", "//"]))
    path = "".join("/" + s for s in segments) + trailing
    params = draw(st.lists(st.tuples(_param_name, _param_value), max_size=5))
    query = "&".join(f"{k}={v}" for k, v in params)
    fragment = draw(st.sampled_from(["", "#", "#top", "#Section-2"]))
    return f"{scheme}://{www}{'.'.join(labels)}.{tld}{port}{path}{'?' + query if query else ''}{fragment}"


@settings(max_examples=400, deadline=None)
@given(urls())
def test_canonicalize_is_idempotent(url: str) -> None:
    once = canonicalize_url(url)
    assert canonicalize_url(once) == once


@settings(max_examples=200, deadline=None)
@given(urls())
def test_canonical_form_has_the_promised_shape(url: str) -> None:
    canon = canonicalize_url(url)
    parts = urlsplit(canon)
    assert parts.scheme == "https"
    assert parts.fragment == ""
    assert parts.hostname == parts.hostname.lower()
    host = parts.hostname or ""
    # "www." is gone unless it is the registrable name itself (www.com)
    assert not host.startswith("www.") or "." not in host[4:]
    assert parts.path == "/" or not parts.path.endswith("/")
    # sorted by the decoded name ("?" sorts after "0", though its escape "%3F" sorts before)
    names = [k for k, _ in parse_qsl(parts.query, keep_blank_values=True)]
    assert names == sorted(names)
    assert not any(n.lower().startswith("utm_") or n.lower() in TRACKING_PARAMS for n in names)


@settings(max_examples=300, deadline=None)
@given(urls(), st.sampled_from(["", "m.", "uk."]), st.booleans())
def test_url_rules_are_idempotent_and_keep_the_canonical_shape(url: str, alias: str, fold: bool) -> None:
    host = urlsplit(canonicalize_url(url)).netloc  # with its port: rules are learned on host:port
    aliased = url.replace("://", "://" + alias, 1)
    rules = [
        UrlRule(host, "drop_param", "id"),
        UrlRule(host, "drop_param", "page"),
        UrlRule(host, "drop_segment", "a"),
        UrlRule(host, "drop_path_param", "jsessionid"),
    ]
    if alias:
        rules.append(UrlRule(host, "host_alias", alias))
    if fold:
        rules.append(UrlRule(host, "fold_case"))
    once = apply_url_rules(aliased, rules)
    assert apply_url_rules(once, rules) == once
    assert canonicalize_url(once) == once
    names = [k for k, _ in parse_qsl(urlsplit(once).query, keep_blank_values=True)]
    assert "id" not in names and "page" not in names
    assert "a" not in urlsplit(once).path.split("/")
    if alias:
        assert urlsplit(once).netloc == host
