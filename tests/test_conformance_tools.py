"""Tools we did not write check our claims: stac-api-validator, ogctests, ogcapi-registry.

stac-api-validator and ogctests run from their own venvs (`.tools/<name>`, made by
`make test`: their pins clash with ours) against a real uvicorn serving the demo data set in
a database of its own. Schema downloads are answered from local copies
(tests/conformance/offline/sitecustomize.py): the internet is closed here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADMIN_RIGHT
from tests.issuer import TestIssuer

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT / "tests" / "conformance"
OFFLINE_ENV = {"PYTHONPATH": str(CONFORMANCE / "offline"),
               "OFFLINE_SCHEMAS": str(CONFORMANCE / "schemas")}

#: stac-api-validator's class names, and how the conformance URI we claim for each ends.
VALIDATOR_CLASSES = {
    "core": "/core", "collections": "/collections", "features": "/ogcapi-features",
    "item-search": "/item-search", "filter": "/item-search#filter",
    "item-search#sort": "/item-search#sort", "item-search#fields": "/item-search#fields",
    "item-search#query": "/item-search#query", "features#sort": "/ogcapi-features#sort",
    "features#fields": "/ogcapi-features#fields", "features#query": "/ogcapi-features#query",
    "transaction": "/ogcapi-features/extensions/transaction", "browseable": "/browseable",
    "children": "/children",
}
DEMO_COLLECTION = "climate_forecast-sea_surface_temperature"
NORTH_ATLANTIC = {"type": "Polygon",
                  "coordinates": [[[-50, 30], [-20, 30], [-20, 50], [-50, 50], [-50, 30]]]}


def tool(name: str, executable: str) -> Path:
    path = ROOT / ".tools" / name / "bin" / executable
    if not path.exists():
        pytest.fail(f"{path} is missing: `make test` installs it (tests/conformance/tools)")
    return path


def run_tool(args: list[str | Path], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env={**env, **OFFLINE_ENV}, cwd=ROOT)


def claimed_validator_classes(conforms_to: list[str]) -> list[str]:
    stac = [uri for uri in conforms_to if uri.startswith("https://api.stacspec.org/")]
    return [name for name, suffix in VALIDATOR_CLASSES.items()
            if any(re.fullmatch(r"https://api\.stacspec\.org/v1\.[^/]+" + re.escape(suffix),
                                uri) for uri in stac)]


def test_stac_api_validator(seeded_server: str, issuer: TestIssuer) -> None:
    data = f"{seeded_server}/data"
    classes = claimed_validator_classes(httpx.get(f"{data}/conformance").json()["conformsTo"])
    assert {"core", "collections", "features", "item-search", "filter",
            "transaction"} <= set(classes), classes
    token = issuer.token("root", rights=[ADMIN_RIGHT])
    out = run_tool([
        tool("stac-api-validator", "stac-api-validator"), "--root-url", f"{data}/",
        *(arg for name in classes for arg in ("--conformance", name)),
        "--collection", DEMO_COLLECTION, "--geometry", json.dumps(NORTH_ATLANTIC),
        "--transaction-collection", DEMO_COLLECTION,
        "--headers", f"Authorization: Bearer {token}",
        "--fields-nested-property", "properties.title",
        "--query-comparison-field", "properties.datetime",
        "--query-eq-value", "2021-01-01T00:00:00Z",
        "--query-neq-value", "2021-01-01T00:00:00Z",
        "--query-lt-value", "2022-01-01T00:00:00Z",
        "--query-lte-value", "2022-01-01T00:00:00Z",
        "--query-gt-value", "2021-01-01T00:00:00Z",
        "--query-gte-value", "2021-01-01T00:00:00Z",
        "--query-substring-field", "properties.title",
        "--query-starts-with-value", "Sea",
        "--query-ends-with-value", "2021",
        "--query-contains-value", "surface",
        "--query-in-field", "properties.owner",
        "--query-in-values", "demo,nobody",
    ])
    assert out.returncode == 0, (out.stdout + out.stderr)[-8000:]
    assert token not in out.stdout + out.stderr


def test_ogctests_features_core(seeded_server: str) -> None:
    """The OGC API - Features Part 1 core tests (ogctests bundles its own schemas)."""
    out = run_tool([tool("ogctests", "python"), "-m", "ogctests", "features/core",
                    "-i", f"{seeded_server}/data"])
    assert out.returncode == 0, (out.stdout + out.stderr)[-8000:]


@pytest.mark.parametrize("api", ["/processes", "/data"])
async def test_ogcapi_registry(anon: httpx.AsyncClient, api: str) -> None:
    """Each OpenAPI document satisfies the OGC conformance classes its API declares."""
    from ogcapi_registry import parse_conformance_classes, validate_ogc_api

    document = (await anon.get(f"{api}/api")).json()
    declared = (await anon.get(f"{api}/conformance")).json()["conformsTo"]
    classes = parse_conformance_classes(
        [uri for uri in declared if uri.startswith("http://www.opengis.net/spec/")])
    assert classes
    result = validate_ogc_api(document, classes)
    assert result.is_valid, result.errors
