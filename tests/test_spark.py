"""`neardup spark` against the local engine on the same records: same page ids, fingerprints, pairs,
clusters and report numbers, for SimHash and MinHash; `neardup open` makes the output auditable.

Runs Spark on local[2] (Java 17+ and pyspark are installed by `make test` / .ci/run). The input is the
first 600 records of the bundled sample plus a few bad ones, written uncompressed and read in 1 MB
splits, so page ids and line numbers have to be stitched across splits.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLE_CRAWL, page_html, sample_lines, short_page_fetches, words_text
from spark_parity import SPARK_CONF, assert_matches_local, output_table

from neardup import engine
from neardup.analysis import analyze, load_fingerprints
from neardup.candidate_stats import CandidateStats
from neardup.categories import page_categories, suggest_copies
from neardup.cli import main, scan_memory_limit
from neardup.config import Config, load_config
from neardup.store import DUCKDB_SCAN_MEMORY, Store
from neardup.url_parse import parse_urls

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

N_RECORDS = 600
SETTINGS = {
    # the newest-fetch representative rule on one path, the default on the other
    "simhash": Config(
        method="simhash", threshold=6, shingle_size=4, representative=("canonical", "newest", "shortest")
    ),
    "minhash": Config(method="minhash", threshold=0.8, similarity="containment"),
}


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 sample records with a malformed line, a blank line, a record without url, a repeated record
    and invalid UTF-8 mixed in."""
    lines = sample_lines(N_RECORDS)
    out: list[bytes] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i == 50:
            out.append(b"{not json")
        if i == 120:
            out.append(b"")
        if i == 200:
            out.append(json.dumps({"html": "<p>x</p>"}).encode())
        if i == 300:
            out.append(lines[10])
        if i == 400:
            out.append(b'{"url": "http://x.org/a", "html": "\xff\xfe bad"}')
    path = tmp_path_factory.mktemp("spark") / "crawl.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


