"""Cached access to the store and the engine for the app (st.cache_resource; results are read-only)."""

from __future__ import annotations

import functools
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .. import audit, compare, engine, rules
from ..analysis import (
    Analysis,
    Clustering,
    Fingerprints,
    analysis_of,
    cluster_at_threshold,
    load_fingerprints,
)
from ..categories import page_categories
from ..config import Config
from ..drilldown import ClusterTable, cluster_table
from ..errors import NeardupError
from ..estimate import Estimate, SampleCounts, comparable, estimate_numbers, sample_counts
from ..ingest import file_sha256
from ..labels import bucket_tallies
from ..pairkey import key_of
from ..store import Store
from ..store.sources import SourceRow
from .background import FingerprintJobs, JobState
from .memory import release_freed

# A page waits this long for a CLI write (e.g. a report computing fingerprints) before it says who holds
# the file; a reload then retries.
APP_LOCK_WAIT_S = 3.0
# A label write waits this long for another process's lock before the label waits in the tab instead.
LABEL_LOCK_WAIT_S = 0.5
SAMPLE = engine.SAMPLE_CRAWL


@st.cache_resource(show_spinner=False)
def get_store(path: str) -> Store:
    """The app's store holds the file only while a query or a write runs (read-only for reads), so the
    CLI can ingest into it or report from it while the app is open."""
    return Store(path, on_demand=True, lock_wait_s=APP_LOCK_WAIT_S)


def _eta(frac: float, elapsed_s: float) -> str:
    return f", about {elapsed_s * (1 - frac) / frac:,.0f} s left" if frac > 0.01 and elapsed_s > 0.5 else ""


def progress_text(
    stage: str, done: int, total: int, *, elapsed_s: float, pages: int, stage_elapsed_s: float = 0.0
) -> tuple[float, str]:
    """(fraction, label) for a progress bar. Stage "read" counts bytes of a known total: a percentage and an
    ETA from the rate so far; other stages count pages or units, with an ETA from the rate since the stage
    began (`stage_elapsed_s`; none without it)."""
    if stage == "read" and total:
        frac = min(done / total, 1.0)
        return frac, f"{frac:.0%} of {total / 1e6:,.1f} MB read, {pages:,} records{_eta(frac, elapsed_s)}"
    frac = min(done / total, 1.0) if total else 0.0
    return (
        frac,
        f"{stage}: {done:,} / {total:,}{_eta(frac, stage_elapsed_s)}" if total else f"{stage}: {done:,}",
    )


def progress_bar(text: str) -> tuple[engine.Progress, DeltaGenerator]:
    """A Streamlit progress bar and the engine callback that drives it."""
    bar = st.progress(0.0, text=text)
    t0 = time.perf_counter()
    records = 0
    by_bytes = False
    current, stage_t0 = "", t0

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal records, by_bytes, current, stage_t0
        by_bytes = by_bytes or stage == "read"
        if stage == "ingest":
            records = done
            if by_bytes:  # the bytes read say more than a running count: it goes into their label
                return
        now = time.perf_counter()
        if stage != current:
            current, stage_t0 = stage, now
        frac, label = progress_text(
            stage, done, total, elapsed_s=now - t0, pages=records, stage_elapsed_s=now - stage_t0
        )
        bar.progress(frac, text=f"{text} ({label})")

    return progress, bar


@st.cache_resource(show_spinner=False)
def get_label_store(path: str) -> Store:
    """The store the Audit page writes labels and prefetches pairs through: the same file and connection as
    `get_store`'s, but a write waits only LABEL_LOCK_WAIT_S for another process (the label then waits in
    the tab) and the file is closed as soon as it is done, so an ingest started while an analyst labels
    steadily finds it free between two labels instead of waiting out its own lock wait."""
    return Store(path, on_demand=True, lock_wait_s=LABEL_LOCK_WAIT_S, linger_s=0.0)


