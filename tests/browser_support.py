"""A headless Chromium driven by Playwright for the tests of pages a person clicks through (the
report's game viewer, the play page): Playwright waits for what a page shows instead of sleeping,
and drives Debian's Chromium (`executable_path`) without downloading a browser of its own.

The `page` fixture skips, saying why, where Playwright (the test extra) or Chromium (`apt-get
install chromium`; `.ci/run` installs it) is missing."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)
# as root and on a closed network: no sandbox of Chromium's own, nothing fetched in the background
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-extensions", "--mute-audio"]


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium); the browser "
                    "tests need it")
    try:
        from playwright.sync_api import sync_playwright  # optional: the test extra's
    except ImportError:
        pytest.skip("Playwright is not installed (pip install -e '.[test]'); the browser tests "
                    "need it")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A new page (its own context: no cookies or storage shared between tests) whose script
    errors fail the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"the page's script failed: {errors}"
