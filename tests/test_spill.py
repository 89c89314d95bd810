"""The fingerprint step out of core (`memory_limit`, `neardup.spill`): the units, pairs, scores and statistics
of the in-memory computation, whatever the size of its pieces (a limit of a few bytes makes every piece one
row or one pair: every read, copy and scored chunk spills), and arrays past 2**31 values addressed right."""

from __future__ import annotations

import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import words_text, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup import engine
from neardup.candidates import MappedSignatures, intersection_sizes, lsh_band_table, verified_band_pairs
from neardup.config import Config
from neardup.errors import ConfigError
from neardup.spill import (
    DUCKDB_MIN_MEMORY,
    IN_MEMORY_BYTES_PER_UNIT,
    DiskPairs,
    SpillDir,
    SpillPlan,
    out_of_core_limit,
    parse_memory_limit,
)
from neardup.stages.fingerprints import compute_fingerprints
from neardup.stages.pairs import SpilledUnits, unit_ids
from neardup.stages.sketches import ensure_sketches
from neardup.store import Store

CONFIGS = {
    "containment": Config(),
    "jaccard": Config(similarity="jaccard", threshold=0.6),
    "simhash": Config().with_method("simhash"),
}


def _records(seed: int, n_docs: int) -> list[dict[str, Any]]:
    """Pages made of a few paragraphs drawn from a shared pool: pairs at every overlap, near the floors too
    (the estimates pass some the exact scores reject), short and long pages (the size-class pass)."""
    rng = random.Random(seed)
    pool = [words_text(rng, rng.randrange(15, 150)) for _ in range(max(4, n_docs // 3))]
    records = []
    for d in range(n_docs):
        body = "</p><p>".join(rng.sample(pool, rng.randrange(1, min(6, len(pool)))))
        if d % 4 == 3:  # a copy of the page before with one word changed: a SimHash pair as well
            words = records[-1]["body"].split(" ")
            words[len(words) // 2] = "CHANGED"
            body = " ".join(words)
        records.append({"url": f"https://site{d % 5}.example/{seed}/{d}", "body": body, "status": 200})
    for r in records:
        r["html"] = f"<html><body><article><p>{r.pop('body')}</p></article></body></html>"
    return records


_FOLDER = Path(tempfile.mkdtemp(prefix="neardup-test-spill-"))
_STORES: dict[tuple[int, int], Store] = {}
_IN_MEMORY: dict[tuple[int, int, str], dict[str, Any]] = {}


@pytest.fixture(scope="module", autouse=True)
def _remove_folder():
    """The module's crawls and their databases live in one temporary folder, removed after its tests."""
    yield
    for store in _STORES.values():
        store.close()
    _STORES.clear()
    shutil.rmtree(_FOLDER, ignore_errors=True)


def _store(seed: int, n_docs: int) -> Store:
    """The crawl of (seed, n_docs), ingested once per test session."""
    if (seed, n_docs) not in _STORES:
        store = Store(_FOLDER / f"crawl-{seed}-{n_docs}.duckdb")
        dump = write_jsonl(_FOLDER / f"crawl-{seed}-{n_docs}.jsonl", _records(seed, n_docs))
        engine.ingest_file(store, dump, Config(), jobs=1)
        _STORES[seed, n_docs] = store
    return _STORES[seed, n_docs]


def _computed(store: Store, config: Config) -> dict[str, Any]:
    """The fingerprint set computed anew under `config`, as stored: units and pairs by unit id."""
    with store.writing():
        engine.ensure_texts(store, config, jobs=1)
        fset = compute_fingerprints(store, config, jobs=1)
    key = config.fingerprint_key
    units = store.units(key, with_signatures=True).sort_values("unit_id").reset_index(drop=True)
    pairs = store.pairs(key).sort_values(["a", "b"]).reset_index(drop=True)
    return {"units": units, "pairs": pairs, "counts": (fset.n_units, fset.n_pairs), "stats": fset.stats}


def _assert_same(spilled: dict[str, Any], in_memory: dict[str, Any]) -> None:
    pd.testing.assert_frame_equal(spilled["units"], in_memory["units"])
    pd.testing.assert_frame_equal(spilled["pairs"], in_memory["pairs"])  # exact scores, bit for bit
    assert spilled["counts"] == in_memory["counts"]
    assert spilled["stats"] == in_memory["stats"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 3),
    n_docs=st.sampled_from([12, 60, 150]),
    setting=st.sampled_from(sorted(CONFIGS)),
    limit_bytes=st.integers(1, 16 << 10),
)
def test_out_of_core_is_the_in_memory_computation(
    seed: int, n_docs: int, setting: str, limit_bytes: int
) -> None:
    store = _store(seed, n_docs)
    config = CONFIGS[setting]
    if (seed, n_docs, setting) not in _IN_MEMORY:
        _IN_MEMORY[seed, n_docs, setting] = _computed(store, config)
    in_memory = _IN_MEMORY[seed, n_docs, setting]
    assert out_of_core_limit(in_memory["counts"][0], limit_bytes) == limit_bytes  # the step spills
    spilled = _computed(store, config.replace(memory_limit=f"{limit_bytes}B"))
    _assert_same(spilled, in_memory)
    assert in_memory["counts"][1] > 0


def test_more_units_than_any_piece(tmp_path: Path) -> None:
    """The bundled sample crawl (3,000 pages) in pieces of a few rows and one pair: thousands of units
    across hundreds of reads and copies, each pair scored on its own."""
    plan = SpillPlan.for_limit(parse_memory_limit("64KB"), Config().num_perm)
    assert (plan.read_rows, plan.copy_rows, plan.verify_pairs, plan.candidates) == (5, 8, 1, 85)
    with Store(tmp_path / "sample.duckdb") as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        in_memory = _computed(store, Config())
        spilled = _computed(store, Config(memory_limit="64KB"))
    assert in_memory["counts"][0] > 100 * plan.copy_rows
    assert in_memory["stats"].rejected_exact > 0  # estimates the exact scores overrule
    _assert_same(spilled, in_memory)


@pytest.mark.parametrize("compiled", [True, False])
def test_sets_past_two_to_the_31_values(tmp_path: Path, compiled: bool) -> None:
    """Shingle sets that lie past 2**31 values (8 GB) of a file are intersected where they lie: offsets are
    int64 end to end (a sparse file: only the sets' pages take room)."""
    far = (1 << 31) + 12_345
    path = tmp_path / "sets.bin"
    sets = {0: np.arange(0, 100, dtype=np.uint32), far: np.arange(50, 120, dtype=np.uint32)}
    sets[far + 70] = np.arange(0, 100, 2, dtype=np.uint32)
    with open(path, "wb") as f:
        for at, values in sets.items():
            f.seek(4 * at)
            f.write(values.tobytes())
    values = np.memmap(path, dtype=np.uint32, mode="r")
    offsets = np.array(list(sets), dtype=np.int64)
    lens = np.array([len(v) for v in sets.values()], dtype=np.int64)
    a, b = np.array([0, 0, 1]), np.array([1, 2, 2])
    assert intersection_sizes(values, lens, a, b, offsets=offsets, compiled=compiled).tolist() == [50, 50, 25]


def test_disk_array_reads_what_was_appended(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    chunks = [rng.integers(0, 2**32, size=(n, 7), dtype=np.uint32) for n in (3, 0, 11, 1)]
    with SpillDir(tmp_path) as spill:
        array = spill.array("rows", np.uint32, (7,))
        for chunk in chunks:
            array.append(chunk)
        read = array.read()
        assert np.array_equal(read, np.concatenate(chunks))
        array.release()  # the pages leave the resident set; the values are read again from the file
        assert np.array_equal(read, np.concatenate(chunks))
        assert spill.bytes_used() == read.nbytes
        empty = spill.array("none", "S64").read()
        assert empty.shape == (0,)
        folder = spill.path
    assert not folder.exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(0, 9), min_size=1, max_size=12),
    picks=st.lists(st.integers(0, 11), max_size=20),
)
def test_gathered_rows_are_the_rows_read(tmp_path: Path, sizes: list[int], picks: list[int]) -> None:
    """`DiskArray.gather` reads rows [start, start + count) of the file back to back, in the order asked
    (not the file's), empty runs and repeats included: the values a map would give."""
    rng = np.random.default_rng(len(sizes))
    with SpillDir(tmp_path) as spill:
        array = spill.array("sets", np.uint32, (3,))
        for size in sizes:
            array.append(rng.integers(0, 2**32, size=(size, 3), dtype=np.uint32))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        wanted = [p % len(sizes) for p in picks]
        got = array.gather(starts[wanted], np.asarray(sizes, dtype=np.int64)[wanted])
        whole = array.read()
        expected = [whole[starts[w] : starts[w] + sizes[w]] for w in wanted]
        assert np.array_equal(got, np.concatenate(expected) if expected else np.empty((0, 3), np.uint32))
        with pytest.raises(RuntimeError, match="past the end"):
            array.gather(np.array([sum(sizes)]), np.array([1]))


def test_duckdb_keeps_to_its_share_of_the_limit_out_of_core(tmp_path: Path) -> None:
    """While the fingerprint step runs under a memory limit, DuckDB's memory limit is the step's share of it
    (its scans, sorts and joins spill or evict what passes it), from the texts to the save; before and
    after, the store's own."""
    with Store(tmp_path / "sample.duckdb") as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        config = Config(memory_limit="4MB")  # out of core: the sample's ~3,000 units take ~12 MB in memory
        plan = SpillPlan.for_limit(parse_memory_limit("4MB"), config.num_perm)
        seen: dict[str, set[str]] = {}

        def setting() -> str:
            return str(store.cursor().execute("SELECT current_setting('memory_limit')").fetchone()[0])

        def progress(stage: str, done: int, total: int) -> None:
            seen.setdefault(stage, set()).add(setting())

        with store.writing():
            before = setting()
        engine.ensure_fingerprints(store, config.replace(shingle_size=4), jobs=1, progress=progress)
        with store.writing():
            after = setting()
    assert plan.duckdb_memory == DUCKDB_MIN_MEMORY == 128 << 20
    assert {"fingerprint", "candidates", "verify", "save"} <= set(seen)  # its sketches too
    assert set().union(*seen.values()) == {"128.0 MiB"}
    assert before == after != "128.0 MiB"


@pytest.mark.parametrize("key_ranges", [2, 7, 300])
def test_units_sorted_a_range_of_keys_at_a_time_are_the_units_sorted_at_once(
    tmp_path: Path, key_ranges: int
) -> None:
    """The out-of-core step's read of the units' sketches, a range of exact keys at a time: the same rows in
    the same (exact-key) order, whatever the number of ranges (more than there are units too)."""
    with Store(tmp_path / "sample.duckdb") as store:
        engine.ingest_file(store, engine.SAMPLE_CRAWL, Config(), jobs=1)
        config = Config()
        with store.writing():
            engine.ensure_texts(store, config, jobs=1)
            ensure_sketches(store, config, jobs=1)
            read = {
                ranges: pa.Table.from_batches(
                    list(
                        store.unit_sketch_batches(
                            config.norm_key,
                            config.sketch_key,
                            97,
                            with_minhash=True,
                            min_words=config.min_words,
                            key_ranges=ranges,
                        )
                    )
                )
                for ranges in (1, key_ranges)
            }
    assert read[1].num_rows > 1000
    assert read[key_ranges].equals(read[1])


def test_duckdb_limit_is_never_raised(tmp_path: Path) -> None:
    with Store(tmp_path / "small.duckdb", memory_limit="64MB") as store, store.writing():
        cur = store.cursor()
        before = cur.execute("SELECT current_setting('memory_limit')").fetchone()
        with store.duckdb_memory_at_most(1 << 30):
            assert cur.execute("SELECT current_setting('memory_limit')").fetchone() == before
        with store.duckdb_memory_at_most(32 << 20):
            assert cur.execute("SELECT current_setting('memory_limit')").fetchone() == ("32.0 MiB",)
        assert cur.execute("SELECT current_setting('memory_limit')").fetchone() == before


@pytest.mark.parametrize(
    ("text", "expected"), [("2GB", 2 << 30), ("512mb", 512 << 20), ("1.5 GB", 3 << 29), ("100", 100)]
)
def test_memory_limit_sizes(text: str, expected: int) -> None:
    assert parse_memory_limit(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "0GB", "150%", "-1GB", "2 PB"])
def test_memory_limit_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="memory_limit"):
        Config(memory_limit=text)


