"""URL rules learned from clusters: the variant rules are found, load-bearing parameters are not, and the
rules apply in canonicalization."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import page_html, words_text, write_jsonl

from neardup import engine, rules, url_images
from neardup.analysis import Analysis, Fingerprints, analyze, load_fingerprints
from neardup.cli import main
from neardup.config import Config, load_config, save_config
from neardup.errors import ConfigError
from neardup.report import report_dict
from neardup.rules import LearnedRules, crawler_rules, learn_rules, url_table
from neardup.store import Store
from neardup.urls import UrlRule, apply_url_rules, bare_host


def _records() -> list[dict]:
    """A news site whose articles are also fetched with ?sessionid= and under /print/, a listing whose ?page=
    selects other text, and a calendar whose every day shows the same page."""
    rng = random.Random(5)
    recs = []
    for i in range(8):
        body = words_text(rng, 200)
        url = f"https://news.example.com/story/{i}"
        recs.append({"url": url, "html": page_html(f"Story {i}", body), "fetched_at": "2024-01-01"})
        if i < 5:
            recs.append(
                {
                    "url": f"{url}?sessionid=s{i}x",
                    "html": page_html(f"Story {i}", body),
                    "fetched_at": "2024-01-02",
                }
            )
        if i >= 3:
            recs.append(
                {
                    "url": f"https://news.example.com/print/story/{i}",
                    "html": page_html(f"Story {i}", body),
                    "fetched_at": "2024-01-03",
                }
            )
    for p in range(1, 5):
        recs.append(
            {
                "url": f"https://news.example.com/archive?page={p}",
                "html": page_html(f"Archive {p}", words_text(rng, 200)),
                "fetched_at": "2024-01-04",
            }
        )
    # Two listings that share a page: ?page=1 is the bare listing, the other pages differ.
    recs.append(
        {"url": "https://news.example.com/archive", "html": recs[-4]["html"], "fetched_at": "2024-01-05"}
    )
    calendar = page_html("Calendar", words_text(rng, 200))
    for day in range(1, 13):
        recs.append(
            {
                "url": f"https://news.example.com/calendar/2024/{day}",
                "html": calendar,
                "fetched_at": "2024-01-06",
            }
        )
    return recs


def _every_kind_records() -> list[dict]:
    """Two sites with a URL variant of every rule kind: a mobile host (`m.`), an `amp` segment, a
    `;jsessionid=` path parameter, upper case in paths, a `utm_source` parameter; a `www.` host that is
    its bare host's; and a listing whose `sort` parameter sometimes selects other text."""
    rng = random.Random(11)
    recs = []

    def add(url: str, html: str) -> None:
        recs.append({"url": url, "html": html, "fetched_at": "2024-02-01"})

    def site(title: str, n: int, url: str, variants: dict[str, Callable[[int], bool]]) -> None:
        """`n` articles at `url`, each also at the variant URLs whose condition holds for it."""
        for i in range(n):
            html = page_html(f"{title} {i}", words_text(rng, 180))
            add(url.format(i=i), html)
            for variant, holds in variants.items():
                if holds(i):
                    add(variant.format(i=i), html)

    site(
        "Article",
        12,
        "https://shop.example.org/item/{i}",
        {
            "https://m.shop.example.org/item/{i}": lambda i: i % 2 == 0,
            "https://shop.example.org/item/{i}/amp": lambda i: i % 3 == 0,
            "https://shop.example.org/item/{i};jsessionid=A{i}B": lambda i: i % 4 == 1,
            "https://shop.example.org/Item/{i}": lambda i: i % 4 == 2,
            "https://shop.example.org/item/{i}?utm_source=mail": lambda i: i % 3 == 1,
        },
    )
    for i in range(8):
        html = page_html(f"Listing {i}", words_text(rng, 180))
        add(f"https://lists.example.com/all?ref={i}", html)
        if i < 4:
            add(f"https://lists.example.com/all?ref={i}&sort=asc", html)
        else:
            add(
                f"https://lists.example.com/all?sort=desc&ref={i}",
                page_html(f"Other {i}", words_text(rng, 180)),
            )
    site(
        "Note",
        6,
        "https://www.notes.example.net/note/{i}",
        {
            "https://notes.example.net/print/note/{i}": lambda i: i % 2 == 0,
            "https://www.notes.example.net/note/{i}?utm_source=feed&utm_medium=rss": lambda i: i % 3 == 0,
        },
    )
    return recs


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("rules")
    path = tmp / "rules.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, write_jsonl(tmp / "crawl.jsonl", _records()), Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
    return path


