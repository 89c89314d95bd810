"""URL rules learned from the duplicate clusters, and the crawl traps of each host.

Two fetched URLs in one cluster whose difference is a host label (`m.`, `www.`, `uk.`), a path segment
(`/print/`, `/amp`, `index.html`), a `;name=` path parameter, the case of the path or a set of query
parameters propose one rule per difference (DUST, Bar-Yossef et al. 2007; Dasgupta et al. 2008 learn
rewrites from duplicate clusters the same way). Each rule is then measured on every URL of its host: the
URL pairs it merges (pairs whose rewritten URLs coincide only because of this rule, the other rules of the
host applied too) and the share of them that are in one cluster (precision). Only the URLs it may change
and the pages of their rewritten URLs are counted: every other URL is rewritten alike with and without it. Rules below the precision
floor or the support floor are dropped and the rest measured again, until no rule changes: a parameter
that selects content (`?page=2`, `?id=42`) merges pages of different clusters and falls out with its
counter-examples.

Approximate: precision is measured against the clusters at the chosen setting, not against truth; a
variant the clustering missed counts against its rule.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np
import pandas as pd
import pyarrow as pa

from .parsed_urls import ParsedUrls, Query
from .url_images import BaseParts, ImageParts, image_codes, image_parts
from .url_keys import key_texts
from .url_parse import PARSE_STEPS, parse_urls
from .urls import UrlKey, UrlRule, UrlRuleDict, apply_rules_to_key, bare_host, url_key

# progress(stage, done, total), as the engine's stages report (rules is a leaf: it imports no stage).
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


MIN_PRECISION = 0.95
MIN_SUPPORT_PAIRS = 2
# Distinct URLs of one cluster compared pairwise: a boilerplate cluster of thousands is no variant family.
MAX_URLS_PER_CLUSTER = 40
MAX_ROUNDS = 10
COUNTER_EXAMPLES = 3
# A crawl-trap family: at least this many URLs, at most this share of them distinct texts.
TRAP_MIN_URLS = 10
TRAP_MAX_TEXT_SHARE = 0.5
_SPLIT_LABEL = re.compile(r"^[a-z0-9-]+\.$")


class RuleStatsDict(UrlRuleDict):
    """A learned rule (`UrlRule.as_dict`: host, kind, name) with its evidence, as JSON."""

    support_pairs: int
    support_clusters: int
    merged_pairs: int
    precision: float
    pages_saved: int
    counter_examples: list[list[str]]


class FetchSavings(TypedDict):
    """Redundancy before and after URL rules (`fetch_savings`)."""

    pages_not_fetched: int
    redundant_pages_before: int
    redundant_pct_before: float
    redundant_pages_after: int
    redundant_pct_after: float


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

    def as_dict(self) -> RuleStatsDict:
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


@functools.lru_cache(maxsize=65536)
def _rule(host: str, kind: str, name: str = "") -> UrlRule:
    """`UrlRule(host, kind, name)`, made (and checked) once: the URL pairs of a crawl's clusters propose the
    same few rules over and over."""
    return UrlRule(host, kind, name)


def _diff(u: UrlKey, v: UrlKey) -> list[UrlRule] | None:
    """The rules that together map `u` and `v` onto one URL, or None when their difference is of no rule kind."""
    out: list[UrlRule] = []
    host = u.host
    if u.host != v.host:
        if (alias := _host_diff(u.host, v.host)) is None:
            return None
        out.append(alias)
        host = alias.host
    if u.path != v.path:
        if (change := _path_change(u.path, v.path)) is None:
            return None
        out.append(_rule(host, *change))
    if u.query != v.query:
        if (names := _query_diff(u.query, v.query)) is None:
            return None
        out += [_rule(host, "drop_param", k) for k in names]
    return out


def _host_diff(u: str, v: str) -> UrlRule | None:
    """The host alias mapping two hosts onto one (the shorter), or None."""
    long, short = (u, v) if len(u) > len(v) else (v, u)
    label = long[: len(long) - len(short)]
    if not long.endswith("." + short) or not _SPLIT_LABEL.match(label):
        return None
    return _rule(short, "host_alias", label)


def _query_diff(u: Query, v: Query) -> tuple[str, ...] | None:
    """The names of the query parameters whose dropping maps two queries onto one, sorted, or None."""
    long_q, short_q = (u, v) if len(u) > len(v) else (v, u)
    extra = {k for k, _ in long_q} - {k for k, _ in short_q}
    if not extra or tuple(kv for kv in long_q if kv[0] not in extra) != short_q:
        return None
    return tuple(sorted(extra))


def _path_change(u: str, v: str) -> tuple[str, str] | None:
    """The (kind, name) of the path rule mapping two paths onto one, or None."""
    return _path_rule(u, v) or _path_rule(v, u)


def _path_rule(long: str, short: str) -> tuple[str, str] | None:
    if long.lower() == short.lower():
        return ("fold_case", "")
    params = re.findall(r";([A-Za-z0-9_.-]+)=[^/;]*", long)
    if params and re.sub(r";[A-Za-z0-9_.-]+=[^/;]*", "", long) == short and len(set(params)) == 1:
        return ("drop_path_param", params[0])
    a, b = long.split("/"), short.split("/")
    if len(a) != len(b) + 1:
        return None
    for i, seg in enumerate(a):
        if a[:i] + a[i + 1 :] == b and seg:
            return ("drop_segment", seg)
    return None


@dataclass(slots=True)
class _Differences:
    """What each difference of two codes (of hosts, paths or queries) proposes, worked out once per distinct
    pair of codes met (`work`: None for no rule): by pair, its index in `found`, or -1."""

    work: Callable[[int, int], Any]
    index: dict[tuple[int, int], int] = field(default_factory=dict)
    found: list[Any] = field(default_factory=list)

    def codes(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Per pair (`u[i]`, `v[i]`): the index in `found` of what its difference proposes, or -1."""
        if not len(u):
            return np.empty(0, dtype=np.int64)
        width = int(v.max()) + 1
        pair, distinct = pd.factorize(u * width + v)
        out = []
        for key in distinct.tolist():
            at = divmod(key, width)
            if (code := self.index.get(at)) is None:
                result = self.work(*at)
                code = self.index[at] = -1 if result is None else len(self.found)
                if result is not None:
                    self.found.append(result)
            out.append(code)
        return np.asarray(out, dtype=np.int64)[pair]


