"""End to end: every picture fits its column (issue 34, item 2), in Debian's Chromium.

The side-by-side pair (``tests/browser/side_by_side.ipynb``: a heap and a timing wheel) and a
teaching dashboard (``projector_dashboard.ipynb``: the decision tree) are opened once each and
looked at 900 px and 1,400 px wide, in the default type and in projector type (the page's own
**projector** toggle): no panel scrolls sideways or hides part of its content, and no picture
sticks out of its panel. Screenshots go to ``artifacts/fit-*.png``.
"""

from __future__ import annotations

import contextlib

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTHS = (900, 1400)

#: JavaScript: what does not fit inside ``root``: a box whose content is wider than the box
#: (it scrolls sideways or is cut: the panels hide their overflow), a picture wider than its
#: panel. Canvases size themselves to their box and are left out.
OVERFLOW_JS = """(root) => {
    const out = [];
    const shown = e => e.getClientRects().length > 0;
    const name = e => e.tagName + '.' + String(e.className).split(' ').join('.');
    const boxes = [...document.querySelectorAll(root)];
    for (const top of boxes) {
        for (const el of [top, ...top.querySelectorAll('*')]) {
            if (!shown(el) || el.tagName === 'CANVAS' || el.closest('.tsl-tl')) continue;
            const style = getComputedStyle(el);
            if (style.overflowX === 'visible') continue;
            if (el.scrollWidth > el.clientWidth + 1)
                out.push(name(el) + ': content ' + el.scrollWidth + ' px in ' + el.clientWidth);
        }
        for (const img of top.querySelectorAll('img')) {
            if (!img.naturalWidth || !shown(img)) continue;
            const panel = img.closest('.tsl-panel') || top;
            const r = img.getBoundingClientRect(), p = panel.getBoundingClientRect();
            if (r.right > p.right + 1 || r.left < p.left - 1)
                out.push(name(img) + ': ' + Math.round(r.width) + ' px picture in a panel of '
                         + Math.round(p.width));
        }
    }
    return out;
}"""


@pytest.fixture
def server(browser_pages):
    return browser_pages  # one server of tests/browser for the session (tests/conftest.py)


@pytest.fixture
def page(browser):
    pg = vk.new_page(browser, width=1400, height=900)
    yield pg
    pg.context.close()


def pictures_drawn(page, selector: str, min_width: int, count: int) -> None:
    """Wait until ``count`` pictures ``selector`` are drawn at least ``min_width`` px wide."""
    page.wait_for_function(
        """([sel, w, n]) => [...document.querySelectorAll(sel)]
            .filter(i => i.naturalWidth >= w && i.complete).length >= n""",
        arg=[selector, min_width, count],
        timeout=60_000,
    )


def assert_fits(page, root: str, what: str) -> None:
    """Wait (bounded) until nothing overflows in ``root``; on failure say what does not fit."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # a resize re-lays out the page: wait for the layout (bounded), never for a time
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"() => ({OVERFLOW_JS})({root!r}).length === 0", timeout=5_000)
    page.screenshot(path=str(vk.ARTIFACTS / f"fit-{what}.png"), full_page=True)
    assert page.evaluate(OVERFLOW_JS, root) == [], what


def look_at_every_size(page, root: str, name: str, projector_pictures: tuple[str, int, int]):
    """Check ``root`` at both widths in the page's type, toggle projector, check both again."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_fits(page, root, f"{name}-{width}-default")
    page.locator(".tsl-projector-toggle").first.click()
    pictures_drawn(page, *projector_pictures)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_fits(page, root, f"{name}-{width}-projector")


#: JavaScript: each side's interactive timeline (its canvas) as the window shows it.
TIMELINES_JS = """() => [...document.querySelectorAll('.tsl-sbs-side canvas.tsl-tl-canvas')]
    .map(c => { const r = c.getBoundingClientRect();
                return {top: r.top, bottom: r.bottom, height: innerHeight}; })"""


