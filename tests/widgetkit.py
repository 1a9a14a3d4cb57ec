"""What the widget tests share: a small scenario, and a fixture that closes widgets after a test.

(A plain module, not a conftest: ``tests/conftest.py`` belongs to the whole suite.)
"""

from __future__ import annotations

import ipywidgets as W
import pytest

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.widgets import demo_task


@pytest.fixture(autouse=True)
def close_widgets():
    """After each test: stop every refresher a failed test may have left running, close widgets."""
    yield
    from tempsched_lab.widgets import refresher

    for ref in list(refresher._ACTIVE.values()):
        r = ref()
        if r is not None:
            r.close()
    W.Widget.close_all()


def scenario(design: str = "sorteddict") -> tuple[Scheduler, VirtualClock]:
    """Four one-shot tasks (two sharing t=2) and a heartbeat every 1.5 s from 0.5."""
    clock = VirtualClock()
    s = Scheduler(clock, queue=design)
    for t, label in [(1.0, "alpha"), (2.0, "beta"), (2.0, "gamma"), (3.5, "delta")]:
        s.schedule(demo_task, at=t, args=(label,), label=label)
    s.schedule(demo_task, at=0.5, period=1.5, label="heartbeat")
    return s, clock
