"""A filter is bounded before any parser sees it (cql2's text parser overflowed its stack on
a few thousand parentheses and took the process down), on every route that takes one; and
`geocatalog serve` supervises its worker: one that dies is started again."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from stac_ext.data_api.search.filter_bounds import (
    MAX_FILTER_DEPTH,
    MAX_FILTER_JSON,
    MAX_FILTER_LENGTH,
    MAX_FILTER_OPERATIONS,
    nesting,
)
from tests.support.cli import start_cli
from tests.support.cluster import new_database
from tests.support.http import free_port, wait_until_ok

TOO_DEEP = (f"filter: nests deeper than {MAX_FILTER_DEPTH} levels (parentheses, brackets, "
            "NOT and signs count).")


def parens(depth: int) -> str:
    return "(" * depth + "owner = 'a'" + ")" * depth


@pytest.mark.parametrize(("text", "depth"), [
    ("owner = 'a'", 0), ("(owner = 'a')", 1), ("NOT NOT owner = 'a'", 2),
    ("a = - - 1", 2), ("a = 1 - 1 - 1", 1), ("owner = '((((('", 0),
    ("owner = 'it''s ((('", 0), ('{"op": "=", "args": [{"property": "a"}, -1]}', 3),
    ('{"op": "=", "args": ["[[[\\"", 1]}', 2), ("NOTE = 'x' AND note = 'y'", 0),
    ("S_INTERSECTS(geometry, POLYGON((-10 -10, 10 -10, 10 10, -10 -10)))", 4),
])
def test_nesting(text: str, depth: int) -> None:
    assert nesting(text) == depth


def routes(collection: str) -> list[str]:
    return ["/data/search", f"/data/collections/{collection}/items", "/data/collections",
            "/data/catalogs/bounds/_search"]


@pytest.fixture
async def scoped(alice_data: httpx.AsyncClient, collection: str) -> str:
    await alice_data.delete("/data/catalogs/bounds?_force=true")
    r = await alice_data.post("/data/catalogs", json={
        "id": "bounds", "type": "Catalog", "description": "bounds",
        "links": [{"rel": "child", "href": f"collections/{collection}"}]})
    assert r.status_code == 201, r.text
    return collection


@pytest.mark.parametrize(("text", "lang"), [
    (parens(2500), "cql2-text"), ("NOT " * 500 + "owner = 'a'", "cql2-text"),
    ("a = " + "-" * 5000 + "1", "cql2-text"), ("a = " + "f(" * 100 + "1" + ")" * 100,
                                                "cql2-text"),
    ('{"op": "not", "args": [' * 40 + 'true' + "]}" * 40, "cql2-json"),
])
async def test_deep_filters_are_400_everywhere(anon: httpx.AsyncClient, scoped: str,
                                               text: str, lang: str) -> None:
    for path in routes(scoped):
        r = await anon.get(path, params={"filter": text, "filter-lang": lang})
        assert (r.status_code, r.json()) == (400, {"code": "InvalidQueryParameter",
                                                   "description": TOO_DEEP}), path


async def test_long_filters_are_400(anon: httpx.AsyncClient, scoped: str) -> None:
    text = " OR ".join(["owner = 'a'"] * 2000)
    for path in routes(scoped):
        r = await anon.get(path, params={"filter": text, "filter-lang": "cql2-text"})
        assert (r.status_code, r.json()) == (400, {
            "code": "InvalidQueryParameter",
            "description": f"filter: at most {MAX_FILTER_LENGTH} characters (this one has "
                           f"{len(text)}); send a longer filter in a POST /search body."}), path


async def test_filters_within_the_bounds_are_answered(anon: httpx.AsyncClient,
                                                      scoped: str) -> None:
    deep = parens(MAX_FILTER_DEPTH - 1)
    for path in routes(scoped):
        r = await anon.get(path, params={"filter": deep, "filter-lang": "cql2-text"})
        assert r.status_code == 200, (path, r.text)
    r = await anon.get("/data/search", params={"filter": "owner", "filter-lang": "cql2-text"})
    assert (r.status_code, r.json()["description"]) == (
        400, "Invalid filter: it must be a boolean expression (an operation such as owner = "
             "'alice'), not a value or a property alone.")
    r = await anon.get("/data/search", params={"filter": "owner = ", "filter-lang": "cql2-text"})
    assert r.status_code == 400 and r.json()["description"].startswith("Invalid filter: ")


def _worker_pid(server: int) -> int:
    """The uvicorn worker under `geocatalog serve` (spawned by multiprocessing)."""
    children = Path(f"/proc/{server}/task/{server}/children").read_text().split()
    for pid in children:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"spawn_main" in cmdline:
            return int(pid)
    raise AssertionError(f"no worker among {children}")


def _answers_again(base: str, old_worker: int, server: int) -> None:
    """The service answers a page again, from a new worker."""
    while True:  # bounded by the CI's own timeout: the service must come back
        try:
            if httpx.get(f"{base}/data/collections", timeout=5).status_code == 200:
                new_worker = _worker_pid(server)
                if new_worker != old_worker:
                    return
        except (httpx.TransportError, AssertionError):
            pass
        time.sleep(0.2)


@pytest.mark.slow
def test_serve_survives_a_deep_filter_and_a_dead_worker(database_url: str,
                                                        tmp_path: Path) -> None:
    port = free_port()
    env = {"DATABASE_URL": new_database(database_url, "supervised_"),
           "GEOCATALOG_DATA_DIR": str(tmp_path), "OIDC_ISSUER": "", "JWKS_URL": "",
           "LOAD_DEMO_DATA": "true"}
    server = start_cli("serve", "--port", str(port), env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_until_ok(f"{base}/healthz").status_code == 200
        r = httpx.get(f"{base}/data/search", params={"filter": parens(2500),
                                                     "filter-lang": "cql2-text"})
        assert (r.status_code, r.json()["description"]) == (400, TOO_DEEP)
        page = httpx.get(f"{base}/data/search", params={"limit": 3})
        assert page.status_code == 200 and len(page.json()["features"]) == 3
        for sig in (signal.SIGSEGV, signal.SIGKILL):
            worker = _worker_pid(server.pid)
            os.kill(worker, sig)
            _answers_again(base, worker, server.pid)
            page = httpx.get(f"{base}/data/search", params={"limit": 3})
            assert page.status_code == 200 and len(page.json()["features"]) == 3
        assert server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=30)


def like_or(terms: int) -> dict:
    return {"op": "or", "args": [{"op": "like", "args": [{"property": "owner"}, f"a{n}%"]}
                                 for n in range(terms)]}


async def test_large_post_filters_are_400(anon: httpx.AsyncClient, scoped: str) -> None:
    """An OR of 20,000 LIKEs (1.27 MB) took 25 s of the database per request, and six at
    once took the service down: a POST filter is bounded by its size and its operations
    (and its nesting, with the body's), on every route that takes one."""
    posts = [("/data/search", {}), ("/data/catalogs/bounds/_search", {}),
             ("/data/aggregate", {"aggregations": ["total_count"]})]
    huge = like_or(20_000)
    many = like_or(MAX_FILTER_OPERATIONS)  # and one `or`: one operation more than the most
    deep: dict = {"op": "=", "args": [{"property": "owner"}, "a"]}
    for _ in range(MAX_FILTER_DEPTH):
        deep = {"op": "not", "args": [deep]}
    size = len(json.dumps(huge, separators=(",", ":")))
    for path, extra in posts:
        for expression, description in (
                (huge, f"filter: at most {MAX_FILTER_JSON} characters as CQL2-JSON (this one "
                       f"has {size})."),
                (many, f"filter: at most {MAX_FILTER_OPERATIONS} operations (this one has "
                       f"{MAX_FILTER_OPERATIONS + 1}); split the search.")):
            r = await anon.post(path, json={"filter": expression, "filter-lang": "cql2-json",
                                            **extra})
            assert (r.status_code, r.json()) == (400, {
                "code": "InvalidQueryParameter", "description": description}), path
        # nesting: refused with the body, before anything reads it
        r = await anon.post(path, json={"filter": deep, "filter-lang": "cql2-json", **extra})
        assert (r.status_code, r.json()) == (400, {
            "code": "BadRequest", "description": "The request body nests deeper than 64 "
            "levels."}), path
        # within the bounds: answered
        r = await anon.post(path, json={"filter": like_or(100), "filter-lang": "cql2-json",
                                        **extra})
        assert r.status_code == 200, (path, r.text)


async def test_a_filter_of_lone_surrogates_is_400(anon: httpx.AsyncClient) -> None:
    """Found by schemathesis: a filter's string of a lone surrogate (valid JSON, no Unicode
    text) was a 500. A GET's filter is refused by its parser; a POST body by the body's
    check (`test_robustness`), before the filter's own (`bounded_json`) would."""
    r = await anon.get("/data/search", params={
        "filter": '{"op": "=", "args": [{"property": "owner"}, "\\udbba"]}',
        "filter-lang": "cql2-json"})
    assert (r.status_code, r.json()) == (400, {
        "code": "InvalidQueryParameter",
        "description": "Invalid filter: no low surrogate in string: line 1 column 46 "
                       "(char 45)"})


async def test_a_filter_of_an_integer_beyond_64_bits_is_answered(
        anon: httpx.AsyncClient) -> None:
    """JSON's integers have no bound: a POST filter comparing one is answered as the same
    filter in a GET is (it was a 400 saying its strings were no Unicode text)."""
    huge = 10**29
    got = await anon.get("/data/search", params={"filter": f"n = {huge}", "limit": 1})
    posted = await anon.post("/data/search", json={
        "filter": {"op": "=", "args": [{"property": "n"}, huge]}, "filter-lang": "cql2-json",
        "limit": 1})
    assert (posted.status_code, got.status_code) == (200, 200), posted.text
    assert (posted.json()["numberMatched"], posted.json()["features"]) == (
        got.json()["numberMatched"], got.json()["features"])


async def test_an_operation_short_of_its_arguments_is_said_so(
        alice_data: httpx.AsyncClient) -> None:
    """pgstac formats each operation into SQL: `=` with one argument answered its "too
    few arguments for format()"."""
    for cql2, said in (({"op": "=", "args": [{"property": "id"}]}, "= takes 2 arguments, not 1"),
                       ({"op": "between", "args": [{"property": "x"}, 1]},
                        "between takes 3 arguments, not 2"),
                       ({"op": "not", "args": []}, "not takes 1 argument, not 0")):
        r = await alice_data.post("/data/search", json={"filter": cql2})
        assert (r.status_code, r.json()) == (400, {
            "code": "InvalidQueryParameter", "description": f"Invalid filter: {said}."})
