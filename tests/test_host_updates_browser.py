"""Updates reach the page while a kernel is busy and while it is idle (issue 44, item 2).

The notebook of ``benchmarks/bench_host_updates.py`` (a task every 50 ms, a dashboard's log
panel showing the newest 250 rows, drawn on the kernel's loop: ``refresh_loop="auto"``) runs
in a real JupyterLab (Run All: two cells keep the kernel busy 3 s each) and in Voila; a click
then blocks the kernel's loop twice for 3 s. A MutationObserver in the page records every
change of the log table: every row logged after the first update, up to the newest shown, was
shown by some update (nothing lost), and updates arrived while the loop was blocked. No timing
is asserted (the delays are the benchmark's business).
"""

from __future__ import annotations

import sys

import labkit
import pytest
import voilakit as vk

sys.path.insert(0, str(vk.ROOT / "benchmarks"))

import bench_host_updates as bench

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _check(result: dict) -> None:
    for phase in ("idle", "busy"):
        assert result[phase]["rows"] > 100, result  # the phase was seen
        assert result[phase]["lost"] == 0, result
    assert result["busy"]["updates"] > 0, result  # drawn while the loop was blocked
    assert result["gaps"] == 0, result  # every update a contiguous run of rows


def test_run_all_in_jupyterlab_loses_no_row(browser, tmp_path):
    server = labkit.LabServer(tmp_path / "lab")
    try:
        _check(bench.run_lab(browser, server, "lab0-loop", tmp_path, "ignore"))
    finally:
        server.close()


def test_voila_loses_no_row(browser, tmp_path):
    _check(bench.run_voila(browser, "voila0-loop", tmp_path, "ignore"))
