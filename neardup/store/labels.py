"""Labels: an analyst's verdict on a pair of pages (`pairkey`), one per pair and labeler, written at once,
taken back (undo), merged from another's labels.csv, and read back with a version that says when they
changed."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict, cast

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from ..csvsafe import DEFUSED_PATTERN
from ..errors import NeardupError, SchemaError
from ..pairkey import LABEL_COLUMNS, LABELS, SIDES_SWAPPED_SQL, key_of, pair_key
from .connection import ALIAS, StoreCore, one_value, reads, transaction, writes


class LabelRow(TypedDict):
    """A label as `LabelsMixin.label_of` reads it: the columns `pairkey.LABEL_COLUMNS` names."""

    url_a: str
    md5_a: str
    url_b: str
    md5_b: str
    label: str  # duplicate | not | unsure
    category: str | None
    note: str | None
    labeler: str
    labeled_at: object  # pandas.Timestamp
    setting: str | None  # the JSON text of the setting the label was given at


# An imported label may carry a time this far ahead of this machine's clock (two machines' clocks differ).
LABEL_CLOCK_SKEW = timedelta(minutes=5)
_LABEL_COLUMNS_SQL = ", ".join(LABEL_COLUMNS)
_LABEL_UPSERT = (
    f"INSERT INTO labels ({_LABEL_COLUMNS_SQL}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (url_a, md5_a, url_b, md5_b, labeler) DO UPDATE SET label = excluded.label, "
    "category = excluded.category, note = excluded.note, labeled_at = excluded.labeled_at, "
    "setting = excluded.setting WHERE excluded.labeled_at > labels.labeled_at"
)
# Tabs of one app are threads of one process sharing one DuckDB instance, where two transactions
# writing one table at once conflict ("Conflict on update"): label writes take turns on this lock.
_LABEL_WRITES = threading.Lock()


class LabelsMixin(StoreCore):
    """The store's part that keeps the labels."""

    @writes
    def _write_labels(self, rows: list[list[Any]]) -> list[bool]:
        """Upsert label rows in one transaction, all of them or none: whether each was kept (a stored label
        of the same pair and labeler given later than the row's `labeled_at` stays)."""
        kept = []
        with _LABEL_WRITES:
            cur = self.cursor()
            with transaction(cur):
                for row in rows:
                    kept.append(one_value(cur.execute(_LABEL_UPSERT, row).fetchone()) > 0)
        return kept

    def write_labels(self, labels: Sequence[Mapping[str, Any]]) -> list[bool]:
        """Store labels (`labels()` rows: url_a, md5_a, url_b, md5_b, label, category, note, labeler,
        labeled_at, setting as JSON text) in one transaction, committed when this returns; whether each
        was kept. The latest label of a pair and labeler by `labeled_at` is kept, whichever is written
        last (two tabs of one labeler, a label queued while the file was busy)."""
        rows = []
        for r in labels:
            a, ma, b, mb = key_of(r)
            rows.append(
                [
                    a,
                    ma,
                    b,
                    mb,
                    r["label"],
                    r["category"],
                    r["note"],
                    r["labeler"] or "",
                    r["labeled_at"],
                    r["setting"],
                ]
            )
        return self._write_labels(rows)

    @writes
    def record_label(
        self,
        url_a: str,
        url_b: str,
        *,
        label: str,
        md5_a: str = "",
        md5_b: str = "",
        category: str | None = None,
        note: str | None = None,
        labeler: str | None = None,
        setting: dict[str, Any] | None = None,
        labeled_at: datetime | None = None,
    ) -> bool:
        """Store one label at once, replacing this labeler's label of the same pair given before
        `labeled_at` (default: now); a later one stays, and this returns False. Another labeler's label of
        the pair stays. A side is (canonical URL, MD5 of the page's bytes); sides are stored in sorted
        order."""
        a, ma, b, mb = pair_key(url_a, md5_a, url_b, md5_b)
        when = labeled_at or datetime.now(UTC).replace(tzinfo=None)
        setting_json = json.dumps(setting) if setting else None
        return self._write_labels([[a, ma, b, mb, label, category, note, labeler or "", when, setting_json]])[
            0
        ]

    @reads
    def label_of(
        self, url_a: str, url_b: str, *, md5_a: str = "", md5_b: str = "", labeler: str | None = None
    ) -> LabelRow | None:
        """This labeler's label of a pair (all columns), or None."""
        a, ma, b, mb = pair_key(url_a, md5_a, url_b, md5_b)
        df = (
            self.cursor()
            .execute(
                f"SELECT {_LABEL_COLUMNS_SQL} FROM labels WHERE url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? "
                "AND labeler = ?",
                [a, ma, b, mb, labeler or ""],
            )
            .df()
        )
        return None if df.empty else cast(LabelRow, df.iloc[0].to_dict())

    @writes
    def delete_label(
        self, url_a: str, url_b: str, *, md5_a: str = "", md5_b: str = "", labeler: str | None = None
    ) -> None:
        """Remove this labeler's label of a pair (undo)."""
        a, ma, b, mb = pair_key(url_a, md5_a, url_b, md5_b)
        self.cursor().execute(
            "DELETE FROM labels WHERE url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? AND labeler = ?",
            [a, ma, b, mb, labeler or ""],
        )

    @writes
    def take_back_label(
        self,
        url_a: str,
        url_b: str,
        *,
        md5_a: str = "",
        md5_b: str = "",
        labeler: str | None = None,
        given_at: datetime,
        previous: Mapping[str, Any] | None = None,
    ) -> bool:
        """Undo: the label this labeler gave the pair at `given_at` replaced by `previous` (a `label_of`
        row: the label it replaced), or removed when there was none; False, and nothing changed, when the
        stored label is no longer the one given at `given_at` (a later one replaced it)."""
        a, ma, b, mb = pair_key(url_a, md5_a, url_b, md5_b)
        key = [a, ma, b, mb, labeler or ""]
        where = "url_a = ? AND md5_a = ? AND url_b = ? AND md5_b = ? AND labeler = ? AND labeled_at = ?"
        with _LABEL_WRITES:
            cur = self.cursor()
            with transaction(cur):
                if previous is None:
                    n = cur.execute(f"DELETE FROM labels WHERE {where}", [*key, given_at]).fetchone()
                else:
                    setting = _cell(previous.get("setting"))
                    n = cur.execute(
                        "UPDATE labels SET label = ?, category = ?, note = ?, labeled_at = ?, setting = ? "
                        f"WHERE {where}",
                        [
                            previous["label"],
                            _cell(previous.get("category")),
                            _cell(previous.get("note")),
                            pd.Timestamp(previous["labeled_at"]).to_pydatetime(),
                            setting if setting is None or isinstance(setting, str) else json.dumps(setting),
                            *key,
                            given_at,
                        ],
                    ).fetchone()
        return bool(one_value(n))

    @writes
    def import_labels(self, labels: pd.DataFrame, *, now: datetime | None = None) -> int:
        """Merge labels (e.g. a colleague's labels.csv) and return how many rows of the table were added or
        changed. All or nothing: every row is checked first, and any bad row refuses the whole file with a
        message naming the row (1 = the first data row) and the column.

        Columns: `url_a`, `url_b`, `label` (one of LABELS); optional `md5_a` / `md5_b` (32 hex digits; missing:
        the label applies to the URLs), `category`, `note`, `labeler`, `labeled_at` (ISO 8601, UTC unless it
        names an offset; not later than `now` plus LABEL_CLOCK_SKEW) and `setting` (a JSON object). Each row
        is inserted as it is; on a key the table already holds, a timed row replaces the stored label when it
        is newer, and a row without a time never replaces one (it is stored at `now` when its key is new).
        Within one file only the newest row of a key is kept. Text cells defused by `csvsafe.to_csv` are
        restored."""
        need = ["url_a", "url_b", "label"]
        missing = [c for c in need if c not in labels.columns]
        if missing:
            raise NeardupError(f"a labels file needs the columns {need}; it lacks {missing}")
        now = now or datetime.now(UTC).replace(tzinfo=None)
        columns = {"row": pa.array(np.arange(1, len(labels) + 1, dtype=np.int64))}
        for name in LABEL_COLUMNS:
            if name not in labels.columns:
                columns[name] = pa.nulls(len(labels), pa.string())
                continue
            try:  # strings (and NaN for empty cells) convert without a copy through Python objects
                columns[name] = pa.array(labels[name], type=pa.string(), from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                columns[name] = pa.array(labels[name].astype("string"), type=pa.string(), from_pandas=True)
        # every cell as text, '' for an empty one, with the quote csvsafe.to_csv put before a formula removed
        cells = ", ".join(
            f"CASE WHEN regexp_matches({c}, ?) THEN {c}[2:] ELSE coalesce({c}, '') END AS {c}"
            for c in LABEL_COLUMNS
        )
        cur = self.cursor()
        cur.execute("SET TimeZone = 'UTC'")  # this cursor only: a time without an offset is UTC
        cur.register("label_file", pa.table(columns))
        try:
            cur.execute(
                f"CREATE TEMP TABLE label_import AS SELECT row, {cells} FROM label_file",
                [DEFUSED_PATTERN] * len(LABEL_COLUMNS),
            )
            self._check_labels(cur, labels=LABELS, latest=now + LABEL_CLOCK_SKEW)
            return self._merge_labels(cur, now)
        finally:
            cur.execute("DROP TABLE IF EXISTS temp.label_import")
            cur.unregister("label_file")

    @staticmethod
    def _check_labels(cur: duckdb.DuckDBPyConnection, *, labels: Sequence[str], latest: datetime) -> None:
        """Raise one NeardupError naming the first bad rows (row, column, value, rule), or return."""
        ts = "TRY_CAST(NULLIF(labeled_at, '') AS TIMESTAMPTZ)"
        rules: list[tuple[str, str, str, list[Any]]] = [
            ("url_a", "url_a = ''", "is empty", []),
            ("url_b", "url_b = ''", "is empty", []),
            (
                "label",
                f"label NOT IN ({', '.join('?' * len(labels))})",
                f"is not one of {', '.join(labels)}",
                list(labels),
            ),
            (
                "md5_a",
                "md5_a <> '' AND NOT regexp_full_match(md5_a, '[0-9a-f]{32}')",
                "is not an MD5 (32 hex digits)",
                [],
            ),
            (
                "md5_b",
                "md5_b <> '' AND NOT regexp_full_match(md5_b, '[0-9a-f]{32}')",
                "is not an MD5 (32 hex digits)",
                [],
            ),
            ("labeled_at", f"labeled_at <> '' AND {ts} IS NULL", "is not an ISO 8601 time", []),
            (
                "labeled_at",
                f"{ts} > ?::TIMESTAMP",
                f"is in the future (after {latest:%Y-%m-%d %H:%M} UTC)",
                [latest],
            ),
            (
                "setting",
                "setting <> '' AND (NOT json_valid(setting) OR json_type(setting::JSON) <> 'OBJECT')",
                "is not a JSON object",
                [],
            ),
        ]
        found: list[tuple[int, str]] = []
        total = 0
        for column, where, rule, params in rules:
            n, first = cur.execute(
                f"SELECT count(*), list([row::VARCHAR, {column}] ORDER BY row)[1:3] FROM label_import WHERE {where}",
                params,
            ).fetchall()[0]
            total += n
            for row, value in first or []:
                found.append((int(row), f"row {row}, column {column}: {_shown(value)} {rule}"))
        if total:
            found.sort()
            more = f" (and {total - min(len(found), 3)} more)" if total > 3 else ""
            raise NeardupError(
                "labels file refused, nothing imported: " + "; ".join(m for _, m in found[:3]) + more
            )

    def _merge_labels(self, cur: duckdb.DuckDBPyConnection, now: datetime) -> int:
        """Insert the checked `label_import` rows in one transaction; the table's key decides what conflicts."""
        keys = cur.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() WHERE database_name = ? "
            "AND table_name = 'labels' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') "
            "ORDER BY constraint_type = 'PRIMARY KEY' DESC",
            [ALIAS],
        ).fetchall()
        if not keys:
            raise SchemaError(f"{self.path}: the labels table has no key to merge imported labels on")
        key = keys[0][0]
        nullable = dict(
            cur.execute(
                "SELECT column_name, is_nullable FROM duckdb_columns() WHERE database_name = ? AND table_name = 'labels'",
                [ALIAS],
            ).fetchall()
        )

        def text(name: str) -> str:  # an empty optional cell is NULL where the table allows it
            return f"NULLIF({name}, '')" if nullable.get(name, True) else name

        swap = SIDES_SWAPPED_SQL
        select = (
            f"SELECT row, CASE WHEN {swap} THEN url_b ELSE url_a END AS url_a, "
            f"CASE WHEN {swap} THEN md5_b ELSE md5_a END AS md5_a, "
            f"CASE WHEN {swap} THEN url_a ELSE url_b END AS url_b, "
            f"CASE WHEN {swap} THEN md5_a ELSE md5_b END AS md5_b, label, "
            f"{text('category')} AS category, {text('note')} AS note, {text('labeler')} AS labeler, "
            "coalesce(TRY_CAST(NULLIF(labeled_at, '') AS TIMESTAMPTZ)::TIMESTAMP, ?::TIMESTAMP) AS labeled_at, "
            "NULLIF(setting, '')::JSON AS setting FROM label_import WHERE (labeled_at <> '') = ?"
        )
        out = ", ".join(LABEL_COLUMNS)
        update = ", ".join(f"{c} = excluded.{c}" for c in LABEL_COLUMNS if c not in key)
        statements = [  # (timed rows?, what a conflict does)
            (True, f"DO UPDATE SET {update} WHERE excluded.labeled_at > labels.labeled_at"),
            (False, "DO NOTHING"),  # a row without a time never replaces a label
        ]
        changed = 0
        cur.execute("BEGIN TRANSACTION")
        try:
            for timed, on_conflict in statements:
                rows, keys = cur.execute(
                    f"SELECT count(*), count(DISTINCT ({', '.join(key)})) FROM ({select})", [now, timed]
                ).fetchall()[0]
                if not rows:
                    continue
                # a key twice in one statement is an error in DuckDB: keep the newest row of each key
                newest = (
                    f"QUALIFY row_number() OVER (PARTITION BY {', '.join(key)} "
                    "ORDER BY labeled_at DESC, row DESC) = 1"
                    if keys < rows
                    else ""
                )
                changed += cur.execute(
                    f"INSERT INTO labels BY NAME SELECT {out} FROM ({select}) {newest} "
                    f"ON CONFLICT ({', '.join(key)}) {on_conflict}",
                    [now, timed],
                ).fetchall()[0][0]
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return int(changed)

    @reads
    def labels_version(self) -> tuple[int, int]:
        """A value that changes whenever a label is written, changed or deleted (the row count and a hash
        over every row): a copy of `labels()` stays current while this stays the same."""
        row = (
            self.cursor()
            .execute(
                "SELECT count(*), coalesce(sum(hash(url_a, md5_a, url_b, md5_b, label, category, note, labeler, "
                "labeled_at, setting)), 0) FROM labels"
            )
            .fetchone()
        )
        assert row is not None
        return int(row[0]), int(row[1])

    @reads
    def labels(self) -> pd.DataFrame:
        """Every label, oldest first; `labeler` is None for an unnamed labeler."""
        return (
            self.cursor()
            .execute(
                "SELECT url_a, md5_a, url_b, md5_b, label, category, note, nullif(labeler, '') AS labeler, labeled_at, "
                "setting FROM labels ORDER BY labeled_at"
            )
            .df()
        )


def _cell(value: Any) -> Any:
    """A value of a DataFrame row, None where pandas holds a missing value (NaN, NaT, NA)."""
    return None if value is None or (not isinstance(value, (str, dict, list)) and pd.isna(value)) else value


def _shown(value: str) -> str:
    """A cell of an imported file, quoted and cut for an error message."""
    return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
