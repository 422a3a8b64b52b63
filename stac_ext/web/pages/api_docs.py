"""Both APIs' documentation pages (`/data/api.html`, stock's `swagger_ui_html`, which its
landing page links; `/processes/api.html`, which the negotiation serves from here):
Swagger UI from the service's own files (`make web`), no CDN and no inline script, so they
render offline and under our Content-Security-Policy."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.templating import page

router = APIRouter()
#: Swagger UI styles its elements inline; it runs only our script and its own file.
DOCS_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
            "base-uri 'self'; object-src 'none'; form-action 'self'")
NOT_BUILT = ("Swagger UI is not built here: `make web` fetches it (Node.js and npm), then "
             "restart the service. The API's OpenAPI document is at ")


def add_data_docs(router: APIRouter, path: str) -> None:
    """The data API's page at `path` (its prefix's `api.html`), by stock's route name."""

    async def data_docs(request: Request) -> HTMLResponse:
        return await api_docs("data", request)

    router.add_api_route(path, data_docs, name="swagger_ui_html", methods=["GET"])


@router.get("/ui/api-docs/{api}")
async def api_docs(api: Literal["data", "processes"], request: Request) -> HTMLResponse:
    face = request.app.state.web
    openapi = f"{face.data_prefix if api == 'data' else face.processes_prefix}/api"
    built = (face.swagger_ui_dir / "swagger-ui-bundle.js").is_file()
    response = page(request, "api_docs.html", {
        "api": api, "openapi": openapi.lstrip("/"), "built": built, "not_built": NOT_BUILT},
        status_code=200 if built else 503)
    response.headers["Content-Security-Policy"] = DOCS_CSP
    return response
