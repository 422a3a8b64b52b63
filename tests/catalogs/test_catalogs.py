"""The /catalogs tree: the catalog rules, on a real database."""

from __future__ import annotations

import asyncio

import httpx
import pystac
import pytest

from catalogs_ext import CONFORMANCE
from tests.support.http import http_client
from tests.support.stac import make_item, unique

API = "http://testserver/data/"


def catalog(cid: str, **fields) -> dict:
    return {"id": cid, "type": "Catalog", "description": f"catalog {cid}", **fields}


def links(doc: dict, rel: str) -> list[str]:
    return [link["href"] for link in doc["links"] if link["rel"] == rel]


@pytest.fixture
async def linked(alice_data: httpx.AsyncClient, collection: str) -> tuple[str, str]:
    """A collection holding an item `it` (alice's)."""
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("it"))
    assert r.status_code == 201
    return collection, "it"


@pytest.fixture
async def alice_editor_data(app, issuer) -> httpx.AsyncClient:
    """alice with the `updateCatalog` right."""
    async with http_client(app, issuer.token("alice", rights=["updateCatalog"])) as c:
        yield c


async def test_create_read_three_levels(alice_data: httpx.AsyncClient, linked) -> None:
    collection, item = linked
    top = unique("top")
    r = await alice_data.post("/data/catalogs", json=catalog(top, title="Top"))
    assert r.status_code == 201, r.text
    assert r.headers["Location"] == f"{API}catalogs/{top}"
    assert r.json()["owner"] == "alice"

    r = await alice_data.post(f"/data/catalogs/{top}", json=catalog("mid", links=[
        {"rel": "child", "href": f"{API}collections/{collection}"}]))
    assert r.status_code == 201, r.text
    r = await alice_data.post(f"/data/catalogs/{top}/mid", json=catalog("leaf", links=[
        {"rel": "item", "href": f"collections/{collection}/items/{item}", "title": "It"}]))
    assert r.status_code == 201, r.text

    root = (await alice_data.get("/data/catalogs")).json()
    assert root["type"] == "Catalog"
    assert f"{API}catalogs/{top}" in links(root, "child")

    leaf = (await alice_data.get(f"/data/catalogs/{top}/mid/leaf")).json()
    assert leaf["stac_version"] and leaf["id"] == "leaf" and leaf["description"]
    assert links(leaf, "self") == [f"{API}catalogs/{top}/mid/leaf"]
    assert links(leaf, "parent") == [f"{API}catalogs/{top}/mid"]
    assert links(leaf, "root") == [f"{API}catalogs"]
    assert links(leaf, "item") == [f"{API}collections/{collection}/items/{item}"]
    assert [link["title"] for link in leaf["links"] if link["rel"] == "item"] == ["It"]
    mid = (await alice_data.get(f"/data/catalogs/{top}/mid")).json()
    assert set(links(mid, "child")) == {f"{API}catalogs/{top}/mid/leaf",
                                        f"{API}collections/{collection}"}
    for link in mid["links"]:
        if link["rel"] == "child":
            assert (await alice_data.get(link["href"])).status_code == 200


async def test_create_refuses_links_to_nothing(alice_data: httpx.AsyncClient, linked) -> None:
    collection, _ = linked
    bad_links = [
        {"rel": "child", "href": f"{API}collections/nope-nope"},
        {"rel": "item", "href": f"{API}collections/{collection}/items/missing"},
        {"rel": "child", "href": f"{API}catalogs/not-yet"},
        {"rel": "child", "href": "https://elsewhere.example/data/collections/x"},
        {"rel": "item", "href": f"{API}collections/{collection}"},
    ]
    for link in bad_links:
        cid = unique("refused")
        r = await alice_data.post("/data/catalogs", json=catalog(cid, links=[link]))
        assert r.status_code == 400, (link, r.text)
        assert r.json()["description"]
        assert (await alice_data.get(f"/data/catalogs/{cid}")).status_code == 404


async def test_create_errors(alice_data: httpx.AsyncClient, anon: httpx.AsyncClient,
                             bob_data: httpx.AsyncClient) -> None:
    top = unique("dup")
    assert (await alice_data.post("/data/catalogs", json=catalog(top))).status_code == 201
    r = await alice_data.post("/data/catalogs", json=catalog(top))
    assert r.status_code == 409 and r.json()["code"]
    for bad in ("a/b", "ünï", "has space", "", "x" * 300):
        assert (await alice_data.post("/data/catalogs", json=catalog(bad))).status_code == 400
    assert (await alice_data.post("/data/catalogs", json={**catalog("t"), "type": "Collection"})
            ).status_code == 400
    assert (await anon.post("/data/catalogs", json=catalog(unique("a")))).status_code == 401
    assert (await bob_data.post(f"/data/catalogs/{top}", json=catalog("x"))).status_code == 403
    assert (await alice_data.post("/data/catalogs/nowhere-at-all",
                              json=catalog("x"))).status_code == 404
    assert (await alice_data.get("/data/catalogs/nowhere/at/all")).status_code == 404