def _analysis(db: Path, config: Config | None = None) -> Analysis:
    config = config or Config()
    with Store(db) as store:
        return analyze(load_fingerprints(store, config, jobs=1), config)


def test_learns_the_session_parameter_and_print_segment(db: Path) -> None:
    learned = learn_rules(_analysis(db).pages)
    by_rule = {s.rule: s for s in learned.accepted}
    session = by_rule[UrlRule("news.example.com", "drop_param", "sessionid")]
    assert (session.precision, session.pairs_in_cluster, session.clusters, session.pages_saved) == (
        1.0,
        7,  # stories 3 and 4 are also printed: each of their 2 session URLs merges with 2 pages
        5,
        5,
    )
    printed = by_rule[UrlRule("news.example.com", "drop_segment", "print")]
    assert (printed.precision, printed.pairs_in_cluster, printed.pages_saved) == (1.0, 7, 5)
    assert learned.pages_saved == 10


def test_a_load_bearing_parameter_is_rejected_with_its_counter_examples(db: Path) -> None:
    learned = learn_rules(_analysis(db).pages)
    page = [s for s in learned.rejected if s.rule == UrlRule("news.example.com", "drop_param", "page")]
    assert page, [s.rule for s in learned.rejected]
    # dropping ?page= merges the 5 listing URLs (10 pairs); only archive ~ archive?page=1 is one page
    assert (page[0].merged_pairs, page[0].pairs_in_cluster, page[0].precision) == (10, 1, 0.1)
    assert page[0].counter_examples
    assert all("archive" in a and "page=" in a + b for a, b in page[0].counter_examples)
    assert UrlRule("news.example.com", "drop_param", "page") not in learned.rules


def test_crawl_trap_family(db: Path) -> None:
    traps = learn_rules(_analysis(db).pages).traps
    row = traps[traps["pattern"] == "/calendar/{n}/{n}"].iloc[0]
    assert (row["host"], row["urls"], row["distinct_texts"]) == ("news.example.com", 12, 1)
    assert len(traps) == 1


def test_rules_apply_in_canonicalization_and_the_report(db: Path, tmp_path: Path) -> None:
    rules = learn_rules(_analysis(db).pages).rules
    assert apply_url_rules("https://www.news.example.com/print/story/4?sessionid=zz", rules) == (
        "https://news.example.com/story/4"
    )
    assert apply_url_rules("https://news.example.com/archive?page=2", rules).endswith("page=2")
    config = Config(url_rules=rules)
    path = tmp_path / "dupcheck.yaml"
    save_config(config, path)
    assert load_config(path) == config
    analysis = _analysis(db, config)
    assert set(analysis.pages.loc[analysis.pages["url"].str.contains("story/4"), "canonical_url"]) == {
        "https://news.example.com/story/4"
    }
    savings = report_dict(analysis)["url_rules"]
    assert savings["pages_not_fetched"] == 10
    assert savings["redundant_pct_after"] < savings["redundant_pct_before"]
    assert report_dict(_analysis(db))["url_rules"] is None