def test_out_of_core_where_the_in_memory_peak_would_pass_the_limit() -> None:
    fits = 1000 * IN_MEMORY_BYTES_PER_UNIT
    assert out_of_core_limit(1000, fits) is None
    assert out_of_core_limit(1001, fits) == fits
    assert out_of_core_limit(10**7, None, machine=24 << 30) == 12 << 30  # half the machine by default
    assert out_of_core_limit(10**6, None, machine=24 << 30) is None


@settings(max_examples=40, deadline=None)
@given(
    codes=st.lists(st.integers(0, 400), max_size=120),
    rows=st.integers(1, 50),
)
def test_disk_pairs_are_each_pair_once_with_its_first_estimates(codes: list[int], rows: int) -> None:
    """A pair found several times (in several bands) comes out once, sorted, with the estimates of its first
    finding, whatever the ranges the deduplication takes: `np.unique(..., return_index=True)` of the whole."""
    n = 21
    found = np.array(codes, dtype=np.int64)
    jac, cont = np.arange(len(found)) / 7.0, np.arange(len(found)) / 11.0
    with SpillDir(_FOLDER) as spill:
        pairs = DiskPairs(spill, rows)
        for lo in range(0, len(found), 7):  # appended a chunk at a time, as bands find them
            pairs.append(found[lo : lo + 7], jac[lo : lo + 7], cont[lo : lo + 7])
        a, b, got_jac, got_cont = (np.array(column) for column in pairs.unique(n))
    want, first = np.unique(found, return_index=True)
    assert np.array_equal(a, want // n) and np.array_equal(b, want % n)
    assert np.array_equal(got_jac, jac[first]) and np.array_equal(got_cont, cont[first])


def _resident_kb_of_map(path: Path) -> int:
    """The process's resident kB of its memory maps of the file `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if not line[:1].isupper():  # a mapping's first line: "start-end perms offset dev inode path"
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_scattered_signature_rows_are_read_with_pread_not_through_the_map(tmp_path: Path) -> None:
    """Out of core, the rows a chunk of candidate pairs compares are read with pread: the signatures'
    map gains no resident page while a band's pairs are verified (through the map, a read fault maps a
    whole page-cache folio, and a chunk's scattered rows held most of the file), and the pairs and their
    estimates are those of the signatures in memory."""
    n, perm, rows = 40_000, 128, 8
    rng = np.random.default_rng(5)
    sigs = rng.integers(0, 2**32, size=(n, perm), dtype=np.uint32)
    twins = rng.permutation(n)[: n // 2].reshape(-1, 2)  # scattered pairs of near copies
    sigs[twins[:, 1]] = sigs[twins[:, 0]]
    sigs[twins[:, 1], rows : rows + 10] += 1  # one band apart, same first band
    sizes = np.full(n, 500, dtype=np.float64)
    table = lsh_band_table(sigs, 0, rows)
    score = {"similarity": "jaccard", "floor": 0.5, "min_size_ratio": 0.0}
    _, expected = verified_band_pairs(sigs, sizes, table, **score)  # type: ignore[arg-type]
    with SpillDir(tmp_path) as spill:
        array = spill.array("signatures", np.uint32, (perm,))
        array.append(sigs)
        on_map = array.read()
        for read_rows, resident_while in ((array.read_rows, "none"), (None, "some")):
            seen: list[int] = []
            found: list[tuple[np.ndarray, ...]] = []

            def sink(codes: np.ndarray, jac: np.ndarray, cont: np.ndarray) -> None:
                seen.append(_resident_kb_of_map(array.path))  # noqa: B023 (called within the loop)
                found.append((codes, jac, cont))  # noqa: B023

            verified_band_pairs(on_map, sizes, table, rows=read_rows, sink=sink, **score)  # type: ignore[arg-type]
            got = [np.concatenate(part) for part in zip(*found, strict=True)]
            want = [np.concatenate(part) for part in zip(*expected, strict=True)]
            assert len(got[0]) == len(twins) and all(
                np.array_equal(g, w) for g, w in zip(got, want, strict=True)
            )
            # through the map (the in-memory path's reads, given a map), the same chunk leaves pages
            # resident: the measure sees what it is meant to
            assert (max(seen) == 0) == (resident_while == "none"), seen
            array.release()
        assert np.array_equal(array.read_rows(np.array([7, 3, 7])), sigs[[7, 3, 7]])


def test_signature_rows_are_read_through_the_map_within_its_share_of_the_limit(tmp_path: Path) -> None:
    """The search reads the rows a chunk of pairs compares through the signatures' map while the whole file
    is within a quarter of the limit (its resident pages bounded by it), with pread past it."""
    perm = Config().num_perm
    with SpillDir(tmp_path) as spill:
        array = spill.array("signatures", np.uint32, (perm,))
        array.append(np.zeros((1000, perm), dtype=np.uint32))  # 500 KB
        for limit, read in (("2MB", "map"), ("1MB", "pread")):
            units = SpilledUnits(
                exact_keys=np.empty(0, "S64"),
                n_shingles=np.zeros(1000, np.int32),
                simhash=None,
                signature_file=array,
                spill=spill,
                plan=SpillPlan.for_limit(parse_memory_limit(limit), perm),
            )
            rows = units.mapped().rows
            assert (rows is None) == (read == "map"), limit
            if rows is not None:
                assert np.array_equal(rows(np.array([3, 999])), np.zeros((2, perm), np.uint32))


@settings(max_examples=40, deadline=None)
@given(
    keys=st.lists(st.integers(0, 40), min_size=1, max_size=90),
    entries_per_row=st.sampled_from([1, 3]),
    bucket_entries=st.integers(1, 100),
)
def test_bucket_groups_hold_whole_buckets(keys: list[int], entries_per_row: int, bucket_entries: int) -> None:
    """Every entry of a band is in one group, with its key, and a bucket (keys equal but for the lowest bit)
    never spans two groups."""
    n = -(-len(keys) // entries_per_row)
    entry_keys = np.resize(np.array(keys, dtype=np.uint64), n * entries_per_row).reshape(entries_per_row, n)

    def keys_of(rows: slice | np.ndarray) -> np.ndarray:
        return entry_keys[:, rows].reshape(-1)

    mapped = MappedSignatures(2, lambda: None, 10, 1, bucket_entries, pairs=None, rows=None)  # type: ignore[arg-type]
    groups = list(mapped.bucket_groups(n, keys_of, entries_per_row))
    positions = np.concatenate([p for p, _ in groups])
    assert np.array_equal(np.sort(positions), np.arange(n * entries_per_row))
    flat = entry_keys.reshape(-1)
    for p, k in groups:
        assert np.array_equal(k, flat[p])
    buckets = [set((flat[p] >> np.uint64(1)).tolist()) for p, _ in groups]
    assert sum(len(b) for b in buckets) == len(set().union(*buckets))


def test_unit_ids_by_key() -> None:
    keys = np.array([b"a" * 64, b"b" * 64, b"c" * 64], dtype="S64")
    assert unit_ids(keys, ["c" * 64, "a" * 64]).tolist() == [2, 0]
    with pytest.raises(RuntimeError, match="no unit"):
        unit_ids(keys, ["bb" + "a" * 62])
