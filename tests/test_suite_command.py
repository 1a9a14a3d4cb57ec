"""The README's test command is the one CI runs, and it runs the suite on two xdist workers.

``.ci/run`` must call exactly the command a newcomer copies from the README (and
docs/getting-started.md), so that "CI is green" and "the README's command is green" are the
same claim; the README states how long that command and the fast lane take.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_command() -> str:
    readme = (ROOT / "README.md").read_text()
    found = re.findall(r"&& (\.venv/bin/python -m pytest[^\n`]*)\n", readme)
    assert len(found) == 1, found
    return found[0].strip()


def test_ci_runs_exactly_the_readme_s_test_command_on_two_workers():
    command = _readme_command()
    assert shlex.split(command)[3:] == ["-n", "2"], command
    ci = (ROOT / ".ci" / "run").read_text()
    runs = [line for line in ci.splitlines() if "-m pytest" in line and not line.startswith("#")]
    assert len(runs) == 1 and runs[0].rstrip().endswith(command), runs
    started = (ROOT / "docs" / "getting-started.md").read_text()
    assert f"&& {command}\n" in started


def test_grouped_tests_stay_on_one_worker_and_the_readme_states_the_times():
    addopts = re.search(r'^addopts = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert addopts and "--dist loadgroup" in addopts.group(1)  # tests/conftest.py: _GROUP_BY_KIND
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"whole suite[^.]*\d+ min", readme), "the README states the suite's time"
    assert re.search(r"fast lane[^.]*\d+ s\b", readme), "the README states the fast lane's time"
