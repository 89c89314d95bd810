"""The per-batch work that the process pool (`engine`) and Spark (`neardup.spark`) both run in workers.

Each function takes one batch of records or texts with the setting and returns plain arrays or Arrow
tables: validate + normalize records (`ingest_records`, `ingest_batch`, `ingest_arrow`), normalize
stored pages again (`normalize_batch`), and sketch, fingerprint or shingle texts (`sketch_table`,
`fingerprint_batch`, `set_batch`). None touches the store.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, TypedDict

import numpy as np
import pandas as pd
import pyarrow as pa

from .config import Config
from .htmlcodec import html_codec
from .normalize import degenerate_reason, parse_configured
from .readers.jsonl import LineBlock
from .records import RawLine, add_md5s, validate
from .rejects import Reject, RejectKind
from .shingles import shingle_set32_of, text_words
from .sketch import sketch_many


# --- validation and normalization ----------------------------------------------------------------
class TextRow(TypedDict):
    """A page's `texts` row at one normalization (but its keys, `norm_key` and `page_id`)."""

    text: str
    title: str
    n_words: int
    exact_key: str  # SHA-256 of the joined words: exact duplicates
    degenerate: str | None  # why the page is set aside


def _text_row(
    html: str | None, text_in: str | None, status: int | None, config: Config
) -> tuple[TextRow, np.ndarray]:
    """The `texts` row of one page and its word hashes (for sketching)."""
    if html is not None:
        parsed = parse_configured(html, config)
        text, title, too_complex, main_words = parsed.text, parsed.title, parsed.degenerate, parsed.main_words
    else:
        text, title, too_complex, main_words = " ".join((text_in or "").split()), "", None, None
    joined, hashes = text_words(text)
    row: TextRow = {
        "text": text,
        "title": title,
        "n_words": len(hashes),
        "exact_key": hashlib.sha256(joined).hexdigest(),
        "degenerate": too_complex
        or degenerate_reason(
            text,
            title=title,
            status=status,
            n_words=len(hashes),
            min_words=config.min_words,
            main_words=main_words,
        ),
    }
    return row, hashes


def text_row(html: str | None, text_in: str | None, status: int | None, config: Config) -> TextRow:
    """Normalized text and everything derived from it for one page under `config`'s normalization."""
    return _text_row(html, text_in, status, config)[0]


def ingest_records(
    lines: Iterable[RawLine], config: Config
) -> tuple[list[dict[str, Any]], list[tuple[int, Reject]], list[np.ndarray]]:
    """Validate and normalize records: the good ones (with their word hashes, for sketching) and the
    rejects as (line, `Reject`)."""
    good: list[dict[str, Any]] = []
    bad: list[tuple[int, Reject]] = []
    tokens: list[np.ndarray] = []
    if isinstance(lines, LineBlock) and lines.error is not None:
        bad.append((lines.error_line, lines.error))
    for raw in lines:
        try:
            rec = validate(raw, md5=False)
            if isinstance(rec, Reject):
                bad.append((raw.line, rec))
                continue
            row, toks = _text_row(rec["html"], rec["text_in"], rec["status"], config)
        except Exception as exc:  # a case the checks do not know yet: the record is named, the load goes on
            bad.append((raw.line, _unexpected(exc)))
            continue
        good.append({**rec, "line": raw.line, **row})
        tokens.append(toks)
    add_md5s(good)
    return good, bad, tokens


def _unexpected(exc: BaseException) -> Reject:
    return RejectKind.UNREADABLE.reject(
        f" (please report this): {type(exc).__name__}: {ascii(str(exc))[1:-1][:200]}"
    )


def ingest_batch(
    args: tuple[Iterable[RawLine], Config],
) -> tuple[list[dict[str, Any]], list[tuple[int, Reject]]]:
    good, bad, _ = ingest_records(*args)
    return good, bad


def normalize_batch(args: tuple[pd.DataFrame, Config]) -> pd.DataFrame:
    df, config = args
    rows = [
        text_row(
            h if isinstance(h, str) else None,
            t if isinstance(t, str) else None,
            None if pd.isna(s) else int(s),
            config,
        )
        for h, t, s in zip(df["html"], df["text_in"], df["status"], strict=True)
    ]
    out = pd.DataFrame(rows, columns=["text", "title", "n_words", "exact_key", "degenerate"])
    out.insert(0, "page_id", df["page_id"].to_numpy())
    out.insert(0, "norm_key", config.norm_key)
    return out


