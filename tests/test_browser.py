"""A real headless Chromium (Debian's, driven by Playwright; no browser download) against a real
`faultlens serve`, and against the static site opened from file://. Screenshots go to
tests/artifacts/."""

from pathlib import Path

import pytest
from conftest import DATA, ROOT, missing
from live_server import serving

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
NVFP4 = ("Using 'EMULATION' backend\n"
         '  File "/x/emulation_utils.py", line 38, in break_fp4_bytes\n'
         "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n")


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.is_file():
        missing(f"{CHROMIUM} is not installed (apt-get install chromium; .ci/run does)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context.new_page()
    context.close()


def test_search_open_a_reference_paste_a_log(page, tmp_path):
    with serving(tmp_path) as base:
        page.goto(base + "/")
        assert page.locator("h1").inner_text() == "Why did the run fail?"
        page.screenshot(path=ARTIFACTS / "home.png", full_page=True)

        page.fill("main input[name=q]", "out of memory")
        page.press("main input[name=q]", "Enter")
        page.wait_for_url("**/search?q=out+of+memory")
        page.click("text=Test fixture - CUDA out of memory on one rank")
        page.wait_for_url("**/references/demo-oom")
        assert "CUDA out of memory on one rank" in page.locator("h1").inner_text()
        assert page.locator("#fix li").first.inner_text().startswith("Lower the batch size.")
        page.screenshot(path=ARTIFACTS / "reference.png", full_page=True)

        page.click("text=Diagnose a log")
        page.fill("textarea[name=text]", NVFP4)
        page.click("button:has-text('Diagnose')")
        page.wait_for_selector("#result")
        top = page.locator("details.diagnosis").first
        assert "demo-specific-index" in top.locator("summary").inner_text()
        assert top.locator("tr.hit mark").last.inner_text() == \
            "indices should be either on cpu or on the same device"
        assert top.locator(".check-pass .mark").first.inner_text() == "✓"
        assert "demo-generic-index" in top.locator("text=Why not").locator("xpath=following-sibling::ul[1]").inner_text()
        page.screenshot(path=ARTIFACTS / "diagnosis.png", full_page=True)

        page.click("text=/Saved as incident/ >> a")
        page.wait_for_url("**/incidents/1")
        assert "Incident 1: demo-specific-index" in page.locator("h1").inner_text()


def test_static_site_search_works_offline(page, tmp_path):
    from faultlens import catalogue as catalogue_mod
    from faultlens.web.site import build_site

    build_site(catalogue_mod.load(DATA / "catalogue"), tmp_path / "site")
    page.goto((tmp_path / "site" / "index.html").as_uri())
    page.fill("#q", "emulation frame")
    results = page.locator("#results li a")
    results.first.wait_for()
    assert results.first.inner_text().startswith("Test fixture - the same message with an emulation frame")
    page.screenshot(path=ARTIFACTS / "site-search.png", full_page=True)
    results.first.click()
    page.wait_for_url("**/references/demo-specific-index.html")
    page.click("#siblings a:text-is('demo-generic-index')")  # a sibling, by its relative link
    page.wait_for_url("**/references/demo-generic-index.html")
    assert "generic indexing device mismatch" in page.locator("h1").inner_text()


def _context(browser, width, scheme):
    return browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)


def test_diagnose_redirects_to_a_permalink_and_keeps_the_log(page, tmp_path):
    with serving(tmp_path) as base:
        page.goto(base + "/diagnose")
        page.click("button:has-text('Diagnose')")  # empty: a friendly message, same page
        assert "Paste a log into the box" in page.locator("#form-message").inner_text()
        page.fill("textarea[name=text]", NVFP4)
        page.click("button:has-text('Diagnose')")
        page.wait_for_url("**/d/*")
        permalink = page.url.split("#")[0]
        assert "demo-specific-index" in page.locator("details.diagnosis summary").first.inner_text()
        assert "break_fp4_bytes" in page.locator("textarea[name=text]").input_value()
        page.goto(permalink)  # the link works on its own: reload shows the same result
        assert "demo-specific-index" in page.locator("details.diagnosis summary").first.inner_text()


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_layout_and_colour_schemes(browser, tmp_path, width, scheme):
    context = _context(browser, width, scheme)
    page = context.new_page()
    try:
        with serving(tmp_path) as base:
            page.goto(base + "/diagnose")
            page.fill("textarea[name=text]", NVFP4)
            page.click("button:has-text('Diagnose')")
            page.wait_for_url("**/d/*")
            background = page.evaluate("getComputedStyle(document.body).backgroundColor")
            dark = background in ("rgb(13, 17, 23)",)
            assert dark == (scheme == "dark"), background
            # nothing wider than the screen: no horizontal scrolling of the page
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"page is {overflow}px wider than the {width}px screen"
            page.screenshot(path=ARTIFACTS / f"diagnosis-{width}-{scheme}.png", full_page=True)
            page.goto(base + "/references/demo-oom")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1
            page.screenshot(path=ARTIFACTS / f"reference-{width}-{scheme}.png", full_page=True)
    finally:
        context.close()


def test_copy_buttons_copy_the_fix(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1200, "height": 900},
                                  permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        with serving(tmp_path) as base:
            page.goto(base + "/references/demo-oom")
            page.locator("#fix button.copy").first.click()
            assert page.locator("#fix button.copy").first.inner_text() == "copied"
            assert page.evaluate("navigator.clipboard.readText()").startswith("Lower the batch size.")
    finally:
        context.close()
