"""The README's service steps, then every block of docs/serving.md, pasted in order and run
(issue 42, item 4: "docs/serving.md pasted in order fails today").

A temporary directory plays the user's: ``.venv`` in it is this test's environment, the
README's steps run there first (its token in ``token.txt``, its example service started in the
background, ``tail`` followed until it printed a line), then the page's blocks in order:

* ``console`` blocks: each ``$ `` line is a command run by bash (the shell variables the page
  set before, like ``URL`` and ``AUTH``, set again first, as one terminal would hold them); it
  must exit 0, and the first output line the page shows must be found in what it printed (its
  words: the numbers, ids and times differ run to run);
* ``bash`` blocks: run whole, exit 0;
* ``python`` blocks: run in one Python session, in order (a later block uses what an earlier
  one defined, as in a REPL), without an exception;
* commands that never end by themselves (the example service, ``curl -N`` on the stream,
  ``tempsched-lab tail`` of a URL) are started in the background: a service until the end of
  the test, a follower until it printed the line the page shows (then Ctrl-C);
* a block after ``<!-- paste: skip: WHY -->`` is not run and must say why; one after
  ``<!-- paste: needs TOOL: WHY -->`` runs when ``TOOL`` is on PATH, else it is named as
  skipped in the test's output.

The page's port (8765) is replaced by a free port the OS gave, everywhere, and nothing else.
Every wait is bounded (count and time); every process started is ended.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PORT = "8765"
COMMAND_TIMEOUT_S = 90.0
FOLLOW_TIMEOUT_S = 60.0

_BLOCK = re.compile(
    r"(?:^<!-- paste: (skip|needs) ?([\w-]*): ([^\n]+?) -->\n)?^```(\w+)\n(.*?)^```", re.S | re.M
)


@dataclass
class Block:
    lang: str
    text: str
    mark: str | None  # None, "skip" or "needs"
    tool: str
    why: str
    line: int  # where the block starts in its page (for messages)


def blocks(page: str) -> list[Block]:
    """The fenced blocks of a Markdown page, each with the paste mark above it, if any."""
    return [
        Block(m[4], m[5], m[1], m[2], m[3] or "", page.count("\n", 0, m.start()) + 1)
        for m in _BLOCK.finditer(page)
    ]


def commands(block: Block) -> list[tuple[str, list[str]]]:
    """A console block's commands, each with the output lines the page shows after it."""
    out: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def words(line: str) -> list[str]:
    """The words of a shown output line that any run prints too (not numbers, ids, times)."""
    return re.findall(r"(?<![\w.])[A-Za-z_]{3,}(?![\w])", line)


def shown(expected: list[str]) -> list[str]:
    """The first output line the page shows (not an elision), as words; [] if none."""
    for line in expected:
        if line.strip() and line.strip() != "...":
            return words(line)
    return []


def is_follower(command: str) -> bool:
    """A command that runs until stopped: ``curl -sN``, or ``tail`` of a URL (``[NAME=]http``)."""
    follows_url = re.search(r"tempsched-lab tail (\S+ )*?(\w+=)?http", command) is not None
    return "curl -sN" in command or (follows_url and "|" not in command)


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


