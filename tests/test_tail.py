"""``tempsched-lab tail URL_OR_DIR``: one line per row (tail -f); quiet on a broken pipe."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.__main__ import main
from tempsched_lab.log.files import SegmentWriter
from tempsched_lab.reading.narration import Narrator

ROOT = Path(__file__).resolve().parents[1]


def _spill(directory: Path, cuts: list[int], *, n: int = 12) -> list[str]:
    """A closed spill of a small log; returns the lines a Narrator says for its rows."""
    s = Scheduler(VirtualClock())
    for i in range(n):
        s.schedule(lambda: None, at=1.0 + i, label=f"job{i}")
    s.clock.advance(3.5)
    frame = s.log.to_frame()
    lines: list[str] = []
    Narrator(s.log, lines.append, rate=1e12, burst=2**62).poll()
    s.shutdown()
    writer = SegmentWriter(directory, 0.0)
    for a, b in itertools.pairwise([0, *cuts, len(frame)]):
        writer.write(frame.iloc[a:b])
    writer.close(recorded=len(frame))
    return lines


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def test_tail_from_the_start_says_every_row_then_the_end(tmp_path: Path, capsys) -> None:
    lines = _spill(tmp_path / "spill", [5, 9])
    assert main(["tail", str(tmp_path / "spill"), "--from-start"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:-1] == lines  # the dashboard log panel's sentences, every row, in order
    assert out[-1].startswith("-- closed") and "the log was closed" in out[-1]


def test_tail_says_the_last_rows_and_names_a_gap(tmp_path: Path, capsys) -> None:
    lines = _spill(tmp_path / "spill", [5, 9])
    assert main(["tail", str(tmp_path / "spill")]) == 0
    assert capsys.readouterr().out.splitlines()[:-1] == lines[-10:]
    (tmp_path / "spill" / "segment-000002.parquet").unlink()
    assert main(["tail", str(tmp_path / "spill"), "--from-start"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == lines[:5]
    assert out[5] == (
        "-- rows 5..8 (4 rows) are missing: segment 2 (segment-000002.parquet) is missing"
    )
    assert out[6:-1] == lines[9:]


def test_tail_names_bad_sources_and_token_files(tmp_path: Path, capsys) -> None:
    assert main(["tail", str(tmp_path / "nowhere")]) == 1
    assert "no such directory" in capsys.readouterr().err
    token = tmp_path / "token"
    token.write_text("\n")
    assert main(["tail", "http://127.0.0.1:9/", "--token-file", str(token)]) == 2
    assert "is empty" in capsys.readouterr().err
    assert main(["tail", "http://127.0.0.1:9/"]) == 1
    assert "cannot connect" in capsys.readouterr().err


@pytest.mark.slow
def test_tail_is_quiet_on_a_closed_pipe(tmp_path: Path) -> None:
    _spill(tmp_path / "spill", [], n=3000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tempsched_lab", "tail", str(tmp_path / "spill"), "--from-start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes, like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(60) == 1
    assert b"task #0" in first and err == b""


@pytest.mark.slow
def test_tail_follows_a_served_scheduler_until_it_shuts_down(tmp_path: Path) -> None:
    from tempsched_lab.remote.process import ExampleService

    token = tmp_path / "token"
    token.write_text("a-read-token-of-some-length-0123\n")
    svc = ExampleService.start(
        spill=tmp_path / "runs", args=("--tick", "0.05", "--token-file", str(token))
    )
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tempsched_lab", "tail", svc.url, "--token-file", str(token)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            text=True,
        )
        assert proc.stdout is not None
        said = [proc.stdout.readline() for _ in range(5)]
        assert all("task #" in line or "woke" in line for line in said), said
        assert svc.stop() == 0
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and err == ""
        assert out.splitlines()[-1] == "-- closed since " + out.splitlines()[-1][16:]
        assert "the service shut down" in out.splitlines()[-1]
    finally:
        svc.kill()
