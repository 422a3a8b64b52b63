"""Collections: ids shaped `<convention>-<standard_name>`, delete guarded by `_force`."""

from __future__ import annotations

import httpx
import pytest

from tests.support.stac import make_collection, make_item, unique


@pytest.mark.parametrize("bad_id", [
    "sst", "Climate_forecast-sst", "climate-forecast-sst", "climate_forecast-",
    "-sst", "climate forecast-sst", "climate_forecast-sea.surface",
])
async def test_collection_id_shape(admin_data: httpx.AsyncClient, bad_id: str) -> None:
    r = await admin_data.post("/data/collections", json=make_collection(bad_id))
    assert r.status_code == 400
    assert "<convention>-<standard_name>" in r.json()["description"]
    assert (await admin_data.get(f"/data/collections/{bad_id}")).status_code == 404


async def test_delete_collection_with_items_needs_force(
    admin_data: httpx.AsyncClient, alice_data: httpx.AsyncClient, collection: str
) -> None:
    url = f"/data/collections/{collection}"
    assert (await alice_data.post(f"{url}/items", json=make_item("keep"))).status_code == 201
    r = await admin_data.delete(url)
    assert r.status_code == 409
    assert "_force=true" in r.json()["description"]
    assert (await admin_data.get(f"{url}/items/keep")).status_code == 200
    assert (await admin_data.delete(f"{url}?_force=maybe")).status_code == 400
    assert (await alice_data.delete(f"{url}?_force=true")).status_code == 403

    assert (await admin_data.delete(f"{url}?_force=true")).status_code == 200
    assert (await admin_data.get(url)).status_code == 404
    assert (await admin_data.get(f"{url}/items/keep")).status_code == 404


async def test_empty_collection_deletes_without_force(admin_data: httpx.AsyncClient) -> None:
    collection = unique("test_conv-empty_")
    assert (await admin_data.post("/data/collections",
                             json=make_collection(collection))).status_code == 201
    assert (await admin_data.delete(f"/data/collections/{collection}")).status_code == 200
    assert (await admin_data.delete(f"/data/collections/{collection}")).status_code == 404


async def test_update_collection_is_admin_only(admin_data, alice_data, collection: str) -> None:
    body = make_collection(collection)
    body["title"] = "Renamed"
    assert (await alice_data.put(f"/data/collections/{collection}", json=body)).status_code == 403
    r = await admin_data.put(f"/data/collections/{collection}", json=body)
    assert r.status_code == 200, r.text
    assert (await admin_data.get(f"/data/collections/{collection}")).json()["title"] == "Renamed"
