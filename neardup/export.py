"""Cluster assignments as CSV, one row per page, and the `dupcheck.yaml` that replays the run; the
deduplicated dump (the pages kept, as loaded) and the removed pages with what each one matched.

CSV goes through `csvsafe.to_csv` (spreadsheet formulas defused)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .analysis import Analysis, Fingerprints, similarity_to
from .categories import page_categories
from .csvsafe import to_csv
from .errors import NeardupError
from .store import Store

COLUMNS = [
    "url",
    "cluster_id",
    "cluster_size",
    "is_representative",
    "representative_url",
    "similarity_to_representative",
    "method",
    "shingle_size",
    "threshold",
    "degenerate",
    "category",
    "category_from",
    "suggested_action",
    "cluster_category",
]


def clusters_frame(
    store: Store,
    analysis: Analysis,
    labels: pd.DataFrame | None = None,
    *,
    categories: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per page. Degenerate pages have no cluster and name their reason in `degenerate`.

    `category` is what the page is relative to its representative: the category of its labeled pair with
    the representative (`labels`, as `Store.labels` gives them), else the Audit page's rule over their URLs
    and texts (`category_from`: "label" / "URLs and text"; "" for a representative or a unique page);
    `suggested_action` what the rule table does about it and `cluster_category` the cluster's, from its
    copies (`neardup.categories`).

    `similarity_to_representative` is in the threshold's unit (`analysis.similarity_to`): Hamming bits for
    simhash; for minhash the containment or the Jaccard, as `similarity` says, the stored pair's score
    where the page and its representative are a stored pair, else an estimate from the signatures.
    1.0 / 0 bits for an exact duplicate of the representative. `categories`: `page_categories` of the
    analysis and labels, when the caller has them already.
    """
    c = analysis.config
    p = analysis.pages
    out = pd.DataFrame(
        {
            "url": p["url"],
            "cluster_id": p["cluster_id"],
            "cluster_size": p["cluster_size"],
            "is_representative": p["is_representative"].where(p["cluster_id"].notna(), False),
            "representative_url": p["representative_url"],
            "similarity_to_representative": p["similarity_to_representative"].round(4),
            "method": c.method,
            "shingle_size": c.shingle_size,
            "threshold": int(c.threshold) if c.method == "simhash" else c.threshold,
            "degenerate": p["degenerate"].fillna(""),
        }
    )
    out = out.join(page_categories(store, analysis, labels) if categories is None else categories)
    return out[COLUMNS]


def write_csv(df: pd.DataFrame, path: str | Path) -> int:
    """Every CSV neardup writes goes through here: formulas defused (`csvsafe`)."""
    to_csv(df, path)
    return len(df)


def write_clusters_csv(
    store: Store, analysis: Analysis, path: str | Path, labels: pd.DataFrame | None = None
) -> int:
    return write_csv(clusters_frame(store, analysis, labels), path)


# --- the pages deduplication removes, and what each matched ----------------------------------------
REMOVED_COLUMNS = [
    "url",
    "fetched_at",
    "cluster_id",
    "representative_url",
    "representative_fetched_at",
    "match",
    "similarity",
    "measure",
    "similarity_from",
    "method",
    "threshold",
    "category",
    "suggested_action",
]


