"""Subscriptions to a search, told through a real webhook receiver on loopback and the
feed: exactly the created, updated and deleted events of matching items, signed (Standard
Webhooks' verifier accepts them, a wrong secret or body is detected), as CloudEvents (the
SDK reads them), never naming an item the subscriber may not read when it is sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.support.cluster import migrated_database
from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, TestIssuer
from tests.support.receiver import Receiver, receiving
from tests.support.stac import make_collection, make_item, unique

ASYNCAPI_SCHEMA = Path(__file__).parents[1] / "conformance" / "schemas" / "asyncapi" / \
    "3.0.0-without-id.json"


@pytest.fixture(scope="module")
def database(database_url: str) -> str:
    return migrated_database(database_url, "subs_")


@pytest.fixture(scope="module")
async def service(service_app, database: str) -> AsyncIterator[Any]:
    """The service on a database of its own (its dispatcher the only one there), quick to
    retry."""
    async with service_app(database=database, subscriptions_poll_seconds=0.1,
                           webhook_retry_seconds=0.2, webhook_retry_max_seconds=1) as started:
        yield started.app


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as found:
        yield found


@pytest.fixture
async def clients(service, issuer: TestIssuer) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    made = {"alice": http_client(service, issuer.token("alice", groups=["ocean-lab"])),
            "bob": http_client(service, issuer.token("bob")),
            "carol": http_client(service, issuer.token("carol", groups=["ocean-lab"])),
            "admin": http_client(service, issuer.token("root", rights=[ADMIN_RIGHT])),
            "anonymous": http_client(service)}
    try:
        yield made
    finally:
        for client in made.values():
            await client.aclose()


async def new_collection(admin: httpx.AsyncClient) -> str:
    collection = unique("test_conv-subs_")
    r = await admin.post("/data/collections", json=make_collection(collection))
    assert r.status_code == 201, r.text
    return collection


async def subscribe(client: httpx.AsyncClient, search: dict, webhook: str | None = None,
                    **more: Any) -> dict:
    r = await client.post("/data/subscriptions", json={
        "search": search, **({"webhook": webhook} if webhook else {}), **more})
    assert r.status_code == 201, r.text
    assert r.headers["Location"] == r.json()["links"][0]["href"]
    return r.json()


def item(item_id: str, x: float = 1.0, **properties: Any) -> dict:
    doc = make_item(item_id, x=x)
    doc["properties"].update(properties)
    return doc


async def quiet(seconds: float = 1.5) -> None:
    """Long enough for the dispatcher (polling every 0.1 s) to match and send anything."""
    await asyncio.sleep(seconds)


async def test_a_webhook_receives_exactly_the_matching_events_signed(clients, receiver):
    alice, admin = clients["alice"], clients["admin"]
    collection, other = await new_collection(admin), await new_collection(admin)
    made = await subscribe(alice, {"collections": [collection], "bbox": [0, 0, 10, 10]},
                           f"{receiver.url}/alice", title="My region")
    secret = made["secret"]
    assert secret.startswith("whsec_")
    assert (made["title"], made["status"], made["kinds"]) == (
        "My region", "active", ["created", "updated", "deleted"])
    # the secret is shown once
    again = (await alice.get(made["links"][0]["href"].removeprefix("http://testserver"))).json()
    assert "secret" not in again and again["id"] == made["id"]

    base = f"/data/collections/{collection}/items"
    assert (await alice.post(base, json=item("in", x=1))).status_code == 201
    assert (await alice.post(base, json=item("out", x=50))).status_code == 201  # elsewhere
    assert (await alice.post(f"/data/collections/{other}/items",
                             json=item("in", x=1))).status_code == 201  # another collection
    changed = item("in", x=2, title="moved")
    changed["collection"] = collection
    assert (await alice.put(f"{base}/in", json=changed)).status_code == 200
    assert (await alice.delete(f"{base}/in")).status_code == 204

    received = await receiver.wait_for(3)
    await quiet()
    assert len(receiver.received) == 3  # nothing else, and each once
    events = [r.event() for r in received]
    assert [e.get_type() for e in events] == [
        "org.geocatalog.item.created", "org.geocatalog.item.updated",
        "org.geocatalog.item.deleted"]
    subscription_url = made["links"][0]["href"]
    for r, event in zip(received, events, strict=True):
        assert r.path == "/alice"
        assert r.headers["content-type"].startswith("application/cloudevents+json")
        assert event.get_source() == subscription_url
        assert event.get_subject() == f"collections/{collection}/items/in"
        data = event.get_data()
        assert (data["collection"], data["id"]) == (collection, "in")
        assert data["links"][0] == {"rel": "self", "type": "application/geo+json",
                                    "href": f"http://testserver{base}/in"}
        assert set(data) == {"kind", "collection", "id", "links"}  # no item body
        # signed: Standard Webhooks' verifier accepts it with her secret
        assert r.verified(secret)["id"] == event.get_id()
        assert r.headers["webhook-id"] == event.get_id()
        # and refuses it with another secret, or another body
        with pytest.raises(WebhookVerificationError):
            Webhook("whsec_" + "QUFB" * 8).verify(r.body, r.headers)
        with pytest.raises(WebhookVerificationError):
            Webhook(secret).verify(r.body.replace(b"in", b"ni"), r.headers)
    assert [e.get_extension("sequence") for e in events] == ["1", "2", "3"]
    assert len({e.get_id() for e in events}) == 3

    # her delivery log: each attempt, its status
    log = (await alice.get(f"/data/subscriptions/{made['id']}/deliveries")).json()
    assert [(d["sequence"], d["status"], d["error"]) for d in log["deliveries"]] == [
        (3, 200, None), (2, 200, None), (1, 200, None)]
    mine = (await alice.get(f"/data/subscriptions/{made['id']}")).json()
    assert mine["delivery"]["sent"] == 3 and mine["delivery"]["waiting"] == 0


async def test_no_event_names_an_item_the_subscriber_cannot_read(clients, receiver):
    """bob's subscription never hears of alice's private items nor of her project's; alice
    hears of her own private item, carol of her project's."""
    alice, bob, carol = clients["alice"], clients["bob"], clients["carol"]
    collection = await new_collection(clients["admin"])
    search = {"collections": [collection]}
    for name, client in (("alice", alice), ("bob", bob), ("carol", carol)):
        await subscribe(client, search, f"{receiver.url}/{name}")
    base = f"/data/collections/{collection}/items"
    assert (await alice.post(base, json=item("private", visibility="private"))).status_code \
        == 201
    assert (await alice.post(base, json=item(
        "project", visibility="project", project="ocean-lab"))).status_code == 201
    assert (await alice.post(base, json=item("public"))).status_code == 201
    heard = {name: [r.event().get_data()["id"] for r in await receiver.wait_for(n, f"/{name}")]
             for name, n in (("alice", 3), ("carol", 2), ("bob", 1))}
    await quiet()
    assert heard == {"alice": ["private", "project", "public"],
                     "carol": ["project", "public"], "bob": ["public"]}
    assert len(receiver.received) == 6


