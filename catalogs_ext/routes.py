"""The `/catalogs` routes: reads (one query each) and writes (one transaction each)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse
from stac_fastapi.types.requests import get_base_url

from catalogs_ext import queries
from catalogs_ext.access import CatalogAccess, User
from catalogs_ext.documents import DataPaths, catalog_document, catalog_url, root_document
from catalogs_ext.families import FAMILIES_ID, GENERATED
from catalogs_ext.links import split_links
from catalogs_ext.models import CATALOG_PATH, CatalogIn
from catalogs_ext.store import CatalogStore
from stac_ext.platform.service.errors import Forbidden

Force = Annotated[bool, Query(alias="_force", description="PUT: replace the links; "
                              "DELETE: remove the whole subtree.")]
CatalogPath = Annotated[str, Path(description="Ids from the top-level catalog down, "
                                  "separated by `/`.", pattern=CATALOG_PATH)]


def read_router(prefix: str, paths: DataPaths, access: CatalogAccess) -> APIRouter:
    router = APIRouter(prefix=prefix)

    @router.get("", summary="The root of the catalogs tree")
    async def get_root(request: Request) -> dict:
        async with request.app.state.get_connection(request, "r") as conn:
            rows = await CatalogStore(conn).top_level(access.reader_json(request))
            families = await conn.fetchval(queries.FAMILIES_TITLE)
        # the generated variables tree first: the way in beside search
        generated = [{"id": FAMILIES_ID, "title": families}] if families else []
        return root_document(get_base_url(request), [*generated, *rows])

    async def slashed(request: Request) -> RedirectResponse:
        """A catalog's address (or the root's) with a trailing slash, redirected as every
        other address of the API (it was a 400: no catalog path ends with `/`)."""
        return RedirectResponse(request.url.replace(path=request.url.path.rstrip("/")),
                                status_code=307)

    for where in ("/", "/{path:path}/"):
        router.add_api_route(where, slashed, methods=["GET"], include_in_schema=False)

    @router.get("/{path:path}/_subtree", summary="The paths of a catalog's sub-catalogs, at "
                "every depth", description="Those the caller reads, level by level and by id "
                "(a hidden catalog, and what is under it, left out), at most `limit`. What a "
                "forced delete would remove, as far as the caller sees.")
    async def get_subtree(path: CatalogPath, request: Request,
                          limit: Annotated[int, Query(ge=1, le=10000)] = 1000) -> dict:
        async with request.app.state.get_connection(request, "r") as conn:
            paths = await CatalogStore(conn).subtree(path, access.reader_json(request), limit)
        return {"catalogs": paths}

    @router.get("/{path:path}", summary="A catalog, by its path of ids")
    async def get_catalog(path: CatalogPath, request: Request) -> dict:
        async with request.app.state.get_connection(request, "r") as conn:
            row = await CatalogStore(conn).read(path, access.reader_json(request))
        return catalog_document(get_base_url(request), row, paths)

    return router


HrefProblem = Callable[[Any], str | None]


def _check_hrefs(body: CatalogIn, href_problem: HrefProblem) -> None:
    if problem := href_problem(body.model_dump(mode="json", exclude_none=True)):
        raise HTTPException(status_code=400, detail=f"Catalog {body.id}: {problem}")


def write_router(prefix: str, paths: DataPaths, access: CatalogAccess,
                 href_problem: HrefProblem) -> APIRouter:
    router = APIRouter(prefix=prefix)
    _add_creation(router, paths, access, href_problem)
    _add_changes(router, paths, access, href_problem)
    return router


def _add_creation(router: APIRouter, paths: DataPaths, access: CatalogAccess,
                  href_problem: HrefProblem) -> None:
    """POST: a top-level catalog, or a child of a catalog the caller owns."""

    async def create(request: Request, body: CatalogIn, user: User,
                     parent_path: str | None) -> JSONResponse:
        if parent_path is None and body.id == FAMILIES_ID:
            raise Forbidden(GENERATED)
        _check_hrefs(body, href_problem)
        api_root = get_base_url(request)
        targets, others = split_links(body.links or [], api_root)
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            store = CatalogStore(conn)
            reader = access.reader_json(request)
            parent = None
            if parent_path is not None:
                parent = await store.lock(parent_path, queries.LOCK_PARENT)
                await store.check_readable(parent_path, reader)
                access.check(user, "change", parent)
            access.check_project(user, body.project)
            project = body.project or (parent["project"] if parent else None)
            access.check_visibility(body.visibility, project)
            refs = await store.check_targets(targets, None, reader)
            path = await store.create(parent, body, user.username, project, refs, others)
            document = catalog_document(api_root, await store.read(path, reader), paths)
        return JSONResponse(document, status_code=201,
                            headers={"Location": catalog_url(api_root, path)})

    @router.post("", status_code=201, summary="Create a top-level catalog")
    async def post_root(request: Request, body: Annotated[CatalogIn, Body()],
                        user: User = Depends(access.writer)) -> JSONResponse:
        return await create(request, body, user, None)

    @router.post("/{path:path}", status_code=201, summary="Create a sub-catalog")
    async def post_child(path: CatalogPath, request: Request,
                         body: Annotated[CatalogIn, Body()],
                         user: User = Depends(access.writer)) -> JSONResponse:
        return await create(request, body, user, path)


def _add_changes(router: APIRouter, paths: DataPaths, access: CatalogAccess,
                 href_problem: HrefProblem) -> None:
    """PUT (fields; links only with `_force`) and DELETE (the subtree only with `_force`)."""

    @router.put("/{path:path}", summary="Update a catalog (links only with _force)")
    async def put_catalog(path: CatalogPath, request: Request,
                          body: Annotated[CatalogIn, Body()], force: Force = False,
                          user: User = Depends(access.writer)) -> dict:
        if body.id != path.rsplit("/", 1)[-1]:
            raise HTTPException(status_code=400, detail=f"The body's id ({body.id}) "
                                f"is not the catalog's ({path}).")
        _check_hrefs(body, href_problem)
        targets, others = split_links(body.links or [], get_base_url(request))
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            store = CatalogStore(conn)
            reader = access.reader_json(request)
            row = await store.lock(path)
            await store.check_readable(path, reader)
            access.check(user, "update", row)
            if body.project is not None and body.project != row["project"]:
                raise HTTPException(status_code=400, detail="A catalog stays in the project "
                                    "it was created in: leave `project` out, or send the "
                                    "current one.")
            access.check_visibility(body.visibility, row["project"])
            if body.links is not None:
                if not force:
                    raise HTTPException(status_code=400, detail="`links` would replace the "
                                        "catalog's links: repeat with `_force=true`, or "
                                        "leave `links` out to update other fields.")
                refs = await store.check_targets(targets, path, reader,
                                                 await store.child_ids(row["pk"]))
                await store.replace_links(row["pk"], refs, reader)
            await store.update_fields(row["pk"], body,
                                      others if body.links is not None else None)
            return catalog_document(get_base_url(request), await store.read(path, reader),
                                    paths)

    @router.delete("/{path:path}", summary="Delete a catalog (its subtree with _force)")
    async def delete_catalog(path: CatalogPath, request: Request, force: Force = False,
                             user: User = Depends(access.writer)) -> dict:
        async with request.app.state.get_connection(request, "w") as conn, conn.transaction():
            store = CatalogStore(conn)
            reader = access.reader_json(request)
            row = await store.lock(path)
            await store.check_readable(path, reader)
            access.check(user, "change", row)
            subtree = await store.lock_subtree(row["pk"], reader)
            # what the caller does not read is neither removed nor named (a project's
            # members change its catalogs, a member's private one among them)
            if not all(c["readable"] for c in subtree):
                raise Forbidden(f"Catalog {path} holds catalogs you cannot read: nothing "
                                "was removed. Their owners, or an administrator, remove "
                                "them.")
            if not force and await store.has_children(row["pk"]):
                raise HTTPException(status_code=409, detail=f"Catalog {path} has children: "
                                    "repeat with `_force=true` to remove it and its "
                                    "sub-catalogs.")
            others = [c["path"] for c in subtree if not access.governs(user, c)]
            if others:
                raise Forbidden(f"The subtree holds {len(others)} catalog(s) you may not "
                                 f"delete (e.g. {others[0]}): nothing was removed.")
            return {"deleted": await store.delete_subtree(row["pk"])}
