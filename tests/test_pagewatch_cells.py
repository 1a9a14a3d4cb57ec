"""The page watch counts silence only while the kernel could hear the page: not while a cell
runs (a pong waits in the kernel's queue until the cell ends), and ``timeout`` again after it.
Before, Run All's later cells (or two 3 s cells in Voila, which shuts a dashboard down with its
page) made a page that was still open count as gone."""

from __future__ import annotations

import pytest

from tempsched_lab.widgets.pagewatch import PageWatch


class Events:
    """IPython's event manager, as far as the watch uses it."""

    def __init__(self) -> None:
        self.callbacks: dict[str, list] = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, name, callback) -> None:
        self.callbacks[name].append(callback)

    def unregister(self, name, callback) -> None:
        self.callbacks[name].remove(callback)

    def trigger(self, name) -> None:
        for callback in list(self.callbacks[name]):
            callback(None)


def test_a_running_cell_is_not_a_gone_page_and_the_page_has_its_timeout_after_it() -> None:
    now = [0.0]
    events = Events()
    watch = PageWatch(every=1.0, timeout=5.0, clock=lambda: now[0], events=events)
    watch.pong()
    events.trigger("pre_run_cell")
    now[0] = 30.0
    assert watch.state() == "alive"  # a 30 s cell: the page's answers wait for it
    events.trigger("post_run_cell")
    now[0] = 34.9
    assert watch.state() == "alive"
    now[0] = 35.1
    assert watch.state() == "gone"  # idle 5 s and no answer: gone
    watch.pong()
    assert watch.state() == "alive"
    watch.close()
    assert events.callbacks == {"pre_run_cell": [], "post_run_cell": []}
    watch.close()  # twice: nothing left to unregister, no error


def test_without_cells_the_silence_counts_from_the_last_pong() -> None:
    now = [0.0]
    watch = PageWatch(every=1.0, timeout=5.0, clock=lambda: now[0], events=None)
    assert watch.state() == "waiting"
    watch.pong()
    now[0] = 5.1
    assert watch.state() == "gone"


@pytest.mark.slow
@pytest.mark.notebooks
def test_in_a_kernel_the_watch_follows_the_cells() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "from tempsched_lab.widgets.pagewatch import PageWatch\n"
        "now = [0.0]\n"
        "watch = PageWatch(timeout=5.0, clock=lambda: now[0])\n"
        "watch.pong()",
        "now[0] = 60.0\nprint('during a cell:', watch.cell_running, watch.state())",
        "print('after it:', watch._idle_since)\nwatch.close()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    text = "".join(o.get("text", "") for c in nb.cells for o in c.outputs)
    assert "during a cell: True alive" in text, text
    assert "after it: 60.0" in text, text  # the previous cell's end, on the watch's clock