async def test_a_private_item_made_public_is_announced_then_not_before(clients, receiver):
    alice, bob = clients["alice"], clients["bob"]
    collection = await new_collection(clients["admin"])
    made = await subscribe(bob, {"collections": [collection]}, f"{receiver.url}/bob")
    base = f"/data/collections/{collection}/items"
    assert (await alice.post(base, json=item("later", visibility="private"))).status_code \
        == 201
    await quiet()
    assert receiver.received == []
    feed = (await bob.get(f"/data/subscriptions/{made['id']}/events")).json()
    assert feed["events"] == []
    public = item("later", visibility="public")
    public["collection"] = collection
    assert (await alice.put(f"{base}/later", json=public)).status_code == 200
    [told] = await receiver.wait_for(1)
    assert told.event().get_type() == "org.geocatalog.item.updated"
    await quiet()
    assert len(receiver.received) == 1


async def test_an_item_made_private_before_delivery_is_not_announced(service, clients,
                                                                     receiver):
    """Visibility is checked as the event is sent: an event waiting for a paused webhook
    is not sent once its item is private."""
    alice, bob = clients["alice"], clients["bob"]
    collection = await new_collection(clients["admin"])
    made = await subscribe(bob, {"collections": [collection]}, f"{receiver.url}/bob")
    url = f"/data/subscriptions/{made['id']}"
    assert (await bob.patch(url, json={"status": "paused"})).json()["pausedReason"] == \
        "Paused by its owner."
    base = f"/data/collections/{collection}/items"
    for name in ("stays", "hidden"):
        assert (await alice.post(base, json=item(name))).status_code == 201
    await quiet()
    assert receiver.received == []
    hidden = item("hidden", visibility="private")
    hidden["collection"] = collection
    assert (await alice.put(f"{base}/hidden", json=hidden)).status_code == 200
    await quiet()
    resumed = (await bob.patch(url, json={"status": "active"})).json()
    assert (resumed["status"], resumed["pausedReason"]) == ("active", None)
    await receiver.wait_for(1)
    await quiet()
    assert [r.event().get_data()["id"] for r in receiver.received] == ["stays"]


