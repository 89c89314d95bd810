"""`FingerprintSet`: what the store holds on the fingerprints and pairs of one setting (`Config.fingerprint_key`).

A record the store reads (`Store.fingerprint_set`) and the fingerprint stages return; the units and pairs
themselves stay in the store's tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .candidate_stats import CandidateStats, upgrade_stored_stats

# The key of a fingerprint set's stored statistics that records the pages it was made from
# (`Store.page_coverage`): a set with it is checked, and extended, by page ids instead of by counting
# every text and unit.
COVERAGE = "pages_covered"


@dataclass(frozen=True, slots=True, kw_only=True)
class FingerprintSet:
    fingerprint_key: str
    norm_key: str
    method: str  # "simhash" | "minhash"
    shingle_size: int
    n_units: int
    n_pairs: int
    stats: CandidateStats  # of the candidate search
    # The pages it was made from (`Store.page_coverage`: last_page_id, pages); None where it does not say
    # (stored by an earlier version, or by a Spark run opened as a copy).
    coverage: dict[str, int] | None
    seconds: float
    computed_at: datetime

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> FingerprintSet:
        """The set from its `fingerprint_sets` row (statistics as JSON, in an older version's form where the
        file is not upgraded: a read-only open)."""
        stored = upgrade_stored_stats(json.loads(row["stats"]) if row["stats"] else {})
        coverage = stored.get(COVERAGE)
        return cls(
            fingerprint_key=str(row["fingerprint_key"]),
            norm_key=str(row["norm_key"]),
            method=str(row["method"]),
            shingle_size=int(row["shingle_size"]),
            n_units=int(row["n_units"]),
            n_pairs=int(row["n_pairs"]),
            stats=CandidateStats.from_dict(stored),  # type: ignore[arg-type]
            coverage=None if coverage is None else {k: int(v) for k, v in coverage.items()},
            seconds=0.0 if row["seconds"] is None else float(row["seconds"]),
            computed_at=row["computed_at"],
        )

    def stored_stats(self) -> dict[str, object]:
        """The `stats` column's value (`stored_stats`)."""
        return stored_stats(self.stats, self.coverage)


def stored_stats(stats: CandidateStats, coverage: dict[str, int] | None) -> dict[str, object]:
    """What a fingerprint set's `stats` column holds: the candidate statistics and the pages covered."""
    out: dict[str, object] = {**stats.as_dict()}
    if coverage is not None:
        out[COVERAGE] = coverage
    return out