_SAMPLE_TRIED: set[str] = (
    set()
)  # databases this process offered the sample to (never twice: it may be removed)


def load_sample_if_empty(store: Store) -> bool:
    """Started with no database named (`neardup app` / `make run` set NEARDUP_LOAD_SAMPLE): an empty database
    gets the bundled sample once, so there is something to see. A named database never does."""
    if (
        os.environ.get("NEARDUP_LOAD_SAMPLE") != "1"
        or store.path in _SAMPLE_TRIED
        or not SAMPLE.exists()
        or store.count_pages() > 0
    ):
        return False
    _SAMPLE_TRIED.add(store.path)
    progress, bar = progress_bar("First start: loading the bundled sample crawl")
    engine.ingest_file(store, SAMPLE, Config(), progress=progress)
    bar.empty()
    return True


@functools.cache
def _sample_sha256() -> str | None:
    return file_sha256(SAMPLE) if SAMPLE.exists() else None


def sample_source(store: Store) -> SourceRow | None:
    """The bundled sample's source row if its pages are in this database."""
    sha = _sample_sha256()
    return store.source_by_hash(sha) if sha else None


# Entries of the caches below: each holds frames of the crawl's size, and a setting tried is not kept for
# good (a million-page crawl's fingerprints take over a gigabyte). One fingerprint set: Audit's "SimHash vs
# MinHash disagree" queue reads the other method's too, but only for its candidate pairs, which are kept
# (PER_SETTING_ENTRIES), so the setting's own set is read again once, not on every run.
FINGERPRINT_ENTRIES = 1
# Clusterings (a few numbers a page: tens of MB at 1M pages): a threshold moved back and forth between two
# values is answered from here; a third is clustered again (0.2-0.3 CPU-s at 1M pages, bench/RESULTS.md).
PER_THRESHOLD_ENTRIES = 2
PER_SETTING_ENTRIES = 2
# What the Clusters and Export pages draw from beside the pages frame (the pages' categories, the clusters
# table: ~80 MB at 1M pages): the shown threshold's only, as the frame is (a move back builds them again).
PAGE_FRAME_ENTRIES = 1


# The computations of fingerprint sets on the app's background thread (one at a time; see ui.background).
FINGERPRINT_JOBS = FingerprintJobs()
# How often a page waiting for a background computation redraws its progress bar.
JOB_POLL_S = 0.5


def session_owner() -> str:
    """The session this script run serves (what a background job is wanted by); "" outside a run."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else ""


def want_computed(store: Store, path: str, config: Config) -> None:
    """This session wants `config`'s fingerprint set: computed on the background thread (its earlier want
    given up; see `FingerprintJobs.want`)."""

    def run(progress: engine.Progress) -> None:
        try:
            engine.ensure_fingerprints(store, config, progress=progress)
        finally:  # the computation's arrays (candidates, verification) are freed: give their pages back
            release_freed()

    FINGERPRINT_JOBS.want(
        session_owner(),
        path,
        config,
        run=run,
        plan=lambda: engine.fingerprint_plan(store, config),
    )


def is_computed(store: Store, path: str, config: Config) -> bool:
    """Whether `config`'s fingerprint set is in memory or stored for the pages there are."""
    latest = ANALYSES.latest()
    if latest is not None and latest[0].config.fingerprint_key == config.fingerprint_key:
        return True
    return engine.current_fingerprints(store, config) is not None


def wait_for_job(store: Store, path: str, config: Config) -> None:
    """Have `config`'s set computed in the background and wait for it under one progress bar (a page that
    needs it: every page but Home, which shows an estimate meanwhile)."""
    want_computed(store, path, config)
    bar = st.progress(0.0, text="Computing the fingerprints of this setting (once)")
    while True:
        job = FINGERPRINT_JOBS.wait(path, config, JOB_POLL_S)
        if job is None:  # cancelled by this session's newer want: the run that made it is over
            st.stop()
        bar.progress(min(job.share, 1.0), text=job.label())
        if job.state is JobState.FAILED:
            FINGERPRINT_JOBS.forget(path, config)
            raise NeardupError(job.label())
        if job.state is JobState.DONE:
            break
    bar.empty()


