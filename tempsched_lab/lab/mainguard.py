"""Refuse a process pool that would run the caller's script again in every worker.

A process pool started with ``spawn`` or ``forkserver`` (the lab's, never
``fork``) makes each worker import the main script first, as ``__mp_main__``.
A script that calls ``experiment.run(workers=2)`` at its top level, outside an
``if __name__ == "__main__":`` block, would start the sweep again in every
worker: Python stops that inside the worker with a bootstrapping
``RuntimeError``, and the caller sees two tracebacks per worker, a
``BrokenProcessPool`` and "leaked semaphore objects" at exit.

:func:`check_main_guard` finds that case *before* the pool exists: it looks for
the main script's module-level frame on the caller's stack and asks whether the
statement being run sits in the guarded branch of a main guard. A notebook, an
interactive session, ``python -c`` and pytest have no main script to run
again, so nothing is checked there. In a worker that is still bootstrapping
(whatever the reason) the same error is raised before any pool is made.

>>> check_main_guard("run(workers=2)")  # a doctest runs in no main script: nothing to say
"""

from __future__ import annotations

import ast
import multiprocessing
import sys
from types import FrameType

__all__ = ["UnguardedMainError", "check_main_guard"]


class UnguardedMainError(RuntimeError):
    """A process pool asked for from a script's unguarded top level (names the fix)."""


_FIX = (
    "every worker process starts by importing that script, and would run it again. Put the "
    "code that runs the experiment under a main guard:\n\n"
    '    if __name__ == "__main__":\n'
    "        results = experiment.run(workers=2)\n\n"
    "(nothing was started; see docs/lab.md, 'From a script')"
)


def check_main_guard(call: str) -> None:
    """Raise :class:`UnguardedMainError` when a worker would run the caller's script again.

    Args:
        call: the call as the user wrote it, for the message (``"run(workers=2)"``).
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise UnguardedMainError(
            f"{call} was reached while this worker process was importing the main script: " + _FIX
        )
    found = _unguarded_main_line()
    if found is not None:
        path, line = found
        raise UnguardedMainError(
            f"{call} was called from the top level of the script {path} (line {line}), "
            'outside an `if __name__ == "__main__":` block: ' + _FIX
        )


def _main_rerun_by_workers() -> bool:
    """Whether a spawned or forkserver worker would import the main module again."""
    from multiprocessing import spawn

    try:
        data = spawn.get_preparation_data("check")
    except Exception:  # pragma: no cover - an odd __main__; multiprocessing decides later
        return False
    return "init_main_from_path" in data or "init_main_from_name" in data


def _unguarded_main_line() -> tuple[str, int] | None:
    """The main script and line of an unguarded module-level call on the stack, or None."""
    main = sys.modules.get("__main__")
    if main is None or not _main_rerun_by_workers():
        return None
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            break
        frame = frame.f_back
    if frame is None:
        return None  # not called while the main module's top level runs (a guard's function)
    path, line = frame.f_code.co_filename, frame.f_lineno
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None  # no source to read: the worker's own check still speaks
    return None if _guarded(tree.body, line) else (path, line)


def _is_main_test(test: ast.expr) -> bool | None:
    """``True`` for ``__name__ == "__main__"``, ``False`` for ``!=``, ``None`` otherwise."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    if not (names and mains):
        return None
    if isinstance(test.ops[0], ast.Eq):
        return True
    return False if isinstance(test.ops[0], ast.NotEq) else None


def _within(statements: list[ast.stmt], line: int) -> bool:
    return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in statements)


def _guarded(statements: list[ast.stmt], line: int) -> bool:
    """Whether ``line`` lies in the guarded branch of a main guard among ``statements``."""
    for statement in statements:
        if not statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, ast.If):
            main = _is_main_test(statement.test)
            if main is not None:
                return _within(statement.body if main else statement.orelse, line)
        for field in ("body", "orelse", "finalbody"):
            if _guarded(getattr(statement, field, None) or [], line):
                return True
        for field in ("handlers", "cases"):  # except clauses, match cases: a body each
            if any(_guarded(part.body, line) for part in getattr(statement, field, None) or []):
                return True
        return False
    return False
