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
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

from tempsched_lab import live_schedulers

# CI (.ci/run sets TEMPSCHED_CI=1) runs the property tests on the same examples every time, so a
# clean clone's verdict does not depend on a random seed; a developer's run explores new ones
# (the hypothesis test that found '{{}}' did so in CI, on a random draw). Loaded before any
# test module is imported: their @settings(...) derive from this profile.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("TEMPSCHED_CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: executed copies of the notebooks, reused by the docs build (not committed)
EXECUTED = ROOT / "build" / "executed-notebooks"
CELL_TIMEOUT_S = 120
BROWSER_TEST_TIMEOUT_S = 300

_KIND_BY_FILE = {
    "test_notebooks.py": "notebooks",
    "test_docs.py": "docs",
    "test_widgets_browser.py": "browser",
    "test_notebooks_voila.py": "browser",
    "test_timeline_widget_browser.py": "browser",
    "test_remote_voila.py": "browser",
    "test_fit_browser.py": "browser",
    "test_progressive_browser.py": "browser",
    "test_hosts_browser.py": "browser",
}


#: Slow by measurement: the 40 longest tests of the fast lane, each 11 s or more in
#: ``pytest -m "not slow" -n 2 --durations=40`` on the shared 2-core machine (load average 6;
#: 913 s for the lane then). They run in the full suite (CI), not in the fast lane.
_SLOW_BY_MEASUREMENT = frozenset((
    "tempsched_lab/widgets/sidebyside.py::tempsched_lab.widgets.sidebyside",
    "tests/test_bulk.py::test_schedule_many_decides_and_logs_exactly_like_one_by_one",
    "tests/test_cli.py::test_virtual_demo_prints_each_step_and_writes_every_output",
    "tests/test_dashboard_frames.py::test_a_real_clock_dashboard_never_shows_epoch_numbers",
    "tests/test_dashboard_frames.py::test_a_round_writes_nothing_until_every_part_is_drawn",
    "tests/test_dashboard_frames.py::test_any_sequence_of_actions_leaves_one_moment_on_screen",
    "tests/test_dashboard_frames.py::test_every_panel_shows_the_same_moment_after_each_click",
    "tests/test_dashboard_frames.py::test_pictures_are_shown_at_their_pixel_size_with_readable_text[wheel]",
    "tests/test_dashboard_frames.py::test_quiet_rounds_draw_every_case_of_the_tree_ahead_of_a_click",
    "tests/test_dashboard_frames.py::test_tree_redraws_only_its_counts_and_matches_a_full_drawing",
    "tests/test_figures.py::test_every_figure_is_readable[demo-virtual-summary]",
    "tests/test_fork.py::test_r15_forty_forks_beside_busy_threads_never_give_silent_ids_nor_deadlock",
    "tests/test_log.py::test_replay_equals_the_live_state_after_every_row[heap]",
    "tests/test_logfiles.py::test_a_damaged_csv_file_is_refused[format 2]",
    "tests/test_logfiles.py::test_a_damaged_csv_file_is_refused[format 3]",
    "tests/test_logfiles.py::test_a_damaged_parquet_file_is_refused_or_read_intact",
    "tests/test_logfiles.py::test_a_full_disk_leaves_no_file_and_names_the_path[log.csv]",
    "tests/test_logfiles.py::test_a_full_disk_leaves_no_file_and_names_the_path[log.parquet]",
    "tests/test_logfiles.py::test_random_numbers_round_trip_exactly",
    "tests/test_logfiles.py::test_random_text_round_trips_exactly",
    "tests/test_logfiles.py::test_writes_from_a_background_thread_while_reading",
    "tests/test_memory.py::test_compacting_a_chunk_needs_numpy_but_not_pandas",
    "tests/test_memory.py::test_spilling_bounds_memory_without_losing_rows",
    "tests/test_memory.py::test_the_wheel_releases_ticks_of_cancelled_tasks",
    "tests/test_plots.py::test_plot_queue_dispatches_on_the_design_of_a_live_snapshot[wheel]",
    "tests/test_plots.py::test_summary_page",
    "tests/test_plots.py::test_timeline_folds_lanes_beyond_max_lanes_into_a_band_with_a_scale",
    "tests/test_queues.py::test_wheel_rounding_never_fires_early",
    "tests/test_spill.py::test_r1_a_failed_segment_keeps_its_rows_in_memory_and_history_has_no_hole",
    "tests/test_spill.py::test_r1_the_spill_resumes_once_the_disk_has_room_again",
    "tests/test_spill.py::test_r5_rows_waiting_for_the_disk_stay_bounded",
    "tests/test_task_ids.py::test_r6_cancel_of_any_integer_id_keeps_every_reader_working",
    "tests/test_teaching.py::test_side_by_side_steps_both_designs_to_the_same_times_and_links_the_views",
    "tests/test_teaching.py::test_teaching_dashboard_shows_the_prediction_beside_the_tree_in_one_moment",
    "tests/test_timeline_widget.py::test_dashboard_at_1khz_sends_each_row_once_at_most_10_batches_a_second",
    "tests/test_triggers.py::test_cron_agrees_with_a_minute_by_minute_scan_of_wall_times",
    "tests/test_untrusted_files.py::test_r7_a_column_name_that_is_not_utf8_is_a_named_error",
    "tests/test_virtual_clock_bounds.py::test_r14_a_refused_window_then_resumed_gives_the_rows_of_stepping",
    "tests/test_widgets.py::test_dashboard_composes_every_panel_and_clicks_flow_through",
    "tests/test_widgets.py::test_refresher_rate_limit_holds_under_a_flood_fake_clock",
    # Dec 2 2026, idle machine, fast lane 93 s (over its 90 s): the five longest (2.3-7.7 s)
    "tests/test_log_bounds.py::test_the_garbage_collector_stays_on_while_the_compactor_works",
    "tests/test_lab_workloads.py::test_any_hand_edit_of_a_workload_csv_reads_back_or_names_the_file",
    "tests/test_figures.py::test_the_decision_tree_keeps_its_labels_off_the_arrows_and_texts_in_their_boxes[size0-projector]",
    "tests/test_figures.py::test_the_decision_tree_keeps_its_labels_off_the_arrows_and_texts_in_their_boxes[size0-default]",
    "tests/test_page_scale.py::test_one_toggle_switches_every_view_of_the_page_and_back",
    # Dec 6 2026, quiet machine, fast lane 91-98 s (over its 90 s): the longest left (1.7-5.3 s).
    # The student build's doctests import nbformat, whose jsonschema builds 38 Lark grammars
    # for its URI formats (rfc3987_syntax, ~1.2 s a process alone, 4.9-5.3 s a doctest beside
    # the other worker); the others wait on real time (keep-alive, a spill interval, forks).
    "tempsched_lab/teach/build.py::tempsched_lab.teach.build",
    "tempsched_lab/teach/build.py::tempsched_lab.teach.build.is_solution",
    "tempsched_lab/teach/build.py::tempsched_lab.teach.build.build_notebooks",
    "tests/test_serve_halfsent.py::test_whole_requests_and_long_streams_are_not_cut",
    "tests/test_fork_spill.py::test_flush_in_children_forked_while_the_logs_thread_writes_segments_returns",
    "tests/test_log_bounds.py::test_a_quiet_log_reaches_the_disk_within_its_interval[real]",
    "tests/test_log_bounds.py::test_a_quiet_log_reaches_the_disk_within_its_interval[virtual]",
))  # fmt: skip


