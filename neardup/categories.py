"""What each duplicate copy is, relative to the page kept in its place, and what to do about it: one rule
table for the Audit page's suggestion (`suggest_category`), the Clusters page and every export
(`page_categories`).

A copy's category comes from its URL, host and text against its representative's (`suggest_category`, the
rule the Audit page applies to a pair), or from an analyst's label of that pair. Its action is the rule
table's (`ACTIONS`) for a copy deduplication removes: none says "keep both", as the copy is not kept. A
cluster's category is its members' most frequent one.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

import numpy as np
import pandas as pd
import pyarrow as pa

from .config import Config
from .diff import Segment, word_changes
from .errors import DatabaseLocked, NeardupError
from .labels import CATEGORIES
from .parallel import parallel_map
from .shingles import containment, shingle_tuples, words
from .stages.base import Progress
from .urls import apply_url_rules

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
# The version of the rule table (`suggest_category`, `_needs_text` and what `_copy_categories` reads): a part
# of the key stored suggestions are kept under (`suggestion_key`), so that suggestions of another rule are not
# read. Bump it with any change to the category a pair gets.
RULES_VERSION = 1
# Texts a comparison of pairs holds at once: they are read a window of page ids at a time (~5 KB a text on the
# bench crawl), and a text a later window's pair needs too is kept until then, up to `PENDING_TEXTS` of them
# (beyond, that pair waits for another pass over the texts). A window's read decompresses only the row groups
# and vectors holding its pages (`Store.texts_of_pages`).
WINDOW_TEXTS = 8192
PENDING_TEXTS = 16_384
PAIRS_PER_BATCH = 1024  # pairs a worker compares at a time (a unit of progress)
PARALLEL_PAIRS = 4096  # below this many pairs to compare, a worker pool costs more than it saves
CATEGORIES_STAGE = "pairs compared"
# Copies whose pairs are compared at a time: their records (and, where the pages frame lacks them, their
# fields read from the store) are held for that many pairs only, whatever the crawl's size.
COPIES_PER_READ = 65_536


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


def _cluster_categories(
    cluster: np.ndarray, codes: np.ndarray, rank: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`cluster_category` of each cluster's copies, over category codes (`cluster`, `codes`: one row per copy;
    `rank[code]`: its category's place in labels.CATEGORIES, negative for none): (clusters ascending, the
    code of each one's category)."""
    named = rank[codes] >= 0
    width = np.int64(len(rank))
    pairs, counts = np.unique(cluster[named].astype(np.int64) * width + codes[named], return_counts=True)
    clusters, chosen = pairs // width, pairs % width
    order = np.lexsort((rank[chosen], -counts, clusters))
    first = order[np.r_[True, clusters[order][1:] != clusters[order][:-1]]] if len(order) else order
    return clusters[first], chosen[first]


def _coded_column(codes: np.ndarray, names: list[str]) -> pd.Categorical:
    """`names[codes]` as a categorical column: a code a page and the names once (a threshold move on a large
    crawl makes four such columns; strings a page would cost a take of a million of them each). `names` may
    repeat (two categories, one action): each name is one category."""
    remap, uniques = pd.factorize(pd.Index(names))
    return pd.Categorical.from_codes(
        np.asarray(remap, dtype=np.int64)[np.asarray(codes, dtype=np.int64)], categories=uniques
    )


def suggestion_key(config: Config) -> str:
    """What a copy's suggested category depends on besides its two pages, the key stored suggestions are kept
    under (`Store.suggestions`): the rule table's version, the normalization (the texts), the shingle size
    (containment) and the URL rules (the canonical URLs); never the threshold."""
    rules = (
        hashlib.sha256(
            json.dumps([r.as_dict() for r in config.url_rules], sort_keys=True).encode("utf-8")
        ).hexdigest()[:16]
        if config.url_rules
        else "none"
    )
    return f"rules={RULES_VERSION}|{config.norm_key}|k={config.shingle_size}|url_rules={rules}"


PairBatch = tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[str, str], int]


def compare_pair_batch(batch: PairBatch) -> list[tuple[str, bool]]:
    """(category, newer than kept) of each (copy, representative) pair of a batch, given the texts its pairs
    need (`_needs_text`) by exact key and the shingle size: a worker's unit of `suggest_copies`."""
    pairs, texts, shingle_size = batch
    names = _copy_categories(pairs, texts, shingle_size)
    return [
        (
            name,
            _fetched_key(rep["fetched_at"], rep["url"]) < _fetched_key(member["fetched_at"], member["url"]),
        )
        for (member, rep), name in zip(pairs, names, strict=True)
    ]