@st.cache_resource(
    show_spinner="Reading the fingerprints and pages of this setting", max_entries=FINGERPRINT_ENTRIES
)
def get_fingerprints(_store: Store, path: str, fingerprint_key: str, _config: Config) -> Fingerprints:
    """Fingerprints for a setting: computed once (in the background, with a progress bar), then cached in
    DuckDB and here."""
    if engine.current_fingerprints(_store, _config) is None:
        wait_for_job(_store, path, _config)
    fp = load_fingerprints(_store, _config)
    release_freed()  # the read's Arrow tables and temporaries are freed
    return fp


class AnalysisMemo:
    """The latest clusterings (`max_entries`), of the latest `max_fingerprints` fingerprint sets analysed
    only: an analysis' pages share the columns of its fingerprints' pages, so one kept after its
    fingerprints left `get_fingerprints` would keep a crawl-sized frame alive (a cache of its own, keyed on
    the setting alone, would hold one per setting tried). A clustering is of the fingerprints it was made
    from: new ones (another read of the store) are clustered again.

    Of the thresholds tried, each keeps its `analysis.Clustering` (a few numbers a page: all Home draws);
    the pages frame (`Analysis.pages`, with its copy of the representatives' URLs and the similarities to
    them) only the analysis asked for last (`get`): a threshold moved back builds its frame again from the
    clustering, a take of the URLs, not a clustering."""

    def __init__(self, max_entries: int, max_fingerprints: int) -> None:
        self.max_entries, self.max_fingerprints = max_entries, max_fingerprints
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, Config], tuple[Fingerprints, Clustering]] = OrderedDict()
        self._latest: tuple[str, Config] | None = None  # the key of the clustering used last
        # the analysis asked for last (`get`), with the clustering it was made from
        self._shown: tuple[Clustering, Analysis] | None = None

    def clustering(self, fp: Fingerprints, path: str, config: Config) -> Clustering:
        """The clustering of `fp` at `config` (`analysis.cluster_at_threshold`), made once."""
        key = (path, config)
        found = self._found(fp, key, touch=True)
        if found is not None:
            return found
        with st.spinner("Clustering at this setting"):
            clustering = cluster_at_threshold(fp, config)
        with self._lock:
            self._entries[key] = (fp, clustering)
            self._entries.move_to_end(key)
            self._latest = key
            kept: list[Fingerprints] = []  # the latest fingerprint sets, newest first
            for entry_fp, _ in reversed(self._entries.values()):
                if len(kept) < self.max_fingerprints and not any(entry_fp is k for k in kept):
                    kept.append(entry_fp)
            dropped = [k for k, (f, _) in self._entries.items() if not any(f is x for x in kept)]
            for k in dropped:
                del self._entries[k]
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            if self._shown is not None and not any(c is self._shown[0] for _, c in self._entries.values()):
                self._shown = None
        if dropped:  # the last analyses of a fingerprint set the app let go: the set is freed with them
            release_freed()
        return clustering

    def kept(self, fp: Fingerprints, path: str, config: Config) -> Clustering | None:
        """The clustering of `fp` at `config` if one is kept (None: not made, or let go)."""
        return self._found(fp, (path, config), touch=False)

    def _found(self, fp: Fingerprints, key: tuple[str, Config], *, touch: bool) -> Clustering | None:
        """The clustering kept under `key` if it is of `fp` (None: not made, or let go); `touch` makes it the
        latest used."""
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0] is not fp:
                return None
            if touch:
                self._entries.move_to_end(key)
                self._latest = key
            return found[1]

    def get(self, fp: Fingerprints, path: str, config: Config) -> Analysis:
        """The analysis (pages frame and all) of `fp` at `config`."""
        clustering = self.clustering(fp, path, config)
        with self._lock:
            if self._shown is not None and self._shown[0] is clustering:
                return self._shown[1]
            self._shown = None  # the frame of another threshold is let go before this one is built
        analysis = analysis_of(fp, clustering)
        with self._lock:
            self._shown = (clustering, analysis)
        return analysis

    def let_go_of_frame(self) -> None:
        """Drop the pages frame of the analysis asked for last (its clustering stays)."""
        with self._lock:
            self._shown = None

    def latest(self) -> tuple[Fingerprints, Clustering] | None:
        """The clustering used last and its fingerprints (None: none kept)."""
        with self._lock:
            if self._latest is None or self._latest not in self._entries:
                return None
            return self._entries[self._latest]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._latest = None
            self._shown = None


