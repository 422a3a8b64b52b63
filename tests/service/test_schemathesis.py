"""schemathesis on both OpenAPI documents, against a real uvicorn and database.

Bounded in examples and time; zero server errors, zero responses outside the documented
schema, zero undocumented status codes. Findings are fixed in the service, not here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support.issuer import ADMIN_RIGHT, PROCESS_CLIENT
from tests.support.stac import make_collection, make_item

pytestmark = pytest.mark.conformance

CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"
FINDINGS = re.compile(r"ST1\d\d [A-Z][a-z]+")  # e.g. "ST101 Server error"


@pytest.mark.parametrize("api, with_token, seconds", [
    ("data", True, 60), ("processes", True, 40), ("data", False, 20), ("processes", False, 15),
])
def test_openapi_fuzzing(live_server: str, issuer, api: str, with_token: bool,
                         seconds: int) -> None:
    schemathesis = Path(sys.executable).with_name("schemathesis")
    command = [str(schemathesis), "run", f"{live_server}/{api}/api",
               "--url", f"{live_server}/{api}" if api == "processes" else live_server,
               "--checks", CHECKS, "--max-examples", "10", "--max-time", str(seconds),
               "--seed", "1", "--workers", "2", "--suppress-health-check", "all"]
    if with_token:
        token = (issuer.token("fuzzer", rights=["manageCollections", "updateCatalog"])
                 if api == "data" else issuer.token("fuzzer", client=PROCESS_CLIENT))
        command += ["--header", f"Authorization: Bearer {token}"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds * 4,
                         env={**os.environ, "NO_COLOR": "1"})
    report = out.stdout + out.stderr
    assert "generated" in report, report[-3000:]  # it did run
    findings = sorted(set(FINDINGS.findall(report)))
    assert not findings, report[-6000:]


def test_fuzzing_finds_nothing_hidden(live_server: str, issuer) -> None:
    """With the token of a user who owns nothing and is in no project, every answer of
    the data API is searched for the mark of alice's private items, her project item and
    her private catalog: none holds it."""
    mark = f"hidden{uuid.uuid4().hex[:10]}"
    collection = f"test_conv-{mark}"
    admin = {"Authorization": f"Bearer {issuer.token('root', rights=[ADMIN_RIGHT])}"}
    alice = {"Authorization": f"Bearer {issuer.token('alice', groups=['ocean-lab'])}"}
    with httpx.Client(base_url=live_server) as client:
        r = client.post("/data/collections", json=make_collection(collection), headers=admin)
        assert r.status_code == 201, r.text
        for n, properties in enumerate(({"visibility": "private"},
                                        {"visibility": "project", "project": "ocean-lab"})):
            item = make_item(f"{mark}-{n}")
            item["properties"].update(properties, title=f"{mark} {n}")
            r = client.post(f"/data/collections/{collection}/items", json=item,
                            headers=alice)
            assert r.status_code == 201, r.text
        r = client.post("/data/catalogs", headers=alice, json={
            "type": "Catalog", "id": mark, "description": mark, "visibility": "private"})
        assert r.status_code == 201, r.text
    schemathesis = Path(sys.executable).with_name("schemathesis")
    command = [str(schemathesis), "run", f"{live_server}/data/api", "--url", live_server,
               "--checks", f"{CHECKS},no_hidden_object", "--max-examples", "10",
               "--max-time", "40", "--seed", "2", "--workers", "2",
               "--suppress-health-check", "all",
               "--header", f"Authorization: Bearer {issuer.token('nobody')}"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=160,
                         env={**os.environ, "NO_COLOR": "1", "HIDDEN_MARK": mark,
                              "SCHEMATHESIS_HOOKS": "tests.support.fuzz_hooks"})
    report = out.stdout + out.stderr
    assert "generated" in report, report[-3000:]
    assert "hidden from this caller" not in report, report[-6000:]
    findings = sorted(set(FINDINGS.findall(report)))
    assert not findings, report[-6000:]