#: Tests that share a per-process set-up run on one pytest-xdist worker (``--dist loadgroup``,
#: set in pyproject.toml; see ``pytest_xdist_make_scheduler``): the browser tests share one
#: Chromium and one Voila server of ``tests/browser`` and write ``artifacts/``; the notebook
#: tests and the docs build share the notebooks executed once (``executed_notebooks``, which
#: writes ``build/executed-notebooks``). Everything else is spread test by test.
_GROUP_BY_KIND = {"browser": "browser", "notebooks": "notebooks", "docs": "notebooks"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        kind = _KIND_BY_FILE.get(Path(str(item.fspath)).name)
        if kind is not None:
            item.add_marker(getattr(pytest.mark, kind))
            if kind == "browser" and item.get_closest_marker("timeout") is None:
                # each wait in a browser test is bounded (a page 120 s, an event 5-60 s): the
                # per-test limit only catches a hang, and a page load alone may take 120 s
                item.add_marker(pytest.mark.timeout(BROWSER_TEST_TIMEOUT_S))
        if (
            kind is not None
            or item.get_closest_marker("notebooks")
            or item.nodeid in _SLOW_BY_MEASUREMENT
        ):
            item.add_marker(pytest.mark.slow)


def _group_of(nodeid: str) -> str | None:
    """The worker group of a test, by its file (``_GROUP_BY_KIND``), or None.

    >>> _group_of("tests/test_docs.py::test_docs_build_without_warnings"), _group_of("x.py::t")
    ('notebooks', None)
    """
    kind = _KIND_BY_FILE.get(Path(nodeid.split("::", 1)[0]).name)
    return None if kind is None else _GROUP_BY_KIND[kind]


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook, on the controller
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups above, read from the test's file on the controller.

    xdist's own loadgroup reads ``xdist_group`` marks by appending ``@group`` to ``item._nodeid``
    on the worker, which pytest 9 no longer reads (node ids live in ``_id``): with
    pytest 9.2 and pytest-xdist 3.8 every test became a group of its own, and both workers
    executed all the notebooks and started a browser and Voila servers of their own. Groups
    go out first (largest first), then single tests as workers free up.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group_of(nodeid) or nodeid

    return Grouped(config, log)


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
    from tempsched_lab.core.queues import DESIGNS

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
        # headless: the live notebooks' last cells stop their views and schedulers (a reader's
        # Run All leaves them live; notebooks 05 and 11)
        env = {**os.environ, "TEMPSCHED_HEADLESS": "1"}
        client.execute(env=env)  # raises CellExecutionError on the first failing cell
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


class _SharedBrowser:
    """One Chromium for the browser tests that run one after another on a worker.

    Playwright's sync API keeps an asyncio loop *running* in the main thread while it is
    started, so ``asyncio.run`` (tests/test_asyncio.py) fails beside it: the browser is
    stopped as soon as the next test on this worker does not ask for it
    (``pytest_runtest_teardown``), and started again by the next one that does.
    """

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self):
        if self.browser is None:
            import voilakit as vk
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.browser = vk.launch_chromium(self.playwright)
            _report_browser(vk.browser_banner(self.browser))
        return self.browser

    def stop(self) -> None:
        browser, playwright, self.browser, self.playwright = (
            self.browser,
            self.playwright,
            None,
            None,
        )
        if browser is not None:
            browser.close()
        if playwright is not None:
            playwright.stop()


