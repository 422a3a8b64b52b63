"""The service root: landing JSON linking the APIs, and health."""

import httpx


async def test_landing_links_data_api(client: httpx.AsyncClient) -> None:
    r = await client.get("/")
    assert r.status_code == 200
    hrefs = {link["rel"]: link["href"] for link in r.json()["links"]}
    assert hrefs["data"] == "http://testserver/data/"
    assert (await client.get(hrefs["data"])).json()["type"] == "Catalog"


async def test_health_reports_database(client: httpx.AsyncClient) -> None:
    r = await client.get("/healthz")
    assert r.status_code == 200
    assert r.json()["status"] == "UP"
    assert r.json()["pgstac"].startswith("0.10")