def removed_frame(
    store: Store,
    analysis: Analysis,
    fp: Fingerprints,
    labels: pd.DataFrame | None = None,
    *,
    categories: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per removed page (a content page that is not its cluster's representative): the page kept
    in its place (`representative_url` and `cluster_id` find it in the kept dump) and their similarity in
    the threshold's unit (`measure`: hamming_bits, jaccard or containment).

    `similarity_from` says where the number comes from (`analysis.similarity_to`): "same text", "stored
    pair" (the score the threshold applied to), "fingerprints" (SimHash) or "minhash estimate" when the
    page joined the cluster through other pages rather than by a pair with the representative.
    `categories` as in `clusters_frame`.
    """
    c = analysis.config
    p = analysis.pages
    removed = np.flatnonzero(
        p["cluster_id"].notna().to_numpy() & ~p["is_representative"].to_numpy(dtype=bool)
    )
    row_of = pd.Series(np.arange(len(p)), index=p["page_id"].to_numpy())
    rep = row_of.reindex(p["representative_id"].to_numpy()[removed].astype(np.int64)).to_numpy()
    unit = p["unit_id"].to_numpy(dtype=np.int64)
    ua, ub = unit[removed], unit[rep]
    same = ua == ub
    measure = "hamming_bits" if c.method == "simhash" else c.similarity
    sim, source = similarity_to(fp, ua, ub, c)
    kind = (page_categories(store, analysis, labels) if categories is None else categories).iloc[removed]

    return pd.DataFrame(
        {
            "url": p["url"].to_numpy()[removed],
            "fetched_at": p["fetched_at"].to_numpy()[removed],
            "cluster_id": p["cluster_id"].to_numpy()[removed].astype(np.int64),
            "representative_url": p["url"].to_numpy()[rep],
            "representative_fetched_at": p["fetched_at"].to_numpy()[rep],
            "match": np.where(same, "exact", "near"),
            "similarity": sim.round(4) if c.method == "minhash" else sim.astype(np.int64),
            "measure": measure,
            "similarity_from": source,
            "method": c.method,
            "threshold": int(c.threshold) if c.method == "simhash" else c.threshold,
            "category": kind["category"].to_numpy(),
            "suggested_action": kind["suggested_action"].to_numpy(),
        }
    )[REMOVED_COLUMNS]


def write_removed_csv(
    store: Store, analysis: Analysis, fp: Fingerprints, path: str | Path, labels: pd.DataFrame | None = None
) -> int:
    return write_csv(removed_frame(store, analysis, fp, labels), path)


# --- the pages deduplication keeps, as they were loaded ---------------------------------------------
KEPT_BATCH_ROWS = 1024  # pages of HTML in memory at once
# Measured on 40 MB of make_crawl JSONL: level 1 compresses in 0.85 CPU s to 12 MB, level 6 in 2.3 s to 10 MB.
KEPT_GZIP_LEVEL = 1


def kept_pages(analysis: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """(page ids, cluster ids) of the pages deduplication keeps: each cluster's representative, a unique
    page being a cluster of one. Degenerate pages are not kept: they are scrape failures, not content."""
    p = analysis.pages
    keep = p["is_representative"].to_numpy(dtype=bool) & p["cluster_id"].notna().to_numpy()
    ids = p["page_id"].to_numpy(dtype=np.int64)[keep]
    clusters = p["cluster_id"].to_numpy()[keep].astype(np.int64)
    order = np.argsort(ids, kind="stable")
    return ids[order], clusters[order]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat() + "Z"  # stored as UTC without a zone


def kept_records(
    store: Store, analysis: Analysis, *, batch_rows: int = KEPT_BATCH_ROWS
) -> Iterator[list[dict[str, Any]]]:
    """The kept pages as records like those loaded (url, html or text, fetched_at, status, the record's
    other fields) plus `cluster_id` (which replaces a loaded field of that name), in batches."""
    ids, clusters = kept_pages(analysis)
    done = 0
    for table in store.page_records(ids, batch_rows):
        expected = ids[done : done + batch_rows]
        if not np.array_equal(table.column("page_id").to_numpy(), expected):
            raise NeardupError(
                f"{store.path} changed since it was analyzed (a page is missing): export again"
            )
        rows = table.to_pylist()
        batch = []
        for row, cluster in zip(rows, clusters[done : done + len(rows)], strict=True):
            if row["html"] is None and row["text_in"] is None:
                raise NeardupError(
                    f"page {row['url']} has no stored HTML or text (a `neardup spark` output opened without "
                    "--keep-html): the kept dump needs the pages' bodies"
                )
            rec: dict[str, Any] = {"url": row["url"]}
            if row["html"] is not None:
                rec["html"] = row["html"]
            else:
                rec["text"] = row["text_in"]
            rec["fetched_at"] = row["fetched_at"]
            rec["status"] = row["status"]
            if row["extra"]:
                rec.update(json.loads(row["extra"]))
            rec["cluster_id"] = int(cluster)
            batch.append(rec)
        done += len(rows)
        yield batch


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.part")


def _extra_types(store: Store) -> dict[str, pa.DataType | None]:
    """An Arrow type per extra field, from the values of every page: bool, int64, float64 or string; None
    for a field that holds lists, objects or values of mixed kinds, written as text (a string as it is,
    anything else as its JSON)."""
    kinds: dict[str, set[str]] = {}
    for batch in store.extra_fields():
        for text in batch:
            for key, value in json.loads(text).items():
                kind = (
                    "null"
                    if value is None
                    else "bool"
                    if isinstance(value, bool)
                    else "int"
                    if isinstance(value, int) and -(2**63) <= value < 2**63
                    else "float"
                    if isinstance(value, float)
                    else "str"
                    if isinstance(value, str)
                    else "json"
                )
                kinds.setdefault(key, set()).add(kind)
    out: dict[str, pa.DataType | None] = {}
    for key, found in kinds.items():
        found.discard("null")
        out[key] = (
            pa.bool_()
            if found == {"bool"}
            else pa.int64()
            if found == {"int"}
            else pa.float64()
            if found and found <= {"int", "float"}
            else pa.string()
            if found <= {"str"}
            else None
        )
    out.pop("cluster_id", None)
    return out


def kept_format(path: str | Path) -> str:
    """ "jsonl.gz", "jsonl", "parquet" or "warc.gz", from the name of a --kept path."""
    name = Path(path).name.lower()
    for fmt in ("jsonl.gz", "jsonl", "parquet", "warc.gz"):
        if name.endswith("." + fmt):
            return fmt
    raise NeardupError(f"--kept writes .jsonl.gz, .jsonl, .parquet or .warc.gz, not {Path(path).name}")


def write_kept(store: Store, analysis: Analysis, path: str | Path) -> int:
    """Write the kept pages to `path` (.jsonl.gz, .jsonl, .parquet or .warc.gz), streaming: one batch of pages in
    memory at a time. Written beside the target and renamed into place when complete. Returns the count."""
    path = Path(path)
    fmt = kept_format(path)
    tmp = _temporary(path)
    n = 0
    try:
        if fmt == "parquet":
            n = _write_kept_parquet(store, analysis, tmp)
        elif fmt == "warc.gz":
            n = _write_kept_warc(store, analysis, tmp)
        else:
            opener: Callable[..., IO[str]] = gzip.open if fmt == "jsonl.gz" else open
            level = {"compresslevel": KEPT_GZIP_LEVEL} if fmt == "jsonl.gz" else {}
            with opener(tmp, "wt", encoding="utf-8", **level) as f:
                for batch in kept_records(store, analysis):
                    for rec in batch:
                        rec["fetched_at"] = _iso(rec["fetched_at"])
                        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += len(batch)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def warc_response(rec: dict[str, Any]) -> bytes:
    """One kept page as a WARC/1.1 response record (uncompressed): its URL, fetch time and status, the HTML
    as stored (UTF-8, so the Content-Type says so), and the record ID it was loaded from when it came from a
    WARC file (the same record), else a new one. Header values are the record's own: CR and LF in them
    (hostile input) are dropped so that no header can be added."""
    import uuid

    def clean(value: object) -> str:
        return str(value).replace("\r", "").replace("\n", "")

    html = rec.get("html")
    kind = "html" if html is not None else "plain"
    body = str(html if html is not None else rec.get("text") or "").encode("utf-8")
    status = int(rec["status"]) if rec.get("status") is not None else 200
    http = (
        f"HTTP/1.1 {status} {'OK' if status == 200 else 'Status'}\r\n"
        f"Content-Type: text/{kind}; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode("ascii") + body
    fetched = rec.get("fetched_at")
    date = (fetched if isinstance(fetched, datetime) else datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record_id = rec.get("warc_record_id") or f"<urn:uuid:{uuid.uuid4()}>"
    headers = (
        "WARC/1.1\r\nWARC-Type: response\r\n"
        f"WARC-Record-ID: {clean(record_id)}\r\nWARC-Date: {date}\r\n"
        f"WARC-Target-URI: {clean(rec['url'])}\r\n"
        "Content-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(http)}\r\n\r\n"
    )
    return headers.encode("utf-8") + http + b"\r\n\r\n"


def _write_kept_warc(store: Store, analysis: Analysis, path: Path) -> int:
    """The kept pages as WARC response records, one gzip member each (as crawlers write .warc.gz)."""
    n = 0
    with path.open("wb") as f:
        for batch in kept_records(store, analysis):
            for rec in batch:
                f.write(gzip.compress(warc_response(rec), compresslevel=KEPT_GZIP_LEVEL))
            n += len(batch)
    return n


def _write_kept_parquet(store: Store, analysis: Analysis, path: Path) -> int:
    import pyarrow.parquet as pq

    extra = _extra_types(store)
    json_fields = [k for k, t in extra.items() if t is None]
    schema = pa.schema(
        [
            ("url", pa.string()),
            ("html", pa.string()),
            ("text", pa.string()),
            ("fetched_at", pa.timestamp("us")),
            ("status", pa.int32()),
            *((k, pa.string() if t is None else t) for k, t in extra.items()),
            ("cluster_id", pa.int64()),
        ]
    )
    n = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in kept_records(store, analysis):
            for rec in batch:
                for key in json_fields:
                    if rec.get(key) is not None and not isinstance(rec[key], str):
                        rec[key] = json.dumps(rec[key], ensure_ascii=False)
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n


# --- the kept dump as a download (the Export page) ---------------------------------------------------
def kept_download_format(store: Store) -> str:
    """The kept dump's format for the database's sources: that of the dumps loaded ("parquet" when every
    source is Parquet, "warc.gz" when every source is a WARC file, else "jsonl.gz": JSON lines and CSV
    records as JSON lines)."""
    formats = set(store.sources()["format"])
    if formats == {"parquet"}:
        return "parquet"
    if formats == {"warc"}:
        return "warc.gz"
    return "jsonl.gz"


def kept_bytes(store: Store, analysis: Analysis, fmt: str) -> bytes:
    """The kept dump in `fmt` (as `kept_download_format` names it), whole in memory: for a download."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="neardup-kept-") as tmp:
        path = Path(tmp) / f"kept.{fmt}"
        write_kept(store, analysis, path)
        return path.read_bytes()