def _pairs_within(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of positions (i < j) with equal `group` values, `group` ascending."""
    if not len(group):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    size = np.diff(np.r_[starts, len(group)])
    rank = np.arange(len(group)) - np.repeat(starts, size)
    after = np.repeat(size, size) - rank - 1  # the positions after each one in its group
    u = np.repeat(np.arange(len(group)), after)
    v = u + 1 + np.arange(len(u)) - np.repeat(np.cumsum(after) - after, after)
    return u, v


def _proposed_rules(keys: Sequence[UrlKey]) -> frozenset[UrlRule]:
    """The rules the URL differences of one cluster's URLs propose."""
    found: set[UrlRule] = set()
    ordered = list(dict.fromkeys(keys))  # `_diff` is symmetric: any order proposes the same rules
    for i, u in enumerate(ordered):
        for v in ordered[i + 1 :]:
            found.update(_diff(u, v) or ())
    return frozenset(found)


def candidate_rules(
    pages: pd.DataFrame, table: UrlTable | None = None, cluster: np.ndarray | None = None
) -> set[UrlRule]:
    """Rules proposed by the URL differences inside each duplicate cluster (`url`, `cluster_id`; with
    `table`, the pages' `url_table`, whose parsed URLs are compared as codes and which keeps what each
    difference of hosts, paths or queries proposes: a threshold move meets mostly differences seen before;
    `cluster`, the pages' clusters in the table's order, `table.cluster_of(pages)`, where already read)."""
    found: set[UrlRule] = set()
    if table is None:
        dup = pages[pages["cluster_id"].notna() & (pages["cluster_size"] > 1)]
        for urls in dup.groupby("cluster_id")["url"].unique():
            found |= _proposed_rules([k for k in map(url_key, urls[:MAX_URLS_PER_CLUSTER]) if k is not None])
        return found
    cluster = table.cluster_of(pages) if cluster is None else cluster
    on = np.flatnonzero(cluster >= 0)
    on = on[np.bincount(cluster[on])[cluster[on]] > 1]  # a cluster of one page has one URL
    # Each cluster's distinct fetched URLs in page order (at most MAX_URLS_PER_CLUSTER), grouped by cluster.
    n_raw = max(len(table.raw_base), 1)
    distinct = pd.unique(cluster[on] * n_raw + table.raw[on])
    cl, raw = distinct // n_raw, distinct % n_raw
    many = np.bincount(cl)[cl] > 1
    cl, raw = cl[many], raw[many]
    order = np.argsort(cl, kind="stable")
    cl, raw = cl[order], raw[order]
    starts = np.flatnonzero(np.r_[True, cl[1:] != cl[:-1]]) if len(cl) else np.empty(0, dtype=np.int64)
    rank = np.arange(len(cl)) - np.repeat(starts, np.diff(np.r_[starts, len(cl)]))
    cl, raw = cl[rank < MAX_URLS_PER_CLUSTER], raw[rank < MAX_URLS_PER_CLUSTER]
    return table.proposed(cl, raw)


# Rewritten URLs kept per URL table (`UrlTable.family_images`), in bytes per page of the crawl summed over
# the rule sets (64 integers a page): the rule sets a few thresholds' learning measures, not every one ever
# measured.
IMAGE_CACHE_BYTES_PER_PAGE = 64 * 8


# A rule whose touched URLs' rewritten URLs are more than 1/PASS_SHARE of its host family's has their
# pages found by one pass over the family's pages (no sort), not through each rewritten URL's.
PASS_SHARE = 8


@dataclass(frozen=True, slots=True)
class _Groups:
    """The members of groups 0..n-1 of integers: group g's are `order[starts[g]:starts[g + 1]]`."""

    order: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, group: np.ndarray, n: int) -> _Groups:
        """The positions in `group` (each a group 0..n-1) by group, ascending within each."""
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(group, minlength=n), out=starts[1:])
        return cls(np.argsort(group, kind="stable"), starts)

    def members(self, groups: np.ndarray) -> np.ndarray:
        """The members of `groups` (distinct), group after group."""
        low = self.starts[groups]
        size = self.starts[groups + 1] - low
        if not len(size):
            return np.empty(0, dtype=np.int64)
        return self.order[np.arange(int(size.sum())) + np.repeat(low - (np.cumsum(size) - size), size)]


@dataclass(slots=True)
class _FamilyImages:
    """The distinct base URLs of a host family's pages rewritten under one rule set (`UrlTable.images_of`):
    dense codes (equal codes, equal rewritten URLs), and each code's `ImageParts.ids` at `widths`, to find
    URLs rewritten under another rule set among them."""

    codes: np.ndarray  # per distinct base URL of the family (`UrlTable.bases_of` order): 0..k-1
    ids: pd.Index  # per code: the id of its rewritten URL at `widths`
    widths: tuple[int, int, int]
    parts: ImageParts  # per distinct base URL: its rewritten URL's parts
    _by_code: _Groups | None = None

    def nbytes(self) -> int:
        """The bytes of its arrays, the index's hash table counted as twice its values."""
        parts = self.parts
        arrays = (self.codes, parts.host, parts.path, parts.query)
        grouped = self._by_code
        extra = grouped.order.nbytes + grouped.starts.nbytes if grouped is not None else 0
        return sum(a.nbytes for a in arrays) + 3 * self.ids.nbytes + extra

    def by_code(self) -> _Groups:
        """The distinct base URLs of each code, made at the first call."""
        if self._by_code is None:
            self._by_code = _Groups.of(self.codes, len(self.ids))
        return self._by_code

    def codes_of(self, image: ImageParts, widths: tuple[int, int, int]) -> np.ndarray:
        """The codes of the URLs rewritten as `image` (parts coded by `widths`, `BaseParts.widths` now):
        that of an equal rewritten URL among these, else one numbered after them (equal URLs, equal
        codes)."""
        found = np.full(len(image.host), -1, dtype=np.int64)
        known = np.flatnonzero(image.below(self.widths))
        if len(known):
            found[known] = self.ids.get_indexer(image.take(known).ids(self.widths))
        new = np.flatnonzero(found < 0)
        if len(new):
            found[new] = len(self.ids) + pd.factorize(image.take(new).ids(widths))[0]
        return found


