"""The ``tempsched-lab`` command: outputs, exit codes, error messages, what it prints and when.

The subprocess tests run the real console script (``tempsched-lab`` next to the
interpreter) with ``PYTHONPATH`` pointing at this checkout, through real pipes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tempsched_lab import read_log
from tempsched_lab.__main__ import main
from tempsched_lab._version import __version__
from tempsched_lab.demo import OUTPUTS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = shutil.which("tempsched-lab", path=str(Path(sys.executable).parent))


def script_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}


def run_script(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    assert SCRIPT, "the tempsched-lab console script is not installed next to the interpreter"
    return subprocess.run(
        [SCRIPT, *args], capture_output=True, text=True, env=script_env(), timeout=300, **kwargs
    )


def check_outputs(out: Path) -> None:
    """Every file of the demo, whole: the logs read back, the pictures are PNGs."""
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    frame = read_log(out / "event-log.csv")
    assert set(frame["case"].dropna().astype(int)) == set(range(1, 9))
    assert {"error", "event_set", "cancel", "shutdown"} <= set(frame["kind"].astype(str))
    plain = pd.read_csv(out / "event-log.csv")  # any tool reads it: no header or footer lines
    assert list(plain.columns) == list(frame.columns) and len(plain) == len(frame)
    assert plain["t"].between(0, 3600).all()  # seconds since the start, not epoch floats
    for name in ("summary.png", "timeline.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "dashboard.html").read_text()
    # a plain page: nothing fetched, nothing run (before: the widget manager from a CDN)
    assert "heartbeat" in html and "<script" not in html.lower()
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", html)


def test_virtual_demo_prints_each_step_and_writes_every_output(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--virtual", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[1].split() == ["time", "task", "what", "happened"]
    steps = lines[2 : lines.index("case  decision              count")]
    # the log's own sentences, one per row, in order, with their times
    assert steps[0] == (
        "   0.000 s  report          case 2 (nothing scheduled): task #0 queued, due t = 1.000 s"
    )
    assert "   0.000 s  email           case 5 (duplicate of head): duplicate of task #1, " in (
        "\n".join(steps)
    )
    assert any("failing task    task #8 raised RuntimeError" in line for line in steps)
    assert steps[-1].endswith("shutdown: stopped (dropped 1 task(s))")
    assert len(steps) == len(read_log(out / "event-log.csv"))  # every row: no burst to throttle
    assert "audit of" in printed and "OK" in printed
    for name in OUTPUTS:
        assert f"wrote {out / name}: {OUTPUTS[name]}" in printed
    check_outputs(out)


@pytest.mark.slow
def test_a_skipped_parquet_file_is_said(tmp_path):
    """Without pyarrow (blocked before anything imports it, pandas included)."""
    out = tmp_path / "demo"
    code = (
        "import sys; sys.modules['pyarrow'] = None; from tempsched_lab.__main__ import main; "
        f"sys.exit(main(['demo', '--virtual', '--out', {str(out)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=script_env(), timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"skipped {out / 'event-log.parquet'}: pyarrow is not installed "
        "(pip install 'tempsched-lab[parquet]')"
    ) in done.stdout
    assert not (out / "event-log.parquet").exists()
    assert all((out / name).exists() for name in OUTPUTS if name != "event-log.parquet")


@pytest.mark.slow
def test_real_clock_demo_prints_each_step_while_it_runs(tmp_path):
    """Steps are printed during the run: a 600 s run says its heartbeats long before it ends.

    Ctrl-C then stops it quietly (status 130, one line on stderr, no traceback).
    """
    assert SCRIPT
    out = tmp_path / "real"
    proc = subprocess.Popen(
        [SCRIPT, "demo", "--seconds", "600", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=script_env(),
        # a runner started in the background may ignore SIGINT: the script must not inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        assert "on the real clock" in proc.stdout.readline()
        seen = []
        for line in proc.stdout:  # waits for each line as it comes
            seen.append(line)
            if "heartbeat" in line and "re-armed" in line:
                break
        assert proc.poll() is None  # still running: the 600 s run is far from its end
        assert any("case 8 (joins time point)" in line for line in seen)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err == "tempsched-lab: interrupted\n"
    assert "writing into" not in rest


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly_and_every_file_is_written(tmp_path):
    """``tempsched-lab demo | head -2`` through a real pipe: no traceback, all files.

    600 s of virtual time print about half a megabyte, far more than a pipe holds,
    so the script must meet the closed pipe whatever the timing.
    """
    assert SCRIPT
    out = tmp_path / "piped"
    status = tmp_path / "status"
    command = (
        f"'{SCRIPT}' demo --virtual --seconds 600 --out '{out}' | head -2; "
        f"echo ${{PIPESTATUS[0]}} > '{status}'"
    )
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=script_env(), timeout=300
    )
    assert done.returncode == 0
    assert done.stderr == ""  # no BrokenPipeError traceback, nothing at exit either
    assert done.stdout.splitlines()[0].startswith("running the demo scenario for 600 s")
    assert len(done.stdout.splitlines()) == 2
    assert status.read_text().strip() == "1"  # as the Python docs recommend for EPIPE
    check_outputs(out)


def test_no_arguments_prints_the_help(capsys):
    assert main([]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("usage: tempsched-lab [-h] [--version] command ...")
    assert "demo" in printed and "what each command writes:" in printed


def test_help_lists_what_each_command_writes_and_prints(capsys):
    for argv in (["--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
        printed = " ".join(capsys.readouterr().out.split())
        for name, what in OUTPUTS.items():
            assert f"{name} {' '.join(what.split())}" in printed, (argv, name)
    assert "prints each step of the event log as it happens" in printed


@pytest.mark.slow
def test_the_console_script_as_a_unix_tool(tmp_path):
    bare = run_script()
    assert bare.returncode == 0 and bare.stdout.startswith("usage: tempsched-lab")
    assert bare.stderr == ""
    bogus = run_script("--bogus")
    assert bogus.returncode == 2 and "unrecognized arguments: --bogus" in bogus.stderr
    assert run_script("--version").stdout == f"tempsched-lab {__version__}\n"
    helped = subprocess.run(
        ["bash", "-c", f"'{SCRIPT}' --help | head -1"],
        capture_output=True, text=True, env=script_env(), timeout=120,
    )  # fmt: skip
    assert helped.stdout.startswith("usage:") and helped.stderr == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tempsched-lab {__version__}"


@pytest.mark.parametrize(
    ("argv", "usage", "named"),
    [
        (["demo", "--seconds", "-1"], "usage: tempsched-lab demo", "--seconds -1"),
        (["demo", "--seconds", "x"], "usage: tempsched-lab demo", "'x'"),
        (["demo", "--bogus"], "usage: tempsched-lab demo", "unrecognized arguments: --bogus"),
        (["--bogus"], "usage: tempsched-lab [-h]", "unrecognized arguments: --bogus"),
        (["--bogus", "demo"], "usage: tempsched-lab demo", "unrecognized arguments: --bogus"),
        (["nope"], "usage: tempsched-lab [-h]", "invalid choice: 'nope'"),
    ],
)
def test_bad_arguments_exit_with_2_naming_the_argument(argv, usage, named, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert usage in err and named in err
    if argv == ["demo", "--bogus"]:
        assert "--virtual" in err  # the demo's own usage


def test_unwritable_output_folder_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["demo", "--virtual", "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert "cannot write to --out" in err and str(blocker) in err


def test_serve_names_a_missing_notebook(capsys):
    assert main(["serve", "no/such/notebook.ipynb"]) == 2
    assert "no notebook at 'no/such/notebook.ipynb'" in capsys.readouterr().err


def test_serve_without_a_notebook_says_what_is_required_and_what_is_optional(capsys):
    # before: "the following arguments are required: notebook, voila_options"
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "usage: tempsched-lab serve [-h] NOTEBOOK [VOILA_OPTION ...]" in err
    assert "NOTEBOOK is required" in err and "Voila options after it are optional" in err
    assert "voila_options" not in err


def test_serve_runs_voila_with_the_project_template_on_localhost():
    from tempsched_lab.__main__ import voila_command

    command, env = voila_command(Path("notebooks/05_live_dashboard.ipynb"), ["--no-browser"])
    assert command[1:3] == ["-m", "voila"] and "--template=tempsched" in command
    assert "--Voila.ip=127.0.0.1" in command and command[-1] == "--no-browser"
    # each cell's output as soon as it has run (the template keeps every output: see
    # tests/test_progressive_browser.py), unless the user says otherwise
    assert "--VoilaConfiguration.progressive_rendering=True" in command
    off = ["--VoilaConfiguration.progressive_rendering=False"]
    assert [p for p in voila_command(Path("x.ipynb"), off)[0] if "progressive" in p] == off
    template = Path(env["JUPYTER_PATH"].split(os.pathsep)[0]) / "voila/templates/tempsched"
    assert (template / "index.html.j2").is_file() and (template / "conf.json").is_file()
    # a user's own address wins over the default
    assert "--Voila.ip=127.0.0.1" not in voila_command(Path("x.ipynb"), ["--Voila.ip=0.0.0.0"])[0]
