"""Project catalogs governed by their members, and item search inside a catalog's subtree
(`/data/catalogs/{path}/_search`), on a real database and a real uvicorn for pystac-client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pystac_client
import pytest

from tests.support.http import http_client
from tests.support.stac import make_collection, make_item, unique

PROJECT = "ocean-lab"
SEARCH_CLASSES = {"https://api.stacspec.org/v1.0.0/core",
                  "https://api.stacspec.org/v1.0.0/item-search",
                  "https://api.stacspec.org/v1.0.0-rc.2/item-search#filter"}


def catalog(cid: str, **fields: object) -> dict:
    return {"id": cid, "type": "Catalog", "description": f"catalog {cid}", **fields}


@pytest.fixture
async def carol_data(app, issuer) -> AsyncIterator[httpx.AsyncClient]:
    """carol on the data API: a member of ocean-lab, with the `updateCatalog` right."""
    token = issuer.token("carol", groups=[PROJECT], rights=["updateCatalog"])
    async with http_client(app, token) as c:
        yield c


@pytest.fixture
async def dana_data(app, issuer) -> AsyncIterator[httpx.AsyncClient]:
    """dana on the data API: in ocean-lab and ice-lab."""
    async with http_client(app, issuer.token("dana", groups=[PROJECT, "ice-lab"])) as c:
        yield c


@pytest.fixture
async def bob_editor_data(app, issuer) -> AsyncIterator[httpx.AsyncClient]:
    """bob on the data API with `updateCatalog`, in no project."""
    async with http_client(app, issuer.token("bob", rights=["updateCatalog"])) as c:
        yield c


async def test_members_govern_a_project_catalog(dana_data, carol_data, bob_editor_data,
                                                anon) -> None:
    top = unique("lab-")
    r = await dana_data.post("/data/catalogs", json=catalog(top, project=PROJECT))
    assert r.status_code == 201, r.text
    assert (r.json()["owner"], r.json()["project"]) == ("dana", PROJECT)

    # another member adds a child: it belongs to the project too
    r = await carol_data.post(f"/data/catalogs/{top}", json=catalog("cruise"))
    assert r.status_code == 201, r.text
    assert (r.json()["owner"], r.json()["project"]) == ("carol", PROJECT)
    # a child may name another project of its creator's
    r = await dana_data.post(f"/data/catalogs/{top}", json=catalog("ice", project="ice-lab"))
    assert (r.status_code, r.json()["project"]) == (201, "ice-lab")
    r = await carol_data.post(f"/data/catalogs/{top}", json=catalog("x", project="ice-lab"))
    assert r.status_code == 403
    assert r.json() == {"code": "Forbidden", "description": "You are not a member of the "
                        "project 'ice-lab': only its members share catalogs with it."}

    # a member with updateCatalog updates what another member created
    r = await carol_data.put(f"/data/catalogs/{top}",
                             json=catalog(top, description="shared", project=PROJECT))
    assert (r.status_code, r.json()["description"]) == (200, "shared")
    r = await carol_data.put(f"/data/catalogs/{top}", json=catalog(top, project="ice-lab"))
    assert r.status_code == 400
    assert r.json()["description"].startswith("A catalog stays in the project")

    # non-members: 403 and nothing changes
    r = await bob_editor_data.post(f"/data/catalogs/{top}", json=catalog("bobs"))
    assert r.status_code == 403
    r = await bob_editor_data.put(f"/data/catalogs/{top}", json=catalog(top, description="b"))
    assert r.status_code == 403
    assert (await bob_editor_data.delete(f"/data/catalogs/{top}/cruise")).status_code == 403
    assert (await anon.get(f"/data/catalogs/{top}")).json()["description"] == "shared"

    r = await dana_data.delete(f"/data/catalogs/{top}/cruise")
    assert (r.status_code, r.json()) == (200, {"deleted": [f"{top}/cruise"]})


async def test_a_forced_delete_removes_only_what_the_caller_governs(dana_data, carol_data,
                                                                    anon) -> None:
    """carol (ocean-lab) may delete a project catalog but not a child of another project
    (ice-lab) in it: `_force=true` on the parent removed that child too; now 403, and
    nothing goes."""
    top = unique("lab-")
    assert (await dana_data.post("/data/catalogs", json=catalog(
        top, project=PROJECT))).status_code == 201
    assert (await dana_data.post(f"/data/catalogs/{top}", json=catalog(
        "ice", project="ice-lab"))).status_code == 201
    assert (await carol_data.delete(f"/data/catalogs/{top}/ice")).status_code == 403
    r = await carol_data.delete(f"/data/catalogs/{top}?_force=true")
    assert (r.status_code, r.json()) == (403, {
        "code": "Forbidden", "description": f"The subtree holds 1 catalog(s) you may not "
                                            f"delete (e.g. {top}/ice): nothing was removed."})
    assert (await anon.get(f"/data/catalogs/{top}/ice")).status_code == 200
    r = await dana_data.delete(f"/data/catalogs/{top}?_force=true")
    assert (r.status_code, r.json()) == (200, {"deleted": [top, f"{top}/ice"]})


async def test_a_forced_delete_neither_removes_nor_names_what_the_caller_cannot_read(
        dana_data, carol_data, admin_data) -> None:
    """carol's private catalog in a project catalog is hers to read: dana (a member, who may
    change the project's catalogs) saw nothing under the parent, yet her forced delete
    removed it and named it. Now nothing goes and nothing is named."""
    top = unique("lab-")
    assert (await dana_data.post("/data/catalogs", json=catalog(
        top, project=PROJECT))).status_code == 201
    r = await carol_data.post(f"/data/catalogs/{top}", json=catalog(
        "hidden", visibility="private"))
    assert r.status_code == 201, r.text
    assert (await dana_data.get(f"/data/catalogs/{top}/_subtree")).json()["catalogs"] == []
    refused = {"code": "Forbidden", "description": (
        f"Catalog {top} holds catalogs you cannot read: nothing was removed. Their owners, "
        "or an administrator, remove them.")}
    for ask in (f"/data/catalogs/{top}", f"/data/catalogs/{top}?_force=true"):
        r = await dana_data.delete(ask)
        assert (r.status_code, r.json()) == (403, refused)
    assert (await carol_data.get(f"/data/catalogs/{top}/hidden")).status_code == 200
    r = await admin_data.delete(f"/data/catalogs/{top}?_force=true")
    assert (r.status_code, r.json()) == (200, {"deleted": [top, f"{top}/hidden"]})


async def test_replacing_links_keeps_those_to_items_the_caller_cannot_read(
        dana_data, carol_data, admin_data) -> None:
    """dana's private item is linked into a project catalog (by an administrator); carol
    (a member, who does not read it) replaces the catalog's links: dana's link went with
    hers, unseen. Now what carol sees is replaced, dana's link stays."""
    top, collection = unique("lab-"), unique("test_conv-links_")
    assert (await admin_data.post("/data/collections", json=make_collection(collection))
            ).status_code == 201
    for owner, item_id, visibility in ((dana_data, "danas", "private"),
                                       (carol_data, "shared", "public")):
        item = make_item(item_id)
        item["properties"]["visibility"] = visibility
        r = await owner.post(f"/data/collections/{collection}/items", json=item)
        assert r.status_code == 201, r.text
    assert (await dana_data.post("/data/catalogs", json=catalog(
        top, project=PROJECT))).status_code == 201
    href = f"http://testserver/data/collections/{collection}/items"
    r = await admin_data.put(f"/data/catalogs/{top}?_force=true", json=catalog(
        top, links=[{"rel": "item", "href": f"{href}/danas"}]))
    assert r.status_code == 200, r.text
    r = await carol_data.put(f"/data/catalogs/{top}?_force=true", json=catalog(
        top, links=[{"rel": "item", "href": f"{href}/shared"}]))
    assert r.status_code == 200, r.text

    def items(doc: dict) -> list[str]:
        return sorted(link["href"].rsplit("/", 1)[1] for link in doc["links"]
                      if link["rel"] == "item")

    assert items(r.json()) == ["shared"]
    assert items((await dana_data.get(f"/data/catalogs/{top}")).json()) == [
        "danas", "shared"]