ANALYSES = AnalysisMemo(PER_THRESHOLD_ENTRIES, FINGERPRINT_ENTRIES)


def get_analysis(store: Store, path: str, config: Config) -> Analysis:
    """Clusters and numbers at a setting (`analysis.analyze`), kept while its fingerprints are (see
    `AnalysisMemo`)."""
    return ANALYSES.get(get_fingerprints(store, path, config.fingerprint_key, config), path, config)


def get_clustering(store: Store, path: str, config: Config) -> Clustering:
    """The clusters, numbers, hosts and cluster sizes at a setting without the pages frame (what Home
    draws), kept as `get_analysis`'s are."""
    return ANALYSES.clustering(get_fingerprints(store, path, config.fingerprint_key, config), path, config)


@st.cache_resource(show_spinner=False, max_entries=PER_SETTING_ENTRIES)
def get_sample_counts(
    _store: Store,
    path: str,
    fingerprint_key: str,
    reference_key: str,
    _config: Config,
    _reference: Fingerprints,
) -> SampleCounts | None:
    """The sample's pairs at a setting and at the reference's (`estimate.sample_counts`), for every
    threshold."""
    return sample_counts(_store, _config, _reference)


def get_estimate(store: Store, path: str, config: Config) -> Estimate | None:
    """The three numbers at `config` estimated from a sample, scaled from the latest exact analysis (None
    without one of the same texts: nothing to scale from)."""
    latest = ANALYSES.latest()
    if latest is None or not comparable(config, latest[0].config):
        return None
    fp, clustering = latest
    with st.spinner("Estimating the numbers from a sample of the pages"):
        counts = get_sample_counts(store, path, config.fingerprint_key, fp.config.fingerprint_key, config, fp)
    return (
        estimate_numbers(counts, config, clustering.config, clustering.numbers)
        if counts is not None
        else None
    )


@st.cache_resource(show_spinner="Reading the candidate pairs", max_entries=PER_SETTING_ENTRIES)
def get_candidate_pairs(
    _store: Store, path: str, fingerprint_key: str, similarity: str, _config: Config
) -> pd.DataFrame:
    fp = get_fingerprints(_store, path, fingerprint_key, _config)
    return audit.candidate_pairs(fp, _config)


PairDetailKey = tuple[str, int, int, str, bool]  # (path, page_a, page_b, fingerprint key, keep_order)