def pairs_with_texts(
    lo: np.ndarray,
    hi: np.ndarray,
    read: Callable[[np.ndarray], dict[int, str]],
    *,
    window_texts: int,
    pending_texts: int,
) -> Iterator[tuple[np.ndarray, dict[int, str]]]:
    """(pair positions, their texts by page id): every pair k once, with the texts of its two pages
    `lo[k]` <= `hi[k]`. The texts are read (`read(sorted page ids)`) a window of at most `window_texts` pages
    at a time, in page-id order, and a pair comes with the window of its later page; its earlier page's text is
    kept from its own window while at most `pending_texts` are kept (a crawl's copies mostly lie near their
    representatives), else the pair waits for another pass over the texts of the pairs left. So at most
    `window_texts + pending_texts` texts are held."""
    todo = np.arange(len(lo))
    while len(todo):
        low, high = lo[todo], hi[todo]
        pages = np.unique(np.concatenate([low, high]))
        firsts = pages[::window_texts]
        win_low = np.searchsorted(firsts, low, side="right") - 1
        win_high = np.searchsorted(firsts, high, side="right") - 1
        # the last window whose pairs read each page: where its text may be dropped
        by_page = pd.Series(np.concatenate([win_high, win_high])).groupby(np.concatenate([low, high])).max()
        last = dict(zip(by_page.index.tolist(), by_page.tolist(), strict=True))
        order = np.argsort(win_high, kind="stable")
        bounds = np.searchsorted(win_high[order], np.arange(len(firsts) + 1))
        pending: dict[int, str] = {}
        deferred = []
        for w in range(len(firsts)):
            window = pages[w * window_texts : (w + 1) * window_texts]
            texts = read(window)
            at = order[bounds[w] : bounds[w + 1]]
            ready = (win_low[at] == w) | np.isin(low[at], np.fromiter(pending, np.int64, len(pending)))
            deferred.append(at[~ready])
            at = at[ready]
            if len(at):
                wanted = np.concatenate([low[at], high[at]]).tolist()
                yield todo[at], {page: pending[page] if page in pending else texts[page] for page in wanted}
            pending = {page: text for page, text in pending.items() if last[page] > w}
            for page in window.tolist():
                if len(pending) >= pending_texts:
                    break
                if last[page] > w:
                    pending[page] = texts[page]
        todo = todo[np.sort(np.concatenate(deferred))]


@dataclass(frozen=True, slots=True)
class CopySuggestions:
    """The suggested category of each copy deduplication removes at a threshold (`suggest_copies`)."""

    rows: np.ndarray  # the copies' rows of the analysis' pages
    category: np.ndarray  # each copy's category against its representative (`suggest_category`)
    newer_than_kept: np.ndarray  # whether the copy was fetched after its representative
    compared: int  # pairs compared here: the others were stored


_RECORD_FIELDS = (
    "page_id",
    "url",
    "canonical_url",
    "fetched_at",
    "degenerate",
    "n_words",
    "unit_id",
    "exact_key",
)