async def test_a_project_needs_membership(bob_editor_data, anon) -> None:
    top = unique("not-mine-")
    r = await bob_editor_data.post("/data/catalogs", json=catalog(top, project=PROJECT))
    assert r.status_code == 403
    assert (await anon.get(f"/data/catalogs/{top}")).status_code == 404


async def test_personal_catalogs_stay_personal(carol_data, dana_data) -> None:
    top = unique("mine-")
    r = await dana_data.post("/data/catalogs", json=catalog(top))
    assert r.status_code == 201 and "project" not in r.json()
    assert (await carol_data.post(f"/data/catalogs/{top}", json=catalog("c"))).status_code == 403


@pytest.mark.parametrize("cid", ["_search", "_x", ".", ".."])
async def test_reserved_ids_are_400(alice_data, cid: str) -> None:
    r = await alice_data.post("/data/catalogs", json=catalog(cid))
    assert r.status_code == 400
    assert r.json()["code"] == "InvalidRequest"


@pytest.fixture
async def tree(admin_data, alice_data) -> dict[str, str]:
    """top (item a1 of C1) / mid (collection C2) / leaf (item c1 of C3); `empty` links
    nothing; C1 holds a2 and a3 that no catalog links."""
    names = {key: unique(f"test_conv-scope{key}_") for key in ("c1", "c2", "c3")}
    for n, collection in enumerate(names.values()):
        assert (await admin_data.post("/data/collections",
                                      json=make_collection(collection))).status_code == 201
        ids = {0: ["a1", "a2", "a3"], 1: ["b1", "b2"], 2: ["c1"]}[n]
        for k, item_id in enumerate(ids):
            r = await alice_data.post(f"/data/collections/{collection}/items",
                                      json=make_item(item_id, x=10 * n + k, day=k + 1))
            assert r.status_code == 201, r.text
    top = unique("scope-")
    api = "http://testserver/data/"
    bodies = {
        top: catalog(top, links=[{"rel": "item",
                                  "href": f"{api}collections/{names['c1']}/items/a1"}]),
        f"{top}/mid": catalog("mid", links=[{"rel": "child",
                                             "href": f"{api}collections/{names['c2']}"}]),
        f"{top}/mid/leaf": catalog("leaf", links=[{
            "rel": "item", "href": f"{api}collections/{names['c3']}/items/c1"}]),
        f"{top}/empty": catalog("empty"),
    }
    for path, body in bodies.items():
        parent = path.rsplit("/", 1)[0] if "/" in path else None
        url = f"/data/catalogs/{parent}" if parent else "/data/catalogs"
        assert (await alice_data.post(url, json=body)).status_code == 201
    return {"top": top, **names}


