"""Debian's Chromium, driven by Playwright, for the tests of pages (Playwright's own
download is not reachable here)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
#: A module of browser tests: marked so, and skipped where Debian's chromium is missing.
BROWSER_TESTS = [pytest.mark.browser,
                 pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                    reason="Debian's chromium (make test installs it)")]
#: Nothing of the browser's own reaches outside this machine.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def page_of(browser: Browser, base: str) -> tuple[Page, list[str]]:
    """A new page that reaches only the service at `base` (and `data:` addresses), and the
    list its scripts' uncaught errors are added to."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_()
               if route.request.url.startswith((base, "data:")) else route.abort())
    return page, errors


def sign_in(page: Page, user: str) -> None:
    """Signed in as `user` through the service's local development issuer's form."""
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill(user)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {user}")).to_be_visible()


def shot(page: Page, folder: Path, name: str) -> None:
    """The whole page as `folder/name.png` (for a person to look at)."""
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=folder / f"{name}.png", full_page=True)
