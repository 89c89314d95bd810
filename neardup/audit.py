"""Everything the Audit / Tune / Clusters views need from the engine, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from .analysis import Fingerprints, pair_scores
from .categories import suggest_category
from .config import Config
from .diff import Segment, word_diff
from .labels import bucket_of, bucket_tallies, consensus_labels, estimates
from .minhash import estimate_jaccard, minhash_many
from .pairkey import PAIR_KEY as PAIR_KEY
from .pairkey import PairKey as PairKey
from .pairkey import key_of, sides_swapped
from .shingles import containment, jaccard, shingle_hashes, shingles, words
from .simhash import hamming, simhash_many
from .store import Store
from .store.labels import LabelRow
from .store.pages import PageRow

_UNIT_PAGE_COLUMNS = ["page_id", "canonical_url", "md5", "host", "fetched_at"]


def unit_pages(fp: Fingerprints) -> pd.DataFrame:
    """One page shown per distinct text (unit), by unit id: the earliest page id, with its canonical URL,
    MD5, host and fetch time. Each text's row is found on the two integer columns, then only those rows
    of the five columns are taken (not the whole pages frame filtered, sorted and grouped)."""
    page_id = fp.pages["page_id"].to_numpy(dtype=np.int64)
    unit = fp.pages["unit_id"].to_numpy(dtype=np.int64)
    content = np.flatnonzero(unit >= 0)
    by_page = content[np.argsort(page_id[content], kind="stable")]
    units, first = np.unique(unit[by_page], return_index=True)
    shown = fp.pages[_UNIT_PAGE_COLUMNS].take(by_page[first])
    shown.index = pd.Index(units, name="unit_id")
    return shown


def first_page_rows(fp: Fingerprints, units: np.ndarray) -> np.ndarray:
    """The row in `fp.pages` of the earliest page (lowest page id) of each of `units` (unit ids, each held
    by a content page), from the arrays alone: no sort or group of a crawl-sized pages frame."""
    unit, page_id = fp.arrays["unit"], fp.arrays["page_id"]
    units = np.asarray(units, dtype=np.int64)
    wanted = np.zeros(fp.n_units + 1, dtype=bool)  # the last slot: unit -1, a degenerate page's
    wanted[units] = True
    rows = np.flatnonzero(wanted[unit])
    rows = rows[np.lexsort((page_id[rows], unit[rows]))]
    first = rows[np.r_[True, unit[rows][1:] != unit[rows][:-1]]] if len(rows) else rows
    at = np.minimum(np.searchsorted(unit[first], units), max(len(first) - 1, 0))
    if len(units) and (not len(first) or not np.array_equal(unit[first[at]], units)):
        raise ValueError("a unit asked for has no content page")
    return first[at]


def candidate_pairs(fp: Fingerprints, config: Config) -> pd.DataFrame:
    """Stored candidate pairs at page level, with score, bucket and the label key of each side
    (canonical URL, MD5 of the page's bytes); sides ordered so that (url_a, md5_a) < (url_b, md5_b).
    Each side is its text's first page (`first_page_rows`); of the pages frame only the paired texts'
    first pages' URLs and MD5s are read."""
    a, b = fp.pairs["a"].astype(np.int64), fp.pairs["b"].astype(np.int64)
    paired = np.zeros(fp.n_units, dtype=bool)
    paired[a] = paired[b] = True
    units = np.flatnonzero(paired)
    rows = first_page_rows(fp, units)
    # The sides' strings stay Arrow's (compared and taken there): no Python string per pair.
    url, md5 = fp.pages["canonical_url"].array.take(rows), fp.pages["md5"].array.take(rows)
    page = fp.arrays["page_id"][rows]
    at_a, at_b = np.searchsorted(units, a), np.searchsorted(units, b)
    swap = sides_swapped(url.take(at_a), md5.take(at_a), url.take(at_b), md5.take(at_b))
    side_a, side_b = np.where(swap, at_b, at_a), np.where(swap, at_a, at_b)
    scores = pair_scores(fp, config)
    return pd.DataFrame(
        {
            "unit_a": units[side_a],
            "unit_b": units[side_b],
            "page_a": page[side_a],
            "page_b": page[side_b],
            "url_a": url.take(side_a),
            "md5_a": md5.take(side_a),
            "url_b": url.take(side_b),
            "md5_b": md5.take(side_b),
            "score": scores,
            "bucket": bucket_of(scores, config),
        }
    )


@dataclass(frozen=True, slots=True)
class PairIndex:
    """Where each candidate pair sits in its frame, by its key and by its two URLs. Built once per pairs
    frame (`pair_index`) and reused: the Audit page matches labels against it on every label."""

    exact: dict[PairKey, int]
    by_urls: dict[tuple[str, str], list[int]]


def pair_index(pairs: pd.DataFrame) -> PairIndex:
    keys: list[PairKey] = list(zip(*(pairs[c].to_numpy() for c in PAIR_KEY), strict=True))
    by_urls: dict[tuple[str, str], list[int]] = {}
    for i, (a, _, b, _) in enumerate(keys):
        by_urls.setdefault((a, b), []).append(i)
    return PairIndex({k: i for i, k in enumerate(keys)}, by_urls)


_MATCHED = [*PAIR_KEY, "bucket", "score"]


def labeled_pairs(
    pairs: pd.DataFrame, labels: pd.DataFrame, *, index: PairIndex | None = None
) -> pd.DataFrame:
    """Labels that match a candidate pair of the current setting, with that pair's key, bucket and score.

    Several labelers' labels of a pair count as one: `neardup.labels.consensus_labels`.
    A label with content hashes matches its exact pair; one without (md5 "") matches every candidate
    pair between those two URLs; an exact label wins over a URL-only one for the same pair.
    `index` is `pair_index(pairs)`, when the caller keeps one.
    """
    if labels.empty or pairs.empty:
        return pd.DataFrame(columns=[*_MATCHED, "label"])
    labels = consensus_labels(labels).reset_index(drop=True)
    # Plain dicts over the key columns: the Audit page runs this on every label, and pandas merges on four
    # string columns cost tenths of a second where a dict lookup per label costs microseconds.
    index = index or pair_index(pairs)
    pair_rows: list[int] = []
    label_rows: list[int] = []
    taken: set[int] = set()
    loose = []
    for j, (a, ma, b, mb) in enumerate(zip(*(labels[c].to_numpy() for c in PAIR_KEY), strict=True)):
        if ma == "" and mb == "":
            loose.append((j, a, b))
        pos = index.exact.get(PairKey(a, ma, b, mb))
        if pos is not None and pos not in taken:
            taken.add(pos)
            pair_rows.append(pos)
            label_rows.append(j)
    for j, a, b in loose:  # an exact label wins over a URL-only one for the same pair
        for i in index.by_urls.get((a, b), ()):
            if i not in taken:
                taken.add(i)
                pair_rows.append(i)
                label_rows.append(j)
    matched = pairs.iloc[pair_rows][_MATCHED].reset_index(drop=True)
    extra = labels.iloc[label_rows].drop(columns=PAIR_KEY).reset_index(drop=True)
    return pd.concat([matched, extra], axis=1)


def labeled_pairs_after(
    pairs: pd.DataFrame, labels: pd.DataFrame, matched: pd.DataFrame, key: PairKey, *, index: PairIndex
) -> pd.DataFrame:
    """`labeled_pairs(pairs, labels)` once the label of pair `key` was written, from `matched` (the result
    before it): the common case, the first label of any pair between those two URLs and an exact candidate
    pair, appends one row; anything else (a second labeler, a changed label, a URL-only label) recomputes."""
    a, ma, b, mb = key
    pos = index.exact.get(key)
    rows = np.flatnonzero((labels["url_a"].to_numpy() == a) & (labels["url_b"].to_numpy() == b))
    if pos is None or not ma or not mb or len(rows) != 1 or matched.empty:
        return labeled_pairs(pairs, labels, index=index)
    if ((matched["url_a"].to_numpy() == a) & (matched["url_b"].to_numpy() == b)).any():
        return labeled_pairs(pairs, labels, index=index)  # its one label replaced one matched before
    label = labels.iloc[rows].drop(columns=PAIR_KEY).reset_index(drop=True)
    row = pd.concat(
        [pairs.iloc[[pos]][_MATCHED].reset_index(drop=True), label.assign(labelers=1, contested=False)],
        axis=1,
    )
    return pd.concat([matched, row[matched.columns]], ignore_index=True)


def _label_rows(labels: pd.DataFrame, key: PairKey, labeler: str | None) -> np.ndarray:
    """Which rows of `labels` (`Store.labels()`) are `labeler`'s labels of pair `key` (a null labeler: the
    rows without one)."""
    who = labels["labeler"]
    same = (who.isna() if labeler is None else who == labeler).to_numpy(dtype=bool, copy=True)
    for column, value in zip(PAIR_KEY, key, strict=True):
        same &= labels[column].to_numpy() == value
    return same


def label_in(labels: pd.DataFrame, key: PairKey, labeler: str | None) -> LabelRow | None:
    """This labeler's label of pair `key` in `labels` (`Store.labels()`), as `Store.label_of` gives it: a
    missing value is None (a column of strings and nulls comes as NaN, which a write would keep as 'nan')."""
    rows = labels[_label_rows(labels, key, labeler)]
    if rows.empty:
        return None
    return cast(
        LabelRow, {k: None if not isinstance(v, str) and pd.isna(v) else v for k, v in rows.iloc[-1].items()}
    )


def labels_with(labels: pd.DataFrame, row: dict[str, Any]) -> pd.DataFrame:
    """`labels` (`Store.labels()`) once `Store.record_label` has stored `row` (one row of that frame, the
    sides in sorted order as the store keeps them): this labeler's earlier label of the pair replaced, the
    new one last, the newest. The Audit page draws the next pair from this and writes the label after."""
    same = _label_rows(labels, key_of(row), row["labeler"])
    added = pd.DataFrame([row], columns=labels.columns)
    kept = labels[~same]
    return added if kept.empty else pd.concat([kept, added], ignore_index=True)


def tune_tables(fp: Fingerprints, config: Config, labels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-bucket tallies, per-threshold estimates) for the Tune view."""
    pairs = candidate_pairs(fp, config)
    tallies = bucket_tallies(pairs["bucket"], labeled_pairs(pairs, labels))
    return tallies, estimates(tallies, config)


@dataclass(frozen=True, slots=True)
class PairDetail:
    left: PageRow  # the earlier fetch
    right: PageRow
    exact_jaccard: float
    exact_containment: float
    simhash_bits: int
    minhash_jaccard: float
    segments: list[Segment] = field(default_factory=list)  # word diff, left -> right
    same_text: bool = False  # the same words after normalization: an exact duplicate
    category: str = "other"  # the suggested category (one of labels.CATEGORIES) ...
    category_reason: str = ""  # ... and why


def _fetch_order(page: PageRow) -> tuple[bool, Any, int, str]:
    fetched = page.get("fetched_at")
    missing = fetched is None or bool(pd.isna(fetched))
    return missing, None if missing else pd.Timestamp(fetched), len(page["url"]), page["url"]


def pair_detail(
    store: Store, page_a: int, page_b: int, config: Config, *, keep_order: bool = False
) -> PairDetail:
    """Both pages (text and metadata; `Store.page_source` reads the raw HTML when it is shown), the earlier
    fetch on the left (`keep_order`: page_a, e.g. a cluster's representative), their similarity by every
    measure, their word diff and a suggested category, computed now."""
    left = store.page(page_a, config.norm_key, source=False)
    right = store.page(page_b, config.norm_key, source=False)
    if left is None or right is None:
        raise KeyError(f"page {page_a if left is None else page_b} is not in the database")
    if not keep_order and _fetch_order(right) < _fetch_order(left):
        left, right = right, left
    k = config.shingle_size
    wa, wb = words(left["text"] or ""), words(right["text"] or "")
    sa, sb = shingles(wa, k), shingles(wb, k)
    ha, hb = shingle_hashes(wa, k), shingle_hashes(wb, k)
    fps = simhash_many([ha, hb])
    sigs = minhash_many([ha, hb], config.num_perm, config.seed)
    segments = word_diff(left["text"] or "", right["text"] or "")
    c = containment(sa, sb)
    same_text = wa == wb
    category, reason = suggest_category(
        left, right, exact_containment=c, segments=segments, same_text=same_text
    )
    return PairDetail(
        left=left,
        right=right,
        exact_jaccard=jaccard(sa, sb),
        exact_containment=c,
        simhash_bits=hamming(int(fps[0]), int(fps[1])),
        minhash_jaccard=float(estimate_jaccard(sigs[0], sigs[1])),
        segments=segments,
        same_text=same_text,
        category=category,
        category_reason=reason,
    )


def cluster_members(
    pages: pd.DataFrame, cluster_id: int, categories: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The pages of a cluster, its representative first; with `categories` (`categories.page_categories`)
    each page's category and suggested action relative to the representative."""
    members = pages[pages["cluster_id"] == cluster_id]
    if categories is not None:
        members = members.assign(
            category=categories.loc[members.index, "category"],
            action=categories.loc[members.index, "suggested_action"],
        )
    cols = [
        "page_id",
        "url",
        "canonical_url",
        "host",
        "fetched_at",
        "is_representative",
        "similarity_to_representative",
        "rel_canonical",
        *(["category", "action"] if categories is not None else []),
    ]
    out = members.sort_values(["is_representative", "page_id"], ascending=[False, True])[cols].reset_index(
        drop=True
    )
    rep = out.loc[out["is_representative"], "url"]
    if len(rep):
        differs = [url_difference(u, rep.iloc[0]) or "(same URL)" for u in out["url"]]
        out.insert(1, "url_differs", ["", *differs[1:]])  # the representative comes first
    return out


def url_difference(url: str, reference: str) -> str:
    """What `url` has where it differs from `reference`: from the start of the path segment (or query
    parameter) where the two part ways, '...'-prefixed; '' for the same URL. A table cell cuts a long URL at
    its end, where the differing tails (?utm_source=, ?fbclid=, /print) are; this shows them."""
    if url == reference:
        return ""
    n = 0
    for x, y in zip(url, reference, strict=False):
        if x != y:
            break
        n += 1
    cut = max(url.rfind(sep, 0, n + 1) for sep in "/?&#")
    start = cut if cut > url.find("//") + 1 else 0
    return url if start == 0 else "..." + url[start:]


def labels_by_labeler(pairs: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per (candidate pair, labeler) with that labeler's label: the pair's key and bucket, `labeler`
    and `label` (for `neardup.labels.agreement_table`). Matched as `labeled_pairs` matches (an exact label of a
    labeler wins over their URL-only one); labels of pairs that are no candidate at this setting are left out."""
    cols = [*PAIR_KEY, "bucket", "labeler", "label"]
    if labels.empty or pairs.empty:
        return pd.DataFrame(columns=cols)
    keys = list(zip(*(pairs[c].to_numpy() for c in PAIR_KEY), strict=True))
    exact_pos = {k: i for i, k in enumerate(keys)}
    by_urls: dict[tuple[str, str], list[int]] = {}
    for i, (a, _, b, _) in enumerate(keys):
        by_urls.setdefault((a, b), []).append(i)
    latest = labels.sort_values("labeled_at", kind="stable") if "labeled_at" in labels else labels
    seen: dict[tuple[int, object], str] = {}
    loose: list[tuple[str, str, object, str]] = []
    for a, ma, b, mb, who, label in zip(
        *(latest[c].to_numpy() for c in PAIR_KEY),
        latest["labeler"].to_numpy(),
        latest["label"].to_numpy(),
        strict=True,
    ):
        who = None if who is None or (isinstance(who, float) and np.isnan(who)) else who
        if not ma and not mb:
            loose.append((a, b, who, label))
        elif (pos := exact_pos.get((a, ma, b, mb))) is not None:
            seen[(pos, who)] = label
    for a, b, who, label in loose:
        for i in by_urls.get((a, b), ()):
            seen.setdefault((i, who), label)
    if not seen:
        return pd.DataFrame(columns=cols)
    rows = [i for i, _ in seen]
    out = pairs.iloc[rows][[*PAIR_KEY, "bucket"]].reset_index(drop=True)
    return out.assign(labeler=[w for _, w in seen], label=list(seen.values()))


def method_disagreements(
    simhash_pairs: pd.DataFrame, minhash_pairs: pd.DataFrame, *, simhash_bits: int, minhash_threshold: float
) -> pd.DataFrame:
    """Pairs one method flags as duplicates and the other does not, at the two thresholds.

    Both frames are `candidate_pairs` of the same texts under each method (a pair that is no candidate of a
    method is not flagged by it). One row per pair: its key, `page_a`, `page_b`, `simhash_bits` and
    `minhash_score` (NaN where the method did not make it a candidate), `flagged_by` ("SimHash" or
    "MinHash"), the pairs nearest either threshold first.
    """
    sim = simhash_pairs.loc[simhash_pairs["score"] <= simhash_bits, [*PAIR_KEY, "page_a", "page_b", "score"]]
    mh = minhash_pairs.loc[
        minhash_pairs["score"] >= minhash_threshold - 1e-9, [*PAIR_KEY, "page_a", "page_b"]
    ]
    flagged = pd.concat([sim.drop(columns="score"), mh], ignore_index=True).drop_duplicates(PAIR_KEY)
    flagged = flagged.merge(
        simhash_pairs[[*PAIR_KEY, "score"]].rename(columns={"score": "simhash_bits"}), on=PAIR_KEY, how="left"
    ).merge(
        minhash_pairs[[*PAIR_KEY, "score"]].rename(columns={"score": "minhash_score"}),
        on=PAIR_KEY,
        how="left",
    )
    by_sim = flagged["simhash_bits"] <= simhash_bits
    by_mh = flagged["minhash_score"] >= minhash_threshold - 1e-9
    out = flagged[by_sim != by_mh].assign(flagged_by=np.where(by_sim[by_sim != by_mh], "SimHash", "MinHash"))
    # nearest a threshold first: how far the flagging method's score is past its threshold, in its own units
    past = np.where(
        out["flagged_by"] == "SimHash",
        (simhash_bits - out["simhash_bits"]) / max(simhash_bits, 1),
        (out["minhash_score"] - minhash_threshold) / max(1 - minhash_threshold, 1e-9),
    )
    return (
        out.assign(_p=past)
        .sort_values(["_p", *PAIR_KEY], kind="stable")
        .drop(columns="_p")
        .reset_index(drop=True)
    )
