"""A refused start of a continuing scheduler leaves nothing behind (issue 41, no promise yet).

``continuing_scheduler(root, clock, **options)`` with a bad option used to create the
lineage's root, its lock file and an empty ``run-NNN`` directory before the scheduler
refused the value. Every option value is now checked first: the root is as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempsched_lab import VirtualClock
from tempsched_lab.restarts import continuing_scheduler

BAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"max_log_rows": -1}, ValueError, r"max_log_rows=-1"),
    ({"max_log_rows": 2.5}, ValueError, r"max_log_rows=2\.5"),
    ({"max_workers": 0}, ValueError, r"max_workers=0"),
    ({"queue": "nope"}, ValueError, r"queue='nope'"),
    ({"queue": "wheel", "queue_options": {"tick": -1}}, ValueError, r"tick=-1"),
    ({"log_spill_interval": "x"}, ValueError, r"spill_interval='x'"),
    ({"log_spill_interval": 1e-6}, ValueError, r"spill_interval=1e-06"),
    ({"resolution": -1.0}, ValueError, r"resolution"),
    ({"misfire": "later"}, ValueError, r"misfire='later'"),
    ({"executor": "nonsense"}, ValueError, r"executor='nonsense'"),
    ({"log": False}, TypeError, r"log=False: a continuing scheduler records its rows"),
    ({"max_log_row": 10}, TypeError, r"max_log_row"),
]


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.mark.parametrize(("options", "error", "match"), BAD, ids=[str(b[0]) for b in BAD])
def test_a_refused_option_leaves_a_new_root_uncreated(
    tmp_path: Path, options: dict[str, Any], error: type[Exception], match: str
) -> None:
    root = tmp_path / "runs"
    with pytest.raises(error, match=match):
        continuing_scheduler(root, VirtualClock(), **options)
    assert not root.exists()


def test_a_refused_option_leaves_an_existing_lineage_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = continuing_scheduler(root, VirtualClock())
    first.schedule(print, delay=1.0)
    first.shutdown()
    before = listing(root)
    assert "run-001" in before
    for options, error, match in BAD:
        with pytest.raises(error, match=match):
            continuing_scheduler(root, VirtualClock(), **options)
        assert listing(root) == before, options
    second = continuing_scheduler(root, VirtualClock())  # the root was let go each time
    assert second.log.spill_directory == str(root / "run-002")
    assert second.log.first_seq == first.log.next_seq
    second.shutdown()
    with pytest.raises(TypeError, match=r"clock='x'"):
        continuing_scheduler(tmp_path / "other", "x")
    assert not (tmp_path / "other").exists()
