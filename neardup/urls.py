"""URL canonicalization: the twins a crawler fetches twice collapse to one string."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

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
    # Strip every leading "www." but never the registrable name itself ("www.com" stays): idempotent.
    while host.startswith("www.") and "." in host[4:]:
        host = host[4:]
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
