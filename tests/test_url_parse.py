"""The pages' URLs parsed for URL rules (`url_parse.parse_urls`) say of each page what `url_key`, `UrlKey.text`
and the crawl-trap pattern say of its URL; the store keeps them as they are, and rules learned over the kept
parse are those learned over a fresh one."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import engine, rules, url_parse
from neardup.analysis import analyze, load_fingerprints
from neardup.cli import main
from neardup.config import Config
from neardup.parsed_urls import ParsedUrls
from neardup.rules import learn_rules, url_table
from neardup.stages import urls as url_stage
from neardup.store import Store
from neardup.store.pages import PagesOutOfOrder
from neardup.url_keys import _trap_pattern
from neardup.url_parse import parse_urls
from neardup.urls import UrlKey, bare_host, url_key

EDGES = [
    "https://example.com",
    "HTTP://Example.COM./A/B//?b=2&a=1&a=0#frag?x",
    "http://example.com/A/B?a=0&a=1&b=2",
    "https://www.example.com/a;jsessionid=AB12?x=1",
    "https://m.example.com/a/12345/abc123def?utm_source=x",
    "https://example.com:8080/a/12345/abc123def",
    "https://exämple.com/ü?ö=1",
    "https://example.com/a?q=red+shoes&x=%41%2F&&flag&=v",
    "ftp://example.com/a",
    "not a url",
    "",
    "https://example.com/calendar/2024/12?day=3&view=week",
    "https://example.com/calendar/2024/11?day=4&view=week",
]
_ALPHABET = "aZ09.-_/?#&=;:@%+~! ü"


def _assert_parse_says_what_each_url_says(page_id: list[int], urls: list[str]) -> ParsedUrls:
    parsed = parse_urls(np.asarray(page_id, dtype=np.int64), np.asarray(urls, dtype=object))
    order = np.argsort(page_id, kind="stable")
    ordered = [urls[i] for i in order]
    assert parsed.page_id.tolist() == sorted(page_id)
    table = url_table(pd.DataFrame({"page_id": page_id, "url": urls}), parsed=parsed)
    keys = [url_key(u) for u in ordered]
    assert table.raw_keys(parsed.raw.tolist()) == keys
    texts = [(k or UrlKey("", "", u, ())).text() for k, u in zip(keys, ordered, strict=True)]
    assert [table.base_key(b).text() for b in parsed.base.tolist()] == texts
    for i in range(len(ordered)):
        for j in range(len(ordered)):
            assert (parsed.raw[i] == parsed.raw[j]) == (ordered[i] == ordered[j])
            assert (parsed.base[i] == parsed.base[j]) == (texts[i] == texts[j])
    names = list(zip(parsed.trap_hosts.to_pylist(), parsed.trap_patterns.to_pylist(), strict=True))
    families = [None if f < 0 else names[f] for f in parsed.trap.tolist()]
    assert families == [None if k is None else (bare_host(k.host), _trap_pattern(k)) for k in keys]
    return parsed


def test_edge_cases_say_what_each_url_says() -> None:
    ids = list(range(len(EDGES)))
    random.Random(2).shuffle(ids)
    _assert_parse_says_what_each_url_says(ids, EDGES)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda scheme, host, rest: f"{scheme}://{host}{rest}",
            st.sampled_from(["http", "https", "HTTPS", "ftp"]),
            st.sampled_from(["example.com", "www.example.com", "m.example.com", "Other.org", "a:8080", ""]),
            st.text(alphabet=_ALPHABET, max_size=30),
        )
        | st.text(alphabet=_ALPHABET + "htps:", max_size=20),
        max_size=25,
    ),
    st.randoms(use_true_random=False),
)
def test_any_urls_say_what_each_url_says(urls: list[str], rng: random.Random) -> None:
    ids = rng.sample(range(10 * len(urls) + 1), len(urls))
    _assert_parse_says_what_each_url_says(ids, urls)


def _fields(parsed: ParsedUrls) -> dict[str, object]:
    return {
        name: value.tolist() if isinstance(value, np.ndarray) else value
        for name in ParsedUrls.__dataclass_fields__
        for value in [getattr(parsed, name)]
    }


@pytest.mark.parametrize("block", [1, 3, 7])
def test_a_parse_a_block_of_urls_at_a_time_is_the_parse_of_all_at_once(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """URLs repeated, key texts shared and trap families spread over blocks: the same codes and names."""
    urls = [*EDGES, *EDGES[::-1], "https://example.com/a/?utm=1", "https://EXAMPLE.com/a?utm=1", *EDGES[2:9]]
    ids = list(range(len(urls)))
    random.Random(5).shuffle(ids)
    whole = parse_urls(np.asarray(ids, dtype=np.int64), np.asarray(urls, dtype=object))
    monkeypatch.setattr(url_parse, "PARSE_BLOCK", block)
    arrow = pa.array(urls, pa.string())
    assert _fields(url_parse.parse_urls(np.asarray(ids, dtype=np.int64), arrow)) == _fields(whole)
    _assert_parse_says_what_each_url_says(ids, urls)


def test_the_store_keeps_a_parse_as_it_is(tmp_path: Path) -> None:
    ids = list(range(100, 100 + len(EDGES)))
    random.Random(3).shuffle(ids)
    parsed = parse_urls(np.asarray(ids), np.asarray(EDGES, dtype=object))
    with Store(tmp_path / "db.duckdb") as store:
        assert store.parsed_urls() is None
        store.save_parsed_urls(parse_urls(np.asarray([1]), np.asarray(["https://replaced.example/"])))
        store.save_parsed_urls(parsed)
        kept = store.parsed_urls()
    assert kept is not None
    assert _fields(kept) == _fields(parsed)


def _learned(pages: pd.DataFrame, table: rules.UrlTable | None = None) -> tuple[object, ...]:
    learned = learn_rules(pages, table=table)
    return (
        [s.as_dict() for s in learned.accepted],
        [s.as_dict() for s in learned.rejected],
        learned.pages_saved,
        learned.traps.to_dict(orient="records"),
    )


def test_urls_are_parsed_once_per_crawl_and_again_when_the_pages_change(
    sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = url_stage.parse_urls

    def counted(page_id: np.ndarray, urls: np.ndarray, **kwargs: object) -> ParsedUrls:
        calls.append(len(page_id))
        return real(page_id, urls, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(url_stage, "parse_urls", counted)
    db = tmp_path / "copy.duckdb"
    db.write_bytes(sample_db.read_bytes())
    with Store(db) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
        first = engine.ensure_parsed_urls(store, fp.pages)
        again = engine.ensure_parsed_urls(store, fp.pages)
        assert calls == [len(fp.pages)]
        assert _fields(again) == _fields(first)
        fewer = engine.ensure_parsed_urls(store, fp.pages.iloc[1:])  # not every page: parsed, not kept
        assert len(fewer.page_id) == len(fp.pages) - 1
        assert _fields(engine.ensure_parsed_urls(store, fp.pages)) == _fields(first)
        assert calls == [len(fp.pages), len(fp.pages) - 1]
        for threshold in (0.7, 0.8, 0.95):
            pages = analyze(fp, Config(threshold=threshold)).pages
            assert _learned(pages, url_table(fp.pages, parsed=again)) == _learned(pages)


def test_a_report_keeps_the_parse_for_the_url_rules_page(sample_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(sample_db.read_bytes())
    with Store(db) as store:
        assert store.parsed_urls() is None
    assert main(["report", "--db", str(db)]) == 0
    with Store(db) as store:
        kept = store.parsed_urls()
        assert kept is not None
        assert len(kept.page_id) == store.count_pages()


def test_the_parse_holds_its_paths_and_trap_families_as_arrow_strings(tmp_path: Path) -> None:
    """A million-page crawl has about as many distinct paths and crawl-trap families as pages: they are
    held as Arrow columns (bytes and offsets), not as Python strings, fresh or read from the store."""
    parsed = parse_urls(np.arange(len(EDGES)), np.asarray(EDGES, dtype=object))
    with Store(tmp_path / "db.duckdb") as store:
        store.save_parsed_urls(parsed)
        kept = store.parsed_urls()
    assert kept is not None
    for parse in (parsed, kept):
        assert isinstance(parse.paths, pa.StringArray)
        assert isinstance(parse.trap_hosts, pa.StringArray) and isinstance(
            parse.trap_patterns, pa.StringArray
        )
        assert len(parse.trap_hosts) == len(parse.trap_patterns) == int(parse.trap.max()) + 1


@pytest.mark.parametrize("shuffled", [False, True])
def test_every_page_s_urls_are_parsed_from_batches_of_the_store_s_scan(
    sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shuffled: bool
) -> None:
    """Every page's URLs are read twice in batches (their digests, then each distinct URL once), never
    whole: the parse is the parse of the URLs given whole. A file whose scan is not in page id order is
    read whole instead, with the same result."""
    db = tmp_path / "copy.duckdb"
    db.write_bytes(sample_db.read_bytes())
    if shuffled:  # the pages' rows stored in another order than their ids
        with duckdb.connect(str(db)) as con:
            con.execute("CREATE TEMP TABLE p AS SELECT * FROM pages ORDER BY hash(page_id)")
            con.execute("DELETE FROM pages")
            con.execute("INSERT INTO pages SELECT * FROM p")
    monkeypatch.setattr(url_parse, "PARSE_BLOCK", 7)
    monkeypatch.setattr(url_stage, "PARSE_BLOCK", 5)
    with Store(db) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
        page_id = fp.pages["page_id"].to_numpy()
        whole = parse_urls(page_id, store.page_urls(page_id))
        if shuffled:
            with pytest.raises(PagesOutOfOrder):
                list(store.page_url_batches(5))
        else:
            assert [len(b) for b in store.page_url_batches(5)][:2] == [5, 5]
        assert _fields(engine.ensure_parsed_urls(store, fp.pages)) == _fields(whole)