@dataclass(slots=True)
class UrlTable:
    """The crawl's URLs as rule learning needs them, whatever the clusters: the parse's codes (`ParsedUrls`:
    fetched and base URL codes, crawl-trap families, in page id order; keys are made only where compared) and
    the pages of each bare host. Made once per set of pages (`url_table`) and reused
    by `learn_rules` and `crawl_traps` at every threshold; the rewritten URLs of each rule set measured are
    kept too (the same rule sets come back at the next threshold)."""

    page_id: np.ndarray  # per page, ascending
    order: np.ndarray  # positions of the pages' rows (as given to `url_table`) in page id order
    parse: ParsedUrls  # the pages' URLs as codes (raw and base codes per page, the keys' parts)
    raw_base: np.ndarray  # per code of a URL as fetched: its base code
    raw_is_url: np.ndarray  # per code of a URL as fetched: whether it is an http(s) URL
    # Positions of each bare host's pages: a rule's pages are found without a pass over the whole crawl.
    by_host: dict[str, np.ndarray]
    _images: OrderedDict[tuple[frozenset[UrlRule], tuple[str, ...]], _FamilyImages] = field(
        default_factory=OrderedDict
    )
    # Per host family (`family`): its pages' base URL codes factorized (codes, distinct base codes).
    _family_bases: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # Per host family: its pages (indices into `positions`) of each distinct base URL (`bases_of` order).
    _base_pages: dict[tuple[str, ...], _Groups] = field(default_factory=dict)
    _positions: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)
    # Per rule and its host's rules: the pages it merges (`merging`), for the content pages `_content`.
    _merging: dict[tuple[UrlRule, frozenset[UrlRule]], _Merging] = field(default_factory=dict)
    _content: np.ndarray | None = None
    # What a difference of two hosts, paths or queries proposes (`proposed`), by their codes.
    _differences: tuple[_Differences, _Differences, _Differences] | None = None
    # The base URL keys as integer codes (`url_images.BaseParts`), made at the first rule set measured.
    _parts: BaseParts | None = None
    _traps: _TrapFamilies | None = None

    @property
    def raw(self) -> np.ndarray:
        """Per page: the code of its URL as fetched."""
        return self.parse.raw

    @property
    def base(self) -> np.ndarray:
        """Per page: the code of its base URL (equal codes, equal keys)."""
        return self.parse.base

    @property
    def trap_family(self) -> np.ndarray:
        """Per page: its crawl-trap family's code (-1 for a URL that is no http(s) URL)."""
        return self.parse.trap

    @property
    def n_trap_families(self) -> int:
        return len(self.parse.trap_hosts)

    def base_key(self, code: int) -> UrlKey:
        """The key of base code `code`."""
        parse = self.parse
        host = parse.hosts[parse.key_host[code]]
        path, query = parse.path(int(parse.key_path[code])), parse.queries[parse.key_query[code]]
        return UrlKey("https" if parse.key_is_url[code] else "", host, path, query)

    def raw_keys(self, codes: Sequence[int]) -> list[UrlKey | None]:
        """The keys of the URLs as fetched of codes `codes` (None: no http(s) URL)."""
        parse, at = self.parse, np.asarray(codes, dtype=np.int64)
        base = self.raw_base[at]
        hosts = [parse.hosts[h] for h in parse.key_host[base].tolist()]
        paths = parse.paths.take(pa.array(parse.key_path[base])).to_pylist()
        queries = [parse.queries[q] for q in parse.key_query[base].tolist()]
        # A fetched URL that is an http(s) URL has the key of its base code, whose scheme is https.
        return [
            UrlKey("https", host, path, query) if is_url else None
            for host, path, query, is_url in zip(
                hosts, paths, queries, self.raw_is_url[at].tolist(), strict=True
            )
        ]

    def proposed(self, family: np.ndarray, raw: np.ndarray) -> set[UrlRule]:
        """The rules the differences of the URLs of each family propose (`_proposed_rules` of each family's
        keys, together): `raw`, fetched URL codes, grouped by `family` (ascending). Every pair of distinct
        keys of a family is compared by their host, path and query codes; each distinct difference of two
        hosts, paths or queries is worked out once (`_Differences`, kept for the next clustering)."""
        if self._differences is None:
            parse = self.parse
            self._differences = (
                _Differences(lambda u, v: _host_diff(parse.hosts[u], parse.hosts[v])),
                _Differences(lambda u, v: _path_change(parse.path(u), parse.path(v))),
                _Differences(lambda u, v: _query_diff(parse.queries[u], parse.queries[v])),
            )
        hosts, paths, queries = self._differences
        is_url = self.raw_is_url[raw]
        family, base = family[is_url], self.raw_base[raw[is_url]]
        # Each family's distinct keys (equal base codes, equal keys).
        first = ~pd.Series(family * max(len(self.parse.key_host), 1) + base).duplicated().to_numpy()
        family, base = family[first], base[first]
        u, v = _pairs_within(family)
        u, v = base[u], base[v]
        parse = self.parse
        hu, hv = parse.key_host[u], parse.key_host[v]
        pu, pv = parse.key_path[u], parse.key_path[v]
        qu, qv = parse.key_query[u], parse.key_query[v]
        host_code, path_code, query_code = (np.full(len(u), -1, dtype=np.int64) for _ in range(3))
        host_differs, path_differs, query_differs = hu != hv, pu != pv, qu != qv
        host_code[host_differs] = hosts.codes(hu[host_differs], hv[host_differs])
        path_code[path_differs] = paths.codes(pu[path_differs], pv[path_differs])
        query_code[query_differs] = queries.codes(qu[query_differs], qv[query_differs])
        valid = ~(
            (host_differs & (host_code < 0))
            | (path_differs & (path_code < 0))
            | (query_differs & (query_code < 0))
        )
        # The host a pair's path and query rules are of: the alias's (the shorter host) or the pair's.
        alias_of = np.asarray([a.host for a in hosts.found], dtype=object)
        rule_host = np.asarray(parse.hosts, dtype=object)[hu]
        moved = host_differs & valid
        rule_host[moved] = alias_of[host_code[moved]]
        found: set[UrlRule] = {hosts.found[c] for c in pd.unique(host_code[moved]).tolist()}
        for differs, code, found_of in (
            (path_differs, path_code, paths),
            (query_differs, query_code, queries),
        ):
            on = differs & valid
            combos = pd.DataFrame({"host": rule_host[on], "code": code[on]}).drop_duplicates()
            for host, c in zip(combos["host"].tolist(), combos["code"].tolist(), strict=True):
                change = found_of.found[c]
                if found_of is paths:
                    found.add(_rule(host, *change))
                else:
                    found.update(_rule(host, "drop_param", name) for name in change)
        return found

    def family(self, rules: Sequence[UrlRule], host: str) -> tuple[str, ...]:
        """The bare hosts of the pages a rule of `host` can touch: the host and its aliases among `rules`."""
        names = {host} | {
            bare_host(r.name + r.host) for r in rules if r.kind == "host_alias" and bare_host(r.host) == host
        }
        return tuple(sorted(n for n in names if n in self.by_host))

    def positions(self, names: tuple[str, ...]) -> np.ndarray:
        """The positions of the pages of the bare hosts `names`, ascending (those of several hosts kept)."""
        parts = [self.by_host[n] for n in names]
        if len(parts) == 1:  # a host's positions are ascending
            return parts[0]
        if (found := self._positions.get(names)) is None:
            found = np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)
            self._positions[names] = found
        return found

    def url(self, position: int) -> str:
        """The base URL text of the page at `position` (a page's URL as rule learning compares it)."""
        return key_texts([self.base_key(int(self.base[position]))])[0]

    def trap_families(self, min_urls: int) -> _TrapFamilies:
        """The crawl-trap families of `min_urls` distinct URLs or more and their pages, kept."""
        if self._traps is None or self._traps.min_urls != min_urls:
            self._traps = _trap_families(self, min_urls)
        return self._traps

    def bases_of(self, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The base URL codes of the pages of the bare hosts `names` factorized: per page (`positions`
        order) the index of its base code among the distinct ones, and the distinct base codes."""
        if (family := self._family_bases.get(names)) is None:
            family = self._family_bases[names] = pd.factorize(self.base[self.positions(names)])
        return family

    def parts(self) -> BaseParts:
        """The base URL keys as integer codes, made at the first rule set measured."""
        if self._parts is None:
            self._parts = BaseParts.of_parse(self.parse)
        return self._parts

    def family_images(self, rules: Sequence[UrlRule], names: tuple[str, ...]) -> _FamilyImages:
        """The distinct base URLs of the pages of `names` rewritten by `rules`, kept for the next call with
        the same rules and hosts (the least recently used are dropped beyond IMAGE_CACHE_BYTES_PER_PAGE
        times the crawl's pages)."""
        key = (frozenset(rules), names)
        if (found := self._images.get(key)) is not None:
            self._images.move_to_end(key)
            return found
        parts = self.parts()
        image = image_parts(parts, self.bases_of(names)[1], rules)
        widths = parts.widths()
        codes, ids = pd.factorize(image.ids(widths))
        found = self._images[key] = _FamilyImages(codes.astype(np.int64), pd.Index(ids), widths, image)
        budget = IMAGE_CACHE_BYTES_PER_PAGE * max(len(self.base), 1)
        while len(self._images) > 1 and sum(v.nbytes() for v in self._images.values()) > budget:
            self._images.popitem(last=False)
        return found

    def images_of(self, rules: Sequence[UrlRule], names: tuple[str, ...]) -> np.ndarray:
        """Per page of the bare hosts `names` (`positions` order): the code of its URL rewritten by `rules`
        (`family_images`)."""
        return self.family_images(rules, names).codes[self.bases_of(names)[0]]

    def saved_by(self, rules: Sequence[UrlRule]) -> int:
        """`pages_saved` of the crawl's pages under `rules`: the sum over the rules' host families when no
        two of them share a host (a page's rewritten URL is then of its family's hosts alone; the families'
        rewritten URLs are those the last round of learning measured), else of every page at once."""
        families = [(mine, self.family(mine, bare_host(mine[0].host))) for _, mine in _by_host(rules).items()]
        names = [n for _, family in families for n in family]
        if len(names) != len(set(names)):
            return pages_saved(self.base, self.images_of(rules, tuple(sorted(self.by_host))))
        return sum(
            pages_saved(self.base[self.positions(family)], self.images_of(mine, family))
            for mine, family in families
        )

    def merging(self, rule: UrlRule, mine: Sequence[UrlRule], content: np.ndarray) -> _Merging:
        """The `_Merging` of `rule` among `mine` (the rules of its host), over the pages where `content`
        (no degenerate page: the same at every threshold of one fingerprint key), kept.

        Only the URLs `rule` may change (`BaseParts.touches`) are rewritten without it: every other URL is
        rewritten alike with and without it. So only the rewritten URLs of those pages (with the rule and
        without) can merge URLs or save fetches, and only their pages are counted."""
        if self._content is not content:
            # Compared once per clustering: the next calls with this array find it by identity.
            if self._content is None or not np.array_equal(self._content, content):
                self._merging.clear()
            self._content = content
        key = (rule, frozenset(mine))
        if (found := self._merging.get(key)) is not None:
            return found
        names = self.family(mine, bare_host(rule.host))
        where = self.positions(names)
        inverse, distinct = self.bases_of(names)
        if (base_pages := self._base_pages.get(names)) is None:
            base_pages = self._base_pages[names] = _Groups.of(inverse, len(distinct))
        parts, images = self.parts(), self.family_images(mine, names)
        touched = np.flatnonzero(parts.touches(rule)[distinct])  # distinct base URLs
        with_rule = images.codes
        without = with_rule.copy()
        n_images = len(images.ids)
        if len(touched):
            others = [o for o in mine if o != rule]
            if rule.kind == "drop_param":
                without[touched] = _codes_without_param(
                    rule, others, parts, distinct[touched], with_rule[touched], n_images
                )
            elif (
                codes := _codes_without_alias(
                    rule, others, parts, distinct[touched], with_rule[touched], images
                )
            ) is not None:
                without[touched] = codes
            else:
                image = _rewritten_without(rule, others, parts, distinct[touched], images.parts.take(touched))
                without[touched] = images.codes_of(image, parts.widths())

        def pages_of(codes: np.ndarray) -> np.ndarray:
            """The family's pages (indices into `where`, ascending) whose URL the rules rewrite to `codes`:
            through each code's base URLs when they are few, else by one pass over the family's pages."""
            codes = pd.unique(codes)
            if len(codes) * PASS_SHARE < n_images:
                return np.sort(base_pages.members(images.by_code().members(codes)))
            near = np.zeros(n_images, dtype=bool)
            near[codes] = True
            return np.flatnonzero(near[with_rule[inverse]])

        # Fetches saved: the pages of the rewritten URLs (with the rule or without) of touched pages; the
        # other pages' URLs are rewritten alike and grouped alike either way.
        pre_touched = without[touched]
        at = pages_of(np.concatenate([with_rule[touched], pre_touched[pre_touched < n_images]]))
        base = self.base[where[at]]
        saved = pages_saved(base, with_rule[inverse[at]]) - pages_saved(base, without[inverse[at]])
        # URL pairs merged: the content pages of the rewritten URLs of touched content pages.
        on = base_pages.members(touched)
        at = pages_of(with_rule[inverse[on[content[where[on]]]]])
        at = at[content[where[at]]]
        img, pre, pos = with_rule[inverse[at]], without[inverse[at]], where[at]
        # Only rewritten URLs that the rule gives two or more URLs of before matter. The image codes are
        # dense (0..k-1): counted with bincount.
        width = max(int(pre.max(initial=-1)) + 1, 1)
        ip_all, ip_values = pd.factorize(img * width + pre)
        pre_per_img = np.bincount(ip_values // width, minlength=int(img.max(initial=-1)) + 1)
        keep = pre_per_img[img] > 1 if len(img) else np.zeros(0, dtype=bool)
        img, pre, pos = img[keep], pre[keep], pos[keep]
        ip_code = pd.factorize(ip_all[keep])[0].astype(np.int64)
        found = self._merging[key] = _Merging(
            pos=pos,
            img=img,
            pre=pre,
            ip_code=ip_code,
            merged=_dense_pairs(img) - _dense_pairs(ip_code),
            saved=saved,
        )
        return found

    def images(self, rules: Sequence[UrlRule], where: np.ndarray | None = None) -> np.ndarray:
        """Codes of each page's URL (of the pages at `where`, default all) rewritten by the rules of its host
        and of the host it aliases: equal codes, equal rewritten URLs. Each distinct URL the rules may
        change is rewritten once (`url_images.image_codes`)."""
        base = self.base if where is None else self.base[where]
        if not len(base):
            return np.empty(0, dtype=np.int64)
        inverse, distinct = pd.factorize(base)
        return image_codes(self.parts(), distinct, rules)[inverse]

    def cluster_of(self, pages: pd.DataFrame) -> np.ndarray:
        """The pages' `cluster_id` in this table's page order (-1 where none); `pages` must be the pages the
        table was made of (in any row order)."""
        page_id = pages["page_id"].to_numpy(dtype=np.int64)
        if len(page_id) != len(self.page_id) or not np.array_equal(page_id[self.order], self.page_id):
            raise ValueError("the URL table was made of other pages than these (url_table(pages))")
        return pages["cluster_id"].astype("Int64").fillna(-1).to_numpy(dtype=np.int64)[self.order]


def _codes_without_param(
    rule: UrlRule,
    others: Sequence[UrlRule],
    parts: BaseParts,
    keys: np.ndarray,
    codes: np.ndarray,
    n_images: int,
) -> np.ndarray:
    """Codes of the keys `keys` (those carrying the parameter `rule` drops) rewritten by `others` (the
    other rules of its host), from `codes`, their rewritten URLs' codes with `rule` too (of 0..n_images-1). Unless
    another rule of `others` drops the same parameter (then they are rewritten alike), a key's URL without
    the rule is its URL with it and the parameter's pairs put back: a query is its pairs sorted, so equal
    (URL with the rule, values of the parameter), equal URLs without it; and none is a URL with the rule
    (that has no such parameter), so each is numbered after them."""
    if any(o.kind == "drop_param" and o.name == rule.name for o in others):
        return codes
    values = parts.param_values(rule.name)[parts.query[keys]]
    width = int(values.max(initial=0)) + 1
    return n_images + pd.factorize(codes * width + values)[0]


def _codes_without_alias(
    rule: UrlRule,
    others: Sequence[UrlRule],
    parts: BaseParts,
    keys: np.ndarray,
    codes: np.ndarray,
    images: _FamilyImages,
) -> np.ndarray | None:
    """Codes of the keys `keys` (those of the hosts host alias `rule` moves) rewritten by `others` (the
    other rules of its host), from `codes`, their URLs' codes with `rule` too (in `images`), for a `www.`
    alias: without it a key stays on its host with the same path and query (`_rewritten_without`), so its
    URL is its host and its URL with the rule, which no URL with the rule is (none is on such a host). None
    where that does not hold (another alias of `others` moves the same hosts, an alias of another bare
    host, or a URL with the rule on one of those hosts)."""
    if rule.kind != "host_alias" or bare_host(rule.name + rule.host) != bare_host(rule.host):
        return None
    if any(o.kind == "host_alias" and bare_host(o.name + o.host) == bare_host(rule.host) for o in others):
        return None
    own = parts.host[keys]
    moved = own != parts.host_code(rule.host)
    if np.isin(images.parts.host, own[moved]).any():
        return None
    out = codes.copy()
    n_images = len(images.ids)
    out[moved] = n_images + pd.factorize(own[moved] * n_images + codes[moved])[0]
    return out


def _rewritten_without(
    rule: UrlRule, others: Sequence[UrlRule], parts: BaseParts, keys: np.ndarray, rewritten: ImageParts
) -> ImageParts:
    """The keys `keys` (those `rule` may change) rewritten by `others` (the other rules of its host), from
    `rewritten`, their parts with `rule` too. A path rule leaves the host and the query as the others make
    them, a query rule the host and the path: only the rule's part is rewritten again (by the others of its
    part, and the aliases, which say whose rules a key's part gets). Without a host alias its keys stay on
    their host, rewritten by the same rules when their bare host is the rule's (a `www.` alias), by none
    otherwise (no rule of `others` is of their bare host), unless another alias of `others` moves them."""
    if rule.kind == "host_alias":
        moved = bare_host(rule.name + rule.host)
        if any(o.kind == "host_alias" and bare_host(o.name + o.host) == moved for o in others):
            return image_parts(parts, keys, others)
        if moved == bare_host(rule.host):
            return ImageParts(parts.host[keys], rewritten.path, rewritten.query)
        return ImageParts(parts.host[keys], parts.path[keys], parts.query[keys])
    query_rule = rule.kind == "drop_param"
    same_part = [o for o in others if o.kind == "host_alias" or (o.kind == "drop_param") == query_rule]
    image = image_parts(parts, keys, same_part)
    if query_rule:
        return ImageParts(rewritten.host, rewritten.path, image.query)
    return ImageParts(rewritten.host, image.path, rewritten.query)


@dataclass(frozen=True, slots=True)
class _Merging:
    """The content pages whose URLs a rule merges with another URL (the rule's host's other rules applied
    too), in page order, as integer codes: what `_measure` needs that no threshold changes."""

    pos: np.ndarray  # page positions
    img: np.ndarray  # code of the URL rewritten with the rule
    pre: np.ndarray  # code of the URL rewritten without it
    ip_code: np.ndarray  # (img, pre) numbered 0..k-1
    merged: int  # URL pairs the rule merges
    saved: int  # fetches it saves


def url_table(
    pages: pd.DataFrame, *, progress: Progress = _no_progress, parsed: ParsedUrls | None = None
) -> UrlTable:
    """The `UrlTable` of pages with `url` and `page_id` (e.g. `Fingerprints.pages`): what rule learning
    needs that no threshold changes, each distinct URL parsed once, or the pages' URLs as parsed before
    (`parsed`: `url_parse.parse_urls` of these pages, e.g. read from the store). `progress(stage, done,
    total)` is told of each step of a parse."""
    steps = iter(range(PARSE_STEPS + 1))

    def step() -> None:
        progress("parsing the crawl's URLs", next(steps), PARSE_STEPS)

    page_id = pages["page_id"].to_numpy(dtype=np.int64)
    order = np.argsort(page_id, kind="stable")
    if parsed is None:
        step()
        parsed = parse_urls(page_id, pages["url"].to_numpy(dtype=object), step=step)
    elif not np.array_equal(parsed.page_id, page_id[order]):
        raise ValueError("the parsed URLs are of other pages than these (parse_urls of pages)")
    raw_base = np.zeros(parsed.n_raw, dtype=np.int64)
    raw_base[parsed.raw] = parsed.base
    raw_is_url = np.zeros(parsed.n_raw, dtype=bool)
    raw_is_url[parsed.raw] = parsed.trap >= 0
    bare_codes, bare_names = pd.factorize(np.asarray([bare_host(h) for h in parsed.hosts], dtype=object))
    codes = bare_codes[parsed.key_host[parsed.base]] if len(parsed.base) else np.empty(0, dtype=np.int64)
    by_host_order = np.argsort(codes, kind="stable")
    split = np.split(by_host_order, np.flatnonzero(np.diff(codes[by_host_order])) + 1) if len(codes) else []
    by_host = {str(bare_names[codes[part[0]]]): part for part in split}
    return UrlTable(
        page_id=parsed.page_id,
        order=order,
        parse=parsed,
        raw_base=raw_base,
        raw_is_url=raw_is_url,
        by_host=by_host,
    )


@dataclass(slots=True)
class _Crawl:
    """The crawl's pages as rule evaluation at one clustering needs them: the URL table and the clusters."""

    table: UrlTable
    cluster: np.ndarray  # cluster id per page (table order); -1 for degenerate pages
    content: np.ndarray  # cluster >= 0

    @classmethod
    def of(cls, pages: pd.DataFrame, table: UrlTable | None = None) -> _Crawl:
        table = table if table is not None else url_table(pages)
        cluster = table.cluster_of(pages)
        return cls(table, cluster, cluster >= 0)

    @property
    def base(self) -> np.ndarray:
        return self.table.base


def _dense_pairs(codes: np.ndarray) -> int:
    """URL pairs inside groups of small non-negative integer codes: sum of n*(n-1)/2 over the codes."""
    n = np.bincount(codes).astype(np.int64)
    return int((n * (n - 1) // 2).sum())


def pages_saved(base: np.ndarray, image: np.ndarray) -> int:
    """Fetches a crawler rewriting URLs to `image` would not make: per rewritten URL, the pages at every
    base URL but the first fetched (pages in fetch order)."""
    if not len(image):
        return 0
    base = np.asarray(base)
    # Each rewritten URL's first page's base URL: written last to first, so that the first page's is the
    # one left (an assignment to a repeated index keeps the last value), without hashing the codes.
    first_base = np.empty(int(image.max()) + 1, dtype=np.int64)
    first_base[image[::-1]] = base[::-1]
    return int(np.count_nonzero(base != first_base[image]))


def _measure(crawl: _Crawl, rule: UrlRule, mine: Sequence[UrlRule]) -> RuleStats:
    """What `rule` adds to the other `rules` of its host: the pairs it merges, its support and savings.
    On integer codes (the rewritten URLs of the family's pages with and without the rule, their clusters):
    only the clusters depend on the threshold."""
    merging = crawl.table.merging(rule, mine, crawl.content)
    img, pre, pos, ip_code = merging.img, merging.pre, merging.pos, merging.ip_code
    cl = crawl.cluster[pos]
    n_clusters = int(cl.max(initial=-1)) + 1
    # (image, cluster) and ((image, URL before), cluster) numbered once each: their pairs, their distinct
    # values (in order of first appearance) and which of the first each of the second is in.
    img_cl, img_cl_values = pd.factorize(img * n_clusters + cl)
    ip_cl, ip_cl_values = pd.factorize(ip_code * n_clusters + cl)
    in_cluster = _dense_pairs(img_cl) - _dense_pairs(ip_cl)
    clusters = 0
    examples: list[tuple[str, str]] = []
    if len(img):
        # Clusters the rule explains: two or more URLs before the rule, one image and one cluster after.
        # (An (image, URL before) code and a cluster is in the (image, cluster) of any of its pages: its
        # first's, found by writing the pages last to first.)
        first_page = np.empty(len(ip_cl_values), dtype=np.int64)
        first_page[ip_cl[::-1]] = np.arange(len(ip_cl) - 1, -1, -1)
        n_pre = np.bincount(img_cl[first_page], minlength=len(img_cl_values))
        clusters = len(pd.unique(img_cl_values[n_pre > 1] % max(n_clusters, 1)))
        # Counter-examples: rewritten URLs holding pages of two clusters, in order of their first page (a
        # group is made only as far as the examples need).
        clusters_per_img = np.bincount(img_cl_values // max(n_clusters, 1))
        mixed = np.flatnonzero(clusters_per_img[img] > 1)
        order = np.argsort(img[mixed], kind="stable")
        by_img = mixed[order]
        starts = np.flatnonzero(np.r_[True, np.diff(img[by_img]) != 0]) if len(mixed) else mixed
        ends = np.r_[starts[1:], len(by_img)]
        for g in np.argsort(by_img[starts], kind="stable").tolist():
            if len(examples) >= COUNTER_EXAMPLES:
                break
            rows = by_img[starts[g] : ends[g]]
            a = rows[0]
            b = rows[(cl[rows] != cl[a]) & (pre[rows] != pre[a])]
            if len(b):
                examples.append((crawl.table.url(pos[a]), crawl.table.url(pos[b[0]])))
    return RuleStats(rule, merging.merged, in_cluster, clusters, merging.saved, examples)


@dataclass(frozen=True, slots=True)
class _TrapFamilies:
    """The crawl-trap families with at least `min_urls` distinct URLs, as no threshold changes them: what
    `crawl_traps` counts the distinct texts of at each threshold."""

    min_urls: int
    family: np.ndarray  # per family kept: its code (`ParsedUrls.trap_name`), in family code order
    urls: np.ndarray  # its distinct URLs
    example: list[str]  # the URL of its first page
    positions: np.ndarray  # the pages of the kept families (table positions, ascending)
    of_page: np.ndarray  # per such page: its family's index among the kept (0..len(family)-1)


def _trap_families(table: UrlTable, min_urls: int) -> _TrapFamilies:
    on = np.flatnonzero(table.trap_family >= 0)
    family, base = table.trap_family[on], table.base[on]
    n = table.n_trap_families
    n_base = int(base.max(initial=-1)) + 1
    urls = np.bincount(pd.unique(family * n_base + base) // max(n_base, 1), minlength=n)
    kept = np.flatnonzero(urls >= min_urls)
    index = np.full(n, -1, dtype=np.int64)
    index[kept] = np.arange(len(kept))
    at = index[family] >= 0
    positions = on[at]
    of_page = index[family[at]]
    first = np.full(len(kept), len(positions), dtype=np.int64)
    at_first = np.flatnonzero(~pd.Series(of_page).duplicated().to_numpy())  # each family's first page
    first[of_page[at_first]] = at_first
    return _TrapFamilies(
        min_urls=min_urls,
        family=kept,
        urls=urls[kept],
        example=[table.url(p) for p in positions[first].tolist()],
        positions=positions,
        of_page=of_page,
    )


def crawl_traps(
    pages: pd.DataFrame,
    *,
    min_urls: int = TRAP_MIN_URLS,
    max_text_share: float = TRAP_MAX_TEXT_SHARE,
    table: UrlTable | None = None,
) -> pd.DataFrame:
    """URL pattern families of a host (numbers and id-like segments generalized, query values dropped) with
    many URLs and few distinct texts (calendars, sort orders, session paths): host, pattern, urls, texts.
    With `table` (the pages' `url_table`) only the clusters are read from `pages`, and only those of the
    pages of families with `min_urls` URLs or more (found once per table)."""
    table = table if table is not None else url_table(pages)
    return _traps(table, table.cluster_of(pages), min_urls, max_text_share)


def _traps(table: UrlTable, cluster: np.ndarray, min_urls: int, max_text_share: float) -> pd.DataFrame:
    """`crawl_traps` of the table's pages in clusters `cluster` (table order)."""
    families = table.trap_families(min_urls)
    columns = ["host", "pattern", "urls", "distinct_texts", "example"]
    if not len(families.family):
        return pd.DataFrame(columns=columns)
    cluster = cluster[families.positions]
    clustered = cluster >= 0
    n_clusters = int(cluster.max(initial=-1)) + 1
    texts = pd.unique(families.of_page[clustered] * n_clusters + cluster[clustered]) // max(n_clusters, 1)
    distinct_texts = np.bincount(texts, minlength=len(families.family))
    kept = pa.array(families.family)
    out = pd.DataFrame(
        {
            "host": table.parse.trap_hosts.take(kept).to_pylist(),
            "pattern": table.parse.trap_patterns.take(kept).to_pylist(),
            "urls": families.urls,
            "distinct_texts": distinct_texts,
            "example": families.example,
        }
    )
    out = out[out["distinct_texts"] <= max_text_share * out["urls"]]
    return out.sort_values(
        ["urls", "distinct_texts", "host", "pattern"], ascending=[False, True, True, True], kind="stable"
    ).reset_index(drop=True)


def learn_rules(
    pages: pd.DataFrame,
    *,
    min_precision: float = MIN_PRECISION,
    min_support: int = MIN_SUPPORT_PAIRS,
    table: UrlTable | None = None,
    progress: Progress = _no_progress,
) -> LearnedRules:
    """URL rules from an analysis' pages (`analysis.analyze`: url, page_id, cluster_id, cluster_size).

    A rule is kept when it merges at least `min_support` URL pairs of one cluster and at least
    `min_precision` of the URL pairs it merges are in one cluster, measured with the other kept rules of its
    host applied. `table`, the pages' `url_table` made once for every threshold, saves parsing the URLs and
    rewriting them again under a rule set already measured. `progress(stage, done, total)` is told of
    each rule measured, round by round."""
    crawl = _Crawl.of(pages, table)
    rules = sorted(candidate_rules(pages, crawl.table, crawl.cluster), key=lambda r: (r.host, r.kind, r.name))
    stats: list[RuleStats] = []
    dropped: dict[UrlRule, RuleStats] = {}
    memo: dict[tuple[UrlRule, frozenset[UrlRule]], RuleStats] = {}
    for round_number in range(1, MAX_ROUNDS + 1):
        stats = []
        stage = f"measuring the candidate rules, round {round_number}"
        for done, (r, mine) in enumerate(_with_host_rules(rules)):
            # A rule's numbers depend only on the rules of its host: measured again only when those change.
            key = (r, frozenset(mine))
            if key not in memo:
                progress(stage, done, len(rules))
                memo[key] = _measure(crawl, r, mine)
            stats.append(memo[key])
        bad = [s for s in stats if s.precision < min_precision or s.pairs_in_cluster < min_support]
        if not bad:
            break
        # The last round drops every failing rule: no rule is accepted on figures that fail.
        for s in _to_drop(bad) if round_number < MAX_ROUNDS else bad:
            dropped[s.rule] = s
        rules = [s.rule for s in stats if s.rule not in dropped]
    saved = crawl.table.saved_by(rules)
    accepted = sorted((s for s in stats if s.rule in rules), key=lambda s: (-s.pages_saved, s.rule.host))
    rejected = sorted(dropped.values(), key=lambda s: (-s.pairs_in_cluster, s.rule.host))
    return LearnedRules(
        accepted, rejected, saved, _traps(crawl.table, crawl.cluster, TRAP_MIN_URLS, TRAP_MAX_TEXT_SHARE)
    )


def rule_stats(pages: pd.DataFrame, rules: Sequence[UrlRule]) -> list[RuleStats]:
    """Each rule measured with the others against the pages' `cluster_id` (e.g. a ground truth's clusters)."""
    crawl = _Crawl.of(pages)
    return [_measure(crawl, r, mine) for r, mine in _with_host_rules(rules)]


def rewritten_urls(urls: Sequence[str], rules: Sequence[UrlRule]) -> list[str]:
    """Each URL as the rules rewrite it (on the rule form: https, no trailing slash, sorted query, host kept)."""
    out = []
    for url in urls:
        key = url_key(url)
        out.append(url if key is None else apply_rules_to_key(key, rules).text())
    return out


def _by_host(rules: Sequence[UrlRule]) -> dict[str, list[UrlRule]]:
    """The rules of each bare host, in the order given."""
    by_host: dict[str, list[UrlRule]] = defaultdict(list)
    for r in rules:
        by_host[bare_host(r.host)].append(r)
    return by_host


def _to_drop(bad: Sequence[RuleStats]) -> list[RuleStats]:
    """The failing rules one round of `learn_rules` drops, host by host (a host's rules are measured with
    each other). A rule that merges URL pairs badly goes at once. A rule that merges none may be the twin of
    another kept beside it (a parameter dropped on `www.host` and on `host`: each does what the other does):
    dropping both twins together would lose the rewrite, so while a host has no bad rule that merges pairs,
    one rule of each (kind, name) merging none goes per round (a `www.` form before the bare host's), and
    the rest are measured again without it."""
    by_host: dict[str, list[RuleStats]] = defaultdict(list)
    for s in bad:
        by_host[bare_host(s.rule.host)].append(s)
    out: list[RuleStats] = []
    for stats in by_host.values():
        if merging := [s for s in stats if s.merged_pairs]:
            out += merging
            continue
        twins: dict[tuple[str, str], list[RuleStats]] = defaultdict(list)
        for s in stats:
            twins[(s.rule.kind, s.rule.name)].append(s)
        out += [max(g, key=lambda s: (len(s.rule.host), s.rule.host)) for g in twins.values()]
    return out


def _with_host_rules(rules: Sequence[UrlRule]) -> list[tuple[UrlRule, list[UrlRule]]]:
    """Each rule with the rules of its (bare) host, in the order given: only those rewrite the pages of its
    host and its aliases."""
    by_host = _by_host(rules)
    return [(r, by_host[bare_host(r.host)]) for r in rules]


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


def fetch_savings(pages: pd.DataFrame) -> FetchSavings:
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
