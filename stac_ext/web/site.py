"""What the web face needs from the composition root, and how it joins the app."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from stac_ext.web import stac_browser
from stac_ext.web.pages import (
    api_docs,
    catalogs,
    explore,
    jobs,
    landing,
    processes,
    proposals,
    search,
    subscriptions,
)

STATIC = Path(__file__).parent / "static"
#: Where the web face serves files that are the same for everyone (our scripts and styles,
#: Swagger UI's, ECharts', STAC Browser's built assets)
STATIC_PATHS = ("/ui/static/", "/ui/swagger-ui/", "/ui/charts/", "/browser/js/",
                "/browser/css/", "/browser/img/", "/favicon.ico")
#: The data explorer's page, from the service root: the default target of items' explorer
#: links (`?collection=&item=&source=<asset href>`; a job's file: `?source=` alone).
EXPLORER_PAGE = explore.PAGE


@dataclass(frozen=True)
class SignIn:
    """The OIDC provider the service signs browsers in with (`platform.sessions`)."""

    issuer: str  # discovery at `{issuer}/.well-known/openid-configuration`
    client_id: str
    local: bool = False  # the local development issuer (a person picks their own rights)


@dataclass(frozen=True)
class WebFace:
    title: str
    data_prefix: str  # "/data"
    processes_prefix: str  # "/processes"
    stac_browser_dir: Path  # the built STAC Browser: `dist/`
    swagger_ui_dir: Path  # Swagger UI's files (`make web`), for the API documentation pages
    sign_in: SignIn
    job_statuses: tuple[str, ...]  # what a job list filters by (the process API's)
    charts_dir: Path = Path(".web/echarts")  # Apache ECharts (`make web`), the explorer's charts
    catalog_path: str = ".+"  # the catalogs tree's pattern of a catalog's path of ids
    admin_right: str = "manageCollections"  # pages show administrators every form
    deploy_right: str = "deployProcess"  # pages offer the deploy form to its holders


def add_web_face(app: FastAPI, face: WebFace) -> None:
    """Routers for `/browser/`, `/ui/` and the HTML landing page (`negotiation` sends
    browsers there; the composition root adds it among the middleware)."""
    app.state.web = face
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="web_static")
    app.mount("/ui/swagger-ui", StaticFiles(directory=face.swagger_ui_dir, check_dir=False),
              name="web_swagger_ui")
    app.mount("/ui/charts", StaticFiles(directory=face.charts_dir, check_dir=False),
              name="web_charts")
    api_docs.add_data_docs(api_docs.router, f"{face.data_prefix}/api.html")
    for module in (landing, processes, jobs, catalogs, search, subscriptions, api_docs,
                   proposals, explore):
        app.include_router(module.router, include_in_schema=False)
    app.include_router(stac_browser.router(face.stac_browser_dir / "dist"),
                       include_in_schema=False)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        """What browsers ask every page for (STAC Browser's name none): the service's icon,
        not a 404 in every page's console."""
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "public, max-age=86400"})

