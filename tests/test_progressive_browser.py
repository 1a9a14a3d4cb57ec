"""Voila's progressive rendering (``tempsched-lab serve``'s default) shows every output of a cell.

With ``progressive_rendering`` each cell's outputs reach the page in one message on the
``/voila/execution/`` socket, while the widgets' models come on the kernel's socket. Voila 0.5's
page stops at the first widget whose model it has not met yet: that widget is added when the
model comes, every output after it in the cell was dropped (``tests/browser/busy_lanes.ipynb``'s
second cell, a ``display()`` then a returned dashboard, showed only its first output under load).
The project's template splits such a message (``tempsched_lab/widgets/voila_template``).

The race depends on the machine's load, so the test makes it happen every time: it holds the
kernel's messages to the page until the cell's result has reached the page, then lets them go
(Playwright's ``route_web_socket``). Before the template's fix the widgets ``two`` and ``three``
and the texts after a widget were missing (cells showing fewer outputs than sent: 2 of 5 and
1 of 2); after: all of them, in the cell's order.

Every page the other browser tests open through ``voilakit.wait_voila_page`` is checked the
same way without the delay (``voilakit.check_every_output_shown``): every output the server
sent for every cell is in the page, for every notebook served (tests/test_notebooks_voila.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = "progressive_outputs.ipynb"
#: What the page's cells show, in order (``tests/browser/progressive_outputs.ipynb``).
SHOWN = ["text before", "one", "text between", "two", "three", "four", "five"]


def hold_kernel_messages_until_each_result(page: Any) -> dict[str, Any]:
    """Deliver the kernel's messages to ``page`` only after each cell's result has reached it.

    The widgets of a cell are then always unknown to the page when the cell's outputs come:
    the race a loaded machine loses now and then, every time. Returns counters to check it ran.
    """
    held: list[str | bytes] = []
    kernels: list[Any] = []
    seen = {"held": 0, "results": 0, "last": False}

    def release() -> None:
        while held and kernels:
            kernels[0].send(held.pop(0))

    def kernel(route: Any) -> None:
        server = route.connect_to_server()
        route.on_message(server.send)

        def from_server(message: str | bytes) -> None:
            held.append(message)
            if seen["last"]:  # every cell has run: nothing more to race with
                release()
            else:
                seen["held"] += 1

        server.on_message(from_server)
        kernels.append(route)

    def execution(route: Any) -> None:
        server = route.connect_to_server()
        route.on_message(server.send)

        def from_server(message: str | bytes) -> None:
            route.send(message)  # the cell's outputs first,
            if isinstance(message, str) and '"execution_result"' in message:
                payload = json.loads(message)["payload"]
                seen["results"] += 1
                seen["last"] = payload["cell_index"] + 1 == payload["total_cell"]
                release()  # then what the kernel said meanwhile

        server.on_message(from_server)

    page.route_web_socket(re.compile(r"/api/kernels/[^/]+/channels"), kernel)
    page.route_web_socket(re.compile(r"/voila/execution/"), execution)
    return seen


def test_every_output_of_a_cell_shows_when_its_widgets_come_late(browser, browser_pages):
    page = vk.new_page(browser, width=1280, height=1200)
    try:
        seen = hold_kernel_messages_until_each_result(page)
        vk.wait_voila_page(page, browser_pages.page_url(PAGE), ".tsl-p5")
        assert seen["results"] == 4 and seen["held"] > 0, seen  # the race was provoked
        config = "JSON.parse(document.getElementById('jupyter-config-data').textContent)"
        assert page.evaluate(f"() => {config}.progressiveRendering") is True
        text = page.locator("#rendered_cells").inner_text()
        places = [text.find(s) for s in SHOWN]
        assert -1 not in places and places == sorted(places), (text, places)
        assert "text after a widget" in text
        vk.check_clean(page)
    finally:
        page.context.close()