class PairDetails:
    """`audit.pair_detail` of each pair, computed once: on the thread that first asks for it (`get`), or
    ahead of time on a background thread (`prefetch`: the Audit page's next pair, read and diffed while the
    analyst reads this one, so the key that leads there only draws it). A pair asked for while its prefetch
    runs waits for that one. The latest `max_entries` pairs are kept; a failed computation is not, so the
    next `get` raises its error where the page can show it."""

    def __init__(self, max_entries: int = 32) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._details: OrderedDict[PairDetailKey, Future[audit.PairDetail]] = OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neardup-prefetch")

    def _slot(self, key: PairDetailKey) -> tuple[Future[audit.PairDetail], bool]:
        """The future of `key` and whether it is new (the caller is to compute it)."""
        with self._lock:
            if (future := self._details.get(key)) is not None:
                self._details.move_to_end(key)
                return future, False
            future = self._details[key] = Future()
            while len(self._details) > self.max_entries:
                self._details.popitem(last=False)
            return future, True

    def _compute(
        self, future: Future[audit.PairDetail], key: PairDetailKey, store: Store, config: Config
    ) -> None:
        _, page_a, page_b, _, keep_order = key
        try:
            future.set_result(audit.pair_detail(store, page_a, page_b, config, keep_order=keep_order))
        except BaseException as exc:
            with self._lock:
                if self._details.get(key) is future:
                    del self._details[key]
            future.set_exception(exc)

    def get(self, store: Store, key: PairDetailKey, config: Config) -> audit.PairDetail:
        future, new = self._slot(key)
        if new:
            self._compute(future, key, store, config)
        return future.result()

    def prefetch(self, store: Store, key: PairDetailKey, config: Config) -> None:
        future, new = self._slot(key)
        if new:
            self._pool.submit(self._compute, future, key, store, config)

    def wait(self) -> None:
        """Until every prefetch started so far is done."""
        with self._lock:
            pending = list(self._details.values())
        wait_futures(pending)

    def clear(self) -> None:
        with self._lock:
            self._details.clear()


PAIR_DETAILS = PairDetails()


def get_pair_detail(
    store: Store,
    path: str,
    page_a: int,
    page_b: int,
    config: Config,
    *,
    keep_order: bool = False,
) -> audit.PairDetail:
    """Both pages, their scores and diff: read and computed once per pair (see `prefetch_pair_detail`)."""
    return PAIR_DETAILS.get(store, (path, page_a, page_b, config.fingerprint_key, keep_order), config)


def prefetch_pair_detail(
    store: Store, path: str, page_a: int, page_b: int, config: Config, *, keep_order: bool = False
) -> None:
    """Start computing what `get_pair_detail` with these arguments returns, on a background thread."""
    PAIR_DETAILS.prefetch(store, (path, page_a, page_b, config.fingerprint_key, keep_order), config)


@dataclass(frozen=True, slots=True)
class LabelView:
    """The labels and what the Audit page derives from them at one setting (`pairs`), as of `version`
    (`Store.labels_version`): reused while the version stays, so a rerun without a new label reads no
    label, and a label written by this session updates it in place of a full recompute."""

    pairs: pd.DataFrame  # the setting's candidate pairs (get_candidate_pairs' frame, compared by identity)
    index: audit.PairIndex
    version: tuple[int, int]
    labels: pd.DataFrame  # Store.labels()
    matched: pd.DataFrame  # audit.labeled_pairs(pairs, labels)
    tallies: pd.DataFrame  # labels.bucket_tallies(pairs["bucket"], matched)


def label_view(store: Store, pairs: pd.DataFrame, view: LabelView | None) -> LabelView:
    """`view` if no label changed since it was made (one small query), else made again from the store."""
    version = store.labels_version()  # before the labels: a write in between makes the next call re-read
    if view is not None and view.pairs is pairs and view.version == version:
        return view
    index = view.index if view is not None and view.pairs is pairs else audit.pair_index(pairs)
    labels = store.labels()
    matched = audit.labeled_pairs(pairs, labels, index=index)
    return LabelView(pairs, index, version, labels, matched, bucket_tallies(pairs["bucket"], matched))


def label_view_after(store: Store, view: LabelView, written: audit.PairKey | None) -> LabelView:
    """`view` (current before the write) after this session wrote the label of pair `written` (None: any
    other change, e.g. an undo): the labels are read again and the labeled pairs updated, not recomputed,
    where `audit.labeled_pairs_after` can."""
    version = store.labels_version()
    labels = store.labels()
    if written is None:
        matched = audit.labeled_pairs(view.pairs, labels, index=view.index)
    else:
        matched = audit.labeled_pairs_after(view.pairs, labels, view.matched, written, index=view.index)
    tallies = bucket_tallies(view.pairs["bucket"], matched)
    return LabelView(view.pairs, view.index, version, labels, matched, tallies)


