"""Run by ogcapi-registry's own venv: `python registry_check.py API_URL [CLASS ...]`.

Fetches `{API_URL}/api` and `{API_URL}/conformance`, validates the OpenAPI document against
the OGC conformance classes the API declares, prints what it checked and every finding,
and exits 1 on any error or warning, or when a CLASS (the last URI segment, e.g. `core`)
is not declared.
"""

from __future__ import annotations

import sys

import httpx
from ogcapi_registry import parse_conformance_classes, validate_ogc_api


def main(api: str, expected: list[str]) -> int:
    document = httpx.get(f"{api}/api").raise_for_status().json()
    declared = httpx.get(f"{api}/conformance").raise_for_status().json()["conformsTo"]
    classes = parse_conformance_classes(
        [uri for uri in declared if uri.startswith("http://www.opengis.net/spec/")])
    for cls in classes:
        print("declared:", cls.uri)
    missing = set(expected) - {cls.uri.rsplit("/", 1)[-1] for cls in classes}
    result = validate_ogc_api(document, classes)
    for finding in [*result.errors, *result.warnings]:
        print("finding:", finding)
    if missing:
        print("not declared:", sorted(missing))
    return 0 if result.is_valid and not result.warnings and not missing else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
