"""The ``tempsched-lab demo`` command: outputs, exit codes, error messages."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tempsched_lab import read_log
from tempsched_lab.__main__ import main


def test_virtual_demo_writes_every_output(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--virtual", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "joins time point" in printed and "audit of" in printed and "OK" in printed
    assert "100.0%" in printed  # the progress bar finished
    names = ("event-log.csv", "event-log.parquet", "summary.png", "timeline.png", "dashboard.html")
    for name in names:
        assert (out / name).stat().st_size > 0, name
    frame = read_log(out / "event-log.csv")
    assert set(frame["case"].dropna().astype(int)) == set(range(1, 9))
    assert {"error", "event_set", "cancel", "shutdown"} <= set(frame["kind"].astype(str))
    assert (out / "summary.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "dashboard.html").read_text()
    assert "application/vnd.jupyter.widget-state+json" in html and "heartbeat" in html


@pytest.mark.slow
def test_real_clock_demo_runs_as_a_console_script(tmp_path):
    out = tmp_path / "real"
    proc = subprocess.run(
        [sys.executable, "-m", "tempsched_lab", "demo", "--seconds", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "real clock" in proc.stdout
    assert (out / "event-log.csv").exists()


@pytest.mark.parametrize(
    "argv", [["demo", "--seconds", "-1"], ["demo", "--seconds", "x"], ["nope"], []]
)
def test_bad_arguments_exit_with_2_and_usage(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: tempsched-lab" in capsys.readouterr().err


def test_unwritable_output_folder_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["demo", "--virtual", "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert "cannot write to --out" in err and str(blocker) in err