# A LabelView version no store has: the view is to be read again from the store.
STALE_VERSION = (-1, -1)


def label_view_with(view: LabelView, row: dict[str, Any]) -> LabelView:
    """`view` with the label `row` (a `Store.labels()` row) as if it were written, and `view`'s version: the
    caller writes it, then sets the version the store has after the write (or STALE_VERSION)."""
    labels = audit.labels_with(view.labels, row)
    matched = audit.labeled_pairs_after(view.pairs, labels, view.matched, key_of(row), index=view.index)
    return LabelView(
        view.pairs, view.index, view.version, labels, matched, bucket_tallies(view.pairs["bucket"], matched)
    )


@st.cache_resource(show_spinner=False, max_entries=1)
def get_url_table(_store: Store, path: str, fingerprint_key: str, _config: Config) -> rules.UrlTable:
    """What URL rule learning needs that no threshold changes (`rules.url_table`, of the URLs as the store
    keeps them parsed: `engine.ensure_parsed_urls`), and the rewritten URLs of the rule sets measured so
    far: made once per fingerprint key, used at every threshold. Its progress bar is its own: a cached
    function may draw only into what it made (Streamlit replays it)."""
    pages = get_fingerprints(_store, path, fingerprint_key, _config).pages
    progress, bar = progress_bar("Reading the crawl's URLs (once per setting)")
    try:
        parsed = engine.ensure_parsed_urls(_store, pages, progress=progress)
        return rules.url_table(pages, parsed=parsed, progress=progress)
    finally:
        bar.empty()


@st.cache_resource(show_spinner=False, max_entries=PER_SETTING_ENTRIES)
def get_learned_rules(_store: Store, path: str, config: Config) -> rules.LearnedRules:
    """URL rules learned from the clusters at a setting (read-only): the URLs are parsed once per
    fingerprint key (`get_url_table`), the clusters of the threshold measure the rules, under a progress
    bar. The table holds the URLs: of the clustering only each page's cluster is read (no pages frame)."""
    fp = get_fingerprints(_store, path, config.fingerprint_key, config)
    numbering = ANALYSES.clustering(fp, path, config).numbering
    degenerate = fp.arrays["unit"] < 0
    pages = pd.DataFrame(
        {
            "page_id": fp.arrays["page_id"],
            "cluster_id": pd.arrays.IntegerArray(numbering.cluster, degenerate),
            "cluster_size": pd.arrays.IntegerArray(numbering.size, degenerate),
        }
    )
    table = get_url_table(_store, path, config.fingerprint_key, config)
    progress, bar = progress_bar("Learning URL rules from the clusters")
    try:
        return rules.learn_rules(pages, table=table, progress=progress)
    finally:
        bar.empty()


@st.cache_resource(show_spinner=False, max_entries=1)
def get_source_texts(_store: Store, path: str, fingerprint_key: str, _config: Config) -> compare.SourceTexts:
    """Each source's distinct texts (`compare.source_texts`): made once per fingerprint key, clustered at
    every threshold by `get_source_trend`."""
    return compare.source_texts(get_fingerprints(_store, path, fingerprint_key, _config))


@st.cache_resource(show_spinner="Counting each source on its own", max_entries=PER_SETTING_ENTRIES)
def get_source_trend(_store: Store, path: str, config: Config) -> pd.DataFrame:
    """The numbers of each loaded source on its own, in load order."""
    fp = get_fingerprints(_store, path, config.fingerprint_key, config)
    texts = get_source_texts(_store, path, config.fingerprint_key, config)
    return compare.per_source_numbers(fp, config, _store.sources(), texts=texts)


