"""``tempsched-lab tail A B ...``: every service's lines prefixed with its name (fast: spills)."""

from __future__ import annotations

from pathlib import Path

from test_tail import _spill

from tempsched_lab.__main__ import main


def test_several_sources_say_every_line_prefixed_with_its_name(tmp_path: Path, capsys) -> None:
    api = _spill(tmp_path / "api", [5])
    batch = _spill(tmp_path / "runs" / "b", [3], n=6)
    sources = [str(tmp_path / "api"), f"batch={tmp_path / 'runs' / 'b'}"]
    assert main(["tail", *sources, "--from-start"]) == 0
    out = capsys.readouterr().out.splitlines()
    mine = {
        name: [line for line in out if line.startswith(f"{name}: ")] for name in ("api", "batch")
    }
    assert len(mine["api"]) + len(mine["batch"]) == len(out)  # every line names its service
    for name, lines in (("api", api), ("batch", batch)):
        said = [line.removeprefix(f"{name}: ") for line in mine[name]]
        assert said[:-1] == lines  # each service's rows, all of them, in its own order
        assert said[-1].startswith("-- closed")


def test_names_and_token_files_are_checked(tmp_path: Path, capsys) -> None:
    _spill(tmp_path / "a", [])
    _spill(tmp_path / "x" / "a", [])
    # two sources would both be called "a"
    assert main(["tail", str(tmp_path / "a"), str(tmp_path / "x" / "a")]) == 2
    assert "the name 'a' is taken (give NAME=SOURCE)" in capsys.readouterr().err
    token = tmp_path / "token"
    token.write_text("a-token-of-some-length-0123456\n")
    two = ["tail", "http://127.0.0.1:9/", f"b={tmp_path / 'a'}"]
    assert main([*two, "--token-file", str(token)]) == 2
    assert "with several sources, give NAME=" in capsys.readouterr().err
    assert main([*two, "--token-file", f"c={token}"]) == 2
    assert "no source is named 'c'" in capsys.readouterr().err
    # a token for a directory is refused, named
    assert (
        main(["tail", f"b={tmp_path / 'a'}", "u=http://127.0.0.1:9/", "--token-file", f"b={token}"])
        == 1
    )
    assert "b: --token-file" in capsys.readouterr().err
