"""docs/extending.md's worked examples run as written: every ``python`` block, in order, in one
namespace (a later block uses what an earlier one defined)."""

from __future__ import annotations

import re
from pathlib import Path

from tempsched_lab import Scheduler

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.S | re.M)


def test_every_example_of_the_extending_page_runs():
    blocks = _blocks()
    assert len(blocks) >= 5, "docs/extending.md lost its worked examples"
    namespace: dict[str, object] = {"__name__": "extending_md"}
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"docs/extending.md block {number}", "exec"), namespace)
        finally:
            for value in list(namespace.values()):  # each example's schedulers end with it
                if isinstance(value, Scheduler):
                    value.shutdown()


def test_the_page_is_in_the_docs_table_of_contents():
    assert "\nextending\n" in (PAGE.parent / "index.md").read_text()
