"""The schema of a neardup database (`schema.sql`): recognizing a file as neardup's (or refusing another
application's, or a damaged one, unwritten), making its tables, and upgrading a file of an older version."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import duckdb

from ..candidate_stats import upgrade_stored_stats
from ..errors import NeardupError, SchemaError
from ..pairkey import LABEL_COLUMNS
from ..rejects import RejectKind
from .analyses import SOURCE_ANALYSIS_TABLES
from .connection import ALIAS, StoreCore, one_row, one_value, sql_literal, writes

SCHEMA_VERSION = "6"
# Older versions this one upgrades in place on a writable open (read-only opens read them as they are),
# oldest first: a file of one of them takes the upgrade steps from its version on (`Store._upgrade`).
UPGRADABLE_VERSIONS = ("2", "3", "4", "5")
# The versions whose `ingest_errors` has no `kind` column.
BEFORE_REJECT_KINDS = ("2", "3")


def is_database_file(path: str | Path) -> bool:
    """Whether `path` is a DuckDB database file (its header names the format), not e.g. a crawl dump."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def kind_of_reason_sql(column: str) -> str:
    """SQL for the `RejectKind` of a reject written before kinds had a column of their own: the kind whose
    words begin `column` (the longest that does; every `Reject.detail` begins with its kind's words), and
    an unreadable record for a text no kind begins."""
    whens = " ".join(
        f"WHEN starts_with({column}, {sql_literal(k)}) THEN {sql_literal(k)}"
        for k in sorted(RejectKind, key=len, reverse=True)
    )
    return f"CASE {whens} ELSE {sql_literal(RejectKind.UNREADABLE)} END"


# What a neardup database holds besides its meta row, in every schema it opens (the oldest it upgrades
# included) and in a `neardup open` file (views): a file with neardup's meta row but not these is another
# application's, which may keep a meta(key, value) table with a schema_version row too.
_NEARDUP_SIGNATURE = {
    "sources": ("source_id", "sha256", "status"),
    "pages": ("page_id", "url", "canonical_url", "md5"),
    "ingest_errors": ("source", "reason"),
}
# What else than tables and views a file may hold that makes it another application's (parameter: the
# alias, four times).
_OTHER_OBJECTS = (
    "SELECT 'sequence', sequence_name FROM duckdb_sequences() WHERE database_name = ? "
    "UNION ALL SELECT 'macro', function_name FROM duckdb_functions() WHERE database_name = ? AND NOT internal "
    "UNION ALL SELECT 'type', type_name FROM duckdb_types() WHERE database_name = ? AND NOT internal "
    "UNION ALL SELECT 'schema', schema_name FROM duckdb_schemas() WHERE database_name = ? AND NOT internal"
)


_HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers


# The indexes of schema.sql's tables, made with them: only where a point lookup needs one (an index slows
# every insert into its table).
_INDEXES = {
    "warc_payloads": "CREATE INDEX IF NOT EXISTS warc_payloads_digest ON warc_payloads (payload_digest)",
}


