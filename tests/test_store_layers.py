"""The storage layer imports no pipeline module: `neardup.store` and what it imports, read from the source
(module-level and in-function imports), reach only the leaves it is allowed."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "neardup"
# What the store may import from neardup (each imports no other neardup module but these).
STORE_LEAVES = {
    "neardup.candidate_stats",
    "neardup.csvsafe",
    "neardup.dbfile",
    "neardup.errors",
    "neardup.escapes",
    "neardup.fingerprint_set",
    "neardup.htmlcodec",
    "neardup.pairkey",
    "neardup.parsed_urls",
    "neardup.rejects",
    "neardup.short_texts",
}


def _source(module: str) -> Path | None:
    path = PACKAGE.parent / module.replace(".", "/")
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _imports(module: str) -> set[str]:
    """The neardup modules `module` imports anywhere in its source, with the packages on their way (a
    submodule's import runs its package's __init__); the root package's is left out (its notebook API)."""
    path = _source(module)
    assert path is not None, module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            names.add(name)
            names |= {f"{name}.{a.name}" for a in node.names}
    found = set()
    for name in names:
        parts = name.split(".")
        found |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
    return {m for m in found if m.startswith("neardup.") and _source(m) is not None}


def _reached(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += _imports(module)
    return seen - {start}


def test_the_store_imports_only_leaves() -> None:
    reached = _reached("neardup.store")
    assert {m for m in reached if not m.startswith("neardup.store.")} <= STORE_LEAVES
    # the walk reads the package's own modules too
    assert {"neardup.store.connection", "neardup.store.labels"} <= reached


def test_the_walk_sees_a_pipeline_import() -> None:
    # what the check above would catch: the ingest stage pulls in the readers' entry and normalize
    assert {"neardup.ingest", "neardup.normalize"} <= _reached("neardup.stages.ingest")
