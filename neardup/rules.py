"""URL rules learned from the duplicate clusters, and the crawl traps of each host.

Two fetched URLs in one cluster whose difference is a host label (`m.`, `www.`, `uk.`), a path segment
(`/print/`, `/amp`, `index.html`), a `;name=` path parameter, the case of the path or a set of query
parameters propose one rule per difference (DUST, Bar-Yossef et al. 2007; Dasgupta et al. 2008 learn
rewrites from duplicate clusters the same way). Each rule is then measured on every URL of its host: the
URL pairs it merges (pairs whose rewritten URLs coincide only because of this rule, the other rules of the
host applied too) and the share of them that are in one cluster (precision). Rules below the precision
floor or the support floor are dropped and the rest measured again, until no rule changes: a parameter
that selects content (`?page=2`, `?id=42`) merges pages of different clusters and falls out with its
counter-examples.

Approximate: precision is measured against the clusters at the chosen setting, not against truth; a
variant the clustering missed counts against its rule.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .urls import UrlKey, UrlRule, apply_rules_to_key, bare_host, rewrite_key, url_key

MIN_PRECISION = 0.95
MIN_SUPPORT_PAIRS = 2
# Distinct URLs of one cluster compared pairwise: a boilerplate cluster of thousands is no variant family.
MAX_URLS_PER_CLUSTER = 40
MAX_ROUNDS = 10
COUNTER_EXAMPLES = 3
# A crawl-trap family: at least this many URLs, at most this share of them distinct texts.
TRAP_MIN_URLS = 10
TRAP_MAX_TEXT_SHARE = 0.5
_NUMBER = re.compile(r"^\d+$")
_TOKEN = re.compile(r"^(?=.*\d)[A-Za-z0-9_-]{6,}$")
_SPLIT_LABEL = re.compile(r"^[a-z0-9-]+\.$")


@dataclass(slots=True)
class RuleStats:
    rule: UrlRule
    merged_pairs: int  # URL pairs (of pages) the rule merges
    pairs_in_cluster: int  # of those, pairs whose pages share a cluster (the rule's support)
    clusters: int  # clusters it explains
    pages_saved: int  # fetches a crawler applying the rule would not have made
    counter_examples: list[tuple[str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.pairs_in_cluster / self.merged_pairs if self.merged_pairs else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.rule.as_dict(),
            "support_pairs": self.pairs_in_cluster,
            "support_clusters": self.clusters,
            "merged_pairs": self.merged_pairs,
            "precision": round(self.precision, 4),
            "pages_saved": self.pages_saved,
            "counter_examples": [list(p) for p in self.counter_examples],
        }


@dataclass(slots=True)
class LearnedRules:
    accepted: list[RuleStats]
    rejected: list[RuleStats]
    pages_saved: int  # all accepted rules together
    traps: pd.DataFrame

    @property
    def rules(self) -> tuple[UrlRule, ...]:
        return tuple(s.rule for s in self.accepted)

    def table(self, *, accepted: bool = True) -> pd.DataFrame:
        rows = [s.as_dict() for s in (self.accepted if accepted else self.rejected)]
        cols = ["host", "kind", "name", "support_pairs", "support_clusters", "merged_pairs", "precision"]
        df = pd.DataFrame(rows, columns=[*cols, "pages_saved", "counter_examples"])
        df["name"] = df["name"].fillna("")
        df["counter_examples"] = df["counter_examples"].map(
            lambda ps: "; ".join(f"{a} ~ {b}" for a, b in ps) if isinstance(ps, list) else ""
        )
        return df


def _diff(u: UrlKey, v: UrlKey) -> list[UrlRule] | None:
    """The rules that together map `u` and `v` onto one URL, or None when their difference is of no rule kind."""
    out: list[UrlRule] = []
    host = u.host
    if u.host != v.host:
        long, short = (u.host, v.host) if len(u.host) > len(v.host) else (v.host, u.host)
        label = long[: len(long) - len(short)]
        if not long.endswith("." + short) or not _SPLIT_LABEL.match(label):
            return None
        out.append(UrlRule(short, "host_alias", label))
        host = short
    if u.path != v.path:
        rule = _path_diff(host, u.path, v.path) or _path_diff(host, v.path, u.path)
        if rule is None:
            return None
        out.append(rule)
    if u.query != v.query:
        long_q, short_q = (u.query, v.query) if len(u.query) > len(v.query) else (v.query, u.query)
        extra = {k for k, _ in long_q} - {k for k, _ in short_q}
        if not extra or tuple(kv for kv in long_q if kv[0] not in extra) != short_q:
            return None
        out += [UrlRule(host, "drop_param", k) for k in sorted(extra)]
    return out


def _path_diff(host: str, long: str, short: str) -> UrlRule | None:
    if long.lower() == short.lower():
        return UrlRule(host, "fold_case")
    params = re.findall(r";([A-Za-z0-9_.-]+)=[^/;]*", long)
    if params and re.sub(r";[A-Za-z0-9_.-]+=[^/;]*", "", long) == short and len(set(params)) == 1:
        return UrlRule(host, "drop_path_param", params[0])
    a, b = long.split("/"), short.split("/")
    if len(a) != len(b) + 1:
        return None
    for i, seg in enumerate(a):
        if a[:i] + a[i + 1 :] == b and seg:
            return UrlRule(host, "drop_segment", seg)
    return None


def candidate_rules(pages: pd.DataFrame) -> set[UrlRule]:
    """Rules proposed by the URL differences inside each duplicate cluster (`url`, `cluster_id`)."""
    dup = pages[pages["cluster_id"].notna() & (pages["cluster_size"] > 1)]
    found: set[UrlRule] = set()
    for urls in dup.groupby("cluster_id")["url"].unique():
        keys = sorted(
            {k for k in map(url_key, urls[:MAX_URLS_PER_CLUSTER]) if k is not None}, key=UrlKey.text
        )
        for i, u in enumerate(keys):
            for v in keys[i + 1 :]:
                found.update(_diff(u, v) or ())
    return found


@dataclass(slots=True)
class _Crawl:
    """The crawl's pages as rule evaluation needs them: base URL keys, clusters, fetch order."""

    keys: list[UrlKey]
    base: np.ndarray  # code of the base URL per page
    cluster: np.ndarray  # cluster id per page; -1 for degenerate pages
    urls: np.ndarray  # base URL text per page
    hosts: np.ndarray  # bare host per page
    # Positions of each bare host's pages: a rule's pages are found without a pass over the whole crawl.
    by_host: dict[str, np.ndarray] = field(default_factory=dict)
    # `images` of a host's pages under all of its rules, the same for every rule of the host in a round.
    _host_images: dict[frozenset[UrlRule], np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, pages: pd.DataFrame) -> _Crawl:
        ordered = pages.sort_values("page_id", kind="stable")
        keys = [url_key(url) or UrlKey("", "", url, ()) for url in ordered["url"]]
        texts = np.asarray([k.text() for k in keys], dtype=object)
        base = pd.factorize(pd.Series(texts))[0]
        cluster = ordered["cluster_id"].astype("Int64").fillna(-1).to_numpy(dtype=np.int64)
        hosts = np.asarray([bare_host(k.host) for k in keys], dtype=object)
        codes, names = pd.factorize(pd.Series(hosts, dtype=object))
        order = np.argsort(codes, kind="stable")
        split = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1) if len(order) else []
        by_host = {str(names[codes[part[0]]]): part for part in split}
        return cls(keys, base, cluster, texts, hosts, by_host)

    def family(self, rules: Sequence[UrlRule], host: str) -> np.ndarray:
        """Positions of the pages a rule of `host` can touch: the host and its aliases among `rules`."""
        names = {host} | {
            bare_host(r.name + r.host) for r in rules if r.kind == "host_alias" and bare_host(r.host) == host
        }
        parts = [self.by_host[n] for n in names if n in self.by_host]
        return np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)

    def host_images(self, host_rules: Sequence[UrlRule], where: np.ndarray) -> np.ndarray:
        """`images(host_rules, where)` for the rules of one host and its pages (`family`), computed once."""
        key = frozenset(host_rules)
        if key not in self._host_images:
            self._host_images[key] = self.images(host_rules, where)
        return self._host_images[key]

    def images(self, rules: Sequence[UrlRule], where: np.ndarray | None = None) -> np.ndarray:
        """Codes of each page's URL (of the pages at `where`, default all) rewritten by the rules of its host
        and of the host it aliases: equal codes, equal rewritten URLs."""
        ops: dict[str, list[UrlRule]] = defaultdict(list)
        target: dict[str, str] = {}  # bare host -> the host its pages move to (aliases)
        for r in rules:
            if r.kind == "host_alias":
                target[bare_host(r.name + r.host)] = r.host
            else:
                ops[bare_host(r.host)].append(r)
        idx = np.arange(len(self.keys)) if where is None else where
        out = []
        for i in idx:
            key, h = self.keys[i], self.hosts[i]
            host = target.get(h, key.host)
            mine = ops.get(bare_host(host))
            out.append((host, key.path, key.query) if not mine else _as_tuple(rewrite_key(key, host, mine)))
        return pd.factorize(pd.Series(out, dtype=object))[0]


