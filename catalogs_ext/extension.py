"""The catalogs tree as a stac-fastapi ApiExtension, registered under the API prefix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attr
from fastapi import FastAPI
from stac_fastapi.types.extension import ApiExtension

from catalogs_ext.access import CatalogAccess
from catalogs_ext.documents import DataPaths
from catalogs_ext.families import families_router
from catalogs_ext.routes import read_router, write_router
from catalogs_ext.search import SubtreeSearch, search_router

#: Relative: the data API serves it, and writes it against its own address
CONFORMANCE = "spec/catalogs-tree/v1.0"
SPEC = ("/catalogs holds a tree of catalogs by their path of ids: GET any catalog; POST a "
        "child, PUT, DELETE (a catalog with children only with _force=true); each catalog "
        "links collections and items of the API by child and item links, has an owner and "
        "optionally a project, and /catalogs/{path}/_search searches the items its subtree "
        "links, as /search does.")


@attr.s
class CatalogTreeExtension(ApiExtension):
    """`/catalogs`: GET the root and any catalog by its path of ids; POST, PUT, DELETE.

    Named apart from stock's own `CatalogsExtension` (`ENABLE_CATALOGS_EXTENSION`), which
    would mount on the same path: the composition root refuses to run both.
    """

    access: CatalogAccess = attr.ib()
    paths: DataPaths = attr.ib()
    search: SubtreeSearch | None = attr.ib(default=None)
    #: What is wrong with a catalog body's hrefs (a scheme browsers should not follow), or
    #: None: the data API's rule, handed in by the composition root.
    href_problem: Callable[[Any], str | None] = attr.ib(default=lambda _: None)
    conformance_classes: list[str] = attr.ib(factory=lambda: [CONFORMANCE])
    schema_href: str | None = attr.ib(default=None)

    def landing_links(self, base_url: str) -> list[dict[str, Any]]:
        """The data API's landing page links the tree's root: a child catalog, as STAC
        Browser and pystac walk one."""
        return [{"rel": "child", "type": "application/json", "title": "Catalogs",
                 "href": f"{base_url}catalogs"}]

    def register(self, app: FastAPI) -> None:
        prefix = f"{app.state.router_prefix}/catalogs"
        # the generated tree first: it answers its own paths, `_search` among them
        app.include_router(families_router(prefix, self.paths, self.access),
                           tags=["Catalogs"])
        if self.search is not None:  # before the catalogs' own `/{path}` routes
            app.include_router(search_router(prefix, self.search), tags=["Catalogs"])
        app.include_router(read_router(prefix, self.paths, self.access), tags=["Catalogs"])
        app.include_router(write_router(prefix, self.paths, self.access, self.href_problem),
                           tags=["Catalogs"])
