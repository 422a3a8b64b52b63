"""Community proposals (`/data/proposals`): a signed-in user proposes a collection for a
known standard name, or a description; an administrator accepts or rejects it with a
reason, recorded; items published for a collection not made yet wait in its proposal, read
by their owner only, until the decision. Statuses and bodies exactly as answered."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from stac_ext.governance.tables import read_table, shipped_cf_table
from stac_ext.publish.demo_files import variable_netcdf
from stac_ext.publish.items import item_id
from tests.support.jobs import execute, wait_for
from tests.support.s3 import KEY_ID, SECRET, s3_client
from tests.support.stac import make_collection, unique

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
API = "http://testserver/data/"
#: What the CF table (version 93) says of the names these tests propose.
SNOW = {"standard_name": "surface_snow_thickness", "title": "Surface snow thickness",
        "unit": "m", "vocabulary": "CF Standard Name Table", "version": "93",
        "description": next(e.description for e in read_table(shipped_cf_table()).entries
                            if e.name == "surface_snow_thickness")}
NOT_ADMIN = {"code": "Forbidden", "description": "Only an administrator may change "
                                                 "collections."}


def stamped(body: dict[str, Any]) -> dict[str, Any]:
    """The body with its times checked (ISO 8601, UTC) and replaced by `<time>`."""
    assert STAMP.match(body["created"]), body["created"]
    body = {**body, "created": "<time>"}
    if body.get("decision"):
        assert STAMP.match(body["decision"]["at"]), body["decision"]
        body["decision"] = {**body["decision"], "at": "<time>"}
    return body


def expected(number: int, collection: str, **fields: Any) -> dict[str, Any]:
    """A proposal's body as answered, from what a test sets."""
    links = [{"rel": "self", "type": "application/json", "href": f"{API}proposals/{number}"}]
    if fields.get("status") == "accepted" or fields.get("kind") == "description":
        links.append({"rel": "collection", "type": "application/json", "title": collection,
                      "href": f"{API}collections/{collection}"})
    return {"id": number, "kind": "collection", "collection": collection, "status": "open",
            "proposer": "alice", "created": "<time>", "description": None, "comment": None,
            "variable": None, "decision": None, "held_items": 0, "released_items": 0,
            "items": [], **fields, "links": links}


async def test_a_proposed_collection_accepted(alice_data, bob_data, admin_data, anon) -> None:
    collection = "climate_forecast-surface_snow_thickness"
    r = await alice_data.post("/data/proposals", json={
        "collection": collection, "description": "Snow on sea ice, from buoys.",
        "comment": "Our buoys measure it."})
    assert r.status_code == 201, r.text
    number = int(r.headers["Location"].rsplit("/", 1)[1])
    assert r.headers["Location"] == f"{API}proposals/{number}"
    proposed = expected(number, collection, description="Snow on sea ice, from buoys.",
                        comment="Our buoys measure it.", variable=SNOW)
    assert stamped(r.json()) == proposed
    assert stamped((await anon.get(f"/data/proposals/{number}")).json()) == proposed

    r = await bob_data.post("/data/proposals", json={"collection": collection})
    assert (r.status_code, r.json()) == (409, {
        "code": "Conflict", "description": f"Proposal {number} asks for the collection "
                                           f"{collection} already."})
    r = await bob_data.post(f"/data/proposals/{number}/accept", json={"reason": "mine"})
    assert (r.status_code, r.json()) == (403, NOT_ADMIN)
    r = await anon.post(f"/data/proposals/{number}/accept", json={"reason": "anyone"})
    assert (r.status_code, r.json()) == (401, {"code": "Unauthorized",
                                               "description": "Authentication required: "
                                                              "no token."})
    r = await admin_data.post(f"/data/proposals/{number}/accept", json={})
    assert (r.status_code, r.json()["code"]) == (400, "InvalidRequest")
    assert (await admin_data.get(f"/data/collections/{collection}")).status_code == 404

    r = await admin_data.post(f"/data/proposals/{number}/accept",
                              json={"reason": "Measured by the ice camp."})
    assert r.status_code == 200, r.text
    assert stamped(r.json()) == proposed | expected(
        number, collection, status="accepted", description="Snow on sea ice, from buoys.",
        comment="Our buoys measure it.", variable=SNOW,
        decision={"by": "root", "at": "<time>", "reason": "Measured by the ice camp."})
    made = (await anon.get(f"/data/collections/{collection}")).json()
    assert (made["title"], made["description"], made["cf:parameter"]) == (
        "Surface snow thickness", SNOW["description"] + "\n\nSnow on sea ice, from buoys.",
        [{"name": "surface_snow_thickness", "unit": "m"}])

    r = await admin_data.post(f"/data/proposals/{number}/reject", json={"reason": "no"})
    assert (r.status_code, r.json()) == (409, {
        "code": "Conflict",
        "description": f"Proposal {number} is accepted already: a decision is final."})
    r = await admin_data.post("/data/proposals/999999999/accept", json={"reason": "x"})
    assert (r.status_code, r.json()) == (404, {
        "code": "NotFound", "description": "Proposal 999999999 does not exist."})
    r = await anon.get("/data/proposals/999999999")
    assert (r.status_code, r.json()) == (404, {
        "code": "NotFound", "description": "Proposal 999999999 does not exist."})


