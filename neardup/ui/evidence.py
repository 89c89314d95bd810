"""Why a pair matched, drawn: the scores and what made it a candidate in a few lines, the shared passages
highlighted in both texts, the chain through a cluster and its weak links.

Page text is escaped Markdown (`render.md_escape`: every ASCII punctuation escaped, no link can form) in
Streamlit's own colour directives; URLs go into tables and code blocks. Nothing here uses
`unsafe_allow_html`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from .. import engine
from ..analysis import Fingerprints
from ..batches import signature_matrix
from ..chains import Chain, ClusterLinks, LinkGraph, UnitPages, link_graph
from ..config import Config
from ..evidence import MinHashTrace, PairEvidence, SimHashTrace, TextWords, pair_evidence, unit_of_page
from ..store import Store
from ..store.pages import PageRow
from .data import ANALYSES, get_fingerprints
from .render import md_escape
from .state import W_EVIDENCE_LEFT, W_EVIDENCE_RIGHT, W_EVIDENCE_SHOW_PASSAGES

# Passages take these colours in turn (red and green are the diff's deletions and insertions); the same
# passage has the same colour and number in both texts.
PASSAGE_COLOURS = ("blue", "violet", "orange")
TEXT_HEIGHT = 380  # px of each highlighted text (it scrolls)

T = TypeVar("T")


class FingerprintMemo:
    """Values computed from one `Fingerprints` object (the cached one of a setting), the latest
    `max_entries` kept; a new fingerprints object (new data, caches cleared) starts afresh. The object is
    held weakly: the app's cache of fingerprint sets decides how long one lives, and what was computed
    from it goes with it."""

    def __init__(self, max_entries: int = 64) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._fp: weakref.ref[Fingerprints] | None = None
        self._values: OrderedDict[Any, Any] = OrderedDict()

    def _forget(self, gone: weakref.ref[Fingerprints]) -> None:
        # Called by the collector, maybe inside `get` on this thread: no lock, one atomic swap and a clear.
        if self._fp is gone:
            self._fp = None
            self._values.clear()

    def get(self, fp: Fingerprints, key: Any, make: Callable[[], T]) -> T:
        with self._lock:
            if self._fp is None or self._fp() is not fp:
                self._fp, self._values = weakref.ref(fp, self._forget), OrderedDict()
            if key in self._values:
                self._values.move_to_end(key)
                value: T = self._values[key]
                return value
        value = make()
        with self._lock:
            if self._fp is not None and self._fp() is fp:
                self._values[key] = value
                while len(self._values) > self.max_entries:
                    self._values.popitem(last=False)
        return value


FINGERPRINT_MEMO = FingerprintMemo()
# A pair's evidence is a few kilobytes; a link graph holds arrays over every unit and page (~50 MB at a
# million pages), so only the graphs of the latest thresholds are kept: a threshold moved back builds its
# graph again (a sort of the pairs at it), where 64 of them would take gigabytes.
LINK_GRAPHS = FingerprintMemo(max_entries=2)
# Pages read for the Clusters page's evidence (`member_page`), apart: a few small rows that change with each
# cluster looked at, which would push the link graphs and signatures out of FINGERPRINT_MEMO.
MEMBER_PAGES = FingerprintMemo(max_entries=8)


def fingerprints(store: Store, path: str, config: Config) -> Fingerprints:
    return get_fingerprints(store, path, config.fingerprint_key, config)


def get_link_graph(store: Store, path: str, config: Config) -> LinkGraph:
    """The links at the setting's threshold (built once per threshold and fingerprints), of the clusters
    the app keeps at it (where it does) and the units' pages kept once per fingerprint set."""
    fp = fingerprints(store, path, config)

    def make() -> LinkGraph:
        unit_pages = FINGERPRINT_MEMO.get(
            fp, ("unit pages",), lambda: UnitPages.of(fp.n_units, fp.arrays["unit"], fp.arrays["page_id"])
        )
        clustering = ANALYSES.kept(fp, path, config)  # the Clusters page's; else its own components
        return link_graph(
            fp,
            config,
            unit_pages=unit_pages,
            page_cluster=None if clustering is None else clustering.numbering.cluster,
        )

    return LINK_GRAPHS.get(fp, ("links", config), make)


