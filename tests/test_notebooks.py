"""The teaching notebooks run top to bottom, headless, and show what they promise.

Each notebook in ``notebooks/`` is executed with nbclient (kernel ``python3``, the
notebook's own directory as the working directory) on a copy: the files on disk
stay stripped of outputs. Every run must end without an error, within the time
budget, and contain the outputs its lesson is about.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = [
    "01_tour.ipynb",
    "02_decision_tree.ipynb",
    "03_periodic_and_time.ipynb",
    "04_queue_designs.ipynb",
    "05_live_dashboard.ipynb",
    "06_analysing_a_log.ipynb",
    "07_migrating_from_temporal_scheduler.ipynb",
    "08_outgrowing_one_machine.ipynb",
    "09_interactive_timeline.ipynb",
    "10_lab_experiment.ipynb",
    "11_watching_a_service.ipynb",
    "12_watching_a_fleet.ipynb",
]
BUDGET_S = 60.0  # a notebook must run top to bottom in under a minute
CELL_TIMEOUT_S = 120
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CASES = [
    "PAST",
    "EMPTY",
    "EARLIER_THAN_HEAD",
    "NEW_TIME_POINT",
    "DUPLICATE_OF_HEAD",
    "JOINS_HEAD",
    "DUPLICATE_IN_QUEUE",
    "JOINS_TIME_POINT",
]

try:
    import temporal_scheduler  # noqa: F401
except ImportError:  # pragma: no cover - depends on the install
    HAVE_REFERENCE = False
else:
    HAVE_REFERENCE = True


def _outputs(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def _text(nb: nbformat.NotebookNode) -> str:
    """Every text the outputs show: streams, plain text and HTML reprs, errors."""
    parts = []
    for out in _outputs(nb):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
        else:
            data = out.get("data", {})
            parts.extend(data.get(mime, "") for mime in ("text/plain", "text/html"))
    return "\n".join(parts)


def _count(nb: nbformat.NotebookNode, mime: str) -> int:
    return sum(mime in out.get("data", {}) for out in _outputs(nb))


def _frames(nb: nbformat.NotebookNode) -> int:
    """Outputs that hold a closed view's last frame as HTML (widgets/lastframe.py)."""
    return sum(
        "tsl-lastframe" in "".join(o.get("data", {}).get("text/html", "")) for o in _outputs(nb)
    )


def _check_tour(nb, text):
    assert "hello Grace" in text and "hello Edsger" in text  # the runs, in due order
    assert "CancelResult.CANCELLED" in text and "CancelResult.ALREADY_DONE" in text
    assert "set: True" in text  # the Event action
    assert "event_set" in text and "dispatch" in text  # the log as a DataFrame
    assert _count(nb, "image/png") >= 1  # the timeline


def _check_decision_tree(nb, text):
    missing = [name for name in CASES if f"Case.{name}" not in text]
    assert not missing, f"cases not shown: {missing}"
    assert "PastTimeError" in text
    assert "joins time point" in text and "duplicate in queue" in text  # case_counts table
    assert _count(nb, "image/png") >= 8  # one tree per case, plus the counts and the timeline


def _check_periodic(nb, text):
    for policy in ("skip", "run_once", "catch_up"):
        assert policy in text
    assert "wall-clock deadline" in text and "monotonic deadline" in text
    if HAVE_REFERENCE:
        assert "temporal-scheduler" in text and "added per run" in text
    else:  # pragma: no cover - depends on the install
        assert "temporal-scheduler is not installed" in text
    assert _count(nb, "image/png") >= 3  # drift, misfires, the reference's drift


def _check_queue_designs(nb, text):
    for design in ("sorteddict", "heap", "wheel"):
        assert f"{design:<10} same decisions as sorteddict: True" in text
        assert f"{design:<10} same run order as sorteddict: True" in text
    assert "same state in all three: True" in text
    assert "measured in" in text
    assert "holds: heap pop grows" in text and "steps per task" in text  # counted, not timed
    assert "DOES NOT HOLD" not in text
    assert _count(nb, "image/png") >= 4  # three designs and the cost plot


def _check_dashboard(nb, text):
    # displayed, then closed by the last cell: its output holds its last frame, as HTML
    assert _frames(nb) >= 1, "the dashboard's output does not hold its last frame"
    assert "case 8 (joins time point)" in text  # the history scrubber's row
    assert "dashboard closed: True | scheduler closed: True" in text  # the last cell stops all
    assert ": OK" in text  # the audit of the live run
    assert _count(nb, "image/png") >= 1  # the final timeline


