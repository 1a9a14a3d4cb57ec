"""A closed view leaves its last frame: a static snapshot in its output, never an empty one.

When a widget is closed, the notebook removes its view: the output under the
cell becomes empty, with no message (issue 44: *Run All empties the
dashboards*). A view of this package closes differently: its root box stays
and its children are replaced by one HTML widget holding what the view showed
last (texts, tables and pictures, :func:`~tempsched_lab.widgets.dashboard.static_html`),
under a line that says the view is closed. Everything else is closed and
released; the root box and the frame cost two small models.

The outputs a view was shown in become that frame too, as plain HTML
(:class:`ShownOutputs`): a view shows itself with an IPython display id, and
when it closes, each of its outputs is updated to the frame's HTML. The
notebook file then holds the frame itself, not a reference to a widget model,
so a saved notebook reopened without a kernel (or read on GitHub, nbviewer, a
docs page) shows the last frame instead of "Loading widget..." or "model not
found" (issue 44, item 5). JupyterLab, Notebook 7, Voila and nbclient apply the
update wherever it comes from: a later cell, a button's handler, a thread.

>>> import ipywidgets as W
>>> root = W.VBox([W.HTML("<b>12 rows</b>"), W.Button(description="pause")])
>>> frame = leave_last_frame(root, "<b>12 rows</b>", moment="4.2 s")
>>> [type(child).__name__ for child in root.children]
['HTML']
>>> "tsl-lastframe" in frame._dom_classes, "12 rows" in frame.value, "4.2 s" in frame.value
(True, True, True)
>>> leave_last_frame(root, "", moment="")
Traceback (most recent call last):
...
ValueError: root=VBox(...): already shows its last frame
"""

from __future__ import annotations

import base64
import html
import logging
import threading
from typing import Any

import ipywidgets as W

from ._base import png_size

__all__ = [
    "LASTFRAME_CLASS",
    "ShownOutputs",
    "last_frame_html",
    "leave_last_frame",
    "static_html",
]

_LOG = logging.getLogger(__name__)

#: The class of a last frame's HTML widget (tests and style sheets find it by it).
LASTFRAME_CLASS = "tsl-lastframe"


def last_frame_html(snapshot: str, *, moment: str = "") -> str:
    """The frame's HTML: a short note (with the ``moment`` the frame shows), then
    ``snapshot`` (HTML) as it was.

    >>> "Its last frame, at 3 s," in last_frame_html("<p>x</p>", moment="3 s")
    True
    """
    when = f", at {html.escape(moment)}," if moment else ""
    note = (
        "<div class='tsl-lastframe-note' style='color:var(--tsl-muted,#595959);"
        f"font-style:italic;margin:2px 0 4px'>This view was closed. Its last frame{when} "
        "as it was (nothing here updates any more).</div>"
    )
    body = snapshot or "<div>(the view showed nothing yet)</div>"
    return f"{note}{body}"


def leave_last_frame(root: W.Box, snapshot: str, *, moment: str = "") -> W.HTML:
    """Replace ``root``'s children by one HTML widget showing ``snapshot``; return that widget.

    The caller closes the old children (they are no longer shown). Raises
    ``ValueError`` if ``root`` already shows a last frame.
    """
    kids = root.children
    if len(kids) == 1 and LASTFRAME_CLASS in getattr(kids[0], "_dom_classes", ()):
        raise ValueError(f"root={type(root).__name__}(...): already shows its last frame")
    frame = W.HTML(last_frame_html(snapshot, moment=moment))
    frame.add_class(LASTFRAME_CLASS)
    root.children = (frame,)
    return frame


class ShownOutputs:
    """The notebook outputs a view was shown in, to be turned into its last frame on close.

    A view's ``_ipython_display_`` calls :meth:`show` (the widget, under a display id);
    its ``close()`` calls :meth:`freeze` with the frame's HTML: every output that showed the
    view is replaced by that HTML (``text/html``, with a ``text/plain`` line for hosts that
    show no HTML). Outside a kernel nothing is shown and nothing is frozen.

    >>> outputs = ShownOutputs()
    >>> outputs.freeze("<b>12 rows</b>", "a closed view")  # never shown: nothing to replace
    0
    """

    def __init__(self) -> None:
        self._handles: list[Any] = []  # IPython DisplayHandle, one per display
        self._lock = threading.Lock()  # show() in a cell, freeze() from a button or a thread

    def __len__(self) -> int:
        """How many outputs show the view now (0: never shown, or already frozen)."""
        return len(self._handles)

    def show(self, widget: W.Widget) -> None:
        """Display ``widget`` in the current output, remembering its display id."""
        from IPython.display import display

        handle = display(widget, display_id=True)  # type: ignore[no-untyped-call]
        if handle is not None:
            with self._lock:
                self._handles.append(handle)

    def freeze(self, frame_html: str, text: str) -> int:
        """Replace every output :meth:`show` made by ``frame_html``; return how many.

        Idempotent: the outputs are forgotten once replaced. A failed update (the kernel
        going away) is logged and skipped, never raised: closing must finish.
        """
        with self._lock:
            handles, self._handles = self._handles, []
        bundle = {
            "text/html": f"<div class='{LASTFRAME_CLASS}'>{frame_html}</div>",
            "text/plain": text,
        }
        done = 0
        for handle in handles:
            try:
                handle.update(bundle, raw=True)
                done += 1
            except Exception as exc:  # a kernel shutting down: the widget's frame stays
                _LOG.debug("could not replace output %s by its last frame: %s", handle, exc)
        return done


def static_html(widget: W.Widget) -> str:
    """Plain HTML of a widget tree's outputs: HTML and label texts, images inlined as PNG.

    Inputs (buttons, sliders, text fields) are left out. Used as the
    no-JavaScript part of :meth:`Dashboard.to_html` and for last frames.

    >>> box = W.VBox([W.HTML("<b>hi</b>"), W.Button(description="x"), W.Label("a<b")])
    >>> static_html(box)
    "<div style='display:flex;flex-direction:column;gap:6px'><div><b>hi</b></div><div>a&lt;b</div></div>"
    """  # noqa: E501
    if getattr(widget.layout, "display", None) == "none":
        return ""
    if isinstance(widget, (W.HTML, W.HTMLMath)):
        return f"<div>{widget.value}</div>"
    if isinstance(widget, W.Label):
        return f"<div>{html.escape(widget.value)}</div>"
    if isinstance(widget, W.Image):
        if not widget.value:
            return ""
        data = base64.b64encode(widget.value).decode("ascii")
        # at its own pixel size (a flex column would stretch it: its type would grow with it)
        try:
            width = f"width:{png_size(bytes(widget.value))[0]}px;"
        except ValueError:
            width = ""
        return (  # (tsl-picture: the light card a picture sits on in a dark theme)
            f"<img class='tsl-picture' style='{width}max-width:100%;height:auto;"
            f"align-self:flex-start' src='data:image/{widget.format};base64,{data}'>"
        )
    if isinstance(widget, W.Box):
        direction = "row;flex-wrap:wrap" if isinstance(widget, W.HBox) else "column"
        inner = "".join(static_html(child) for child in widget.children)
        if not inner:
            return ""
        return f"<div style='display:flex;flex-direction:{direction};gap:6px'>{inner}</div>"
    return ""
