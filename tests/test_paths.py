"""Server-side paths: only files under the data roots, symlinks and `..` resolved, one refusal for all."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from neardup.errors import NotACrawlDump
from neardup.paths import (
    SAMPLE_DIR,
    PathRefused,
    allow_any_path,
    data_roots,
    save_upload,
    server_path,
    shown_error,
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root, outside = tmp_path / "data", tmp_path / "private"
    root.mkdir()
    outside.mkdir()
    (root / "crawl.jsonl").write_text("{}\n")
    (root / "sub").mkdir()
    (root / "sub" / "more.jsonl").write_text("{}\n")
    (outside / "secret.csv").write_text("user,password\nroot,hunter2\n")
    (root / "link.csv").symlink_to(outside / "secret.csv")
    (root / "linkdir").symlink_to(outside)
    return {"root": root, "outside": outside}


def _refusal(text: str, roots: list[Path]) -> str:
    with pytest.raises(PathRefused) as exc:
        server_path(text, roots=roots, allow_any=False)
    return str(exc.value)


def test_files_under_a_root_are_read_by_their_real_path(tree: dict[str, Path]) -> None:
    root = tree["root"]
    assert server_path(str(root / "crawl.jsonl"), roots=[root], allow_any=False) == root / "crawl.jsonl"
    assert (
        server_path(f"  {root}/sub/../sub/more.jsonl ", roots=[root], allow_any=False)
        == root / "sub" / "more.jsonl"
    )


def test_every_refusal_is_the_same_sentence(tree: dict[str, Path]) -> None:
    root, outside = tree["root"], tree["outside"]
    messages = {
        _refusal(str(outside / "secret.csv"), [root]),  # exists, outside
        _refusal(str(outside / "absent.csv"), [root]),  # missing, outside
        _refusal(str(root / "absent.jsonl"), [root]),  # missing, inside
        _refusal(str(root / "sub"), [root]),  # a folder
        _refusal(str(root / "link.csv"), [root]),  # a symlink out of the root
        _refusal(str(root / "linkdir" / "secret.csv"), [root]),  # through a linked folder
        _refusal(f"{root}/../private/secret.csv", [root]),  # `..` out of the root
        _refusal("/etc/passwd", [root]),
        _refusal("", [root]),
        _refusal("bad\x00name", [root]),
    }
    assert len(messages) == 1
    [message] = messages
    assert "secret" not in message and "exist" not in message and str(root) in message


def test_a_root_prefix_is_not_a_root(tree: dict[str, Path]) -> None:
    sibling = tree["root"].with_name("data-other")
    sibling.mkdir()
    (sibling / "x.jsonl").write_text("{}\n")
    _refusal(str(sibling / "x.jsonl"), [tree["root"]])


def test_roots_come_from_the_environment(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    assert data_roots({}) == [Path.cwd().resolve(), SAMPLE_DIR.resolve()]
    both = os.pathsep.join([str(tree["root"]), str(tree["root"] / "linkdir"), ""])
    assert data_roots({"NEARDUP_DATA_DIR": both}) == [tree["root"], tree["outside"]]
    monkeypatch.setenv("NEARDUP_DATA_DIR", str(tree["outside"]))
    assert server_path(str(tree["root"] / "link.csv"), allow_any=False) == tree["outside"] / "secret.csv"


def test_allow_any_path(tree: dict[str, Path]) -> None:
    assert allow_any_path({"NEARDUP_ALLOW_ANY_PATH": "1"}) and not allow_any_path({})
    target = tree["outside"] / "secret.csv"
    assert server_path(str(target), roots=[tree["root"]], allow_any=True) == target
    with pytest.raises(PathRefused):
        server_path(str(tree["outside"] / "absent"), roots=[tree["root"]], allow_any=True)


def test_errors_about_a_server_file_do_not_quote_it(tmp_path: Path) -> None:
    path = tmp_path / "secret.csv"
    exc = NotACrawlDump(f"{path}: a CSV without a 'url' column (columns: ['user', 'password'])")
    hidden = shown_error(exc, path=path, shown="secret.csv", detail=False)
    assert "password" not in hidden and str(tmp_path) not in hidden and hidden.startswith("secret.csv is not")
    assert hidden.endswith("field, or a WARC, ARC or WACZ web archive")  # every format the Load page reads
    shown = shown_error(exc, path=path, shown="secret.csv", detail=True)
    assert shown == "secret.csv: a CSV without a 'url' column (columns: ['user', 'password'])"


@pytest.mark.parametrize(
    ("name", "saved"),
    [
        ("crawl.jsonl.gz", "crawl.jsonl.gz"),
        ("a/b/c.csv", "c.csv"),
        ("..\\..\\x.parquet", "x.parquet"),
        ("..", "upload"),
        ("", "upload"),
    ],
)
def test_uploads_are_copied_in_chunks_under_their_base_name(tmp_path: Path, name: str, saved: str) -> None:
    data = os.urandom(3 * (1 << 20) + 17)
    upload = io.BytesIO(data)
    upload.read(10)  # a reader left it part-way
    target = save_upload(upload, name, tmp_path)
    assert target == tmp_path / saved and target.read_bytes() == data
