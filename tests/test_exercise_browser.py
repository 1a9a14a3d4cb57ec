"""The exercise widget (issue 43) served by Voila, driven in Debian's Chromium: an answer typed
and submitted with Enter, the verdict, the reveal beside the answer, the score; and projector
type, with no text under 16 px."""

from __future__ import annotations

import pytest
import voilakit as vk

vk.skip_module_if_missing()

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def page(browser):
    pg = vk.new_page(browser, width=1280, height=2400)
    yield pg
    pg.context.close()


def test_predict_with_the_keyboard_then_reveal_and_score(page, browser_pages):
    from playwright.sync_api import expect

    vk.wait_voila_page(page, browser_pages.page_url("exercise_widget.ipynb"), ".tsl-exercise")
    plain = page.locator(".tsl-exercise-plain")
    reveal = plain.locator(".tsl-exercise-reveal")
    expect(reveal).to_be_disabled()  # predict first
    box = plain.locator(".tsl-exercise-answer input")
    box.fill("0, 0, 0, 0, 0")  # lateness, seed 2: [0, 0, 0.2, 0.4, 0]
    box.press("Enter")  # Enter checks
    verdict = plain.locator(".tsl-exercise-result [data-correct]")
    expect(verdict).to_have_attribute("data-correct", "0")
    expect(verdict).to_contain_text("Step 3 (run of c)")
    expect(plain.locator(".tsl-score")).to_have_attribute("data-asked", "1")
    expect(reveal).to_be_enabled()
    box.press("Tab")  # the tab order: the box, then check
    assert page.evaluate("() => document.activeElement.textContent.trim()") == "check"
    reveal.click()
    rows = plain.locator(".tsl-exercise-steps tbody tr")
    expect(rows).to_have_count(5)
    expect(plain.locator(".tsl-exercise-steps tr[data-ok='0']")).to_have_count(2)
    expect(plain.locator("img")).to_be_visible()  # the run's timeline
    plain.locator(".tsl-exercise-next").click()
    expect(plain.locator(".tsl-exercise-share")).to_contain_text("lateness, seed 3")
    expect(reveal).to_be_disabled()
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-exercise-plain", 12]) == []
    vk.check_clean(page)


def test_projector_type_has_no_text_under_16_px(page, browser_pages):
    from playwright.sync_api import expect

    vk.wait_voila_page(page, browser_pages.page_url("exercise_widget.ipynb"), ".tsl-exercise")
    big = page.locator(".tsl-exercise-big")
    expect(big).to_have_class(__import__("re").compile("tsl-projector"))
    box = big.locator(".tsl-exercise-answer input")
    box.fill("2, 1, 4, 4, 8, 4")  # the right answer of decision-tree, seed 12
    box.press("Enter")
    expect(big.locator(".tsl-exercise-result [data-correct]")).to_have_attribute(
        "data-correct", "1"
    )
    big.locator(".tsl-exercise-reveal").click()
    expect(big.locator(".tsl-exercise-steps tbody tr")).to_have_count(6)
    assert page.evaluate(vk.SMALL_TEXT_JS, [".tsl-exercise-big", 16]) == []
    big.screenshot(path=str(vk.ARTIFACTS / "exercise-projector.png"))
    vk.check_clean(page)
