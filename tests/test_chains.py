"""Chains and bridges of a cluster's links, against brute force on random graphs and on hand-made clusters."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest

from neardup.chains import LinkGraph
from neardup.clusters import components


def graph(
    n: int, edges: list[tuple[int, int, float]], *, in_bits: bool = False, threshold: float = 0.8
) -> LinkGraph:
    a, b, s = (np.array(x) for x in zip(*edges, strict=True)) if edges else ([], [], [])
    return LinkGraph(
        n,
        np.asarray(a, dtype=np.int64),
        np.asarray(b, dtype=np.int64),
        np.asarray(s, dtype=np.float64),
        page_unit=np.arange(n),
        page_id=np.arange(n) + 100,
        in_bits=in_bits,
        threshold=threshold,
    )


def random_edges(rng: random.Random, n: int, p: float) -> list[tuple[int, int, float]]:
    return [(u, v, round(rng.uniform(0.8, 1.0), 2)) for u, v in combinations(range(n), 2) if rng.random() < p]


def simple_paths(n: int, edges: list[tuple[int, int, float]], start: int, end: int) -> list[list[float]]:
    adj: dict[int, list[tuple[int, float]]] = {u: [] for u in range(n)}
    for u, v, s in edges:
        adj[u].append((v, s))
        adj[v].append((u, s))
    out: list[list[float]] = []

    def walk(u: int, seen: set[int], scores: list[float]) -> None:
        if u == end:
            out.append(scores)
            return
        for v, s in adj[u]:
            if v not in seen:
                walk(v, seen | {v}, [*scores, s])

    walk(start, {start}, [])
    return out


@pytest.mark.parametrize("seed", range(30))
def test_bridges_equal_removing_each_link(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 9)
    edges = random_edges(rng, n, rng.choice([0.2, 0.35, 0.6]))
    g = graph(n, edges)
    comp = components(
        n, np.array([e[0] for e in edges], dtype=np.int64), np.array([e[1] for e in edges], dtype=np.int64)
    )
    for start in {int(np.flatnonzero(comp == c)[0]) for c in set(comp.tolist())}:
        members = set(np.flatnonzero(comp == comp[start]).tolist())
        inside = [e for e in edges if e[0] in members]
        found = {(br.link.unit_a, br.link.unit_b): br.pages_apart for br in g.cluster_links(start).bridges}
        expected = {}
        for e in inside:
            rest = [x for x in inside if x != e]
            labels = components(
                n,
                np.array([x[0] for x in rest], dtype=np.int64),
                np.array([x[1] for x in rest], dtype=np.int64),
            )
            if labels[e[0]] != labels[e[1]]:
                side = int(np.count_nonzero(labels == labels[e[0]]))
                expected[(e[0], e[1])] = tuple(sorted((side, len(members) - side)))
        assert {k: tuple(sorted(v)) for k, v in found.items()} == expected
        links = g.cluster_links(start)
        assert (links.n_units, links.n_links) == (len(members), len(inside))


@pytest.mark.parametrize("seed", range(30))
def test_chain_is_the_strongest_then_the_shortest(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 8)
    edges = random_edges(rng, n, 0.45)
    g = graph(n, edges)
    for a, b in combinations(range(n), 2):
        paths = simple_paths(n, edges, a, b)
        chain = g.chain(a, b)
        if not paths:
            assert chain is None
            continue
        assert chain is not None
        best = max(min(p) for p in paths)
        fewest = min(len(p) for p in paths if min(p) == best)
        scores = [link.score for link in chain.links]
        assert min(scores) == best and len(scores) == fewest
        assert chain.pages[0] == a + 100 and chain.pages[-1] == b + 100
        for link, (x, y) in zip(chain.links, zip(chain.pages, chain.pages[1:], strict=False), strict=True):
            assert (link.page_a, link.page_b) == (x, y)
            assert ((link.unit_a, link.unit_b, link.score) in edges) or (
                (link.unit_b, link.unit_a, link.score) in edges
            )


def test_a_chain_in_bits_keeps_the_fewest_bits() -> None:
    # 0 -(6)- 1 -(1)- 2 and 0 -(3)- 3 -(3)- 2: the second chain's worst link has fewer bits
    g = graph(4, [(0, 1, 6), (1, 2, 1), (0, 3, 3), (2, 3, 3)], in_bits=True, threshold=6)
    chain = g.chain(0, 2)
    assert chain is not None and [link.score for link in chain.links] == [3, 3]
    assert chain.pages == (100, 103, 102)
    assert chain.weakest_index == 0


def test_two_groups_held_together_by_one_weak_link() -> None:
    """Two triangles of close copies joined by one link just over the threshold: the warning names it; a
    page hanging on the cluster by a weak link of its own is no such warning."""
    edges = [(0, 1, 0.99), (1, 2, 0.98), (0, 2, 0.97), (3, 4, 0.99), (4, 5, 0.99), (3, 5, 0.98), (2, 3, 0.82)]
    g = graph(7, [*edges, (5, 6, 0.81)])
    links = g.cluster_links(0)
    assert [(b.link.unit_a, b.link.unit_b) for b in links.weak_bridges] == [(2, 3)]
    assert links.weak_bridges[0].pages_apart in ((3, 4), (4, 3))
    assert [(b.link.unit_a, b.link.unit_b) for b in links.bridges] == [(5, 6), (2, 3)]  # weakest first
    # the same link at 0.9: a bridge, not a weak one
    strong = graph(6, [*edges[:-1], (2, 3, 0.9)]).cluster_links(5)
    assert len(strong.bridges) == 1 and not strong.weak_bridges


def test_page_chain_ends_at_the_pages_asked_for() -> None:
    g = LinkGraph(
        3,
        np.array([0, 1]),
        np.array([1, 2]),
        np.array([0.9, 0.85]),
        page_unit=np.array([0, 0, 1, 2, 2]),
        page_id=np.array([10, 11, 12, 13, 14]),
        in_bits=False,
        threshold=0.8,
    )
    chain = g.page_chain(0, 11, 2, 14)
    assert chain is not None and chain.pages == (11, 12, 14)
    assert (chain.links[0].page_a, chain.links[-1].page_b) == (11, 14)
    same = g.page_chain(0, 10, 0, 11)
    assert same is not None and same.pages == (10, 11) and same.links[0].score == 1.0
    assert g.cluster_links(1).bridges[0].pages_apart in ((2, 3), (3, 2))  # pages, not units
