"""What each duplicate copy is, relative to the page kept in its place, and what to do about it: one rule
table for the Audit page's suggestion (`suggest_category`), the Clusters page and every export
(`page_categories`).

A copy's category comes from its URL, host and text against its representative's (`suggest_category`, the
rule the Audit page applies to a pair), or from an analyst's label of that pair. Its action is the rule
table's (`ACTIONS`) for a copy deduplication removes: none says "keep both", as the copy is not kept. A
cluster's category is its members' most frequent one.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

import numpy as np
import pandas as pd

from .diff import Segment, word_changes
from .labels import CATEGORIES
from .shingles import containment, shingle_tuples, words
from .stages.base import Progress

if TYPE_CHECKING:
    from .analysis import Analysis
    from .store import Store

# What to do about a copy deduplication removes, by its category. A templated sibling or an "other" copy is
# removed at this threshold although it may be another page: the action says how to keep it, never "keep both".
ACTIONS: dict[str, str] = {
    "URL variant": "drop: the same page at another URL; canonicalize these URLs in the frontier",
    "noise re-fetch": "drop: a re-fetch whose content did not change",
    "stale re-crawl": "drop: an older fetch of the page kept",
    "print version": "drop the print copy (or exclude print URLs from the frontier)",
    "syndicated": "drop the copy, or attribute it to the page kept",
    "regional mirror": "drop this market's copy; tag it with the page kept as one product",
    "templated siblings": "review: may be another page sharing a template; to keep it, tighten normalization "
    "or raise the threshold",
    "degenerate": "a scrape failure, not a duplicate: re-fetch",
    "other": "review the pair",
}
# A stale re-crawl newer than its representative: the newer fetch is the one to keep.
NEWER_STALE_ACTION = "removed, yet the newer fetch: keep it instead (representative: newest)"
KEEP_ACTION = "keep"  # a representative, or a unique page (a cluster of one)
REPRESENTATIVE_ACTION = "keep: the cluster's representative"
TEXT_BATCH_ROWS = 2048
# Texts read at once when categories are computed: pairs go through in runs that need at most this many
# (~5 KB each on the bench crawl). Each run is one query, and DuckDB decompresses the text column's
# segments whatever share of their rows is wanted (~7.5 CPU-s a scan at 1M pages), so the runs are few:
# a 1M-page crawl's ~120,000 texts are one.
TEXT_CHUNK_UNITS = 262_144
CATEGORIES_STAGE = "pairs compared"
PROGRESS_PAIRS = 1024  # pairs between two progress reports


_PRINT_URL = re.compile(
    r"(?:^|[/?&=._-])(?:print|printable|drucken|druckversion|imprimir|imprimer)(?:$|[/?&=._-])", re.IGNORECASE
)
_REGION_LABEL = re.compile(r"^[a-z]{2}(?:-[a-z]{2})?$")  # de, en-us: a language or region in a host or path
_DIGIT = re.compile(r"\d")
# A re-fetch that rewrote a sentence or more inside its text is a stale re-crawl (the sample crawl's edits
# replace a sentence); fewer rewritten words are noise (tokens, dates, counters), unless they are a price, and
# so are a box added or taken out whole and a changed first line (a rotated banner or promo line).
STALE_CHANGED_WORDS = 8
_PRICE = re.compile(r"[$€£]\s?\d|\d[.,]\d\d\b")
# Pages of one host with less exact containment than this share a template, not their content.
SIBLING_CONTAINMENT = 0.9


def _is_price_change(seg: Segment) -> bool:
    """A replacement of at most two words on each side, a price on both ("$18.99" -> "$16.99")."""
    return (
        seg.op == "replace"
        and seg.n_words <= 2
        and bool(_PRICE.search(seg.left))
        and bool(_PRICE.search(seg.right))
    )


def _rewritten_words(segments: list[Segment]) -> int:
    """Words replaced inside the text: not the changes before its first unchanged run (a banner or promo
    line that rotates between fetches), and not a block only inserted or only deleted (a box)."""
    started = False
    n = 0
    for seg in segments:
        if seg.op in ("equal", "fold"):
            started = True
        elif started and seg.op == "replace":
            n += seg.n_words
    return n


def _split(url: str) -> SplitResult:
    """The URL's parts, or no parts for one `urlsplit` refuses (a crawled URL with an unbalanced `[`)."""
    try:
        return urlsplit(url)
    except ValueError:
        return urlsplit("")