def test_crawler_list() -> None:
    rules = (
        UrlRule("a.com", "drop_param", "sid"),
        UrlRule("a.com", "drop_segment", "print"),
        UrlRule("a.com", "host_alias", "m."),
    )
    [entry] = crawler_rules(rules)
    assert entry["drop_params"] == ["sid"] and entry["aliases"] == ["m.a.com"]
    rewrite = entry["path_rewrites"][0]
    assert re.sub(rewrite["match"], rewrite["replace"], "/print/story/1") == "/story/1"
    assert re.sub(rewrite["match"], rewrite["replace"], "/printer/story") == "/printer/story"


@pytest.mark.parametrize(
    "value",
    [
        [{"host": "a.com", "kind": "drop_everything", "name": "x"}],
        [{"host": "a.com", "kind": "drop_param"}],
        [{"host": "a.com", "kind": "host_alias", "name": "m"}],
        [{"host": "a.com", "kind": "drop_param", "name": "x", "extra": 1}],
        "drop all",
    ],
)
def test_bad_url_rules_are_config_errors(value: object) -> None:
    with pytest.raises(ConfigError, match="url rule"):
        Config.from_dict({"url_rules": value})


def test_cli_rules_writes_config_and_crawler_list(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, crawler = tmp_path / "dupcheck.yaml", tmp_path / "rules.json"
    assert main(["rules", "--db", str(db), "--out", str(out), "--crawler-out", str(crawler), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.split("\nwrote ")[0])
    assert {(r["kind"], r.get("name")) for r in data["rules"]} >= {
        ("drop_param", "sessionid"),
        ("drop_segment", "print"),
    }
    assert load_config(out).url_rules
    assert json.loads(crawler.read_text())[0]["drop_params"] == ["sessionid"]
    assert yaml.safe_load(out.read_text())["url_rules"]


def _learned_as_data(learned: LearnedRules) -> tuple[list[dict], list[dict], int, list[dict]]:
    return (
        [s.as_dict() for s in learned.accepted],
        [s.as_dict() for s in learned.rejected],
        learned.pages_saved,
        learned.traps.to_dict(orient="records"),
    )


# The rules learned, with their numbers and counter-examples, on the sample and on `_every_kind_records`
# at two thresholds (tests/data/rules/learned.json, as measured on every page of each rule's hosts).
LEARNED = json.loads((Path(__file__).parent / "data" / "rules" / "learned.json").read_text())


def _every_kind_fingerprints(tmp_path: Path) -> Fingerprints:
    """`_every_kind_records` loaded into a database under `tmp_path`, fingerprinted at the defaults."""
    with Store(tmp_path / "every_kind.duckdb") as store:
        engine.ingest_file(
            store, write_jsonl(tmp_path / "crawl.jsonl", _every_kind_records()), Config(), jobs=1
        )
        engine.ensure_fingerprints(store, Config(), jobs=1)
        return load_fingerprints(store, Config(), jobs=1)


def _pinned(learned: LearnedRules) -> dict:
    accepted, rejected, saved, traps = _learned_as_data(learned)
    return json.loads(
        json.dumps({"accepted": accepted, "rejected": rejected, "pages_saved": saved, "traps": traps})
    )


def test_the_rules_and_their_numbers_are_those_pinned_at_each_threshold(
    sample_db: Path, tmp_path: Path
) -> None:
    with Store(sample_db) as store:
        sample = load_fingerprints(store, Config(), jobs=1)
    every_kind = _every_kind_fingerprints(tmp_path)
    kinds = {r["kind"] for r in LEARNED["every_kind 0.8"]["accepted"]}
    assert kinds == {"host_alias", "drop_segment", "drop_path_param", "fold_case", "drop_param"}
    for name, fp, thresholds in (("sample", sample, (0.8, 0.95)), ("every_kind", every_kind, (0.8,))):
        table = url_table(fp.pages)  # one table for every threshold, as the app keeps it
        for threshold in thresholds:
            learned = learn_rules(analyze(fp, Config(threshold=threshold)).pages, table=table)
            assert _pinned(learned) == LEARNED[f"{name} {threshold}"], (name, threshold)


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.95])
def test_rules_learned_over_a_url_table_are_those_learned_from_the_pages(
    sample_db: Path, threshold: float
) -> None:
    config = Config(threshold=threshold)
    with Store(sample_db) as store:
        fp = load_fingerprints(store, config, jobs=1)
    table = url_table(fp.pages)
    learned = learn_rules(analyze(fp, config).pages, table=table)
    assert learned.accepted  # the sample has URL variants
    assert _learned_as_data(learned) == _learned_as_data(learn_rules(analyze(fp, config).pages))


