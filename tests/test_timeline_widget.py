"""The interactive timeline without a browser: what crosses the wire, resyncs, hover, the panel.

Messages are read where they leave the kernel (the widget's comm), so "a new row is sent
once and old rows are not re-sent" is counted on the real payloads. The browser-side store
(``static/timeline.js``) is run in Node, when Node is installed, on the same payloads: it
must build the same runs as the static plot (``plots._data.task_runs``).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from widgetkit import close_widgets, scenario  # noqa: F401 - the fixture closes widgets

from tempsched_lab import Scheduler, VirtualClock
from tempsched_lab.log.schema import KIND_CODE
from tempsched_lab.plots._data import task_runs
from tempsched_lab.plots.colors import CASE_COLORS, NEUTRAL, OUTCOME_COLORS
from tempsched_lab.plots.timeline.marks import MARKS
from tempsched_lab.scenarios import (
    SimulatedWorker,
    quiet_failures,
    run_simulation,
    schedule_demo,
    takes,
)
from tempsched_lab.widgets import Dashboard, TimelinePanel, TimelineWidget, demo_task, describe_row
from tempsched_lab.widgets.timeline_feed import BYTES_PER_ROW, TimelineFeed, decode
from tempsched_lab.widgets.timeline_widget import STATIC, mark_table, palette


class Wire:
    """Every message a widget sends, as the comm gets it: (content, buffers)."""

    def __init__(self, widget: TimelineWidget) -> None:
        self.sent: list[tuple[dict, list[bytes]]] = []
        comm = widget.comm

        def send(data=None, metadata=None, buffers=None):
            if data and data.get("method") == "custom":
                self.sent.append((data["content"], [bytes(b) for b in buffers or []]))

        comm.send = send

    def rows(self, to: str | None = None) -> list[tuple[int, int, bytes]]:
        """``(first, count, block)`` of each rows message (for page ``to``, or for all)."""
        return [
            (c["first"], c["count"], b[0])
            for c, b in self.sent
            if c["type"] == "rows" and c.get("to") == to
        ]

    def clear(self) -> None:
        self.sent.clear()


def demo_scheduler() -> tuple[Scheduler, VirtualClock, SimulatedWorker]:
    clock = VirtualClock()
    worker = SimulatedWorker()
    s = Scheduler(clock, executor=worker)
    with quiet_failures():
        ids = schedule_demo(s, t0=0.0, work=takes(clock, 0.2), slow=takes(clock, 0.9))
        run_simulation(clock, worker, until=0.4)
        s.cancel(ids["cancelled"])
        run_simulation(clock, worker, until=4.0)
    return s, clock, worker


# -- the feed ------------------------------------------------------------------------------------


def test_rows_are_packed_in_33_bytes_and_decode_to_the_log():
    s, _, _ = demo_scheduler()
    frame = s.log.to_frame()
    header, block = TimelineFeed().encode(frame, origin=0.0)
    assert BYTES_PER_ROW == 33 and len(block) == 33 * len(frame) == 33 * header["count"]
    cols = decode(block, header["count"])
    assert cols["t"].tolist() == frame["t"].tolist()
    assert cols["kind"].tolist() == [KIND_CODE[k] for k in frame["kind"]]
    task = frame["task_id"].to_numpy(dtype="float64", na_value=-1.0)
    assert cols["task"].tolist() == task.astype(int).tolist()
    labels = header["labels"]
    named = [labels[i] if i >= 0 else None for i in cols["label"]]
    assert named == [None if v != v else v for v in frame["label"].astype(object)]
    dup = frame["dup_of"].to_numpy(dtype="float64", na_value=-1.0).astype(int)
    assert cols["dup"].tolist() == dup.tolist()
    cancelled = (frame["kind"] == "cancel") & (frame["result"] == "cancelled")
    assert (cols["flags"] & 1).astype(bool).tolist() == cancelled.tolist()
    starts = (frame["kind"] == "start").to_numpy()
    assert set(cols["lane"][starts]) == {0} and header["lanes"] == ["MainThread"]
    with pytest.raises(ValueError, match="gapless"):
        TimelineFeed().encode(frame.iloc[[0, 2]], origin=0.0)
    with pytest.raises(ValueError, match="block"):
        decode(block, header["count"] + 1)


def test_labels_are_numbered_once_and_each_sent_once():
    s, _, _ = demo_scheduler()
    frame = s.log.to_frame()
    feed = TimelineFeed()
    first, _ = feed.encode(frame.iloc[:20], origin=0.0)
    second, block = feed.encode(frame.iloc[20:], origin=0.0)
    assert first["labels"] and not set(first["labels"]) & set(second["labels"])
    names = first["labels"] + second["labels"]
    cols = decode(block, second["count"])
    later = frame.iloc[20:]["label"].astype(object).tolist()
    assert [names[i] if i >= 0 else None for i in cols["label"]] == [
        None if v != v else v for v in later
    ]


def test_times_are_sent_since_the_origin_on_a_real_clock_scale():
    s = Scheduler(VirtualClock(start=1_700_000_000.0))
    s.schedule(demo_task, delay=2.0, label="epoch")
    header, block = TimelineFeed().encode(s.log.to_frame(), origin=s.time_scale.origin)
    cols = decode(block, header["count"])
    assert cols["t"].tolist() == [0.0] and cols["due"].tolist() == [2.0]


# -- the widget: what crosses the wire -----------------------------------------------------------


def test_each_new_row_crosses_the_wire_once():
    s, clock = scenario()
    timeline = TimelineWidget(s)
    wire = Wire(timeline)
    assert timeline.push() == s.log.next_seq
    for _ in range(6):
        before = s.log.next_seq
        clock.step()
        wire.clear()
        sent = timeline.push()
        batches = wire.rows()
        assert sent == s.log.next_seq - before
        if sent:
            ((first, count, block),) = batches  # one message per push
            assert (first, count, len(block)) == (before, sent, sent * BYTES_PER_ROW)
        else:
            assert batches == []
    assert timeline.rows_sent == s.log.next_seq  # nothing was ever sent twice
    assert timeline.seq == s.log.next_seq and timeline.now == clock.now()


def test_a_page_that_says_hello_gets_everything_once_for_it_alone():
    s, clock = scenario()
    timeline = TimelineWidget(s)
    timeline.push()
    wire = Wire(timeline)
    timeline._on_msg(timeline, {"type": "hello", "token": "page-b"}, [])
    reset = [c for c, _ in wire.sent if c["type"] == "reset"]
    assert reset == [
        {
            "type": "reset",
            "to": "page-b",
            "first": 0,
            "labels": list(timeline.feed.labels),
            "lanes": list(timeline.feed.lanes),
        }
    ]
    ((first, count, _),) = wire.rows(to="page-b")
    assert (first, count) == (0, s.log.next_seq) and wire.rows() == []
    assert timeline.hellos == 1
    # a page that lost a message asks again: it is started afresh, the others are untouched
    wire.clear()
    clock.step()
    timeline.push()
    timeline._on_msg(timeline, {"type": "need", "from": 3, "token": "page-b"}, [])
    assert [c for c, _, _ in wire.rows(to="page-b")] == [0]
    assert sum(n for _, n, _ in wire.rows(to="page-b")) == s.log.next_seq


def test_after_a_mirrors_gap_a_page_is_reset_to_the_rows_after_it():
    """A mirror's log starts after a gap (a restarted service, rows lost): the reset a page
    gets names the first row held, so the rows that follow it are the ones the page expects
    (``timeline.js`` asks again, without end, when a batch starts after its reset's first;
    a reset at 0 left the timeline of notebook 11 empty after the service restarted)."""
    from tempsched_lab.remote.mirror import RemoteScheduler

    s, _clock, _worker = demo_scheduler()
    frame = s.log.to_frame()
    assert len(frame) > 30
    mirror = RemoteScheduler("test", time_origin=s.time_scale.origin)
    mirror.apply(frame.iloc[:10])
    timeline = TimelineWidget(mirror)
    timeline.push()
    mirror.gap(10, 19, "test: rows lost")
    mirror.apply(frame.iloc[20:])
    wire = Wire(timeline)
    timeline.push()
    assert wire.rows()[0][0] == 20  # the page holds 0..9: it asks again (a gap) ...
    wire.clear()
    timeline._on_msg(timeline, {"type": "hello", "token": "page-a"}, [])
    (reset,) = [c for c, _ in wire.sent if c["type"] == "reset"]
    sent = wire.rows(to="page-a")
    assert reset["first"] == sent[0][0] == 20  # ... and is reset to the rows after the gap
    assert sum(n for _, n, _ in sent) == len(frame) - 20
    assert timeline._row(15) is None and timeline._row(20) is not None


def test_a_long_log_resyncs_in_batches(monkeypatch):
    from tempsched_lab.widgets import timeline_widget

    monkeypatch.setattr(timeline_widget, "MAX_BATCH", 7)
    s, clock = scenario()
    clock.run_until(5.0)
    timeline = TimelineWidget(s)
    wire = Wire(timeline)
    timeline.push()
    batches = wire.rows()
    assert [n for _, n, _ in batches][:-1] == [7] * (len(batches) - 1)
    assert [f for f, _, _ in batches] == list(range(0, s.log.next_seq, 7))


def test_hover_says_what_the_log_panel_says():
    s, _, _ = demo_scheduler()
    timeline = TimelineWidget(s)
    timeline.push()
    frame = s.log.to_frame()
    start = int(frame.index[(frame["kind"] == "start") & (frame["label"] == "slow import")][0])
    sched = int(frame.index[(frame["kind"] == "schedule") & (frame["label"] == "slow import")][0])
    answer = timeline.hover_text({"seq": start, "run": [sched, start - 1, start, -1]})
    row = frame.iloc[start]
    assert answer["text"] == (
        f"row {start}, {s.time_scale.at(row['t'])}: {describe_row(row, s.time_scale)}"
    )
    assert answer["details"].startswith("slow import · task #6 · case 4 (new time point) · late")
    assert "no longer" in timeline.hover_text({"seq": 10_000})["text"]
    wire = Wire(timeline)
    timeline._on_msg(timeline, {"type": "hover", "seq": start, "run": []}, [])
    assert wire.sent[0][0]["text"] == answer["text"]


def test_the_canvas_uses_the_plots_palette_and_glyphs():
    assert palette() == {
        "case": {str(c): v for c, v in CASE_COLORS.items()},
        "outcome": dict(OUTCOME_COLORS),
        "neutral": dict(NEUTRAL),
    }
    table = mark_table()
    assert set(table) == set(MARKS)
    for gid, mark in MARKS.items():
        assert (table[gid]["marker"], table[gid]["size"], table[gid]["face"]) == (
            mark.marker,
            mark.size,
            mark.face,
        )
        assert (table[gid]["edge"], table[gid]["y_offset"]) == (mark.edge, mark.y_offset)
    s, _ = scenario()
    timeline = TimelineWidget(s)
    assert timeline.palette == palette() and timeline.marks == table
    # every glyph the plot uses has a drawing in the module
    source = (STATIC / "timeline.js").read_text()
    for mark in MARKS.values():
        assert f"case '{mark.marker}'" in source or mark.marker == r"$\oslash$", mark.marker


def test_bad_arguments_name_themselves():
    s, _ = scenario()
    with pytest.raises(ValueError, match="lanes='cpu'"):
        TimelineWidget(s, lanes="cpu")
    with pytest.raises(ValueError, match="window=-1"):
        TimelineWidget(s, window=-1)
    with pytest.raises(ValueError, match="height=10"):
        TimelineWidget(s, height=10)


# -- in a dashboard ------------------------------------------------------------------------------


def test_dashboard_at_1khz_sends_each_row_once_at_most_10_batches_a_second():
    """1000 new rows a (simulated) second for 3 s: <= 10 batches/s, every row exactly once."""
    s, _ = scenario()
    fake = [0.0]
    dash = Dashboard(s, autostart=False, clock=lambda: fake[0], resync_every=None)
    live = dash.timeline.live
    live._on_msg(live, {"type": "hello", "token": "t"}, [])  # a page is there (no blind resync)
    wire = Wire(live)
    start = s.log.next_seq
    for _ in range(3000):  # 1 ms steps, 1 row each
        s.schedule(demo_task, delay=100.0, args=(fake[0],), label="flood")
        fake[0] += 0.001
        dash.refresher.tick()
    fake[0] += 0.2
    dash.refresher.tick()
    batches = wire.rows()
    assert len(batches) <= 31  # 10 a second, and the final flush
    firsts = [f for f, _, _ in batches]
    assert firsts == sorted(firsts)
    covered = [seq for f, n, _ in batches for seq in range(f, f + n)]
    assert covered == list(range(start, s.log.next_seq))  # each new row once, no old row again
    sizes = [len(b) for _, n, b in batches]
    assert np.median(sizes) <= 110 * BYTES_PER_ROW  # about 100 rows (3.3 kB) per refresh
    dash.close()


def test_panel_draws_the_png_until_a_page_shows_the_canvas():
    s, clock = scenario()
    panel = TimelinePanel(s)
    panel.refresh()
    assert panel.image.value[:4] == b"\x89PNG" and panel._fig.renders == 1
    assert panel.picture.layout.display != "none"
    panel.live._on_msg(panel.live, {"type": "hello", "token": "t"}, [])
    assert panel.page_has_canvas and panel.picture.layout.display == "none"
    renders = panel._fig.renders
    clock.step()
    panel.refresh()
    assert panel._fig.renders == renders  # no PNG drawn for a page that has the canvas
    assert f"data-seq='{s.log.next_seq}'" in panel.caption.value
    assert panel.live.seq == s.log.next_seq
    # the panel's controls and the canvas's toolbar say the same thing
    panel.lanes.value = "thread"
    assert panel.live.lanes == "thread"
    panel.live.follow = False
    assert panel.pause.value
    panel.window.value = 12.0
    assert panel.live.window == 12.0
    panel.close()


def test_panel_without_interactive_has_no_canvas():
    s, _ = scenario()
    panel = TimelinePanel(s, interactive=False)
    panel.refresh()
    assert panel.live is None and not panel.page_has_canvas
    assert panel.live not in panel.display_widgets()
    panel.close()


def test_export_carries_the_png_timeline_even_when_a_page_has_the_canvas(tmp_path):
    s, clock = scenario()
    clock.step()
    dash = Dashboard(s, panels=("controls", "timeline"), autostart=False)
    dash.timeline.live._on_msg(dash.timeline.live, {"type": "hello", "token": "t"}, [])
    dash.refresh()
    html = dash.to_html(tmp_path / "export.html").read_text()
    static = html.split('<div id="tsl-static">', 1)[1].split("</div>\n<script", 1)[0]
    assert "data:image/png;base64," in static
    assert dash.timeline.picture.layout.display == "none"  # the live page is untouched
    dash.close()


# -- the browser-side store, in Node -------------------------------------------------------------

NODE = shutil.which("node")

STORE_JS = """
import { Store, View } from '%s';
import { readFileSync } from 'node:fs';
const { traits, batches } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const store = new Store({ get: k => traits[k] });  // the widget's traits, as the kernel sends them
store.noLane = 65535;
store.synced = true;
for (const b of batches) {
  const raw = Buffer.from(b.block, 'base64');
  store.append(b.header, new DataView(raw.buffer, raw.byteOffset, raw.byteLength));
}
const runs = store.runs.map(r => ({task: r.task, due: r.due, sched: r.sched, started: r.started,
  ended: r.ended, evt: r.evt, cancelled: r.cancelled, cas: r.cas}));
