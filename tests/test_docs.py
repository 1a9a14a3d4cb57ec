"""The documentation site builds with warnings as errors (executing its notebooks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(900)  # executes every notebook again, as the site shows their outputs
def test_docs_build_without_warnings(tmp_path):
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    index = (out / "index.html").read_text()
    assert "tempsched_lab" in index
    api = (out / "api.html").read_text()
    assert "schedule_decision" in api and "TimingWheelQueue" in api
    started = (out / "getting-started.html").read_text()
    assert "EARLIER_THAN_HEAD" in started or "earlier than head" in started  # executed output
