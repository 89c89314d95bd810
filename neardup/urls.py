"""URL canonicalization: the twins a crawler fetches twice collapse to one string."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from .errors import ConfigError, show_value

TRACKING_PARAMS = frozenset({"gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "ref", "src"})


def _is_tracking(name: str) -> bool:
    n = name.lower()
    return n.startswith("utm_") or n in TRACKING_PARAMS


def canonicalize_url(url: str) -> str:
    """Canonical form of a URL, idempotent.

    Lowercase scheme and host, https for http, no `www.`, no fragment, no default port, no trailing
    slash (except the root `/`), no tracking parameters (`utm_*`, gclid, fbclid, msclkid, mc_cid,
    mc_eid, ref, src), remaining query parameters sorted. The path keeps its case.
    A string that is not an absolute http(s) URL is returned stripped, otherwise unchanged.
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return url
    host = parts.hostname.lower().rstrip(".")
    host = bare_host(host)
    if port and port not in (80, 443):
        host = f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k))
    return urlunsplit(("https", host, path, urlencode(query, quote_via=quote), ""))


def host_of(url: str) -> str:
    """Host of a canonical URL (no `www.`), or "" when there is none."""
    try:
        return (urlsplit(url).hostname or "").removeprefix("www.")
    except ValueError:
        return ""


# --- URL rules: per-host rewrites learned from duplicate clusters (neardup.rules) -------------------
RULE_KINDS = ("host_alias", "drop_segment", "drop_path_param", "fold_case", "drop_param")


class UrlRuleDict(TypedDict):
    """A `UrlRule` as dupcheck.yaml and JSON give it: its name only where it has one."""

    host: str
    kind: str
    name: NotRequired[str]


@dataclass(frozen=True, slots=True)
class UrlRule:
    """One per-host rewrite that maps URL variants of a page onto one URL.

    kind: host_alias (`name` is a leading label such as "m." or "uk." that `host` is also served under),
    drop_segment (a path segment such as "print", "amp" or "index.html"), drop_path_param (a `;name=value`
    path parameter such as jsessionid), fold_case (the site ignores the case of its paths; no name),
    drop_param (a query parameter, whatever its value). `host` is compared without a leading `www.`.
    """

    host: str
    kind: str
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise ConfigError(
                f"url rule kind must be one of {', '.join(RULE_KINDS)}, not {show_value(self.kind)}"
            )
        if not isinstance(self.host, str) or not self.host or not isinstance(self.name, str):
            raise ConfigError(
                f"a url rule needs a host and a name, not {show_value(self.host)} / {show_value(self.name)}"
            )
        if self.kind == "host_alias" and not (self.name.endswith(".") and len(self.name) > 1):
            raise ConfigError(
                f"a host_alias url rule name is a label ending in '.', such as 'm.', not {show_value(self.name)}"
            )
        if self.kind not in ("fold_case", "host_alias") and (not self.name or "/" in self.name):
            raise ConfigError(f"a {self.kind} url rule needs a name without '/', not {show_value(self.name)}")

    def as_dict(self) -> UrlRuleDict:
        d: UrlRuleDict = {"host": self.host, "kind": self.kind}
        if self.name:
            d["name"] = self.name
        return d


@dataclass(frozen=True, slots=True)
class UrlKey:
    """A URL split for rewriting: host, path (no trailing slash) and the sorted query pairs."""

    scheme: str
    host: str
    path: str
    query: tuple[tuple[str, str], ...]

    def text(self) -> str:
        return urlunsplit((self.scheme, self.host, self.path, urlencode(self.query, quote_via=quote), ""))


def url_key(url: str) -> UrlKey | None:
    """The parts of an http(s) URL that URL rules rewrite (scheme folded to https, host lowercased, no
    fragment, no trailing slash, query sorted); None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    if port and port not in (80, 443):
        host = f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = tuple(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return UrlKey("https", host, path, query)


def bare_host(host: str) -> str:
    """`host` without its leading `www.` labels, but never the registrable name itself ("www.com" stays):
    idempotent."""
    while host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return host


def apply_rules_to_key(key: UrlKey, rules: Sequence[UrlRule]) -> UrlKey:
    """`key` rewritten by the rules of its host: aliases first, then the path, then the query."""
    host = key.host
    for r in rules:
        if (
            r.kind == "host_alias"
            and host.startswith(r.name)
            and bare_host(host[len(r.name) :]) == bare_host(r.host)
        ):
            host = r.host
    target = bare_host(host)
    return rewrite_key(
        key, host, [r for r in rules if r.kind != "host_alias" and bare_host(r.host) == target]
    )


def rewrite_key(key: UrlKey, host: str, rules: Sequence[UrlRule]) -> UrlKey:
    """`key` moved to `host` and rewritten by `rules` (path and query rules of that host, in order)."""
    if not rules:
        return key if host == key.host else UrlKey(key.scheme, host, key.path, key.query)
    return UrlKey(key.scheme, host, rewrite_path(key.path, rules), rewrite_query(key.query, rules))


def rewrite_path(path: str, rules: Sequence[UrlRule]) -> str:
    """`path` rewritten by the path rules among `rules`, in order (a query rule never changes a path)."""
    for r in rules:
        if r.kind == "drop_path_param":
            path = re.sub(r";" + re.escape(r.name) + r"=[^/;]*", "", path, flags=re.IGNORECASE)
        elif r.kind == "drop_segment":
            path = "/".join(s for s in path.split("/") if s != r.name) or "/"
        elif r.kind == "fold_case":
            path = path.lower()
    return path


def rewrite_query(
    query: tuple[tuple[str, str], ...], rules: Sequence[UrlRule]
) -> tuple[tuple[str, str], ...]:
    """`query` without the parameters the `drop_param` rules among `rules` name."""
    names = {r.name for r in rules if r.kind == "drop_param"}
    return tuple(kv for kv in query if kv[0] not in names) if names else query


def apply_url_rules(url: str, rules: Sequence[UrlRule]) -> str:
    """`url` rewritten by the URL rules, then canonicalized (`canonicalize_url`); idempotent."""
    canonical = canonicalize_url(url)
    if not rules:
        return canonical
    key = url_key(canonical)
    return canonical if key is None else canonicalize_url(apply_rules_to_key(key, rules).text())
