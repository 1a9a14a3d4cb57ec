"""Row kinds are named by ``Kind``, never by string literals, wherever code reads rows.

A literal such as ``frame["kind"] == "strat"`` matches nothing and says nothing; ``Kind.STRAT``
fails at import and under mypy. The rule of docs/extending.md, checked over the whole package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tempsched_lab.log.schema import KINDS

PACKAGE = Path(__file__).resolve().parent.parent / "tempsched_lab"
# the modules that define the kinds and build the rows name them by their stored strings
DEFINERS = {"log/schema.py", "log/kinds.py", "core/recorder.py"}


def _mentions_kind(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return "kind" in text.lower() or text == "k"


def _kind_literals(node: ast.AST) -> list[ast.Constant]:
    """String constants naming a row kind, in ``node`` or in a tuple/list/set it is."""
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [e for e in elements if isinstance(e, ast.Constant) and e.value in KINDS]


def _literal_kinds_in(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            literals = [c for o in operands for c in _kind_literals(o)]
            others = [o for o in operands if not _kind_literals(o)]
            if literals and any(_mentions_kind(o) for o in others):
                found += literals
        elif isinstance(node, ast.Call):
            func = node.func
            # frame["kind"].isin([...]) and helpers such as kind("start")
            reads_kinds = (
                isinstance(func, ast.Attribute) and func.attr == "isin" and _mentions_kind(func)
            ) or (not isinstance(func, ast.Attribute) and _mentions_kind(func))
            if reads_kinds:
                found += [c for a in node.args for c in _kind_literals(a)]
    return sorted({(c.lineno, c.value) for c in found})


def test_the_scan_finds_a_literal_kind():
    tree = ast.parse(
        'a = frame[frame["kind"] == "start"]\nb = k in ("finish", "error")\n'
        'c = frame["kind"].isin(["cancel"])\nd = kind("wake")\ne = status == "error"\n'
    )
    assert _literal_kinds_in(tree) == [
        (1, "start"),
        (2, "error"),
        (2, "finish"),
        (3, "cancel"),
        (4, "wake"),
    ]


def test_no_module_names_a_row_kind_by_a_string_literal():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {value!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in DEFINERS
        for line, value in _literal_kinds_in(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not offenders, f"name row kinds as log.kinds.Kind members: {offenders}"
