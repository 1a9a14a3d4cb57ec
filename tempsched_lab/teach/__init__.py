"""Exercises that check: seeded problems, answers computed by running the scheduler, feedback.

:func:`catalog` lists the kinds; :func:`exercise` poses one ("exercise
decision-tree, seed 12" is the same problem on any machine);
:func:`night_exercise` makes one from a recorded log (a spill directory).
:func:`~tempsched_lab.teach.build.build_notebooks` writes a student's copy of
notebooks without the cells tagged ``solution``.

>>> from tempsched_lab.teach import catalog, exercise
>>> ex = exercise("misfire", seed=2)
>>> ex.check(ex.answer).correct
True
"""

from __future__ import annotations

from .answers import AnswerError, CheckResult, Step
from .exercises import Exercise, catalog, exercise, night_exercise, teach_task

__all__ = [
    "AnswerError",
    "CheckResult",
    "Exercise",
    "Step",
    "catalog",
    "exercise",
    "night_exercise",
    "teach_task",
]
