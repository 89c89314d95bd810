"""Pair evidence: shared passages against a brute-force tiling, scores and candidate traces against what the
engine stored for the bundled sample's pairs."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SAMPLE_CRAWL
from oracles import every_signature

from neardup import engine, evidence
from neardup.analysis import Fingerprints, cluster_at_threshold, load_fingerprints
from neardup.audit import unit_pages
from neardup.candidate_stats import BUCKET_CAP
from neardup.candidates import choose_r, lsh_band_table, size_classes
from neardup.capped_buckets import (
    INDEX,
    count_capped_buckets,
    index_bucket,
    index_params,
    size_class_bucket,
    size_class_pass,
)
from neardup.chains import Bridge, ClusterLinks, Link, UnitPages, link_graph
from neardup.config import Config
from neardup.evidence import (
    MinHashTrace,
    SimHashTrace,
    pair_evidence,
    shared_passages,
    text_words_with_spans,
    unit_of_page,
)
from neardup.shingles import containment, jaccard, shingles, words
from neardup.stages import buckets as stage_buckets
from neardup.store import Store
from neardup.ui import evidence as ui_evidence
from neardup.ui.evidence import candidate_line, cluster_links_line, link_line, scores_line

MINHASH = Config()
SIMHASH = Config(method="simhash", threshold=6)


def tiling_brute_force(a: list[str], b: list[str], k: int) -> list[tuple[int, int, int]]:
    """Greedy string tiling by trying every start in both texts: the longest run of equal words in neither
    tiling yet, the first in A then in B among equals, until none is `k` long."""
    used_a, used_b = [False] * len(a), [False] * len(b)
    out = []
    while True:
        best = None
        for i in range(len(a)):
            for j in range(len(b)):
                n = 0
                while (
                    i + n < len(a)
                    and j + n < len(b)
                    and not used_a[i + n]
                    and not used_b[j + n]
                    and a[i + n] == b[j + n]
                ):
                    n += 1
                if n >= k and (best is None or n > best[2]):
                    best = (i, j, n)
        if best is None:
            return sorted(out, key=lambda p: (-p[2], p[0]))
        i, j, n = best
        for t in range(n):
            used_a[i + t] = used_b[j + t] = True
        out.append(best)


def passages_of(a: list[str], b: list[str], k: int) -> list[tuple[int, int, int]]:
    return [(p.start_a, p.start_b, p.n_words) for p in shared_passages(tuple(a), tuple(b), k)]


@pytest.mark.parametrize("seed", range(40))
def test_shared_passages_equal_a_brute_force_tiling(seed: int) -> None:
    """Random texts built from shared blocks (moved, repeated, cut) and noise, over a small vocabulary so
    runs meet and repeat."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(rng.choice([3, 6, 30]))]
    blocks = [[rng.choice(vocab) for _ in range(rng.randint(1, 15))] for _ in range(4)]

    def text() -> list[str]:
        out: list[str] = []
        for _ in range(rng.randint(0, 6)):
            out += (
                rng.choice(blocks)
                if rng.random() < 0.7
                else [rng.choice(vocab) for _ in range(rng.randint(1, 5))]
            )
        return out

    a, b = text(), text()
    for k in (1, 3, 5):
        assert passages_of(a, b, k) == tiling_brute_force(a, b, k), (a, b, k)


def test_shared_passages_by_hand() -> None:
    a = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "the",
        "lazy",
        "dog",
        "near",
        "the",
        "river",
        "bank",
    ]
    b = ["near", "the", "river", "bank", "the", "quick", "brown", "fox", "sleeps"]
    assert passages_of(a, b, 3) == [(0, 4, 4), (9, 0, 4)]  # moved: found in both orders
    assert passages_of(a, b, 5) == []
    assert passages_of(a, [], 1) == [] and passages_of([], a, 1) == []
    # a repeated passage in one text pairs with one copy in the other
    assert passages_of(["x", "y", "z", "x", "y", "z"], ["x", "y", "z"], 2) == [(0, 0, 3)]