async def test_the_feed_pages_through_the_same_events(clients, receiver):
    alice = clients["alice"]
    collection = await new_collection(clients["admin"])
    made = await subscribe(alice, {"collections": [collection], "q": "salinity"},
                           f"{receiver.url}/feed")
    base = f"/data/collections/{collection}/items"
    for n in range(25):
        words = "sea water salinity" if n % 5 else "temperature"
        assert (await alice.post(base, json=item(f"i{n:02d}", title=words))).status_code \
            == 201
    sent = [r.event() for r in await receiver.wait_for(20)]
    await quiet()
    events: list[dict] = []
    url: str | None = f"/data/subscriptions/{made['id']}/events?limit=7"
    pages = 0
    while url:
        page = (await alice.get(url)).json()
        events += page["events"]
        pages += 1
        following = [link for link in page["links"] if link["rel"] == "next"]
        url = following[0]["href"].removeprefix("http://testserver") if following else None
    assert pages == 3  # 7, 7 and 6 events
    assert [e["data"]["id"] for e in events] == [f"i{n:02d}" for n in range(25) if n % 5]
    assert [e["id"] for e in events] == [e.get_id() for e in sent]
    assert [e["sequence"] for e in events] == [str(n) for n in range(1, 21)]
    # from a cursor
    later = (await alice.get(f"/data/subscriptions/{made['id']}/events",
                             params={"after": 18})).json()
    assert [e["sequence"] for e in later["events"]] == ["19", "20"]
    assert later["cursor"] == 20 and [link["rel"] for link in later["links"]] == ["self"]
    # bob: no such subscription
    assert (await clients["bob"].get(f"/data/subscriptions/{made['id']}/events")
            ).status_code == 404


async def test_subscriptions_are_hers_to_read_change_and_delete(clients, receiver):
    alice, bob, anonymous = clients["alice"], clients["bob"], clients["anonymous"]
    collection = await new_collection(clients["admin"])
    made = await subscribe(alice, {
        "collections": [collection], "datetime": "2021-01-01T00:00:00Z/..",
        "filter": "eo:cloud_cover < 10", "filter-lang": "cql2-text", "owner": "alice"})
    assert made["search"] == {
        "collections": [collection], "datetime": "2021-01-01T00:00:00Z/..", "owner": "alice",
        "filter-lang": "cql2-json",
        "filter": {"op": "<", "args": [{"property": "eo:cloud_cover"}, 10]}}
    assert "secret" not in made and "delivery" not in made
    url = f"/data/subscriptions/{made['id']}"
    listed = (await alice.get("/data/subscriptions")).json()
    assert made["id"] in [s["id"] for s in listed["subscriptions"]]
    assert made["id"] not in [s["id"] for s in (await bob.get("/data/subscriptions")).json()[
        "subscriptions"]]
    for method in ("get", "delete"):
        r = await getattr(bob, method)(url)
        assert (r.status_code, r.json()["code"]) == (404, "NotFound")
    assert (await bob.patch(url, json={"title": "mine"})).status_code == 404
    r = await anonymous.get(url)
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
    changed = (await alice.patch(url, json={"title": "clear skies", "kinds": ["created"],
                                            "webhook": f"{receiver.url}/later"})).json()
    assert (changed["title"], changed["kinds"], changed["webhook"]) == (
        "clear skies", ["created"], f"{receiver.url}/later")
    r = await alice.post(f"{url}/secret")
    assert r.status_code == 200 and r.json()["secret"].startswith("whsec_")
    assert (await alice.delete(url)).status_code == 204
    assert (await alice.get(url)).status_code == 404


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"search": {"collections": ["test_conv-nothing_here"]}}, 404, "search: "),
    ({"search": {"filter": "eo:cloud_cover <", "filter-lang": "cql2-text"}}, 400,
     "Invalid filter"),
    ({"search": {"datetime": "2021-13-45"}}, 400, "search: "),
    ({"search": {"bbox": [0, 0, 1]}}, 400, "bbox"),
    ({"search": {"catalog": "no-such-catalog"}}, 404, "search: "),
    ({"search": {}, "webhook": "http://169.254.169.254/latest"}, 400,
     "webhook: The address cannot be reached"),
    ({"search": {}, "webhook": "https://hook:s3cret@example.org/in"}, 400,
     "webhook: the URL holds a user name or password, which the service never sends nor "
     "keeps: each delivery is signed (`webhook-signature`, with the subscription's secret) "
     "for its receiver to check"),
    ({"search": {}, "kinds": ["made"]}, 400, "kinds"),
    ({"search": {}, "surprise": 1}, 400, "surprise"),
])
async def test_what_cannot_be_subscribed_to_is_refused_clearly(clients, body, status, says):
    r = await clients["alice"].post("/data/subscriptions", json=body)
    assert r.status_code == status, r.text
    assert says in r.json()["description"]