async def test_put_rules(alice_data, alice_editor_data, bob_data, admin_data, linked) -> None:
    collection, item = linked
    top = unique("put")
    assert (await alice_data.post("/data/catalogs", json=catalog(top))).status_code == 201
    assert (await alice_data.post(f"/data/catalogs/{top}", json=catalog("sub"))).status_code == 201
    url = f"/data/catalogs/{top}"

    # owner without updateCatalog, and another user: 403
    assert (await alice_data.put(url, json=catalog(top, description="x"))).status_code == 403
    assert (await bob_data.put(url, json=catalog(top, description="x"))).status_code == 403
    # without links: other fields are updated (rule 4)
    r = await alice_editor_data.put(url, json=catalog(top, description="new text", keywords=["k"]))
    assert r.status_code == 200, r.text
    assert r.json()["description"] == "new text" and r.json()["keywords"] == ["k"]
    # links without _force: 400, nothing changes (rule 3)
    new_links = [{"rel": "child", "href": f"{API}collections/{collection}"},
                 {"rel": "item", "href": f"{API}collections/{collection}/items/{item}"}]
    r = await alice_editor_data.put(url, json=catalog(top, description="changed", links=new_links))
    assert r.status_code == 400 and "_force=true" in r.json()["description"]
    doc = (await alice_editor_data.get(url)).json()
    assert doc["description"] == "new text" and not links(doc, "item")
    # with _force: links replaced, the sub-catalog stays
    r = await alice_editor_data.put(f"{url}?_force=true", json=catalog(top, links=new_links))
    assert r.status_code == 200, r.text
    doc = (await alice_editor_data.get(url)).json()
    assert links(doc, "item") == [f"{API}collections/{collection}/items/{item}"]
    assert f"{API}catalogs/{top}/sub" in links(doc, "child")
    # replace again with only the item: the collection link goes, the sub-catalog stays
    r = await admin_data.put(f"{url}?_force=1", json=catalog(top, links=new_links[1:]))
    assert r.status_code == 200
    doc = (await alice_editor_data.get(url)).json()
    assert links(doc, "child") == [f"{API}catalogs/{top}/sub"]
    # the nested form /catalogs/{catalogId}/{childCatalogId}
    r = await alice_editor_data.put(f"{url}/sub", json=catalog("sub", description="child text"))
    assert r.status_code == 200 and r.json()["description"] == "child text"
    # invalid _force, mismatched id, link to nothing
    r = await alice_editor_data.put(f"{url}?_force=maybe", json=catalog(top))
    assert r.status_code == 400
    assert (await alice_editor_data.put(url, json=catalog("other"))).status_code == 400
    r = await alice_editor_data.put(f"{url}?_force=true", json=catalog(top, links=[
        {"rel": "item", "href": f"{API}collections/{collection}/items/ghost"}]))
    assert r.status_code == 400
    assert links((await alice_editor_data.get(url)).json(), "item")  # unchanged


async def test_delete_rules(alice_data, bob_data, admin_data, linked) -> None:
    collection, item = linked
    top = unique("del")
    assert (await alice_data.post("/data/catalogs", json=catalog(top, links=[
        {"rel": "item", "href": f"{API}collections/{collection}/items/{item}"}]))
    ).status_code == 201
    for sub in ("a", "a/b", "a/b/c"):
        parent, _, cid = f"{top}/{sub}".rpartition("/")
        assert (await alice_data.post(f"/data/catalogs/{parent}", json=catalog(cid))
                ).status_code == 201
    # siblings whose ids look like the deleted one, and the same ids under another parent
    lookalikes = [f"{top}_", f"{top}x", f"{top}.a"]
    for cid in lookalikes:
        assert (await alice_data.post("/data/catalogs", json=catalog(cid))).status_code == 201
        r = await alice_data.post(f"/data/catalogs/{cid}", json=catalog("a"))
        assert r.status_code == 201

    r = await alice_data.delete(f"/data/catalogs/{top}")
    assert r.status_code == 409
    assert (await alice_data.get(f"/data/catalogs/{top}/a/b/c")).status_code == 200
    assert (await bob_data.delete(f"/data/catalogs/{top}?_force=true")).status_code == 403
    assert (await alice_data.delete(f"/data/catalogs/{top}?_force=yes-please")).status_code == 400

    r = await alice_data.delete(f"/data/catalogs/{top}?_force=true")
    assert r.status_code == 200, r.text
    assert r.json()["deleted"] == sorted([top, f"{top}/a", f"{top}/a/b", f"{top}/a/b/c"])
    assert (await alice_data.get(f"/data/catalogs/{top}")).status_code == 404
    for cid in lookalikes:
        assert (await alice_data.get(f"/data/catalogs/{cid}/a")).status_code == 200
        assert (await admin_data.delete(f"/data/catalogs/{cid}?_force=true")).status_code == 200
    # never deletes a collection or an item
    assert (await alice_data.get(f"/data/collections/{collection}/items/{item}")).status_code == 200
    # a leaf deletes without _force
    leaf = unique("leaf")
    assert (await alice_data.post("/data/catalogs", json=catalog(leaf))).status_code == 201
    assert (await alice_data.delete(f"/data/catalogs/{leaf}?_force=false")).json() == {
        "deleted": [leaf]}


