"""How a cluster holds together: the chain of links between two of its pages, and its bridges.

A cluster is a connected component of distinct texts (units) joined by the stored pairs at the threshold
(`analysis.analyze`), so two of its pages need not be a pair themselves: they can be joined through pages in
between. `LinkGraph` holds those links once per setting; `LinkGraph.chain` gives the strongest chain between
two units (the path whose weakest link is the strongest, then the one of fewest links), and
`LinkGraph.bridges` the links whose removal splits their cluster (Tarjan's bridges). A bridge whose score is
within one similarity bucket of the threshold (`labels.BUCKET_WIDTH`, one bit for SimHash) is weak: the next
tighter threshold cuts it, and when both parts hold two pages or more, the cluster is two groups held
together by that one link.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

from .analysis import Fingerprints, pair_scores, pairs_at_threshold
from .clusters import components
from .config import Config
from .labels import BUCKET_WIDTH


@dataclass(frozen=True, slots=True)
class Link:
    """Two units joined at the threshold, shown by one page of each, and the pair's score."""

    unit_a: int
    unit_b: int
    page_a: int
    page_b: int
    score: float


@dataclass(frozen=True, slots=True)
class Chain:
    """Links from `pages[0]` to `pages[-1]`, each joining two consecutive pages."""

    pages: tuple[int, ...]
    links: tuple[Link, ...]
    in_bits: bool  # scores are SimHash bits: fewer is closer

    @property
    def weakest_index(self) -> int:
        """Where the weakest link is (-1: no link, the same text)."""
        if not self.links:
            return -1
        scores = [link.score for link in self.links]
        return int(np.argmax(scores) if self.in_bits else np.argmin(scores))


@dataclass(frozen=True, slots=True)
class Bridge:
    """A link whose removal splits its cluster into parts of `pages_apart` pages."""

    link: Link
    pages_apart: tuple[int, int]
    weak: bool  # within one bucket of the threshold

    @property
    def splits_groups(self) -> bool:
        """Both parts hold two pages or more: the link joins two groups, not one page to the rest."""
        return min(self.pages_apart) >= 2


@dataclass(frozen=True, slots=True)
class ClusterLinks:
    """The links of one cluster and its bridges, the weakest first."""

    n_units: int
    n_links: int
    bridges: tuple[Bridge, ...]

    @property
    def weak_bridges(self) -> tuple[Bridge, ...]:
        """Weak bridges that join two groups: the cluster is held together by each of them alone."""
        return tuple(b for b in self.bridges if b.weak and b.splits_groups)


@dataclass(frozen=True, slots=True)
class UnitPages:
    """What a link graph needs of the pages and no threshold changes: each unit's page to show it by (its
    lowest page id; int64 max for a unit without a content page), its content pages, and one page row of
    it (-1: none), the row its cluster is read from."""

    page_of_unit: np.ndarray
    pages_of_unit: np.ndarray
    row_of_unit: np.ndarray

    @classmethod
    def of(cls, n_units: int, page_unit: np.ndarray, page_id: np.ndarray) -> UnitPages:
        """Of `n_units` units, given the unit of each page (-1: none) and its id."""
        unit = np.asarray(page_unit, dtype=np.int64)
        content = np.flatnonzero(unit >= 0)
        first = np.full(n_units, np.iinfo(np.int64).max)
        np.minimum.at(first, unit[content], np.asarray(page_id, dtype=np.int64)[content])
        row = np.full(n_units, -1, dtype=np.int64)
        row[unit[content]] = content  # any row of the unit: its pages share a cluster
        return cls(first, np.bincount(unit[content], minlength=n_units), row)