async def test_proposals_that_cannot_be(alice_data, admin_data) -> None:
    cases = [
        ({"collection": "climate_forecast-surface_snow_thiknes"}, 400,
         "Collection climate_forecast-surface_snow_thiknes: `surface_snow_thiknes` is not a "
         "standard name of the CF Standard Name Table (version 93). Did you mean "
         "`surface_snow_thickness`, `surface_snow_mass` or `surface_snow_amount`?"),
        ({"collection": "climate_forecast-leaf_carbon_content"}, 400,
         "Collection climate_forecast-leaf_carbon_content: `leaf_carbon_content` is an alias "
         "of `leaf_mass_content_of_carbon` in the CF Standard Name Table (version 93): use "
         "the collection climate_forecast-leaf_mass_content_of_carbon."),
        ({"collection": "lab-x"}, 400, "Collection lab-x: the convention `lab` has no "
                                       "vocabulary here (conventions known: "
                                       "`climate_forecast`)."),
        ({"collection": "sst"}, 400, "Collection id 'sst' must be '<convention>-"
                                     "<standard_name>': lower-case letters, digits and '_' "
                                     "on each side of one '-', e.g. "
                                     "'climate_forecast-sea_surface_temperature'."),
        ({"kind": "description", "collection": "climate_forecast-sea_water_volume",
          "description": "x"}, 404, "Collection climate_forecast-sea_water_volume does not "
                                    "exist."),
        ({"kind": "description", "collection": "climate_forecast-sea_water_volume"}, 400,
         "A proposal of a description needs `description`: the text proposed."),
    ]
    for body, status, why in cases:
        r = await alice_data.post("/data/proposals", json=body)
        assert (r.status_code, r.json()) == (status, {
            "code": {400: "BadRequest", 404: "NotFound"}[status], "description": why}), body
    existing = "climate_forecast-sea_floor_depth_below_geoid"
    assert (await admin_data.post("/data/collections",
                                  json=make_collection(existing))).status_code == 201
    r = await alice_data.post("/data/proposals", json={"collection": existing})
    assert (r.status_code, r.json()) == (409, {
        "code": "Conflict", "description": f"Collection {existing} exists already: propose "
                                           "a change of its description (`kind` "
                                           "`description`)."})
    r = await alice_data.post("/data/proposals", json={"collection": existing, "x": 1})
    assert r.status_code == 400


async def test_a_description_rejected_then_accepted(alice_data, admin_data, anon) -> None:
    collection = "climate_forecast-sea_water_ph_reported_on_total_scale"
    assert (await admin_data.post("/data/collections",
                                  json=make_collection(collection))).status_code == 201
    table = (await anon.get(f"/data/collections/{collection}")).json()["description"]
    r = await alice_data.post("/data/proposals", json={
        "kind": "description", "collection": collection, "description": "Mind the scale."})
    number = r.json()["id"]
    r = await admin_data.post(f"/data/proposals/{number}/reject",
                              json={"reason": "Say which scale."})
    body = stamped(r.json())
    assert (r.status_code, body["status"], body["decision"], body["kind"]) == (
        200, "rejected", {"by": "root", "at": "<time>", "reason": "Say which scale."},
        "description")
    assert (await anon.get(f"/data/collections/{collection}")).json()["description"] == table
    r = await alice_data.post("/data/proposals", json={
        "kind": "description", "collection": collection,
        "description": "On the total scale, from bottle samples."})
    number = r.json()["id"]
    r = await admin_data.post(f"/data/proposals/{number}/accept", json={"reason": "Clear."})
    assert (r.status_code, r.json()["status"]) == (200, "accepted")
    assert (await anon.get(f"/data/collections/{collection}")).json()["description"] == \
        f"{table.split(chr(10))[0]}\n\nOn the total scale, from bottle samples."


async def _published(client: httpx.AsyncClient, inputs: dict) -> dict:
    r = await execute(client, "publish-dataset", inputs)
    assert r.status_code == 201, r.text
    job = await wait_for(client, r.headers["Location"], "successful", "failed", seconds=120)
    assert job["status"] == "successful", job["message"]
    return (await client.get(f"{r.headers['Location']}/results")).json()


@pytest.fixture
def ice_files(s3_endpoint: str) -> tuple[str, dict]:
    """A bucket with a NetCDF of sea ice thickness, one of ocean mixed layer thickness and
    one whose variable's standard_name is a typo; the S3 section of the inputs."""
    s3 = s3_client(s3_endpoint)
    bucket = unique("ice-")
    s3.create_bucket(Bucket=bucket)
    for key, data in (("thickness/ice.nc", variable_netcdf("sea_ice_thickness", "sit", "m")),
                      ("mixed/mld.nc", variable_netcdf("ocean_mixed_layer_thickness", "mld",
                                                       "m")),
                      ("typo/bad.nc", variable_netcdf("sea_ice_thiknes", "sit", "m"))):
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    return bucket, {"accessKeyId": KEY_ID, "secretAccessKey": SECRET,
                    "endpoint": s3_endpoint, "defaultRegion": "us-east-1"}