async def test_the_asyncapi_document_describes_the_channels(clients):
    r = await clients["anonymous"].get("/data/subscriptions/asyncapi")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/asyncapi+json"
    document = r.json()
    schema = json.loads(ASYNCAPI_SCHEMA.read_text())
    jsonschema.Draft7Validator(schema).validate(document)
    assert set(document["channels"]) == {"webhook", "feed"}
    payload = document["components"]["messages"]["itemEvent"]["payload"]
    assert payload["properties"]["type"]["enum"] == [
        "org.geocatalog.item.created", "org.geocatalog.item.updated",
        "org.geocatalog.item.deleted"]
    # the OpenAPI document has the routes
    paths = (await clients["anonymous"].get("/data/api")).json()["paths"]
    assert {"/data/subscriptions", "/data/subscriptions/{subscription}",
            "/data/subscriptions/{subscription}/events"} <= set(paths)


async def test_a_failing_receiver_is_retried_then_paused_and_told(service_app, database_url,
                                                                 issuer, receiver):
    """Its webhook failing for WEBHOOK_PAUSE_AFTER_SECONDS, a subscription is paused, its
    page says why; resumed, every waiting event is sent."""
    # a database of its own: this service (pausing after 2 s) is the only dispatcher there,
    # not racing the module's (pausing after a day) for each attempt
    async with service_app(database=migrated_database(database_url, "subs_pause_"),
                           subscriptions_poll_seconds=0.1, webhook_retry_seconds=0.2,
                           webhook_retry_max_seconds=0.5,
                           webhook_pause_after_seconds=2) as service:
        alice = service.client(issuer.token("alice"))
        collection = await new_collection(service.client(issuer.token(
            "root", rights=[ADMIN_RIGHT])))
        made = await subscribe(alice, {"collections": [collection]},
                               f"{receiver.url}/failing")
        receiver.status = 500
        base = f"/data/collections/{collection}/items"
        for n in range(3):
            assert (await alice.post(base, json=item(f"f{n}"))).status_code == 201
        url = f"/data/subscriptions/{made['id']}"
        while (now := (await alice.get(url)).json())["status"] != "paused":
            await asyncio.sleep(0.2)
        assert now["pausedReason"].startswith("Paused by the service")
        assert "answered 500" in now["pausedReason"]
        assert now["delivery"]["failures"] >= 2 and now["delivery"]["waiting"] == 3
        log = (await alice.get(f"{url}/deliveries")).json()["deliveries"]
        assert {(d["sequence"], d["status"]) for d in log} == {(1, 500)}  # the first, again
        assert "answered 500" in log[0]["error"]
        attempts = len(receiver.received)
        await quiet()
        assert len(receiver.received) == attempts  # paused: nothing is sent
        receiver.status = 200
        assert (await alice.patch(url, json={"status": "active"})).status_code == 200
        told = await receiver.wait_for(3)
        assert [r.event().get_data()["id"] for r in told] == ["f0", "f1", "f2"]