class LinkGraph:
    """The stored pairs at the threshold as a graph over units (adjacency in CSR form), with one page per
    unit (its lowest page id) to show it by and the content pages each unit holds."""

    def __init__(
        self,
        n_units: int,
        a: np.ndarray,
        b: np.ndarray,
        score: np.ndarray,
        *,
        page_unit: np.ndarray,
        page_id: np.ndarray,
        in_bits: bool,
        threshold: float,
        unit_pages: UnitPages | None = None,
        page_cluster: np.ndarray | None = None,
    ) -> None:
        """Links (a[i], b[i]) of `score[i]` between units 0..n_units-1 (each pair once); `page_unit` and
        `page_id` name the unit of each page (-1: none). `unit_pages` (`UnitPages.of` these pages) and
        `page_cluster` (each page's cluster at the threshold, from a clustering of the same links) spare
        computing them again."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        score = np.asarray(score, dtype=np.float64)
        n = n_units
        self.simhash = in_bits
        self.threshold = float(threshold)
        ends = np.concatenate((a, b))
        order = np.argsort(ends, kind="stable")
        self.neighbour = np.concatenate((b, a))[order]
        self.score = np.concatenate((score, score))[order]
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(ends, minlength=n))))
        pages = unit_pages if unit_pages is not None else UnitPages.of(n, page_unit, page_id)
        self.pages_of_unit = pages.pages_of_unit
        self.page_of_unit = pages.page_of_unit
        if page_cluster is None:
            self.component = components(n, a, b)
        else:  # a unit without a page is a component of its own (a negative number)
            row = pages.row_of_unit
            alone = np.flatnonzero(row < 0)
            self.component = np.asarray(page_cluster, dtype=np.int64)[np.maximum(row, 0)]
            self.component[alone] = -1 - np.arange(len(alone))

    def weak(self, score: float) -> bool:
        """Within one bucket of the threshold: the next tighter threshold cuts this link."""
        if self.simhash:
            return score >= self.threshold - 1 + 1e-9 if self.threshold >= 1 else True
        return score < self.threshold + BUCKET_WIDTH - 1e-9

    def _link(self, u: int, v: int, score: float) -> Link:
        return Link(u, v, int(self.page_of_unit[u]), int(self.page_of_unit[v]), score)

    def neighbours(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[u], self.indptr[u + 1]
        return self.neighbour[lo:hi], self.score[lo:hi]

    def chain(self, unit_a: int, unit_b: int) -> Chain | None:
        """The strongest chain of links from `unit_a` to `unit_b` (its weakest link the strongest of any
        chain, then the fewest links); None when they are in different clusters. The pages are those
        `page_of_unit` shows the units by."""
        if self.component[unit_a] != self.component[unit_b]:
            return None
        if unit_a == unit_b:
            return Chain((int(self.page_of_unit[unit_a]),), (), self.simhash)
        # The best bottleneck first (Dijkstra on the weakest link so far, as a key to minimize: -score, or
        # bits), then the fewest links over the links at least that strong (breadth first).
        sign = 1.0 if self.simhash else -1.0
        best: dict[int, float] = {unit_a: -np.inf}
        heap: list[tuple[float, int]] = [(-np.inf, unit_a)]
        done: set[int] = set()
        while heap:
            key, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            if u == unit_b:
                break
            nbrs, scores = self.neighbours(u)
            for v, s in zip(nbrs.tolist(), scores.tolist(), strict=True):
                cand = max(key, sign * s)
                if v not in done and cand < best.get(v, np.inf):
                    best[v] = cand
                    heapq.heappush(heap, (cand, v))
        bottleneck = best[unit_b]
        came: dict[int, tuple[int, float]] = {unit_a: (-1, 0.0)}
        queue = deque([unit_a])
        while queue and unit_b not in came:
            u = queue.popleft()
            nbrs, scores = self.neighbours(u)
            for v, s in zip(nbrs.tolist(), scores.tolist(), strict=True):
                if v not in came and sign * s <= bottleneck:
                    came[v] = (u, s)
                    queue.append(v)
        units = [unit_b]
        links = []
        while units[-1] != unit_a:
            prev, s = came[units[-1]]
            links.append(self._link(prev, units[-1], s))
            units.append(prev)
        units.reverse()
        links.reverse()
        return Chain(tuple(int(self.page_of_unit[u]) for u in units), tuple(links), self.simhash)

    def page_chain(self, unit_a: int, page_a: int, unit_b: int, page_b: int) -> Chain | None:
        """`chain` between two pages of units `unit_a` and `unit_b`: the ends are these pages (a unit is
        shown by its lowest page id elsewhere), and two pages of one text are joined by one link of the
        same text (1.0, or 0 bits)."""
        if unit_a == unit_b:
            same = 0.0 if self.simhash else 1.0
            return Chain((page_a, page_b), (Link(unit_a, unit_b, page_a, page_b, same),), self.simhash)
        chain = self.chain(unit_a, unit_b)
        if chain is None:
            return None
        pages = (page_a, *chain.pages[1:-1], page_b)
        links = list(chain.links)
        links[0] = dataclasses.replace(links[0], page_a=page_a)
        links[-1] = dataclasses.replace(links[-1], page_b=page_b)
        return Chain(pages, tuple(links), self.simhash)

    def cluster_links(self, unit: int) -> ClusterLinks:
        """The links of the cluster of `unit` and its bridges (weakest first)."""
        members = np.flatnonzero(self.component == self.component[unit])
        local = {int(u): i for i, u in enumerate(members)}
        edges: list[tuple[int, int, float]] = []
        adjacency: list[list[tuple[int, int]]] = [[] for _ in members]
        for i, u in enumerate(members.tolist()):
            nbrs, scores = self.neighbours(u)
            for v, s in zip(nbrs.tolist(), scores.tolist(), strict=True):
                if u < v:
                    e = len(edges)
                    edges.append((u, v, s))
                    adjacency[i].append((local[v], e))
                    adjacency[local[v]].append((i, e))
        weights = self.pages_of_unit[members]
        found = []
        for e, below in _bridges(adjacency, weights):
            u, v, s = edges[e]
            apart = (below, int(weights.sum()) - below)
            found.append(Bridge(self._link(u, v, s), apart, self.weak(s)))
        found.sort(key=lambda br: (-br.link.score if self.simhash else br.link.score, -min(br.pages_apart)))
        return ClusterLinks(len(members), len(edges), tuple(found))


def _bridges(adjacency: list[list[tuple[int, int]]], weights: np.ndarray) -> list[tuple[int, int]]:
    """The bridges of a connected graph (adjacency lists of (neighbour, edge id)), each with the weight of
    the part below it in a depth-first tree (iterative Tarjan: low-link values, no recursion)."""
    n = len(adjacency)
    if n == 0:
        return []
    order = np.full(n, -1)
    low = np.zeros(n, dtype=np.int64)
    below = weights.astype(np.int64).copy()
    out = []
    counter = 0
    order[0] = low[0] = counter
    stack: list[tuple[int, int, int]] = [(0, -1, 0)]  # (node, edge to parent, next adjacency index)
    while stack:
        node, parent_edge, at = stack[-1]
        if at < len(adjacency[node]):
            stack[-1] = (node, parent_edge, at + 1)
            nxt, e = adjacency[node][at]
            if e == parent_edge:
                continue
            if order[nxt] == -1:
                counter += 1
                order[nxt] = low[nxt] = counter
                stack.append((nxt, e, 0))
            else:
                low[node] = min(low[node], order[nxt])
            continue
        stack.pop()
        if stack:
            parent = stack[-1][0]
            low[parent] = min(low[parent], low[node])
            below[parent] += below[node]
            if low[node] > order[parent]:
                out.append((parent_edge, int(below[node])))
    return out


def link_graph(
    fp: Fingerprints,
    config: Config,
    *,
    unit_pages: UnitPages | None = None,
    page_cluster: np.ndarray | None = None,
) -> LinkGraph:
    """The links of `fp`'s stored pairs at `config.threshold` (`unit_pages`, `page_cluster`: see
    `LinkGraph`; the clusters those of `analysis.cluster_at_threshold` at `config`)."""
    keep = pairs_at_threshold(fp, config)
    return LinkGraph(
        fp.n_units,
        fp.pairs["a"][keep],
        fp.pairs["b"][keep],
        pair_scores(fp, config)[keep],
        page_unit=fp.arrays["unit"],
        page_id=fp.arrays["page_id"],
        in_bits=config.method == "simhash",
        threshold=config.threshold,
        unit_pages=unit_pages,
        page_cluster=page_cluster,
    )
