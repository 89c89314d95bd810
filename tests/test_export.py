"""`neardup export --kept / --removed`: the deduplicated dump as the records were loaded, and each removed
page with the page kept in its place."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import Crawl, page_html, words_text, write_jsonl

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.cli import main
from neardup.config import Config
from neardup.export import REMOVED_COLUMNS, clusters_frame, removed_frame
from neardup.minhash import estimate_jaccard
from neardup.records import parse_time
from neardup.store import Store

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "crawl.jsonl.gz"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _numbers(capsys: pytest.CaptureFixture[str], db: str, *argv: str) -> dict:
    code, out, _ = _run(capsys, "report", "--json", "--db", db, "--jobs", "1", *argv)
    assert code == 0
    return json.loads(out)["numbers"]


def _read_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture
def extra_crawl(tmp_path: Path, crawl: Crawl) -> tuple[Path, list[dict]]:
    """The test crawl with fields beyond url/html/fetched_at/status: a string, an int, a list, a field of
    mixed kinds, and a loaded `cluster_id` that the export's own replaces."""
    records = []
    for i, rec in enumerate(crawl.records):
        extra = {
            "lang": "en",
            "depth": i % 3,
            "tags": ["news", str(i)],
            "mixed": i if i % 2 else f"x{i}",
            "cluster_id": "loaded",
        }
        records.append({**rec, **extra})
    return write_jsonl(tmp_path / "extra.jsonl", records), records


def test_kept_dump_is_one_page_per_cluster_as_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra_crawl: tuple[Path, list[dict]], crawl: Crawl
) -> None:
    dump, records = extra_crawl
    db = str(tmp_path / "x.duckdb")
    assert _run(capsys, "ingest", str(dump), "--db", db, "--jobs", "1")[0] == 0
    numbers = _numbers(capsys, db)
    kept_path = tmp_path / "kept.jsonl.gz"
    code, out, _ = _run(capsys, "export", "--db", db, "--jobs", "1", "--kept", str(kept_path))
    assert code == 0
    assert f"{numbers['unique_pages']:,} pages kept" in out and (tmp_path / "dupcheck.yaml").exists()

    kept = _read_jsonl_gz(kept_path)
    assert len(kept) == numbers["unique_pages"] == 16
    assert len({r["cluster_id"] for r in kept}) == len(kept)
    by_url_time = {(r["url"], parse_time(r["fetched_at"])): r for r in records}
    for rec in kept:
        loaded = by_url_time[(rec["url"], parse_time(rec["fetched_at"]))]
        assert rec["html"] == loaded["html"] and rec["status"] == loaded["status"]
        assert (rec["lang"], rec["depth"], rec["tags"], rec["mixed"]) == (
            loaded["lang"],
            loaded["depth"],
            loaded["tags"],
            loaded["mixed"],
        )
        assert isinstance(rec["cluster_id"], int)
        assert list(rec)[:5] == ["url", "html", "fetched_at", "status", "lang"]
    # the representatives: each article's first fetch, the unique pages; no soft-404 (degenerate)
    urls = {r["url"] for r in kept}
    assert {crawl.records[g[0]]["url"] for g in crawl.article_groups} <= urls
    assert {crawl.records[i]["url"] for i in crawl.uniques} <= urls
    assert not {crawl.records[i]["url"] for i in crawl.soft404s} & urls
    assert kept[0]["fetched_at"] == "2024-01-01T10:00:00Z"

    # Parquet: the same records, extra fields typed from their values (lists and mixed kinds as text)
    code, _, _ = _run(capsys, "export", "--db", db, "--jobs", "1", "--kept", str(tmp_path / "kept.parquet"))
    assert code == 0
    pq = pd.read_parquet(tmp_path / "kept.parquet")
    assert len(pq) == len(kept)
    assert pq["url"].tolist() == [r["url"] for r in kept]
    assert pq["cluster_id"].tolist() == [r["cluster_id"] for r in kept]
    assert pq["html"].tolist() == [r["html"] for r in kept] and pq["text"].isna().all()
    assert str(pq["depth"].dtype) == "int64" and pq["lang"].tolist() == ["en"] * len(kept)
    assert json.loads(pq["tags"].iloc[0]) == kept[0]["tags"]
    assert pq["mixed"].tolist() == [
        str(r["mixed"]) if isinstance(r["mixed"], int) else r["mixed"] for r in kept
    ]


