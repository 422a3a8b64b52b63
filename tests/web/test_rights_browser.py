"""Rights before the click: a catalog's owner signed in without `updateCatalog` is offered
what she may do (a sub-catalog, deleting it) and told which right editing needs and how she
gets it; signed in again with that right, she edits it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from stac_ext.settings import Settings
from tests.support.browser import BROWSER_TESTS, chromium
from tests.support.cli import run_cli
from tests.support.cluster import new_database
from tests.support.http import signing_in_locally

pytestmark = BROWSER_TESTS


#: STAC fields the page does not edit, which its edit keeps.
KEPT = {"keywords": ["notes", "ocean"], "license": "CC-BY-4.0",
        "stac_extensions": ["https://stac-extensions.github.io/version/v1.2.0/schema.json"]}


@pytest.fixture(scope="module")
def service(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A service with the local issuer, where bob owns the catalog `bobs-notes`."""
    url = new_database(settings.database_url or "", "rightsweb_")
    assert run_cli("migrate", env={"DATABASE_URL": url}).returncode == 0
    with signing_in_locally(settings, tmp_path_factory.mktemp("rights-web"),
                            DATABASE_URL=url) as (base, issuer):
        token = issuer.mint("bob", settings.data_client_id)
        r = httpx.post(f"{base}/data/catalogs", headers={"Authorization": f"Bearer {token}"},
                       json={"id": "bobs-notes", "type": "Catalog", "description": "Notes",
                             **KEPT})
        assert r.status_code == 201, r.text
        yield base


def sign_in(page: Page, user: str, rights: str = "") -> None:
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("DEVELOPMENT ONLY.")).to_be_visible()
    page.get_by_label("User name").fill(user)
    page.get_by_label("Rights").fill(rights)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {user}")).to_be_visible()


def test_the_owner_is_offered_what_her_rights_allow(service: str) -> None:
    with chromium() as browser:
        page = browser.new_page()
        page.route("**/*", lambda route: route.continue_()
                   if route.request.url.startswith((service, "data:")) else route.abort())
        page.goto(f"{service}/ui/catalogs/bobs-notes", wait_until="networkidle")
        sign_in(page, "bob")
        expect(page.get_by_role("heading", name="New sub-catalog")).to_be_visible()
        expect(page.get_by_role("heading", name="Delete")).to_be_visible()
        expect(page.locator("#edit-catalog")).to_be_hidden()
        expect(page.locator("#replace-links")).to_be_hidden()
        expect(page.locator("#needs-right")).to_have_text(
            "Editing its title, description, readers or links also needs the right "
            "updateCatalog, which your sign-in does not hold: sign out, then sign in again "
            "choosing that right. You may add a sub-catalog, or delete this catalog.",
            use_inner_text=True)
        # signed in again with the right: she edits it
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        page.goto(f"{service}/ui/catalogs/bobs-notes", wait_until="networkidle")
        sign_in(page, "bob", "updateCatalog")
        expect(page.locator("#needs-right")).to_be_hidden()
        form = page.locator("#edit-catalog")
        form.get_by_label("Title").fill("Bob's notes")
        form.get_by_role("button", name="Save").click()
        expect(page.get_by_role("heading", name="Bob's notes")).to_be_visible()
        # what the page does not edit is kept (it sent a body of its fields only, and the
        # PUT, which replaces, dropped the rest)
        stored = httpx.get(f"{service}/data/catalogs/bobs-notes").json()
        assert {key: stored.get(key) for key in (*KEPT, "title", "description")} == {
            **KEPT, "title": "Bob's notes", "description": "Notes"}
