"""Sphinx configuration for the tempsched_lab documentation site."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import tempsched_lab

HERE = Path(__file__).parent
ROOT = HERE.parent

project = "tempsched_lab"
author = "tempsched_lab developers"
copyright = "2026, tempsched_lab developers"
release = tempsched_lab.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx.ext.intersphinx",
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**/.ipynb_checkpoints", "jupyter_execute"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# Notebooks live in ../notebooks. They are copied here at build time. The test suite
# executes them once and points TEMPSCHED_EXECUTED_NOTEBOOKS at the executed copies, which
# are shown as they are (not run twice); a plain build executes them with myst-nb.
EXECUTED_NOTEBOOKS = os.environ.get("TEMPSCHED_EXECUTED_NOTEBOOKS")
nb_execution_mode = os.environ.get("TEMPSCHED_NB_EXECUTION", "cache")
# the live notebooks (05, 09, 11, 12) stop their views in their last cell only when run headless
os.environ.setdefault("TEMPSCHED_HEADLESS", "1")
nb_execution_excludepatterns = ["notebooks/*"] if EXECUTED_NOTEBOOKS else []
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# No network in CI: intersphinx inventories are not fetched.
intersphinx_mapping: dict[str, tuple[str, str | None]] = {}

html_theme = "furo"
html_title = f"tempsched_lab {release}"
html_static_path: list[str] = []
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]


def _copy_notebooks(app: object) -> None:
    source = Path(EXECUTED_NOTEBOOKS) if EXECUTED_NOTEBOOKS else ROOT / "notebooks"
    target = HERE / "notebooks"
    target.mkdir(exist_ok=True)
    expected = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    found = sorted(p.name for p in source.glob("*.ipynb"))
    if found != expected:
        raise RuntimeError(f"{source} holds {found}, expected the notebooks {expected}")
    for nb in sorted(source.glob("*.ipynb")):
        shutil.copy2(nb, target / nb.name)


def setup(app: object) -> None:
    app.connect("builder-inited", _copy_notebooks)  # type: ignore[attr-defined]