def _check_analysis(nb, text):
    assert "CSV frame equals the original: True" in text
    assert "Parquet frame equals the original: True" in text
    assert "dtypes equal: True" in text
    assert "same lateness summary: True" in text and "same case counts: True" in text
    assert text.count("0 in flight: OK") >= 2  # the audit, before and after the round trip
    assert "RuntimeError: the disk is full" in text  # task_history of the failing task
    assert "heartbeat" in text  # periodic_runs
    assert _count(nb, "image/png") >= 2  # lateness and the summary page


def _check_migration(nb, text):
    assert "IDs: 0 1 1 2 4" in text  # the program ran unchanged
    assert "cancel a pending task: True" in text
    assert "compat" in text  # the decisions' origin in the log
    if HAVE_REFERENCE:
        assert "the same runs, in the same order: True" in text
    assert "[105.0, 107.0, 109.0, 111.0]" in text  # the virtual clock example
    assert _count(nb, "image/png") >= 2  # timeline and tree


def _check_interactive_timeline(nb, text):
    assert "33 a row" in text  # the wire format's size, computed
    assert "new rows sent" in text and "rows sent in all" in text  # the incremental feed
    assert "score:" in text  # predict, then reveal
    assert "moves back" in text  # stepping back shows what changed
    assert "[('heap', 1), ('wheel', 2)]" in text  # side by side: the same decisions
    assert "closed: True True" in text  # everything stopped at the end
    assert _count(nb, WIDGET_VIEW) >= 1


def _check_outgrowing(nb, text):
    assert "lanes on threads: ['tempsched-pool-" in text  # first on this kernel's threads
    assert "workers: 2" in text and "ran on 2 workers" in text  # then on the cluster
    assert "submit hop of a heartbeat" in text and "lateness on the worker" in text
    assert "state: failed | RuntimeError: the input file is missing" in text
    assert "failed on a worker: True" in text
    assert "client still usable: True" in text and "cluster closed: True" in text
    assert _count(nb, "image/png") >= 2  # thread lanes, worker lanes


def _check_lab(nb, text):
    assert "same seed, same table: True" in text  # a workload is data, drawn from its seed
    assert "90 runs," in text  # the sweep
    assert _count(nb, WIDGET_VIEW) >= 2  # the progress bar, the dashboard of a surprising run
    assert "sorted dict and heap made identical runs: True" in text  # the conclusion, asserted
    assert "the budget holds while each thread is busy less than all the time" in text
    assert "M/M/1 mean wait: measured" in text
    assert "all of their lateness is the wait for the tick: True" in text  # a log regenerated
    assert "the sorted dict does the least work per task: True" in text  # steps counted
    assert "the same rows on the cluster: True" in text and "cluster closed: True" in text
    assert _count(nb, "image/png") >= 4  # two sweeps' lines, the tail, the case mix
    # tables speak the time language: a p99 of 632 µs, never 0.000632 or a rounded 0.000000
    assert " µs" in text and "0.000000" not in text


def _check_watching(nb, text):
    # displayed, then closed by the last cell: its output holds its last frame, as HTML
    assert _frames(nb) >= 1, "the watch's output does not hold its last frame"
    assert "after SIGKILL: reconnecting since" in text  # the banner's words, in the kernel
    # restarted on the same spill directory: the same log, resumed, the lost rows named
    assert "after the restart: live, with a gap: rows" in text and "was killed" in text
    assert "the same log, resumed: the same dashboard: True" in text
    assert "rows on disk; the mirror held" in text
    assert "the live mirror equals the log on disk, frame for frame: True" in text
    assert ": OK" in text  # the audit of the replayed night
    assert "watch closed: True" in text


def _check_fleet(nb, text):
    # displayed, then closed by the last cell: its output holds its last frame, as HTML
    assert _frames(nb) >= 1, "the fleet view's output does not hold its last frame"
    # the clock set wrong on purpose, measured by the midpoint method
    assert "batch was started 6.5 s ahead; the estimate is within its stated uncertainty: True" in (
        text
    )
    assert "on this machine's clock" in text  # the table of each service's last row
    # one service killed and restarted: its banner line says so, the others stay live
    assert "after SIGKILL:   worker: reconnecting" in text
    assert "after a restart: worker: live, with a gap: rows" in text and "was killed" in text
    assert "the others never noticed: ['live', 'live']" in text
    # nothing lost, nothing reordered: live, then after a clean stop, against the spilled logs
    for name in ("api", "batch", "worker"):
        lines = [ln for ln in text.splitlines() if f"{name:>6}: " in ln and "rows, in" in ln]
        assert len(lines) == 2, lines
        for line in lines:
            assert "in seq order: True | every row on disk held and equal: True" in line, line
            assert "every missing row in a named gap: True" in line, line
    assert "rows the fleet holds beyond the disk: {'api': 0, 'batch': 0, 'worker': " in text
    assert "view closed: True" in text


