"""The documentation site builds with warnings as errors (executing its notebooks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXECUTED = ROOT / "build" / "executed-notebooks"


@pytest.mark.timeout(900)
def test_docs_build_without_warnings(tmp_path, executed_notebooks):
    """The site shows the notebooks as the notebook tests executed them (not run twice)."""
    failed = [name for name, run in executed_notebooks.items() if run.error is not None]
    assert not failed, f"notebooks failed to execute (see their tests): {failed}"
    out = tmp_path / "html"
    env = {**os.environ, "TEMPSCHED_EXECUTED_NOTEBOOKS": str(EXECUTED)}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    index = (out / "index.html").read_text()
    assert "tempsched_lab" in index
    api = (out / "api.html").read_text()
    assert "schedule_decision" in api and "TimingWheelQueue" in api
    started = (out / "getting-started.html").read_text()
    assert "EARLIER_THAN_HEAD" in started or "earlier than head" in started  # executed output