// the view's lane list without a page: which lanes a time range shows, which it folds
const lanesIn = (v0, v1, now = 0) => {
  const model = { get: k => (k === 'lanes' ? 'task' : k === 'now' ? now : 0) };
  const view = Object.assign(Object.create(View.prototype),
                             { store, v0, v1, laneCache: null, model });
  const list = view.laneList();
  const shown = [];
  for (let i = 0; i < list.count; i++) shown.push(list.get(i).label);
  return { count: list.count, folded: list.folded, busy: list.busy, shown };
};
console.log(JSON.stringify({kinds: store.K, n: store.n, next: store.next, runs,
  lanes: store.taskLanes, rejects: store.rejects.length, threads: store.threadLanesNow().length,
  started: store.started, whole: lanesIn(-1, 100), late: lanesIn(50, 60),
  early: lanesIn(-0.001, 0.001), windows: (traits.windows || []).map(w => lanesIn(...w))}));
"""


def _store_traits(s: Scheduler) -> dict:
    """What the page's store reads from the widget's model: the traits the kernel sends."""
    widget = TimelineWidget(s)
    traits = {name: getattr(widget, name) for name in ("kinds", "flags", "adding_cases")}
    widget.close()
    return traits


def _run_store(tmp_path, frame, traits, recode=None) -> dict:
    """The page's store (run in Node) fed ``frame`` in small batches; what it built.

    ``recode`` maps the schema's kind codes to others in the blocks sent (with ``traits``
    naming the kinds in that other order).
    """
    feed = TimelineFeed()
    batches = []
    for lo in range(0, len(frame), 9):  # small batches, one overlapping the last: skipped rows
        part = frame.iloc[max(lo - 2, 0) : lo + 9]
        header, block = feed.encode(part, origin=0.0)
        if recode is not None:
            n = header["count"]
            raw = bytearray(block)
            kinds = 30 * n  # the kind column's offset (timeline_feed.COLUMNS)
            raw[kinds : kinds + n] = bytes(recode[code] for code in raw[kinds : kinds + n])
            block = bytes(raw)
        batches.append({"header": header, "block": base64.b64encode(block).decode()})
    module = tmp_path / "timeline.mjs"
    module.write_text((STATIC / "timeline.js").read_text())
    script = tmp_path / "store.mjs"
    script.write_text(STORE_JS % module.as_uri())
    data = tmp_path / "batches.json"
    data.write_text(json.dumps({"traits": traits, "batches": batches}))
    out = subprocess.run(
        [NODE, str(script), str(data)], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(out.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_store_builds_the_runs_the_plot_draws(tmp_path):
    s, _, _ = demo_scheduler()
    frame = s.log.to_frame()
    got = _run_store(tmp_path, frame, _store_traits(s))
    assert got["kinds"] == KIND_CODE  # read from the widget's `kinds` trait
    assert got["n"] == len(frame) and got["next"] == len(frame)
    runs = task_runs(frame)
    assert len(got["runs"]) == len(runs)
    by_key = {(r["task"], r["due"]): r for r in got["runs"]}
    for row in runs.itertuples():
        mine = by_key[(int(row.task_id), float(row.due))]
        for ours, theirs in (
            ("sched", row.scheduled),
            ("started", row.started),
            ("ended", row.ended),
            ("evt", row.event_set),
            ("cancelled", row.cancelled),
        ):
            same = (mine[ours] is None and theirs != theirs) or mine[ours] == pytest.approx(theirs)
            assert same, (row.label, ours, mine[ours], theirs)
        if row.case == row.case:
            assert mine["cas"] == int(row.case)
    assert got["rejects"] == int((frame["kind"] == "reject").sum())
    assert got["lanes"] == list(dict.fromkeys(frame["task_id"].dropna().astype(int)))
    assert got["threads"] == 1
    # "runs started" counts the runs that started (or whose Event was set), not pending ones
    started = runs["started"].notna() | runs["event_set"].notna()
    assert got["started"] == int(started.sum()) < len(runs)
    # the whole run shows every task (and the rejected row), nothing folded
    tasks = len(got["lanes"])
    assert got["whole"]["folded"] == 0 and got["whole"]["count"] == tasks + 1
    # long after the run, only tasks still pending reach into the view; the rest fold into one
    # last row that says how many
    late = got["late"]
    assert late["folded"] > 0 and late["shown"][-1].startswith(f"+ {late['folded']} task")
    assert late["count"] == tasks - late["folded"] + 1  # the shown lanes and the fold row
    # at t = 0 the tasks scheduled then are in view (and the rejection made at 0)
    first_rows = frame[(frame["t"] <= 0.001) & frame["task_id"].notna()]
    at_zero = set(first_rows["task_id"].astype(int))
    shown = {int(x.rsplit("#", 1)[1]) for x in got["early"]["shown"] if "#" in x}
    assert at_zero <= shown


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_lanes_put_what_runs_or_falls_due_in_view_first(tmp_path):
    """Lanes by activity: a recurring task that keeps running keeps the first lane, ahead of
    tasks that appeared before it but have only a waiting line in view, and of the many one-shot
    tasks of later rounds; finished tasks fold. (Before: first-appearance order, so the early
    far-future task came first and the heartbeat lane was pushed down by each round.)"""
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(demo_task, at=100.0, args=("far",), label="far")  # pending all along, due later
    s.schedule(demo_task, at=0.5, period=0.5, label="heartbeat")
    for round_ in range(4):  # rounds of one-shot tasks, each its own lane
        for i in range(6):
            s.schedule(demo_task, at=round_ * 10 + 1 + i, args=(round_, i), label=f"r{round_}")
        clock.run_until(round_ * 10 + 10)
    frame = s.log.to_frame()
    traits = {**_store_traits(s), "windows": [[30, 40, 40], [0, 40, 40]]}
    late, whole = _run_store(tmp_path, frame, traits)["windows"]
    # the last round's window: the heartbeat first, then round 3's tasks (they ran there)
    assert late["shown"][0] == "heartbeat #1"
    assert late["shown"][1:7] == [f"r3 #{n}" for n in range(20, 26)]
    assert late["busy"] == 7
    # then the far task: only its waiting line is in view; rounds 0-2 fold into one row
    assert late["shown"][7] == "far #0"
    assert late["shown"][8] == "+ 18 tasks, nothing in view" and late["count"] == 9
    # the whole run: every lane that ran, in order of first appearance, then the waiting one
    assert whole["shown"][0] == "heartbeat #1" and whole["shown"][-1] == "far #0"
    assert whole["folded"] == 0 and whole["busy"] == 25


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_store_reads_the_kind_codes_the_kernel_sends(tmp_path):
    """The page repeats no kind code: renumber the kinds (and the rows) and it builds the same."""
    s, _, _ = demo_scheduler()
    frame = s.log.to_frame()
    traits = _store_traits(s)
    expected = _run_store(tmp_path, frame, traits)
    order = list(reversed(traits["kinds"]))  # every kind gets another code
    recode = {KIND_CODE[kind]: order.index(kind) for kind in traits["kinds"]}
    got = _run_store(tmp_path, frame, {**traits, "kinds": order}, recode=recode)
    assert got["kinds"] == {kind: code for code, kind in enumerate(order)}
    assert got["runs"] == expected["runs"] and len(got["runs"]) == len(task_runs(frame))
    assert got["rejects"] == expected["rejects"] > 0
    assert got["started"] == expected["started"]
    # and a page told of no kinds says so instead of drawing nothing
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _run_store(tmp_path, frame, {**traits, "kinds": []})
    assert "the kernel sent no row kinds" in failed.value.stderr


def test_the_page_names_only_kinds_and_flags_the_kernel_sends():
    """The page compares a row's kind with ``K.<name>`` (codes from the `kinds` trait) and its
    flags with ``F.<name>``: every name it uses is one the kernel sends, and no code is written
    out (a renamed kind or flag would otherwise match nothing, silently)."""
    import re

    from tempsched_lab.log.schema import KINDS
    from tempsched_lab.widgets.timeline_feed import FLAGS

    js = (STATIC / "timeline.js").read_text()
    kinds = set(re.findall(r"\bK\.(\w+)", js))
    flags = set(re.findall(r"\bF\.(\w+)", js))
    assert kinds and kinds <= set(KINDS), kinds - set(KINDS)
    assert flags and flags <= set(FLAGS), flags - set(FLAGS)
    # a kind is never compared with a number, nor a flag tested with a literal bit
    assert not re.search(r"kind\[\w+\]\s*[!=]==?\s*\d", js)
    assert not re.search(r"flags\[\w+\]\s*&\s*\d", js)


@pytest.mark.slow
def test_the_wheel_ships_the_module(tmp_path):
    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        timeout=300,
    )
    import zipfile

    (wheel,) = tmp_path.glob("tempsched_lab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tempsched_lab/widgets/static/timeline.js" in names
    assert "tempsched_lab/widgets/static/timeline.css" in names
    template = "tempsched_lab/widgets/voila_template/voila/templates/tempsched/"
    assert template + "index.html.j2" in names and template + "conf.json" in names


def test_before_any_hello_a_push_resends_everything_at_most_once_a_second():
    """Run All: the kernel answers a hello only between cells; until one comes, a push re-sends
    every row (a reset to every page, then the rows) at most once a second, else increments."""
    s, _ = scenario()
    timeline = TimelineWidget(s)
    wire = Wire(timeline)
    timeline.push()
    assert timeline.blind_resyncs == 1
    assert [m["type"] for m, _ in wire.sent][:2] == ["reset", "rows"]
    assert wire.sent[0][0]["to"] is None  # meant for every page
    first_rows = wire.sent[1][0]
    assert first_rows["labels_at"] == 0 and first_rows["lanes_at"] == 0
    s.schedule(demo_task, delay=50.0, label="more")
    timeline.push()  # within the second: only the new row
    assert timeline.blind_resyncs == 1 and wire.sent[-1][0]["count"] == 1
    assert wire.sent[-1][0]["labels_at"] == len(timeline.feed.labels) - len(
        wire.sent[-1][0]["labels"]
    )
    timeline._on_msg(timeline, {"type": "hello", "token": "p"}, [])
    timeline._blind_at = -1e9  # long ago: still no blind resync, a page said hello
    s.schedule(demo_task, delay=60.0, label="more")
    timeline.push()
    assert timeline.blind_resyncs == 1
    timeline.close()


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_lanes_order_by_what_happens_now(tmp_path):
    """Issue 44, item 7: the task a user scheduled stays in view while it runs. Busy lanes go
    running first, then due soonest, then those that only finished in view, whatever their
    order of first appearance (before: first appearance, so the running task came last)."""
    clock = VirtualClock()
    s = Scheduler(clock)
    s.schedule(demo_task, at=8.8, label="later")  # #0: due after 'soon'
    s.schedule(demo_task, at=8.3, label="soon")  # #1
    for i in range(6):  # #2-#7: finished by 7 s
        s.schedule(demo_task, at=1 + i, args=(i,), label="done")
    s.schedule(demo_task, at=8.0, label="mine")  # #8: the reader's task, scheduled last
    clock.run_until(9.5)
    frame = s.log.to_frame()
    start = frame[(frame["kind"] == "start") & (frame["label"] == "mine")].index[0]
    running = frame.loc[:start]  # the log as it was when 'mine' started: it runs at now = 8
    traits = {**_store_traits(s), "windows": [[0, 9, 8.0]]}
    (view,) = _run_store(tmp_path, running, traits)["windows"]
    assert view["shown"][:3] == ["mine #8", "soon #1", "later #0"]
    assert view["shown"][3:9] == [f"done #{n}" for n in range(2, 8)]
    assert view["busy"] == 9
