"""No module of the package imports itself back through others: not at load time, not from
inside a function either (a lazy import that closes a circle only hides it; issue 35 found
task -> triggers.misfire -> validation -> task, closed by an import in ``TriggeredTask``)."""

from __future__ import annotations

from pathlib import Path

from test_design import PACKAGE, _module_name, imports_of


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere (TYPE_CHECKING blocks aside)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for target in imports_of(path, name, lazy=True):
            if target not in modules:  # a name imported from a package's __init__
                target = target.rpartition(".")[0] or "tempsched_lab"
            if target != name:
                targets.add(target)
        graph[name] = targets
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


def test_the_scanner_sees_a_function_level_import(tmp_path: Path):
    """The check would catch the circle issue 35 found: an import inside a method counts."""
    module = tmp_path / "tempsched_lab" / "a.py"
    module.parent.mkdir()
    module.write_text("def f():\n    if True:\n        from .b import g\n")
    assert imports_of(module, "a", lazy=True) == {"b"}
    assert imports_of(module, "a", lazy=False) == set()
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
