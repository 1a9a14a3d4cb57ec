"""The student build: notebooks written again without their cells tagged ``solution``.

``tempsched-lab teach build --student SRC DEST`` (or :func:`build_notebooks`)
reads each notebook of ``SRC`` (a notebook, or a folder of them) with
``nbformat`` and writes it to ``DEST`` without the cells whose tags include
``solution``; every other cell, its outputs and the notebook's metadata are
kept as they are. ``--instructor`` writes them with every cell.

>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[
...     nbformat.v4.new_markdown_cell("Exercise 1"),
...     nbformat.v4.new_code_cell("answer = 42", metadata={"tags": ["solution"]}),
... ])
>>> student, removed = without_solutions(nb)
>>> [c.source for c in student.cells], removed
(['Exercise 1'], 1)
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SOLUTION_TAG", "Built", "build_notebooks", "is_solution", "without_solutions"]

#: The tag of a worked solution's cells.
SOLUTION_TAG = "solution"


@dataclass(frozen=True)
class Built:
    """One notebook written by :func:`build_notebooks`."""

    source: Path
    target: Path
    #: cells in the source notebook
    cells: int
    #: cells left out (tagged ``solution``; 0 in an instructor's build)
    removed: int


def is_solution(cell: Any) -> bool:
    """True when the cell's tags include ``solution``.

    >>> import nbformat
    >>> is_solution(nbformat.v4.new_code_cell("x", metadata={"tags": ["solution"]}))
    True
    """
    tags = cell.get("metadata", {}).get("tags", [])
    return isinstance(tags, list) and SOLUTION_TAG in tags


def without_solutions(notebook: Any) -> tuple[Any, int]:
    """A copy of ``notebook`` without its solution cells, and how many were left out."""
    student = copy.deepcopy(notebook)
    kept = [cell for cell in student.cells if not is_solution(cell)]
    removed = len(student.cells) - len(kept)
    student.cells = kept
    return student, removed


def build_notebooks(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    student: bool = True,
) -> list[Built]:
    """Write the notebooks of ``source`` to ``target``, without solutions when ``student``.

    ``source`` is a notebook (then ``target`` is a notebook path or a folder) or a
    folder (its ``*.ipynb``, not its subfolders; ``target`` is a folder, made if
    needed). A target may not be a source: a build never overwrites the original.

    >>> import nbformat, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    ...     "answer = 42", metadata={"tags": ["solution"]})])
    >>> nbformat.write(nb, folder / "ex.ipynb")
    >>> [b.removed for b in build_notebooks(folder / "ex.ipynb", folder / "student")]
    [1]
    """
    import nbformat

    src, dest = Path(source), Path(target)
    if src.is_dir():
        notebooks = sorted(src.glob("*.ipynb"))
        if not notebooks:
            raise ValueError(f"source={str(src)!r}: the folder holds no notebook (.ipynb)")
        pairs = [(nb, dest / nb.name) for nb in notebooks]
    elif src.is_file() and src.suffix == ".ipynb":
        pairs = [(src, dest if dest.suffix == ".ipynb" else dest / src.name)]
    else:
        raise ValueError(f"source={str(src)!r}: expected a notebook (.ipynb) or a folder of them")
    for nb, out in pairs:
        if out.resolve() == nb.resolve():
            raise ValueError(f"target={str(dest)!r}: it would overwrite the source {nb.name}")
    read: Any = nbformat.read  # nbformat has no type hints
    write: Any = nbformat.write
    built = []
    for nb, out in pairs:
        try:
            notebook = read(nb, as_version=4)
        except (ValueError, KeyError, AttributeError) as exc:  # not JSON, or not a notebook
            raise ValueError(f"source={str(nb)!r}: not a notebook nbformat reads ({exc})") from exc
        written, removed = without_solutions(notebook) if student else (notebook, 0)
        out.parent.mkdir(parents=True, exist_ok=True)
        write(written, out)
        built.append(Built(nb, out, len(notebook.cells), removed))
    return built
