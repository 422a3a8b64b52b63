"""Subscriptions in a browser (Debian's Chromium, Playwright), against a real uvicorn and a
real webhook receiver on loopback: alice saves a search page's search with "Notify me",
an item arrives, and her subscriptions page shows its delivery; she pauses, resumes and
deletes it. "Process new data" with a process that takes no file says so once chosen, and
the API's words when sent."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium, page_of, shot, sign_in
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.http import signing_in_locally
from tests.support.paths import ROOT
from tests.support.receiver import Receiver, receiving
from tests.support.stac import make_collection, make_item

pytestmark = BROWSER_TESTS

COLLECTION = "test_conv-followed"
SHOTS = ROOT / ".artifacts" / "web-subscriptions"


@pytest.fixture(scope="module")
def service(settings: Settings, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[str, str]]:
    """The service with the local issuer and a collection: its address, and alice's data
    token."""
    url = new_database(settings.database_url or "", "subsweb_")
    assert run_cli("migrate", env={"DATABASE_URL": url}).returncode == 0
    with signing_in_locally(settings, tmp_path_factory.mktemp("subs-web"), DATABASE_URL=url,
                            SUBSCRIPTIONS_POLL_SECONDS="0.2") as (base, issuer):
        admin = issuer.mint("root", settings.data_client_id, rights=[settings.admin_right])
        r = httpx.post(f"{base}/data/collections", json=make_collection(COLLECTION),
                       headers={"Authorization": f"Bearer {admin}"})
        assert r.status_code == 201, r.text
        yield base, issuer.mint("alice", settings.data_client_id)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


def test_notify_me_saves_the_search_and_its_page_shows_a_delivery(
        service: tuple[str, str], receiver: Receiver) -> None:
    base, alice = service
    with chromium() as browser:
        page, errors = page_of(browser, base)
        page.goto(f"{base}/ui/search?collections={COLLECTION}&bbox=0,0,10,10",
                  wait_until="networkidle")
        expect(page.locator("#follow")).to_be_hidden()  # signed out: nothing to save
        sign_in(page, "alice")
        follow = page.locator("#follow")
        expect(follow).to_be_visible()
        follow.get_by_label("Name").fill("Near the equator")
        follow.get_by_label("Webhook").fill(f"{receiver.url}/browser")
        follow.get_by_role("button", name="Notify me").click()
        expect(page.locator("#follow-done")).to_be_visible()
        expect(page.locator("#follow-secret-value")).to_have_text(re.compile(r"^whsec_"))
        shot(page, SHOTS, "saved")

        # an item arrives in the search: the receiver is told
        r = httpx.post(f"{base}/data/collections/{COLLECTION}/items",
                       json=make_item("equator-1", x=1),
                       headers={"Authorization": f"Bearer {alice}"})
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 60
        while not receiver.accepted() and time.monotonic() < deadline:
            time.sleep(0.1)
        [told] = receiver.accepted()
        assert told.event().get_data()["id"] == "equator-1"

        # her subscriptions page shows it, with its delivery
        page.get_by_role("link", name="your subscriptions").click()
        card = page.locator("article.subscription")
        expect(card.get_by_role("heading", name="Near the equator")).to_be_visible()
        expect(card.locator(".status")).to_have_text("active")
        deliveries = card.locator("table").first
        expect(deliveries.locator("tbody tr")).to_have_count(1)
        expect(deliveries.locator("tbody tr").first).to_contain_text("created")
        expect(deliveries.locator("tbody tr").first).to_contain_text(
            f"{COLLECTION}/equator-1")
        expect(deliveries.locator("tbody tr").first).to_contain_text("200")
        shot(page, SHOTS, "subscriptions")

        # pause, resume, delete
        card.get_by_role("button", name="Pause").click()
        expect(card.locator(".status")).to_have_text("paused")
        expect(card.locator(".paused-reason")).to_have_text("Paused by its owner.")
        card.get_by_role("button", name="Resume").click()
        expect(card.locator(".status")).to_have_text("active")
        card.get_by_role("button", name="Delete").click()
        expect(page.locator("#no-subscriptions")).to_be_visible()
        expect(page.locator("article.subscription")).to_have_count(0)

        # "Process new data" with a process that takes no file: the API's words
        page.goto(f"{base}/ui/search?collections={COLLECTION}", wait_until="networkidle")
        follow = page.locator("#follow")
        expect(follow).to_be_visible()
        follow.get_by_label("Process", exact=True).select_option("echo")
        expect(page.locator("#follow-process-files")).to_have_text(
            "This process takes no files: choose one with a file input.")
        follow.get_by_role("button", name="Process new data").click()
        expect(page.locator("#follow-error")).to_contain_text(
            "job.itemsInput: the process echo has no file input 'files'")
        assert errors == []