def _without_region(host: str, path: str) -> tuple[str, str]:
    labels = host.split(".")
    if len(labels) > 2 and _REGION_LABEL.match(labels[0]):
        labels = labels[1:]
    parts = path.split("/")
    if len(parts) > 2 and _REGION_LABEL.match(parts[1].lower()):
        parts = [parts[0], *parts[2:]]
    return ".".join(labels), "/".join(parts)


def suggest_category(
    left: Mapping[str, Any],
    right: Mapping[str, Any],
    *,
    exact_containment: float,
    segments: list[Segment],
    same_text: bool | None = None,
) -> tuple[str, str]:
    """The likely kind of duplicate (one of labels.CATEGORIES) and the evidence, from the URLs, hosts and
    texts of a pair, the earlier fetch `left` (each a dict with url, canonical_url, degenerate, n_words).
    A heuristic for the analyst to confirm: the label is theirs.

    `segments` is the pair's word diff; only a re-fetch of one canonical URL reads it. `same_text` (the same
    words after normalization) defaults to a diff without changes; `exact_containment` is read only for
    pages at two URLs of one site."""
    for page in (left, right):
        if isinstance(page.get("degenerate"), str) and page["degenerate"]:
            return "degenerate", f"{page['url']} is set aside: {page['degenerate']}"
    changed = [seg for seg in segments if seg.op in ("delete", "insert", "replace")]
    n_changed = sum(seg.n_words for seg in changed)
    n_words = max(int(left.get("n_words") or 0), int(right.get("n_words") or 0), 1)
    numbers_changed = any(_DIGIT.search(seg.left + " " + seg.right) for seg in changed)
    same_text = not changed if same_text is None else same_text
    ua, ub = _split(left["canonical_url"]), _split(right["canonical_url"])
    if left["canonical_url"] == right["canonical_url"]:
        if left["url"] != right["url"]:
            return "URL variant", (
                "same canonical URL: only tracking parameters, scheme, www or a slash differ"
                + (", same text" if same_text else f"; {n_changed:,} words differ")
            )
        if same_text:
            return "noise re-fetch", "the same URL fetched again, same text"
        if (
            numbers_changed
            and n_changed <= 2
            and _PRICE.search(" ".join(s.left + " " + s.right for s in changed))
        ):
            words = f"{n_changed:,} word" + ("" if n_changed == 1 else "s")
            return "stale re-crawl", f"same URL fetched later, a price changed ({words})"
        # A price replaced on its own stales the page even when a banner rotated in the same fetch; a
        # banner's own prices come in a longer line ("Free shipping on orders over $50").
        price = next((seg for seg in changed if _is_price_change(seg)), None)
        if price is not None:
            return (
                "stale re-crawl",
                f"same URL fetched later, a price changed ({price.left} -> {price.right})",
            )
        rewritten = _rewritten_words(segments)
        if rewritten >= STALE_CHANGED_WORDS:
            return "stale re-crawl", f"same URL fetched later, {rewritten:,} words of the text rewritten"
        return "noise re-fetch", (
            f"same URL, {n_changed:,} of {n_words:,} words differ: "
            + ("a box added or removed, or the first line" if rewritten == 0 else "a few words")
        )
    if bool(_PRINT_URL.search(ua.path + "?" + ua.query)) != bool(_PRINT_URL.search(ub.path + "?" + ub.query)):
        return "print version", f"a print marker in one URL, containment {exact_containment:.2f}"
    if ua.hostname != ub.hostname:
        (site_a, path_a), (site_b, path_b) = (
            _without_region(ua.hostname or "", ua.path),
            _without_region(ub.hostname or "", ub.path),
        )
        if site_a != site_b:
            return "syndicated", f"different hosts, containment {exact_containment:.2f}"
        if path_a == path_b:
            return (
                "regional mirror",
                f"hosts or paths differ by a region or language label ({ua.hostname}, {ub.hostname})",
            )
        # One shop in two markets at other paths: another product in the same template (its spec table
        # and family text), unless the text is all but the same (a localized slug of one product).
        markets = (
            f"one site in two markets ({ua.hostname}, {ub.hostname}) at other paths, "
            f"exact containment {exact_containment:.2f}"
        )
        if exact_containment < SIBLING_CONTAINMENT:
            return "templated siblings", f"{markets}: a shared template"
        return "regional mirror", markets
    if same_text:
        return "URL variant", "same host, the same text at two URLs"
    if exact_containment < SIBLING_CONTAINMENT:
        return (
            "templated siblings",
            f"same host, exact containment {exact_containment:.2f}: a shared template",
        )
    return "URL variant", f"same host, two URLs, containment {exact_containment:.2f}"


