"""Why a record of a crawl dump is not loaded: a `Reject` of a `RejectKind` from a closed set, with the
sentence a user reads.

Every reject source (`ingest`, `warc`, `batches`; the store's duplicate check in SQL) makes one with
`RejectKind.reject`, so its detail begins with the kind's words; the store keeps both in `ingest_errors`
(`kind`, `reason`), and the ingest summary, the report, the app and Spark count by the kind.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class RejectKind(StrEnum):
    """What is wrong with a record, in words that begin its `Reject.detail`."""

    # the compressed file itself (one reject stands for the part of the file that is not read)
    TRUNCATED_FILE = "truncated compressed file"
    CORRUPT_FILE = "corrupt compressed file"
    TRAILING_DATA = "trailing data after the last gzip member"
    # one record, by its bytes
    LINE_TOO_LONG = "line too long"
    RECORD_TOO_LONG = "record too long"
    MALFORMED_CSV = "malformed CSV"
    MALFORMED_JSON = "malformed JSON"
    NOT_AN_OBJECT = "not a JSON object"
    TOO_DEEP = "JSON nested too deeply"
    INVALID_UTF8 = "invalid UTF-8"
    INVALID_UNICODE = "invalid Unicode"
    # one record, by its fields
    MISSING_URL = "missing url"
    MISSING_PAGE = "missing html or text"
    EMPTY_PAGE = "empty page"
    PAGE_TOO_LARGE = "page too large"
    # one WARC record
    MALFORMED_RECORD = "malformed record"
    RECORD_CUT_OFF = "record cut off"
    BAD_CONTENT_LENGTH = "bad Content-Length"
    BROKEN_HTTP_HEADER = "broken HTTP header"
    UNDECODABLE_ENCODING = "undecodable Content-Encoding"
    NOT_HTML = "not HTML"
    REVISIT_WITHOUT_RECORD = "revisit without its record"
    # one member of a WACZ (a ZIP), or a line of its pages list
    BAD_WACZ_MEMBER = "bad WACZ member"
    # a record the checks above do not know (a bug to report), and a repeat of an earlier record
    UNREADABLE = "unreadable record"
    DUPLICATE = "duplicate record"

    def reject(self, rest: str = "", variant: str = "") -> Reject:
        """A `Reject` of this kind whose detail is the kind's words followed by `rest` (where and why)."""
        return Reject(self, self + rest, variant)  # str's +: a plain str, without Enum's formatting


# The kinds that say part of a compressed file was not read (`engine.FileSummary.broken`).
BROKEN_FILE = frozenset({RejectKind.TRUNCATED_FILE, RejectKind.CORRUPT_FILE})


class Reject(NamedTuple):
    """A rejected record: its `kind`, and `detail`, the sentence a user reads (`ingest_errors.reason`):
    the kind's words, then where (a line, a byte offset, a WARC record's offset and URL) and why.
    `variant` is what an ingest summary counts the kind apart by (the MIME type of a payload that is not
    HTML, the Content-Encoding that failed)."""

    kind: RejectKind
    detail: str
    variant: str = ""

    @property
    def label(self) -> str:
        """The kind, and its variant if it has one: the key an ingest summary counts by."""
        return f"{self.kind} {self.variant}" if self.variant else str(self.kind)