def test_reingesting_the_kept_dump_finds_no_duplicates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl_file: Path
) -> None:
    db = str(tmp_path / "a.duckdb")
    assert _run(capsys, "ingest", str(crawl_file), "--db", db, "--jobs", "1")[0] == 0
    for setting in ([], ["--method", "simhash", "--threshold", "5", "--shingle-size", "4"]):
        kept = tmp_path / "kept.jsonl.gz"
        assert _run(capsys, "export", "--db", db, "--jobs", "1", "--kept", str(kept), *setting)[0] == 0
        fresh = str(tmp_path / f"fresh{len(setting)}.duckdb")
        code, out, _ = _run(capsys, "ingest", str(kept), "--db", fresh, "--jobs", "1")
        assert code == 0 and "0 records rejected" in out
        again = _numbers(capsys, fresh, *setting)
        assert again["total_pages"] == again["unique_pages"] == _numbers(capsys, db, *setting)["unique_pages"]
        assert (again["exact_duplicates"], again["near_duplicates"], again["degenerate_pages"]) == (0, 0, 0)


def test_kept_dump_of_the_bundled_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "sample.duckdb")
    assert _run(capsys, "ingest", str(SAMPLE), "--db", db)[0] == 0
    numbers = _numbers(capsys, db)
    assert numbers["total_pages"] == 3000
    kept = tmp_path / "kept.jsonl.gz"
    removed = tmp_path / "removed.csv"
    assert _run(capsys, "export", "--db", db, "--kept", str(kept), "--removed", str(removed))[0] == 0
    records = _read_jsonl_gz(kept)
    assert len(records) == numbers["unique_pages"]
    rem = pd.read_csv(removed)
    assert len(rem) == numbers["redundant_pages"]
    assert set(rem["cluster_id"]) <= {r["cluster_id"] for r in records}
    fresh = str(tmp_path / "fresh.duckdb")
    assert _run(capsys, "ingest", str(kept), "--db", fresh)[0] == 0
    again = _numbers(capsys, fresh)
    assert again["total_pages"] == numbers["unique_pages"]
    assert again["exact_duplicates"] == 0


def test_removed_csv_names_the_page_kept_in_each_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl_file: Path, crawl: Crawl
) -> None:
    db = str(tmp_path / "r.duckdb")
    assert _run(capsys, "ingest", str(crawl_file), "--db", db, "--jobs", "1")[0] == 0
    for setting, measure, identical in (
        ([], "containment", 1.0),
        (["--method", "simhash", "--threshold", "5"], "hamming_bits", 0),
    ):
        kept, removed = tmp_path / "k.jsonl.gz", tmp_path / "removed.csv"
        code, _, _ = _run(
            capsys,
            "export",
            "--db",
            db,
            "--jobs",
            "1",
            "--kept",
            str(kept),
            "--removed",
            str(removed),
            *setting,
        )
        assert code == 0
        df = pd.read_csv(removed)
        assert list(df.columns) == REMOVED_COLUMNS
        assert len(df) == _numbers(capsys, db, *setting)["redundant_pages"] == 22
        rep_of = {r["cluster_id"]: r["url"] for r in _read_jsonl_gz(kept)}
        assert (df["representative_url"] == df["cluster_id"].map(rep_of)).all()
        assert set(df["measure"]) == {measure}
        exact = df[df["match"] == "exact"]
        assert len(exact) == 18 and (exact["similarity"] == identical).all()
        assert set(exact["similarity_from"]) == {"same text"}
        near = df[df["match"] == "near"]
        assert sorted(near["url"]) == sorted(crawl.records[i]["url"] for i in crawl.near_edits.values())
        assert set(near["similarity_from"]) == {"stored pair"}
        passes = near["similarity"] <= 5 if measure == "hamming_bits" else near["similarity"] >= 0.8
        assert passes.all() and (near["similarity"] != identical).all()


def test_a_page_joined_through_a_chain_gets_an_estimate(tmp_path: Path) -> None:
    """A -> B -> C -> D, each a 45-word block away from the last: D joins A's cluster through B and C, and
    no pair of A and D is stored (below the containment floor), so its similarity is estimated and shown
    below the threshold rather than passed off as a match of the representative."""
    rng = random.Random(11)
    words = words_text(rng, 400).split(" ")
    texts = [list(words)]
    for start in (40, 160, 280):
        nxt = list(texts[-1])
        nxt[start : start + 45] = [f"block{start}x{i}" for i in range(45)]
        texts.append(nxt)
    records = [
        {
            "url": f"https://e.com/{i}",
            "fetched_at": f"2024-01-0{i + 1}",
            "status": 200,
            "html": page_html("T", " ".join(t)),
        }
        for i, t in enumerate(texts)
    ]
    store = Store(tmp_path / "chain.duckdb")
    engine.ingest_file(store, write_jsonl(tmp_path / "chain.jsonl", records), Config(), jobs=1)
    config = Config()
    fp = load_fingerprints(store, config, jobs=1)
    analysis = analyze(fp, config)
    assert analysis.numbers["largest_cluster"] == 4
    df = removed_frame(store, analysis, fp).set_index("url")
    assert (df["representative_url"] == "https://e.com/0").all()
    assert df.loc["https://e.com/1", "similarity_from"] == "stored pair"
    assert df.loc["https://e.com/1", "similarity"] >= 0.8
    assert df.loc["https://e.com/3", "similarity_from"] == "minhash estimate"
    assert 0.4 < df.loc["https://e.com/3", "similarity"] < 0.8
    shown = clusters_frame(store, analysis).set_index("url").loc[df.index, "similarity_to_representative"]
    store.close()
    assert (shown == df["similarity"]).all()


