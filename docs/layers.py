"""The package's layers as folders, drawn from its imports: the picture that opens docs/design.md.

Usage::

    python docs/layers.py            # print the picture
    python docs/layers.py --write    # put it into docs/design.md

A *part* is a first-level entry of ``tempsched_lab/``: a folder (``log/``, ``core/``...) or a
module of the root (``aio.py``, ``demo.py``...). docs/design.md's layer table places each part
in a layer; this module reads every import of every module (at load time, inside functions,
and under ``TYPE_CHECKING``: an import only for types still ties the parts), maps it to its
part, and draws each layer with its folders and the parts they import.
``tests/test_design.py`` checks that the table lists every part, that every import runs down
the table (or stays inside its part), and that the picture on the page is this one.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tempsched_lab"
PAGE = ROOT / "docs" / "design.md"
TABLE = re.compile(r"<!-- layers: .*? -->\n```text\n(.*?)```", re.S)
PICTURE = re.compile(r"(<!-- picture: .*? -->\n```text\n)(.*?)(```)", re.S)


@dataclass(frozen=True)
class Import:
    """One import of a package module by another: where, and how it is taken."""

    source: str  # the importing module, e.g. "core.scheduler"
    target: str  # the imported module, e.g. "log.eventlog"
    how: str  # "load" (when the module loads), "lazy" (inside a function) or "type"
    line: int


def module_name(path: Path) -> str:
    """``core/scheduler.py`` -> ``core.scheduler`` (the root's ``__init__``: ``""``)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def part_of(module: str) -> str:
    """The first-level entry a module belongs to (``""``: the root's ``__init__``)."""
    return module.split(".")[0]


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str | None:
    if node.level:
        base = name.split(".") if name else []
        if not is_package:
            base = base[:-1]
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    if node.module and node.module.split(".")[0] == "tempsched_lab":
        return node.module.removeprefix("tempsched_lab").lstrip(".")
    return None


def imports_in(path: Path, known: dict[str, Path] | None = None) -> list[Import]:
    """Every import of a package module in ``path``, with how it is taken."""
    known = modules() if known is None else known
    name = module_name(path)
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def resolve(target: str, names: list[str]) -> list[str]:
        out = []
        for n in names:  # ``from . import a``: the module ``a``, when it is one
            full = f"{target}.{n}".lstrip(".")
            out.append(full if full in known else target)
        return out

    def visit(nodes: list[ast.stmt], how: str) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.body, "type")
                visit(node.orelse, how)
                continue
            if isinstance(node, ast.ImportFrom):
                target = _absolute(node, name, is_package)
                if target is not None:
                    for t in resolve(target, [a.name for a in node.names]):
                        found.append(Import(name, t, how, node.lineno))
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "tempsched_lab":
                        t = a.name.removeprefix("tempsched_lab").lstrip(".")
                        found.append(Import(name, t, how, node.lineno))
                continue
            inner = "lazy" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else how
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(node, field, None) or [], inner)
            for handler in getattr(node, "handlers", None) or []:
                visit(handler.body, inner)
            for case in getattr(node, "cases", None) or []:
                visit(case.body, inner)

    visit(ast.parse(path.read_text()).body, "load")
    return found


def all_imports() -> list[Import]:
    known = modules()
    return [i for path in known.values() for i in imports_in(path, known)]


def layer_table(page: str | None = None) -> list[tuple[str, list[str], str]]:
    """docs/design.md's layer table, top layer first: ``(layer, parts, note)``."""
    text = PAGE.read_text() if page is None else page
    block = TABLE.search(text)
    if block is None:
        raise ValueError("docs/design.md lost its layer table (<!-- layers: ... -->)")
    layers = []
    for line in block.group(1).splitlines():
        spec, _, note = line.partition("|")
        words = spec.split()
        if words:
            layers.append((words[0], words[1:], note.strip()))
    return layers


def parts() -> list[str]:
    """Every first-level entry of the package: ``tempsched_lab`` for the root's ``__init__``."""
    return sorted({part_of(m) or "tempsched_lab" for m in modules()})


def part_imports() -> dict[str, set[str]]:
    """Part -> the other parts it imports (any way: load, lazy or type-only)."""
    graph: dict[str, set[str]] = {p: set() for p in parts()}
    for imp in all_imports():
        source, target = part_of(imp.source) or "tempsched_lab", part_of(imp.target)
        target = target or "tempsched_lab"
        if source != target:
            graph[source].add(target)
    return graph


def violations(
    imports: list[Import], table: list[tuple[str, list[str], str]] | None = None
) -> list[str]:
    """Each import that does not run down the table (nor stay inside its part), said."""
    table = layer_table() if table is None else table
    level = {p: i for i, (_, members, _) in enumerate(table) for p in members}
    found = []
    for imp in imports:
        source = part_of(imp.source) or "tempsched_lab"
        target = part_of(imp.target) or "tempsched_lab"
        if source == target:
            continue
        mine, theirs = level.get(source), level.get(target)
        if mine is None or theirs is None or theirs <= mine:
            where = f"tempsched_lab/{imp.source.replace('.', '/') or '__init__'}.py:{imp.line}"
            found.append(
                f"{where}: {imp.source or 'tempsched_lab'} ({source}) imports {imp.target} "
                f"({target}, {imp.how}): "
                + (
                    "a part not in the table"
                    if mine is None or theirs is None
                    else "not a layer below"
                )
            )
    return found


def _label(part: str) -> str:
    if part == "tempsched_lab":
        return "__init__.py"
    return f"{part}/" if (PACKAGE / part).is_dir() else f"{part}.py"


def picture(table: list[tuple[str, list[str], str]] | None = None) -> str:
    """The layers top down: each layer's folders and modules, and the parts they import."""
    table = layer_table() if table is None else table
    graph = part_imports()
    order = [p for _, members, _ in table for p in members]
    width = max(len(name) for name, _, _ in table) + 4
    lines = ["tempsched_lab/"]
    for i, (name, members, note) in enumerate(table):
        last = i == len(table) - 1
        branch, stem = ("└─", "  ") if last else ("├─", "│ ")
        labels = "  ".join(_label(p) for p in members)
        lines.append(f"{branch} {name} {'─' * (width - len(name))} {labels}")
        lines.append(f"{stem} {' ' * (width + 2)}{note}")
        shown = [p for p in members if graph.get(p)] if len(members) > 1 else members
        if not shown:
            lines.append(f"{stem} {' ' * (width + 2)}└ imports nothing of the package")
        for j, p in enumerate(shown):
            below = [q for q in order if q in graph.get(p, set())]
            said = "imports " + " ".join(below) if below else "imports nothing of the package"
            who = "" if len(members) == 1 else f"{_label(p)} "
            mark = "└" if j == len(shown) - 1 else "├"
            lines.append(f"{stem} {' ' * (width + 2)}{mark} {who}{said}")
        if not last:
            lines.append("│")
    return "\n".join(lines) + "\n"


def write(page: Path = PAGE) -> bool:
    """Put the picture into ``page``; ``True`` if it changed."""
    text = page.read_text()
    new = PICTURE.sub(lambda m: m.group(1) + picture(layer_table(text)) + m.group(3), text)
    if new != text:
        page.write_text(new)
    return new != text


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        print("docs/design.md:", "updated" if write() else "already up to date")
    else:
        print(picture(), end="")