_SESSION = r"""
import contextlib, io, json, sys, traceback
ns = {"__name__": "__main__"}
for line in sys.stdin:
    block = json.loads(line)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block["code"], block["name"], "exec"), ns)
        answer = {"ok": True, "out": out.getvalue()}
    except BaseException:
        answer = {"ok": False, "out": out.getvalue(), "error": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


class Terminal:
    """The user's directory, shell variables, background processes and Python session."""

    def __init__(self, where: Path, port: str) -> None:
        self.where, self.port = where, port
        venv = Path(sys.executable).parent.parent
        if (venv / "pyvenv.cfg").exists():
            (where / ".venv").symlink_to(venv)
        else:  # no venv: a .venv/bin of links to this interpreter's scripts
            (where / ".venv" / "bin").mkdir(parents=True)
            for name in ("python", "pip", "tempsched-lab"):
                target = (
                    Path(sys.executable) if name == "python" else Path(sys.executable).parent / name
                )
                (where / ".venv" / "bin" / name).symlink_to(target)
        self.variables: list[str] = []
        self.background: list[subprocess.Popen[str]] = []
        self.session: subprocess.Popen[str] | None = None
        self.answers: queue.Queue[str] = queue.Queue()
        self.skipped: list[str] = []
        self.env = dict(os.environ, PYTHONUNBUFFERED="1")

    def text(self, text: str) -> str:
        return text.replace(PORT, self.port)

    def bash(self, command: str) -> list[str]:
        """bash running ``command`` after the shell variables the page set so far."""
        return ["bash", "-c", "\n".join([*self.variables, self.text(command)])]

    def start(self, command: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
        """``command`` in the background (its own process group); its lines on a queue."""
        process = subprocess.Popen(
            self.bash(command),
            cwd=self.where,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.background.append(process)
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line.rstrip("\n"))

        threading.Thread(target=pump, daemon=True).start()
        return process, lines

    @staticmethod
    def wait_line(lines: queue.Queue[str], wanted: list[str], what: str) -> str:
        """The first line holding every word of ``wanted`` (any line if none), bounded."""
        deadline, seen = time.monotonic() + FOLLOW_TIMEOUT_S, []
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            seen.append(line)
            if all(w in line for w in wanted):
                return line
        raise AssertionError(f"{what}: no line with {wanted} in {FOLLOW_TIMEOUT_S} s: {seen[-20:]}")

    def follow(self, command: str, expected: list[str]) -> str:
        process, lines = self.start(command)
        line = self.wait_line(lines, shown(expected), command)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
        process.wait(30)
        return line

    def run(self, command: str, expected: list[str], where: str) -> str:
        done = subprocess.run(
            self.bash(command),
            cwd=self.where,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}: {done}"
        wanted = shown(expected)
        assert any(all(w in line for w in wanted) for line in done.stdout.splitlines() or [""]), (
            f"{where}: `{command}` printed {done.stdout[-2000:]!r}, the page shows {expected[:3]}"
        )
        if re.match(r"^[A-Z_]+=", command):
            self.variables.append(self.text(command))
        return done.stdout

    def python(self, code: str, where: str) -> str:
        if self.session is None:
            self.session = subprocess.Popen(
                [str(self.where / ".venv" / "bin" / "python"), "-c", _SESSION],
                cwd=self.where,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            self.background.append(self.session)
            answers = self.answers

            def pump(out: object) -> None:
                for line in out:  # type: ignore[attr-defined]
                    answers.put(line)

            threading.Thread(target=pump, args=(self.session.stdout,), daemon=True).start()
        assert self.session.stdin is not None
        self.session.stdin.write(json.dumps({"code": self.text(code), "name": where}) + "\n")
        self.session.stdin.flush()
        answer = json.loads(self.answers.get(timeout=COMMAND_TIMEOUT_S))
        assert answer["ok"], f"{where}: the Python block raised:\n{answer['error']}"
        return str(answer["out"])

    def close(self) -> None:
        for process in reversed(self.background):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.background:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    t = Terminal(tmp_path, free_port())
    try:
        yield t
    finally:
        t.close()


def readme_steps(t: Terminal) -> list[str]:
    """Runs the README's service steps; the lines the service printed first."""
    page = (ROOT / "README.md").read_text()
    (block,) = [b for b in blocks(page) if "tempsched_lab.serve.example" in b.text]
    service: list[str] = []
    for command in block.text.strip().splitlines():
        if command.startswith(".venv/bin/pip install"):
            # this test's environment is that install: what the extra brings imports
            import sse_starlette  # noqa: F401
            import uvicorn  # noqa: F401
        elif "serve.example" in command:  # runs in its own terminal until Ctrl-C
            _, lines = t.start(command)
            service = [t.wait_line(lines, ["http"], command), t.wait_line(lines, [], command)]
        elif is_follower(command):
            t.follow(command, [])
        else:
            t.run(command, [], "README")
    return service


def wait_rows(t: Terminal, n: int) -> None:
    """Until the service has recorded ``n`` rows (a block reads a range that long)."""
    token = (t.where / "token.txt").read_text().strip()
    url = f"http://127.0.0.1:{t.port}/scheduler/v1/moment"
    for _ in range(300):  # ~30 s at most
        moment = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10.0)
        if moment.json()["seq"] >= n:
            return
        threading.Event().wait(0.1)
    raise AssertionError(f"the service recorded fewer than {n} rows in 30 s")


def test_the_readme_then_serving_md_pasted_in_order_run(terminal: Terminal) -> None:
    t = terminal
    service = readme_steps(t)
    assert service == [f"http://127.0.0.1:{t.port}/scheduler", "spill runs/run-001"], service
    page = (ROOT / "docs" / "serving.md").read_text()
    found = blocks(page)
    assert len(found) == page.count("\n```") // 2 >= 19
    ran = 0
    for block in found:
        where = f"docs/serving.md:{block.line}"
        if block.mark == "skip":
            assert len(block.why) > 20, f"{where}: a skipped block says why"
            if "serve.example" in block.text:  # the README's service: its output is the page's
                ((command, expected),) = commands(block)
                assert [t.text(line) for line in expected] == service, where
            continue
        if block.mark == "needs" and shutil.which(block.tool) is None:
            t.skipped.append(f"{where} ({block.tool} not on PATH): {block.why}")
            continue
        if block.lang == "python":
            t.python(block.text, where)
        elif block.lang == "console":
            for command, expected in commands(block):
                if "stop=100" in command:
                    wait_rows(t, 100)
                if is_follower(command):
                    t.follow(command, expected)
                else:
                    t.run(command, expected, where)
        elif block.lang == "bash":
            t.run(block.text, [], where)
        else:
            raise AssertionError(f"{where}: a ```{block.lang} block: how is it pasted?")
        ran += 1
    # what the blocks left behind is what the page says they make
    assert (t.where / "rows.arrows").stat().st_size > 0
    config = yaml.safe_load((t.where / "prometheus.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["authorization"]["credentials_file"] == "token.txt"
    assert job["static_configs"][0]["targets"] == [f"127.0.0.1:{t.port}"]
    assert ran + len(t.skipped) + sum(b.mark == "skip" for b in found) == len(found)
    assert ran >= 13
    for line in t.skipped:
        print("skipped:", line)
