"""No import cycle among neardup's modules: each module's imports (at any depth in the file, TYPE_CHECKING
ones included, as import-linter reads them) form a graph without a strongly connected component of two
or more modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "neardup"


def module_graph(package: Path) -> dict[str, set[str]]:
    files = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def targets(name: str, node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = name.split(".") if files[name].name == "__init__.py" else name.split(".")[:-1]
        if node.level:
            base = base[: len(base) - (node.level - 1)]
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        subs = [f"{module}.{alias.name}" for alias in node.names]
        # `from . import sub` imports the submodule (or a compiled extension), not the package's body
        return subs if node.module is None else [module, *subs]

    return {
        name: {
            target
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in targets(name, node)
            if target in files and target != name
        }
        for name, path in files.items()
    }


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of two or more modules that each reach the others (a hundred modules: all pairs is fine)."""
    reach = {name: reachable(graph, name) for name in graph}
    groups = {frozenset({name} | {other for other in reach[name] if name in reach[other]}) for name in graph}
    return [set(group) for group in sorted(groups, key=sorted) if len(group) > 1]


def test_no_import_cycle_among_neardups_modules() -> None:
    assert cycles(module_graph(PACKAGE)) == []


def test_the_walk_finds_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import x\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n"
    )
    (package / "c.py").write_text("from . import a\n")
    assert cycles(module_graph(package)) == [{"pkg.a", "pkg.b"}]
