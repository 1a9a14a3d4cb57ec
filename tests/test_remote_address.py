"""A watcher finds the service again after a restart (issue 42, item 4): the example service
given ``--port 0`` and a spill root keeps its port across restarts; a mirror given the spill
root follows the address the next run records when the port is taken. Real processes, kill -9.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from remotekit import FAST, until

from tempsched_lab import attach
from tempsched_lab.log.files.lineage import serving
from tempsched_lab.remote.process import ExampleService

pytestmark = pytest.mark.slow


def test_a_restart_with_port_0_keeps_the_port_and_the_mirror_resumes(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = ExampleService.start(spill=root, args=FAST)
    mirror = attach(first.url)
    second = None
    try:
        assert serving(root) == {"url": first.url, "port": first.port, "run": "run-001"}
        until(lambda: mirror.applied > 50)
        first.kill()
        until(lambda: mirror.link.state == "reconnecting", 10)
        held = mirror.applied
        second = ExampleService.start(spill=root, args=FAST)  # the README's command again
        assert second.port == first.port and second.url == first.url
        until(lambda: mirror.applied > held + 50 and mirror.link.state in ("live", "gap"))
        assert serving(root) == {"url": second.url, "port": second.port, "run": "run-002"}
        assert not mirror.closed  # the same log, continued: resumed, not ended
    finally:
        mirror.close()
        first.kill()
        if second is not None:
            second.kill()


def test_a_mirror_of_the_spill_root_follows_a_restart_on_another_port(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = ExampleService.start(spill=root, args=FAST)
    mirror = attach(root)  # the spill root, not the URL
    blocker = socket.socket()
    second = None
    try:
        assert mirror.feed.root == first.url
        until(lambda: mirror.applied > 50)
        first.kill()
        until(lambda: mirror.link.state == "reconnecting", 10)
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (its TIME_WAIT)
        blocker.bind(("127.0.0.1", first.port))  # the old port is taken meanwhile
        blocker.listen(1)
        held = mirror.applied
        second = ExampleService.start(spill=root, args=FAST)
        assert second.port != first.port
        until(lambda: mirror.applied > held + 50 and mirror.link.state in ("live", "gap"))
        assert mirror.feed.root == second.url and mirror.feed.moves == [second.url]
        assert not mirror.closed
    finally:
        mirror.close()
        blocker.close()
        first.kill()
        if second is not None:
            second.kill()


def test_a_directory_that_records_no_address_is_refused_naming_it(tmp_path: Path) -> None:
    from tempsched_lab.remote import AttachError

    with pytest.raises(AttachError, match=r"serving\.json"):
        attach(tmp_path)
