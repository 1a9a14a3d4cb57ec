"""The ``tempsched-lab`` command: outputs, exit codes, error messages, what it prints and when."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tempsched_lab import __version__, read_log
from tempsched_lab.__main__ import main, progress_bar
from tempsched_lab.demo import OUTPUTS


def test_virtual_demo_writes_every_output(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--virtual", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "joins time point" in printed and "audit of" in printed and "OK" in printed
    assert "progress 100%" in printed  # not a terminal: plain lines, no bar
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
        assert f"wrote {out / name}: {OUTPUTS[name]}" in printed
    frame = read_log(out / "event-log.csv")
    assert set(frame["case"].dropna().astype(int)) == set(range(1, 9))
    assert {"error", "event_set", "cancel", "shutdown"} <= set(frame["kind"].astype(str))
    assert (out / "summary.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "dashboard.html").read_text()
    assert "application/vnd.jupyter.widget-state+json" in html and "heartbeat" in html


@pytest.mark.slow
def test_real_clock_demo_prints_as_it_goes(tmp_path):
    """Lines arrive while the run is still going, a few progress lines, then each file."""
    out = tmp_path / "real"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tempsched_lab", "demo", "--seconds", "1.5", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    first = proc.stdout.readline()
    still_running = proc.poll() is None  # the first line came before the 1.5 s run ended
    rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert still_running and "on the real clock" in first
    lines = rest.splitlines()
    progress = [line for line in lines if line.startswith("progress")]
    assert progress[0] == "progress   0%" and progress[-1] == "progress 100%"
    assert len(progress) <= 5  # not one line per redraw
    wrote = [i for i, line in enumerate(lines) if line.startswith("  wrote")]
    assert lines.index(f"writing into {out}/ ...") < wrote[0] and len(wrote) >= 4
    assert (out / "event-log.csv").exists()


def test_progress_bar_redraws_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    show = progress_bar(term)
    for i in range(11):
        show(i / 10)
    text = term.getvalue()
    assert text.count("\r[") == 11 and text.endswith("100.0%\n") and text.count("\n") == 1


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tempsched-lab {__version__}"


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["demo", "--seconds", "-1"], "usage: tempsched-lab demo"),
        (["demo", "--seconds", "x"], "usage: tempsched-lab demo"),
        (["demo", "--bogus"], "usage: tempsched-lab demo"),
        (["nope"], "usage: tempsched-lab [-h]"),
        ([], "usage: tempsched-lab [-h]"),
    ],
)
def test_bad_arguments_exit_with_2_and_the_right_usage(argv, usage, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert usage in err
    if "--bogus" in argv:
        assert "unrecognized arguments: --bogus" in err and "--virtual" in err


def test_unwritable_output_folder_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["demo", "--virtual", "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert "cannot write to --out" in err and str(blocker) in err
