"""Regenerate the figures of ``docs/plots.md`` and the gallery page ``docs/gallery.md``.

Usage::

    python docs/gallery.py [--out docs/images] [--page docs/gallery.md]

* ``docs/images/<name>.png``: the pictures ``docs/plots.md`` explains, from the
  fixed VirtualClock scenario of :func:`tempsched_lab.plots.example_frame` (one
  simulated worker, a 16-slot timing wheel of 0.1 s ticks);
* ``docs/images/gallery/<figure>.png`` and ``docs/gallery.md``: every public
  figure drawn from an empty log, the demo scenario and a large log (~43k rows)
  side by side: the same renders the figure checks of ``tests/test_figures.py``
  run on (:mod:`tempsched_lab.plots.catalog`).

Every render is checked (overlapping or tiny text, raw clock values, text cut
off) and the script fails if one is not readable. All logs run on virtual
clocks, so the images are the same on every machine (a fixed PNG ``Software``
tag and no timestamps: re-running gives identical files).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image, ImageDraw, ImageFont

from tempsched_lab import Case, Scheduler, VirtualClock, replay_snapshot
from tempsched_lab.core.queues import TimingWheelQueue
from tempsched_lab.plots import (
    example_frame,
    plot_decision_tree,
    plot_heap,
    plot_lateness,
    plot_queue_depth,
    plot_sorteddict,
    plot_summary,
    plot_timeline,
    plot_wheel,
)
from tempsched_lab.plots._check import figure_problems
from tempsched_lab.plots.catalog import FIGURES, SAMPLES

HERE = Path(__file__).resolve().parent
#: The row after which the queue-design pictures are taken (t = 0.4 s: 11 tasks pending).
SNAPSHOT_ROW = 19
#: The "live" timeline shows the log as it was at this clock time.
LIVE_AT = 2.5
#: The gallery's columns: (sample name, clock), with their captions.
COLUMNS = (("empty", "virtual"), ("demo", "virtual"), ("large", "virtual"))
#: Width in pixels of one render in a gallery row.
CELL_PX = 760
PNG_INFO = {"Software": "tempsched_lab docs/gallery.py"}


def _noop(*args: object) -> None:
    """The action of the many-tasks scenario."""


def many_tasks(n: int = 400) -> pd.DataFrame:
    """``n`` one-shot tasks at spread-out times and a periodic one: too many lanes to draw."""
    clock = VirtualClock()
    s = Scheduler(clock)
    for i in range(n):
        s.schedule(_noop, at=1.0 + (i * 7919 % 1000) / 10, args=(i,), label=f"job {i % 9}")
    s.schedule(_noop, at=0.5, period=5.0, label="heartbeat")
    clock.run_until(102.0)
    s.shutdown()
    return s.log.to_frame()


def figures() -> dict[str, Callable[[], Axes | Figure]]:
    """File stem -> a function drawing that figure of ``docs/plots.md``."""
    frame = example_frame()
    live = frame[frame["t"] <= LIVE_AT]
    wheel = TimingWheelQueue(slots=16, tick=0.1)
    at = float(frame.loc[frame["seq"] == SNAPSHOT_ROW, "t"].iloc[0])
    return {
        "timeline": lambda: plot_timeline(frame),
        "timeline_live": lambda: plot_timeline(live, color_by="outcome", now=LIVE_AT),
        "timeline_window": lambda: plot_timeline(frame, window=1.5, now=3.0),
        "timeline_threads": lambda: plot_timeline(frame, lanes="thread"),
        "timeline_aggregated": lambda: plot_timeline(many_tasks(), max_lanes=24),
        "decision_tree": lambda: plot_decision_tree(Case.DUPLICATE_IN_QUEUE, counts=frame),
        "lateness": lambda: plot_lateness(frame),
        "queue_depth": lambda: plot_queue_depth(frame),
        "sorteddict": lambda: plot_sorteddict(replay_snapshot(frame, upto=SNAPSHOT_ROW)),
        "heap": lambda: plot_heap(replay_snapshot(frame, upto=SNAPSHOT_ROW, queue="heap")),
        "wheel": lambda: plot_wheel(replay_snapshot(frame, upto=SNAPSHOT_ROW, queue=wheel), now=at),
        "summary": lambda: plot_summary(frame),
    }


def _figure_of(drawn: Axes | Figure) -> Figure:
    return drawn if isinstance(drawn, Figure) else drawn.get_figure()  # type: ignore[return-value]


def _checked_png(fig: Figure, where: str) -> bytes:
    """The PNG of ``fig``; raises if the figure checks find it unreadable."""
    problems = figure_problems(fig)
    if problems:
        raise SystemExit(f"{where} is not readable:\n  " + "\n  ".join(problems))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata=PNG_INFO)
    return buffer.getvalue()


def _caption_font() -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(font_manager.findfont("DejaVu Sans"), 22)


def _side_by_side(pngs: list[bytes], captions: list[str]) -> Image.Image:
    """The renders scaled to one width, in a row, each under its caption."""
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in pngs]
    images = [im.resize((CELL_PX, round(im.height * CELL_PX / im.width))) for im in images]
    head = 40
    gap = 24
    width = len(images) * CELL_PX + (len(images) - 1) * gap
    row = Image.new("RGB", (width, head + max(im.height for im in images)), "white")
    draw = ImageDraw.Draw(row)
    font = _caption_font()
    for i, (im, caption) in enumerate(zip(images, captions, strict=True)):
        x = i * (CELL_PX + gap)
        row.paste(im, (x, head))
        draw.text((x + 4, 8), caption, fill=(34, 34, 34), font=font)
        if i:
            draw.line([(x - gap // 2, 0), (x - gap // 2, row.height)], fill=(200, 200, 200))
    return row


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def gallery(images: Path, page: Path) -> list[Path]:
    """Render every catalog figure on the gallery's columns; write the rows and the page."""
    folder = images / "gallery"
    folder.mkdir(parents=True, exist_ok=True)
    loaded = {key: SAMPLES[key].load() for key in COLUMNS}
    captions = [f"{key[0]} ({len(loaded[key].frame):,} rows)" for key in COLUMNS]
    written = []
    lines = [
        "# Gallery: every figure on an empty, a small and a large log",
        "",
        "Each row shows one public figure drawn from three logs side by side: an empty log, the",
        "demo scenario of [the plots page](plots.md) and a large log of about 43,000 rows",
        "(10,000 one-shot tasks over 100 s, three periodic ones, duplicates and cancels), all on a",
        "virtual clock at the default figure size. They are the renders the figure checks of",
        "`tests/test_figures.py` run on (no overlapping or tiny text, no raw clock values, nothing",
        "cut off), which also draw every figure from real-clock logs. Each row links to its",
        "full-size image. Regenerate with `python docs/gallery.py`.",
        "",
    ]
    for name, draw in FIGURES.items():
        pngs = [_checked_png(draw(loaded[key]), f"{name} on {key[0]}") for key in COLUMNS]
        path = folder / f"{_slug(name)}.png"
        _side_by_side(pngs, captions).save(path, format="png", pnginfo=_pnginfo())
        written.append(path)
        lines += [
            f"## {name[0].upper() + name[1:]}",
            "",
            f"![{name}: empty, demo and large logs](images/gallery/{path.name})",
            "",
            f"{{download}}`The row at full size <images/gallery/{path.name}>`",
            "",
        ]
    page.write_text("\n".join(lines))
    return [*written, page]


def _pnginfo() -> object:
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    for key, value in PNG_INFO.items():
        info.add_text(key, value)
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "images")
    parser.add_argument("--page", type=Path, default=HERE / "gallery.md")
    args = parser.parse_args(argv)
    matplotlib.use("Agg")
    args.out.mkdir(parents=True, exist_ok=True)
    for stem, draw in figures().items():
        path = args.out / f"{stem}.png"
        path.write_bytes(_checked_png(_figure_of(draw()), stem))
        print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")
    for path in gallery(args.out, args.page):
        print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