class SchemaMixin(StoreCore):
    """The store's part that checks, makes and upgrades the file's schema."""

    created: bool  # whether this store made the file's schema (it was new, or empty)
    _ddl: dict[str, str]  # schema.sql's CREATE TABLE statements, by table

    def _check_schema(self) -> list[str]:
        """The neardup tables this file lacks; raises unless it is a neardup database of this version or
        holds nothing at all (another application's database is never written to)."""
        cur = self.cursor()
        objects = {
            r[0]
            for r in cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?", [ALIAS]
            ).fetchall()
        }
        ddl = resources.files("neardup").joinpath("schema.sql").read_text(encoding="utf-8")
        statements = {
            m.group(1): st
            for st in re.sub(r"--[^\n]*", "", ddl).split(";")
            if (m := re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", st))
        }
        if not self._file.writable:
            # A truncated file opens, and fails only at the first query that reads a lost block (or takes an
            # append into the hole). Every block in use is on disk, after three 4 KB headers; the header's
            # block count is no bound, as it may count free blocks at the end that were never written.
            block_size, used = one_row(
                cur.execute(
                    "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = ?",
                    [ALIAS],
                ).fetchone()
            )
            size, needed = Path(self.path).stat().st_size, _HEADER_BYTES + block_size * used
            if size < needed:
                raise NeardupError(
                    f"{self.path} is damaged (truncated or corrupt), {size:,} bytes where its blocks in use need "
                    f"{needed:,}: restore it or ingest into a new file"
                )
        if "meta" in objects:
            try:
                row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            except duckdb.Error:
                row = None
            if row is None:
                raise SchemaError(
                    f"{self.path} is not a neardup database (it has a meta table without neardup's "
                    "schema_version): give neardup a new file (--db)"
                )
            lacking = self._lacks_neardup_columns(cur)
            if lacking:
                raise SchemaError(
                    f"{self.path} is not a neardup database (it has a meta table with a schema_version row, "
                    f"but not neardup's {', '.join(lacking)}): give neardup a new file (--db)"
                )
            if row[0] in UPGRADABLE_VERSIONS:
                self._upgrade_from = row[0]
            elif row[0] != SCHEMA_VERSION:
                raise SchemaError(
                    f"{self.path} has schema version {row[0]}, this neardup needs {SCHEMA_VERSION}: "
                    "re-ingest into a new database file"
                )
        elif objects:
            shown = ", ".join(sorted(objects)[:5]) + (", ..." if len(objects) > 5 else "")
            raise SchemaError(
                f"{self.path} is another application's database (tables: {shown}), not a neardup one: "
                "give neardup a new file (--db)"
            )
        elif other := cur.execute(_OTHER_OBJECTS, [ALIAS] * 4).fetchall():
            shown = ", ".join(f"{kind} {name}" for kind, name in other[:5]) + (
                ", ..." if len(other) > 5 else ""
            )
            raise SchemaError(
                f"{self.path} is another application's database ({shown}), not a neardup one: "
                "give neardup a new file (--db)"
            )
        self._ddl = statements
        self._blocks = "pages" not in objects or self._pages_have_blocks(cur)
        return [name for name in statements if name not in objects]

    @staticmethod
    def _lacks_neardup_columns(cur: duckdb.DuckDBPyConnection) -> list[str]:
        """The tables or columns of `_NEARDUP_SIGNATURE` the file lacks, as `table.column`."""
        have = set(
            cur.execute(
                "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_catalog = ?",
                [ALIAS],
            ).fetchall()
        )
        return [
            f"{table}.{column}"
            for table, columns in _NEARDUP_SIGNATURE.items()
            for column in columns
            if (f"{table}.{column}",) not in have
        ]

    @staticmethod
    def _pages_have_blocks(cur: duckdb.DuckDBPyConnection) -> bool:
        return bool(
            one_value(
                cur.execute(
                    "SELECT count(*) FROM information_schema.columns WHERE table_catalog = ? "
                    "AND table_name = 'pages' AND column_name = 'html_block'",
                    [ALIAS],
                ).fetchone()
            )
        )

    @writes
    def _make_schema(self) -> None:
        """A new file gets every table and the meta row; an older one gains the tables added since, or is
        upgraded. The file is checked again under this write lease, which no other process can share: another
        may have made the schema since the read that led here (two first ingests into one new file: the
        tables are made once, by the first to write)."""
        missing = self._check_schema()
        cur = self.cursor()
        if missing:
            cur.execute("BEGIN TRANSACTION")
            for table in missing:
                cur.execute(self._ddl[table])
                if table in _INDEXES:
                    cur.execute(_INDEXES[table])
            if "meta" in missing:
                cur.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
                self.created = True
            cur.execute("COMMIT")
        if self._upgrade_from is not None:
            self._upgrade(self._upgrade_from)
            self._upgrade_from = None

    def _upgrade(self, version: str) -> None:
        """A file of an older schema `version` brought to SCHEMA_VERSION in one transaction, its rows kept:
        each step takes one version to the next."""
        steps = {
            "2": self._upgrade_labels_per_labeler,
            "3": self._upgrade_to_4,
            "4": self._upgrade_to_5,
            "5": self._upgrade_candidate_stats,
        }
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        for older in UPGRADABLE_VERSIONS[UPGRADABLE_VERSIONS.index(version) :]:
            steps[older](cur)
        cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [SCHEMA_VERSION])
        cur.execute("COMMIT")
        self._blocks = self._pages_have_blocks(cur)

    def _upgrade_to_4(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 3 -> 4: the rejects' kinds, and the html_blocks columns of `pages`."""
        self._upgrade_reject_kinds(cur)
        self._upgrade_html_blocks(cur)

    def _upgrade_candidate_stats(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 5 -> 6: each fingerprint set's candidate statistics as fields, read once from the text of
        their notes (`candidate_stats.upgrade_stored_stats`)."""
        for key, stats in cur.execute("SELECT fingerprint_key, stats FROM fingerprint_sets").fetchall():
            upgraded = upgrade_stored_stats(json.loads(stats) if stats else {})
            cur.execute(
                "UPDATE fingerprint_sets SET stats = ? WHERE fingerprint_key = ?", [json.dumps(upgraded), key]
            )

    def _upgrade_to_5(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 4 -> 5: the tables of each source's own analysis (empty: a comparison fills them). The
        version changes with them because a neardup of schema 4 rewrites fingerprint sets without dropping
        the analyses of their old unit ids: it must not open a file that holds some."""
        for table in SOURCE_ANALYSIS_TABLES:
            cur.execute(self._ddl[table])

    def _upgrade_html_blocks(self, cur: duckdb.DuckDBPyConnection) -> None:
        """`pages` gains the html_blocks columns; the HTML loaded before stays in `html`, where the readers
        find it (a Spark run's view keeps its own columns)."""
        kind = one_value(
            cur.execute(
                "SELECT table_type FROM information_schema.tables WHERE table_catalog = ? AND table_name = 'pages'",
                [ALIAS],
            ).fetchone()
        )
        if kind == "BASE TABLE" and not self._pages_have_blocks(cur):
            for column, sql_type in (
                ("html_block", "BIGINT"),
                ("html_start", "INTEGER"),
                ("html_bytes", "INTEGER"),
            ):
                cur.execute(f"ALTER TABLE pages ADD COLUMN {column} {sql_type}")

    def _upgrade_labels_per_labeler(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 2 -> 3: labels keyed by (pair, labeler) instead of by pair, rows kept as they are."""
        cur.execute("ALTER TABLE labels RENAME TO labels_v2")
        cur.execute(self._ddl["labels"])  # schema.sql's, as _check_schema parsed it
        cur.execute(
            f"INSERT INTO labels ({', '.join(LABEL_COLUMNS)}) SELECT url_a, md5_a, url_b, md5_b, label, category, "
            "note, coalesce(labeler, ''), labeled_at, setting FROM labels_v2"
        )
        cur.execute("DROP TABLE labels_v2")

    def _upgrade_reject_kinds(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Schema 3 -> 4: each reject's kind in a column of its own, read once from the words its reason
        begins with."""
        cur.execute("ALTER TABLE ingest_errors RENAME TO ingest_errors_v3")
        cur.execute(self._ddl["ingest_errors"])
        cur.execute(
            "INSERT INTO ingest_errors (source_id, source, line, kind, reason) "
            f"SELECT source_id, source, line, {kind_of_reason_sql('reason')}, reason FROM ingest_errors_v3"
        )
        cur.execute("DROP TABLE ingest_errors_v3")
