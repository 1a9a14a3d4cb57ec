"""JupyterLab 4 (and Notebook 7) for the browser tests: a real server on 127.0.0.1, port 0.

``LabServer(tmp_path, theme="JupyterLab Dark")`` copies ``notebooks/`` into ``tmp_path``, writes
the theme into a user settings directory of its own (``--LabApp.user_settings_dir``, no news
toast, no notebook windowing: every cell painted), keeps its workspace in ``tmp_path`` (no tab
left open by an earlier run comes back) and starts ``jupyter lab --no-browser --allow-root
--ServerApp.token=`` on port 0; the URL is read from the server's log. ``app="notebook"`` starts
Notebook 7 the same way. The server is stopped (SIGTERM, then SIGKILL) on ``close()``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"(http://127\.0\.0\.1:\d+)/(?:lab|tree)")


class LabServer:
    def __init__(self, tmp: Path, *, theme: str = "JupyterLab Light", app: str = "lab") -> None:
        self.dir = tmp / "notebooks"
        shutil.copytree(ROOT / "notebooks", self.dir)
        settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "themes.jupyterlab-settings").write_text(json.dumps({"theme": theme}))
        # no news toast over the page, no question asked
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        # every cell rendered: JupyterLab 4's notebook windowing leaves cells out of view
        # unpainted (content-visibility), and an unpainted output has no innerText, so the
        # tests' look at every output and every text would depend on the scroll position
        tracker = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True)
        (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        self.log = tmp / f"jupyter-{app}.log"
        jupyter = str(Path(sys.executable).with_name("jupyter"))
        self.proc = subprocess.Popen(
            [
                jupyter,
                app,
                "--no-browser",
                "--allow-root",
                "--ServerApp.token=",
                "--ServerApp.password=",
                "--ServerApp.ip=127.0.0.1",
                "--ServerApp.port=0",
                f"--ServerApp.root_dir={self.dir}",
                f"--LabApp.user_settings_dir={tmp / 'settings'}",
                "--LabServerApp.user_settings_dir=" + str(tmp / "settings"),
                # a workspace of its own: tabs a previous run left open (~/.jupyter/lab/
                # workspaces) would open again here, kernels and all
                "--LabServerApp.workspaces_dir=" + str(tmp / "workspaces"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
            env={k: v for k, v in os.environ.items() if k != "TEMPSCHED_HEADLESS"},
            start_new_session=True,
        )
        self.url = self._wait_url(60.0)

    def _wait_url(self, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = URL.search(self.log.read_text())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"jupyter did not start: {self.log.read_text()[-2000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
