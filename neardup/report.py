"""The report: numbers an analyst can defend, as text or JSON."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypedDict

from .analysis import Analysis
from .config import Config, ConfigDict
from .gate import Verdict, VerdictDict
from .rules import FetchSavings, fetch_savings


class ReportDict(TypedDict):
    """The report as JSON (`report_dict`)."""

    setting: ConfigDict
    numbers: dict[str, int | float]  # `ReportNumbers.as_dict`
    degenerate_by_reason: dict[str, int]
    rejected_by_kind: dict[str, int] | None
    top_hosts: list[dict[Hashable, Any]]  # rows of `Analysis.hosts`
    warnings: list[str]
    gate: VerdictDict | None
    url_rules: FetchSavings | None


LABELS = [
    ("total_pages", "total pages"),
    ("degenerate_pages", "degenerate pages (set aside)"),
    ("content_pages", "content pages"),
    ("byte_identical_duplicates", "byte-identical duplicates (MD5 of HTML)"),
    ("exact_duplicates", "exact duplicates (same words, incl. byte-identical)"),
    ("near_duplicates", "near duplicates"),
    ("unique_pages", "unique pages (kept: one per cluster)"),
    ("duplicate_clusters", "duplicate clusters (2+ pages)"),
    ("largest_cluster", "largest cluster"),
    ("redundant_pages", "redundant pages (exact + near)"),
]


def describe_setting(analysis: Analysis) -> str:
    return describe_config(analysis.config)


def describe_config(c: Config) -> str:
    """A setting in one line: normalization, method, shingle size and the threshold's rule."""
    if c.method == "simhash":
        rule = f"hamming <= {int(c.threshold)} bits"
    else:
        rule = f"{c.similarity} >= {c.threshold:g} ({c.num_perm} permutations)"
    return f"normalize={c.normalization}, {c.method}, shingles of {c.shingle_size} words, {rule}"


def report_dict(
    analysis: Analysis,
    *,
    top_hosts: int = 10,
    verdict: Verdict | None = None,
    rejected: dict[str, int] | None = None,
) -> ReportDict:
    """The report as data; `gate` holds the verdict on the limits (null without limits), `rejected_by_kind`
    the records the ingest rejected, by `RejectKind` (`Store.rejects_by_kind`; null when not given)."""
    degenerate = (
        analysis.pages["degenerate"].dropna().map(lambda r: r.split(" ")[0] if r.startswith("status") else r)
    )
    return {
        "setting": analysis.config.to_dict(),
        "numbers": analysis.numbers.as_dict(),
        "degenerate_by_reason": {str(k): int(v) for k, v in degenerate.value_counts().items()},
        "rejected_by_kind": rejected,
        "top_hosts": analysis.hosts.head(top_hosts).to_dict(orient="records"),
        "warnings": analysis.warnings,
        "gate": verdict.as_dict() if verdict is not None else None,
        "url_rules": fetch_savings(analysis.pages) if analysis.config.url_rules else None,
    }


def report_text(
    analysis: Analysis,
    *,
    top_hosts: int = 10,
    verdict: Verdict | None = None,
    rejected: dict[str, int] | None = None,
) -> str:
    n = analysis.numbers
    total = max(n["total_pages"], 1)
    lines = [f"neardup report  ({describe_setting(analysis)})", ""]
    width = max(len(label) for _, label in LABELS)
    for key, label in LABELS:
        value = n[key]
        pct = (
            f"  {100 * value / total:5.1f}%"
            if key not in ("total_pages", "largest_cluster", "duplicate_clusters")
            else ""
        )
        lines.append(f"  {label:<{width}}  {value:>9,}{pct}")
    d = report_dict(analysis, top_hosts=top_hosts)
    if d["degenerate_by_reason"]:
        reasons = ", ".join(f"{k} {v}" for k, v in d["degenerate_by_reason"].items())
        lines += ["", f"  degenerate by reason: {reasons}"]
    if rejected:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in rejected.items())
        lines += [
            "",
            f"  records rejected at ingest ({sum(rejected.values()):,}, not counted above): {kinds}",
        ]
    hosts = analysis.hosts.head(top_hosts)
    if len(hosts):
        lines += ["", "  top hosts by redundant pages:"]
        hw = max(hosts["host"].str.len().max(), 4)
        lines.append(f"    {'host':<{hw}}  {'pages':>7}  {'redundant':>9}  {'%':>5}")
        for row in hosts.itertuples():
            lines.append(
                f"    {row.host:<{hw}}  {row.pages:>7,}  {row.redundant:>9,}  {row.redundant_pct:>5.1f}"
            )
    if d["url_rules"] is not None:
        u = d["url_rules"]
        lines += [
            "",
            f"  url_rules ({len(analysis.config.url_rules)}): redundant {u['redundant_pct_before']:.1f}% of the "
            f"pages fetched; {u['pages_not_fetched']:,} pages would not have been fetched, redundant "
            f"{u['redundant_pct_after']:.1f}% of the rest",
        ]
    for w in analysis.warnings:
        lines += ["", f"  WARNING: {w}"]
    if verdict is not None:
        lines += ["", f"  quality gate: {'passed' if verdict.passed else 'FAILED'}"]
        lines += [f"    {'ok  ' if c.passed else 'FAIL'}  {c.line()}" for c in verdict.checks]
    return "\n".join(lines)
