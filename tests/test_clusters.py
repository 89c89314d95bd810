"""Connected components and the representative rule."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.clusters import (
    RepresentativeRanks,
    cluster_representatives,
    components,
    describe_rule,
    pick_representatives,
    representative_ranks,
    representative_rows,
)


def _same_partition(labels: np.ndarray, groups: list[set[int]]) -> bool:
    found: dict[int, set[int]] = {}
    for node, label in enumerate(labels.tolist()):
        found.setdefault(label, set()).add(node)
    return sorted(map(sorted, found.values())) == sorted(map(sorted, groups))


def test_components_chains_and_singletons() -> None:
    # 0-1-2 chain (transitive), 3-4, 5 alone, 6-7 given twice and reversed
    a = np.array([0, 1, 3, 6, 7])
    b = np.array([1, 2, 4, 7, 6])
    labels = components(8, a, b)
    assert _same_partition(labels, [{0, 1, 2}, {3, 4}, {5}, {6, 7}])
    assert set(labels.tolist()) == set(range(4))  # labels are 0..k-1


def test_components_without_edges_and_empty() -> None:
    labels = components(4, np.empty(0, np.int64), np.empty(0, np.int64))
    assert _same_partition(labels, [{0}, {1}, {2}, {3}])
    assert components(0, np.empty(0, np.int64), np.empty(0, np.int64)).shape == (0,)


def test_components_self_loop() -> None:
    labels = components(3, np.array([1]), np.array([1]))
    assert _same_partition(labels, [{0}, {1}, {2}])


def _frame(rows: list[tuple]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["cluster_id", "page_id", "canonical_url", "rel_canonical", "fetched_at"])
    df["fetched_at"] = pd.to_datetime(df["fetched_at"])
    return df


def test_member_named_by_rel_canonical_wins() -> None:
    pages = _frame(
        [
            (1, 10, "https://example.com/a?page=1", None, "2024-01-01"),  # earliest, shortest-ish
            (1, 11, "https://example.com/the-long-canonical-article", None, "2024-03-01"),
            (
                1,
                12,
                "https://example.com/amp/a",
                "https://example.com/the-long-canonical-article",
                "2024-02-01",
            ),
        ]
    )
    reps = pick_representatives(pages)
    assert reps.loc[1, "representative_id"] == 11
    assert reps.loc[1, "representative_url"] == "https://example.com/the-long-canonical-article"
    assert reps.loc[1, "why"] == "named by rel=canonical"


def test_self_canonical_does_not_count() -> None:
    # every page naming itself is no vote: the earliest fetch wins
    pages = _frame(
        [
            (1, 1, "https://example.com/b", "https://example.com/b", "2024-05-01"),
            (1, 2, "https://example.com/aaaa", "https://example.com/aaaa", "2024-04-01"),
        ]
    )
    reps = pick_representatives(pages)
    assert reps.loc[1, "representative_id"] == 2
    assert reps.loc[1, "why"] == "earliest fetch"


def test_canonical_naming_a_page_outside_the_cluster_is_ignored() -> None:
    pages = _frame(
        [
            (1, 1, "https://example.com/x", None, "2024-01-02"),
            (1, 2, "https://example.com/y", "https://example.com/z", "2024-01-03"),
            (2, 3, "https://example.com/z", None, "2024-01-05"),
            (2, 4, "https://example.com/zz", None, "2024-01-04"),
        ]
    )
    reps = pick_representatives(pages)
    assert reps.loc[1, "representative_id"] == 1  # earliest in cluster 1
    assert reps.loc[2, "representative_id"] == 4  # z is named from cluster 1, which does not count in 2
    assert reps.loc[2, "why"] == "earliest fetch"


def test_earliest_fetch_wins_over_shorter_url() -> None:
    pages = _frame(
        [
            (1, 1, "https://example.com/a", None, "2024-06-01"),
            (1, 2, "https://example.com/a-much-longer-url", None, "2024-01-01"),
            (1, 3, "https://example.com/b", None, None),  # no time: after any timed page
        ]
    )
    reps = pick_representatives(pages)
    assert reps.loc[1, "representative_id"] == 2
    assert reps.loc[1, "why"] == "earliest fetch"


def test_shortest_url_when_times_do_not_decide() -> None:
    same_time = _frame(
        [
            (1, 1, "https://example.com/longer", None, "2024-01-01"),
            (1, 2, "https://example.com/s", None, "2024-01-01"),
            (1, 3, "https://example.com/mid", None, "2024-01-01"),
        ]
    )
    reps = pick_representatives(same_time)
    assert reps.loc[1, "representative_id"] == 2
    assert reps.loc[1, "why"] == "shortest URL"

    no_times = _frame(
        [
            (5, 7, "https://example.com/longer", None, None),
            (5, 8, "https://example.com/s", None, None),
        ]
    )
    reps = pick_representatives(no_times)
    assert reps.loc[5, "representative_id"] == 8
    assert reps.loc[5, "why"] == "shortest URL"


def test_ties_go_to_the_lowest_page_id() -> None:
    pages = _frame(
        [
            (1, 9, "https://example.com/b", None, "2024-01-01"),
            (1, 4, "https://example.com/a", None, "2024-01-01"),
        ]
    )
    assert pick_representatives(pages).loc[1, "representative_id"] == 4


def test_one_representative_per_cluster() -> None:
    pages = _frame(
        [
            (1, 1, "https://e.com/a", None, "2024-01-02"),
            (1, 2, "https://e.com/b", None, "2024-01-01"),
            (2, 3, "https://e.com/c", None, "2024-01-01"),
            (3, 4, "https://e.com/dd", None, None),
            (3, 5, "https://e.com/d", "https://e.com/dd", None),
        ]
    )
    reps = pick_representatives(pages)
    assert sorted(reps.index.tolist()) == [1, 2, 3]
    assert reps["representative_id"].to_dict() == {1: 2, 2: 3, 3: 4}
    assert reps.loc[2, "why"] == "shortest URL"  # a singleton: nothing to compare


def test_newest_rule_keeps_the_latest_snapshot() -> None:
    pages = _frame(
        [
            (1, 1, "https://example.com/price", None, "2024-01-01"),
            (1, 2, "https://example.com/price?v=2", None, "2024-03-01"),
            (1, 3, "https://example.com/p", None, None),  # no time: after any timed page, under either rule
        ]
    )
    newest = ("canonical", "newest", "shortest")
    reps = pick_representatives(pages, rule=newest)
    assert reps.loc[1, "representative_id"] == 2
    assert reps.loc[1, "why"] == "newest fetch"
    assert pick_representatives(pages).loc[1, "representative_id"] == 1  # the default: earliest
    # rel=canonical still comes first
    named = _frame(
        [
            (1, 1, "https://example.com/price", None, "2024-01-01"),
            (1, 2, "https://example.com/price?v=2", "https://example.com/price", "2024-03-01"),
        ]
    )
    reps = pick_representatives(named, rule=newest)
    assert (reps.loc[1, "representative_id"], reps.loc[1, "why"]) == (1, "named by rel=canonical")


def test_rule_order_and_the_last_tie_break() -> None:
    pages = _frame(
        [
            (1, 1, "https://example.com/a-long-url", None, "2024-01-01"),
            (1, 2, "https://example.com/b", None, "2024-02-01"),
        ]
    )
    reps = pick_representatives(pages, rule=("shortest", "earliest"))
    assert (reps.loc[1, "representative_id"], reps.loc[1, "why"]) == (2, "shortest URL")
    same_time = _frame(
        [
            (1, 7, "https://example.com/b", None, "2024-01-01"),
            (1, 5, "https://example.com/a-long-url", None, "2024-01-01"),
        ]
    )
    reps = pick_representatives(same_time, rule=("earliest",))
    assert (reps.loc[1, "representative_id"], reps.loc[1, "why"]) == (5, "lowest page id")


def test_describe_rule() -> None:
    assert describe_rule() == (
        "the member named by rel=canonical, else the earliest fetch, else the shortest URL, "
        "else the first page loaded"
    )
    assert describe_rule(("newest",)) == "the newest fetch, else the first page loaded"


@st.composite
def _cluster_pages(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    """Pages of a few clusters: URLs from a small set (so rel=canonical names members, outsiders and the
    page itself), fetch times with ties and unknowns, URL lengths with ties, distinct page ids."""
    n = draw(st.integers(1, 40))
    ints = st.integers
    cluster = np.array(draw(st.lists(ints(0, 6), min_size=n, max_size=n)), dtype=np.int64)
    url_id = np.array(draw(st.lists(ints(0, 9), min_size=n, max_size=n)), dtype=np.int64)
    rel_id = np.array(draw(st.lists(ints(-1, 9), min_size=n, max_size=n)), dtype=np.int64)
    fetched = np.array(draw(st.lists(st.sampled_from([-1, 5, 7, 9]), min_size=n, max_size=n)), dtype=np.int64)
    url_len = np.array(draw(st.lists(ints(10, 13), min_size=n, max_size=n)), dtype=np.int64)
    page_id = np.array(draw(st.permutations(range(1, 3 * n + 1)))[:n], dtype=np.int64)
    return cluster, url_id, rel_id, fetched, url_len, page_id


_RULES = [
    rule
    for k in range(1, 4)
    for rule in itertools.permutations(("canonical", "earliest", "newest", "shortest"), k)
    if not {"earliest", "newest"} <= set(rule)
]


@settings(max_examples=300, deadline=None)
@given(_cluster_pages(), st.sampled_from(_RULES))
def test_representatives_by_rank_are_those_of_the_rule(
    pages: tuple[np.ndarray, ...], rule: tuple[str, ...]
) -> None:
    """`cluster_representatives` (one integer per page, made once per rule) chooses the page and the reason
    `representative_rows` (a sort of every criterion) does, for every cluster and rule."""
    cluster, url_id, rel_id, fetched, url_len, page_id = pages
    first, why = representative_rows(cluster, url_id, rel_id, fetched, url_len, page_id, rule)
    ranks = representative_ranks(fetched, url_len, page_id, rule)
    rep, reason = cluster_representatives(cluster, 8, url_id, rel_id, fetched, ranks)
    present = np.unique(cluster)
    assert (rep[present] == first).all() and (reason[present] == why).all()
    assert (rep[np.setdiff1d(np.arange(8), present)] == -1).all()
    # ranks made over more pages than are clustered (the app's: every page, the multi-page clusters' rows)
    sub = np.flatnonzero(cluster > 0)
    if len(sub):
        first, why = representative_rows(*(a[sub] for a in pages), rule)
        part = RepresentativeRanks(rule, ranks.before[sub], ranks.after[sub])
        rep, reason = cluster_representatives(cluster[sub], 8, url_id[sub], rel_id[sub], fetched[sub], part)
        present = np.unique(cluster[sub])
        assert (rep[present] == first).all() and (reason[present] == why).all()
