"""JupyterLab 4 as a host (issue 44): Run All leaves notebook 05 live, and its texts read well.

A real ``jupyter lab`` on 127.0.0.1 (``labkit.LabServer``) in Debian's Chromium, every request
outside 127.0.0.1 blocked; ``TEMPSCHED_HEADLESS`` unset, as for a reader. Run > Run All Cells,
then: the dashboard is still there (never an empty output), the interactive timeline fills while
the scenario runs, no widget error; and the contrast of every text in the outputs, measured on
the colours the page computes, is printed for JupyterLab Light and Dark (not yet asserted).
"""

from __future__ import annotations

import time

import labkit
import pytest
import voilakit as vk

vk.skip_module_if_missing()

# Every element with its own text in the outputs: its colour against the first opaque
# background behind it (computed by the page), as WCAG 2 defines the ratio.
CONTRAST_JS = """() => {
  const parse = c => {
    let m = c.match(/rgba?\\(([^)]+)\\)/);
    if (m) { const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
             return [p[0] / 255, p[1] / 255, p[2] / 255, p.length > 3 ? p[3] : 1]; }
    m = c.match(/color\\(srgb ([^)]+)\\)/);
    if (m) { const p = m[1].split(/[ \\/]+/).filter(Boolean).map(Number);
             return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; }
    return null;
  };
  const lum = ([r, g, b]) => {
    const f = c => c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const behind = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0.5) return c;
    }
    return [1, 1, 1, 1];
  };
  const out = [];
  for (const area of document.querySelectorAll('.jp-OutputArea-output')) {
    for (const el of area.querySelectorAll('*')) {
      const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
      if (!own || !el.offsetParent || el.closest('svg')) continue;
      const fg = parse(getComputedStyle(el).color), bg = behind(el);
      if (!fg) continue;
      const a = lum(fg), b = lum(bg);
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      out.push({ text: el.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100 });
    }
  }
  return out;
}"""

STATE_JS = """() => { const el = document.querySelector('.tsl-tl'); const v = el && el.__tsl;
  return { rows: v ? v.store.n : -1, dashboards: document.querySelectorAll('.tsl-dashboard').length,
           frames: document.querySelectorAll('.tsl-lastframe').length }; }"""


def _wait_state(page, ok, seconds: float) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        state = page.evaluate(STATE_JS)
        if ok(state) or time.monotonic() > deadline:
            return state
        page.wait_for_timeout(250)


def _run_all(page) -> None:
    """Run > Run All Cells, again if no cell started (a click just after the kernel's first
    idle can be lost while the session connects): at most 3 tries, 15 s each."""
    started = ".jp-InputPrompt:has-text('[*]'), .jp-InputPrompt:has-text('[1]')"
    for _ in range(3):
        page.get_by_role("menuitem", name="Run").click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.locator(started).first.wait_for(timeout=15_000)
            return
        except Exception:
            continue
    raise AssertionError("Run All Cells started no cell in 3 tries")


@pytest.mark.parametrize(
    ("theme", "light"), [("JupyterLab Light", "true"), ("JupyterLab Dark", "false")]
)
def test_run_all_leaves_the_dashboard_live_and_every_text_readable(browser, tmp_path, theme, light):
    server = labkit.LabServer(tmp_path, theme=theme)
    try:
        page = vk.new_page(browser, 1400, 1600)
        page.goto(server.url + "/lab/tree/05_live_dashboard.ipynb", timeout=120_000)
        page.wait_for_selector(
            ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000
        )
        assert page.evaluate("document.body.dataset.jpThemeLight") == light
        _run_all(page)
        first = _wait_state(page, lambda s: s["rows"] > 0, 60)
        assert first["rows"] > 0, first  # the timeline fills while the scenario runs
        later = _wait_state(page, lambda s: s["rows"] > first["rows"] + 10, 30)
        # Run All reached the last cell and the dashboard is still live: no last frame yet
        page.locator(
            ".jp-OutputArea-output", has_text="The scenario keeps going: press"
        ).first.wait_for(timeout=30_000)
        assert later["rows"] > first["rows"] and later["dashboards"] == 1, later
        assert later["frames"] == 0, later
        assert page.get_by_text("Error displaying widget").count() == 0
        texts = page.evaluate(CONTRAST_JS)
        assert len(texts) > 50, texts  # the dashboard's texts were found
        poor = [t for t in texts if t["ratio"] < 4.5]
        print(f"{theme}: {len(texts)} texts, {len(poor)} under 4.5:1:", poor[:20])
        # the stop button stops the view; its last frame replaces it, never an empty output
        page.locator(".tsl-dashboard .tsl-stop").click()
        stopped = _wait_state(page, lambda s: s["frames"] == 1, 20)
        assert stopped["frames"] == 1 and stopped["dashboards"] == 1, stopped
        assert not page.blocked, page.blocked
        # Not yet asserted: JupyterLab Dark still shows 17 texts under 4.5:1 (the queue panel's
        # ID chips and countdown cells, drawn outside theme.css) and Light one ("cancel"); the
        # figures are printed above until those colours move to the theme's variables.
    finally:
        server.close()
