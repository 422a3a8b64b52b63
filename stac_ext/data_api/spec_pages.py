"""Our own conformance classes, as URIs the service answers: `{api}/spec/<name>/<version>`,
a page saying what the class promises. Extensions declare them relative (`spec/...`); the
conformance declaration, the landing page and catalog documents write them against the
address the request came to, so every deployment's URIs resolve (there is no global
geocatalog domain to host them)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

import attr
from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse
from stac_fastapi.types.errors import NotFoundError
from stac_fastapi.types.extension import ApiExtension

#: Where our classes live under the API's root
SPEC = "spec/"


def absolute(classes: Iterable[str], api_root: str) -> list[str]:
    """`classes` with ours (`spec/...`) made absolute against `api_root` (ending in /)."""
    return [api_root + c if c.startswith(SPEC) else c for c in classes]


@attr.s
class SpecPages(ApiExtension):
    """`GET {api}/spec/{class}`: what each of `classes` (relative URI: its description)
    promises, as a page; any other is 404."""

    classes: dict[str, str] = attr.ib(factory=dict)
    conformance_classes: list[str] = attr.ib(factory=list)
    schema_href: str | None = attr.ib(default=None)

    def register(self, app: FastAPI) -> None:
        router = APIRouter(prefix=f"{app.state.router_prefix}/spec")

        @router.get("/{name}/{version}", response_class=HTMLResponse,
                    summary="What one of this API's own conformance classes promises")
        async def conformance_class(name: str, version: str) -> HTMLResponse:
            uri = f"{SPEC}{name}/{version}"
            if (description := self.classes.get(uri)) is None:
                raise NotFoundError(f"No conformance class {uri} here.")
            return HTMLResponse(
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{escape(name)} {escape(version)}</title></head><body>"
                f"<h1>{escape(name)} {escape(version)}</h1><p>{escape(description)}</p>"
                "</body></html>")

        app.include_router(router, tags=["Conformance"])
