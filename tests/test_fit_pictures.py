"""The queue pictures shown in panels fit a side-by-side column (issue 34, item 2).

At a 900 px page the two side-by-side columns are 427 px wide: the heap and wheel
pictures (drawn at 100 dpi, a third denser in projector type) must be narrower,
with their title and legend inside the figure.
"""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tempsched_lab import replay_snapshot
from tempsched_lab.core.queues import TimingWheelQueue
from tempsched_lab.plots import example_frame
from tempsched_lab.plots.designs import picture_of, plot_queue

#: The width of one side-by-side column at a 900 px page (measured in Chromium), less the
#: panel's 8 px right margin.
COLUMN_PX = 427 - 8


@pytest.mark.parametrize("design", ["heap", "wheel"])
def test_panel_pictures_fit_a_side_by_side_column_with_every_text_inside(design: str) -> None:
    width_in, height_in = picture_of(design).size
    assert width_in * 100 <= COLUMN_PX, (design, width_in)
    for upto in (1, 13):
        queue = "heap" if design == "heap" else TimingWheelQueue(slots=16, tick=0.01)
        snapshot = replay_snapshot(example_frame(), upto=upto, queue=queue)
        fig = Figure(figsize=(width_in, height_in), dpi=100, layout="constrained")
        ax = plot_queue(snapshot, ax=fig.add_subplot())
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        page = fig.bbox
        legend = ax.get_legend()
        drawn = [*ax.texts, *fig.texts, ax.title]
        if legend is not None:
            drawn += [*legend.get_texts(), legend.get_title()]
        texts = [t for t in drawn if t.get_visible() and t.get_text()]
        assert len(texts) > 3
        for text in texts:
            box = text.get_window_extent(renderer)
            assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1, (design, text.get_text())
            assert box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1, (design, text.get_text())
        if design == "wheel" and legend is not None:  # under the ring, not beside it
            ring = ax.get_window_extent(renderer)
            assert legend.get_window_extent(renderer).y1 <= ring.y0 + 1
