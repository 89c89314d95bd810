"""A post-crawl quality gate: limits on the report's numbers, and the verdict a pipeline acts on.

A limit names one of the report's numbers and the most it may be: `redundant=20%` (a share of all
pages, as the report prints it) or `largest_cluster=400` (a count). A limit is crossed when the value
is above it; equal passes. Limits come from `dupcheck.yaml` (`gate:`) and `neardup report --fail-over`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from .errors import ConfigError, cut_text, show_value

# Gate metric -> (key in analysis.analyze's numbers, unit). "%" metrics are shares of all pages (the base
# the report's percentages use); "pages" and "clusters" metrics are counts.
METRICS: dict[str, tuple[str, str]] = {
    "redundant": ("redundant_pages", "%"),
    "degenerate": ("degenerate_pages", "%"),
    "exact": ("exact_duplicates", "%"),
    "near": ("near_duplicates", "%"),
    "byte_identical": ("byte_identical_duplicates", "%"),
    "largest_cluster": ("largest_cluster", "pages"),
    "duplicate_clusters": ("duplicate_clusters", "clusters"),
}


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `value` of `metric`: a percentage of all pages for "%" metrics, else a count."""

    metric: str
    value: float

    @property
    def unit(self) -> str:
        return METRICS[self.metric][1]

    def __str__(self) -> str:  # the form it is written in: "20%", "400"
        return f"{self.value:g}%" if self.unit == "%" else f"{int(self.value)}"


def parse_limit(metric: str, value: Any) -> Limit:
    """A `Limit` from a metric name and its limit ("20%", "400", or a YAML number for a count)."""
    if metric not in METRICS:
        raise ConfigError(f"unknown gate metric {show_value(metric)}: use one of {', '.join(METRICS)}")
    unit = METRICS[metric][1]
    text = (
        str(value).strip() if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    )
    if text is None:
        raise ConfigError(f"gate limit for {metric} must be a number, not {show_value(value)}")
    percent = text.endswith("%")
    written = cut_text(text)
    if percent and unit != "%":
        raise ConfigError(f"gate limit {metric}={written}: {metric} is a count of {unit}, not a percentage")
    if not percent and unit == "%":
        raise ConfigError(
            f"gate limit {metric}={written}: {metric} is a share of all pages; write it as {written}%"
        )
    number = text.removesuffix("%").strip()
    try:
        limit = float(number)
    except ValueError:
        raise ConfigError(f"gate limit {metric}={written}: {show_value(number)} is not a number") from None
    return check_limit(Limit(metric, limit), written=text)


def check_limit(limit: Limit, *, written: str | None = None) -> Limit:
    """`limit` if its metric exists and its value is in range for the metric's unit; else ConfigError."""
    if limit.metric not in METRICS:
        raise ConfigError(f"unknown gate metric {show_value(limit.metric)}: use one of {', '.join(METRICS)}")
    unit, value = METRICS[limit.metric][1], limit.value
    shown = f"{limit.metric}={cut_text(written) if written is not None else value}"
    if not isinstance(value, float | int) or isinstance(value, bool):
        raise ConfigError(f"gate limit {shown}: not a number")
    if unit == "%":
        if not 0 <= value <= 100:
            raise ConfigError(f"gate limit {shown}: a percentage from 0% to 100%")
    elif not math.isfinite(value) or value < 0 or value != int(value):
        raise ConfigError(f"gate limit {shown}: a whole number of {unit}, 0 or more")
    return limit


def parse_option(text: str) -> Limit:
    """A `Limit` from `--fail-over METRIC=LIMIT`."""
    metric, sep, value = text.partition("=")
    if not sep:
        raise ConfigError(f"--fail-over takes METRIC=LIMIT (e.g. redundant=20%), not {show_value(text)}")
    return parse_limit(metric.strip(), value)


def merge(base: tuple[Limit, ...], overrides: tuple[Limit, ...] | list[Limit]) -> tuple[Limit, ...]:
    """`base` with each metric that `overrides` names replaced (a later override of a metric wins)."""
    out = {limit.metric: limit for limit in base}
    for limit in overrides:
        out[limit.metric] = limit
    return tuple(out.values())


class CheckDict(TypedDict):
    """A `Check` as the report's JSON gives it: a "%" limit's value rounded to 4 places, a count's as is."""

    metric: str
    value: float
    limit: float
    unit: str
    count: int
    passed: bool


class VerdictDict(TypedDict):
    """A `Verdict` as the report's JSON gives it (its `gate`)."""

    passed: bool
    limits: list[CheckDict]


@dataclass(frozen=True, slots=True)
class Check:
    limit: Limit
    value: float  # in the limit's unit: a percentage of all pages, or a count
    count: int  # the number it was computed from

    @property
    def passed(self) -> bool:
        return self.value <= self.limit.value

    def as_dict(self) -> CheckDict:
        return {
            "metric": self.limit.metric,
            "value": round(self.value, 4) if self.limit.unit == "%" else self.count,
            "limit": self.limit.value if self.limit.unit == "%" else int(self.limit.value),
            "unit": self.limit.unit,
            "count": self.count,
            "passed": self.passed,
        }

    def line(self) -> str:
        """One line naming the value and the limit, e.g. "redundant 55.00% of 40 pages > limit 20%"."""
        verdict = "within" if self.passed else "over"
        if self.limit.unit == "%":
            return f"{self.limit.metric}: {self.value:.2f}% ({self.count:,} pages) is {verdict} the limit {self.limit}"
        return f"{self.limit.metric}: {self.count:,} {self.limit.unit} is {verdict} the limit {self.limit}"


@dataclass(frozen=True, slots=True)
class Verdict:
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def as_dict(self) -> VerdictDict:
        return {"passed": self.passed, "limits": [c.as_dict() for c in self.checks]}


def evaluate(numbers: Mapping[str, Any], limits: tuple[Limit, ...]) -> Verdict:
    """Check each limit against the report's numbers (`analysis.analyze`); percentages are exact, not rounded."""
    total = int(numbers["total_pages"])
    checks = []
    for limit in limits:
        count = int(numbers[METRICS[limit.metric][0]])
        value = 100.0 * count / max(total, 1) if limit.unit == "%" else float(count)
        checks.append(Check(limit, value, count))
    return Verdict(tuple(checks))
