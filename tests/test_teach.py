"""Exercises that check (issue 43): seeded problems, answers from the log, feedback that names
the first wrong step, malformed answers that never raise."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.core.decision import Case
from tempsched_lab.teach import catalog, exercise, night_exercise

KINDS = list(catalog())
SEEDS = (0, 1, 7, 12)


def _fingerprint(names: list[str], seeds: tuple[int, ...]) -> str:
    out = []
    for name in names:
        for seed in seeds:
            ex = exercise(name, seed=seed)
            out.append([name, seed, ex.problem, repr(ex.answer), ex.check([]).feedback])
    return json.dumps(out)


def test_the_catalog_has_the_eight_kinds_each_with_a_summary():
    assert {
        "decision-tree",
        "firing-order",
        "misfire",
        "periodic",
        "queue-design",
        "lateness",
        "lab-question",
        "real-night",
    } <= set(KINDS)
    assert all(summary and "\n" not in summary for summary in catalog().values())


@pytest.mark.parametrize("name", KINDS)
def test_each_exercise_checks_its_own_answer_correct_and_is_shareable(name):
    for seed in SEEDS:
        ex = exercise(name, seed=seed)
        result = ex.check(ex.answer)
        assert result.correct and result.step is None, (name, seed, result.feedback)
        assert ex.share == f"exercise {name}, seed {seed}"
        assert ex.hint() and ex.problem and ex.solution().startswith("Answer:")
        # the answer also checks as text where the kind takes text (the widget's text box)
        assert ex.check(json.loads(json.dumps(ex.answer))).correct


@pytest.mark.slow  # a second Python process (~2.5 s)
def test_the_same_seed_poses_the_same_problem_in_another_process_and_seeds_differ():
    here = _fingerprint(KINDS, (3, 12))
    code = (
        "import sys; sys.path.insert(0, 'tests'); import test_teach as t;"
        f"print(t._fingerprint({KINDS!r}, (3, 12)))"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout.strip()
    assert here == there
    problems = {exercise(name, seed=s).problem for name in KINDS for s in range(6)}
    assert len(problems) > len(KINDS) * 3  # seeds pose different problems


def _wrong_at(answer, index):
    """The answer with item ``index`` changed."""
    changed = list(answer)
    item = changed[index]
    if isinstance(item, list):
        changed[index] = [item[0], item[1] + 0.5]
    elif isinstance(item, str):
        changed[index] = "zz"
    elif isinstance(item, int) and not isinstance(item, bool):
        changed[index] = item % 8 + 1
    else:
        changed[index] = item + 0.25
    return changed


@pytest.mark.parametrize(
    "name", ["decision-tree", "firing-order", "misfire", "queue-design", "lateness"]
)
def test_a_wrong_answer_is_told_the_first_step_where_it_went_wrong(name):
    for seed in SEEDS:
        ex = exercise(name, seed=seed)
        steps = ex.steps[0]
        for index in {0, len(steps) // 2, len(steps) - 1}:
            result = ex.check(_wrong_at(ex.answer, index))
            assert not result.correct and result.step == index, (seed, index, result)
            assert f"Step {index + 1} ({steps[index].what})" in result.feedback
            assert steps[index].sentence in result.feedback  # the log panel's sentence
        short = ex.check(ex.answer[:-1])
        assert short.step == len(steps) - 1 and "stops after" in short.feedback


def test_a_wrong_case_names_the_first_question_of_the_tree_answered_otherwise():
    ex = exercise("decision-tree", seed=12)
    right = ex.answer[0]
    wrong = Case.PAST if right != 1 else Case.EMPTY
    result = ex.check([int(wrong), *ex.answer[1:]])
    assert "«Is the time in the past?»" in result.feedback
    assert f"case {right} ({Case(right).short})" in result.feedback


def test_the_periodic_answer_names_its_part():
    ex = exercise("periodic", seed=2)
    answer = {k: list(v) for k, v in ex.answer.items()}
    answer["fixed delay"][1] += 0.3
    result = ex.check(answer)
    assert not result.correct and result.part == "fixed delay"
    assert result.step == len(ex.answer["fixed rate"]) + 1
    text = " | ".join(f"{k}: {' '.join(map(str, v))}" for k, v in ex.answer.items())
    assert ex.check(text).correct


def test_the_lab_question_is_answered_by_running_both_set_ups():
    ex = exercise("lab-question", seed=0)
    other = next(
        n
        for n in ("inline", "pool of 2", "heap", "wheel (50 ms ticks)")
        if n in ex.problem and n != ex.answer
    )
    assert not ex.check(other).correct and ex.check(ex.answer.upper()).correct
    assert "running both gave" in ex.check(other).feedback


malformed = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=malformed, which=st.sampled_from(KINDS))
def test_any_json_like_answer_gets_a_result_never_an_exception(value, which):
    ex = _POSED[which]
    result = ex.check(value)
    assert isinstance(result.feedback, str) and result.feedback
    if result.malformed:
        assert "cannot be read" in result.feedback and not result.correct


_POSED = {name: exercise(name, seed=5) for name in KINDS}


def test_a_night_exercise_is_made_from_a_spill_directory(tmp_path):
    pytest.importorskip("pyarrow")
    clock = VirtualClock()
    s = Scheduler(clock, log_spill=tmp_path / "night", max_log_rows=64)
    for i in range(40):
        s.schedule(str, delay=1.0 + (i * 7) % 11, args=(i % 5,), label=f"job{i % 3}")
        clock.advance(0.5)
    s.shutdown()
    ex = night_exercise(tmp_path / "night", seed=4, start=5.0, end=15.0)
    assert ex.check(ex.answer).correct and ex.name == "real-night"
    seq = ex.steps[0][0].seq
    frame = ex.frame
    assert int(frame.loc[frame["seq"] == seq, "case"].iloc[0]) == ex.answer
    t = float(frame.loc[frame["seq"] == seq, "t"].iloc[0]) - frame.attrs["time_origin"]
    assert 5.0 <= t <= 15.0
    wrong = ex.answer % 8 + 1
    assert not ex.check(wrong).correct and ex.steps[0][0].sentence in ex.check(wrong).feedback
    with pytest.raises(ValueError, match=r"start=100\.0"):
        night_exercise(tmp_path / "night", start=100.0, end=101.0)


def test_bad_names_and_seeds_are_refused_naming_the_value():
    with pytest.raises(ValueError, match="name='nope'"):
        exercise("nope")
    with pytest.raises(ValueError, match="seed=-1"):
        exercise("misfire", seed=-1)
    with pytest.raises(ValueError, match="seed=True"):
        exercise("misfire", seed=True)


# -- the student build -------------------------------------------------------------------------
def _notebook(path):
    import nbformat

    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# A lesson"),
        v4.new_code_cell("x = 1", metadata={"tags": ["exercise"]}),
        v4.new_code_cell("x = 2  # worked", metadata={"tags": ["solution"]}),
        v4.new_markdown_cell("Why: ...", metadata={"tags": ["solution", "hide-input"]}),
        v4.new_code_cell("print(x)", metadata={"tags": ["solutions"]}),  # not the tag
        v4.new_raw_cell("solution", metadata={"tags": []}),
    ]
    nbformat.write(
        v4.new_notebook(
            cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
        ),
        path,
    )
    return cells


@pytest.mark.slow  # nbformat's first validation (~3.5 s on an idle machine)
def test_the_student_build_removes_exactly_the_tagged_cells(tmp_path):
    import nbformat

    from tempsched_lab.teach.build import build_notebooks

    (tmp_path / "src").mkdir()
    cells = _notebook(tmp_path / "src" / "lesson.ipynb")
    built = build_notebooks(tmp_path / "src", tmp_path / "s")
    assert [(b.cells, b.removed) for b in built] == [(6, 2)]
    build_notebooks(tmp_path / "src", tmp_path / "i", student=False)
    student = nbformat.read(tmp_path / "s" / "lesson.ipynb", as_version=4)
    teacher = nbformat.read(tmp_path / "i" / "lesson.ipynb", as_version=4)
    original = nbformat.read(tmp_path / "src" / "lesson.ipynb", as_version=4)
    kept = [c for i, c in enumerate(original.cells) if i not in (2, 3)]
    assert student.cells == kept and len(cells) - len(student.cells) == 2
    assert teacher.cells == original.cells and student.metadata == original.metadata


@pytest.mark.slow  # the command line loads the demo's modules (~2-10 s on a busy machine)
def test_the_build_refuses_to_overwrite_and_names_a_bad_source(tmp_path, capsys):
    from tempsched_lab.__main__ import main

    _notebook(tmp_path / "lesson.ipynb")
    with pytest.raises(SystemExit) as exit_:
        main(["teach", "build", "--student", str(tmp_path / "lesson.ipynb"), str(tmp_path)])
    assert exit_.value.code == 2 and "overwrite" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["teach", "build", "--student", str(tmp_path / "none.ipynb"), str(tmp_path / "o")])
    assert "source=" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["teach", "build", str(tmp_path / "lesson.ipynb"), str(tmp_path / "o")])
    assert "--student" in capsys.readouterr().err


@pytest.mark.slow  # the command line, as above
def test_teach_list_and_show_print_the_catalog_and_a_problem(capsys):
    from tempsched_lab.__main__ import main

    assert main(["teach", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in KINDS)
    assert main(["teach", "show", "periodic", "--seed", "4", "--answer"]) == 0
    out = capsys.readouterr().out
    ex = exercise("periodic", seed=4)
    assert ex.problem in out and ex.share in out and "Answer:" in out


# -- the exercise widget (no browser) ----------------------------------------------------------
def test_the_widget_predicts_then_reveals_and_keeps_the_score():
    from tempsched_lab.widgets import ExerciseWidget

    w = ExerciseWidget("firing-order", seed=3, picture=False)
    try:
        assert w.reveal_button.disabled  # predict first
        w.reveal()
        assert w.revealed.value == ""
        bad = w.submit("nonsense")
        assert bad.malformed and w.score == (0, 0) and w.reveal_button.disabled
        first = w.exercise.answer[0]
        w.answer.value = f"{first[0]}@{first[1] + 1}"  # Enter in the box checks it
        assert w.results[-1].step == 0 and w.score == (0, 1)
        assert "data-correct='0'" in w.result.value and not w.reveal_button.disabled
        w.reveal()
        assert w.revealed.value.count("<tr data-ok=") == len(w.exercise.steps[0])
        assert w.exercise.steps[0][0].sentence in w.revealed.value
        w.submit(w.exercise.answer)
        assert w.score == (0, 1)  # only an exercise's first answer counts
        w.next_button.click()
        assert w.exercise.share == "exercise firing-order, seed 4" and w.reveal_button.disabled
        w.submit(w.exercise.answer)
        assert w.score == (1, 2) and "data-right='1' data-asked='2'" in w.score_text.value
        w.kind.value, w.seed.value = "misfire", 12
        w.pose_button.click()
        assert w.exercise.share == "exercise misfire, seed 12" and w.results == []
        assert w.show_hint() in w.hints.value.replace("&#x27;", "'")
    finally:
        w.close()


def test_the_widget_in_projector_type_and_its_picture():
    from tempsched_lab.widgets import ExerciseWidget

    w = ExerciseWidget("lateness", seed=1, scale="projector")
    try:
        assert "tsl-projector" in w.widget._dom_classes and w.min_px == 16
        w.submit(w.exercise.answer)
        w.reveal()
        big = len(w.image.value)
        assert w.image.value[:4] == b"\x89PNG" and w.image.layout.display == ""
        w.projector.value = False  # the toggle: back to the default type
        assert "tsl-projector" not in w.widget._dom_classes and 0 < len(w.image.value) < big
    finally:
        w.close()


# -- predict before reveal in the history's steps ----------------------------------------------
def test_the_history_asks_for_the_next_case_and_the_next_run_before_showing_them():
    from tempsched_lab.widgets import HistoryPanel

    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(str, at=1.0, args=("a",), label="a")
    s.schedule(str, at=1.0, args=("b",), label="b")  # joins the head
    s.schedule(str, at=0.5, args=("c",), label="c")  # earlier than the head
    clock.advance(2.0)
    frame = s.log.to_frame()
    panel = HistoryPanel(s, picture=False, predict=True)
    try:
        panel.refresh()
        panel.slider.value = 0
        panel.next_button.click()
        assert panel.slider.value == 0 and "Which case?" in panel.ask.value  # asked, not shown
        assert len(panel.choices.children) == 8
        panel.choices.children[3].click()  # case 4: wrong, it joins the head (case 6)
        assert panel.slider.value == 1 and panel.predicted == [(4, 6)]
        assert "Not quite: it was 6 joins head" in panel.verdict.value
        panel.next_button.click()
        panel.guess(3)
        assert panel.predicted[-1] == (3, 3) and "Right!" in panel.verdict.value
        # stepping back to look again is not a new question: ◀ then ▶ just moves
        panel.prev_button.click()
        panel.next_button.click()
        assert panel.slider.value == 2 and panel.ask.value == "" and len(panel.predicted) == 2
        # the first run: which of the three pending tasks?
        first_run = int(frame.loc[frame["kind"] == "dispatch", "seq"].iloc[0])
        panel.slider.value = first_run - 1
        panel.next_button.click()
        assert "Which task runs next?" in panel.ask.value and set(panel.options) == {0, 1, 2}
        panel.guess(2)  # c, due first
        assert panel.predicted[-1] == (2, 2) and panel.slider.value == first_run
        with pytest.raises(ValueError, match="key=2"):
            panel.guess(2)  # no question open
        panel.predict = False
        panel.next_button.click()
        assert panel.slider.value == first_run + 1  # off: ▶ just moves
    finally:
        panel.close()


@pytest.mark.slow  # two dashboards (~3-8 s)
def test_side_by_side_asks_which_side_fires_next_before_stepping():
    from tempsched_lab.widgets import SideBySide, demo_task

    def lesson(s):
        s.schedule(demo_task, at=1.0, label="a")
        s.schedule(demo_task, at=1.034, label="b")

    pair = SideBySide(lesson, designs=("heap", "wheel"), autostart=False, predict=True)
    try:
        names = [s.name for s in pair.schedulers]
        pair.step_button.click()
        assert all(c.now() == 0.0 for c in pair.clocks) and "which side" in pair.ask.value
        pair.guess("all at once")  # both fire a at 1.000 s
        assert pair.predicted == [("all at once", "all at once")]
        assert [c.now() for c in pair.clocks] == [1.0, 1.0]
        pair.step_button.click()  # b: the heap at 1.034 s, the wheel's tick at 1.040 s
        pair.choices.children[1].click()  # the wheel: wrong
        assert pair.predicted[-1] == (names[1], names[0]) and "Not quite" in pair.verdict.value
        with pytest.raises(ValueError, match="side='heap'"):
            pair.guess("heap")
        pair.predict.value = False
        assert pair.step_button.click() is None and pair.ask.value == ""
    finally:
        pair.close()


def test_teaching_mode_turns_the_historys_prediction_on():
    from tempsched_lab.widgets import Dashboard

    s = Scheduler(VirtualClock())
    on = Dashboard(s, panels=("history",), autostart=False, teaching=True)
    off = Dashboard(
        s,
        panels=("history",),
        autostart=False,
        teaching=True,
        options={"history": {"predict": False}},
    )
    plain = Dashboard(s, panels=("history",), autostart=False)
    try:
        assert on.panels["history"].predict and not off.panels["history"].predict
        assert not plain.panels["history"].predict
    finally:
        for dash in (on, off, plain):
            dash.close()