#: The teaching notebooks that end with exercises (issue 43): at least three each, their worked
#: solutions in cells tagged ``solution`` (the student build leaves those out).
EXERCISE_NOTEBOOKS = {
    "01_tour.ipynb",
    "02_decision_tree.ipynb",
    "03_periodic_and_time.ipynb",
    "04_queue_designs.ipynb",
    "09_interactive_timeline.ipynb",
    "10_lab_experiment.ipynb",
}


def _check_exercises(on_disk, nb, text):
    import re

    from tempsched_lab.teach.build import is_solution, without_solutions

    posed = set(re.findall(r"^exercise [a-z-]+, seed \d+$", text, re.M))
    assert len(posed) >= 3, f"fewer than three exercises posed: {sorted(posed)}"
    solutions = [cell for cell in on_disk.cells if is_solution(cell)]
    assert len(solutions) >= 3 and all(c.cell_type == "code" for c in solutions)
    assert text.count("Answer: ") >= 3  # each worked solution ran (and asserted its answer)
    # a student's empty prediction gets feedback, never an error
    assert text.count("Not quite.") + text.count("cannot be read") >= 3
    student, removed = without_solutions(on_disk)
    assert removed == len(solutions) and not any("solution()" in c.source for c in student.cells)
    # the exercises come last: after the first one, only exercise cells (nothing stops a view)
    first = next(i for i, c in enumerate(on_disk.cells) if c.source.startswith("## Exercises"))
    assert not any(".close()" in c.source or "shutdown(" in c.source for c in on_disk.cells[first:])


CHECKS = {
    "01_tour.ipynb": _check_tour,
    "02_decision_tree.ipynb": _check_decision_tree,
    "03_periodic_and_time.ipynb": _check_periodic,
    "04_queue_designs.ipynb": _check_queue_designs,
    "05_live_dashboard.ipynb": _check_dashboard,
    "06_analysing_a_log.ipynb": _check_analysis,
    "07_migrating_from_temporal_scheduler.ipynb": _check_migration,
    "08_outgrowing_one_machine.ipynb": _check_outgrowing,
    "09_interactive_timeline.ipynb": _check_interactive_timeline,
    "10_lab_experiment.ipynb": _check_lab,
    "11_watching_a_service.ipynb": _check_watching,
    "12_watching_a_fleet.ipynb": _check_fleet,
}


def test_every_expected_notebook_is_there_and_no_other():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) or EXPECTED)
def test_notebook_runs_and_teaches(name, executed_notebooks):
    import nbformat  # here, not at the top: every worker collects this file (2 s, pyproject)

    path = NOTEBOOKS / name
    assert path.exists(), f"{name} is missing"
    on_disk = nbformat.read(path, as_version=4)
    nbformat.validate(on_disk)
    assert on_disk.metadata.get("kernelspec", {}).get("name") == "python3"
    assert "widgets" not in on_disk.metadata, "saved widget state: strip the notebook"
    code = [cell for cell in on_disk.cells if cell.cell_type == "code"]
    assert code, "a notebook without code"
    dirty = [i for i, cell in enumerate(code) if cell.outputs or cell.execution_count is not None]
    assert not dirty, f"{name}: code cells {dirty} have outputs or execution counts: strip them"
    titles = [
        line
        for cell in on_disk.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("# ")
    ]
    assert len(titles) == 1 and on_disk.cells[0].source.startswith("# "), "one '#' title, first"

    run = executed_notebooks[name]
    if run.error is not None:
        raise run.error
    nb, elapsed = run.notebook, run.elapsed

    errors = [out for out in _outputs(nb) if out.output_type == "error"]
    assert not errors, errors
    assert elapsed < BUDGET_S, f"{name} took {elapsed:.1f} s (budget {BUDGET_S:g} s)"
    stderr = [out.text for out in _outputs(nb) if out.get("name") == "stderr"]
    assert not stderr, f"{name} wrote to stderr (warnings?): {stderr}"
    text = _text(nb)
    check = CHECKS.get(name)
    if check is not None:
        check(nb, text)
    if name in EXERCISE_NOTEBOOKS:
        _check_exercises(on_disk, nb, text)


def test_a_returned_figure_displays_as_png_without_matplotlib_inline(tmp_path):
    """The plots build Figures without pyplot; importing them registers their PNG display."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from tempsched_lab.plots import example_frame, plot_timeline\n"
            "plot_timeline(example_frame()).figure"
        )
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0]["outputs"]
    assert any("image/png" in out.get("data", {}) for out in outputs), outputs