def _pair_records(
    store: Store, analysis: Analysis, member_rows: np.ndarray, rep_rows: np.ndarray
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(copy, representative) records of the given rows of `analysis.pages`: the fields the rule reads, taken
    from the frame where it holds them, else read from the store for these pages only (`Store.page_fields`,
    the canonical URLs rewritten by the config's URL rules as `analysis.ruled_urls` does)."""
    pages, config = analysis.pages, analysis.config
    rows = np.unique(np.concatenate([member_rows, rep_rows]))
    if all(c in pages.columns for c in _RECORD_FIELDS):
        picked = pages.iloc[rows]
        columns = [picked[c].tolist() for c in _RECORD_FIELDS]
    else:
        page_ids = pages["page_id"].to_numpy(dtype=np.int64)[rows]
        order = np.argsort(page_ids, kind="stable")
        table = store.page_fields(config.norm_key, page_ids[order], min_words=config.min_words)
        if not np.array_equal(table.column("page_id").to_numpy(), page_ids[order]):
            raise NeardupError("pages of this analysis are no longer in the store: reload the page")
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        table = table.take(pa.array(back))
        by_name = {c: table.column(c).to_pylist() for c in _RECORD_FIELDS if c != "unit_id"}
        if config.url_rules:
            by_name["canonical_url"] = [apply_url_rules(u, config.url_rules) for u in by_name["url"]]
        by_name["unit_id"] = pages["unit_id"].to_numpy()[rows].tolist()
        columns = [by_name[c] for c in _RECORD_FIELDS]
    records = {
        row: dict(zip(_RECORD_FIELDS, values, strict=True))
        for row, values in zip(rows.tolist(), zip(*columns, strict=True), strict=True)
    }
    return [(records[m], records[r]) for m, r in zip(member_rows.tolist(), rep_rows.tolist(), strict=True)]


def _chunks_with_texts(
    store: Store, config: Config, pairs: list[tuple[dict[str, Any], dict[str, Any]]], textual: np.ndarray
) -> Iterator[tuple[np.ndarray, dict[str, str]]]:
    """(chunk of `textual`, the texts its pairs need by exact key): the pairs at positions `textual`, their
    texts read a window at a time (`pairs_with_texts`); a text stands for its exact key, read at the key's
    first page as `Store.unit_texts` picks it."""
    keys = {pairs[k][side]["exact_key"] for k in textual.tolist() for side in (0, 1)}
    first = store.first_pages_of_texts(config.norm_key, sorted(keys))
    page_of = dict(zip(first["exact_key"].tolist(), first["page_id"].tolist(), strict=True))
    a = np.array([page_of[pairs[k][0]["exact_key"]] for k in textual.tolist()], dtype=np.int64)
    b = np.array([page_of[pairs[k][1]["exact_key"]] for k in textual.tolist()], dtype=np.int64)
    for at, texts in pairs_with_texts(
        np.minimum(a, b),
        np.maximum(a, b),
        lambda ids: store.texts_of_pages(config.norm_key, ids),
        window_texts=WINDOW_TEXTS,
        pending_texts=PENDING_TEXTS,
    ):
        for start in range(0, len(at), PAIRS_PER_BATCH):
            chunk = textual[at[start : start + PAIRS_PER_BATCH]]
            yield (
                chunk,
                {
                    pairs[k][side]["exact_key"]: texts[page_of[pairs[k][side]["exact_key"]]]
                    for k in chunk.tolist()
                    for side in (0, 1)
                },
            )


def _compare_pairs(
    store: Store,
    config: Config,
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    *,
    progress: Progress | None,
    jobs: int | None,
) -> list[tuple[str, bool]]:
    """`compare_pair_batch` of every pair, in batches over the worker pool (`jobs`): first the pairs whose
    category reads no text, then the others as their texts are read (`_chunks_with_texts`)."""
    need = np.array([_needs_text(member, rep) for member, rep in pairs], dtype=bool)
    plain, textual = np.flatnonzero(~need), np.flatnonzero(need)
    positions: deque[np.ndarray] = deque()

    def batches() -> Iterator[PairBatch]:
        chunks: Iterator[tuple[np.ndarray, dict[str, str]]] = (
            (plain[start : start + PAIRS_PER_BATCH], {}) for start in range(0, len(plain), PAIRS_PER_BATCH)
        )
        for chunk, texts in itertools.chain(
            chunks, _chunks_with_texts(store, config, pairs, textual) if len(textual) else ()
        ):
            positions.append(chunk)
            yield [pairs[k] for k in chunk.tolist()], texts, config.shingle_size

    out: list[tuple[str, bool]] = [("", False)] * len(pairs)
    done = 0
    if progress is not None:
        progress(CATEGORIES_STAGE, 0, len(pairs))
    for results in parallel_map(
        compare_pair_batch, batches(), jobs=jobs if len(pairs) >= PARALLEL_PAIRS else 1
    ):
        chunk = positions.popleft()
        for k, result in zip(chunk.tolist(), results, strict=True):
            out[k] = result
        done += len(chunk)
        if progress is not None:
            progress(CATEGORIES_STAGE, done, len(pairs))
    return out


def _offset_progress(progress: Progress | None, done_before: int, total: int) -> Progress | None:
    """`progress` of a part of `total` pairs that starts after `done_before` of them."""
    if progress is None:
        return None
    report = progress
    return lambda stage, done, _: report(stage, done_before + done, total)


def suggest_copies(
    store: Store, analysis: Analysis, *, progress: Progress | None = None, jobs: int | None = 1
) -> CopySuggestions:
    """The suggested category of each copy of `analysis` against its representative: read where the store
    holds the pair's (under `suggestion_key`), else compared (`_compare_pairs`: `progress(stage, pairs done,
    pairs)` follows them) and stored, unless the store is read-only or another process holds the file (then
    they are compared again next time)."""
    p = analysis.pages
    in_cluster = p["cluster_id"].notna().to_numpy()
    is_rep = p["is_representative"].fillna(False).to_numpy(dtype=bool)
    removed = np.flatnonzero(in_cluster & ~is_rep)
    page_id = p["page_id"].to_numpy(dtype=np.int64)
    rep_rows = analysis.representative_rows[removed]
    ids, rep_ids = page_id[removed], page_id[rep_rows]
    key = suggestion_key(analysis.config)
    category = np.full(len(removed), "", dtype=object)
    newer = np.zeros(len(removed), dtype=bool)
    found = np.zeros(len(removed), dtype=bool)
    stored = store.suggestions(key, ids, rep_ids)
    at = stored["pair"].to_numpy(dtype=np.int64)
    category[at] = stored["category"].to_numpy(dtype=object)
    newer[at] = stored["newer_than_kept"].to_numpy(dtype=bool)
    found[at] = True
    new = np.flatnonzero(~found)
    if len(new):
        names: list[str] = []
        for start in range(0, len(new), COPIES_PER_READ):
            part = new[start : start + COPIES_PER_READ]
            compared = _compare_pairs(
                store,
                analysis.config,
                _pair_records(store, analysis, removed[part], rep_rows[part]),
                progress=_offset_progress(progress, start, len(new)),
                jobs=jobs,
            )
            names += [name for name, _ in compared]
            newer[part] = [n for _, n in compared]
            del compared
        category[new] = names
        if not store.read_only:
            # another process writing the file: these are compared again next time
            with contextlib.suppress(DatabaseLocked):
                store.add_suggestions(key, ids[new], rep_ids[new], names, newer[new])
    return CopySuggestions(rows=removed, category=category, newer_than_kept=newer, compared=len(new))


def page_categories(
    store: Store,
    analysis: Analysis,
    labels: pd.DataFrame | None = None,
    *,
    progress: Progress | None = None,
    jobs: int | None = 1,
) -> pd.DataFrame:
    """Per page of `analysis.pages` (same index): `category` of the page relative to its representative (""
    for a representative or a unique page), `category_from` ("label", "URLs and text" or ""),
    `suggested_action` and `cluster_category` (its cluster's, from its copies; "" for a unique page).

    A degenerate page has the category "degenerate" (it has no cluster). A copy's category is its label's,
    else its suggestion (`suggest_copies`: stored, or compared now with `progress` and `jobs`)."""
    p = analysis.pages
    n = len(p)
    in_cluster = p["cluster_id"].notna().to_numpy()
    is_rep = p["is_representative"].fillna(False).to_numpy(dtype=bool)
    degenerate = ~in_cluster
    multi = in_cluster & (p["cluster_size"].fillna(0).to_numpy() > 1)

    s = suggest_copies(store, analysis, progress=progress, jobs=jobs)
    removed = s.rows
    named = s.category.copy()
    labeled = _labeled_pages(p, labels).reindex(p["page_id"].to_numpy()[removed])
    by_label = labeled.notna().to_numpy()
    named[by_label] = labeled.to_numpy()[by_label]
    # codes into the copies' categories; a column's codes are offset past its fixed names
    codes, uniques = pd.factorize(named)
    names: list[str] = [str(u) for u in uniques]
    code_of = np.asarray(codes, dtype=np.int64)

    category = np.zeros(n, dtype=np.int64)  # "", "degenerate", then the copies' names
    category[degenerate] = 1
    category[removed] = code_of + 2
    source = np.zeros(n, dtype=np.int64)  # "", "label", "URLs and text"
    source[removed] = np.where(by_label, 1, 2)
    action = np.zeros(n, dtype=np.int64)  # the four fixed actions, then each copy name's
    action[degenerate] = 1
    action[multi & is_rep] = 2
    action[removed] = code_of + 4
    action[removed[(named == "stale re-crawl") & s.newer_than_kept]] = 3

    rank = np.array([CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES) if c else -1 for c in names])
    clusters, chosen = _cluster_categories(p["cluster_id"].to_numpy()[removed], code_of, rank)
    cluster_cat = np.zeros(n, dtype=np.int64)  # "", "degenerate", then the copies' names
    cluster_cat[degenerate] = 1
    at = np.flatnonzero(multi)
    of_cluster = p["cluster_id"].to_numpy()[at].astype(np.int64)
    # a cluster id's chosen code by a look-up over the ids (those of two or more pages are the lowest)
    chosen_of = np.full(max(int(of_cluster.max(initial=0)), int(clusters.max(initial=0))) + 1, -1)
    chosen_of[clusters] = chosen
    code = chosen_of[of_cluster]
    found = code >= 0
    cluster_cat[at[found]] = code[found] + 2
    return pd.DataFrame(
        {
            "category": _coded_column(category, ["", "degenerate", *names]),
            "category_from": _coded_column(source, ["", "label", "URLs and text"]),
            "suggested_action": _coded_column(
                action,
                [
                    KEEP_ACTION,
                    ACTIONS["degenerate"],
                    REPRESENTATIVE_ACTION,
                    NEWER_STALE_ACTION,
                    *(ACTIONS.get(c, ACTIONS["other"]) for c in names),
                ],
            ),
            "cluster_category": _coded_column(cluster_cat, ["", "degenerate", *names]),
        },
        index=p.index,
    )