async def test_published_items_wait_in_a_proposal_until_accepted(
        alice_processes, alice_data, bob_data, admin_data, anon, ice_files) -> None:
    bucket, s3 = ice_files
    href = f"s3://{bucket}/thickness/ice.nc"
    collection, item = "climate_forecast-sea_ice_thickness", item_id(href, "sit")
    result = await _published(alice_processes, {"source": f"s3://{bucket}/thickness",
                                                "s3": s3, "visibility": "public"})
    [held] = result["held"]
    number = int(held["proposal"].rsplit("/", 1)[1])
    assert (result["created"], result["collectionsCreated"], held) == ([], [], {
        "id": item, "collection": collection, "file": href,
        "proposal": f"{API}proposals/{number}"})
    typo = await _published(alice_processes, {"source": f"s3://{bucket}/typo", "s3": s3})
    assert (typo["held"], typo["skipped"]) == ([], [{
        "file": f"s3://{bucket}/typo/bad.nc", "variable": item_id(
            f"s3://{bucket}/typo/bad.nc", "sit"),
        "reason": "standard_name `sea_ice_thiknes` is not a standard name of the CF Standard "
                  "Name Table (version 93). Did you mean `sea_ice_thickness`, "
                  "`sea_ice_melt_pond_thickness` or `sea_ice_extent`?"}])

    # kept, read by its owner only: in the proposal, not in the catalog
    mine = {"id": item, "owner": "alice", "title": "Sea ice thickness - ice.nc",
            "visibility": "public"}
    body = stamped((await alice_data.get(held["proposal"])).json())
    assert (body["proposer"], body["comment"], body["held_items"], body["items"]) == (
        "alice", "Items published by alice wait for this collection.", 1, [mine])
    for other in (bob_data, anon):
        body = (await other.get(held["proposal"])).json()
        assert (body["held_items"], body["items"]) == (1, [])
    assert (await alice_data.get(f"/data/collections/{collection}/items/{item}")
            ).status_code == 404
    listed = (await alice_data.get("/data/proposals", params={"mine": "true",
                                                              "status": "open"})).json()
    assert number in [p["id"] for p in listed["proposals"]]
    r = await anon.get("/data/proposals", params={"mine": "true"})
    assert r.status_code == 401

    r = await bob_data.post(f"/data/proposals/{number}/accept", json={"reason": "mine"})
    assert (r.status_code, r.json()) == (403, NOT_ADMIN)
    r = await admin_data.post(f"/data/proposals/{number}/accept",
                              json={"reason": "Arctic campaign data."})
    assert r.status_code == 200, r.text
    body = stamped(r.json())
    assert (body["status"], body["decision"], body["held_items"], body["released_items"],
            body["items"]) == ("accepted", {"by": "root", "at": "<time>",
                                            "reason": "Arctic campaign data."}, 0, 1, [])
    # visible as it asked: to anyone, and found by search
    r = await anon.get(f"/data/collections/{collection}/items/{item}")
    assert (r.status_code, r.json()["properties"]["owner"]) == (200, "alice")
    found = (await anon.get("/data/search", params={"collections": collection})).json()
    assert [f["id"] for f in found["features"]] == [item]
    # published again: written at once now
    again = await _published(alice_processes, {"source": f"s3://{bucket}/thickness",
                                               "s3": s3, "visibility": "public"})
    assert (again["held"], [u["id"] for u in again["updated"]]) == ([], [item])


async def test_a_rejected_proposal_keeps_the_items_for_their_owner(
        alice_processes, alice_data, bob_data, admin_data, anon, ice_files) -> None:
    bucket, s3 = ice_files
    href = f"s3://{bucket}/mixed/mld.nc"
    collection, item = "climate_forecast-ocean_mixed_layer_thickness", item_id(href, "mld")
    result = await _published(alice_processes, {"source": f"s3://{bucket}/mixed", "s3": s3,
                                                "visibility": "private"})
    [held] = result["held"]
    r = await admin_data.post(f"{held['proposal']}/reject",
                              json={"reason": "Name the method: density or temperature."})
    assert r.status_code == 200, r.text
    body = stamped((await alice_data.get(held["proposal"])).json())
    assert (body["status"], body["decision"], body["held_items"], body["items"]) == (
        "rejected", {"by": "root", "at": "<time>",
                     "reason": "Name the method: density or temperature."}, 1,
        [{"id": item, "owner": "alice", "title": "Ocean mixed layer thickness - mld.nc",
          "visibility": "private"}])
    assert (await bob_data.get(held["proposal"])).json()["items"] == []
    assert (await admin_data.get(f"/data/collections/{collection}")).status_code == 404
    assert (await alice_data.get(f"/data/collections/{collection}/items/{item}")
            ).status_code == 404