def test_words_with_spans_locate_the_words_shingles_see() -> None:
    text = "Ünïcode ﬁne-print: «Straße» 2,5 km — DÉJÀ vu"
    found = text_words_with_spans(text)
    assert found.words == tuple(words(text))
    for w, s, e in zip(found.words, found.starts, found.ends, strict=True):
        assert words(text[s:e]) == [w]
    assert text[slice(*found.span(2, 2))] == "print: «Straße"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path = Path(tmp_path_factory.mktemp("evidence")) / "sample.duckdb"
    with Store(path) as store:
        engine.ingest_file(store, SAMPLE_CRAWL, MINHASH, jobs=1)
        yield store


def with_every_signature(fp: Fingerprints, every: np.ndarray) -> Fingerprints:
    """`fp` holding `every` unit's signature: its evidence counts each band's bucket in all of them."""
    return dataclasses.replace(fp, minhash=every, signature_units=None, read_signatures=None)


def page_pairs(
    store: Store, fp: Fingerprints, config: Config
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Each stored pair as two `Store.page`-like rows (page id and text) of the first page of each unit."""
    first = unit_pages(fp)["page_id"]
    units = store.units(config.fingerprint_key)
    keys = units["exact_key"].tolist()
    text_of = {
        k: t
        for df in store.unit_texts(config.norm_key, keys, 4096)
        for k, t in zip(df["exact_key"], df["text"], strict=True)
    }
    texts = [text_of[k] for k in keys]
    for i, (a, b) in enumerate(zip(fp.pairs["a"], fp.pairs["b"], strict=True)):
        yield (
            i,
            {"page_id": int(first[a]), "text": texts[a]},
            {"page_id": int(first[b]), "text": texts[b]},
        )


def test_every_stored_minhash_pair_is_explained(sample: Store) -> None:
    """On the sample's stored pairs: the exact scores are the stored ones, the replayed search finds each
    pair (in a band of the one index with an estimate at the floor, or in the size-class pass), and the
    passages are equal words in both texts."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    full = with_every_signature(fp, every_signature(sample, MINHASH, fp.n_units))
    assert len(fp.pairs["a"]) > 100
    by_pass = {"index": 0, "size class only": 0}
    for i, left, right in page_pairs(sample, fp, MINHASH):
        ev = pair_evidence(full, MINHASH, left, right)
        assert ev.scores.jaccard == pytest.approx(fp.pairs["jaccard"][i], abs=1e-12)
        assert ev.scores.containment == pytest.approx(fp.pairs["containment"][i], abs=1e-12)
        assert ev.stored_score == pytest.approx(fp.pairs["containment"][i])
        trace = ev.candidate
        assert isinstance(trace, MinHashTrace) and trace.stored
        assert (trace.bands, trace.rows) == (32, 4)
        sig_a, sig_b = fp.signatures(np.array([ev.unit_a, ev.unit_b]))
        assert trace.estimate_jaccard == np.mean(sig_a == sig_b)
        for hit in trace.hits:
            cols = slice(hit.band * trace.rows, (hit.band + 1) * trace.rows)
            assert (sig_a[cols] == sig_b[cols]).all()
        assert len(trace.hits) == sum(
            (sig_a[r * 4 : r * 4 + 4] == sig_b[r * 4 : r * 4 + 4]).all() for r in range(32)
        )
        in_index = trace.found_by_index and trace.estimate_passed
        assert in_index or trace.size_class_found
        by_pass["index" if in_index else "size class only"] += 1
        assert trace.exact_passed
        wa, wb = ev.words_a.words, ev.words_b.words
        for p in ev.passages:
            assert p.n_words >= MINHASH.shingle_size
            assert wa[p.start_a : p.start_a + p.n_words] == wb[p.start_b : p.start_b + p.n_words]
        assert ev.linked == (fp.pairs["containment"][i] >= MINHASH.threshold)
    assert by_pass["size class only"] >= 1  # the sample's cut-short syndicated copies


def test_scores_equal_the_set_definitions(sample: Store) -> None:
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    full = with_every_signature(fp, every_signature(sample, MINHASH, fp.n_units))
    for _, left, right in list(page_pairs(sample, fp, MINHASH))[:30]:
        ev = pair_evidence(full, MINHASH, left, right)
        sa, sb = shingles(left["text"], MINHASH.shingle_size), shingles(right["text"], MINHASH.shingle_size)
        assert ev.scores.jaccard == pytest.approx(jaccard(sa, sb), abs=0.01)  # 32-bit shingle values
        assert ev.scores.containment_a_in_b == pytest.approx(len(sa & sb) / len(sa), abs=0.01)
        assert ev.scores.containment_b_in_a == pytest.approx(len(sa & sb) / len(sb), abs=0.01)
        if ev.scores.size_guard_passed:
            assert ev.scores.containment == pytest.approx(containment(sa, sb), abs=0.01)


def test_passages_of_real_pairs_equal_the_brute_force(sample: Store) -> None:
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    checked = 0
    for _, left, right in list(page_pairs(sample, fp, MINHASH))[::25]:
        a, b = words(left["text"])[:120], words(right["text"])[:120]
        assert passages_of(a, b, 5) == tiling_brute_force(a, b, 5)
        checked += 1
    assert checked >= 10


def test_a_pair_that_is_no_candidate_says_so(sample: Store) -> None:
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    first = unit_pages(fp)["page_id"]
    stored = set(zip(fp.pairs["a"].tolist(), fp.pairs["b"].tolist(), strict=True))
    a, b = next((a, b) for a in range(5) for b in range(a + 1, 50) if (a, b) not in stored)
    ev = pair_evidence(
        with_every_signature(fp, every_signature(sample, MINHASH, fp.n_units)),
        MINHASH,
        sample.page(int(first[a]), MINHASH.norm_key, source=False),
        sample.page(int(first[b]), MINHASH.norm_key, source=False),
    )
    trace = ev.candidate
    assert isinstance(trace, MinHashTrace) and not trace.stored and ev.stored_score is None
    assert not ev.linked
    assert not (
        (trace.found_by_index and trace.estimate_passed) or trace.size_class_found and trace.exact_passed
    )


def test_the_fingerprints_hold_the_signatures_of_the_units_in_a_pair_only(sample: Store) -> None:
    """A clustering compares the signatures of units in a stored pair only: a replay of the index needs the
    set's capped buckets for the rest, and a replay without them says so."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    every = every_signature(sample, MINHASH, fp.n_units)
    paired = np.union1d(fp.pairs["a"], fp.pairs["b"])
    assert fp.signature_units is not None and (fp.signature_units == paired).all()
    minhash = fp.held_signatures()
    assert minhash is not None and len(minhash) == len(paired) < len(every) == fp.n_units
    assert (fp.signatures(paired[::7]) == every[paired[::7]]).all()
    alone = int(np.setdiff1d(np.arange(fp.n_units), paired)[0])
    with pytest.raises(KeyError, match=f"unit {alone}: it is in no stored pair"):
        fp.signatures(np.array([alone]))
    first = unit_pages(fp)["page_id"]
    a, b = (sample.page(int(first[u]), MINHASH.norm_key, source=False) for u in paired[:2])
    with pytest.raises(ValueError, match="every unit's signature in the fingerprints, or the set's capped"):
        pair_evidence(fp, MINHASH, a, b)


def test_same_text_has_no_trace(sample: Store) -> None:
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    unit = fp.arrays["unit"]
    counts = np.bincount(unit[unit >= 0])
    u = int(np.flatnonzero(counts > 1)[0])
    p1, p2 = fp.arrays["page_id"][unit == u][:2]
    ev = pair_evidence(
        fp,
        MINHASH,
        sample.page(int(p1), MINHASH.norm_key, source=False),
        sample.page(int(p2), MINHASH.norm_key, source=False),
    )
    assert ev.same_text and ev.linked and ev.candidate is None
    assert ev.scores.jaccard == 1.0 and ev.share_a == 1.0 == ev.share_b
    assert len(ev.passages) == 1


def test_every_stored_simhash_pair_is_explained(sample: Store) -> None:
    fp = load_fingerprints(sample, SIMHASH, jobs=1)
    r = choose_r(fp.n_units, SIMHASH.simhash_max_bits)
    assert len(fp.pairs["a"]) > 100
    for i, left, right in page_pairs(sample, fp, SIMHASH):
        trace = pair_evidence(fp, SIMHASH, left, right).candidate
        assert isinstance(trace, SimHashTrace) and trace.stored and trace.found
        assert trace.hamming_bits == fp.pairs["hamming_bits"][i]
        assert trace.r == r and trace.n_blocks == SIMHASH.simhash_max_bits + r
        assert len(trace.agreeing_blocks) >= r  # the pigeonhole
        fa, fb = int(fp.simhash[fp.pairs["a"][i]]), int(fp.simhash[fp.pairs["b"][i]])
        assert (fa ^ fb).bit_count() == trace.hamming_bits


def test_a_page_not_in_the_fingerprints_is_named(sample: Store) -> None:
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    page = {"page_id": int(fp.arrays["page_id"][0]), "text": "some words here and there"}
    with pytest.raises(KeyError, match="page 999999 is not in these fingerprints"):
        pair_evidence(fp, MINHASH, page, {"page_id": 999_999, "text": "other words"})
    with pytest.raises(ValueError, match="same setting"):
        pair_evidence(fp, SIMHASH, page, page)


def _every_signature_batches(signatures: np.ndarray, pieces: int = 3) -> Any:
    """`count_capped_buckets`'s batches: the units in `pieces` batches, in a shuffled order."""
    order = np.random.default_rng(7).permutation(len(signatures))
    return lambda: [(part, signatures[part]) for part in np.array_split(order, pieces)]


@pytest.mark.parametrize("cap", [2, 6])
def test_capped_buckets_are_the_buckets_of_every_signature_over_the_cap(sample: Store, cap: int) -> None:
    """The capped buckets counted a batch at a time are the buckets of the one index and of the size-class
    pass that hold more than the cap: a unit's bucket is found with its size where it is over the cap."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    every = every_signature(sample, MINHASH, fp.n_units)
    capped = count_capped_buckets(_every_signature_batches(every), fp.n_shingles, MINHASH, bucket_cap=cap)
    bands, rows = index_params(MINHASH, MINHASH.num_perm)
    for band in range(bands):
        order, starts = lsh_band_table(every, band, rows)
        sizes = np.diff(np.concatenate((starts, [len(order)])))
        size_of_unit = np.empty(len(order), np.int64)
        size_of_unit[order] = np.repeat(sizes, sizes)
        for unit in range(0, fp.n_units, 5):
            want = int(size_of_unit[unit]) if size_of_unit[unit] > cap else None
            assert capped.size_of(INDEX, band, index_bucket(every[unit], band, rows)) == want
    assert len(capped.size) > 0 and (capped.size > cap).all()
    classes = size_classes(fp.n_shingles)
    (tables,) = size_class_pass(MINHASH, MINHASH.num_perm)
    assert (capped.table == 0).any()  # the size-class pass's 3-row bands crowd first
    for unit in range(0, fp.n_units, 23):
        in_bucket = classes == classes[unit]
        for d in tables.distances:
            in_bucket |= classes == classes[unit] - d
        for band in range(0, tables.bands, 3):
            cols = slice(band * tables.rows, (band + 1) * tables.rows)
            size = int(np.count_nonzero((every[in_bucket, cols] == every[unit, cols]).all(axis=1)))
            key = size_class_bucket(every[unit], int(classes[unit]), tables, band)
            assert capped.size_of(0, band, key) == (size if size > cap else None)


@pytest.mark.parametrize("cap", [BUCKET_CAP, 2])
def test_the_evidence_from_capped_buckets_is_the_evidence_from_every_signature(
    sample: Store, cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the Audit page shows of a pair (its lines, each band's bucket expanded or not) is the same from
    the capped buckets and two signatures as from every unit's signature (`with_every_signature`): for the
    stored pairs and for pairs that are none."""
    monkeypatch.setattr(evidence, "BUCKET_CAP", cap)
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    every = every_signature(sample, MINHASH, fp.n_units)
    capped = count_capped_buckets(_every_signature_batches(every), fp.n_shingles, MINHASH, bucket_cap=cap)
    full = with_every_signature(fp, every)
    first = unit_pages(fp)["page_id"]
    stored = list(page_pairs(sample, fp, MINHASH))
    others = [
        (
            -1,
            sample.page(int(first[a]), MINHASH.norm_key, source=False),
            sample.page(int(first[b]), MINHASH.norm_key, source=False),
        )
        for a, b in [(0, 1), (2, 40), (5, 300)]
    ]
    capped_bands = 0
    for _, left, right in stored[::3] + others:
        ua, ub = unit_of_page(fp, left["page_id"]), unit_of_page(fp, right["page_id"])
        want = pair_evidence(full, MINHASH, left, right)
        got = pair_evidence(fp, MINHASH, left, right, capped=capped, pair_signatures=(every[ua], every[ub]))
        assert isinstance(want.candidate, MinHashTrace) and isinstance(got.candidate, MinHashTrace)
        for line in (scores_line, lambda ev: candidate_line(ev, MINHASH), lambda ev: link_line(ev, MINHASH)):
            assert line(got) == line(want)
        assert [h.expanded for h in got.candidate.hits] == [h.expanded for h in want.candidate.hits]
        got_class, want_class = got.candidate.size_class, want.candidate.size_class
        assert (got_class is None) == (want_class is None)
        if got_class is not None and want_class is not None:
            assert [h.expanded for h in got_class.hits] == [h.expanded for h in want_class.hits]
            assert got_class.found == want_class.found
        capped_bands += sum(not h.expanded for h in got.candidate.hits)
        capped_bands += sum(not h.expanded for h in got_class.hits) if got_class is not None else 0
    assert capped_bands > 0 if cap < BUCKET_CAP else capped_bands == 0


def test_capped_buckets_are_counted_once_per_fingerprint_set(
    sample: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ensure_capped_buckets` counts a set's capped buckets and keeps them; the next call reads them; a set
    computed again (or extended) since they were counted is counted again."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    every = every_signature(sample, MINHASH, fp.n_units)
    counted = engine.ensure_capped_buckets(sample, MINHASH, bucket_cap=6)
    want = count_capped_buckets(_every_signature_batches(every, 1), fp.n_shingles, MINHASH, bucket_cap=6)
    for name in ("table", "band", "bucket", "size"):
        assert (getattr(counted, name) == getattr(want, name)).all()

    def no_count(*args: object, **kwargs: object) -> None:
        raise AssertionError("counted again")

    monkeypatch.setattr(stage_buckets, "count_capped_buckets", no_count)
    read = engine.ensure_capped_buckets(sample, MINHASH, bucket_cap=6)
    order = np.lexsort((read.bucket, read.band, read.table))
    assert (read.size[order] == counted.size[np.lexsort((counted.bucket, counted.band, counted.table))]).all()
    with pytest.raises(AssertionError, match="counted again"):
        engine.ensure_capped_buckets(sample, MINHASH, bucket_cap=7)  # another cap
    sample.cursor().execute(
        "UPDATE fingerprint_sets SET computed_at = computed_at + INTERVAL 1 SECOND WHERE fingerprint_key = ?",
        [MINHASH.fingerprint_key],
    )
    with pytest.raises(AssertionError, match="counted again"):
        engine.ensure_capped_buckets(sample, MINHASH, bucket_cap=6)


@pytest.mark.parametrize("threshold", [0.7, 0.8, 0.95])
def test_a_link_graph_from_the_clustering_is_the_graph_made_alone(sample: Store, threshold: float) -> None:
    """The app builds a threshold's link graph from what it has already: the units' pages (once per
    fingerprint set) and the clustering's clusters, not its own components. Every cluster's links and
    bridges, and every chain between two of its units, are those of the graph made alone."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    config = dataclasses.replace(MINHASH, threshold=threshold)
    clustering = cluster_at_threshold(fp, config)
    alone = link_graph(fp, config)
    shared = link_graph(
        fp,
        config,
        unit_pages=UnitPages.of(fp.n_units, fp.arrays["unit"], fp.arrays["page_id"]),
        page_cluster=clustering.numbering.cluster,
    )
    assert (shared.page_of_unit == alone.page_of_unit).all()
    assert (shared.pages_of_unit == alone.pages_of_unit).all()
    same_as = {}  # the two numberings name the same components
    for mine, theirs in zip(shared.component.tolist(), alone.component.tolist(), strict=True):
        assert same_as.setdefault(mine, theirs) == theirs
    assert len(set(same_as.values())) == len(same_as)
    multi = [u for u in range(fp.n_units) if (alone.component == alone.component[u]).sum() > 1]
    assert multi, "no cluster of two texts at this threshold: the test would check nothing"
    rng = random.Random(threshold)
    for unit in rng.sample(multi, min(20, len(multi))):
        assert shared.cluster_links(unit) == alone.cluster_links(unit)
        other = rng.choice(multi)
        assert shared.chain(unit, other) == alone.chain(unit, other)


def test_the_app_keeps_the_link_graphs_of_the_latest_thresholds_only(
    sample: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link graph holds arrays over every unit and page: the thresholds tried one after another keep the
    graphs of the latest two, and a pair's evidence stays memoized beside them."""
    fp = load_fingerprints(sample, MINHASH, jobs=1)
    monkeypatch.setattr(ui_evidence, "fingerprints", lambda store, path, config: fp)
    graphs = [
        ui_evidence.get_link_graph(sample, "sample", dataclasses.replace(MINHASH, threshold=t))
        for t in (0.8, 0.82, 0.84, 0.86, 0.88)
    ]
    assert len(ui_evidence.LINK_GRAPHS._values) == 2
    assert (
        ui_evidence.get_link_graph(sample, "sample", dataclasses.replace(MINHASH, threshold=0.88))
        is graphs[-1]
    )
    assert (
        ui_evidence.get_link_graph(sample, "sample", dataclasses.replace(MINHASH, threshold=0.8))
        is not graphs[0]
    )
    (_, left, right), *_ = page_pairs(sample, fp, MINHASH)
    ev = ui_evidence.get_pair_evidence(sample, "sample", MINHASH, left, right)
    assert ui_evidence.get_pair_evidence(sample, "sample", MINHASH, left, right) is ev
    assert len(ui_evidence.LINK_GRAPHS._values) == 2


def test_the_cluster_links_line_names_one_text_and_counts_the_bridges() -> None:
    """A cluster of one text (its pages' words equal) has no link to count; of several texts the line counts
    the links and the bridges in words that agree with their numbers."""

    def bridge(a: int, b: int) -> Bridge:
        return Bridge(Link(a, b, a, b, 0.9), (1, 2), weak=False)

    one_text = cluster_links_line(ClusterLinks(n_units=1, n_links=0, bridges=()))
    assert "joined by" not in one_text and "0 " not in one_text
    assert one_text.startswith("One distinct text:")
    assert cluster_links_line(ClusterLinks(n_units=2, n_links=1, bridges=(bridge(0, 1),))) == (
        "2 distinct texts joined by 1 link at the threshold; it is a bridge (a link the cluster parts without)."
    )
    assert cluster_links_line(ClusterLinks(n_units=3, n_links=3, bridges=())) == (
        "3 distinct texts joined by 3 links at the threshold; none of them is a bridge (a link the cluster "
        "parts without)."
    )
    assert cluster_links_line(ClusterLinks(n_units=4, n_links=4, bridges=(bridge(0, 1), bridge(2, 3)))) == (
        "4 distinct texts joined by 4 links at the threshold; 2 of them are bridges (a link the cluster parts "
        "without)."
    )
