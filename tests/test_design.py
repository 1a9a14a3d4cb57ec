"""docs/design.md stays true to the code: its layer table lists every module of the package,
and no module imports (at import time) a module of a layer above its own."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tempsched_lab"


def _layers() -> list[tuple[str, list[str]]]:
    """The layer table of docs/design.md, top layer first: (name, module patterns)."""
    page = (ROOT / "docs" / "design.md").read_text()
    block = re.search(r"<!-- layers: .*? -->\n```text\n(.*?)```", page, re.S)
    assert block, "docs/design.md lost its layer table"
    layers = []
    for line in block.group(1).splitlines():
        name, _, rest = line.partition("|")[0].strip().partition(" ")
        if name:
            layers.append((name, rest.split()))
    return layers


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts[1:]) or "tempsched_lab"


def _imports_at_load(path: Path, name: str) -> set[str]:
    """The package's modules ``path`` imports when it is loaded (not under TYPE_CHECKING,
    not inside functions: a lazy import is how an upper layer is reached on purpose)."""
    return imports_of(path, name, lazy=False)


def imports_of(path: Path, name: str, *, lazy: bool) -> set[str]:
    """The package's modules ``path`` imports (never those under ``TYPE_CHECKING``, which
    are not imports at run time); with ``lazy``, the imports inside functions too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    nodes: list[ast.stmt] = list(ast.parse(path.read_text()).body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, (ast.If, ast.Try)):
            nodes += node.body + node.orelse + getattr(node, "finalbody", [])
            nodes += [s for h in getattr(node, "handlers", []) for s in h.body]
            continue
        if lazy and isinstance(
            node,
            (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.For, ast.While),
        ):
            nodes += node.body + getattr(node, "orelse", [])
            continue
        if isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("tempsched_lab").lstrip(".") or "tempsched_lab"
                for a in node.names
                if a.name.split(".")[0] == "tempsched_lab"
            }
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".") if package not in ("", "tempsched_lab") else []
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            module = ".".join(base + ([node.module] if node.module else []))
        elif node.module and node.module.startswith("tempsched_lab"):
            module = node.module.removeprefix("tempsched_lab").lstrip(".")
        else:
            continue
        if node.module is None:  # from . import a, b: the modules a and b
            found |= {f"{module}.{a.name}".lstrip(".") for a in node.names}
        else:
            found.add(module or "tempsched_lab")
    return found


def _layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int | None:
    for level, (_, patterns) in enumerate(layers):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return level
    return None


def test_the_layer_table_lists_every_module():
    layers = _layers()
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    missing = sorted(m for m in modules if _layer_of(m, layers) is None)
    assert not missing, f"docs/design.md's layer table lacks {missing}"


def test_no_module_imports_a_layer_above_its_own():
    layers = _layers()
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    breaks = []
    for name, path in sorted(modules.items()):
        mine = _layer_of(name, layers)
        for target in _imports_at_load(path, name):
            if target not in modules:  # a name imported from a package's __init__
                target = target.rpartition(".")[0] or "tempsched_lab"
            theirs = _layer_of(target, layers)
            if mine is not None and theirs is not None and theirs < mine:
                breaks.append(f"{name} ({layers[mine][0]}) -> {target} ({layers[theirs][0]})")
    assert not breaks, breaks


def test_the_scheduler_module_names_its_collaborators_truly():
    """scheduler.py's docstring counts the collaborators it lists, and each class it points
    to exists where it says (issue 35: it said "three", listed four, named a moved class)."""
    import importlib

    import tempsched_lab.scheduler as scheduler

    doc = scheduler.__doc__ or ""
    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    said = re.search(r"(\w+) collaborators", doc)
    assert said and said.group(1) in words
    assert words[said.group(1)] == len(re.findall(r"^\* the [\w' ]*\*\*", doc, re.M))
    for target in re.findall(r":class:`(tempsched_lab\.[\w.]+)`", doc):
        module, _, name = target.rpartition(".")
        assert hasattr(importlib.import_module(module), name), target


def test_the_live_scheduler_registry_owns_no_lock():
    """docs/design.md says the registry owns no lock; registry.py constructs none."""
    source = (PACKAGE / "registry.py").read_text()
    assert not re.search(r"\b(R?Lock|Condition|Semaphore)\(", source)
    assert "live-scheduler registry\nowns none" in (ROOT / "docs" / "design.md").read_text()
