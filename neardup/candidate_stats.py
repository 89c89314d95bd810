"""What a candidate search did (`CandidateStats`): its counts, the tables it used and the buckets it capped.

The statistics are fields; the notes and the warning a person reads are rendered from them where they are
shown (`CandidateStats.notes`, `CandidateStats.warnings`). They are stored (a fingerprint set's `stats`, a
Spark manifest's `candidate_stats`) as `StoredStats`; `upgrade_stored_stats` reads the form an older
version stored, where notes and the warning were one list of text, once, when the file is upgraded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

# A bucket with more members than this is boilerplate being fingerprinted, not duplication:
# its pairs are not enumerated (they would be quadratic) and the bucket is reported.
BUCKET_CAP = 2000
# Ends the warning about capped buckets (`CandidateStats.warnings`).
CAPPED_NOTE = "were not expanded: boilerplate is being fingerprinted"
# The fixed cap meets more large families as a crawl grows (a site's product pages sharing a spec table):
# capped buckets are a sign of boilerplate only where they hold this share of the index's bucket
# memberships (units x tables). The 16 KB generated crawl's 8 capped LSH buckets at 100k pages (precision
# and recall 1.000) hold 0.3%; fingerprinted boilerplate puts most pages of a site in one bucket per table.
CAPPED_WARN_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class SizeClassTables:
    """The LSH bands x rows of the size-class distances that share them (each band is one table)."""

    bands: int
    rows: int
    distances: tuple[int, ...]

    @property
    def note(self) -> str:
        """The line the candidate statistics carry for these tables."""
        apart = ", ".join(map(str, self.distances))
        return f"size classes {apart} apart: LSH bands x rows = {self.bands} x {self.rows}"


def size_class_capped_note(buckets: int, members: int, bucket_cap: int) -> str:
    """The note on the size-class pass's buckets above `bucket_cap` (`candidates.add_size_class_pass`)."""
    return (
        f"{buckets} size-class bucket(s) with more than {bucket_cap} members "
        f"({members} members) were not expanded: their pairs are left to the one index"
    )


class StoredTables(TypedDict):
    bands: int
    rows: int
    distances: list[int]


class StoredStats(TypedDict):
    """`CandidateStats` as stored (JSON): its fields, no text."""

    tables: int
    candidates: int
    largest_bucket: int
    capped_buckets: int
    capped_members: int
    capped_index: str
    bucket_cap: int
    verified_exact: int
    rejected_exact: int
    size_class_capped_buckets: int
    size_class_capped_members: int
    lsh_bands: int
    lsh_rows: int
    size_class_tables: list[StoredTables]


