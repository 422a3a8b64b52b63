"""Private and project items: who reads what, on every read path, decided in the SQL that
answers it. A matrix of callers by visibilities by read paths, each asserting the exact status
and the exact set of ids (and `numberMatched`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from tests.support.http import http_client
from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT, TestIssuer
from tests.support.stac import make_collection, make_item, unique

PROJECT = "ocean-lab"
ITEMS = {"pub": {}, "priv": {"visibility": "private"},
         "proj": {"visibility": "project", "project": PROJECT}}
#: who reads what alice (member of the project) added
READS = {
    "anonymous": {"pub"},
    "alice": {"pub", "priv", "proj"},  # the owner
    "bob": {"pub"},  # another user
    "carol": {"pub", "proj"},  # a member of the project
    "dave": {"pub"},  # a member of another project
    "root": {"pub", "priv", "proj"},  # an administrator
}


@pytest.fixture
async def callers(app, issuer: TestIssuer) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    tokens = {"anonymous": None,
              "alice": issuer.token("alice", groups=[PROJECT], rights=["updateCatalog"]),
              "bob": issuer.token("bob"), "carol": issuer.token("carol", groups=[PROJECT]),
              "dave": issuer.token("dave", groups=["land-lab"]),
              "root": issuer.token("root", rights=[ADMIN_RIGHT])}
    clients = {name: http_client(app, token) for name, token in tokens.items()}
    for client in clients.values():
        await client.__aenter__()
    yield clients
    for client in clients.values():
        await client.__aexit__(None, None, None)


@pytest.fixture
async def shared(callers: dict[str, httpx.AsyncClient]) -> str:
    """A collection holding alice's three items, one of each visibility, and a word."""
    collection = unique("test_conv-visible_")
    r = await callers["root"].post("/data/collections", json=make_collection(collection))
    assert r.status_code == 201, r.text
    for day, (item_id, properties) in enumerate(ITEMS.items(), start=1):
        item = make_item(item_id, day=day)
        item["properties"].update(properties, title=f"lagoon {item_id}")
        r = await callers["alice"].post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text
    return collection


def ids(page: dict[str, Any]) -> set[str]:
    return {feature["id"] for feature in page["features"]}


