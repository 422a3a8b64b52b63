"""Completes the generated OpenAPI documents so that they say what the service answers.

FastAPI documents 200 and a 422 we never send; stac-fastapi leaves some path parameters
undeclared. Both documents (data API, processes) get: every path parameter declared, the
error statuses each operation can answer with the error body of that API, and (for
operations that take `fields`) a 200 schema that allows partial items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.routing import request_response
from starlette.routing import Route

_PARAM = re.compile(r"{([^}:]+)(?::[^}]+)?}")
_READ_ERRORS = {"400": "Bad request", "404": "Not found", "500": "Internal error",
                "503": "Database unavailable"}
_TOKEN_ERRORS = {"401": "Invalid or expired token", "403": "A token of another client"}
_WRITE_ERRORS = {"401": "No or invalid token", "403": "Not allowed for this token",
                 "409": "Conflicts with the current state", "413": "Body too large"}


def _complete(document: dict[str, Any], error_schema: dict[str, Any],
              protected: Callable[[str, str], bool], token_reads: bool) -> dict[str, Any]:
    components = document.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = error_schema
    if token_reads:
        document["components"].setdefault("securitySchemes", {}).setdefault(
            "HTTPBearer", {"type": "http", "scheme": "bearer",
                           "description": "An OIDC access token (JWT)."})
    error_ref = {"$ref": "#/components/schemas/Error"}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            declared = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "path"}
            for name in _PARAM.findall(path):
                if name not in declared:
                    operation.setdefault("parameters", []).append(
                        {"name": name, "in": "path", "required": True,
                         "schema": {"type": "string"}})
            responses = operation["responses"]
            responses.pop("422", None)
            errors = dict(_READ_ERRORS)
            if protected(path, method):
                errors |= _WRITE_ERRORS
            elif token_reads:  # reads take an optional token: a bad one is refused
                operation.setdefault("security", [{"HTTPBearer": []}, {}])
                errors |= _TOKEN_ERRORS
            for status, text in errors.items():
                responses.setdefault(status, {"description": text, "content": {
                    "application/json": {"schema": error_ref}}})
            if any(p.get("name") == "fields" for p in operation.get("parameters", [])) or (
                    path.endswith(("/search", "/items")) and method == "post"):
                ok = (responses.get("200") or responses.get("201") or {}).get("content", {})
                for media in ok.values():
                    media["schema"] = {"type": "object", "description": "GeoJSON: partial "
                                       "items with `fields`; `{created}` for a collection"}
    return document


#: What FastAPI writes (stock stac-fastapi says 3.0 in its headers and links).
OPENAPI_MEDIA_TYPE = "application/vnd.oai.openapi+json;version=3.1"


def serve_openapi_as(app: FastAPI, media_type: str = OPENAPI_MEDIA_TYPE,
                     older: tuple[str, Callable[[dict[str, Any]], dict[str, Any]]] | None
                     = None) -> None:
    """Answer the OpenAPI document with `media_type` (stock stac-fastapi wraps the route
    to say 3.0; the document FastAPI generates is 3.1); `older`: another version's media
    type and the document converted to it, for a client whose `Accept` names only that
    version (GDAL and QGIS ask for 3.0, and read no other)."""
    route = next(r for r in app.router.routes
                 if isinstance(r, Route) and r.path == app.openapi_url)
    endpoint = route.endpoint
    converted: list[bytes] = []  # made once, as the document is

    async def openapi_endpoint(request: Request) -> Response:
        if older is not None and _only(request.headers.get("accept", ""), older[0],
                                       media_type):
            if not converted:
                converted.append(json.dumps(older[1](app.openapi())).encode())
            return Response(converted[0], media_type=older[0])
        response: Response = await endpoint(request)
        response.headers["content-type"] = media_type
        return response

    route.app = request_response(openapi_endpoint)


def _only(accept: str, wanted: str, other: str) -> bool:
    """Whether `accept` names the version of `wanted` and not that of `other`."""
    def version(media_type: str) -> str:
        return media_type.partition("version=")[2]

    said = accept.replace(" ", "").lower()
    return f"version={version(wanted)}" in said and f"version={version(other)}" not in said


def complete_openapi(app: FastAPI, error_schema: dict[str, Any],
                     protected: Callable[[str, str], bool], token_reads: bool = False) -> None:
    """Replace `app.openapi` by one that completes the generated document once;
    `token_reads`: every other operation takes an optional bearer token."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _complete(generate(), error_schema, protected, token_reads)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way


STAC_ERROR = {"type": "object", "required": ["code", "description"],
              "properties": {"code": {"type": "string"}, "description": {"type": "string"}}}
OGC_ERROR = {"type": "object", "required": ["type", "title", "status"],
             "properties": {"type": {"type": "string"}, "title": {"type": "string"},
                            "status": {"type": "integer"}, "detail": {"type": "string"}}}


def data_protected(path: str, method: str) -> bool:
    return method in ("post", "put", "patch", "delete") and not path.endswith("/search")


def processes_protected(path: str, method: str) -> bool:
    return not (method == "get" and path in ("/", "/conformance", "/processes"))