@dataclass(slots=True)
class CandidateStats:
    tables: int = 0
    candidates: int = 0
    largest_bucket: int = 0
    capped_buckets: int = 0
    capped_members: int = 0
    # The index whose capped buckets are the warning ("SimHash", "LSH", "size-class LSH"; `warn_capped`),
    # and the cap they were above.
    capped_index: str = ""
    bucket_cap: int = BUCKET_CAP
    # MinHash with exact verification: pairs whose shingle sets were intersected, and how many of
    # them fell below the floor (their estimate had passed it).
    verified_exact: int = 0
    rejected_exact: int = 0
    # The size-class pass's buckets above the cap: a note, not the warning (`add_size_class_pass`); counted
    # so that a fingerprint set extended with new texts states them as a full computation would.
    size_class_capped_buckets: int = 0
    size_class_capped_members: int = 0
    # The one LSH index's bands x rows (0 x 0: no LSH index, SimHash) and the size-class pass's tables.
    lsh_bands: int = 0
    lsh_rows: int = 0
    size_class_tables: tuple[SizeClassTables, ...] = field(default_factory=tuple)

    def merge(self, other: CandidateStats) -> None:
        self.tables += other.tables
        self.candidates += other.candidates
        self.largest_bucket = max(self.largest_bucket, other.largest_bucket)
        self.capped_buckets += other.capped_buckets
        self.capped_members += other.capped_members

    def warn_capped(self, kind: str, bucket_cap: int) -> None:
        """Mark `capped_buckets` buckets (of `kind`: SimHash or LSH) above `bucket_cap` as the warning."""
        if self.capped_buckets:
            self.capped_index = kind
            self.bucket_cap = bucket_cap

    def capped_share(self, n_units: int) -> float:
        """The share of the index's bucket memberships (`n_units` x tables) that capped buckets hold."""
        memberships = n_units * self.tables
        return self.capped_members / memberships if memberships else 1.0

    @property
    def notes(self) -> tuple[str, ...]:
        """Information on the search, in the order it ran: the one index's bands x rows, the size-class
        tables, the size-class buckets above the cap."""
        out = [f"LSH bands x rows = {self.lsh_bands} x {self.lsh_rows}"] if self.lsh_bands else []
        out.extend(t.note for t in self.size_class_tables)
        if self.size_class_capped_buckets:
            out.append(
                size_class_capped_note(
                    self.size_class_capped_buckets, self.size_class_capped_members, self.bucket_cap
                )
            )
        return tuple(out)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the report shows as warnings: buckets not expanded (`warn_capped`)."""
        if not (self.capped_buckets and self.capped_index):
            return ()
        return (
            f"{self.capped_buckets} {self.capped_index} bucket(s) with more than {self.bucket_cap} members "
            f"({self.capped_members} members) {CAPPED_NOTE}",
        )

    def as_dict(self) -> StoredStats:
        """The stored form (the `stats` of a fingerprint set, the manifest's `candidate_stats`)."""
        return {
            "tables": self.tables,
            "candidates": self.candidates,
            "largest_bucket": self.largest_bucket,
            "capped_buckets": self.capped_buckets,
            "capped_members": self.capped_members,
            "capped_index": self.capped_index,
            "bucket_cap": self.bucket_cap,
            "verified_exact": self.verified_exact,
            "rejected_exact": self.rejected_exact,
            "size_class_capped_buckets": self.size_class_capped_buckets,
            "size_class_capped_members": self.size_class_capped_members,
            "lsh_bands": self.lsh_bands,
            "lsh_rows": self.lsh_rows,
            "size_class_tables": [
                {"bands": t.bands, "rows": t.rows, "distances": list(t.distances)}
                for t in self.size_class_tables
            ],
        }

    @classmethod
    def from_dict(cls, stored: StoredStats) -> CandidateStats:
        """The stats from their stored form (`as_dict`)."""
        return cls(
            tables=int(stored["tables"]),
            candidates=int(stored["candidates"]),
            largest_bucket=int(stored["largest_bucket"]),
            capped_buckets=int(stored["capped_buckets"]),
            capped_members=int(stored["capped_members"]),
            capped_index=str(stored["capped_index"]),
            bucket_cap=int(stored["bucket_cap"]),
            verified_exact=int(stored["verified_exact"]),
            rejected_exact=int(stored["rejected_exact"]),
            size_class_capped_buckets=int(stored["size_class_capped_buckets"]),
            size_class_capped_members=int(stored["size_class_capped_members"]),
            lsh_bands=int(stored["lsh_bands"]),
            lsh_rows=int(stored["lsh_rows"]),
            size_class_tables=tuple(
                SizeClassTables(int(t["bands"]), int(t["rows"]), tuple(int(d) for d in t["distances"]))
                for t in stored["size_class_tables"]
            ),
        )


# --- the form older versions stored ----------------------------------------------------------------
_OLD_LSH = re.compile(r"LSH bands x rows = (\d+) x (\d+)")
_OLD_TABLES = re.compile(r"size classes ([\d, ]+) apart: LSH bands x rows = (\d+) x (\d+)")
_OLD_SIZE_CLASS_CAPPED = re.compile(
    r"(\d+) size-class bucket\(s\) with more than (\d+) members \((\d+) members\)"
)
_OLD_WARNING = re.compile(
    r"\d+ (.+) bucket\(s\) with more than (\d+) members \(\d+ members\) " + re.escape(CAPPED_NOTE)
)


def is_old_stored_stats(stored: Mapping[str, Any]) -> bool:
    """Whether `stored` is the form of an older version: notes and the warning as one list of text."""
    return "notes" in stored or "lsh_bands" not in stored


def upgrade_stored_stats(stored: Mapping[str, Any]) -> dict[str, Any]:
    """Stored statistics in the current form (`StoredStats`, other keys of `stored` kept): an older
    version's are read once, from their counts and the text of their notes, where the capped-bucket warning
    came last (only where buckets were capped) and the size-class counts were, in the oldest, in a note
    only. The current form is returned as it is (a copy)."""
    if not is_old_stored_stats(stored):
        return dict(stored)
    rest = {k: v for k, v in stored.items() if k != "notes"}
    notes = [str(n) for n in stored.get("notes", [])]
    capped = int(stored.get("capped_buckets", 0))
    warning = _OLD_WARNING.fullmatch(notes[-1]) if capped and notes else None
    info = notes[:-1] if warning else notes
    stats = CandidateStats(
        tables=int(stored.get("tables", 0)),
        candidates=int(stored.get("candidates", 0)),
        largest_bucket=int(stored.get("largest_bucket", 0)),
        capped_buckets=capped,
        capped_members=int(stored.get("capped_members", 0)),
        verified_exact=int(stored.get("verified_exact", 0)),
        rejected_exact=int(stored.get("rejected_exact", 0)),
        size_class_capped_buckets=int(stored.get("size_class_capped_buckets", 0)),
        size_class_capped_members=int(stored.get("size_class_capped_members", 0)),
    )
    if warning:
        stats.capped_index, stats.bucket_cap = warning[1], int(warning[2])
    tables = []
    for note in info:
        if m := _OLD_LSH.fullmatch(note):
            stats.lsh_bands, stats.lsh_rows = int(m[1]), int(m[2])
        elif m := _OLD_TABLES.fullmatch(note):
            tables.append(SizeClassTables(int(m[2]), int(m[3]), tuple(int(d) for d in m[1].split(", "))))
        elif m := _OLD_SIZE_CLASS_CAPPED.match(note):
            stats.bucket_cap = int(m[2])
            if "size_class_capped_buckets" not in stored:
                stats.size_class_capped_buckets, stats.size_class_capped_members = int(m[1]), int(m[3])
    stats.size_class_tables = tuple(tables)
    return {**rest, **stats.as_dict()}