async def test_links_follow_item_and_collection_deletes(alice_data, admin_data, app,
                                                        linked) -> None:
    collection, item = linked
    r = await alice_data.post(f"/data/collections/{collection}/items", json=make_item("other"))
    assert r.status_code == 201
    top = unique("integrity")
    assert (await alice_data.post("/data/catalogs", json=catalog(top, links=[
        {"rel": "child", "href": f"{API}collections/{collection}"},
        {"rel": "item", "href": f"{API}collections/{collection}/items/{item}"},
        {"rel": "item", "href": f"{API}collections/{collection}/items/other"},
    ]))).status_code == 201

    assert (await alice_data.delete(f"/data/collections/{collection}/items/{item}")
            ).status_code == 204
    async with app.state.writepool.acquire() as conn:
        assert await conn.fetchval(
            "SELECT count(*) FROM catalogs.links WHERE item_id = $1 AND collection_id = $2",
            item, collection) == 0
        # removed by other means: the link row stays but is not served
        await conn.execute("SELECT pgstac.delete_item('other', $1)", collection)
    doc = (await alice_data.get(f"/data/catalogs/{top}")).json()
    assert links(doc, "item") == []
    assert links(doc, "child") == [f"{API}collections/{collection}"]

    assert (await admin_data.delete(f"/data/collections/{collection}?_force=true")
            ).status_code == 200
    doc = (await alice_data.get(f"/data/catalogs/{top}")).json()
    assert links(doc, "child") == []


async def test_conformance_declares_the_tree(anon: httpx.AsyncClient) -> None:
    classes = (await anon.get("/data/conformance")).json()["conformsTo"]
    tree = f"{API}{CONFORMANCE}"  # served by the API itself, at its address
    assert tree == "http://testserver/data/spec/catalogs-tree/v1.0" and tree in classes
    assert not [c for c in classes if "multi-tenant" in c or ("catalogs/v" in c.lower()
                and c != tree)]


async def test_concurrent_creates_under_a_force_deleted_parent(alice_data: httpx.AsyncClient,
                                                               app) -> None:
    top = unique("race")
    assert (await alice_data.post("/data/catalogs", json=catalog(top))).status_code == 201
    for n in range(5):
        assert (await alice_data.post(f"/data/catalogs/{top}", json=catalog(f"s{n}"))
                ).status_code == 201

    async def create(n: int) -> int:
        r = await alice_data.post(f"/data/catalogs/{top}/s{n % 5}", json=catalog(f"c{n}"))
        return r.status_code

    async def delete() -> int:
        await asyncio.sleep(0.01)
        return (await alice_data.delete(f"/data/catalogs/{top}?_force=true")).status_code

    results = await asyncio.gather(*(create(n) for n in range(40)), delete())
    assert results[-1] == 200
    assert set(results[:-1]) <= {201, 404}
    async with app.state.readpool.acquire() as conn:
        orphans = await conn.fetchval(
            "SELECT count(*) FROM catalogs.catalogs c WHERE c.parent_pk IS NOT NULL AND "
            "NOT EXISTS (SELECT 1 FROM catalogs.catalogs p WHERE p.pk = c.parent_pk)")
        left = await conn.fetchval(
            "SELECT count(*) FROM catalogs.catalogs WHERE path = $1 OR starts_with(path, $2)",
            top, f"{top}/")
    assert orphans == 0 and left == 0


