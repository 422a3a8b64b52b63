"""The process API's mount is a setting (`PROCESSES_PREFIX`), used in one place: the
landing page, the process API itself, its error bodies, HTML negotiation and the web
pages all follow it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.http import http_client
from tests.support.issuer import PROCESS_CLIENT

OGC = "http://www.opengis.net/def/exceptions/ogcapi-processes-1/1.0/"


@pytest.fixture
async def moved(service_app) -> AsyncIterator:
    async with service_app(processes_prefix="/ogc/processes") as service:
        yield service.app


async def test_the_process_api_where_the_setting_puts_it(moved, issuer) -> None:
    async with http_client(moved) as anon:
        root = (await anon.get("/")).json()
        assert {link["rel"]: link["href"] for link in root["links"]}["processes"] == \
            "http://testserver/ogc/processes/"
        landing = (await anon.get("/ogc/processes/")).json()
        assert landing["links"][0]["href"] == "http://testserver/ogc/processes/"
        assert "echo" in {p["id"] for p in (await anon.get("/ogc/processes/processes")
                                            ).json()["processes"]}
        assert (await anon.get("/processes/processes")).status_code == 404
        # OGC's error bodies under the mount, STAC's elsewhere
        r = await anon.get("/ogc/processes/processes?f=xml")
        assert (r.status_code, r.json()["type"]) == (400, OGC + "invalid-input")
        r = await anon.get("/data/collections?f=xml")
        assert (r.status_code, r.json()["code"]) == (400, "InvalidQueryParameter")
        # a browser is sent to the pages, which read the API where it is
        html = {"Accept": "text/html"}
        r = await anon.get("/ogc/processes/processes", headers=html)
        assert r.status_code == 200 and '<a href="http://testserver/ui/processes/echo">' in r.text
        r = await anon.get("/ogc/processes/api", headers=html)
        assert (r.status_code, r.headers["location"]) == (303, "/ogc/processes/api.html")
        r = await anon.get("/ogc/processes/api.html")
        assert r.status_code in (200, 503) and "ogc/processes/api" in r.text
    async with http_client(moved, issuer.token("alice", client=PROCESS_CLIENT)) as alice:
        r = await alice.post("/ogc/processes/processes/echo/execution",
                             json={"processInputs": {"message": "moved"}},
                             headers={"Prefer": "respond-async"})
        assert r.status_code == 201
        assert r.headers["Location"].startswith("http://testserver/ogc/processes/jobs/")
