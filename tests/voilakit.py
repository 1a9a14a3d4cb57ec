"""What the browser tests share: Voila servers, Debian's Chromium through Playwright, page checks.

* :class:`VoilaServer` runs ``python -m voila <target>`` from the repository root, exactly as
  the README's command does, on 127.0.0.1 and a free port, in its own process group (Voila and
  its kernels), killed at teardown.
* Voila renders with the project's ``tempsched`` template (Voila's "lab" template without its
  two Font Awesome stylesheets from a CDN: ``tempsched_lab/widgets/voila_template``), so a
  page makes no request beyond the server: :func:`check_clean` asserts that none was blocked.
* Chromium is ``/usr/bin/chromium`` (never a downloaded browser) with every non-loopback
  request aborted (no CDN, no telemetry). The session prints the browser it uses (path and
  version): :func:`browser_banner`.
* The kernel behind a page is found through the page's ``kernelId`` and ``/proc``, so a test can
  watch its CPU time and threads: that is how "closing the page stops the scheduler" is checked
  from outside, with no hook in the notebook.

Without Chromium, Playwright or Voila the tests are skipped, unless ``REQUIRE_E2E=1`` (set by
``.ci/run``): then they fail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
REQUIRE = os.environ.get("REQUIRE_E2E") == "1"
CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
NOT_LOOPBACK = re.compile(r"^(https?|wss?)://(?!127\.0\.0\.1[:/])")
#: The data folder holding the ``tempsched`` Voila template (``voila/templates/tempsched``).
#: Clock values users must never see: epoch seconds (``1796075052.89``) or ``1.796e+09``.
EPOCH_LIKE = re.compile(r"(?<![\d.:])\d{9,}(?:\.\d+)?|\d\.\d+e\+0\d")


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return (
            "Python playwright is not installed (pip install playwright; no `playwright install`)"
        )
    if importlib.util.find_spec("voila") is None:
        return "voila is not installed (pip install 'voila>=0.5,<0.6')"
    if not (shutil.which(CHROMIUM) or os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def unavailable(reason: str) -> None:
    """Fail under REQUIRE_E2E=1 (CI), skip otherwise."""
    if REQUIRE:
        pytest.fail(f"REQUIRE_E2E=1 but the browser e2e cannot run: {reason}")
    pytest.skip(f"browser e2e skipped: {reason}")


def skip_module_if_missing() -> None:
    """At import: skip the whole module without a browser, unless REQUIRE_E2E=1."""
    reason = missing()
    if reason and not REQUIRE:
        pytest.skip(f"browser e2e skipped: {reason}", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class VoilaServer:
    """``tempsched-lab serve <target> --no-browser`` from the repository root, as the README says.

    ``target`` is a notebook (``notebooks/05_live_dashboard.ipynb``: the page is at ``/``) or a
    folder (pages at ``/voila/render/<name>``); ``options`` go to Voila after the README's
    (``--VoilaConfiguration.progressive_rendering=False``). The server's output goes to
    ``artifacts/<log>``.
    """

    def __init__(self, target: str, log_name: str, options: tuple[str, ...] = ()) -> None:
        reason = missing()
        if reason:
            unavailable(reason)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.target = target
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = ARTIFACTS / log_name
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "tempsched_lab", "serve", target, "--no-browser",
                f"--port={self.port}", "--VoilaConfiguration.show_tracebacks=True", *options,
            ],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: voila and its kernels
        )  # fmt: skip
        try:
            self._wait_until_serving()
        except BaseException:
            self.stop()
            raise

    def _wait_until_serving(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                unavailable(f"voila exited with rc={self.proc.returncode}; see {self.log_path}")
            try:  # any answer will do; "/" would start a kernel for nothing
                urllib.request.urlopen(self.url + "/favicon.ico", timeout=2).read()
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    unavailable(f"voila did not answer within {timeout:g} s")
                time.sleep(0.2)

    def page_url(self, name: str | None = None) -> str:
        """The page of notebook ``name`` (a folder server), or the one notebook served."""
        return f"{self.url}/voila/render/{name}" if name else f"{self.url}/"

    def kernels(self) -> dict[int, str]:
        """The kernels this server started and that still run: ``{pid: command line}``."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == self.proc.pid:
                    found[int(entry.name)] = (
                        (entry / "cmdline").read_bytes().decode(errors="replace")
                    )
            except (OSError, ValueError, IndexError):
                continue
        return found

    def kernel_pid(self, kernel_id: str) -> int | None:
        """The process id of the kernel ``kernel_id`` started by this server, if it runs."""
        for pid, cmdline in self.kernels().items():
            if f"kernel-{kernel_id}.json" in cmdline:
                return pid
        return None

    def stop(self) -> None:
        """Kill Voila's process group, then any kernel of it that outlived it (own sessions)."""
        kernels = list(self.kernels())
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in kernels:  # jupyter_client starts kernels in sessions of their own
            try:
                if "ipykernel" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    os.kill(pid, signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass
        self._log.close()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process used so far, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks / os.sysconf("SC_CLK_TCK")


def thread_count(pid: int) -> int:
    """How many threads a process has now."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise RuntimeError(f"no thread count for process {pid}")


def cpu_share(pid: int, seconds: float = 2.0) -> float:
    """The share of one core a process used over the next ``seconds``."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds


def launch_chromium(playwright: Any) -> Any:
    from playwright.sync_api import Error

    try:
        return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
    except Error as exc:
        unavailable(f"Chromium did not start: {exc}")


def browser_banner(browser: Any) -> str:
    """The browser the tests drive: its real path and version (not Playwright's default path).

    >>> browser_banner(type("B", (), {"version": "156.0"})())  # doctest: +ELLIPSIS
    'browser tests use ... (Chromium 156.0), driven by Playwright ...'
    """
    import importlib.metadata

    path = os.path.realpath(shutil.which(CHROMIUM) or CHROMIUM)
    try:
        playwright = importlib.metadata.version("playwright")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - checked by missing()
        playwright = "?"
    return (
        f"browser tests use {path} (Chromium {browser.version}), driven by Playwright {playwright}"
    )


def new_page(browser: Any, width: int = 1280, height: int = 2400) -> Any:
    """A page in a fresh context, offline but for 127.0.0.1, recording errors and blocked URLs."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    blocked: list[str] = []

    def abort(route: Any) -> None:
        blocked.append(route.request.url)
        route.abort()

    ctx.route(NOT_LOOPBACK, abort)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.errors = errors
    page.blocked = blocked
    return page


def check_clean(page: Any) -> None:
    """No page errors, no request beyond the Voila server (none blocked), no broken widget."""
    assert not page.errors, page.errors
    assert page.blocked == [], page.blocked
    assert page.get_by_text("Error displaying widget").count() == 0


def kernel_id(page: Any) -> str:
    """The id of the kernel Voila started for ``page``."""
    return str(
        page.evaluate(
            "JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId"
        )
    )


def wait_voila_page(page: Any, url: str, ready: str, timeout_ms: int = 120_000) -> float:
    """Open ``url`` and wait until ``ready`` (a CSS selector) is visible; returns the seconds."""
    from playwright.sync_api import expect

    sent = record_cell_outputs(page)
    started = time.monotonic()
    page.goto(url, wait_until="commit", timeout=timeout_ms)
    page.locator(ready).first.wait_for(state="visible", timeout=timeout_ms)
    # With progressive rendering (``tempsched-lab serve``'s default) the first output shows
    # while later cells still run: wait until every cell has been run and shown
    page.wait_for_function(ALL_CELLS_SHOWN_JS, timeout=timeout_ms)
    expect(page.get_by_text("Loading widget")).to_have_count(0, timeout=30_000)
    seconds = time.monotonic() - started
    check_every_output_shown(page, sent)
    return seconds


def record_cell_outputs(page: Any) -> dict[int, int]:
    """From now on, how many outputs the server sends ``page`` for each cell (progressive pages).

    Voila's progressive rendering sends each cell's outputs on the ``/voila/execution/`` socket
    (``execution_result``); the returned dict fills in as they come: ``{cell-index: outputs}``,
    counted as an output area shows them (consecutive stream outputs of one name are one).
    """
    sent: dict[int, int] = {}

    def on_frame(payload: str | bytes) -> None:
        if isinstance(payload, bytes) or '"execution_result"' not in payload:
            return
        message = json.loads(payload)["payload"]
        shown, last_stream = 0, None
        for output in message["output_cell"].get("outputs", []):
            stream = output.get("name") if output.get("output_type") == "stream" else None
            shown += stream is None or stream != last_stream
            last_stream = stream
        sent[int(message["cell_index"]) + 1] = shown  # the page's cell-index counts from 1

    def on_socket(socket: Any) -> None:
        if "/voila/execution/" in socket.url:
            socket.on("framereceived", on_frame)

    page.on("websocket", on_socket)
    return sent


#: JavaScript: ``{cell-index: outputs shown}`` for the cells of a progressively rendered page
#: (an output area's own children, not those of an ``Output`` widget inside it).
SHOWN_OUTPUTS_JS = """() => Object.fromEntries([...document.querySelectorAll('[cell-index]')].map(
    c => [c.getAttribute('cell-index'), c.querySelectorAll(
        ':scope .jp-Cell-outputWrapper > .jp-Cell-outputArea > .jp-OutputArea-child').length]))"""


def check_every_output_shown(page: Any, sent: dict[int, int], timeout_ms: int = 30_000) -> None:
    """Every output the server sent for each cell is in the page (a progressive page).

    A widget whose model the page has not met yet is added when it arrives: wait for that,
    bounded, then name the cells that show fewer outputs than they were sent.
    """
    from playwright.sync_api import Error

    if not sent:
        return  # rendered whole by the server: the HTML carried the outputs
    expected = {str(cell): count for cell, count in sent.items()}
    with contextlib.suppress(Error):  # the assertion below says which cells
        page.wait_for_function(
            f"""() => {{ const shown = ({SHOWN_OUTPUTS_JS})(), sent = {json.dumps(expected)};
                return Object.entries(sent).every(([c, n]) => (shown[c] || 0) >= n); }}""",
            timeout=timeout_ms,
        )
    shown = page.evaluate(SHOWN_OUTPUTS_JS)
    lost = {c: (shown.get(c, 0), n) for c, n in expected.items() if shown.get(c, 0) < n}
    assert not lost, f"cells showing fewer outputs than the server sent (shown, sent): {lost}"


#: JavaScript: true once the page shows every cell. A progressively rendered page (Voila 0.5
#: ``progressive_rendering``) gives each cell a skeleton, then replaces it with an output
#: wrapper when the cell's result arrives, markdown cells included (seen: 30 of 30 cells of
#: notebook 02); a page rendered whole by the server is complete when it has loaded.
ALL_CELLS_SHOWN_JS = """() => {
    const config = document.getElementById('jupyter-config-data');
    if (!config) return false;
    if (!JSON.parse(config.textContent).progressiveRendering) return true;
    const cells = [...document.querySelectorAll('[cell-index]')];
    return cells.length > 0 && !document.querySelector('.voila-skeleton-container')
        && cells.every(c => c.querySelector('.jp-Cell-outputWrapper'));
}"""


#: JavaScript: every ``tsl-stamp`` in the page as ``{panel: seq}``.
STAMPS_JS = """() => Object.fromEntries(
    [...document.querySelectorAll('.tsl-dashboard .tsl-stamp')]
        .map(e => [e.dataset.panel, +e.dataset.seq]))"""

#: JavaScript: elements with their own text smaller than ``min`` px, inside ``root``.
SMALL_TEXT_JS = """([root, min]) => {
    const out = [];
    for (const el of document.querySelectorAll(root + ' *')) {
        const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own || !el.getClientRects().length) continue;
        const size = parseFloat(getComputedStyle(el).fontSize);
        if (size < min) out.push(el.tagName + '.' + el.className + ': ' + size + 'px "'
                                 + el.textContent.trim().slice(0, 30) + '"');
    }
    return out;
}"""

#: JavaScript: pictures inside ``root`` shown at another size than their pixels.
SCALED_IMAGES_JS = """(root) => [...document.querySelectorAll(root + ' img')]
    .filter(i => i.naturalWidth && (Math.abs(i.clientWidth - i.naturalWidth) > 1
                                    || Math.abs(i.clientHeight - i.naturalHeight) > 1))
    .map(i => i.className + ': ' + i.naturalWidth + 'x' + i.naturalHeight + ' shown '
              + i.clientWidth + 'x' + i.clientHeight)"""


def stamps(page: Any) -> dict[str, int]:
    """The moment (``seq``) each dashboard panel in the page says it shows."""
    return dict(page.evaluate(STAMPS_JS))


#: JavaScript: click ``selector``, then wait until the action's rows reach every panel.
CLICK_JS = """async ([selector, timeoutMs]) => {
    const q = s => document.querySelector(s);
    const after = () => {
        const e = q('.tsl-decision .tsl-after');
        return e ? +e.dataset.seq : -1;
    };
    const stamps = () => Object.fromEntries(
        [...document.querySelectorAll('.tsl-dashboard .tsl-stamp')]
            .map(e => [e.dataset.panel, +e.dataset.seq]));
    const before = after();
    const t0 = performance.now();
    q(selector).click();
    return await new Promise((resolve, reject) => {
        let answered = null;
        const check = () => {
            const a = after();
            if (a <= before) return;
            if (answered === null) answered = performance.now() - t0;
            const s = stamps();
            if (Object.values(s).every(v => v >= a)) {
                obs.disconnect(); clearTimeout(timer);
                resolve({after: a, answered, all: performance.now() - t0, stamps: s,
                         queue: q('.tsl-queue-table').innerText, log: q('.tsl-log-table').innerText,
                         result: q('.tsl-decision').innerText});
            }
        };
        const obs = new MutationObserver(check);
        obs.observe(document.body, {subtree: true, childList: true, characterData: true});
        const timer = setTimeout(() => { obs.disconnect();
            reject(new Error('timeout ' + JSON.stringify(stamps()) + ' after ' + after())); },
            timeoutMs);
    });
}"""


def click_and_wait(page: Any, selector: str) -> dict[str, Any]:
    """Click, and return when every panel shows a moment that includes the click's rows."""
    return page.evaluate(CLICK_JS, [selector, 20_000])
