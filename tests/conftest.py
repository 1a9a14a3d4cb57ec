"""Shared fixtures: every scheduler a test creates is shut down afterwards."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

from tempsched_lab import live_schedulers


@pytest.fixture(autouse=True)
def _no_leftover_schedulers():
    yield
    for scheduler in live_schedulers():
        scheduler.shutdown(wait=False)


@pytest.fixture(params=["sorteddict", "heap", "wheel"])
def design(request):
    """Each queue design by name."""
    from tempsched_lab.queues import DESIGNS

    if request.param not in DESIGNS:
        pytest.fail(f"queue design {request.param!r} is not registered")
    return request.param