_SHARED_BROWSER = _SharedBrowser()


@pytest.fixture
def browser():
    """Debian's Chromium driven by Playwright, shared by the browser tests that run in a row on
    a worker (they share one: ``--dist loadgroup``). Each test opens its own context
    (``vk.new_page``), so no cookie, storage or page outlives a test. See ``voilakit``."""
    return _SHARED_BROWSER.get()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield  # after the test's own fixtures are torn down (they close their pages)
    if nextitem is None or "browser" not in getattr(nextitem, "fixturenames", ()):
        _SHARED_BROWSER.stop()


@pytest.fixture(scope="session")
def browser_pages():
    """One Voila server of ``tests/browser`` (its pages at ``/voila/render/<name>``) for every
    browser test that opens them; each page load starts its own kernel."""
    import voilakit as vk

    server = vk.VoilaServer("tests/browser", "voila-tests-browser.log")
    yield server
    server.stop()


_BANNERS: list[str] = []


def _report_browser(banner: str) -> None:
    """Say once per session which browser the tests drive (shown in the summary)."""
    if banner not in _BANNERS:
        _BANNERS.append(banner)


def pytest_sessionfinish(session):
    """On an xdist worker: hand the banners to the controller, which prints the summary."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["browser_banners"] = list(_BANNERS)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: the controller hears a worker end
def pytest_testnodedown(node, error):
    for banner in getattr(node, "workeroutput", {}).get("browser_banners", ()):
        _report_browser(banner)


def pytest_terminal_summary(terminalreporter):
    for banner in _BANNERS:
        terminalreporter.write_line(banner)
