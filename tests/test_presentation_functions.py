"""Functions a reader can hold: none in the plots, widgets or sentences over 150 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tempsched_lab"
PRESENTATION = [PACKAGE / "plots", PACKAGE / "widgets", PACKAGE / "reading" / "sentences.py"]
MAX_LINES = 150


def long_functions(paths: list[Path], limit: int) -> list[tuple[int, str]]:
    """``(lines, "file:function")`` of every function (methods too) longer than ``limit``."""
    found = []
    for root in paths:
        assert root.exists(), root
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > limit:
                        found.append((lines, f"{path.relative_to(PACKAGE)}:{node.name}"))
    return sorted(found, reverse=True)


def test_no_presentation_function_is_longer_than_150_lines():
    assert long_functions(PRESENTATION, MAX_LINES) == []


def test_the_check_sees_the_longest_functions():
    # the drawers of the queue designs are the longest left (120-140 lines): the check reads them
    longest = long_functions(PRESENTATION, 100)
    assert longest and all(n <= MAX_LINES for n, _ in longest)
    assert any(name.endswith(":plot_heap") for _, name in longest)