# --- ingest: records -> Arrow tables ------------------------------------------------------------
# The records as validated and normalized (`ingest_records`), one row per page.
_INGEST_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("url", pa.string()),
        ("canonical_url", pa.string()),
        ("host", pa.string()),
        ("fetched_at", pa.timestamp("us")),
        ("status", pa.int32()),
        ("html", pa.string()),
        ("text_in", pa.string()),
        ("md5", pa.string()),
        ("rel_canonical", pa.string()),
        ("extra", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("n_words", pa.int32()),
        ("exact_key", pa.string()),
        ("degenerate", pa.string()),
    ]
)
# What an ingest worker returns per batch: the same with the raw HTML moved into compressed blocks
# (`html_blocks`); the main process adds page ids (see `Store.add_ingested`).
_PAGES_SCHEMA = pa.schema(
    [
        *_INGEST_SCHEMA,
        ("html_back", pa.int32()),
        ("html_start", pa.int32()),
        ("html_bytes", pa.int32()),
        ("html_block_raw", pa.int32()),
        ("html_block_data", pa.binary()),
    ]
)
# A block of raw HTML closes once it holds this many bytes (a JSON-lines batch, `ingest.BLOCK_BYTES`, is
# about one block): reading one page inflates at most this plus a page; `htmlcodec` compresses it.
HTML_BLOCK_BYTES = 2 << 20


def html_blocks(table: pa.Table) -> pa.Table:
    """`table` (`_INGEST_SCHEMA`) with its raw HTML compressed, in runs of consecutive pages of about
    `HTML_BLOCK_BYTES`, into `html_block_data` (and the run's size, `html_block_raw`) on each run's first
    row; every row with HTML names its run's first row by `html_back` (rows back) and its bytes in the
    inflated run by `html_start` and `html_bytes`. The `html` column is left empty: the pages cross back
    to the main process compressed."""
    n = table.num_rows
    html = table.column("html").combine_chunks()
    back = np.zeros(n, np.int32)
    start = np.zeros(n, np.int32)
    size = np.zeros(n, np.int32)
    data: list[bytes | None] = [None] * n
    raw: list[int | None] = [None] * n
    valid = html.is_valid().to_numpy(zero_copy_only=False) if n else np.zeros(0, bool)
    if valid.any():
        offsets = np.frombuffer(html.buffers()[1], np.int32)[html.offset : html.offset + n + 1]
        utf8 = memoryview(html.buffers()[2])
        size[:] = np.diff(offsets)
        size[~valid] = 0

        def close(head: int, rows: list[int]) -> None:
            # A run's pages are consecutive in the buffer (a null takes no bytes): compressed where they lie.
            first, end = int(offsets[rows[0]]), int(offsets[rows[-1] + 1])
            run = utf8[first:end]
            if end - first != sum(int(size[i]) for i in rows):
                run = memoryview(b"".join(utf8[offsets[i] : offsets[i + 1]] for i in rows))
            data[head], raw[head] = html_codec().compress(run, asbytes=True), len(run)

        rows: list[int] = []
        filled = 0
        for i in np.flatnonzero(valid).tolist():
            if not rows:
                head = i
            rows.append(i)
            back[i], start[i] = i - head, filled
            filled += int(size[i])
            if filled >= HTML_BLOCK_BYTES:
                close(head, rows)
                rows, filled = [], 0
        if rows:
            close(head, rows)
    i = table.schema.get_field_index("html")
    return (
        table.set_column(i, "html", pa.nulls(n, pa.string()))
        .append_column("html_back", pa.array(back, pa.int32(), mask=~valid))
        .append_column("html_start", pa.array(start, pa.int32(), mask=~valid))
        .append_column("html_bytes", pa.array(size, pa.int32(), mask=~valid))
        .append_column("html_block_raw", pa.array(raw, pa.int32()))
        .append_column("html_block_data", pa.array(data, pa.binary()))
    )


def ingest_arrow(
    args: tuple[Iterable[RawLine], Config],
) -> tuple[pa.Table, pa.Table, list[tuple[int, Reject]], int | None]:
    """Records -> (pages with texts, sketches of the content pages, rejects, the line from which earlier
    pages must be dropped (`LineBlock.discard_from`)), built in the worker: the tables cross the process
    boundary as a few buffers and DuckDB scans them without Python objects. Sketching here reuses the
    words just computed, so the default setting needs no second pass."""
    lines, config = args
    good, bad, tokens = ingest_records(lines, config)
    if not good:  # rejects only, as in a flood of them: the empty tables are built once
        return *_no_pages(), bad, getattr(lines, "discard_from", None)
    try:
        table = pa.Table.from_pylist(good, schema=_INGEST_SCHEMA)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        table, good, tokens = _arrow_rows(good, tokens, bad)
    content = [i for i, rec in enumerate(good) if rec["degenerate"] is None]
    sketches = sketch_table([good[i]["exact_key"] for i in content], [tokens[i] for i in content], config)
    return html_blocks(table), sketches, bad, getattr(lines, "discard_from", None)


@functools.cache
def _no_pages() -> tuple[pa.Table, pa.Table]:
    """The pages and sketches tables of a batch without a page (building them costs ~0.7 ms a batch)."""
    return _PAGES_SCHEMA.empty_table(), sketch_table([], [], Config())


