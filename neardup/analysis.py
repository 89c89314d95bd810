"""Clusters at a threshold and the report numbers, from the fingerprints and pairs the engine stored.

`load_fingerprints` reads what re-clustering needs once per fingerprint key; `analyze` clusters at
`config.threshold` and counts (`report_numbers`, shared with the Spark path): a threshold change only
filters the stored pairs and re-clusters.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .batches import signature_matrix, signatures
from .candidate_stats import CAPPED_NOTE, CAPPED_WARN_SHARE
from .candidates import CandidateStats, exact_scores
from .clusters import WHY, RepresentativeRanks, cluster_representatives, components, representative_ranks
from .config import Config
from .engine import ensure_fingerprints
from .errors import NeardupError
from .factorized import first_rows
from .minhash import estimate_jaccard
from .simhash import hamming_many
from .stages.base import Progress, no_progress
from .store import Store
from .urls import UrlRule, apply_url_rules


@dataclass(slots=True, weakref_slot=True)  # weakly referenced by the app's memos of derived values
class Fingerprints:
    """What re-clustering needs, loaded once per fingerprint key (the app caches this).

    `arrays` holds the per-page columns as integer arrays (factorized URLs, hosts, MD5s), so that
    `analyze` runs on numpy alone and a threshold change costs milliseconds, not a DataFrame shuffle.
    """

    config: Config
    pages: pd.DataFrame  # one row per page, with unit_id (-1 for degenerate pages)
    n_units: int
    pairs: dict[str, np.ndarray]
    simhash: np.ndarray | None  # per unit
    # MinHash signatures (one row each) of the units `signature_units` names; every unit's, by unit id,
    # where that is None; None until first asked for where `read_signatures` is set. Read with `signatures`.
    minhash: np.ndarray | None
    stats: CandidateStats  # of the candidate search, as stored with the fingerprints
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    hosts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    # Threshold-independent: distinct MD5s ("md5") and distinct texts ("units") among content pages.
    fixed_counts: dict[str, int] = field(default_factory=dict)
    n_shingles: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # per unit
    # The stored unit id of each unit, where they were renumbered (a load of some sources); else None.
    unit_ids: np.ndarray | None = None
    # (a * n_units + b of each stored pair, sorted; its order): made by the first `similarity_to`, as no
    # threshold changes it.
    pair_index: tuple[np.ndarray, np.ndarray] | None = None
    # The unit ids (ascending) whose signatures `minhash` holds: the units in a stored pair, as
    # `load_fingerprints` reads them (a unit in no pair is never compared with another); None: every unit.
    signature_units: np.ndarray | None = None
    # `clusters.representative_ranks` of the pages per representative rule: made by the first analysis
    # under a rule, as no threshold changes them.
    representative_ranks: dict[tuple[str, ...], RepresentativeRanks] = field(default_factory=dict)
    # Reads `minhash` when first needed (`held_signatures`): a clustering and its numbers compare no
    # signature, only a similarity to a representative through other units does (at 1M pages a read of
    # a hundred megabytes the app's Home page never needs).
    read_signatures: Callable[[], np.ndarray] | None = None

    def held_signatures(self) -> np.ndarray | None:
        """`minhash`, read first where it is not yet (None: the fingerprints are SimHash's)."""
        if self.minhash is None and self.read_signatures is not None:
            self.minhash = self.read_signatures()
            self.read_signatures = None
        return self.minhash

    def signatures(self, units: np.ndarray) -> np.ndarray:
        """The MinHash signatures of `units` (unit ids); a unit whose signature is not held raises KeyError
        (see `signature_units`)."""
        minhash = self.held_signatures()
        if minhash is None:
            raise KeyError("no MinHash signatures: the fingerprints are SimHash's")
        units = np.asarray(units, dtype=np.int64)
        if self.signature_units is None:
            return minhash[units]
        held = self.signature_units
        rows = np.minimum(np.searchsorted(held, units), max(len(held) - 1, 0))
        missing = held[rows] != units if len(held) else np.ones(len(units), dtype=bool)
        if missing.any():
            raise KeyError(f"no signature held for unit {int(units[missing][0])}: it is in no stored pair")
        return minhash[rows]


def _arrow_strings(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A string column as one Arrow array (the chunks DuckDB gives, put together)."""
    strings = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return strings if pa.types.is_string(strings.type) else strings.cast(pa.string())


def string_codes(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """`pd.factorize`'s codes of Arrow strings (equal strings, equal codes, numbered in order of first
    appearance; -1 for null). Where every value has the same length, a multiple of 8 bytes (an MD5's hex
    digits), its bytes are compared as 64-bit words: a hash of the words is factorized and checked against
    them, and a collision falls back to hashing the strings."""
    words = _fixed_width_words(strings)
    if words is not None:
        mixed = words[:, 0].copy()
        for k in range(1, words.shape[1]):
            mixed *= np.uint64(0x9E3779B97F4A7C15)
            mixed ^= words[:, k]
        codes = pd.factorize(mixed)[0].astype(np.int64)
        if bool((words == words[first_rows(codes)[codes]]).all()):
            return codes
    encoded = pc.dictionary_encode(_arrow_strings(strings))
    return np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _fixed_width_words(strings: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The bytes of strings all of one length, a multiple of 8, as rows of 64-bit words (None otherwise, or
    with a null); the chunks of a chunked array copied into one matrix."""
    n = len(strings)
    if (
        not n
        or strings.null_count
        or not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type))
    ):
        return None
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    out: np.ndarray | None = None
    at = 0
    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        m = len(chunk)
        if not m:
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=offset_type)[chunk.offset : chunk.offset + m + 1]
        width = int(offsets[1] - offsets[0])
        if out is None:
            if not width or width % 8:
                return None
            out = np.empty((n, width // 8), dtype=np.uint64)
        if (
            width != out.shape[1] * 8
            or int(offsets[-1] - offsets[0]) != width * m
            or not (np.diff(offsets) == width).all()
        ):
            return None
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
        out.view(np.uint8).reshape(n, width)[at : at + m] = data.reshape(m, width)
        at += m
    return out


def naming_codes(
    canonical: pa.Array | pa.ChunkedArray, rel: pa.Array | pa.ChunkedArray
) -> tuple[np.ndarray, np.ndarray]:
    """(url_id, rel_id): codes of the pages' canonical URLs and rel=canonical URLs in one id space, as far
    as `clusters.representative_rows` compares them. A rel=canonical URL naming another URL than its own
    page's has the code of that URL among the URLs so named; a canonical URL has its code there, or one
    code (their count) that no rel=canonical has; a rel=canonical naming its own page, or none, is -1.
    Only the named URLs are hashed, not every URL of the crawl twice."""
    names_other = pc.fill_null(pc.not_equal(rel, canonical), False)
    named = pc.unique(rel.filter(names_other))
    url_id = pc.index_in(canonical, value_set=named).fill_null(len(named))
    rel_id = pc.if_else(names_other, pc.index_in(rel, value_set=named), -1)
    return (
        np.asarray(url_id.to_numpy(zero_copy_only=False), dtype=np.int64),
        np.asarray(rel_id.to_numpy(zero_copy_only=False), dtype=np.int64),
    )


# The columns `_page_arrays` codes, in the groups it reads them (`Store.page_column_groups`): one group's
# strings are held at a time. Under URL rules the last group holds the URL as fetched too.
_CODED_GROUPS: tuple[tuple[str, ...], ...] = (
    ("md5",),
    ("host",),
    ("fetched_at",),
    ("canonical_url", "rel_canonical"),
)


def _page_arrays(
    page_id: pa.ChunkedArray | pa.Array,
    unit: np.ndarray,
    groups: Iterator[pa.Table],
    url_rules: Sequence[UrlRule],
) -> tuple[dict[str, np.ndarray], np.ndarray, pa.Table]:
    """`Fingerprints.arrays` and `hosts` of pages (`page_id`, their `unit`: -1 for a degenerate page) from
    the tables of their `_CODED_GROUPS` columns, in that order, each coded before the next is read; and the
    last group's table (canonical_url and rel_canonical rewritten by `url_rules`, as clustering sees them)."""
    md5 = string_codes(next(groups).column("md5"))
    encoded = pc.dictionary_encode(next(groups).column("host"))  # one dictionary for every chunk
    host = _host_codes(encoded)
    dictionary = encoded.chunk(0).dictionary if encoded.num_chunks else pa.array([], pa.string())
    del encoded
    fetched_ns = _nanoseconds(next(groups).column("fetched_at"))
    urls = next(groups)
    if url_rules:  # the config's URL rules rewrite the canonical URLs (see `neardup rules`)
        ruled = ruled_urls(
            urls.column("url").to_pylist(), urls.column("rel_canonical").to_pylist(), url_rules
        )
        for name, values in zip(("canonical_url", "rel_canonical"), ruled, strict=True):
            at = urls.schema.get_field_index(name)
            urls = urls.set_column(at, name, pa.chunked_array([pa.array(values, pa.string())]))
        del ruled
    canonical = urls.column("canonical_url")
    url_id, rel_id = naming_codes(canonical, urls.column("rel_canonical"))
    arrays = {
        "unit": unit,
        "page_id": np.asarray(page_id.to_numpy(), dtype=np.int64),
        "url_id": url_id,
        "rel_id": rel_id,
        "fetched_ns": fetched_ns,
        "url_len": np.asarray(
            pc.utf8_length(canonical).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64
        ),
        "host": host,
        "md5": md5,
    }
    return arrays, np.asarray(dictionary.to_numpy(zero_copy_only=False), dtype=object), urls


def _host_codes(hosts: pa.ChunkedArray) -> np.ndarray:
    """The codes of a dictionary-encoded column, -1 for null."""
    out = np.empty(len(hosts), dtype=np.int64)
    at = 0
    for chunk in hosts.chunks:
        out[at : at + len(chunk)] = chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        at += len(chunk)
    return out


_NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _nanoseconds(times: pa.ChunkedArray) -> np.ndarray:
    """Arrow timestamps as nanoseconds since the epoch, -1 for none."""
    ticks = np.asarray(times.cast(pa.int64()).fill_null(0).to_numpy(), dtype=np.int64)
    known = np.asarray(pc.is_valid(times).to_numpy(zero_copy_only=False), dtype=bool)
    return np.where(known, ticks * _NS_PER[times.type.unit], -1)


def ruled_urls(
    urls: Iterable[str], rel_canonicals: Iterable[str | None], rules: Sequence[UrlRule]
) -> tuple[list[str], list[str | None]]:
    """(canonical URLs, rel=canonical URLs) of pages under URL rules (`urls.apply_url_rules`): what
    clustering and the representatives see. The store keeps the URLs as ingested; the local engine and
    the Spark path both rewrite them with this."""
    canonical = [apply_url_rules(u, rules) for u in urls]
    rel = [None if not isinstance(u, str) else apply_url_rules(u, rules) for u in rel_canonicals]
    return canonical, rel


def _one_chunk_a_column(table: pa.Table) -> pa.Table:
    """`table` with each column in one chunk, a column at a time: a take across the read's batches (~32 at
    1M pages) resolves each index chunk by chunk, and every threshold move takes the representatives' URLs
    for every page (0.15-0.35 s at 1M pages against 0.03 s over one chunk)."""
    for i, name in enumerate(table.column_names):
        if table.column(i).num_chunks > 1:
            table = table.set_column(i, name, table.column(i).combine_chunks())
    return table


def load_fingerprints(
    store: Store,
    config: Config,
    *,
    progress: Progress = no_progress,
    jobs: int | None = None,
    source_ids: Sequence[int] | None = None,
    lean: bool = False,
) -> Fingerprints:
    """The fingerprints of the database's pages at `config`'s setting (computed first where missing).

    `lean` (every page, no `source_ids`): `pages` holds only page_id, degenerate and unit_id (and, under URL
    rules, url and canonical_url, which `rules.fetch_savings` reads), and of the other string columns only
    those the arrays are coded from are read: what the report needs (`report_analysis`), in a fraction of
    the memory of every page's URLs and keys in pandas.

    With `source_ids`, those of the sources' pages only: their units, renumbered 0..n-1 in unit id order,
    and the pairs of two of them, so the read grows with those sources, not with the database. Clustering
    them (`analyze`) gives the clusters of the full load restricted to those sources, as
    `subset_fingerprints` does (units joined only through pages of other sources are not joined).
    """
    fset = ensure_fingerprints(store, config, progress=progress, jobs=jobs)
    key = config.fingerprint_key
    simhash = minhash = signature_units = read_signatures = stored_ids = None
    lean = lean and source_ids is None
    coded = _CODED_GROUPS[:-1] + ((*_CODED_GROUPS[-1], "url") if config.url_rules else _CODED_GROUPS[-1],)
    groups: Iterator[pa.Table]
    if lean:  # a group of columns at a time, each coded before the next is read
        groups = store.page_column_groups(
            config.norm_key, coded, min_words=config.min_words, fingerprint_key=key
        )
        table = next(groups)
    else:
        table = store.page_columns(
            config.norm_key, min_words=config.min_words, source_ids=source_ids, fingerprint_key=key
        )
        groups = (table.select(list(group)) for group in coded)
    pairs = store.pair_arrays(key, source_ids=source_ids)
    unit = np.array(table.column("unit_id").to_numpy(), dtype=np.int64)
    if source_ids is None:
        columns = store.unit_columns(key, with_simhash=config.method == "simhash")
        n_shingles, simhash = columns["n_shingles"], columns.get("simhash")
        if config.method == "minhash":
            signature_units = np.union1d(pairs["a"], pairs["b"]).astype(np.int64)
            read_signatures = functools.partial(_paired_signatures, store, config, signature_units)
    else:
        units = store.units(key, with_signatures=config.method == "minhash", source_ids=source_ids)
        stored_ids = units["unit_id"].to_numpy(dtype=np.int64)
        for end in ("a", "b"):
            pairs[end] = np.searchsorted(stored_ids, pairs[end]).astype(pairs[end].dtype)
        unit = np.where(unit >= 0, np.searchsorted(stored_ids, unit), -1)
        n_shingles = units["n_shingles"].to_numpy(dtype=np.int64)
        if config.method == "simhash":
            simhash = units["simhash"].to_numpy(dtype=np.uint64)
        else:
            minhash = signatures(units["minhash"], config.num_perm)
        del units
    n_units = len(n_shingles)
    unit[np.asarray(pc.is_valid(table.column("degenerate")).to_numpy(zero_copy_only=False), dtype=bool)] = -1
    arrays, hosts, urls = _page_arrays(table.column("page_id"), unit, groups, config.url_rules)
    del groups
    # the frame is made after the codes, from the columns as read: pandas copies each string column once
    # (put in one chunk a column at a time; a lean frame holds page_id, degenerate and unit_id, and under URL
    # rules url and canonical_url, which `rules.fetch_savings` reads)
    if lean:
        frame = table.select(["page_id", "degenerate"])
        if config.url_rules:
            frame = frame.append_column("url", urls.column("url"))
            frame = frame.append_column("canonical_url", urls.column("canonical_url"))
    else:
        frame = table.drop_columns(["unit_id"])
        if config.url_rules:
            for name in ("canonical_url", "rel_canonical"):
                frame = frame.set_column(frame.schema.get_field_index(name), name, urls.column(name))
    del table, urls
    pages = _one_chunk_a_column(frame).to_pandas()
    del frame
    pages["unit_id"] = unit
    fixed_counts = _fixed_counts(arrays, n_units)[0]
    return Fingerprints(
        config,
        pages,
        n_units,
        pairs,
        simhash,
        minhash,
        fset.stats,
        arrays,
        hosts,
        fixed_counts,
        n_shingles,
        stored_ids,
        signature_units=signature_units,
        read_signatures=read_signatures,
    )


def _paired_signatures(store: Store, config: Config, unit_ids: np.ndarray) -> np.ndarray:
    """The MinHash signatures of `unit_ids` (ascending: the units in a stored pair) in that order, read as
    Arrow bytes a batch at a time, each placed into the one matrix (no Python object per unit, no sorted
    copy of them)."""
    out = np.empty((len(unit_ids), config.num_perm), dtype=np.uint32)
    placed = np.zeros(len(unit_ids), dtype=bool)
    for units, batch in store.unit_signature_batches_of(config.fingerprint_key, unit_ids):
        rows = np.searchsorted(unit_ids, units)
        out[rows] = signature_matrix(config.num_perm, batch)
        placed[rows] = True
    if not placed.all():
        raise NeardupError(
            f"the fingerprint set {config.fingerprint_key} no longer has every unit it had when it was read "
            "(a source removed or the set computed again meanwhile): reload the page"
        )
    return out


def _fixed_counts(arrays: dict[str, np.ndarray], n_units: int) -> tuple[dict[str, int], np.ndarray]:
    """`Fingerprints.fixed_counts` of the pages' arrays, and which of the `n_units` units their content
    pages hold (counted with bincount: the codes are dense, a hash of them costs more)."""
    content = arrays["unit"] >= 0
    has_unit = np.bincount(arrays["unit"][content], minlength=n_units) > 0
    md5s = np.count_nonzero(np.bincount(arrays["md5"][content]))
    return {"md5": int(md5s), "units": int(np.count_nonzero(has_unit))}, has_unit


def subset_fingerprints(fp: Fingerprints, keep: np.ndarray, *, with_pages: bool = True) -> Fingerprints:
    """The fingerprints of the pages `keep` selects (a boolean mask over `fp.pages`, or their rows in
    ascending order), e.g. of one source, as if they were all there is: the units are shared, the pairs
    are those of two units of the kept content pages (no pair through a text only other pages have).
    Without `with_pages` its `pages` frame is empty: enough to cluster (`cluster_at_threshold` reads the
    arrays alone), where slicing a crawl's frame costs more than clustering a source of it."""
    arrays = {k: v[keep] for k, v in fp.arrays.items()}
    fixed_counts, is_kept = _fixed_counts(arrays, fp.n_units)
    on = is_kept[fp.pairs["a"]] & is_kept[fp.pairs["b"]]
    pairs = fp.pairs if on.all() else {k: v[on] for k, v in fp.pairs.items()}
    return dataclasses.replace(
        fp,
        pages=fp.pages.iloc[keep].reset_index(drop=True) if with_pages else fp.pages.iloc[:0],
        arrays=arrays,
        fixed_counts=fixed_counts,
        pairs=pairs,
        pair_index=None,
        representative_ranks={},
    )


def pair_scores(fp: Fingerprints, config: Config) -> np.ndarray:
    """The similarity that `config.threshold` applies to, per stored pair (bits for simhash)."""
    return scores_of_pairs(fp.pairs, config)


def scores_of_pairs(pairs: Mapping[str, np.ndarray], config: Config) -> np.ndarray:
    """`pair_scores` of pair arrays as `Store.pair_arrays` reads them."""
    if config.method == "simhash":
        return pairs["hamming_bits"].astype(np.int64)
    return pairs["jaccard" if config.similarity == "jaccard" else "containment"].astype(np.float64)


def pairs_at_threshold(fp: Fingerprints, config: Config) -> np.ndarray:
    """Boolean mask over stored pairs: which are duplicates at `config.threshold`."""
    return duplicate_pairs(fp.pairs, config)


def duplicate_pairs(pairs: Mapping[str, np.ndarray], config: Config) -> np.ndarray:
    """`pairs_at_threshold` of pair arrays as `Store.pair_arrays` reads them."""
    scores = scores_of_pairs(pairs, config)
    return scores <= config.threshold if config.method == "simhash" else scores >= config.threshold


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ReportNumbers(Mapping[str, int | float]):
    """The report's numbers at one setting (all counts are pages, except the clusters and pairs).

    Content pages split into exact duplicates (same words as an earlier page; byte-identical ones
    included), near duplicates (a distinct text in a cluster with another) and unique pages (one per
    cluster): redundant = exact + near = content - unique, and `redundant_pct` is a share of all pages.
    Also a read-only mapping by name (`numbers["redundant_pct"]`), equal to a dict of the same numbers.
    """

    total_pages: int
    content_pages: int
    degenerate_pages: int
    byte_identical_duplicates: int
    exact_duplicates: int
    near_duplicates: int
    unique_pages: int
    duplicate_clusters: int
    largest_cluster: int
    redundant_pages: int
    redundant_pct: float
    pairs_at_threshold: int

    def as_dict(self) -> dict[str, int | float]:
        """The numbers by name, in the report's order (the `numbers` of `report --json`)."""
        return dataclasses.asdict(self)

    def __getitem__(self, name: str) -> int | float:
        if name not in _REPORT_NUMBERS:
            raise KeyError(name)
        value: int | float = getattr(self, name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(_REPORT_NUMBERS)

    def __len__(self) -> int:
        return len(_REPORT_NUMBERS)


_REPORT_NUMBERS = tuple(f.name for f in dataclasses.fields(ReportNumbers))


def report_numbers(
    *,
    total_pages: int,
    content_pages: int,
    distinct_md5s: int,
    distinct_texts: int,
    clusters: int,
    duplicate_clusters: int,
    largest_cluster: int,
    pairs_at_threshold: int,
) -> ReportNumbers:
    """The report numbers from the counts a clustering yields (`analyze` and the Spark path count them
    their own way): distinct MD5s and distinct texts among content pages, clusters of content pages
    (singletons included), clusters of two or more pages, the largest cluster's pages, and the pairs
    that the threshold keeps."""
    redundant = content_pages - clusters
    return ReportNumbers(
        total_pages=total_pages,
        content_pages=content_pages,
        degenerate_pages=total_pages - content_pages,
        byte_identical_duplicates=content_pages - distinct_md5s,
        exact_duplicates=content_pages - distinct_texts,
        near_duplicates=distinct_texts - clusters,
        unique_pages=clusters,
        duplicate_clusters=duplicate_clusters,
        largest_cluster=largest_cluster,
        redundant_pages=redundant,
        redundant_pct=round(100.0 * redundant / total_pages, 2) if total_pages else 0.0,
        pairs_at_threshold=pairs_at_threshold,
    )


@dataclass(slots=True)
class Analysis:
    config: Config
    pages: pd.DataFrame
    numbers: ReportNumbers
    hosts: pd.DataFrame
    cluster_sizes: pd.Series
    warnings: list[str]
    # each page's representative as its row in `pages` (-1 for a degenerate page), as the clustering gave
    # it: spares finding the representatives' ids again
    representative_rows: np.ndarray


def similarity_to(
    fp: Fingerprints, units_a: np.ndarray, units_b: np.ndarray, config: Config
) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, where it comes from) of unit pairs, in the threshold's unit: Hamming bits for simhash;
    for minhash the Jaccard or the containment, as `config.similarity` says.

    Sources: "same text" (0 bits / 1.0); "stored pair", the pair's stored score, which the threshold
    applied to (exact for MinHash with verify: exact); "fingerprints", the Hamming distance of the two
    SimHash fingerprints; "minhash estimate", from the signatures (and, for containment, the shingle
    counts and the size guard) for units that are not a stored pair (joined through other units).
    """
    sim, source = _similarities(fp, units_a, units_b, config)
    return sim, _SOURCES[source]


_SOURCES = np.array(["same text", "stored pair", "fingerprints", "minhash estimate"], dtype=object)


def _similarities(
    fp: Fingerprints, units_a: np.ndarray, units_b: np.ndarray, config: Config
) -> tuple[np.ndarray, np.ndarray]:
    """`similarity_to` with the source as an index into `_SOURCES`: only the pairs of two texts are looked
    up (most pages of a crawl are their cluster's representative or its exact copy)."""
    ua, ub = np.asarray(units_a, dtype=np.int64), np.asarray(units_b, dtype=np.int64)
    sim = np.full(len(ua), 0.0 if config.method == "simhash" else 1.0)
    source = np.zeros(len(ua), dtype=np.int64)
    other = np.flatnonzero(ua != ub)
    if not len(other):
        return sim, source
    oa, ob = ua[other], ub[other]
    lo, hi = np.minimum(oa, ob), np.maximum(oa, ob)
    if fp.pair_index is None:
        stored = fp.pairs["a"].astype(np.int64) * fp.n_units + fp.pairs["b"].astype(np.int64)
        order = np.argsort(stored, kind="stable")
        fp.pair_index = (stored[order], order)
    stored_sorted, order = fp.pair_index
    want = lo * fp.n_units + hi
    found = np.zeros(len(want), dtype=bool)
    if len(stored_sorted):
        pos = np.minimum(np.searchsorted(stored_sorted, want), len(order) - 1)
        found = stored_sorted[pos] == want
        sim[other[found]] = scores_of_pairs(fp.pairs, config)[order[pos[found]]]
        source[other[found]] = 1
    rest = other[~found]
    if len(rest):
        if config.method == "simhash":
            assert fp.simhash is not None
            sim[rest] = hamming_many(fp.simhash[ua[rest]], fp.simhash[ub[rest]])
            source[rest] = 2
        else:
            est = estimate_jaccard(fp.signatures(ua[rest]), fp.signatures(ub[rest]))
            if config.similarity == "containment":
                na, nb = fp.n_shingles[ua[rest]], fp.n_shingles[ub[rest]]
                inter = est * (na + nb) / (1.0 + est)  # |A n B| from the Jaccard estimate and the set sizes
                est = exact_scores(inter, na, nb, config.min_size_ratio, config.min_contained_shingles)[1]
            sim[rest] = est
            source[rest] = 3
    return sim, source


_WHY_STRINGS = pd.array(WHY, dtype="str")


def big_cluster_advice(config: Config) -> str:
    """What to try about a suspiciously big cluster: only settings not already in force."""
    tried = []
    if config.normalize != "main":
        tried.append("normalize: main")
    tightest = 0 if config.method == "simhash" else 1
    if config.threshold != tightest:
        tried.append("a tighter threshold")
    return "check it, or try " + " or ".join(tried) if tried else "check it"


@dataclass(frozen=True, slots=True)
class ClusterNumbering:
    """Clusters of content pages numbered 1..K by size (largest first), then by first page id."""

    cluster: np.ndarray  # per page: its cluster id; 0 for a degenerate page
    size: np.ndarray  # per page: the pages of its cluster; 0 for a degenerate page
    sizes: np.ndarray  # per cluster (by id - 1): its pages

    @property
    def n_clusters(self) -> int:
        return len(self.sizes)


def number_clusters(fp: Fingerprints, keep: np.ndarray) -> ClusterNumbering:
    """The clusters of the pairs where `keep` (a mask over `fp.pairs`): connected components of units;
    pages inherit their unit's, so exact duplicates are always together."""
    unit, page_id = fp.arrays["unit"], fp.arrays["page_id"]
    idx = np.flatnonzero(unit >= 0)
    unit_comp = components(fp.n_units, fp.pairs["a"][keep], fp.pairs["b"][keep])
    comp_of = unit_comp[unit[idx]]
    ids = page_id[idx]
    counts_all = np.bincount(comp_of, minlength=int(unit_comp.max(initial=-1)) + 1)
    count = counts_all[comp_of]
    # Components of two or more pages first, by size, then by first page id: a sort of those only (a
    # crawl's clusters are mostly single pages).
    grouped = np.flatnonzero(count > 1)
    first_page = np.full(len(counts_all), np.iinfo(np.int64).max)
    np.minimum.at(first_page, comp_of[grouped], ids[grouped])
    multi = np.flatnonzero(counts_all > 1)
    multi = multi[np.lexsort((first_page[multi], -counts_all[multi]))]
    rank_of = np.zeros(len(counts_all), dtype=np.int64)
    rank_of[multi] = np.arange(1, len(multi) + 1)
    # Then the single pages, by page id (the store's order, where the pages are in it).
    single = np.flatnonzero(count == 1)
    if len(single) > 1 and not bool((ids[single][1:] > ids[single][:-1]).all()):
        single = single[np.argsort(ids[single], kind="stable")]
    rank = np.empty(len(idx), dtype=np.int64)
    rank[grouped] = rank_of[comp_of[grouped]]
    rank[single] = np.arange(len(multi) + 1, len(multi) + len(single) + 1)
    cluster = np.zeros(len(unit), dtype=np.int64)
    cluster[idx] = rank
    size = np.zeros(len(unit), dtype=np.int64)
    size[idx] = count
    sizes = np.ones(len(multi) + len(single), dtype=np.int64)
    sizes[: len(multi)] = counts_all[multi]
    return ClusterNumbering(cluster, size, sizes)


def choose_representatives(
    fp: Fingerprints, numbering: ClusterNumbering, config: Config
) -> tuple[np.ndarray, np.ndarray]:
    """(row of each page's representative, -1 for a degenerate page; why it represents its cluster), by
    `config.representative` (`clusters.cluster_representatives`, the choice of `representative_rows`)."""
    arr, cluster, size = fp.arrays, numbering.cluster, numbering.size
    n_total = len(cluster)
    content = arr["unit"] >= 0
    # A single page is its own representative; the rule only has to run over clusters of two or more.
    rep = np.where(content, np.arange(n_total), -1)
    why_page = np.where(content, 2, -1)  # index into WHY ("shortest URL": a single page), -1 for none
    multi = np.flatnonzero(content & (size > 1))
    rule = tuple(config.representative)
    ranks = fp.representative_ranks.get(rule)
    if ranks is None:
        ranks = fp.representative_ranks[rule] = _grouped_page_ranks(fp, rule)
    rows, why = cluster_representatives(
        cluster[multi],
        numbering.n_clusters + 1,
        arr["url_id"][multi],
        arr["rel_id"][multi],
        arr["fetched_ns"][multi],
        RepresentativeRanks(rule, ranks.before[multi], ranks.after[multi]),
    )
    has_rep = rows >= 0
    rep_of_cluster = np.full(len(rows), -1, dtype=np.int64)  # cluster id -> row of its representative
    rep_of_cluster[has_rep] = multi[rows[has_rep]]
    rep[multi] = rep_of_cluster[cluster[multi]]
    why_page[multi] = why[cluster[multi]]
    return rep, why_page


def _grouped_page_ranks(fp: Fingerprints, rule: tuple[str, ...]) -> RepresentativeRanks:
    """`clusters.representative_ranks` of the pages that some threshold puts in a cluster of two or more
    (their text has two or more pages, or is in a stored pair); 0 for the rest, which only ever represent
    themselves. Those are a fraction of a crawl's pages, and the ranks are the one sort of them."""
    arr = fp.arrays
    unit = arr["unit"]
    content = unit >= 0
    may_group = np.zeros(fp.n_units, dtype=bool)
    may_group[fp.pairs["a"]] = True
    may_group[fp.pairs["b"]] = True
    may_group |= np.bincount(unit[content], minlength=fp.n_units) > 1
    rows = np.flatnonzero(content & may_group[np.where(content, unit, 0)])
    part = representative_ranks(arr["fetched_ns"][rows], arr["url_len"][rows], arr["page_id"][rows], rule)
    before, after = np.zeros(len(unit), dtype=np.int64), np.zeros(len(unit), dtype=np.int64)
    before[rows], after[rows] = part.before, part.after
    return RepresentativeRanks(rule, before, after)


def host_rollup(fp: Fingerprints, is_representative: np.ndarray) -> pd.DataFrame:
    """Content pages and redundant ones (not their cluster's representative) per host, most redundant first."""
    content = fp.arrays["unit"] >= 0
    host = fp.arrays["host"][content]
    host_pages = np.bincount(host, minlength=len(fp.hosts))
    redundant = ~is_representative[content]
    host_redundant = np.bincount(host, weights=redundant, minlength=len(fp.hosts)).astype(np.int64)
    hosts = pd.DataFrame({"host": fp.hosts, "pages": host_pages, "redundant": host_redundant})
    hosts = hosts[hosts["pages"] > 0]
    hosts["redundant_pct"] = (100.0 * hosts["redundant"] / hosts["pages"]).round(1)
    return hosts.sort_values(["redundant", "pages"], ascending=False, kind="stable").reset_index(drop=True)


def analysis_warnings(fp: Fingerprints, numbers: ReportNumbers, config: Config) -> list[str]:
    """The report's warnings: the candidate search's (capped buckets, where they are a notable share of
    the index), and a cluster so large that boilerplate may be being fingerprinted, with advice only of
    settings not already in force."""
    notable_caps = fp.stats.capped_share(fp.n_units) >= CAPPED_WARN_SHARE
    warnings = [w for w in fp.stats.warnings if notable_caps or not w.endswith(CAPPED_NOTE)]
    largest, n_content = numbers.largest_cluster, numbers.content_pages
    if n_content and largest >= 20 and largest > 0.01 * n_content:
        warnings.append(
            f"the largest cluster holds {largest} pages ({100 * largest / n_content:.1f}% of content pages): "
            f"boilerplate may be being fingerprinted; {big_cluster_advice(config)}"
        )
    return warnings


@dataclass(frozen=True, slots=True, eq=False)
class Clustering:
    """What `analyze` computes at a threshold, short of the pages frame: per page its cluster numbering,
    representative row (-1 for a degenerate page) and why it represents (index into `clusters.WHY`, -1 for
    none); the numbers, hosts, cluster sizes and warnings (all the app's Home page draws). A few numbers a
    page where `Analysis.pages` holds the crawl's columns again: the app keeps this of the thresholds tried
    and the frame (`analysis_of`, with each page's similarity to its representative) of the one in use."""

    config: Config
    numbering: ClusterNumbering
    rep: np.ndarray
    why: np.ndarray
    numbers: ReportNumbers
    hosts: pd.DataFrame
    cluster_sizes: pd.Series
    warnings: list[str]


def cluster_at_threshold(fp: Fingerprints, config: Config) -> Clustering:
    """Cluster at `config.threshold` (same fingerprint key as `fp`) and compute the report numbers (see
    `analyze`)."""
    if config.fingerprint_key != fp.config.fingerprint_key:
        raise ValueError("analyze() needs fingerprints computed for the same setting")
    unit = fp.arrays["unit"]
    keep = pairs_at_threshold(fp, config)
    numbering = number_clusters(fp, keep)
    rep, why_page = choose_representatives(fp, numbering, config)
    is_rep = rep == np.arange(len(unit))
    sizes = numbering.sizes
    dup_sizes = np.sort(sizes[sizes > 1])[::-1]
    numbers = report_numbers(
        total_pages=len(unit),
        content_pages=int(np.count_nonzero(unit >= 0)),
        distinct_md5s=fp.fixed_counts["md5"],
        distinct_texts=fp.fixed_counts["units"],
        clusters=numbering.n_clusters,
        duplicate_clusters=len(dup_sizes),
        largest_cluster=int(sizes.max()) if numbering.n_clusters else 0,
        pairs_at_threshold=int(keep.sum()),
    )
    return Clustering(
        config,
        numbering,
        rep,
        why_page.astype(np.int8),
        numbers,
        host_rollup(fp, is_rep),
        pd.Series(dup_sizes, name="size"),
        analysis_warnings(fp, numbers, config),
    )


def similarity_to_representatives(fp: Fingerprints, clustering: Clustering) -> np.ndarray:
    """Each page's similarity to its cluster's representative in the threshold's unit (`similarity_to`),
    NaN for a degenerate page."""
    unit, rep = fp.arrays["unit"], clustering.rep
    idx = np.flatnonzero(unit >= 0)
    sim = np.full(len(unit), np.nan)
    sim[idx] = _similarities(fp, unit[idx], unit[rep[idx]], clustering.config)[0]
    return sim


def _cluster_columns(fp: Fingerprints, clustering: Clustering) -> dict[str, Any]:
    """The pages' cluster_id, cluster_size, representative_id (null for a degenerate page) and
    is_representative, from the clustering's arrays (shared, not copied)."""
    unit, page_id = fp.arrays["unit"], fp.arrays["page_id"]
    content = unit >= 0
    rep, numbering = clustering.rep, clustering.numbering
    na_int = ~content
    return {
        "cluster_id": pd.arrays.IntegerArray(numbering.cluster, na_int),
        "cluster_size": pd.arrays.IntegerArray(numbering.size, na_int),
        "representative_id": pd.arrays.IntegerArray(np.where(content, page_id[rep], 0), na_int),
        "is_representative": rep == np.arange(len(unit)),
    }


def analysis_of(fp: Fingerprints, clustering: Clustering) -> Analysis:
    """The `Analysis` of a clustering of `fp`: its pages frame, `fp.pages` with the cluster columns (the
    columns of `fp.pages` and the clustering's arrays are shared, not copied) and the similarity to the
    representative."""
    columns = _cluster_columns(fp, clustering)
    is_representative = columns.pop("is_representative")
    # Taken from the string columns, not built from Python objects: a threshold move on a large crawl
    # would spend most of its time converting a million strings.
    pages = fp.pages.assign(
        **columns,
        representative_url=fp.pages["canonical_url"].array.take(
            np.where(fp.arrays["unit"] >= 0, clustering.rep, -1), allow_fill=True
        ),
        why=_WHY_STRINGS.take(clustering.why.astype(np.intp), allow_fill=True),
        is_representative=is_representative,
        similarity_to_representative=similarity_to_representatives(fp, clustering),
    )
    c = clustering
    return Analysis(c.config, pages, c.numbers, c.hosts, c.cluster_sizes, c.warnings, c.rep)


def report_analysis(fp: Fingerprints, clustering: Clustering) -> Analysis:
    """The `Analysis` of a clustering of `fp` with only what the report and `categories.suggest_copies`
    read of its pages: `fp.pages`' columns (a `lean` load's few) and the cluster columns, none of the
    strings `analysis_of` adds."""
    pages = fp.pages.assign(**_cluster_columns(fp, clustering))
    c = clustering
    return Analysis(c.config, pages, c.numbers, c.hosts, c.cluster_sizes, c.warnings, c.rep)


def analyze(fp: Fingerprints, config: Config) -> Analysis:
    """Cluster at `config.threshold` (same fingerprint key as `fp`) and compute the report numbers.

    Clusters are the connected components of distinct texts (units) joined by pairs at the threshold;
    pages inherit their text's cluster, so exact duplicates are always together. Cluster ids run
    1..K by size (largest first), then by first page id; degenerate pages get none.
    """
    return analysis_of(fp, cluster_at_threshold(fp, config))
