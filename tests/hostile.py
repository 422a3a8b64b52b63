"""A hostile-input pass over every operation of both OpenAPI documents: each query parameter
gets huge numbers and, where it takes one, a deeply nested or very long filter or a forged
paging token; each JSON body gets huge numbers and a deeply nested document at every field
it names, and a search body an OR of 20,000 terms; each CWL body (a deployment) packages
of thousands of steps, of YAML aliases, of deep nesting (and, `heavy`, of a megabyte of
JavaScript). Every answer must be a client error or success with a JSON body (never a
5xx, never a dropped connection), and the service must answer again after each request.

Run by `make fuzz` (with more shapes) and, with fewer, by `make test`
(tests/service/test_hostile_inputs.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

HUGE_NUMBERS: list[Any] = [2**70, -(2**70), 10**400, 1e308, -1e308, 1180591620717411303424]
DEEP = 3000


def deep_filters(depth: int = DEEP) -> list[str]:
    """Filters that crashed or exhausted the cql2 parser (text) and deep CQL2-JSON."""
    return ["(" * depth + "owner = 'a'" + ")" * depth,
            "NOT " * depth + "owner = 'a'",
            "a = " + "-" * depth + "1",
            "a = " + "f(" * depth + "1" + ")" * depth,
            " OR ".join(["owner = 'a'"] * (depth // 3)),
            '{"op":"not","args":[' * (depth // 6) + "true" + "]}" * (depth // 6)]


def forged_tokens() -> list[str]:
    """Paging tokens the service did not issue: of items that may be hidden or missing,
    malformed, long."""
    return ["next:" + b"x".hex() + ":" + b"priv".hex(), "prev:zz:zz",
            "next:" + "41" * 5000 + ":41", "next::", "next:00:00", "sideways:41:41"]


def huge_or(terms: int = 20_000) -> dict[str, Any]:
    """An OR of `terms` LIKEs (1.27 MB): 25 s of the database per request, unbounded."""
    return {"op": "or", "args": [{"op": "like", "args": [{"property": "owner"}, f"a{n}%"]}
                                 for n in range(terms)]}


def hostile_packages(heavy: bool = False) -> list[str]:
    """CWL packages that cost the deploying process dearly: 5,000 steps (97 s of the API's
    process), YAML aliases expanding to gigabytes, deep nesting; `heavy`: a megabyte of
    JavaScript (14.5 s of JSHint)."""
    from tests.support.cwl import many_steps, scripted

    aliases = "a: &a [" + ",".join(["x"] * 50) + "]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [" + ",".join([f"*{chr(97 + n)}"] * 50) + "]\n"
        for n in range(8))
    packages = [many_steps("hostile-steps", 5000), "cwlVersion: v1.2\n" + aliases,
                "cwlVersion: v1.2\nclass: CommandLineTool\nid: deep\nx: " + "[" * DEEP
                + "]" * DEEP + "\n"]
    return packages + ([scripted("hostile-script", 15_000)] if heavy else [])


def nested(depth: int = DEEP) -> str:
    """A JSON document nested `depth` levels (as text: encoders stop far earlier)."""
    return '{"a": [' * depth + "1" + "]}" * depth


@dataclass(frozen=True)
class Probe:
    method: str
    path: str
    params: dict[str, str] | None = None
    body: Any = None
    raw: str | None = None
    media_type: str = "application/json"


def _concrete(path: str) -> str:
    return path.replace("{path:path}", "x/y").replace("{path}", "x/y") \
        .replace("{", "x").replace("}", "")


def _schema(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][name]
    return schema


def probes(document: dict[str, Any], prefix: str = "", heavy: bool = False
           ) -> Iterator[Probe]:
    """What to send to every operation of an OpenAPI document served under `prefix`."""
    for template, operations in document["paths"].items():
        path = prefix + _concrete(template)
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "query":
                    continue
                name = parameter["name"]
                values = [str(n) for n in HUGE_NUMBERS] + ["9" * 400]
                if name in ("filter", "intersects", "query", "bbox", "sortby", "fields"):
                    values += deep_filters()
                if name == "token":
                    values += forged_tokens()
                for value in values:
                    params = {name: value}
                    if name == "filter":
                        params["filter-lang"] = "cql2-json" if value.startswith("{") \
                            else "cql2-text"
                    yield Probe(method.upper(), path, params=params)
            body = operation.get("requestBody", {}).get("content", {})
            if "application/cwl+yaml" in body:
                for package in hostile_packages(heavy):
                    yield Probe(method.upper(), path, raw=package,
                                media_type="application/cwl+yaml")
            for media in body:
                if "json" not in media:
                    continue
                schema = _schema(document, body[media].get("schema", {}))
                fields = list(schema.get("properties", {})) or ["value"]
                if "filter" in fields:
                    yield Probe(method.upper(), path, body={"filter": huge_or(),
                                                            "filter-lang": "cql2-json"})
                for field in fields:
                    for value in HUGE_NUMBERS:
                        yield Probe(method.upper(), path, body={field: value})
                    for raw in (nested(), "NaN", "-Infinity"):
                        yield Probe(method.upper(), path, raw=f'{{"{field}": {raw}}}')
                yield Probe(method.upper(), path, raw="[" * 100_000 + "]" * 100_000)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def send(client: httpx.Client, probe: Probe, token: str | None) -> str | None:
    """What is wrong with the service's answer to `probe`, or None."""
    headers = {"Accept": "application/json", "Content-Type": probe.media_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    content = probe.raw if probe.raw is not None else (
        _json(probe.body) if probe.body is not None else None)
    try:
        r = client.request(probe.method, probe.path, params=probe.params, content=content,
                           headers=headers)
    except httpx.InvalidURL:
        return None  # longer than a client sends (and than uvicorn takes)
    except httpx.TransportError as e:
        return f"{probe.method} {probe.path}: no answer ({type(e).__name__})"
    where = f"{probe.method} {probe.path} {sorted(probe.params or {})}"
    if r.status_code >= 500 and r.status_code != 503:
        return f"{where}: {r.status_code} {r.text[:200]}"
    if r.status_code >= 400 and not r.headers.get("content-type", "").startswith(
            "text/html"):  # a page (the sign-in form) answers people, in HTML
        try:
            r.json()
        except ValueError:
            return f"{where}: {r.status_code} without a JSON body: {r.text[:100]}"
    return None


def hostile_pass(base: str, documents: dict[str, str], tokens: dict[str, str | None],
                 timeout: float = 120, heavy: bool = False) -> list[str]:
    """Problems found over every operation of each API (`documents`: API prefix ->
    OpenAPI URL; `tokens`: API prefix -> bearer token or None; `heavy`: with the shapes
    that cost seconds each)."""
    problems: list[str] = []
    with httpx.Client(base_url=base, timeout=timeout) as client:
        for prefix, url in documents.items():
            document = client.get(url).json()
            for probe in probes(document, prefix, heavy):
                if (problem := send(client, probe, tokens.get(prefix))) is not None:
                    problems.append(problem)
                if client.get("/healthz").status_code != 200:
                    problems.append(f"{probe.method} {probe.path}: the service stopped "
                                    "answering")
                    return problems
    return problems