def removed_action(category: str, *, newer_than_kept: bool = False) -> str:
    """The action for a copy of `category` that deduplication removes (`newer_than_kept`: fetched after
    the page kept in its place, which matters for a stale re-crawl only)."""
    if category == "stale re-crawl" and newer_than_kept:
        return NEWER_STALE_ACTION
    return ACTIONS.get(category, ACTIONS["other"])


def _fetched_key(fetched: Any, url: str) -> tuple[bool, Any, int, str]:
    missing = fetched is None or bool(pd.isna(fetched))
    return missing, None if missing else pd.Timestamp(fetched), len(url), url


def _texts(store: Store, norm_key: str, exact_keys: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if exact_keys:
        for batch in store.unit_texts(norm_key, sorted(exact_keys), TEXT_BATCH_ROWS):
            out.update(zip(batch["exact_key"].tolist(), batch["text"].tolist(), strict=True))
    return out


def _needs_text(member: dict[str, Any], rep: dict[str, Any]) -> bool:
    """Whether the rule's category reads the two texts for this pair (see `suggest_category`): a re-fetch of
    one URL (its word diff), or two URLs of one site whose texts differ (their containment). Two URLs of one
    canonical URL are a URL variant whatever their texts (only the evidence counts the words that differ)."""
    if member["unit_id"] == rep["unit_id"]:
        return False
    if member["canonical_url"] == rep["canonical_url"]:
        return bool(member["url"] == rep["url"])
    ua, ub = _split(member["canonical_url"]), _split(rep["canonical_url"])
    if bool(_PRINT_URL.search(ua.path + "?" + ua.query)) != bool(_PRINT_URL.search(ub.path + "?" + ub.query)):
        return False
    return _without_region(ua.hostname or "", "")[0] == _without_region(ub.hostname or "", "")[0]


def _copy_categories(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], texts: dict[str, str], shingle_size: int
) -> Iterator[str]:
    """`suggest_category`'s category of each (copy, representative) pair, its texts read from `texts`
    where the category needs them (`_needs_text`; the evidence, not returned, may want more)."""
    for member, rep in pairs:
        left, right = (
            (rep, member)
            if _fetched_key(rep["fetched_at"], rep["url"])
            <= _fetched_key(member["fetched_at"], member["url"])
            else (member, rep)
        )
        same = member["unit_id"] == rep["unit_id"]
        segments: list[Segment] = []
        c = 1.0 if same else 0.0
        if not same and member["exact_key"] in texts and rep["exact_key"] in texts:
            ta, tb = texts[left["exact_key"]], texts[right["exact_key"]]
            if member["canonical_url"] == rep["canonical_url"]:
                if member["url"] == rep["url"]:
                    segments = word_changes(ta, tb)
            else:
                c = containment(
                    shingle_tuples(words(ta), shingle_size), shingle_tuples(words(tb), shingle_size)
                )
        yield suggest_category(left, right, exact_containment=c, segments=segments, same_text=same)[0]


def _text_runs(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], max_units: int
) -> Iterator[tuple[int, int, set[str]]]:
    """(start, stop, exact keys): consecutive runs of `pairs` and the texts their categories read
    (`_needs_text`), each run needing at most `max_units` texts (or one pair's two)."""
    start, wanted = 0, set[str]()
    for k, (member, rep) in enumerate(pairs):
        if not _needs_text(member, rep):
            continue
        keys = (member["exact_key"], rep["exact_key"])
        if wanted and len(wanted) + sum(key not in wanted for key in keys) > max_units:
            yield start, k, wanted
            start, wanted = k, set()
        wanted.update(keys)
    yield start, len(pairs), wanted


