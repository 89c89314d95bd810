"""Records between units are typed: few functions of the package return a `dict[str, Any]`, and the
TypedDicts that stand for the others name the keys the code really writes."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

from neardup.config import Config, ConfigDict
from neardup.readers.capture import ArchiveCapture, StoredPage, WarcCapture
from neardup.records import CleanRecord, PageRecord, RawLine, validate
from neardup.rejects import Reject

PACKAGE = Path(__file__).resolve().parent.parent / "neardup"

# The functions that still return one, and why: each reads or writes JSON of no fixed shape.
MAX_UNTYPED_DICT_RETURNS = 5


def untyped_dict_returns(root: Path = PACKAGE) -> list[str]:
    """Functions whose return annotation starts with `dict[str, Any]` (also `dict[str, Any] | None`), as
    "path:function"."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.returns is not None
                and ast.unparse(node.returns).replace(" ", "").startswith("dict[str,Any]")
            ):
                found.append(f"{path.relative_to(root.parent)}:{node.name}")
    return found


def test_few_functions_return_an_untyped_dict() -> None:
    found = untyped_dict_returns()
    assert len(found) <= MAX_UNTYPED_DICT_RETURNS, found


def test_the_walk_finds_an_untyped_dict_return(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def a() -> dict[str, Any]: ...\ndef b() -> dict[str,Any] | None: ...\ndef c() -> dict[str, int]: ...\n"
    )
    assert untyped_dict_returns(tmp_path) == [f"{tmp_path.name}/m.py:a", f"{tmp_path.name}/m.py:b"]


def test_config_dict_names_every_setting() -> None:
    assert list(ConfigDict.__annotations__) == [f.name for f in dataclasses.fields(Config)]
    assert list(Config().to_dict()) == list(ConfigDict.__annotations__)


def _capture(**changes: object) -> WarcCapture:
    body = b"<html><head><title>t</title></head><body><p>" + b"word " * 60 + b"</p></body></html>"
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + body
    capture = WarcCapture(
        warc_type="response",
        url="http://example.com/a",
        date="2024-01-02T03:04:05Z",
        record_id="<urn:uuid:1>",
        offset=123,
        warc_file="crawl.warc.gz",
        block=block,
        content_type="application/http; msgtype=response",
        payload_digest="sha1:AAAA",
        truncated="length",
        offset_in="gunzipped stream",
    )
    return dataclasses.replace(capture, **changes)  # type: ignore[arg-type]


def test_page_record_names_the_fields_archive_readers_write() -> None:
    keys = PageRecord.__optional_keys__ | PageRecord.__required_keys__
    original = _capture()
    revisit = _capture(warc_type="revisit", block=b"", original=original, record_id="<urn:uuid:2>")
    archived = ArchiveCapture(
        original,
        {
            "archive_format": "wacz",
            "wacz_file": "c.wacz",
            "wacz_member": "archive/c.warc.gz",
            "wacz_page": True,
        },
    )
    for capture in (original, revisit, archived):
        rec = capture.record()
        assert not isinstance(rec, Reject), rec
        assert set(rec) <= keys, set(rec) - keys
        clean = validate(RawLine(1, capture))
        assert not isinstance(clean, Reject), clean
        assert list(clean) == list(CleanRecord.__annotations__)


def _extra_fields(rec: PageRecord) -> dict[str, object]:
    return {k: v for k, v in rec.items() if k not in ("url", "html", "text", "fetched_at", "status")}


def test_a_captured_pages_extra_is_the_json_of_its_record_fields() -> None:
    original = _capture()
    stored = StoredPage(
        7, "<html><body>stored</body></html>", 200, {"file": "a.warc.gz", "record_id": None, "offset": 12}
    )
    captures: list[WarcCapture | ArchiveCapture] = [
        original,
        _capture(offset=None, truncated=None),
        _capture(offset_in="file", record_id=None, payload_digest=None),
        _capture(warc_file='we"ird\\ name \u00e9\u4e2d\n.warc.gz'),
        _capture(warc_type="revisit", block=b"", original=original, record_id="<urn:uuid:2>"),
        _capture(warc_type="revisit", block=b"", original=_capture(offset=None), record_id="<urn:uuid:2>"),
        _capture(warc_type="revisit", block=b"", stored=stored),
        _capture(warc_type="conversion", block="plain \u00e9 text".encode(), content_type="text/plain"),
        ArchiveCapture(original, {"archive_format": "wacz", "wacz_file": "c.wacz", "wacz_page": True}),
        ArchiveCapture(
            _capture(offset_in="file"),
            {"archive_format": "arc", "arc_version": 1, "arc_ip": "1.2.3.4"},
            drop=("warc_record_id",),
        ),
    ]
    for capture in captures:
        page, rec = capture.page(), capture.record()
        assert not isinstance(page, Reject) and not isinstance(rec, Reject), (page, rec)
        assert page.extra == json.dumps(_extra_fields(rec), ensure_ascii=False)
        clean = validate(RawLine(1, capture))
        assert not isinstance(clean, Reject) and clean["extra"] == page.extra
    assert _extra_fields(original.record()) == {  # type: ignore[arg-type]
        "warc_file": "crawl.warc.gz",
        "warc_record_id": "<urn:uuid:1>",
        "warc_type": "response",
        "warc_offset": 123,
        "warc_offset_in": "gunzipped stream",
        "warc_truncated": "length",
        "payload_digest": "sha1:AAAA",
        "charset": "utf-8",
        "charset_source": "http",
    }


def test_a_captures_bad_date_and_lone_surrogate_are_judged_as_a_dicts() -> None:
    clean = validate(RawLine(1, _capture(date="last tuesday")))
    assert not isinstance(clean, Reject) and clean["fetched_at"] is None
    assert clean["extra"] is not None and json.loads(clean["extra"])["fetched_at"] == "last tuesday"
    assert clean["extra"].endswith(', "fetched_at": "last tuesday"}')
    bad = validate(RawLine(1, _capture(payload_digest="sha1:\udc80")))
    assert isinstance(bad, Reject) and bad.detail.endswith("in field 'payload_digest'"), bad
    assert validate(RawLine(1, _capture(payload_digest="sha1:\udc80"))) == validate(
        RawLine(1, _capture(payload_digest="sha1:\udc80").record())  # type: ignore[arg-type]
    )
