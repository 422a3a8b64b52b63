"""schemathesis on both OpenAPI documents, against a real uvicorn and database.

Bounded in examples and time; zero server errors, zero responses outside the documented
schema, zero undocumented status codes. Findings are fixed in the service, not here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.issuer import PROCESS_CLIENT

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