@pytest.fixture(scope="module")
def local(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store(tmp_path_factory.mktemp("local") / "local.duckdb")
    engine.ingest_file(store, dump, Config(), jobs=1)
    yield store
    store.close()


def _spark_run(dump: Path, out: Path, config: Config, *flags: str) -> dict:
    cfg = out.parent / f"{out.name}.yaml"
    cfg.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in config.to_dict().items()), encoding="utf-8")
    assert main(["spark", str(dump), "--out", str(out), "--config", str(cfg), *SPARK_CONF, *flags]) == 0
    return json.loads((out / "_MANIFEST.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    base = tmp_path_factory.mktemp("spark_out")
    return {name: (base / name, _spark_run(dump, base / name, cfg)) for name, cfg in SETTINGS.items()}


def test_pages_ids_lines_and_errors_match(runs: dict, local: Store) -> None:
    out, manifest = runs["simhash"]
    pages = output_table(out, "pages").sort_values("page_id").reset_index(drop=True)
    want = local.page_table(Config().norm_key)
    cols = [
        "page_id",
        "source_id",
        "line",
        "url",
        "canonical_url",
        "host",
        "status",
        "md5",
        "rel_canonical",
        "exact_key",
        "degenerate",
        "n_words",
    ]
    pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
    assert (pages["fetched_at"].to_numpy() == want["fetched_at"].to_numpy()).all()
    # ids have a gap where the repeated record was rejected, as locally
    assert len(pages) == N_RECORDS and pages["page_id"].max() == N_RECORDS + 1
    errors = output_table(out, "errors")
    got = sorted(zip(errors["line"], errors["kind"], errors["reason"], strict=True))
    want_err = local.ingest_errors()
    assert got == sorted(zip(want_err["line"], want_err["kind"], want_err["reason"], strict=True))
    assert len(got) == 4
    assert manifest["sources"][0]["n_loaded"] == N_RECORDS and manifest["sources"][0]["n_errors"] == 4


@pytest.mark.parametrize("name", list(SETTINGS))
def test_fingerprints_pairs_and_clusters_match(runs: dict, local: Store, name: str) -> None:
    out, manifest = runs[name]
    assert_matches_local(out, manifest, local, SETTINGS[name])
    clusters = output_table(out, "clusters")
    assert ("newest fetch" if name == "simhash" else "earliest fetch") in set(clusters["why"])


def test_open_gives_the_same_report(
    runs: dict, local: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, manifest = runs["minhash"]
    db = tmp_path / "spark.duckdb"
    assert main(["open", str(out), "--db", str(db)]) == 0
    capsys.readouterr()
    replay = out / "dupcheck.yaml"
    assert load_config(replay) == SETTINGS["minhash"]
    for threshold in ("0.8", "0.95"):
        args = ["report", "--json", "--config", str(replay), "--threshold", threshold, "--jobs", "1"]
        assert main([*args, "--db", str(db)]) == 0
        got = json.loads(capsys.readouterr().out)
        assert main([*args, "--db", local.path]) == 0
        want = json.loads(capsys.readouterr().out)
        assert got["numbers"] == want["numbers"]
        assert got["top_hosts"] == want["top_hosts"]
        assert got["degenerate_by_reason"] == want["degenerate_by_reason"]
        assert (
            got["rejected_by_kind"] == want["rejected_by_kind"] and sum(got["rejected_by_kind"].values()) == 4
        )
    with Store(db) as store:
        # DuckDB reads a row group's column chunk of the run's Parquet whole: the report's scan cap would
        # refuse a million units' signatures (66 MB in one block); a database of its own keeps the cap
        assert scan_memory_limit(store) is None
        assert scan_memory_limit(local) == DUCKDB_SCAN_MEMORY
        assert store.count_pages() == N_RECORDS
        assert len(store.ingest_errors()) == 4
        store.record_label(
            "https://a.example/", "https://b.example/", label="duplicate"
        )  # labels stay writable
        assert len(store.labels()) == 1
    # another method cannot be computed from views over a run without HTML: a clear error, exit 2
    assert main(["report", "--db", str(db), "--method", "simhash"]) == 2
    assert "reads the Spark output" in capsys.readouterr().err


def test_open_keeps_the_copies_categories_of_the_runs_setting(
    runs: dict, local: Store, tmp_path: Path
) -> None:
    out, _ = runs["minhash"]
    db = tmp_path / "categories.duckdb"
    assert main(["open", str(out), "--db", str(db), "--jobs", "1"]) == 0
    config = SETTINGS["minhash"]
    with Store(db) as store:
        a = analyze(load_fingerprints(store, config), config)
        assert suggest_copies(store, a).compared == 0  # the app's Clusters page reads them
        got = page_categories(store, a)
    want = page_categories(local, analyze(load_fingerprints(local, config), config))
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))


def test_open_keeps_the_parsed_urls_capped_buckets_and_the_pages_its_fingerprints_cover(
    runs: dict, local: Store, tmp_path: Path
) -> None:
    """As `report` does: the URL rules page reads the parsed URLs, the Audit page's evidence the capped
    buckets, and the app takes the run's fingerprint set as current from the pages it covers, not by
    counting every text and unit through the Parquet."""
    out, manifest = runs["minhash"]
    db = tmp_path / "parsed.duckdb"
    assert main(["open", str(out), "--db", str(db), "--no-categories"]) == 0
    config = SETTINGS["minhash"]
    with Store(db, on_demand=True) as store:
        got = store.parsed_urls()
        covered = store.fingerprint_set(manifest["fingerprint_key"])
        assert covered is not None and covered.coverage == store.page_coverage()
        assert store.capped_buckets(manifest["fingerprint_key"]) is not None
    pages = local.page_table(config.norm_key)
    want = parse_urls(pages["page_id"].to_numpy(), pages["url"].to_numpy(dtype=object))
    assert got is not None
    for field in dataclasses.fields(want):
        value = getattr(got, field.name)
        expected = getattr(want, field.name)
        assert np.array_equal(value, expected) if isinstance(value, np.ndarray) else value == expected


def test_an_output_of_format_1_opens_with_the_kinds_read_from_the_reasons(
    runs: dict, local: Store, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    out, _ = runs["minhash"]
    old = tmp_path / "format1"
    shutil.copytree(out, old)
    for part in (old / "errors").glob("*.parquet"):  # errors as format 1 wrote them: no kind column
        pq.write_table(pq.read_table(part).drop_columns(["kind"]), part)
    manifest = json.loads((old / "_MANIFEST.json").read_text(encoding="utf-8"))
    (old / "_MANIFEST.json").write_text(json.dumps({**manifest, "neardup_spark": 1}), encoding="utf-8")
    db = tmp_path / "old.duckdb"
    assert main(["open", str(old), "--db", str(db)]) == 0
    with Store(db) as store:
        got = store.ingest_errors()
    want = local.ingest_errors()
    assert sorted(zip(got["line"], got["kind"], strict=True)) == sorted(
        zip(want["line"], want["kind"], strict=True)
    )


def test_open_copy_computes_other_methods(
    runs: dict, local: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = runs["simhash"]
    db = tmp_path / "copy.duckdb"
    assert main(["open", str(out), "--db", str(db), "--copy"]) == 0
    args = ["report", "--json", "--method", "minhash", "--jobs", "1"]
    capsys.readouterr()
    assert main([*args, "--db", str(db)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert main([*args, "--db", local.path]) == 0
    assert got["numbers"] == json.loads(capsys.readouterr().out)["numbers"]


def test_refuses_a_non_empty_output_dir(dump: Path, runs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = runs["simhash"]
    assert main(["spark", str(dump), "--out", str(out), *SPARK_CONF]) == 2
    assert "not empty" in capsys.readouterr().err


# --- the Spark-native steps on their own, in one session --------------------------------------------
@pytest.fixture(scope="module")
def _session_stopped_at_the_end() -> Iterator[None]:
    yield
    from pyspark.sql import SparkSession

    if (active := SparkSession.getActiveSession()) is not None:
        active.stop()


@pytest.fixture
def session(_session_stopped_at_the_end: None) -> object:
    """The module's local session: the running one, or a new one where an in-process `neardup spark` (which
    stops its session when it is done) stopped it."""
    from neardup.spark import spark_session

    return spark_session("local[2]", conf=dict(kv.split("=", 1) for kv in SPARK_CONF[3::2]))


def test_a_local_master_runs_the_parallel_collector() -> None:
    """A local master's one JVM, driver and every task, runs the throughput collector rather than G1 (in a
    fresh process: a JVM keeps the collector it was started with, whatever a later session asks)."""
    code = (
        "from neardup.spark import spark_session\n"
        "s = spark_session('local[1]')\n"
        "beans = s.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()\n"
        "print(sorted(b.getName() for b in beans))\n"
        "s.stop()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "['PS MarkSweep', 'PS Scavenge']"


def _pandas(frame: object) -> pd.DataFrame:
    """A small Spark frame as pandas, through Arrow (pyspark's own pandas path warns under pandas 3)."""
    return frame.toArrow().to_pandas() if hasattr(frame, "toArrow") else frame.toPandas()


def test_connected_components_equal_scipy(session: object) -> None:
    from neardup.clusters import components
    from neardup.spark import connected_components

    rng = np.random.default_rng(5)
    n = 300
    a, b = rng.integers(0, 200, 120), rng.integers(0, 200, 120)
    chain = rng.permutation(np.arange(200, n))  # a 100-node path with shuffled ids: long way to the minimum
    a, b = np.concatenate([a, chain[:-1]]), np.concatenate([b, chain[1:]])
    edges = session.createDataFrame([(int(x), int(y)) for x, y in zip(a, b, strict=True)], "a int, b int")
    labels, rounds = connected_components(edges, local_edges=0)  # all the way on DataFrames
    got = _pandas(labels).set_index("node")["label"]
    want = components(n, a, b)
    nodes = np.unique(np.concatenate([a, b]))
    # same partition; and each label is its component's smallest node
    got_groups = {
        frozenset(g)
        for g in pd.Series(nodes, index=got.reindex(nodes).to_numpy()).groupby(level=0).agg(frozenset)
    }
    want_groups = {frozenset(g) for g in pd.Series(nodes, index=want[nodes]).groupby(level=0).agg(frozenset)}
    assert got_groups == want_groups
    assert all(got[min(g)] == min(g) for g in got_groups)
    assert rounds < 20
    local_labels, _ = connected_components(edges)  # small: the driver finishes
    assert (
        _pandas(local_labels).set_index("node")["label"].sort_index().equals(got.sort_index().astype("int64"))
    )


def _units_frame(session: object, local: Store, config: Config) -> tuple[object, pd.DataFrame]:
    engine.ensure_fingerprints(local, config, jobs=1)
    units = local.units(config.fingerprint_key, with_signatures=True)
    if config.method == "simhash":
        rows = [
            (int(u), int(n), int(np.uint64(f).view(np.int64)))
            for u, n, f in zip(units["unit_id"], units["n_shingles"], units["simhash"], strict=True)
        ]
        return session.createDataFrame(rows, "unit_id int, n_shingles int, simhash bigint"), units
    rows = [
        (int(u), int(n), bytes(m))
        for u, n, m in zip(units["unit_id"], units["n_shingles"], units["minhash"], strict=True)
    ]
    return session.createDataFrame(rows, "unit_id int, n_shingles int, minhash binary"), units


def test_simhash_bucket_cap_matches_local(
    session: object, local: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neardup.candidates import simhash_pairs
    from neardup.spark import pairs as spark_pairs

    config = SETTINGS["simhash"]
    frame, units = _units_frame(session, local, config)
    monkeypatch.setattr(spark_pairs, "BUCKET_CAP", 4)
    pairs, stats = spark_pairs.simhash_pairs(session, frame, len(units), config)
    a, b, bits, want = simhash_pairs(
        units["simhash"].to_numpy(np.uint64), config.simhash_max_bits, bucket_cap=4
    )
    got = _pandas(pairs).sort_values(["a", "b"])
    assert list(zip(got["a"], got["b"], got["hamming_bits"], strict=True)) == list(
        zip(a, b, bits, strict=True)
    )
    assert want.capped_buckets > 0
    assert stats == want


@pytest.mark.parametrize("partial_copies", [False, True])
@pytest.mark.parametrize("path", ["bands in tasks", "bands by shuffle", "join"])
def test_minhash_paths_and_cap_match_local(
    session: object, local: Store, monkeypatch: pytest.MonkeyPatch, partial_copies: bool, path: str
) -> None:
    """The three ways to the MinHash pairs: each band grouped and verified in a task over the broadcast
    signatures; (signatures too large to broadcast) the signatures carried to the band tasks by a shuffle
    on (band, key group), several key groups a band and several groups a task; and the buckets by groupBy
    verified after a join (the path of an added crawl)."""
    from neardup.candidates import minhash_pairs
    from neardup.spark import pairs as spark_pairs

    config = replace(SETTINGS["minhash"], partial_copies=partial_copies)
    frame, units = _units_frame(session, local, config)
    sigs = np.frombuffer(b"".join(units["minhash"]), dtype=np.uint32).reshape(len(units), -1)
    a, b, jac, cont, want = minhash_pairs(
        sigs,
        units["n_shingles"].to_numpy(np.int32),
        similarity=config.similarity,
        floor=config.minhash_floor,
        min_size_ratio=config.min_size_ratio,
        seed=config.seed,
        min_shingles=config.min_contained_shingles,
        bucket_cap=2,
        partial_copies=partial_copies,
    )
    monkeypatch.setattr(spark_pairs, "BUCKET_CAP", 2)
    if path == "join":
        stats = CandidateStats(bucket_cap=2, lsh_bands=want.lsh_bands, lsh_rows=want.lsh_rows)
        found = spark_pairs.grouped_band_pairs(
            session, frame, len(units), config, want.lsh_bands, want.lsh_rows, stats, broadcast=False
        )
        pairs = found.select("a", "b", "jaccard", "containment")
    else:
        if path == "bands by shuffle":
            monkeypatch.setattr(spark_pairs, "BROADCAST_SIGNATURES_BYTES", 0)
            # ~480 units of 512 bytes a band: 4 key groups a band, 4 x 74 groups over 4 shuffle partitions
            monkeypatch.setattr(spark_pairs, "BAND_GROUP_BYTES", 64 << 10)
        pairs, stats = spark_pairs.minhash_pairs(session, frame, len(units), config)
    got = _pandas(pairs).sort_values(["a", "b"])
    assert list(zip(got["a"], got["b"], strict=True)) == list(zip(a, b, strict=True))
    assert (got["jaccard"].to_numpy() == jac).all() and (got["containment"].to_numpy() == cont).all()
    assert want.capped_buckets > 0
    assert any("size classes" in note for note in stats.notes) == partial_copies
    assert stats == want


def test_minhash_bands_by_shuffle_match_the_broadcast_and_the_local_engine(
    runs: dict, dump: Path, local: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`neardup spark` with the signature broadcast limit forced to 0 (`--conf
    neardup.broadcastSignaturesBytes=0`, as a crawl of more than ~1M units meets it): both LSH passes run
    in band tasks that get the signatures by a shuffle, and the pages, pairs (unit ids, scores) and
    clusters are the broadcast run's and the local engine's."""
    from neardup.spark import pairs as spark_pairs

    shuffled = []
    by_shuffle = spark_pairs.banded_by_shuffle
    monkeypatch.setattr(
        spark_pairs, "banded_by_shuffle", lambda *a, **k: shuffled.append(a[2]) or by_shuffle(*a, **k)
    )
    monkeypatch.setattr(spark_pairs, "BAND_GROUP_BYTES", 64 << 10)  # several key groups a band
    config = SETTINGS["minhash"]
    assert config.searches_partial_copies  # both passes
    out = tmp_path / "shuffled"
    manifest = _spark_run(dump, out, config, "--conf", "neardup.broadcastSignaturesBytes=0")
    assert shuffled == [manifest["counts"]["units"]]
    assert_matches_local(out, manifest, local, config)
    broadcast, want = runs["minhash"]
    assert manifest["candidate_stats"] == want["candidate_stats"]
    assert manifest["numbers"] == want["numbers"]
    for name, key in [("pages", ["page_id"]), ("pairs", ["a", "b"]), ("clusters", ["page_id"])]:
        got = output_table(out, name).sort_values(key).reset_index(drop=True)
        pd.testing.assert_frame_equal(
            got, output_table(broadcast, name).sort_values(key).reset_index(drop=True)
        )


def test_parquet_input_matches_local(session: object, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from neardup.spark import run_spark

    recs = [json.loads(line) for line in sample_lines(80)]
    recs.insert(30, {"url": None, "html": "<p>no url</p>", "fetched_at": None, "status": 200})
    path = tmp_path / "crawl.parquet"
    pq.write_table(pa.Table.from_pylist(recs), path, row_group_size=25)
    config = Config(method="simhash", threshold=6)
    manifest = run_spark(session, [str(path)], str(tmp_path / "out"), config)
    with Store(tmp_path / "local.duckdb") as store:
        engine.ingest_file(store, path, config, jobs=1)
        want = store.page_table(config.norm_key)
        want_err = store.ingest_errors()
        numbers = analyze(load_fingerprints(store, config, jobs=1), config).numbers
    pages = pd.read_parquet(tmp_path / "out" / "pages").sort_values("page_id").reset_index(drop=True)
    cols = ["page_id", "line", "url", "fetched_at", "status", "exact_key", "degenerate"]
    pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
    errors = pd.read_parquet(tmp_path / "out" / "errors")
    assert (
        list(zip(errors["line"], errors["reason"], strict=True))
        == list(zip(want_err["line"], want_err["reason"], strict=True))
        == [(31, "missing url")]
    )
    assert manifest["numbers"] == numbers


def test_partial_copies_match_the_local_engine(session: object, tmp_path: Path) -> None:
    """The size-class pass (`partial_copies`) on Spark: sample records plus long articles with their
    syndicated copies cut short at 40%, which the one LSH index finds only by chance. Spark's pairs,
    clusters, representatives, numbers and candidate statistics equal the local engine's with the pass,
    and the pass finds copies the index alone does not."""
    import random

    rng = random.Random(9)
    lines = sample_lines(200)
    for d in range(12):
        title, words = f"Report {d}", words_text(rng, 1500).split()
        for host, body in (("news.example", words), ("wire.example", words[:600])):
            html = page_html(title, " ".join(body))
            lines.append(json.dumps({"url": f"https://{host}/a/{d}", "status": 200, "html": html}).encode())
    dump = tmp_path / "crawl.jsonl"
    dump.write_bytes(b"\n".join(lines) + b"\n")
    from neardup.spark import run_spark

    config = Config(partial_copies=True)
    manifest = run_spark(session, [str(dump)], str(tmp_path / "out"), config)
    with Store(tmp_path / "local.duckdb") as store:
        engine.ingest_file(store, dump, config, jobs=1)
        pairs = assert_matches_local(tmp_path / "out", manifest, store, config)
        without = replace(config, partial_copies=False)
        engine.ensure_fingerprints(store, without, jobs=1)
        index_only = store.pairs(without.fingerprint_key)
    with_pass = set(zip(pairs["a"], pairs["b"], strict=True))
    assert set(zip(index_only["a"], index_only["b"], strict=True)) < with_pass
    assert any("size classes" in note for note in CandidateStats.from_dict(manifest["candidate_stats"]).notes)


def test_url_rules_merge_url_variants_as_locally(session: object, tmp_path: Path) -> None:
    """The config's URL rules rewrite the canonical URLs on the Spark path as the local engine does:
    the variants of a page (a session parameter, a print path) carry one canonical URL, and the
    representatives and the numbers follow."""
    import random

    from neardup.spark import run_spark
    from neardup.urls import UrlRule

    rng = random.Random(11)
    records = []
    for i in range(4):
        title, body = f"Item {i}", words_text(rng, 300)
        for url in (
            f"https://shop.example/item-{i}?sessionid=a{i}b{i}c{i}",
            f"https://shop.example/print/item-{i}",
            f"https://shop.example/item-{i}?sessionid=z{i}",
        ):
            records.append({"url": url, "status": 200, "html": page_html(title, body)})
    path = tmp_path / "shop.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rules = (
        UrlRule("shop.example", "drop_param", "sessionid"),
        UrlRule("shop.example", "drop_segment", "print"),
    )
    config = Config(method="simhash", threshold=6, url_rules=rules)
    manifest = run_spark(session, [str(path)], str(tmp_path / "out"), config)
    with Store(tmp_path / "local.duckdb") as store:
        engine.ingest_file(store, path, config, jobs=1)
        analysis = analyze(load_fingerprints(store, config, jobs=1), config)
    content = analysis.pages[analysis.pages["cluster_id"].notna()].set_index("page_id").sort_index()
    # the rules merge each item's three URLs into one canonical URL
    assert (content.groupby("cluster_id")["canonical_url"].nunique() == 1).all()
    assert set(content["canonical_url"]) == {f"https://shop.example/item-{i}" for i in range(4)}
    clusters = output_table(tmp_path / "out", "clusters").set_index("page_id").sort_index()
    for col in ["cluster_id", "canonical_url", "representative_id", "representative_url", "why"]:
        assert clusters[col].tolist() == content[col].tolist(), col
    assert manifest["numbers"] == analysis.numbers


@pytest.fixture(scope="module")
def warc_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 400 sample records as two WARC.gz files (one gzip member per record: windows-1252,
    gzip-encoded and chunked payloads, revisits), the second with an image and a request record after."""
    import io
    import sys

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    sys.path.insert(0, str(SAMPLE_CRAWL.parent.parent / "scripts"))
    from jsonl_to_warc import convert

    lines = sample_lines(400)
    out = tmp_path_factory.mktemp("warcs")
    for name, part in (("a.warc.gz", lines[:200]), ("b.warc.gz", lines[200:])):
        with open(out / name, "wb") as f:
            convert(io.BytesIO(b"\n".join(part) + b"\n"), f)
    with open(out / "b.warc.gz", "ab") as f:
        w = WARCWriter(f, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
        w.write_record(
            w.create_warc_record(
                "http://x.org/logo.png",
                "response",
                payload=io.BytesIO(b"\x89PNG\r\n\x1a\n" + bytes(64)),
                http_headers=http,
            )
        )
        w.write_record(
            w.create_warc_record(
                "http://x.org/logo.png", "request", payload=io.BytesIO(b"GET /logo.png HTTP/1.1\r\n\r\n")
            )
        )
    return out


def test_warc_files_match_the_local_engine(warc_dir: Path, tmp_path: Path) -> None:
    """WARC files as input paths (a directory of them, one task per file): the same pages, lines (record
    numbers), errors, pairs and clusters as `neardup ingest` of the same files."""
    config = Config()
    store = Store(tmp_path / "local.duckdb")
    for f in sorted(warc_dir.iterdir()):
        engine.ingest_file(store, f, config, jobs=1)
    out, manifest = tmp_path / "out", None
    manifest = _spark_run(warc_dir, out, config)
    pages = output_table(out, "pages").sort_values("page_id").reset_index(drop=True)
    want = store.page_table(config.norm_key)
    cols = ["page_id", "source_id", "line", "url", "status", "md5", "exact_key", "degenerate", "n_words"]
    pd.testing.assert_frame_equal(pages[cols], want[cols], check_dtype=False)
    assert len(pages) == 400
    extra = [json.loads(e) for e in output_table(out, "pages").sort_values("page_id")["extra"]]
    assert [e["warc_offset"] for e in extra] == [
        json.loads(e)["warc_offset"]
        for e in store.cursor().execute("SELECT extra FROM pages ORDER BY page_id").df()["extra"]
    ]
    errors = output_table(out, "errors")
    want_err = store.ingest_errors()
    assert sorted(zip(errors["line"], errors["kind"], errors["reason"], strict=True)) == sorted(
        zip(want_err["line"], want_err["kind"], want_err["reason"], strict=True)
    )
    assert [r for r in errors["reason"] if r.startswith("not HTML image/png")]
    assert "not HTML" in set(errors["kind"])
    fp = load_fingerprints(store, config, jobs=1)
    analysis = analyze(fp, config)
    assert manifest["numbers"] == analysis.numbers
    assert [s["path"] for s in manifest["sources"]] == [str(f) for f in sorted(warc_dir.iterdir())]
    store.close()


def test_a_short_page_gets_one_verdict_in_all_its_fetches_as_locally(session: object, tmp_path: Path) -> None:
    """Sample records plus a 25-word page fetched under two URL variants and once with a widget's seven words
    more (past min_words 30): Spark keeps the short fetches as content as the local engine does, and its
    units, pairs, clusters and numbers equal the local engine's."""
    first, later = short_page_fetches()
    lines = sample_lines(200) + [json.dumps(r).encode() for r in first + later]
    dump = tmp_path / "crawl.jsonl"
    dump.write_bytes(b"\n".join(lines) + b"\n")
    from neardup.spark import run_spark

    config = Config()
    manifest = run_spark(session, [str(dump)], str(tmp_path / "out"), config)
    pages = output_table(tmp_path / "out", "pages").set_index("url")
    brief = pages.loc[[r["url"] for r in first[:2] + later]]
    assert brief["degenerate"].isna().all(), brief
    assert pages.loc["https://news.example/brief/other", "degenerate"] == "too short"
    with Store(tmp_path / "local.duckdb") as store:
        engine.ingest_file(store, dump, config, jobs=1)
        assert_matches_local(tmp_path / "out", manifest, store, config)