async def test_concurrent_puts_apply_whole_link_sets(alice_editor_data: httpx.AsyncClient, linked):
    collection, _ = linked
    for n in range(6):
        r = await alice_editor_data.post(f"/data/collections/{collection}/items",
                                         json=make_item(f"p{n}"))
        assert r.status_code == 201
    top = unique("puts")
    assert (await alice_editor_data.post("/data/catalogs", json=catalog(top))).status_code == 201
    sets = [[f"{API}collections/{collection}/items/p{n}", f"{API}collections/{collection}"
             f"/items/p{(n + 1) % 6}"] for n in range(6)]

    async def put(hrefs: list[str]) -> int:
        body = catalog(top, links=[{"rel": "item", "href": h} for h in hrefs])
        r = await alice_editor_data.put(f"/data/catalogs/{top}?_force=true", json=body)
        return r.status_code

    assert set(await asyncio.gather(*(put(s) for s in sets * 3))) == {200}
    final = links((await alice_editor_data.get(f"/data/catalogs/{top}")).json(), "item")
    assert final in sets


def test_pystac_walks_the_tree(live_server: str, issuer) -> None:
    token = issuer.token("walker")
    top = unique("walk")
    with httpx.Client(base_url=f"{live_server}/data",
                      headers={"Authorization": f"Bearer {token}"}) as http:
        assert http.post("/catalogs", json=catalog(top)).status_code == 201
        for path in ("a", "b", "a/x", "a/x/y"):
            parent, _, cid = f"{top}/{path}".rpartition("/")
            assert http.post(f"/catalogs/{parent}", json=catalog(cid)).status_code == 201
    root = pystac.Catalog.from_file(f"{live_server}/data/catalogs")
    seen = set()
    for parent, children, _items in root.walk():
        seen.add(parent.get_self_href())
        seen |= {c.get_self_href() for c in children}
    base = f"{live_server}/data/catalogs/{top}"
    assert {base, f"{base}/a", f"{base}/b", f"{base}/a/x", f"{base}/a/x/y"} <= seen


async def test_a_subtree_in_one_request(alice_data: httpx.AsyncClient,
                                        bob_data: httpx.AsyncClient,
                                        anon: httpx.AsyncClient) -> None:
    """`/catalogs/{path}/_subtree`: the paths under a catalog its caller reads, level by
    level and by id; a hidden catalog and what is under it left out."""
    top = unique("tree")
    for parent, cid, fields in (("", top, {}), (top, "b", {}), (top, "b-c", {}),
                                (f"{top}/b", "d", {}), (top, "c", {"visibility": "private"}),
                                (f"{top}/c", "e", {})):
        r = await alice_data.post(f"/data/catalogs/{parent}".rstrip("/"),
                                  json=catalog(cid, **fields))
        assert r.status_code == 201, r.text
    url = f"/data/catalogs/{top}/_subtree"
    everything = [f"{top}/b", f"{top}/b-c", f"{top}/c", f"{top}/b/d", f"{top}/c/e"]
    assert (await alice_data.get(url)).json() == {"catalogs": everything}
    for other in (bob_data, anon):
        assert (await other.get(url)).json() == {
            "catalogs": [f"{top}/b", f"{top}/b-c", f"{top}/b/d"]}
    assert (await alice_data.get(url, params={"limit": 2})).json() == {
        "catalogs": everything[:2]}
    hidden = await bob_data.get(f"/data/catalogs/{top}/c/_subtree")
    missing = await bob_data.get(f"/data/catalogs/{top}/x/_subtree")
    assert (hidden.status_code, missing.status_code) == (404, 404)
    assert hidden.json() == {**missing.json(), "description": f"Catalog {top}/c does not exist."}
    assert (await anon.get(f"{url}?limit=0")).status_code == 400


async def test_the_landing_page_links_the_catalogs_tree(anon: httpx.AsyncClient) -> None:
    links = (await anon.get("/data/")).json()["links"]
    [tree] = [link for link in links if link.get("title") == "Catalogs"]
    assert tree == {"rel": "child", "type": "application/json", "title": "Catalogs",
                    "href": "http://testserver/data/catalogs"}
    root = await anon.get(tree["href"])
    assert (root.status_code, root.json()["type"], root.json()["id"]) == (
        200, "Catalog", "catalogs")


async def test_the_root_with_a_slash_is_redirected(anon) -> None:
    """`/data/catalogs/` and every catalog's address with a slash were a 400 (pystac-client
    failed to open them), where `/data/collections/` is redirected: now they are too."""
    for slashed in ("/data/catalogs/", "/data/catalogs/variables/",
                    "/data/catalogs/variables/ocean-physics/", "/data/catalogs/a/b//"):
        r = await anon.get(slashed)
        assert (r.status_code, r.headers["location"]) == (
            307, f"http://testserver{slashed.rstrip('/')}"), slashed
    r = await anon.get("/data/catalogs/")
    root = (await anon.get(r.headers["location"])).json()
    assert (root["id"], root["conformsTo"]) == (
        "catalogs", ["https://api.stacspec.org/v1.0.0/core"])