def _arrow_rows(
    good: list[dict[str, Any]], tokens: list[np.ndarray], bad: list[tuple[int, Reject]]
) -> tuple[pa.Table, list[dict[str, Any]], list[np.ndarray]]:
    """The pages table row by row, when the batch as a whole does not convert: rows that do not go to `bad`."""
    tables, kept, kept_tokens = [], [], []
    for rec, toks in zip(good, tokens, strict=True):
        try:
            tables.append(pa.Table.from_pylist([rec], schema=_INGEST_SCHEMA))
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
            bad.append((rec["line"], _unexpected(exc)))
            continue
        kept.append(rec)
        kept_tokens.append(toks)
    table = pa.concat_tables(tables) if tables else _INGEST_SCHEMA.empty_table()
    return table, kept, kept_tokens


# --- sketches, fingerprints and shingle sets -----------------------------------------------------
def signatures(blobs: Sequence[bytes], num_perm: int) -> np.ndarray:
    """MinHash signatures (n x num_perm, uint32) from their stored bytes."""
    if not len(blobs):
        return np.empty((0, num_perm), np.uint32)
    return np.frombuffer(b"".join(blobs), dtype=np.uint32).reshape(len(blobs), -1)


def signature_matrix(num_perm: int, *columns: pa.ChunkedArray | pa.Array | Sequence[bytes]) -> np.ndarray:
    """`signatures` of the columns' values, one after the other, in one matrix. A binary Arrow column's
    chunks are copied from their data buffers as they lie when each value is the `num_perm` x 4 bytes the
    store writes (no bytes object per value); other values go through `signatures`."""
    width = 4 * num_perm
    pieces: list[pa.Array | Sequence[bytes]] = []
    for column in columns:
        pieces.extend(column.chunks if isinstance(column, pa.ChunkedArray) else [column])
    out = np.empty((sum(len(p) for p in pieces), num_perm), dtype=np.uint32)
    at = 0
    for piece in pieces:
        n = len(piece)
        if not n:
            continue
        if not isinstance(piece, pa.Array):
            out[at : at + n] = signatures(piece, num_perm)
        elif piece.null_count or piece.type not in (pa.binary(), pa.large_binary()):
            raise ValueError("a MinHash signature column holds a null or a value that is no bytes")
        else:
            offsets = np.frombuffer(
                piece.buffers()[1], np.int64 if piece.type == pa.large_binary() else np.int32
            )[piece.offset : piece.offset + n + 1]
            if (np.diff(offsets) == width).all():
                data = np.frombuffer(piece.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
                out[at : at + n] = data.view(np.uint32).reshape(n, num_perm)
            else:
                out[at : at + n] = signatures(piece.to_pylist(), num_perm)
        at += n
    return out


def fingerprint_batch(args: tuple[list[str], Config]) -> tuple[np.ndarray, np.ndarray]:
    """Shingle-set sizes and the fingerprints of `config.method` for texts (the Spark path's unit of work)."""
    texts, config = args
    sk = sketch_many([text_words(t)[1] for t in texts], config.shingle_size, config.num_perm, config.seed)
    return sk.n_shingles, sk.simhash if config.method == "simhash" else sk.minhash


def sketch_table(exact_keys: list[str], word_hashes: Sequence[np.ndarray], config: Config) -> pa.Table:
    """Both fingerprints of each word sequence under `config.sketch_key` (rows of the `sketches` table)."""
    sk = sketch_many(word_hashes, config.shingle_size, config.num_perm, config.seed)
    sigs = np.ascontiguousarray(sk.minhash)
    width = sigs.shape[1] * 4
    # One binary column straight from the signature matrix's bytes: fixed-width rows, offsets computed.
    offsets = pa.py_buffer(np.arange(len(sigs) + 1, dtype=np.int32) * width)
    minhash = pa.Array.from_buffers(pa.binary(), len(sigs), [None, offsets, pa.py_buffer(sigs)])
    return pa.table(
        {
            "exact_key": pa.array(exact_keys, pa.string()),
            "n_shingles": pa.array(sk.n_shingles),
            "simhash": pa.array(sk.simhash, pa.uint64()),
            "minhash": minhash,
        }
    )


def sketch_batch(args: tuple[list[str], list[str], Config]) -> pa.Table:
    exact_keys, texts, config = args
    return sketch_table(exact_keys, [text_words(t)[1] for t in texts], config)


def set_batch(args: tuple[list[str], list[str], int]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Exact shingle sets of texts: (their keys, set sizes, the sets' sorted uint32 values concatenated)."""
    keys, texts, k = args
    sets = [shingle_set32_of(text_words(t)[1], k) for t in texts]
    lens = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    return keys, lens, np.concatenate(sets) if sets else np.empty(0, np.uint32)