def get_pair_evidence(
    store: Store, path: str, config: Config, left: Mapping[str, Any], right: Mapping[str, Any]
) -> PairEvidence:
    """`evidence.pair_evidence` of two `Store.page` rows, once per pair and setting."""
    fp = fingerprints(store, path, config)
    key = ("pair", config, int(left["page_id"]), int(right["page_id"]))

    def make() -> PairEvidence:
        # The app's fingerprints hold the signatures of the units in a pair only; the replay of the index
        # needs, of every other unit's, only the buckets too large to expand: counted once per fingerprint
        # set (by `neardup report`, or here on first use) and kept in the store.
        if config.method != "minhash":
            return pair_evidence(fp, config, left, right)
        capped = FINGERPRINT_MEMO.get(
            fp, ("capped buckets",), lambda: engine.ensure_capped_buckets(store, config)
        )
        return pair_evidence(
            fp,
            config,
            left,
            right,
            capped=capped,
            pair_signatures=pair_signatures(store, config, fp, left, right),
        )

    return FINGERPRINT_MEMO.get(fp, key, make)


def pair_signatures(
    store: Store, config: Config, fp: Fingerprints, left: Mapping[str, Any], right: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The MinHash signatures of two pages' units: held in `fp` for units in a stored pair, else read from
    the store; None for a page without a fingerprint (a degenerate page) or of one text."""
    units = np.array([unit_of_page(fp, int(left["page_id"])), unit_of_page(fp, int(right["page_id"]))])
    if units.min() < 0 or units[0] == units[1]:
        return None
    try:
        a, b = fp.signatures(units)
        return a, b
    except KeyError:  # a unit in no stored pair
        stored = units if fp.unit_ids is None else fp.unit_ids[units]
        ids, column = store.unit_signatures_of(config.fingerprint_key, stored)
        matrix = signature_matrix(config.num_perm, column)
        return matrix[int(np.searchsorted(ids, stored[0]))], matrix[int(np.searchsorted(ids, stored[1]))]


# --- text, from the evidence's fields ---------------------------------------------------------------
def _score(value: float, config: Config) -> str:
    return f"{int(value)} bits" if config.method == "simhash" else f"{value:.2f}"


def _list(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(n + 1) for n in numbers[:8])
    return shown + (f" and {len(numbers) - 8} more" if len(numbers) > 8 else "")


def scores_line(ev: PairEvidence) -> str:
    """The shared passages and the exact scores, as Markdown (numbers only)."""
    s = ev.scores
    if ev.passages:
        longest = ev.passages[0].n_words
        shared = (
            f"{len(ev.passages)} shared passage{'s' if len(ev.passages) != 1 else ''} (the longest "
            f"{longest:,} words) cover{'s' if len(ev.passages) == 1 else ''} {ev.share_a:.0%} of the left text and {ev.share_b:.0%} of the right"
        )
    else:
        shared = f"no shared passage of {ev.min_passage_words} words or more"
    return (
        f"**Why they match:** {shared} · containment left in right {s.containment_a_in_b:.2f}, right in left "
        f"{s.containment_b_in_a:.2f} · exact Jaccard {s.jaccard:.2f} ({s.shared:,} of "
        f"{s.shingles_a:,} and {s.shingles_b:,} shingles shared)"
    )


def candidate_line(ev: PairEvidence, config: Config) -> str:
    """What made the pair a candidate (or why it is none), as Markdown (numbers only)."""
    trace = ev.candidate
    if ev.same_text:
        return "**Candidate:** the same words after normalization, an exact duplicate: one text, no search needed."
    if ev.unit_a < 0 or ev.unit_b < 0:
        return "**Candidate:** no: a degenerate page (no content) is never fingerprinted."
    if isinstance(trace, SimHashTrace):
        return simhash_line(trace)
    assert isinstance(trace, MinHashTrace)
    return minhash_line(trace)


def minhash_line(t: MinHashTrace) -> str:
    parts = []
    in_index = t.found_by_index and t.estimate_passed
    if t.hits:
        capped = [h.band for h in t.hits if not h.expanded]
        parts.append(
            f"{len(t.hits)} of the {t.bands} LSH bands ({t.rows} signature values each) equal (band "
            f"{_list([h.band for h in t.hits])})"
            + (f"; band {_list(capped)} a bucket too large to expand" if capped else "")
        )
        relation = "≥" if t.estimate_passed else "<"
        parts.append(f"estimate {t.similarity} {t.estimate:.2f} {relation} the floor {t.floor:g}")
    else:
        parts.append(f"none of the {t.bands} LSH bands ({t.rows} values each) equal")
    sc = t.size_class
    if sc is not None and t.size_class_found:
        if in_index:
            parts.append("the size-class pass for partial copies found it as well")
        else:
            parts.append(
                f"**the size-class pass for partial copies found it**: size classes {sc.class_a} and "
                f"{sc.class_b} ({sc.distance} apart), {len(sc.hits)} of its {sc.bands} bands ({sc.rows} values "
                f"each) equal, estimate containment {t.estimate_containment:.2f}"
            )
    elif sc is not None and not in_index:
        parts.append(
            "the size-class pass for partial copies "
            + (f"pairs no sets {sc.distance} size classes apart" if not sc.searched else "did not find it")
        )
    if (in_index or t.size_class_found) and t.verify == "exact":
        relation = "≥" if t.exact_passed else "<"
        parts.append(
            f"exact verification {'kept' if t.exact_passed else 'dropped'} it ({t.similarity} "
            f"{t.exact_score:.2f} {relation} {t.floor:g})"
        )
    verdict = "a stored candidate pair" if t.stored else "no candidate pair"
    return f"**Candidate:** {' · '.join(parts)}: {verdict}."


def simhash_line(t: SimHashTrace) -> str:
    agree = (
        f"they agree on block{'s' if len(t.agreeing_blocks) != 1 else ''} {_list(list(t.agreeing_blocks))} of "
        f"{t.n_blocks}"
        if t.agreeing_blocks
        else f"they agree on none of the {t.n_blocks} blocks"
    )
    tables = (
        f"{len(t.tables)} of the tables of {t.r} blocks hold them"
        if t.tables
        else f"no table of {t.r} blocks holds them"
    )
    verdict = "a stored candidate pair" if t.stored else "no candidate pair"
    return (
        f"**Candidate:** the SimHash fingerprints differ in {t.hamming_bits} bits (kept up to {t.max_bits}); "
        f"{agree} · {tables}: {verdict}."
    )


def link_line(ev: PairEvidence, config: Config) -> str:
    if ev.same_text:
        return "One text: they are in the same cluster."
    if ev.stored_score is None:
        return "They are no candidate pair, so no direct link."
    side = "at or below" if config.method == "simhash" else "at or above"
    if ev.linked:
        return f"Stored score {_score(ev.stored_score, config)}, {side} the threshold {config.threshold:g}: a direct link of their cluster."
    return f"Stored score {_score(ev.stored_score, config)}, not {side} the threshold {config.threshold:g}: no direct link."


def highlighted_markdown(words: TextWords, marks: Sequence[tuple[int, int, int]]) -> str:
    """The text as escaped Markdown with passages (first word, words, passage number) in colour, each led
    by its number as a badge."""
    text, out, at = words.text, [], 0
    for first, n_words, number in sorted(marks):
        start, end = words.span(first, n_words)
        out.append(_escaped(text[at:start]))
        colour = PASSAGE_COLOURS[number % len(PASSAGE_COLOURS)]
        out.append(f":{colour}-badge[{number + 1}] :{colour}-background[{md_escape(text[start:end])}]")
        at = end
    out.append(_escaped(text[at:]))
    return "".join(out).strip() or ":gray[*(no text)*]"


def _escaped(piece: str) -> str:
    """`md_escape` keeping one space where the piece began or ended with white space (it strips them)."""
    if not piece:
        return ""
    core = md_escape(piece)
    lead = " " if piece[0].isspace() or not core else ""
    trail = " " if piece[-1].isspace() and core else ""
    return f"{lead}{core}{trail}" if core else " "


# --- drawing ------------------------------------------------------------------------------------------
def show_pair_evidence(
    store: Store,
    path: str,
    config: Config,
    left: Mapping[str, Any],
    right: Mapping[str, Any],
    *,
    expanded: bool = False,
    passages: bool = True,
) -> PairEvidence | None:
    """Why `left` and `right` (`Store.page` rows with their text) match: a few lines, then (`passages`) the
    shared passages highlighted in both texts (`expanded`: at once; else behind a switch, drawn only while
    it is on); the chain when they are one cluster but no direct link."""
    try:
        ev = get_pair_evidence(store, path, config, left, right)
    except KeyError as exc:  # a page loaded after these fingerprints were read
        st.caption(
            f"No evidence for this pair: {md_escape(str(exc.args[0]))}; it comes with the next analysis."
        )
        return None
    st.markdown(scores_line(ev))
    st.markdown(candidate_line(ev, config) + " " + link_line(ev, config))
    if not ev.linked and min(ev.unit_a, ev.unit_b) >= 0:
        graph = get_link_graph(store, path, config)
        chain = graph.page_chain(ev.unit_a, ev.page_a, ev.unit_b, ev.page_b)
        if chain is not None:
            show_chain(store, path, config, chain, graph)
    title = f"Shared passages highlighted in both texts ({len(ev.passages)})"
    if not passages:
        return ev
    if expanded:
        st.markdown(f"**{title}**")
        show_passages(ev)
    elif st.toggle(title, key=W_EVIDENCE_SHOW_PASSAGES):  # drawn only while on, as the page's other views
        show_passages(ev)
    return ev


def show_passages(ev: PairEvidence) -> None:
    if not ev.passages:
        st.caption(f"No run of {ev.min_passage_words} words or more is in both texts.")
        return
    st.caption(
        f"Each passage is a run of equal words in both texts ({ev.min_passage_words} words or more, one shingle), "
        "the longest first; its number and colour are the same on both sides. Words are compared as the "
        "shingles see them (case and punctuation aside)."
    )
    left, right = st.columns(2)
    for col, words, start in ((left, ev.words_a, "start_a"), (right, ev.words_b, "start_b")):
        marks = [(getattr(p, start), p.n_words, i) for i, p in enumerate(ev.passages)]
        with col, st.container(height=TEXT_HEIGHT):
            st.markdown(highlighted_markdown(words, marks))
    places = "; ".join(
        f"{i + 1}: {p.n_words:,} words, from word {p.start_a + 1:,} on the left and {p.start_b + 1:,} on the right"
        for i, p in enumerate(ev.passages[:12])
    )
    more = f"; and {len(ev.passages) - 12:,} shorter" if len(ev.passages) > 12 else ""
    st.caption(f"Passages: {places}{more}.")


def page_urls(fp: Fingerprints, page_ids: Sequence[int]) -> dict[int, str]:
    pages = fp.pages
    rows = pages[pages["page_id"].isin(list(page_ids))]
    return dict(zip(rows["page_id"].astype(int), rows["url"], strict=True))


def show_chain(store: Store, path: str, config: Config, chain: Chain, graph: LinkGraph) -> None:
    """The pages between two members of one cluster, each link's score; the weakest link flagged."""
    fp = fingerprints(store, path, config)
    urls = page_urls(fp, chain.pages)
    weakest = chain.weakest_index
    steps = " → ".join(
        [f"page {chain.pages[0]}"]
        + [
            f"{'**' if i == weakest else ''}{_score(link.score, config)}{'**' if i == weakest else ''} → page {link.page_b}"
            for i, link in enumerate(chain.links)
        ]
    )
    between = len(chain.pages) - 2
    st.markdown(
        f"**Joined through {between} page{'s' if between != 1 else ''}** (the strongest chain of links at the "
        f"threshold; the weakest in bold): {steps}"
    )
    st.dataframe(
        pd.DataFrame(
            {
                "page": list(chain.pages),
                "link to the next": [_score(link.score, config) for link in chain.links] + [""],
                "URL": [urls.get(p, "") for p in chain.pages],
            }
        ),
        hide_index=True,
        width="stretch",
    )
    link = chain.links[weakest] if weakest >= 0 else None
    if link is not None and graph.weak(link.score):
        st.warning(
            f"The chain's weakest link (pages {link.page_a} and {link.page_b}, {_score(link.score, config)}) is "
            "within one bucket of the threshold: the next tighter threshold may part these two pages."
        )


def cluster_links_line(links: ClusterLinks) -> str:
    """How many texts a cluster holds and how many links and bridges join them, in one line."""
    if links.n_units == 1:
        return "One distinct text: its pages have the same words after normalization (no link to show)."
    n_bridges = len(links.bridges)
    if n_bridges == 0:
        bridges = "none of them is a bridge" if links.n_links > 1 else "it is no bridge"
    elif links.n_links == 1:
        bridges = "it is a bridge"
    else:
        bridges = f"{n_bridges:,} of them {'is a bridge' if n_bridges == 1 else 'are bridges'}"
    return (
        f"{links.n_units:,} distinct texts joined by {links.n_links:,} link{'s' if links.n_links != 1 else ''} "
        f"at the threshold; {bridges} (a link the cluster parts without)."
    )


def show_cluster_links(store: Store, path: str, config: Config, page_id: int) -> ClusterLinks:
    """How the cluster of `page_id` holds together: its links and bridges, and a warning for each weak
    link that alone holds two groups of pages together."""
    fp = fingerprints(store, path, config)
    graph = get_link_graph(store, path, config)
    links = graph.cluster_links(unit_of_page(fp, page_id))
    st.caption(cluster_links_line(links))
    for bridge in links.weak_bridges:
        a, b = bridge.pages_apart
        st.warning(
            f"**Held together by one weak link:** pages {bridge.link.page_a} and {bridge.link.page_b} "
            f"({_score(bridge.link.score, config)}, within one bucket of the threshold {config.threshold:g}) "
            f"are the only link between a group of {a} pages and one of {b}. Check that pair: if it is no "
            "duplicate, the cluster is two.",
            icon=":material/link_off:",
        )
    return links


def member_page(store: Store, path: str, config: Config, page_id: int) -> PageRow | None:
    """`Store.page` without the source, read once while these fingerprints are kept: the Clusters page draws
    two members' evidence on each of its runs."""
    fp = fingerprints(store, path, config)
    return MEMBER_PAGES.get(
        fp, (config.norm_key, page_id), lambda: store.page(page_id, config.norm_key, source=False)
    )


def show_member_evidence(store: Store, path: str, config: Config, members: pd.DataFrame) -> None:
    """Two members of a cluster picked (the representative and the first other at first): their evidence,
    with the chain between them where they are no direct link."""
    if len(members) < 2:
        return
    labels = {int(r.page_id): f"page {r.page_id} · {r.url}" for r in members.itertuples()}
    ids = list(labels)
    st.markdown("**Why two members match**")
    c1, c2 = st.columns(2)
    for key, default in ((W_EVIDENCE_LEFT, ids[0]), (W_EVIDENCE_RIGHT, ids[1])):
        if st.session_state.get(key) not in labels:
            st.session_state[key] = default
    first = c1.selectbox("Member", ids, format_func=labels.__getitem__, key=W_EVIDENCE_LEFT)
    second = c2.selectbox("and member", ids, format_func=labels.__getitem__, key=W_EVIDENCE_RIGHT)
    if first == second:
        st.caption("Pick two different members.")
        return
    left, right = (member_page(store, path, config, int(page_id)) for page_id in (first, second))
    if left is None or right is None:
        st.warning("That page is no longer in the database.")
        return
    show_pair_evidence(store, path, config, left, right, expanded=True)