def _labeled_pages(pages: pd.DataFrame, labels: pd.DataFrame | None) -> pd.Series:
    """Category per page (index: page_id) from the labels of a pair it forms with its representative, the
    latest label winning. A side is (canonical URL, MD5); a label without MD5s ("") matches any page at
    those URLs (`Store.labels`)."""
    empty = pd.Series([], dtype=object, name="category")
    if labels is None or labels.empty or "category" not in labels:
        return empty
    lab = labels[labels["category"].isin(CATEGORIES)]
    if "labeled_at" in lab:
        lab = lab.sort_values("labeled_at", kind="stable")
    if lab.empty:
        return empty
    p = pages[pages["cluster_id"].notna() & ~pages["is_representative"].astype(bool)]
    by_id = pages.set_index("page_id")
    rep = by_id.loc[p["representative_id"].to_numpy(dtype=np.int64)]
    side = {
        "member": list(zip(p["canonical_url"], p["md5"], strict=True)),
        "rep": list(zip(rep["canonical_url"], rep["md5"], strict=True)),
    }
    exact: dict[tuple[str, str, str, str], str] = {}
    loose: dict[tuple[str, str], str] = {}
    for a, ma, b, mb, category in zip(
        lab["url_a"],
        lab["md5_a"].fillna(""),
        lab["url_b"],
        lab["md5_b"].fillna(""),
        lab["category"],
        strict=True,
    ):
        for key in ((a, ma, b, mb), (b, mb, a, ma)):
            if key[1] or key[3]:
                exact[key] = category
            else:
                loose[(key[0], key[2])] = category
    out = {}
    for page_id, (mu, mm), (ru, rm) in zip(p["page_id"], side["member"], side["rep"], strict=True):
        found = exact.get((mu, mm, ru, rm)) or loose.get((mu, ru))
        if found:
            out[int(page_id)] = found
    return pd.Series(out, dtype=object, name="category")


def cluster_category(categories: pd.Series) -> str:
    """A cluster's category from its copies' (its members but the representative): the most frequent, a tie
    going to the one listed first in labels.CATEGORIES."""
    counts = Counter(c for c in categories if c)
    if not counts:
        return ""
    return min(
        counts, key=lambda c: (-counts[c], CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES))
    )


# Suggestions a `SuggestionMemo` keeps: beyond this many it starts again (a few crawls' removed pages).
MEMO_MAX_PAIRS = 4_000_000


class SuggestionMemo:
    """The suggested category of each (copy, representative) pair of pages computed so far, and whether the
    copy is the newer fetch, for one
    database, normalization, shingle size and set of URL rules (what a suggestion depends on besides the
    two pages): a threshold move changes a few representatives, so only the pairs it forms anew are read
    and compared. Another scope starts it afresh."""

    def __init__(self, max_pairs: int = MEMO_MAX_PAIRS) -> None:
        self.max_pairs = max_pairs
        self._lock = threading.Lock()
        self._scope: tuple[object, ...] | None = None
        self._names: dict[tuple[int, int], tuple[str, bool]] = {}

    def known(self, scope: tuple[object, ...], pairs: list[tuple[int, int]]) -> list[tuple[str, bool] | None]:
        with self._lock:
            if scope != self._scope:
                self._scope, self._names = scope, {}
            return [self._names.get(pair) for pair in pairs]

    def add(self, scope: tuple[object, ...], names: dict[tuple[int, int], tuple[str, bool]]) -> None:
        with self._lock:
            if scope != self._scope:
                return
            if len(self._names) + len(names) > self.max_pairs:
                self._names = {}
            self._names.update(names)

    def clear(self) -> None:
        with self._lock:
            self._scope, self._names = None, {}