def test_side_by_side_pictures_fit_their_columns_at_both_widths_and_types(page, server):
    vk.wait_voila_page(page, server.page_url("side_by_side.ipynb"), ".tsl-side-by-side")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-side-by-side .tsl-stamp').length >= 6"
    )
    pictures_drawn(page, ".tsl-sbs-side img.tsl-queue-picture", 100, 2)
    page.set_viewport_size({"width": 900, "height": 900})
    page.locator(".tsl-sbs-step").click()
    page.wait_for_function(
        "() => document.querySelector('.tsl-sbs-status').textContent.includes('0.500 s')"
    )
    # after "step both" in a 900 px high window both timelines are in view, at one height
    page.locator(".tsl-sbs-step").scroll_into_view_if_needed()
    timelines = page.evaluate(TIMELINES_JS)
    assert len(timelines) == 2, timelines
    assert abs(timelines[0]["top"] - timelines[1]["top"]) <= 2, timelines
    assert all(t["top"] >= 0 and t["bottom"] <= t["height"] for t in timelines), timelines
    look_at_every_size(
        page, ".tsl-sbs-side", "side-by-side", (".tsl-sbs-side img.tsl-queue-picture", 500, 2)
    )
    vk.check_clean(page)


def test_teaching_dashboard_fits_at_both_widths_and_types(page, server):
    vk.wait_voila_page(page, server.page_url("projector_dashboard.ipynb"), ".tsl-dashboard")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= 7"
    )
    page.locator(".tsl-projector-toggle").first.click()  # the notebook opens in projector type
    pictures_drawn(page, "img.tsl-tree-image", 300, 1)
    page.wait_for_function(
        "() => document.querySelector('img.tsl-tree-image').naturalWidth < 800", timeout=60_000
    )
    look_at_every_size(page, ".tsl-dashboard", "teaching", ("img.tsl-tree-image", 800, 1))
    vk.check_clean(page)


def test_the_log_beside_the_tree_takes_the_full_width_at_1400_px(page, server):
    """A default dashboard (tree and log share a row): at 1,400 px the log is not squeezed
    beside the tree (it was 537 px, rows of 2-3 lines): it spans the dashboard."""
    vk.wait_voila_page(page, server.page_url("virtual_dashboard.ipynb"), ".tsl-dashboard")
    page.wait_for_function(
        "() => document.querySelectorAll('.tsl-dashboard .tsl-stamp').length >= 6"
    )
    dashboard = page.locator(".tsl-dashboard").bounding_box()
    log = page.locator(".tsl-panel.tsl-log").bounding_box()
    assert log["width"] >= 0.9 * dashboard["width"], (log, dashboard)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_fits(page, ".tsl-dashboard", f"dashboard-{width}-default")
    vk.check_clean(page)


@pytest.fixture(scope="module")
def notebook_09():
    server = vk.VoilaServer("notebooks/09_interactive_timeline.ipynb", "voila-fit-09.log")
    yield server
    server.stop()


#: The views the toolkit draws in a page: their texts must follow the projector toggle.
TOOLKIT_ROOTS = (".tsl-side-by-side", ".tsl-dashboard", ".tsl-panel", ".tsl-tl")


def test_notebook_09_in_projector_mode_has_no_text_under_16_px(browser, notebook_09):
    """One click on a projector toggle of notebook 09 sizes every view of the page: the
    standalone timelines, the practice and history panels, the pair and the dashboard."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = vk.new_page(browser, width=1400, height=900)
    try:
        vk.wait_voila_page(page, notebook_09.page_url(), ".tsl-dashboard")
        page.wait_for_function(
            "() => document.querySelectorAll('canvas.tsl-tl-canvas').length >= 5"
        )
        for root in TOOLKIT_ROOTS:
            assert page.evaluate(vk.SMALL_TEXT_JS, [root, 12]) == [], root
        assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-panel", 16]) != []  # small before
        page.locator(".tsl-dashboard .tsl-projector-toggle:visible").last.click()
        page.wait_for_function(
            """() => [...document.querySelectorAll('.tsl-tl')]
                .every(t => t.dataset.scale === 'projector' && +t.dataset.fontmin >= 16)""",
            timeout=60_000,
        )
        page.wait_for_function(  # the history panel shown alone: redrawn a third larger
            "() => [...document.querySelectorAll('img.tsl-history-picture')]"
            ".every(i => i.naturalWidth >= 540)",
            timeout=60_000,
        )
        # the views' classes reach the page in their own messages: wait (bounded) for the last
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function(
                f"roots => roots.every(r => ({vk.SMALL_TEXT_JS})([r, 16]).length === 0)",
                arg=list(TOOLKIT_ROOTS),
                timeout=20_000,
            )
        small = {root: page.evaluate(vk.SMALL_TEXT_JS, [root, 16]) for root in TOOLKIT_ROOTS}
        page.screenshot(path=str(vk.ARTIFACTS / "fit-09-projector.png"), full_page=True)
        assert all(not found for found in small.values()), small
        vk.check_clean(page)
    finally:
        page.context.close()
