"""docs/design.md stays true to the code: the package's parts (its folders and root modules) sit
in the layers its table names, every import runs down those layers (type-only and lazy imports
included), and the picture that opens the page is the one drawn from the imports."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tempsched_lab"
sys.path.insert(0, str(ROOT / "docs"))

import layers  # noqa: E402  (docs/layers.py: draws the picture, reads the table)


def test_the_layer_table_places_every_part_exactly_once():
    table = layers.layer_table()
    placed = [p for _, members, _ in table for p in members]
    assert len(placed) == len(set(placed)), f"a part is in two layers: {sorted(placed)}"
    assert sorted(placed) == layers.parts(), {
        "parts missing from the table": sorted(set(layers.parts()) - set(placed)),
        "the table names parts that do not exist": sorted(set(placed) - set(layers.parts())),
    }


def test_every_import_runs_down_the_layers_type_only_and_lazy_ones_included():
    assert layers.violations(layers.all_imports()) == []


def test_the_picture_that_opens_the_design_page_is_drawn_from_the_imports():
    page = (ROOT / "docs" / "design.md").read_text()
    drawn = layers.PICTURE.search(page)
    assert drawn, "docs/design.md lost its picture of the layers (<!-- picture: ... -->)"
    assert page.index("<!-- picture:") < page.index("\n## ", page.index("\n## ") + 1), (
        "the picture opens the page (under its first heading)"
    )
    assert drawn.group(2) == layers.picture(), "regenerate it: python docs/layers.py --write"


def test_the_root_keeps_the_public_entry_points_only():
    """At most 15 modules at the root (issue 40: there were 34)."""
    root_modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root_modules) <= 15, root_modules


def test_time_is_the_packages_own_folder_not_the_standard_module():
    """``tempsched_lab.time`` is a folder of ours; an ``import time`` in the package's
    ``__init__`` would rebind the name to the standard module (a trap of the name)."""
    import tempsched_lab
    import tempsched_lab.time.clock

    assert tempsched_lab.time.__file__ == str(PACKAGE / "time" / "__init__.py")
    assert not re.search(r"^import time\b", (PACKAGE / "__init__.py").read_text(), re.M)


def test_the_check_sees_an_import_up_a_layer_of_every_kind():
    """The three ways an import can climb are each caught (issue 40 found a type-only one:
    the log's files naming ``Scheduler``), and so are two parts of one layer importing each
    other (no circle can hide there)."""
    imports = [
        layers.Import("log.files.probe", "core.decision", "load", 2),
        layers.Import("log.files.probe", "core.scheduler", "type", 4),
        layers.Import("log.files.probe", "reading.replay", "lazy", 6),
    ]
    said = layers.violations(imports)
    assert [s.split("(")[-1] for s in said] == [
        "core, load): not a layer below",
        "core, type): not a layer below",
        "reading, lazy): not a layer below",
    ]
    # two parts in one layer may not import each other either (no circle can hide there)
    table = [("top", ["widgets", "lab"], ""), ("bottom", ["time"], "")]
    assert layers.violations([layers.Import("widgets.x", "lab.y", "load", 1)], table)


def test_the_reader_takes_every_kind_of_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``imports_in`` sees load-time, function-level and ``TYPE_CHECKING`` imports, and names
    each by how it is taken."""
    package = tmp_path / "tempsched_lab"
    (package / "log").mkdir(parents=True)
    (package / "core").mkdir()
    for path in (package / "log" / "__init__.py", package / "core" / "__init__.py"):
        path.write_text("")
    (package / "core" / "scheduler.py").write_text("")
    (package / "core" / "decision.py").write_text("")
    probe = package / "log" / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "from ..core import decision\n"
        "if TYPE_CHECKING:\n"
        "    from ..core.scheduler import Scheduler\n"
        "class A:\n"
        "    def later(self):\n"
        "        try:\n"
        "            import tempsched_lab.core.decision\n"
        "        except ImportError:\n"
        "            pass\n"
    )
    monkeypatch.setattr(layers, "PACKAGE", package)
    found = {(i.target, i.how) for i in layers.imports_in(probe)}
    assert found == {
        ("core.decision", "load"),
        ("core.scheduler", "type"),
        ("core.decision", "lazy"),
    }


def test_the_scheduler_module_names_its_collaborators_truly():
    """scheduler.py's docstring counts the collaborators it lists, and each class it points
    to exists where it says (issue 35: it said "three", listed four, named a moved class)."""
    import importlib

    import tempsched_lab.core.scheduler as scheduler

    doc = scheduler.__doc__ or ""
    words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
    said = re.search(r"(\w+) collaborators", doc)
    assert said and said.group(1) in words
    assert words[said.group(1)] == len(re.findall(r"^\* the [\w' ]*\*\*", doc, re.M))
    for target in re.findall(r":class:`(tempsched_lab\.[\w.]+)`", doc):
        module, _, name = target.rpartition(".")
        assert hasattr(importlib.import_module(module), name), target


def test_the_live_scheduler_registry_owns_no_lock():
    """docs/design.md says the registry owns no lock; registry.py constructs none."""
    source = (PACKAGE / "core" / "registry.py").read_text()
    assert not re.search(r"\b(R?Lock|Condition|Semaphore)\(", source)
    assert "live-scheduler registry\nowns none" in (ROOT / "docs" / "design.md").read_text()