def _cluster_categories(cluster: np.ndarray, category: np.ndarray) -> pd.Series:
    """`cluster_category` of each cluster's copies (`cluster`, `category`: one row per copy), by cluster."""
    named = pd.DataFrame({"cluster": cluster, "category": category})
    named = named[named["category"].astype(bool)]
    counts = named.groupby(["cluster", "category"], sort=False).size().reset_index(name="n")
    rank = {c: i for i, c in enumerate(CATEGORIES)}
    counts["rank"] = counts["category"].map(lambda c: rank.get(c, len(CATEGORIES)))
    counts = counts.sort_values(["cluster", "n", "rank"], ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates("cluster").set_index("cluster")["category"]


def page_categories(
    store: Store,
    analysis: Analysis,
    labels: pd.DataFrame | None = None,
    *,
    memo: SuggestionMemo | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Per page of `analysis.pages` (same index): `category` of the page relative to its representative (""
    for a representative or a unique page), `category_from` ("label", "URLs and text" or ""),
    `suggested_action` and `cluster_category` (its cluster's, from its copies; "" for a unique page).

    A degenerate page has the category "degenerate" (it has no cluster). The texts of the pairs the rule
    reads (`_needs_text`) are read from `store` at the analysis' normalization, a run of pairs at a time;
    with `memo`, only for the pairs it does not hold. `progress(stage, pairs done, pairs)` follows the
    pairs compared."""
    p = analysis.pages
    n = len(p)
    category = np.full(n, "", dtype=object)
    source = np.full(n, "", dtype=object)
    action = np.full(n, KEEP_ACTION, dtype=object)
    in_cluster = p["cluster_id"].notna().to_numpy()
    is_rep = p["is_representative"].fillna(False).to_numpy(dtype=bool)
    degenerate = ~in_cluster
    category[degenerate] = "degenerate"
    action[degenerate] = ACTIONS["degenerate"]
    multi = in_cluster & (p["cluster_size"].fillna(0).to_numpy() > 1)
    action[multi & is_rep] = REPRESENTATIVE_ACTION

    removed = np.flatnonzero(in_cluster & ~is_rep)
    page_id = p["page_id"].to_numpy(dtype=np.int64)
    row_of = pd.Series(np.arange(n), index=page_id)
    rep_rows = row_of.reindex(p["representative_id"].to_numpy()[removed].astype(np.int64)).to_numpy()
    config = analysis.config
    scope = (store.path, config.norm_key, config.shingle_size, config.url_rules)
    ids = list(zip(page_id[removed].tolist(), page_id[rep_rows].tolist(), strict=True))
    found: list[tuple[str, bool] | None] = memo.known(scope, ids) if memo is not None else [None] * len(ids)
    new = [k for k, known in enumerate(found) if known is None]
    # Only the pages of pairs not suggested before are read as records.
    cols = ["page_id", "url", "canonical_url", "fetched_at", "degenerate", "n_words", "unit_id", "exact_key"]
    rows = np.unique(np.concatenate([removed[new], rep_rows[new]])) if new else np.empty(0, dtype=np.int64)
    picked = p.iloc[rows]
    records = {
        row: dict(zip(cols, values, strict=True))
        for row, values in zip(
            rows.tolist(), zip(*(picked[c].tolist() for c in cols), strict=True), strict=True
        )
    }
    pairs = [(records[int(removed[k])], records[int(rep_rows[k])]) for k in new]
    names: list[str] = []
    if progress is not None:
        progress(CATEGORIES_STAGE, 0, len(pairs))
    for start, stop, wanted in _text_runs(pairs, TEXT_CHUNK_UNITS):
        texts = _texts(store, config.norm_key, wanted)
        for done, name in enumerate(
            _copy_categories(pairs[start:stop], texts, config.shingle_size), start + 1
        ):
            names.append(name)
            if progress is not None and (done % PROGRESS_PAIRS == 0 or done == len(pairs)):
                progress(CATEGORIES_STAGE, done, len(pairs))
    suggested: dict[tuple[int, int], tuple[str, bool]] = {}
    for k, (member, rep), name in zip(new, pairs, names, strict=True):
        newer = _fetched_key(rep["fetched_at"], rep["url"]) < _fetched_key(
            member["fetched_at"], member["url"]
        )
        found[k] = suggested[ids[k]] = (name, newer)
    if memo is not None:
        memo.add(scope, suggested)
    labeled = _labeled_pages(p, labels).to_dict()
    for i, (pid, _), known in zip(removed.tolist(), ids, found, strict=True):
        name, newer = known if known is not None else ("", False)
        if pid in labeled:
            name, source[i] = labeled[pid], "label"
        else:
            source[i] = "URLs and text"
        category[i] = name
        action[i] = removed_action(name, newer_than_kept=newer)

    cluster = p["cluster_id"].to_numpy()
    per_cluster = _cluster_categories(cluster[removed].astype(np.int64), category[removed])
    cluster_cat = np.full(n, "", dtype=object)
    cluster_cat[degenerate] = "degenerate"
    at = np.flatnonzero(multi)
    cluster_cat[at] = per_cluster.reindex(cluster[at].astype(np.int64)).fillna("").to_numpy()
    return pd.DataFrame(
        {
            "category": category,
            "category_from": source,
            "suggested_action": action,
            "cluster_category": cluster_cat,
        },
        index=p.index,
    )
