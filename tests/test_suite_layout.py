"""The test suite's own layout: a test module imports no other test module (shared fixtures live in
conftest.py, shared helpers in modules of their own such as live_app.py and archive_records.py), so each
test module runs alone and `make test-fast` can leave any of them out."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def test_no_test_module_imports_another() -> None:
    test_modules = {p.stem for p in TESTS.glob("test_*.py")}
    found = {p.name: sorted(imported_modules(p) & test_modules) for p in sorted(TESTS.glob("*.py"))}
    assert {name: mods for name, mods in found.items() if mods} == {}