async def test_every_read_path_shows_each_caller_what_it_may_read(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    c = shared
    searches: dict[str, Callable[[httpx.AsyncClient], Any]] = {
        "items page": lambda h: h.get(f"/data/collections/{c}/items"),
        "GET /search": lambda h: h.get("/data/search", params={"collections": c}),
        "POST /search": lambda h: h.post("/data/search", json={"collections": [c]}),
        "ids": lambda h: h.post("/data/search", json={"ids": list(ITEMS),
                                                      "collections": [c]}),
        "filter": lambda h: h.post("/data/search", json={
            "collections": [c], "filter-lang": "cql2-json",
            "filter": {"op": "=", "args": [{"property": "owner"}, "alice"]}}),
        "query": lambda h: h.post("/data/search", json={
            "collections": [c], "query": {"owner": {"eq": "alice"}}}),
        "owner": lambda h: h.get("/data/search", params={"collections": c, "owner": "alice"}),
        "fields, sortby": lambda h: h.post("/data/search", json={
            "collections": [c], "fields": {"include": ["id"]},
            "sortby": [{"field": "datetime", "direction": "asc"}]}),
        "free text": lambda h: h.get("/data/search", params={"collections": c,
                                                             "q": "lagoon"}),
        "bbox, datetime": lambda h: h.get("/data/search", params={
            "collections": c, "bbox": "-1,-1,2,2", "datetime": "2021-01-01T00:00:00Z/.."}),
    }
    for caller, expected in READS.items():
        client = callers[caller]
        for item_id in ITEMS:
            r = await client.get(f"/data/collections/{c}/items/{item_id}")
            if item_id in expected:
                assert (r.status_code, r.json()["id"]) == (200, item_id), (caller, item_id)
            else:  # hidden: exactly what a missing item answers
                missing = await client.get(f"/data/collections/{c}/items/{item_id}-none")
                assert (r.status_code, r.json()) == (404, {
                    **missing.json(), "description": missing.json()["description"].replace(
                        f"{item_id}-none", item_id)}), (caller, item_id)
        for name, search in searches.items():
            r = await search(client)
            assert r.status_code == 200, (caller, name, r.text)
            page = r.json()
            assert ids(page) == expected, (caller, name)
            assert page["numberMatched"] == len(expected), (caller, name)
        # aggregations count what the caller reads
        r = await client.get(f"/data/collections/{c}/aggregate",
                             params={"aggregations": "total_count"})
        assert r.status_code == 200, r.text
        assert r.json()["aggregations"] == [
            {"name": "total_count", "data_type": "integer", "value": len(expected)}], caller
        # paging one item a page walks exactly the readable items, both ways
        seen: list[str] = []
        page = (await client.get(f"/data/collections/{c}/items", params={"limit": 1})).json()
        while True:
            seen += [f["id"] for f in page["features"]]
            following = [link["href"] for link in page["links"] if link["rel"] == "next"]
            if not following:
                break
            page = (await client.get(following[0])).json()
        assert sorted(seen) == sorted(expected), caller


async def test_collections_listing_shows_collections_with_an_item_the_caller_reads(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """A collection holding only alice's private item is listed for her and admins only;
    one with her project item also for the project's members."""
    hidden = {}
    for name, properties in (("private", ITEMS["priv"]), ("project", ITEMS["proj"])):
        collection = hidden[name] = unique(f"test_conv-only_{name}_")
        r = await callers["root"].post("/data/collections", json=make_collection(collection))
        assert r.status_code == 201, r.text
        item = make_item("only")
        item["properties"].update(properties)
        r = await callers["alice"].post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text
    for caller, expected in READS.items():
        r = await callers[caller].get("/data/collections", params={"limit": 10000})
        assert r.status_code == 200, r.text
        listed = {collection["id"] for collection in r.json()["collections"]}
        assert shared in listed  # it holds a public item
        assert {name for name, c in hidden.items() if c in listed} == {
            name for name, item_id in (("private", "priv"), ("project", "proj"))
            if item_id in expected}, caller
    # an item's visibility changed: the listing follows at once
    r = await callers["alice"].patch(
        f"/data/collections/{hidden['private']}/items/only",
        json={"properties": {"visibility": "public"}})
    assert r.status_code == 200, r.text
    r = await callers["anonymous"].get("/data/collections", params={"limit": 10000})
    assert hidden["private"] in {collection["id"] for collection in r.json()["collections"]}


async def test_items_kept_as_served_never_go_to_another_reader(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """The rendered-items cache is warmed by alice; bob and anonymous still get 404."""
    url = f"/data/collections/{shared}/items/priv"
    for _ in range(2):
        assert (await callers["alice"].get(url)).status_code == 200
        assert ids((await callers["alice"].get(
            f"/data/collections/{shared}/items")).json()) == READS["alice"]
    for caller in ("bob", "anonymous"):
        assert (await callers[caller].get(url)).status_code == 404
        assert ids((await callers[caller].get(
            f"/data/collections/{shared}/items")).json()) == {"pub"}


async def test_a_changed_visibility_takes_effect_at_once(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    url = f"/data/collections/{shared}/items/pub"
    assert (await callers["anonymous"].get(url)).status_code == 200
    r = await callers["alice"].patch(url, json={"properties": {"visibility": "private"}})
    assert r.status_code == 200, r.text
    assert (await callers["anonymous"].get(url)).status_code == 404
    assert (await callers["carol"].get(url)).status_code == 404
    assert ids((await callers["anonymous"].get(
        "/data/search", params={"collections": shared})).json()) == set()
    # an administrator may change it too; project members read it then
    r = await callers["root"].patch(url, json={"properties": {
        "visibility": "project", "project": PROJECT}})
    assert r.status_code == 200, r.text
    assert (await callers["carol"].get(url)).status_code == 200
    assert (await callers["dave"].get(url)).status_code == 404


async def test_visibility_is_checked_when_written(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    url = f"/data/collections/{shared}/items"
    item = make_item("odd")
    item["properties"]["visibility"] = "secret"
    r = await callers["alice"].post(url, json=item)
    assert (r.status_code, r.json()["description"]) == (
        400, "Item 'odd': properties.visibility is one of private, project, public, not "
             "'secret'.")
    item["properties"]["visibility"] = "project"
    r = await callers["alice"].post(url, json=item)
    assert (r.status_code, r.json()["description"]) == (
        400, "Item 'odd': visibility `project` names the project whose members read it in "
             "properties.project.")
    item["properties"]["project"] = "land-lab"  # not one of alice's groups
    r = await callers["alice"].post(url, json=item)
    assert (r.status_code, r.json()["description"]) == (
        403, "You are not a member of the project 'land-lab': only its members share items "
             "with it.")
    r = await callers["alice"].post(f"{url}/../bulk_items", json={
        "items": {"odd": {**item, "collection": shared}}, "method": "insert"})
    assert r.status_code == 200, r.text
    assert r.json()["errors"] == [{"id": "odd", "msg": "You are not a member of the project "
                                   "'land-lab': only its members share items with it."}]
    assert (await callers["root"].get(f"{url}/odd")).status_code == 404  # nothing written
    # the project's member may
    r = await callers["dave"].post(url, json=item)
    assert r.status_code == 201, r.text


async def test_a_bad_token_on_a_read_is_refused(app, issuer: TestIssuer, shared: str) -> None:
    """Never read as anonymous: an expired token is a 401, another client's a 403."""
    url = f"/data/collections/{shared}/items"
    async with http_client(app, issuer.token("alice", ttl=-60)) as c:
        r = await c.get(url)
        assert r.status_code == 401
        assert r.json()["description"].startswith("Authentication required: ")
    async with http_client(app, issuer.token("alice", client=PROCESS_CLIENT)) as c:
        r = await c.get(url)
        assert (r.status_code, r.json()["description"]) == (
            403, "This API needs a token issued to the client 'geocatalog'.")


def linked(document: dict[str, Any], rel: str) -> set[str]:
    return {link["href"].rsplit("/", 1)[1] for link in document["links"] if link["rel"] == rel}


async def test_catalogs_show_each_caller_what_it_may_read(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """A public catalog of alice's with a private and a project sub-catalog, and links to
    her three items: each caller sees the catalogs and links it may read; a hidden catalog
    is 404 everywhere (document, `_search`, writes), as a missing one."""
    top = unique("vis-")
    alice = callers["alice"]
    items = [{"rel": "item", "href": f"http://testserver/data/collections/{shared}/items/{i}"}
             for i in ITEMS]
    r = await alice.post("/data/catalogs", json={
        "type": "Catalog", "id": top, "description": "shared", "links": items})
    assert r.status_code == 201, r.text
    for child, fields in (("secret", {"visibility": "private"}),
                          ("team", {"visibility": "project", "project": PROJECT})):
        r = await alice.post(f"/data/catalogs/{top}", json={
            "type": "Catalog", "id": child, "description": child, **fields,
            "links": items})
        assert r.status_code == 201, r.text
        assert r.json()["visibility"] == fields["visibility"]
    r = await alice.post("/data/catalogs", json={
        "type": "Catalog", "id": f"{top}-own", "description": "mine",
        "visibility": "private"})
    assert r.status_code == 201, r.text
    catalogs = {"anonymous": set(), "alice": {"secret", "team"}, "bob": set(),
                "carol": {"team"}, "dave": set(), "root": {"secret", "team"}}
    for caller, children in catalogs.items():
        client = callers[caller]
        document = (await client.get(f"/data/catalogs/{top}")).json()
        assert linked(document, "child") == children, caller
        assert linked(document, "item") == READS[caller], caller
        r = await client.get(f"/data/catalogs/{top}/_search")
        assert ids(r.json()) == READS[caller], caller
        root = (await client.get("/data/catalogs")).json()
        assert (f"{top}-own" in linked(root, "child")) == (caller in ("alice", "root")), caller
        assert top in linked(root, "child")
        for child in ("secret", "team"):
            path = f"/data/catalogs/{top}/{child}"
            for url in (path, f"{path}/_search"):
                r = await client.get(url)
                if child in children:
                    assert r.status_code == 200, (caller, url)
                else:  # as a missing catalog
                    assert (r.status_code, r.json()) == (404, {
                        "code": "NotFoundError",
                        "description": f"Catalog {top}/{child} does not exist."}), (caller, url)
    # a write to a hidden catalog is a 404 too (never a 403 saying it exists)
    r = await callers["bob"].put(f"/data/catalogs/{top}/secret", json={
        "type": "Catalog", "id": "secret", "description": "bob's now"})
    assert (r.status_code, r.json()["description"]) == (
        404, f"Catalog {top}/secret does not exist.")
    r = await callers["carol"].delete(f"/data/catalogs/{top}/secret")
    assert r.status_code == 404
    # changing a catalog's visibility is a write like any other, seen at once
    r = await alice.put(f"/data/catalogs/{top}/secret", json={
        "type": "Catalog", "id": "secret", "description": "open now", "visibility": "public"})
    assert r.status_code == 200, r.text
    assert (await callers["anonymous"].get(f"/data/catalogs/{top}/secret")).status_code == 200
    r = await alice.put(f"/data/catalogs/{top}/secret", json={
        "type": "Catalog", "id": "secret", "description": "x", "visibility": "project"})
    assert (r.status_code, r.json()["description"]) == (
        400, "visibility `project`: the catalog belongs to no project (name one with "
             "`project` when creating it).")


async def test_a_write_to_a_hidden_item_is_a_404(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """As to a missing item: a caller who may not read it learns nothing of it; one who
    reads it but does not own it is refused (403), as for public items."""
    url = f"/data/collections/{shared}/items"
    missing = (await callers["bob"].delete(f"{url}/none")).json()
    for method, body in (("PUT", make_item("priv")), ("PATCH", {"properties": {"a": 1}}),
                         ("DELETE", None)):
        r = await callers["bob"].request(method, f"{url}/priv", json=body)
        assert (r.status_code, r.json()) == (404, {
            **missing, "description": missing["description"].replace("none", "priv")}), method
    r = await callers["carol"].patch(f"{url}/proj", json={"properties": {"a": 1}})
    assert (r.status_code, r.json()["description"]) == (
        403, "Only its owner or an administrator may change this item.")
    assert (await callers["alice"].get(f"{url}/priv")).json()["properties"].get("a") is None


async def test_a_paging_token_naming_a_hidden_item_is_a_missing_items(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """A token is `next:<collection>:<item id>` in hex: one naming an item the caller
    cannot read answers what one naming no item answers (it answered 200, positioned at the
    hidden item's sort keys: its datetime could be bisected)."""
    def token(item_id: str) -> str:
        return f"next:{shared.encode().hex()}:{item_id.encode().hex()}"

    for caller, expected in READS.items():
        client = callers[caller]
        for item_id in ITEMS:
            for read in (lambda t, c=client: c.get("/data/search", params={
                             "sortby": "+datetime", "token": t}),
                         lambda t, c=client: c.post("/data/search", json={
                             "sortby": [{"field": "datetime", "direction": "asc"}],
                             "token": t}),
                         lambda t, c=client: c.get(f"/data/collections/{shared}/items",
                                                   params={"token": t})):
                r = await read(token(item_id))
                if item_id in expected:
                    assert r.status_code == 200, (caller, item_id, r.text)
                    continue
                missing = await read(token(f"{item_id}-none"))
                assert missing.status_code == 400, missing.text
                assert (r.status_code, r.json()) == (400, {
                    **missing.json(), "description": missing.json()["description"].replace(
                        token(f"{item_id}-none"), token(item_id))}), (caller, item_id)


async def test_a_catalog_link_to_a_hidden_item_is_a_link_to_a_missing_one(
        callers: dict[str, httpx.AsyncClient], shared: str) -> None:
    """A catalog linking an item its writer cannot read was made (201) where a missing one
    was refused (400): the link confirmed the item, and showed it to the catalog's readers."""
    bob = callers["bob"]
    for item_id in ("priv", "proj"):
        answers = []
        for target in (item_id, f"{item_id}-none"):
            name = unique("linking-")
            r = await bob.post("/data/catalogs", json={
                "id": name, "type": "Catalog", "description": "links",
                "links": [{"rel": "item", "href": f"collections/{shared}/items/{target}"}]})
            answers.append((r.status_code, r.json()["description"].replace(
                f"{item_id}-none", item_id)))
        assert answers[0] == answers[1] == (
            400, f"Links to what does not exist: item {shared}/{item_id}"), answers
    # what the caller reads links as before
    r = await callers["carol"].post("/data/catalogs", json={
        "id": unique("linking-"), "type": "Catalog", "description": "links",
        "links": [{"rel": "item", "href": f"collections/{shared}/items/proj"}]})
    assert r.status_code == 201, r.text
