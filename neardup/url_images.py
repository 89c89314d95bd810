"""Rewritten-URL codes of many URL keys under a set of URL rules (`image_codes`): equal codes, equal
rewritten URLs, as `urls.rewrite_key` gives them.

A rule rewrites few of its host's URLs (a query parameter some URLs carry, a path segment in some paths):
the keys a rule set cannot change are found with array operations (`BaseParts`: each key's host, path
and query as integer codes, the keys carrying each query parameter, the paths with upper case or a `;`),
and of the others only the path or the query a rule changes is rewritten, once per distinct path or query
and set of rules touching it (a query such as `utm_source=x` recurs on many paths). URL rules of a
million-page crawl measure each of a few hundred rule sets on up to every URL of a host."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .factorized import first_rows
from .parsed_urls import ParsedUrls
from .urls import UrlKey, UrlRule, bare_host, rewrite_path, rewrite_query

try:  # the compiled kernels (`pip install` builds them); without them, numpy does the same
    from . import _kernels as kernels
except ImportError:  # pragma: no cover - a source checkout without a C compiler
    kernels = None  # type: ignore[assignment]

_NONE = np.empty(0, dtype=np.int64)


# Rewritten parts kept (`BaseParts.rewrites`): beyond this many, they are dropped and made again as needed.
MAX_KEPT_REWRITES = 2_000_000


@dataclass(frozen=True, slots=True)
class BaseParts:
    """URL keys (by code, as in `rules.UrlTable.base_keys`) split into integer codes, and what each rule
    may touch."""

    host: np.ndarray  # code of each key's host (as written: not the bare host)
    host_names: np.ndarray
    path: np.ndarray  # code of each key's path
    # The distinct paths, in code order, as Arrow strings: a million-page crawl has nearly as many.
    paths: pa.StringArray
    # `paths` where every one is ASCII (those of URLs of the common shape), else None.
    ascii_paths: pa.StringArray | None
    query: np.ndarray  # code of each key's query pairs
    queries: dict[tuple[tuple[str, str], ...], int]
    query_list: list[tuple[tuple[str, str], ...]]  # the distinct queries, in code order
    with_param: dict[str, np.ndarray]  # query parameter name -> the codes of the keys carrying it
    queries_with: dict[str, list[int]]  # query parameter name -> the codes of the queries carrying it
    # What the paths have (`lower_paths`, `upper`, `semicolon`), made at the first rule that asks.
    derived: dict[str, Any] = field(default_factory=dict)
    # Per query parameter name: the code of its values in each query (`param_values`), made once per name.
    values: dict[str, np.ndarray] = field(default_factory=dict)
    # Per rule kind and name: which keys the rule may touch (`touches`), made once per name.
    masks: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    # A number per sequence of rules that touch a path or a query (a short key for `rewrites`).
    rule_sets: dict[tuple[UrlRule, ...], int] = field(default_factory=dict)
    # "path" or "query" -> {path or query code << 32 | number of the rules touching it: the code rewritten}:
    # a known code, or one of `new_paths` / `new_queries`, numbered after the known ones.
    rewrites: dict[str, dict[int, int]] = field(default_factory=dict)
    new_paths: dict[str, int] = field(default_factory=dict)
    new_queries: dict[tuple[tuple[str, str], ...], int] = field(default_factory=dict)
    # Host name -> its code: the known hosts', then those only a host alias names (numbered after).
    host_codes: dict[str, int] = field(default_factory=dict)
    # The code of each known path by its text (`TextIndex` of `paths`), made at the first path rewritten.
    path_index: list[TextIndex] = field(default_factory=list)

    @classmethod
    def of(cls, keys: Sequence[UrlKey]) -> BaseParts:
        host, host_names = pd.factorize(pd.Series([k.host for k in keys], dtype=object))
        path, paths = pd.factorize(pd.Series([k.path for k in keys], dtype=object))
        query, query_list = pd.factorize(pd.Series([k.query for k in keys], dtype=object))
        distinct_paths = pa.array(np.asarray(paths, dtype=object), type=pa.string())
        return cls.of_codes(host, list(host_names), path, distinct_paths, query, list(query_list))

    @classmethod
    def of_parse(cls, parse: ParsedUrls) -> BaseParts:
        """The parts of a crawl's base URL keys (by base code), as `url_parse.parse_urls` coded them."""
        return cls.of_codes(
            parse.key_host, parse.hosts, parse.key_path, parse.paths, parse.key_query, parse.queries
        )

    @classmethod
    def of_codes(
        cls,
        host: np.ndarray,
        host_names: Sequence[str],
        path: np.ndarray,
        paths: pa.StringArray,
        query: np.ndarray,
        query_list: Sequence[tuple[tuple[str, str], ...]],
    ) -> BaseParts:
        """The parts of keys given as codes: per key its host, path and query code, and the distinct
        hosts, paths (Arrow strings) and queries by code. What a path or a query has is found once per
        distinct one."""
        ascii_paths = paths if pc.all(pc.string_is_ascii(paths)).as_py() is not False else None
        path = np.asarray(path, dtype=np.int64)
        query = np.asarray(query, dtype=np.int64)
        # The keys of each query code, for the keys carrying each parameter name.
        by_query = np.argsort(query, kind="stable")
        ends = np.cumsum(np.bincount(query, minlength=len(query_list)))
        names: dict[str, list[int]] = defaultdict(list)
        for code, pairs in enumerate(query_list):
            for name in {n for n, _ in pairs}:
                names[name].append(code)
        starts = ends - np.bincount(query, minlength=len(query_list))
        with_param = {
            name: np.sort(np.concatenate([by_query[starts[c] : ends[c]] for c in codes]))
            for name, codes in names.items()
        }
        return cls(
            host=np.asarray(host, dtype=np.int64),
            host_names=np.asarray(list(host_names), dtype=object),
            path=path,
            paths=paths,
            ascii_paths=ascii_paths,
            query=query,
            queries={q: i for i, q in enumerate(query_list)},
            query_list=list(query_list),
            with_param=with_param,
            queries_with=dict(names),
        )

    def touches(self, rule: UrlRule) -> np.ndarray:
        """Per key: whether `rule` may change it, whichever of its host's rules run before it (rules only
        drop parts and lowercase the path: a parameter, a `;` or upper case absent from a key never
        appears; a segment appears only where its lowercased name is in the lowercased path, or, for a
        name with a `;`, where the path has one; a host alias moves only the keys of its bare host)."""
        if rule.kind == "drop_path_param":
            return self.semicolon
        if rule.kind == "fold_case":
            return self.upper
        alias = rule.kind == "host_alias"
        key = (rule.kind, bare_host(rule.name + rule.host) if alias else rule.name)
        if (found := self.masks.get(key)) is None:
            if alias:
                bare = np.asarray([bare_host(str(h)) for h in self.host_names], dtype=object)
                found = (bare == key[1])[self.host] if len(bare) else np.zeros(len(self.host), dtype=bool)
            elif rule.kind == "drop_param":
                found = np.zeros(len(self.host), dtype=bool)
                found[self.with_param.get(rule.name, _NONE)] = True
            else:
                if self.ascii_paths is not None and rule.name.isascii():  # Arrow folds ASCII as str.lower
                    has = pc.match_substring(self.ascii_paths, rule.name, ignore_case=True)
                    found = has.to_numpy(zero_copy_only=False).astype(bool)[self.path]
                else:
                    name = rule.name.lower()
                    found = self.lower_paths.str.contains(name, regex=False).to_numpy(dtype=bool)[self.path]
                if ";" in rule.name:
                    found = found | self.semicolon
            found = self.masks[key] = found
        return found

    @property
    def lower_paths(self) -> pd.Series:
        """Each distinct path (by code) lowercased as `str.lower` does (ASCII in Arrow)."""
        if (found := self.derived.get("lower")) is None:
            if self.ascii_paths is not None:
                found = pd.Series(pd.arrays.ArrowStringArray(pc.ascii_lower(self.ascii_paths)))
            else:
                found = pd.Series(self.paths.to_pylist(), dtype=object).str.lower()
            self.derived["lower"] = found
        return found

    @property
    def upper(self) -> np.ndarray:
        """Per key: whether its path has a character `str.lower` changes."""
        if (found := self.derived.get("upper")) is None:
            if self.ascii_paths is not None:
                has = pc.match_substring_regex(self.ascii_paths, "[A-Z]")
                distinct = has.to_numpy(zero_copy_only=False).astype(bool)
            else:
                distinct = (self.lower_paths != pd.Series(self.paths.to_pylist(), dtype=object)).to_numpy(
                    dtype=bool
                )
            found = self.derived["upper"] = distinct[self.path]
        return found

    @property
    def semicolon(self) -> np.ndarray:
        """Per key: whether its path has a `;` (a path parameter)."""
        if (found := self.derived.get("semicolon")) is None:
            if self.ascii_paths is not None:
                distinct = (
                    pc.match_substring(self.ascii_paths, ";").to_numpy(zero_copy_only=False).astype(bool)
                )
            else:
                distinct = pc.match_substring(self.paths, ";").to_numpy(zero_copy_only=False).astype(bool)
            found = self.derived["semicolon"] = distinct[self.path]
        return found

    def param_values(self, name: str) -> np.ndarray:
        """Per query code: a code of the values the parameter `name` has in it, in order (equal codes,
        equal values), -1 for a query without it."""
        if (found := self.values.get(name)) is None:
            codes = self.queries_with.get(name, [])
            values = [tuple(v for n, v in self.query_list[c] if n == name) for c in codes]
            found = np.full(len(self.query_list), -1, dtype=np.int64)
            if codes:
                found[codes] = pd.factorize(pd.Series(values, dtype=object))[0]
            self.values[name] = found
        return found

    def n_codes(self) -> tuple[int, int]:
        """(path codes, query codes) so far: the known ones and the rewritten ones no key has."""
        return len(self.paths) + len(self.new_paths), len(self.queries) + len(self.new_queries)

    def host_code(self, name: str) -> int:
        """The code of host `name`: its code among the keys' hosts, or one numbered after them."""
        if not self.host_codes:
            self.host_codes.update((str(h), i) for i, h in enumerate(self.host_names))
        return self.host_codes.setdefault(name, len(self.host_codes))

    def widths(self) -> tuple[int, int, int]:
        """(host, path, query) codes so far: a rewritten URL's parts are below these, whenever rewritten
        (codes are never renumbered)."""
        n_path, n_query = self.n_codes()
        return max(len(self.host_codes), len(self.host_names)), n_path, n_query

    def rewritten(
        self, part: str, codes: np.ndarray, touching: np.ndarray, rules: Sequence[UrlRule]
    ) -> np.ndarray:
        """The `part` ("path" or "query") codes `codes` of keys rewritten, each by the `rules` that touch
        its key (`touching`: rules x keys, from `touches`). Each distinct part and set of rules is
        rewritten once (`urls.rewrite_path`, `urls.rewrite_query`) and kept for the next call."""
        kept = self.rewrites.setdefault(part, {})
        if len(kept) >= MAX_KEPT_REWRITES:
            kept.clear()
        if len(rules) < 63:
            sets = (touching.astype(np.int64) << np.arange(len(rules), dtype=np.int64)[:, None]).sum(axis=0)
        else:
            sets = np.unique(touching.T, axis=0, return_inverse=True)[1].reshape(-1)
        set_codes, set_values = pd.factorize(sets)
        n_sets = len(set_values)
        first_of_set = first_rows(set_codes)  # each set's first key, in code order
        set_rules = [
            tuple(r for r, on in zip(rules, touching[:, first].tolist(), strict=True) if on)
            for first in first_of_set.tolist()
        ]
        numbers = np.asarray(
            [self.rule_sets.setdefault(mine, len(self.rule_sets)) for mine in set_rules], dtype=np.int64
        )
        groups, distinct = pd.factorize(codes * n_sets + set_codes)
        # One integer per (part code, rule set number): the rule set numbers stay below 2**32.
        memo = ((distinct // n_sets) << 32 | numbers[distinct % n_sets]).tolist()
        out = list(map(kept.get, memo))
        missing = [g for g, found in enumerate(out) if found is None]
        if missing:
            code, s = np.divmod(distinct[missing], n_sets)
            made = self._rewrite(part, code, [set_rules[i] for i in s.tolist()])
            for g, found in zip(missing, made, strict=True):
                out[g] = kept[memo[g]] = found
        return np.asarray(out, dtype=np.int64)[groups]

    def _rewrite(self, part: str, codes: np.ndarray, rule_sets: Sequence[Sequence[UrlRule]]) -> list[int]:
        """The code of each path or query `codes[i]` rewritten by `rule_sets[i]`: a known one's, else one
        numbered after them (`new_paths`, `new_queries`)."""
        if part == "path":
            texts = [
                rewrite_path(path, rules)
                for path, rules in zip(self.paths.take(codes).to_pylist(), rule_sets, strict=True)
            ]
            if not self.path_index:
                self.path_index.append(TextIndex.of(self.paths))
            known = self.path_index[0].codes_of(texts).tolist()
            n_known = len(self.paths)
            return [
                k if k >= 0 else self.new_paths.setdefault(t, n_known + len(self.new_paths))
                for t, k in zip(texts, known, strict=True)
            ]
        out = []
        for code, rules in zip(codes.tolist(), rule_sets, strict=True):
            query = rewrite_query(self.query_list[code], rules)
            if (found := self.queries.get(query)) is None:
                found = self.new_queries.setdefault(query, len(self.queries) + len(self.new_queries))
            out.append(found)
        return out


# `text_hashes` works on this many bytes of text at a time (its temporaries are 8 bytes a byte of text).
_HASH_CHUNK_BYTES = 1 << 22
_HASH_MULTIPLIER = np.uint64(0x100000001B3)  # FNV-1's 64-bit prime: odd, so no byte's weight is 0
_HASH_LENGTH = np.uint64(0x9E3779B97F4A7C15)


def text_hashes(texts: pa.StringArray) -> np.ndarray:
    """A 64-bit hash of each string of `texts` (no nulls), of its UTF-8 bytes alone: the sum of each byte
    times the multiplier to the power of its position (1-based, modulo 2**64), mixed with the length.
    Equal strings, equal hashes; unequal strings may collide (`TextIndex` compares the strings). Computed
    on the Arrow buffers, so no Python string is made: by the compiled kernel in one pass over the bytes
    where it is built, else by `bytes_hashes`."""
    if not isinstance(texts, pa.LargeStringArray):
        texts = texts.cast(pa.large_string())
    _, offset_buffer, data_buffer = texts.buffers()
    if offset_buffer is None or not len(texts):
        return np.empty(0, dtype=np.uint64)
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.empty(0, np.uint8)
    if kernels is None:
        return bytes_hashes(offsets, data)
    out = np.empty(len(texts), dtype=np.uint64)
    kernels.text_hashes(np.ascontiguousarray(offsets), data, out)
    return out


def bytes_hashes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """`text_hashes` of the strings `data[offsets[i]:offsets[i + 1]]` (offsets int64, data uint8) in numpy:
    its temporaries are 8 bytes a byte of text, so it works on _HASH_CHUNK_BYTES at a time."""
    lengths = np.diff(offsets)
    out = lengths.astype(np.uint64) * _HASH_LENGTH
    if not len(lengths):
        return out
    powers = np.cumprod(np.full(max(int(lengths.max()), 1), _HASH_MULTIPLIER, dtype=np.uint64))
    start = 0
    while start < len(lengths):
        end = int(np.searchsorted(offsets, offsets[start] + _HASH_CHUNK_BYTES, side="right")) - 1
        end = min(max(end, start + 1), len(lengths))
        low, high = int(offsets[start]), int(offsets[end])
        within = lengths[start:end]
        on = np.flatnonzero(within > 0)
        if len(on):
            starts = offsets[start:end] - low
            position = np.arange(high - low) - np.repeat(starts, within)
            terms = data[low:high].astype(np.uint64) * powers[position]
            out[start + on] ^= np.add.reduceat(terms, starts[on])
        start = end
    return out


@dataclass(frozen=True, slots=True)
class TextIndex:
    """The code (position) of each of distinct Arrow strings by their text: their `text_hashes` sorted,
    looked up for the texts asked for and compared with the strings they hash alike (8 + 8 bytes a
    string beside the strings, where a Python index of them holds each as an object)."""

    texts: pa.StringArray
    hashes: np.ndarray  # ascending
    codes: np.ndarray  # the code of each of `hashes`

    @classmethod
    def of(cls, texts: pa.StringArray) -> TextIndex:
        hashes = text_hashes(texts)
        order = np.argsort(hashes, kind="stable")
        return cls(texts, hashes[order], order.astype(np.int64))

    def codes_of(self, wanted: Sequence[str]) -> np.ndarray:
        """The code of each of `wanted` among the texts, -1 for a text not among them."""
        found = np.full(len(wanted), -1, dtype=np.int64)
        if not len(wanted) or not len(self.hashes):
            return found
        hashes = text_hashes(pa.array(list(wanted), type=pa.string()))
        low = np.searchsorted(self.hashes, hashes, side="left")
        high = np.searchsorted(self.hashes, hashes, side="right")
        hit = np.flatnonzero(high > low)
        if not len(hit):
            return found
        # Mostly one string a hash: compared at once; the texts of a hash shared by several, one by one.
        single = hit[high[hit] - low[hit] == 1]
        if len(single):
            candidate = self.codes[low[single]]
            asked = pa.array([wanted[i] for i in single.tolist()], type=pa.string())
            same = pc.equal(self.texts.take(pa.array(candidate)), asked).to_numpy(zero_copy_only=False)
            found[single[same]] = candidate[same]
        for i in hit[high[hit] - low[hit] > 1].tolist():
            for code in self.codes[low[i] : high[i]].tolist():
                if self.texts[code].as_py() == wanted[i]:
                    found[i] = code
                    break
        return found


@dataclass(frozen=True, slots=True)
class ImageParts:
    """Keys rewritten under a set of URL rules, as codes that keep their meaning from one call to the next
    (`BaseParts.host_code`, path and query codes): rewritten URLs of two calls compare equal by them."""

    host: np.ndarray
    path: np.ndarray
    query: np.ndarray

    def ids(self, widths: tuple[int, int, int]) -> np.ndarray:
        """One integer per rewritten URL, for parts below `widths` (`BaseParts.widths`)."""
        _, n_path, n_query = widths
        return (self.host * n_path + self.path) * n_query + self.query

    def take(self, at: np.ndarray) -> ImageParts:
        """The keys at `at`."""
        return ImageParts(self.host[at], self.path[at], self.query[at])

    def below(self, widths: tuple[int, int, int]) -> np.ndarray:
        """Per key: whether its parts are below `widths` (a part coded later is none of the URLs then)."""
        n_host, n_path, n_query = widths
        return (self.host < n_host) & (self.path < n_path) & (self.query < n_query)


def image_parts(parts: BaseParts, codes: np.ndarray, rules: Sequence[UrlRule]) -> ImageParts:
    """For the key codes `codes`: the parts of each key rewritten by the rules of its host and of the host it
    aliases. Only the paths and queries of the keys the rules may change are rewritten
    (`BaseParts.rewritten`)."""
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
    for h in sorted(pd.unique(host).tolist()):
        name = str(parts.host_names[h])
        moved = target.get(bare_host(name), name)
        to_host[h] = parts.host_code(moved)
        if not (mine := ops.get(bare_host(moved))):
            continue
        at = np.flatnonzero(host == h)
        keys = codes[at]
        for part, column, of_part in (
            ("path", path, [r for r in mine if r.kind != "drop_param"]),
            ("query", query, [r for r in mine if r.kind == "drop_param"]),
        ):
            if not of_part:
                continue
            hits = np.stack([parts.touches(r)[keys] for r in of_part])
            some = hits.any(axis=0)
            if some.any():
                where = at[some]
                column[where] = parts.rewritten(part, column[where], hits[:, some], of_part)
    return ImageParts(to_host[host], path, query)


def image_codes(parts: BaseParts, codes: np.ndarray, rules: Sequence[UrlRule]) -> np.ndarray:
    """For the distinct key codes `codes`: the code of each key rewritten by the rules of its host and of the
    host it aliases (0..k-1; equal codes, equal rewritten URLs), from `image_parts`."""
    image = image_parts(parts, codes, rules)
    return pd.factorize(image.ids(parts.widths()))[0].astype(np.int64)
