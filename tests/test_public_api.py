"""A ``Scheduler``'s public names are what users call, and docs/api.md lists exactly them.

Issue 35, item 2: 11 of its 29 public names were callbacks for clocks, runners and the compat
facade; they moved behind ports (``tempsched_lab/core/ports.py``). The API page's autodoc of
``Scheduler`` names its members one by one, so a public name added to the class without a
line on the page (or a collaborator's callback made public again) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from tempsched_lab import Scheduler, VirtualClock

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"

#: what clocks, runners and facades call: on the ports, never on the scheduler
COLLABORATORS_CALLS = {
    "next_fire_time", "fire_due", "fire_next", "periodic_runs_until", "woke", "driver_died",
    "run_started", "run_ended", "submit_request", "read_records", "record_rejection",
}  # fmt: skip


def documented_members() -> list[str]:
    """The ``:members:`` of ``Scheduler``'s autoclass on docs/api.md, in the page's order."""
    text = API.read_text()
    block = re.search(
        r"<!-- scheduler-members.*?-->\s*```\{eval-rst\}\n"
        r"\.\. autoclass:: tempsched_lab\.Scheduler\n\s+:members:(.*?)\n(?!\s{6})",
        text,
        re.S,
    )
    assert block, "docs/api.md: the Scheduler autoclass with its :members: list is not found"
    return [name.strip() for name in block.group(1).split(",") if name.strip()]


def public_names(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_public_names_are_the_documented_list():
    documented = documented_members()
    assert len(documented) == len(set(documented)), "a name is listed twice"
    s = Scheduler(VirtualClock())
    names = public_names(s)  # methods, properties and the attributes set in __init__
    assert names == set(documented), {
        "public but not on docs/api.md": sorted(names - set(documented)),
        "on docs/api.md but not public": sorted(set(documented) - names),
    }
    assert public_names(Scheduler) <= names  # (the class's own: methods and properties)


def test_no_collaborators_call_is_a_public_name():
    with Scheduler() as s:  # a real clock: a worker thread and a pool
        assert not public_names(s) & COLLABORATORS_CALLS
        assert not public_names(Scheduler) & COLLABORATORS_CALLS


def test_each_public_name_has_a_docstring_or_a_doc_comment():
    """autodoc shows each; a method or property documents itself with an example."""
    for name in documented_members():
        member = getattr(Scheduler, name, None)
        if member is None:  # an attribute set in __init__: its ``#:`` comment is its doc
            source = Path(__file__).resolve().parents[1] / "tempsched_lab" / "core" / "scheduler.py"
            assert re.search(rf"#: .*\n(\s+#: .*\n)*\s+self\.{name}\b", source.read_text()), name
            continue
        doc = member.__doc__ or ""
        assert doc.strip(), f"Scheduler.{name} has no docstring"
        assert ">>>" in doc or "example" in doc, f"Scheduler.{name}: no example"


def _autodoc_targets() -> list[str]:
    return re.findall(r"^\.\. auto\w+:: ([\w.]+)", API.read_text(), re.M)


def test_every_object_on_the_api_page_is_where_the_page_says():
    """Each autodoc target of docs/api.md imports (the docs build would only warn later)."""
    import importlib

    missing = []
    for target in _autodoc_targets():
        parts = target.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for name in parts[cut:]:
                    obj = getattr(obj, name)
            except AttributeError:
                missing.append(target)
            break
        else:
            missing.append(target)
    assert len(_autodoc_targets()) > 100 and missing == []


def test_the_modules_that_moved_live_under_one_name_only():
    """The folders became the layers (issue 40): a moved module has no second, old name."""
    import importlib

    import pytest

    for old in ("clock", "logfiles", "queues", "triggers", "misfire", "schema", "scheduler"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"tempsched_lab.{old}")
    for new in ("time.clock", "log.files", "core.queues", "core.triggers.misfire", "log.schema"):
        importlib.import_module(f"tempsched_lab.{new}")