@st.cache_resource(show_spinner="Comparing the two sources", max_entries=PER_SETTING_ENTRIES)
def get_comparison(
    _store: Store, path: str, config: Config, baseline: int, current: int
) -> compare.Comparison:
    """Two sources of the database side by side, clustered together at a setting."""
    fp = get_fingerprints(_store, path, config.fingerprint_key, config)
    return compare.compare_sources(fp, config, baseline, current, (str(baseline), str(current)))


@st.cache_resource(show_spinner=False, max_entries=PAGE_FRAME_ENTRIES)
def get_page_categories(
    _store: Store, path: str, config: Config, labels_version: tuple[int, int]
) -> pd.DataFrame:
    """`categories.page_categories` at a setting, with the labels as of `labels_version` and a progress bar:
    the suggestions the store holds are read (`neardup report` keeps its threshold's), the pairs a threshold
    forms anew compared on the worker pool and kept."""
    analysis = get_analysis(_store, path, config)
    progress, bar = progress_bar("Sorting the pages into categories")
    try:
        return page_categories(_store, analysis, _store.labels(), progress=progress, jobs=None)
    finally:
        bar.empty()


@st.cache_resource(show_spinner=False, max_entries=PAGE_FRAME_ENTRIES)
def get_cluster_table(
    _store: Store, path: str, config: Config, labels_version: tuple[int, int]
) -> ClusterTable:
    """The Clusters page's table at a setting (`drilldown.cluster_table`: its rows, and each cluster's pages
    in the analysis' pages frame), with the clusters' categories as of `labels_version`: made once per
    threshold and labels, not on each run of the page."""
    analysis = get_analysis(_store, path, config)
    return cluster_table(analysis.pages, get_page_categories(_store, path, config, labels_version))


def let_go_of_pages_frames() -> None:
    """Drop what the Clusters and Export pages draw from (the analysis' pages frame, the pages' categories,
    the clusters table: hundreds of MB at 1M pages), for a page that draws none of it: a visit back builds
    them again from the clustering kept (a take of the pages' columns and a read of the stored
    categories, under a second at 1M pages), where keeping them would add them to the URL rules page's
    table and every other page's peak. Another session on the Clusters page builds them again too."""
    ANALYSES.let_go_of_frame()
    get_page_categories.clear()
    get_cluster_table.clear()


# The state of each database as this process last read it (`data_state`): one state for every session.
_DATA_STATES: dict[str, tuple[int, int, int, int]] = {}
_DATA_STATES_LOCK = threading.Lock()


def data_state(store: Store) -> tuple[int, int, int, int]:
    """What an ingest or a source's removal changes: (pages, last page id, sources, last source id). Page and
    source ids only grow, so an ingest and a removal of the same size still change it."""
    coverage = store.page_coverage()
    sources = store.sources()
    last_source = int(sources["source_id"].max()) if len(sources) else -1
    return coverage["pages"], coverage["last_page_id"], len(sources), last_source


def refresh_if_changed(store: Store) -> bool:
    """At the top of every run: when the database changed since this process last looked (`neardup ingest`
    from outside, another session's load or removal), drop every cached result derived from it, so that
    each page of this run reads one analysis of the new state. Returns whether it changed."""
    state = data_state(store)
    with _DATA_STATES_LOCK:
        before = _DATA_STATES.get(store.path)
        _DATA_STATES[store.path] = state
    if before is None or before == state:
        return False
    clear_caches()
    return True


def clear_caches() -> None:
    """After new data (an ingest): drop everything derived from the database."""
    get_learned_rules.clear()
    get_url_table.clear()
    get_source_texts.clear()
    get_source_trend.clear()
    get_comparison.clear()
    get_fingerprints.clear()
    get_sample_counts.clear()
    ANALYSES.clear()
    get_page_categories.clear()
    get_cluster_table.clear()
    get_candidate_pairs.clear()
    PAIR_DETAILS.clear()
