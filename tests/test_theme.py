"""The theme's colours (widgets/static/theme.css): every text meets WCAG AA in light and dark.

Pure contrast maths, fast: the browser test that measures rendered texts is the slow lane's.
"""

from __future__ import annotations

import re

import pytest

from tempsched_lab.plots.colors import ENTRY_FILL, HEAD_FILL
from tempsched_lab.widgets._style import (
    TEXT_PAIRS,
    THEME_CSS,
    contrast_ratio,
    theme_colors,
    theme_tint,
    tinted,
    type_css,
)
from tempsched_lab.widgets.linkbanner import _LOOK
from tempsched_lab.widgets.logview import KIND_FILL
from tempsched_lab.widgets.timeline_widget import STATIC, TimelineWidget

NAMES = [
    "--tsl-fg", "--tsl-bg", "--tsl-muted", "--tsl-border", "--tsl-accent", "--tsl-accent-fg",
    "--tsl-panel-bg", "--tsl-head-bg", "--tsl-head-fg", "--tsl-ok", "--tsl-late", "--tsl-fail",
    "--tsl-grid", "--tsl-picture-bg",
]  # fmt: skip


def test_contrast_ratio_matches_known_wcag_values():
    assert contrast_ratio("#000", "#fff") == pytest.approx(21.0)
    assert contrast_ratio("#fff", "#fff") == pytest.approx(1.0)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # AA's edge
    assert contrast_ratio("#ffffff", "#767676") == contrast_ratio("#767676", "#ffffff")
    with pytest.raises(ValueError, match="color='red'"):
        contrast_ratio("red", "#fff")


def test_both_themes_define_every_name():
    colors = theme_colors()
    for theme in ("light", "dark"):
        assert sorted(colors[theme]) == sorted(NAMES), theme


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("fg", "bg"), TEXT_PAIRS)
def test_every_text_pair_meets_aa(theme, fg, bg):
    colors = theme_colors()[theme]
    ratio = contrast_ratio(colors[fg], colors[bg])
    assert ratio >= 4.5, f"{theme}: {fg} {colors[fg]} on {bg} {colors[bg]}: {ratio:.2f}:1"


def test_dark_is_keyed_on_each_host_selector():
    for selector in (
        'body[data-jp-theme-light="false"]',
        'body[data-vscode-theme-kind="vscode-dark"]',
        'body[data-vscode-theme-kind="vscode-high-contrast"]',
        "html[theme=dark]",
    ):
        assert selector in THEME_CSS


def test_views_carry_the_theme_and_draw_no_literal_colour():
    assert THEME_CSS in type_css() and THEME_CSS in TimelineWidget._css
    css = (STATIC / "timeline.css").read_text()
    assert not re.findall(r"#[0-9a-fA-F]{3,6}\b", re.sub(r"/\*.*?\*/", "", css, flags=re.S))
    js = (STATIC / "timeline.js").read_text()
    # the canvas paints its background, texts, grid and scroll bar in the theme's colours
    for literal in ("'#FFF4D6'", "'#F0F0F0'", "'#9A9A9A'", "ctx.fillStyle = 'white'"):
        assert literal not in js
    assert "getPropertyValue(name)" in js and "MutationObserver" in js


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_tinted_rows_and_boxes_keep_their_text_readable(theme):
    """The log's kind rows and the history strip's boxes mix a pale fill into the background
    (``--tsl-tint``); the banner of a mirror mixes 12 % of its state's border into the panel's.
    At 40 % (as before) a cancel row read 4.09:1 in the dark theme."""
    colors, amount = theme_colors()[theme], theme_tint()[theme]
    fills = [f for f in KIND_FILL.values() if f] + [HEAD_FILL, ENTRY_FILL]
    for fill in fills:
        ground = tinted(fill, colors["--tsl-bg"], amount)
        ratio = contrast_ratio(colors["--tsl-fg"], ground)
        assert ratio >= 4.5, f"{theme}: {fill} at {amount:.0%}: {ratio:.2f}:1"
    for border, _word in _LOOK.values():
        ground = tinted(border, colors["--tsl-panel-bg"], 0.12)
        assert contrast_ratio(colors["--tsl-fg"], ground) >= 4.5, (theme, border)
    for name in ("logview.py", "changes.py"):
        assert "var(--tsl-tint)" in (STATIC.parent / name).read_text()
    assert "12%, var(--tsl-panel-bg)" in (STATIC.parent / "linkbanner.py").read_text()
