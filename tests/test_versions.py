"""The dashboard at the lowest ipywidgets and anywidget versions it accepts, and at the latest.

Each set of versions is installed with ``pip install --no-deps --target`` into a temporary
folder (the two packages alone: their dependencies are the venv's) and put first on the path
of a second Python, which builds a dashboard, its marimo view and a standalone timeline, draws
rounds, and checks what the page would receive (every widget's state serialises, the
timeline's rows go out). Bounded: one pip call and one Python per set, each with a timeout.

"lowest" is pyproject's floor for anywidget and 8.1.8 for ipywidgets, one below the old floor
8.1.9 (which vscode-jupyter#17504 reports rendering nothing in VS Code, where 8.1.8 works);
"latest" is the newest release the package index offers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

VERSIONS = {
    "lowest": ("ipywidgets==8.1.8", "anywidget==0.9.13"),
    "latest": ("ipywidgets", "anywidget"),
}

PROBE = r"""
import json, sys
import anywidget, ipywidgets
from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.widgets import Dashboard, TimelineWidget, demo_task

clock = VirtualClock()
s = Scheduler(clock)
for t in (1.0, 2.0, 2.0, 3.5):
    s.schedule(demo_task, at=t, args=("x",), label=f"job {t}")
s.schedule(demo_task, at=0.5, period=1.5, label="heartbeat")
dash = Dashboard(s, autostart=False, on_page_close="ignore")
clock.advance(2.5)
dash.refresh()
sent = []
timeline = TimelineWidget(s)
timeline.send = lambda content, buffers=None: sent.append((content, buffers))
rows = timeline.push()
states = 0
for w in list(ipywidgets.Widget.widgets.values()):
    json.dumps(w.get_state(), default=lambda b: len(b))  # what the page would receive
    states += 1
marimo_view = None
try:
    import marimo  # noqa: F401
    dash.marimo()
    marimo_view = dash._live.view.state["seq"]
except ImportError:
    pass
print(json.dumps({
    "ipywidgets": ipywidgets.__version__,
    "anywidget": getattr(anywidget, "__version__", "?"),
    "queue_ok": "heartbeat" in dash.queue.table.value,
    "rows": rows, "messages": len(sent), "states": states, "seq": s.log.next_seq,
    "marimo_view_seq": marimo_view,
}))
dash.close()
"""


@pytest.mark.parametrize("which", sorted(VERSIONS))
def test_dashboard_at_versions(which, tmp_path):
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    done = subprocess.run(
        [*pip, *VERSIONS[which]], capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"pip could not install {VERSIONS[which]}: {done.stderr[-500:]}")
    env_path = f"{target}"
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr[-3000:]
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    print(which, got)
    if which == "lowest":
        assert got["ipywidgets"] == "8.1.8"
        assert got["anywidget"] in ("0.9.13", "?")
    assert got["queue_ok"] and got["states"] > 10
    assert got["rows"] == got["seq"] > 0 and got["messages"] >= 1
    if got["marimo_view_seq"] is not None:
        assert got["marimo_view_seq"] == got["seq"]
