"""Shared fixtures: every scheduler a test creates is shut down afterwards; notebooks run once.

Markers: ``slow`` (left out of the fast lane, ``pytest -m "not slow"``), and the
kinds that are always slow: ``notebooks``, ``browser``, ``docs`` (added here by
file, so no test of those files can forget it).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

from tempsched_lab import live_schedulers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: executed copies of the notebooks, reused by the docs build (not committed)
EXECUTED = ROOT / "build" / "executed-notebooks"
CELL_TIMEOUT_S = 120

_KIND_BY_FILE = {
    "test_notebooks.py": "notebooks",
    "test_docs.py": "docs",
    "test_widgets_browser.py": "browser",
    "test_notebooks_voila.py": "browser",
    "test_timeline_widget_browser.py": "browser",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        kind = _KIND_BY_FILE.get(Path(str(item.fspath)).name)
        if kind is not None:
            item.add_marker(getattr(pytest.mark, kind))
        if kind is not None or item.get_closest_marker("notebooks"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Captured output as text every channel can carry: tests feed the log lone surrogates
    (``"boom \\udcff"``), and pytest-xdist's workers cannot send such text to the controller
    (the fast lane runs with ``-n 2``); they are shown escaped instead."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [(title, _sendable(text)) for title, text in report.sections]
    if isinstance(report.longrepr, str):
        report.longrepr = _sendable(report.longrepr)


def _sendable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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


@dataclass
class NotebookRun:
    """One notebook executed headless: the executed notebook, its time, its error if any."""

    name: str
    notebook: object
    elapsed: float
    error: BaseException | None


def _execute(path: Path) -> NotebookRun:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.perf_counter()
    error = None
    try:
        client.execute()  # raises CellExecutionError on the first failing cell
    except BaseException as exc:  # reported by the test of this notebook
        error = exc
    return NotebookRun(path.name, nb, time.perf_counter() - started, error)


@pytest.fixture(scope="session")
def executed_notebooks() -> dict[str, NotebookRun]:
    """Every notebook in notebooks/ executed once per test session, one at a time.

    The notebook tests check them; the docs build reuses the executed copies
    (written to build/executed-notebooks/) instead of running them again.
    """
    import nbformat

    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    # One at a time: notebooks that time the real clock state their claims with a tolerance,
    # and a second kernel on the other core of a 2-core machine ate into it.
    runs = [_execute(path) for path in paths]
    EXECUTED.mkdir(parents=True, exist_ok=True)
    for old in EXECUTED.glob("*.ipynb"):
        old.unlink()
    for run in runs:
        if run.error is None:
            nbformat.write(run.notebook, EXECUTED / run.name)
    return {run.name: run for run in runs}


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, one per browser-test module (see ``voilakit``)."""
    import voilakit as vk
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = vk.launch_chromium(p)
        _report_browser(vk.browser_banner(b))
        yield b
        b.close()


_BANNERS: list[str] = []


def _report_browser(banner: str) -> None:
    """Say once per session which browser the tests drive (shown in the summary)."""
    if banner not in _BANNERS:
        _BANNERS.append(banner)


def pytest_terminal_summary(terminalreporter):
    for banner in _BANNERS:
        terminalreporter.write_line(banner)