async def ids_of(client: httpx.AsyncClient, path: str, **params: object) -> list[str]:
    r = await client.get(f"/data/catalogs/{path}/_search", params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/geo+json"
    return sorted(f["id"] for f in r.json()["features"])


async def test_search_covers_the_subtree(anon, tree) -> None:
    top = tree["top"]
    assert await ids_of(anon, top) == ["a1", "b1", "b2", "c1"]
    assert await ids_of(anon, f"{top}/mid") == ["b1", "b2", "c1"]
    assert await ids_of(anon, f"{top}/mid/leaf") == ["c1"]
    assert await ids_of(anon, f"{top}/empty") == []
    # `collections` intersects with the subtree; one outside it simply matches nothing
    assert await ids_of(anon, top, collections=tree["c1"]) == ["a1"]
    assert await ids_of(anon, top, collections="test_conv-elsewhere_x") == []
    # every /search parameter narrows it further
    assert await ids_of(anon, top, bbox="9,0,12,1") == ["b1", "b2"]
    assert await ids_of(anon, top, ids="b2,a2") == ["b2"]
    assert await ids_of(anon, top, filter="id = 'c1' OR id = 'a1'",
                        **{"filter-lang": "cql2-text"}) == ["a1", "c1"]
    assert await ids_of(anon, top, owner="alice") == ["a1", "b1", "b2", "c1"]
    assert await ids_of(anon, top, owner="nobody") == []


async def test_search_pages_and_posts_like_search(anon, tree) -> None:
    top, seen = tree["top"], []
    url: str | None = f"/data/catalogs/{top}/_search?limit=1"
    while url:
        page = (await anon.get(url)).json()
        seen += [f["id"] for f in page["features"]]
        url = next((link["href"] for link in page["links"] if link["rel"] == "next"), None)
    assert sorted(seen) == ["a1", "b1", "b2", "c1"] and len(seen) == 4
    r = await anon.post(f"/data/catalogs/{top}/_search",
                        json={"filter-lang": "cql2-json",
                              "filter": {"op": "<>", "args": [{"property": "id"}, "b1"]},
                              "collections": [tree["c2"], tree["c3"]], "limit": 10})
    assert r.status_code == 200, r.text
    assert sorted(f["id"] for f in r.json()["features"]) == ["b2", "c1"]
    item = r.json()["features"][0]
    assert {link["rel"] for link in item["links"]} >= {"self", "collection", "root"}


async def test_search_errors(anon, tree) -> None:
    r = await anon.get("/data/catalogs/no-such-catalog-x/_search")
    assert (r.status_code, r.json()) == (404, {
        "code": "NotFoundError", "description": "Catalog no-such-catalog-x does not exist."})
    r = await anon.get(f"/data/catalogs/{tree['top']}/_search", params={"bbox": "1,2"})
    assert r.status_code == 400


async def test_catalog_documents_link_their_search(anon, tree) -> None:
    doc = (await anon.get(f"/data/catalogs/{tree['top']}/mid")).json()
    search = [link for link in doc["links"] if link["rel"] == "search"]
    href = f"http://testserver/data/catalogs/{tree['top']}/mid/_search"
    assert [(link["method"], link["href"]) for link in search] == [("GET", href),
                                                                   ("POST", href)]
    assert set(doc["conformsTo"]) >= SEARCH_CLASSES


def test_pystac_client_searches_a_catalog(live_server: str, issuer) -> None:
    """`Client.open(<catalog url>).search(...)` searches the subtree (a real uvicorn)."""
    headers = {"Authorization": f"Bearer {issuer.token('alice')}"}
    collection = unique("test_conv-pyclient_")
    with httpx.Client(base_url=f"{live_server}/data", headers=headers) as http:
        admin = {"Authorization": f"Bearer {issuer.token('root', rights=['manageCollections'])}"}
        assert http.post("/collections", json=make_collection(collection),
                         headers=admin).status_code == 201
        for n in range(3):
            assert http.post(f"/collections/{collection}/items",
                             json=make_item(f"p{n}", x=n)).status_code == 201
        top = unique("pyclient-")
        body = catalog(top, links=[{"rel": "child", "href": f"collections/{collection}"}])
        assert http.post("/catalogs", json=body).status_code == 201
        assert http.post(f"/catalogs/{top}", json=catalog("other")).status_code == 201
    client = pystac_client.Client.open(f"{live_server}/data/catalogs/{top}")
    found = client.search(bbox=[0.5, 0, 10, 1], max_items=10)
    assert sorted(item.id for item in found.items()) == ["p0", "p1", "p2"]
    assert sorted(i.id for i in client.search(ids=["p1"], method="GET").items()) == ["p1"]
    empty = pystac_client.Client.open(f"{live_server}/data/catalogs/{top}/other")
    assert list(empty.search(max_items=5).items()) == []


async def test_force_deletes_during_searches(alice_data, anon, tree) -> None:
    """Each search sees the subtree before or after the delete: never an error."""
    top = tree["top"]

    async def search() -> tuple[int, tuple[str, ...]]:
        r = await anon.get(f"/data/catalogs/{top}/mid/_search")
        return r.status_code, tuple(sorted(f["id"] for f in r.json().get("features", [])))

    results = await asyncio.gather(
        *(search() for _ in range(10)),
        alice_data.delete(f"/data/catalogs/{top}/mid", params={"_force": "true"}),
        *(search() for _ in range(10)))
    deleted, answers = results[10], results[:10] + results[11:]
    assert deleted.status_code == 200
    assert set(answers) <= {(200, ("b1", "b2", "c1")), (404, ())}
    assert (await anon.get(f"/data/catalogs/{top}/mid/_search")).status_code == 404