def test_similarity_to_representative_is_in_the_thresholds_unit(tmp_path: Path) -> None:
    """A print copy holding the first 240 of its original's 400 words is contained in it: the clusters CSV
    shows the containment the threshold passed (the stored pair's exact score), not the lower Jaccard."""
    words = words_text(random.Random(5), 400).split(" ")
    records = [
        {"url": url, "fetched_at": f"2024-01-0{i + 1}", "status": 200, "html": page_html("T", " ".join(t))}
        for i, (url, t) in enumerate((("https://e.com/a", words), ("https://e.com/a?print=1", words[:240])))
    ]
    store = Store(tmp_path / "print.duckdb")
    engine.ingest_file(store, write_jsonl(tmp_path / "print.jsonl", records), Config(), jobs=1)
    shown = {}
    for config in (Config(), Config(similarity="jaccard", threshold=0.5)):
        fp = load_fingerprints(store, config, jobs=1)
        analysis = analyze(fp, config)
        assert analysis.numbers["largest_cluster"] == 2 and len(fp.pairs["a"]) == 1
        df = clusters_frame(store, analysis).set_index("url").loc["https://e.com/a?print=1"]
        assert df["representative_url"] == "https://e.com/a"
        shown[config.similarity] = df["similarity_to_representative"]
        assert shown[config.similarity] == round(float(fp.pairs[config.similarity][0]), 4)
        removed = removed_frame(store, analysis, fp).set_index("url").loc["https://e.com/a?print=1"]
        assert removed["similarity"] == shown[config.similarity]
    store.close()
    assert shown["containment"] == 1.0
    # The Jaccard (exact or estimated) would show the member below the threshold it passed.
    assert shown["jaccard"] < 0.8 and float(estimate_jaccard(*fp.signatures(np.array([0, 1])))) < 0.8


def test_export_needs_an_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], crawl_file: Path) -> None:
    db = str(tmp_path / "n.duckdb")
    assert _run(capsys, "ingest", str(crawl_file), "--db", db, "--jobs", "1")[0] == 0
    code, out, err = _run(capsys, "export", "--db", db)
    assert code == 2 and out == "" and "at least one of --out" in err
    code, _, err = _run(capsys, "export", "--db", db, "--jobs", "1", "--kept", str(tmp_path / "kept.csv"))
    assert code == 2 and "--kept writes .jsonl.gz, .jsonl, .parquet or .warc.gz" in err
    assert not list(tmp_path.glob("*kept*"))


def test_the_kept_dump_of_a_warc_crawl_is_warc_records(tmp_path: Path, crawl: Crawl) -> None:
    """A crawl loaded from WARC (written by scripts/jsonl_to_warc.py) is kept as WARC: response records
    with the IDs of the records they were loaded from, which neardup (and FastWARC) read back page for page."""
    import subprocess
    import sys

    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from neardup.export import kept_download_format, kept_pages, write_kept

    root = Path(__file__).resolve().parent.parent
    src = write_jsonl(tmp_path / "crawl.jsonl", crawl.records)
    warc = tmp_path / "crawl.warc.gz"
    subprocess.run(
        [sys.executable, str(root / "scripts" / "jsonl_to_warc.py"), str(src), str(warc)], check=True
    )
    config = Config()
    with Store(tmp_path / "warc.duckdb") as store:
        engine.ingest_file(store, warc, config, jobs=1)
        assert kept_download_format(store) == "warc.gz"
        analysis = analyze(load_fingerprints(store, config, jobs=1), config)
        ids, _ = kept_pages(analysis)
        pages = analysis.pages.set_index("page_id").loc[ids]
        out = tmp_path / "kept.warc.gz"
        assert write_kept(store, analysis, out) == len(ids)
        extras = [e for t in store.page_records(ids, 1024) for e in t.column("extra").to_pylist()]
        originals = [json.loads(e)["warc_record_id"] for e in extras]
    with out.open("rb") as f:
        records = list(ArchiveIterator(f, record_types=WarcRecordType.response))
    assert [r.headers["WARC-Target-URI"] for r in records] == list(pages["url"])
    assert [r.record_id for r in records] == originals
    with Store(tmp_path / "again.duckdb") as again:
        summary = engine.ingest_file(again, out, config, jobs=1)
        assert (summary.loaded, summary.errors) == (len(ids), 0)
        assert sorted(again.page_table(config.norm_key)["url"]) == sorted(pages["url"])
