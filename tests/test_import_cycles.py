"""No module of the package imports itself back through others: not at load time, not from
inside a function either (a lazy import that closes a circle only hides it; issue 35 found
task -> triggers.misfire -> validation -> task, closed by an import in ``TriggeredTask``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))

import layers  # docs/layers.py: every import of every module, and how


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports when loaded or inside a function (imports
    for types only are left to the parts' check of tests/test_design.py: inside a part, a
    port typed by the scheduler it serves is no circle at run time)."""
    modules = layers.modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for imp in layers.all_imports():
        if imp.how != "type" and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_in_a_circle_lazy_imports_included():
    circles = _circles(_graph())
    assert not circles, f"import circles (function-level imports counted): {circles}"


def test_the_scanner_sees_a_function_level_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The check would catch the circle issue 35 found: an import inside a method counts."""
    module = tmp_path / "tempsched_lab" / "a.py"
    module.parent.mkdir()
    (tmp_path / "tempsched_lab" / "b.py").write_text("g = 1\n")
    module.write_text("def f():\n    if True:\n        from .b import g\n")
    monkeypatch.setattr(layers, "PACKAGE", tmp_path / "tempsched_lab")
    assert [(i.target, i.how) for i in layers.imports_in(module)] == [("b", "lazy")]
    assert _circles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