def test_a_threshold_move_parses_no_url_again_and_rewrites_each_url_once_per_rule_set(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(sample_db) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
    table = url_table(fp.pages)
    calls = {"url_key": 0, "rewrite": 0}

    def counted(name: str, fn: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object) -> object:
            calls[name] += 1
            return fn(*args)

        return call

    monkeypatch.setattr(rules, "url_key", counted("url_key", rules.url_key))
    monkeypatch.setattr(url_images, "rewrite_path", counted("rewrite", url_images.rewrite_path))
    monkeypatch.setattr(url_images, "rewrite_query", counted("rewrite", url_images.rewrite_query))
    first = learn_rules(analyze(fp, Config(threshold=0.8)).pages, table=table)
    assert calls["url_key"] == 0
    distinct_urls = len(table.parse.key_path)
    assert 0 < calls["rewrite"] <= distinct_urls * (len(first.accepted) + len(first.rejected) + 1)
    calls["rewrite"] = 0
    again = learn_rules(analyze(fp, Config(threshold=0.8)).pages, table=table)
    assert calls == {"url_key": 0, "rewrite": 0}  # every rule set's rewrites are kept in the table
    assert _learned_as_data(again) == _learned_as_data(first)


def test_a_url_table_of_other_pages_is_refused(sample_db: Path) -> None:
    with Store(sample_db) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
    table = url_table(fp.pages.iloc[:-1])
    with pytest.raises(ValueError, match="URL table"):
        learn_rules(analyze(fp, Config()).pages, table=table)


def test_learning_tells_its_progress_step_by_step(sample_db: Path) -> None:
    with Store(sample_db) as store:
        fp = load_fingerprints(store, Config(), jobs=1)
    told: list[tuple[str, int, int]] = []
    table = url_table(fp.pages, progress=lambda *step: told.append(step))
    assert told == [("parsing the crawl's URLs", i, 4) for i in range(5)]
    told.clear()
    learned = learn_rules(analyze(fp, Config()).pages, table=table, progress=lambda *step: told.append(step))
    first_round = [t for t in told if t[0] == "measuring the candidate rules, round 1"]
    candidates = len(learned.accepted) + len(learned.rejected)
    assert [done for _, done, _ in first_round] == list(range(candidates))
    assert {total for _, _, total in first_round} == {candidates}
    assert all(0 <= done < total for _, done, total in told)  # the bar never says done before it is


@pytest.mark.parametrize(
    "rule_set",
    [
        [UrlRule("a.com", "host_alias", "m."), UrlRule("a.com", "drop_param", "x")],
        # the alias host has rules of its own: two families share it
        [UrlRule("a.com", "host_alias", "m."), UrlRule("m.a.com", "drop_param", "x")],
        [UrlRule("b.org", "drop_segment", "print"), UrlRule("a.com", "drop_param", "x")],
    ],
    ids=["one family", "shared host", "two families"],
)
def test_fetches_saved_by_rules_are_those_of_every_page_rewritten(rule_set: list[UrlRule]) -> None:
    urls = [
        "https://a.com/p/1",
        "https://m.a.com/p/1",
        "https://a.com/p/1?x=2",
        "https://m.a.com/p/2?x=1",
        "https://m.a.com/p/2",
        "https://a.com/p/2",
        "https://b.org/print/n/1",
        "https://b.org/n/1",
        "https://b.org/n/1?x=1",
        "https://c.net/n/1",
    ]
    pages = pd.DataFrame({"page_id": range(len(urls)), "url": urls})
    table = url_table(pages)
    expected = rules.pages_saved(table.base, table.images(rule_set))
    assert expected > 0
    assert table.saved_by(rule_set) == expected


def test_a_rule_on_a_host_and_its_twin_on_the_www_host_leave_one_kept(tmp_path: Path) -> None:
    # notes.example.net's ?utm_source=feed&utm_medium=rss copies live on www.notes.example.net, so both hosts
    # propose dropping each parameter. While both forms are kept each adds nothing to the other (it merges
    # no URL pair of its own): one form must stay, not both be rejected as merging nothing.
    learned = learn_rules(analyze(_every_kind_fingerprints(tmp_path), Config(threshold=0.8)).pages)
    kept = {(bare_host(r.host), r.kind, r.name) for r in learned.rules}
    assert {("notes.example.net", "drop_param", p) for p in ("utm_source", "utm_medium")} <= kept
    plain, tracked = rules.rewritten_urls(
        [
            "https://www.notes.example.net/note/3",
            "https://www.notes.example.net/note/3?utm_source=feed&utm_medium=rss",
        ],
        learned.rules,
    )
    assert plain == tracked
    assert all(s.merged_pairs for s in learned.accepted)


def test_twins_of_a_host_with_more_parameters_than_rounds_leave_one_kept_each(tmp_path: Path) -> None:
    # Eleven tracking parameters, each proposed on notes.example.net and on its www. host: more twin pairs
    # than `learn_rules` has rounds. Every parameter keeps one form, and no accepted rule merges nothing.
    rng = random.Random(5)
    params = "&".join(f"trk{k}=feed" for k in range(rules.MAX_ROUNDS + 1))
    recs = []
    for i in range(9):
        html = page_html(f"Note {i}", words_text(rng, 180))
        recs.append({"url": f"https://www.notes.example.net/note/{i}", "html": html})
        if i % 2 == 0:
            recs.append({"url": f"https://notes.example.net/print/note/{i}", "html": html})
        if i % 3 == 0:
            recs.append({"url": f"https://www.notes.example.net/note/{i}?{params}", "html": html})
    with Store(tmp_path / "twins.duckdb") as store:
        engine.ingest_file(store, write_jsonl(tmp_path / "crawl.jsonl", recs), Config(), jobs=1)
        engine.ensure_fingerprints(store, Config(), jobs=1)
        fp = load_fingerprints(store, Config(), jobs=1)
    learned = learn_rules(analyze(fp, Config(threshold=0.8)).pages)
    proposed = {(bare_host(r.host), r.kind, r.name) for r in learned.rules} | {
        (bare_host(s.rule.host), s.rule.kind, s.rule.name) for s in learned.rejected
    }
    tracking = {("notes.example.net", "drop_param", f"trk{k}") for k in range(rules.MAX_ROUNDS + 1)}
    assert tracking <= proposed
    assert tracking <= {(bare_host(r.host), r.kind, r.name) for r in learned.rules}
    assert all(s.merged_pairs for s in learned.accepted)
    plain, tracked = rules.rewritten_urls(
        ["https://www.notes.example.net/note/3", f"https://www.notes.example.net/note/3?{params}"],
        learned.rules,
    )
    assert plain == tracked


def test_rules_still_failing_after_the_last_round_are_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One round only: the www. twins fail it (each merges nothing beside the other). The round that ends the
    # search drops every failing rule, so none is accepted on figures that fail.
    monkeypatch.setattr(rules, "MAX_ROUNDS", 1)
    learned = learn_rules(analyze(_every_kind_fingerprints(tmp_path), Config(threshold=0.8)).pages)
    assert {s.rule.name for s in learned.rejected} >= {"utm_source", "utm_medium"}
    assert all(
        s.merged_pairs
        and s.precision >= rules.MIN_PRECISION
        and s.pairs_in_cluster >= rules.MIN_SUPPORT_PAIRS
        for s in learned.accepted
    )
