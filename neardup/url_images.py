"""Rewritten-URL codes of many URL keys under a set of URL rules (`image_codes`): equal codes, equal
rewritten URLs, as `urls.rewrite_key` gives them.

A rule rewrites few of its host's URLs (a query parameter some URLs carry, a path segment in some paths):
the keys a rule set cannot change are found with array operations (`BaseParts`: each key's host, path
and query as integer codes, the keys carrying each query parameter, the paths with upper case or a `;`),
and only the others are rewritten one by one. URL rules of a million-page crawl measure each of a few
hundred rule sets on up to every URL of a host."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .urls import UrlKey, UrlRule, bare_host, rewrite_key

_NONE = np.empty(0, dtype=np.int64)


# Rewrites kept per key and the rules that touch it (`BaseParts.rewrites`): beyond this many, they are
# dropped and made again as needed.
MAX_KEPT_REWRITES = 2_000_000


@dataclass(frozen=True, slots=True)
class BaseParts:
    """URL keys (by code, as in `rules.UrlTable.base_keys`) split into integer codes, and what each rule
    may touch."""

    host: np.ndarray  # code of each key's host (as written: not the bare host)
    host_names: np.ndarray
    path: np.ndarray  # code of each key's path
    paths: pd.Index  # the distinct paths, in code order
    lower_paths: pd.Series  # each key's path, lowercased
    query: np.ndarray  # code of each key's query pairs
    queries: dict[tuple[tuple[str, str], ...], int]
    upper: np.ndarray  # the path has a character `str.lower` changes
    semicolon: np.ndarray  # the path has a `;` (a path parameter)
    with_param: dict[str, np.ndarray]  # query parameter name -> the codes of the keys carrying it
    # Per rule kind and name: which keys the rule may touch (`touches`), made once per name.
    masks: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    # (key code, host moved to, the rules that touch it) -> the key rewritten (`rewrite_key`).
    rewrites: dict[tuple[int, str, tuple[UrlRule, ...]], UrlKey] = field(default_factory=dict)

    @classmethod
    def of(cls, keys: Sequence[UrlKey]) -> BaseParts:
        host, host_names = pd.factorize(pd.Series([k.host for k in keys], dtype=object))
        key_paths = pd.Series([k.path for k in keys], dtype=object)
        path, paths = pd.factorize(key_paths)
        query, query_list = pd.factorize(pd.Series([k.query for k in keys], dtype=object))
        with_param: dict[str, list[int]] = defaultdict(list)
        for code, key in enumerate(keys):
            for name in {n for n, _ in key.query}:
                with_param[name].append(code)
        lower = key_paths.str.lower()
        return cls(
            host=host.astype(np.int64),
            host_names=np.asarray(host_names, dtype=object),
            path=path.astype(np.int64),
            paths=pd.Index(paths, dtype=object),
            lower_paths=lower,
            query=query.astype(np.int64),
            queries={q: i for i, q in enumerate(query_list)},
            upper=(lower != key_paths).to_numpy(dtype=bool),
            semicolon=key_paths.str.contains(";", regex=False).to_numpy(dtype=bool),
            with_param={n: np.asarray(c, dtype=np.int64) for n, c in with_param.items()},
        )

    def touches(self, rule: UrlRule) -> np.ndarray:
        """Per key: whether `rule` may change it, whichever of its host's rules run before it (rules only
        drop parts and lowercase the path: a parameter, a `;` or upper case absent from a key never
        appears; a segment appears only where its lowercased name is in the lowercased path, or, for a
        name with a `;`, where the path has one)."""
        if rule.kind == "drop_path_param":
            return self.semicolon
        if rule.kind == "fold_case":
            return self.upper
        key = (rule.kind, rule.name)
        if (found := self.masks.get(key)) is None:
            if rule.kind == "drop_param":
                found = np.zeros(len(self.host), dtype=bool)
                found[self.with_param.get(rule.name, _NONE)] = True
            else:
                found = self.lower_paths.str.contains(rule.name.lower(), regex=False).to_numpy(dtype=bool)
                if ";" in rule.name:
                    found = found | self.semicolon
            found = self.masks[key] = found
        return found

    def rewrite(
        self, code: int, keys: Sequence[UrlKey], host: str, rules: Sequence[UrlRule], touching: Sequence[bool]
    ) -> UrlKey:
        """Key `code` moved to `host` and rewritten by `rules`, of which only those `touching` it can change
        it (`touches`): rewritten by those, once per such set."""
        mine = tuple(r for r, on in zip(rules, touching, strict=True) if on)
        memo = (code, host, mine)
        if (found := self.rewrites.get(memo)) is None:
            if len(self.rewrites) >= MAX_KEPT_REWRITES:
                self.rewrites.clear()
            found = self.rewrites[memo] = rewrite_key(keys[code], host, mine)
        return found


def image_codes(
    parts: BaseParts, keys: Sequence[UrlKey], codes: np.ndarray, rules: Sequence[UrlRule]
) -> np.ndarray:
    """For the distinct key codes `codes`: the code of each key rewritten by the rules of its host and of the
    host it aliases (0..k-1; equal codes, equal rewritten URLs). Only the keys the rules may change are
    rewritten with `rewrite_key`."""
    ops: dict[str, list[UrlRule]] = defaultdict(list)
    target: dict[str, str] = {}  # bare host -> the host its pages move to (aliases)
    for r in rules:
        if r.kind == "host_alias":
            target[bare_host(r.name + r.host)] = r.host
        else:
            ops[bare_host(r.host)].append(r)
    host = parts.host[codes]
    path, query = parts.path[codes].copy(), parts.query[codes].copy()
    to_host = np.zeros(len(parts.host_names), dtype=np.int64)
    hosts: dict[str, int] = {}
    rewritten: list[tuple[int, UrlKey]] = []
    for h in np.unique(host).tolist():
        name = str(parts.host_names[h])
        moved = target.get(bare_host(name), name)
        to_host[h] = hosts.setdefault(moved, len(hosts))
        if mine := ops.get(bare_host(moved)):
            at = np.flatnonzero(host == h)
            hits = np.stack([parts.touches(r)[codes[at]] for r in mine])
            some = hits.any(axis=0)
            for j, column in zip(at[some].tolist(), hits[:, some].T.tolist(), strict=True):
                rewritten.append((j, parts.rewrite(int(codes[j]), keys, moved, mine, column)))
    if rewritten:
        at = np.asarray([j for j, _ in rewritten], dtype=np.int64)
        new_paths = [k.path for _, k in rewritten]
        found = parts.paths.get_indexer(pd.Index(new_paths, dtype=object)).tolist()
        new_codes: dict[object, int] = {}  # paths and queries no key has: codes after the known ones
        path[at] = [
            c if c >= 0 else new_codes.setdefault(p, len(parts.paths) + len(new_codes))
            for c, p in zip(found, new_paths, strict=True)
        ]
        new_codes.clear()
        query[at] = [
            parts.queries[k.query]
            if k.query in parts.queries
            else new_codes.setdefault(k.query, len(parts.queries) + len(new_codes))
            for _, k in rewritten
        ]
    n_path = len(parts.paths) + len(rewritten) + 1
    n_query = len(parts.queries) + len(rewritten) + 1
    ids = (to_host[host] * n_path + path) * n_query + query
    return np.unique(ids, return_inverse=True)[1].reshape(-1).astype(np.int64)