def _as_tuple(key: UrlKey) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    return key.host, key.path, key.query


def _pairs(groups: pd.Series) -> int:
    n = groups.to_numpy(dtype=np.int64)
    return int((n * (n - 1) // 2).sum())


def pages_saved(base: np.ndarray, image: np.ndarray) -> int:
    """Fetches a crawler rewriting URLs to `image` would not make: per rewritten URL, the pages at every
    base URL but the first fetched (pages in fetch order)."""
    df = pd.DataFrame({"base": base, "image": image})
    first = df.groupby("image")["base"].transform("first")
    return int((df["base"] != first).sum())


def _measure(crawl: _Crawl, rule: UrlRule, rules: Sequence[UrlRule]) -> RuleStats:
    """What `rule` adds to the other `rules` of its host: the pairs it merges, its support and savings."""
    # Only the rules of the rule's host rewrite the pages of its host and its aliases.
    mine = [o for o in rules if _same_host(o, rule)]
    where = crawl.family(mine, bare_host(rule.host))
    with_rule = crawl.host_images(mine, where)
    without = crawl.images([o for o in mine if o != rule], where)
    base = crawl.base[where]
    df = pd.DataFrame({"img": with_rule, "pre": without, "cluster": crawl.cluster[where], "pos": where})
    df = df[df["cluster"] >= 0]
    df = df[df.groupby("img")["pre"].transform("nunique") > 1]
    merged = _pairs(df.groupby("img").size()) - _pairs(df.groupby(["img", "pre"]).size())
    in_cluster = _pairs(df.groupby(["img", "cluster"]).size()) - _pairs(
        df.groupby(["img", "pre", "cluster"]).size()
    )
    clusters = 0
    examples: list[tuple[str, str]] = []
    if len(df):
        per = df.groupby(["img", "cluster"])["pre"].nunique()
        clusters = int(per[per > 1].index.get_level_values("cluster").nunique())
        for _, g in df[df.groupby("img")["cluster"].transform("nunique") > 1].groupby("img", sort=False):
            if len(examples) >= COUNTER_EXAMPLES:
                break
            a = g.iloc[0]
            b = g[(g["cluster"] != a["cluster"]) & (g["pre"] != a["pre"])]
            if len(b):
                examples.append((str(crawl.urls[a["pos"]]), str(crawl.urls[b["pos"].iloc[0]])))
    saved = pages_saved(base, with_rule) - pages_saved(base, without)
    return RuleStats(rule, merged, in_cluster, clusters, saved, examples)


def crawl_traps(
    pages: pd.DataFrame, *, min_urls: int = TRAP_MIN_URLS, max_text_share: float = TRAP_MAX_TEXT_SHARE
) -> pd.DataFrame:
    """URL pattern families of a host (numbers and id-like segments generalized, query values dropped) with
    many URLs and few distinct texts (calendars, sort orders, session paths): host, pattern, urls, texts."""
    rows = []
    for url, cluster in zip(pages["url"], pages["cluster_id"].astype("Int64"), strict=True):
        k = url_key(url)
        if k is None:
            continue
        segs = ["{n}" if _NUMBER.match(s) else "{id}" if _TOKEN.match(s) else s for s in k.path.split("/")]
        query = "&".join(sorted({f"{n}=*" for n, _ in k.query}))
        rows.append((bare_host(k.host), "/".join(segs) + ("?" + query if query else ""), k.text(), cluster))
    df = pd.DataFrame(rows, columns=["host", "pattern", "url", "cluster_id"])
    if df.empty:
        return pd.DataFrame(columns=["host", "pattern", "urls", "distinct_texts", "example"])
    out = (
        df.groupby(["host", "pattern"])
        .agg(urls=("url", "nunique"), distinct_texts=("cluster_id", "nunique"), example=("url", "first"))
        .reset_index()
    )
    out = out[(out["urls"] >= min_urls) & (out["distinct_texts"] <= max_text_share * out["urls"])]
    return out.sort_values(["urls", "distinct_texts"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )


def learn_rules(
    pages: pd.DataFrame,
    *,
    min_precision: float = MIN_PRECISION,
    min_support: int = MIN_SUPPORT_PAIRS,
) -> LearnedRules:
    """URL rules from an analysis' pages (`analysis.analyze`: url, page_id, cluster_id, cluster_size).

    A rule is kept when it merges at least `min_support` URL pairs of one cluster and at least
    `min_precision` of the URL pairs it merges are in one cluster, measured with the other kept rules of its
    host applied."""
    crawl = _Crawl.of(pages)
    rules = sorted(candidate_rules(pages), key=lambda r: (r.host, r.kind, r.name))
    stats: list[RuleStats] = []
    dropped: dict[UrlRule, RuleStats] = {}
    memo: dict[tuple[UrlRule, frozenset[UrlRule]], RuleStats] = {}
    for _ in range(MAX_ROUNDS):
        stats = []
        for r in rules:
            # A rule's numbers depend only on the rules of its host: measured again only when those change.
            key = (r, frozenset(o for o in rules if _same_host(o, r)))
            if key not in memo:
                memo[key] = _measure(crawl, r, rules)
            stats.append(memo[key])
        bad = [s for s in stats if s.precision < min_precision or s.pairs_in_cluster < min_support]
        if not bad:
            break
        for s in bad:
            dropped[s.rule] = s
        rules = [s.rule for s in stats if s.rule not in dropped]
    saved = pages_saved(crawl.base, crawl.images(rules))
    accepted = sorted((s for s in stats if s.rule in rules), key=lambda s: (-s.pages_saved, s.rule.host))
    rejected = sorted(dropped.values(), key=lambda s: (-s.pairs_in_cluster, s.rule.host))
    return LearnedRules(accepted, rejected, saved, crawl_traps(pages))


def rule_stats(pages: pd.DataFrame, rules: Sequence[UrlRule]) -> list[RuleStats]:
    """Each rule measured with the others against the pages' `cluster_id` (e.g. a ground truth's clusters)."""
    crawl = _Crawl.of(pages)
    return [_measure(crawl, r, rules) for r in rules]


def rewritten_urls(urls: Sequence[str], rules: Sequence[UrlRule]) -> list[str]:
    """Each URL as the rules rewrite it (on the rule form: https, no trailing slash, sorted query, host kept)."""
    out = []
    for url in urls:
        key = url_key(url)
        out.append(url if key is None else apply_rules_to_key(key, rules).text())
    return out


def _same_host(a: UrlRule, b: UrlRule) -> bool:
    return bare_host(a.host) == bare_host(b.host)


def crawler_rules(rules: Sequence[UrlRule]) -> list[dict[str, Any]]:
    """The rules as a crawler applies them, one entry per host: query parameters to drop, host aliases,
    whether path case is folded, and regex rewrites of the path (Python `re.sub` syntax)."""
    by_host: dict[str, dict[str, Any]] = {}
    for r in sorted(rules, key=lambda r: (bare_host(r.host), r.kind, r.name)):
        entry = by_host.setdefault(bare_host(r.host), {"host": bare_host(r.host)})
        if r.kind == "drop_param":
            entry.setdefault("drop_params", []).append(r.name)
        elif r.kind == "host_alias":
            entry.setdefault("aliases", []).append(r.name + bare_host(r.host))
        elif r.kind == "fold_case":
            entry["fold_path_case"] = True
        elif r.kind == "drop_segment":
            seg = re.escape(r.name)
            entry.setdefault("path_rewrites", []).append(
                {"match": f"/{seg}(?=/|$)", "replace": "", "note": f"drop the path segment {r.name}"}
            )
        else:
            entry.setdefault("path_rewrites", []).append(
                {"match": f"(?i);{re.escape(r.name)}=[^/;]*", "replace": "", "note": f"drop ;{r.name}="}
            )
    return list(by_host.values())


def fetch_savings(pages: pd.DataFrame) -> dict[str, Any]:
    """Redundancy before and after URL rules: a crawler that rewrote URLs to `canonical_url` (with the
    config's url_rules) would not fetch the pages at a second URL of one rewritten URL. Needs url,
    canonical_url, page_id and cluster_id (`analysis.analyze`)."""
    ordered = pages.sort_values("page_id", kind="stable")
    base = pd.factorize(ordered["url"].map(lambda u: (url_key(u) or UrlKey("", "", u, ())).text()))[0]
    image = pd.factorize(ordered["canonical_url"])[0]
    df = pd.DataFrame({"base": base, "image": image, "cluster": ordered["cluster_id"].astype("Int64")})
    kept = df[df["base"] == df.groupby("image")["base"].transform("first")]
    total_before, total_after = len(df), len(kept)

    def redundant(d: pd.DataFrame) -> int:
        content = d["cluster"].dropna()
        return len(content) - content.nunique()

    before, after = redundant(df), redundant(kept)
    return {
        "pages_not_fetched": total_before - total_after,
        "redundant_pages_before": before,
        "redundant_pct_before": round(100 * before / total_before, 2) if total_before else 0.0,
        "redundant_pages_after": after,
        "redundant_pct_after": round(100 * after / total_after, 2) if total_after else 0.0,
    }


def rules_text(learned: LearnedRules) -> str:
    """The learned rules, the rejected candidates with their counter-examples, and the crawl traps."""
    table = learned.table()
    lines = [f"{len(table)} URL rules (precision >= floor), {learned.pages_saved:,} fetches saved together:"]
    for r in table.itertuples():
        what = f"{r.kind} {r.name}".strip()
        lines.append(
            f"  {r.host:<28} {what:<28} support {r.support_pairs:>4} pairs / {r.support_clusters:>3} clusters"
            f"  precision {r.precision:.2f}  saves {r.pages_saved:>4}"
        )
    rejected = learned.table(accepted=False)
    if len(rejected):
        lines += ["", f"{len(rejected)} candidates rejected (precision or support below the floor):"]
        for r in rejected.itertuples():
            what = f"{r.kind} {r.name}".strip()
            lines.append(
                f"  {r.host:<28} {what:<28} support {r.support_pairs:>4}  precision {r.precision:.2f}"
            )
            if r.counter_examples:
                lines.append(f"    counter-examples: {r.counter_examples}")
    traps = learned.traps
    lines += ["", f"{len(traps)} crawl-trap families (many URLs, few distinct texts):"]
    for t in traps.itertuples():
        lines.append(f"  {t.host:<28} {t.pattern}  {t.urls:,} URLs, {t.distinct_texts:,} distinct texts")
    return "\n".join(lines)
