"""The generated `variables` tree: the collections that hold items, by family (and
sub-family) of their standard names' words, as STAC catalogs under `/catalogs/variables`.
Made from the collections and the families' rules (the shipped `variable_families.json`,
or an administrator's: `/catalogs/variables/_rules`), current at every read, read-only:
a write to it is a 403 saying so."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Body, Depends, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from stac_fastapi.types.errors import NotFoundError
from stac_fastapi.types.requests import get_base_url

from catalogs_ext import queries
from catalogs_ext.access import CatalogAccess, User
from catalogs_ext.documents import JSON, STAC_VERSION, DataPaths, catalog_url
from stac_ext.platform.service.errors import Forbidden

#: The tree's id at the top of `/catalogs` (reserved: no catalog of a user's takes it).
FAMILIES_ID = "variables"
#: The rules this release ships (`migrate` keeps them; an administrator's replace them).
SHIPPED_RULES = Path(__file__).with_name("variable_families.json")
GENERATED = (f"The catalog {FAMILIES_ID} and the catalogs under it are generated from the "
             "collections and the families' rules: they cannot be written. Administrators "
             f"change the rules at /catalogs/{FAMILIES_ID}/_rules.")
UNSEARCHABLE = (f"The catalog {FAMILIES_ID} and the catalogs under it are generated from "
                "the collections: they have no _search or _subtree. Search a family's "
                "collections (its child links) with /search?collections=...")
_ID = r"^[a-z0-9][a-z0-9-]*$"
_WORDS = Annotated[list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$", max_length=256)]],
                   Field(max_length=1000)]


class Subfamily(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=_ID, max_length=128)
    title: str = Field(min_length=1, max_length=1024)
    description: str | None = Field(default=None, max_length=10_000)
    words: _WORDS = Field(min_length=1)


class Family(Subfamily):
    #: names holding one of these (whole words) are not of the family
    except_: _WORDS = Field(default_factory=list, alias="except")
    subfamilies: list[Subfamily] = Field(default_factory=list, max_length=200)


class Other(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=_ID, max_length=128)
    title: str = Field(min_length=1, max_length=1024)
    description: str | None = Field(default=None, max_length=10_000)


class FamilyRules(BaseModel):
    """The families' rules: a name is in every family one of whose `words` (phrases of
    whole words: `sea_water`) it holds and none of whose `except`; in the first sub-family
    whose words it holds, else in the family itself; in `other` when in no family."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(default=FAMILIES_ID, pattern=f"^{FAMILIES_ID}$")
    title: str = Field(min_length=1, max_length=1024)
    description: str = Field(min_length=1, max_length=10_000)
    families: list[Family] = Field(min_length=1, max_length=200)
    other: Other

    @model_validator(mode="after")
    def _unique_ids(self) -> FamilyRules:
        ids = [f.id for f in self.families] + [self.other.id]
        if len(set(ids)) != len(ids):
            raise ValueError("family ids (and `other`'s) must differ from each other")
        for family in self.families:
            subs = [s.id for s in family.subfamilies]
            if len(set(subs)) != len(subs):
                raise ValueError(f"family {family.id}: sub-family ids must differ")
        return self


def _answer(document: dict[str, Any]) -> Response:
    """A catalog as JSON (orjson: a sub-family's links run to a thousand)."""
    return Response(orjson.dumps(document), media_type="application/json")


def _title(collection_id: str) -> str:
    """A collection's standard name in words (the link's title)."""
    words = collection_id.partition("-")[2].replace("_", " ") or collection_id
    return words[:1].upper() + words[1:]


def _document(api_root: str, path: str, title: str, description: str,
              children: list[dict[str, Any]]) -> dict[str, Any]:
    parent = path.rsplit("/", 1)[0] if "/" in path else None
    return {
        "type": "Catalog", "stac_version": STAC_VERSION, "id": path.rsplit("/", 1)[-1],
        "title": title, "description": description,
        "links": [
            {"rel": "self", "type": JSON, "href": catalog_url(api_root, path)},
            {"rel": "root", "type": JSON, "href": catalog_url(api_root, None),
             "title": "Catalogs"},
            {"rel": "parent", "type": JSON, "href": catalog_url(api_root, parent)},
            *children,
        ],
    }


def _catalog_link(api_root: str, path: str, title: str) -> dict[str, Any]:
    return {"rel": "child", "type": JSON, "href": catalog_url(api_root, path), "title": title}


def _collection_links(api_root: str, paths: DataPaths, ids: Sequence[str]
                      ) -> list[dict[str, Any]]:
    return [{"rel": "child", "type": JSON, "href": api_root + paths.collection(c),
             "title": _title(c)} for c in ids]


def _rules_document(row: Mapping[str, Any]) -> dict[str, Any]:
    rules = row["rules"]
    updated = row["updated"]
    return {"rules": json.loads(rules) if isinstance(rules, str) else rules,
            "shipped": row["shipped"],
            "updated": updated.isoformat().replace("+00:00", "Z"),
            "updated_by": row["updated_by"]}


async def _rules(conn: Any) -> dict[str, Any]:
    row = await conn.fetchrow(queries.FAMILY_RULES)
    if row is None:  # migrate puts the shipped ones
        raise HTTPException(status_code=503, detail="The families' rules are not there yet: "
                            "run `geocatalog migrate`.")
    return _rules_document(row)


def families_router(prefix: str, paths: DataPaths, access: CatalogAccess) -> APIRouter:
    """`/catalogs/variables...`: its catalogs, its rules, and a 403 for any write."""
    router = APIRouter(prefix=f"{prefix}/{FAMILIES_ID}")

    async def unsearchable(request: Request) -> None:
        raise NotFoundError(UNSEARCHABLE)

    # before its catalogs' routes, which would read `_search` as a sub-family
    for where in ("", "/{rest:path}"):
        router.add_api_route(f"{where}/_search", unsearchable, methods=["GET", "POST"],
                             include_in_schema=False)
        router.add_api_route(f"{where}/_subtree", unsearchable, methods=["GET"],
                             include_in_schema=False)

    @router.get("", summary="The variables tree: one child per family that holds items")
    async def get_families(request: Request) -> Response:
        api_root = get_base_url(request)
        async with request.app.state.get_connection(request, "r") as conn:
            rules = (await _rules(conn))["rules"]
            families = [*rules["families"], rules["other"]]
            present = {r["family"] for r in await conn.fetch(
                queries.PRESENT_FAMILIES, access.reader_json(request),
                [f["id"] for f in families])}
        return _answer(_document(
            api_root, FAMILIES_ID, rules["title"], rules["description"], [
                _catalog_link(api_root, f"{FAMILIES_ID}/{f['id']}", f["title"])
                for f in families if f["id"] in present]))

    @router.get("/_rules", summary="The families' rules (shipped, or an administrator's)")
    async def get_rules(request: Request) -> dict[str, Any]:
        async with request.app.state.get_connection(request, "r") as conn:
            return await _rules(conn)

    async def set_rules(request: Request, rules: FamilyRules | None, user: User
                        ) -> dict[str, Any]:
        if not access.caller(user).admin:
            raise Forbidden("The families' rules are changed by administrators only.")
        text = None if rules is None else rules.model_dump_json(by_alias=True)
        async with request.app.state.get_connection(request, "w") as conn, \
                conn.transaction():
            await conn.fetchval(queries.SET_FAMILY_RULES, text, user.username)
            return await _rules(conn)

    @router.put("/_rules", summary="Replace the families' rules (administrators)")
    async def put_rules(request: Request, rules: Annotated[FamilyRules, Body()],
                        user: User = Depends(access.writer)) -> dict[str, Any]:
        return await set_rules(request, rules, user)

    @router.delete("/_rules", summary="Back to the shipped rules (administrators)")
    async def delete_rules(request: Request,
                           user: User = Depends(access.writer)) -> dict[str, Any]:
        return await set_rules(request, None, user)

    @router.get("/{family}", summary="A family: its sub-families and collections")
    async def get_family(family: str, request: Request) -> Response:
        return _answer(await _family(request, family, None))

    @router.get("/{family}/{subfamily}", summary="A sub-family: its collections")
    async def get_subfamily(family: str, subfamily: str, request: Request) -> Response:
        return _answer(await _family(request, family, subfamily))

    async def _family(request: Request, family: str, subfamily: str | None
                      ) -> dict[str, Any]:
        api_root = get_base_url(request)
        async with request.app.state.get_connection(request, "r") as conn:
            rules = (await _rules(conn))["rules"]
            found = next((f for f in [*rules["families"], rules["other"]]
                          if f["id"] == family), None)
            sub = None if subfamily is None or found is None else next(
                (s for s in found.get("subfamilies", []) if s["id"] == subfamily), None)
            path = f"{FAMILIES_ID}/{family}" + (f"/{subfamily}" if subfamily else "")
            if found is None or (subfamily is not None and sub is None):
                raise HTTPException(status_code=404, detail=f"Catalog {path} does not exist.")
            members = await conn.fetch(
                queries.FAMILY_MEMBERS, access.reader_json(request), family,
                [s["id"] for s in found.get("subfamilies", [])], subfamily)
        shown = sub or found
        description = shown.get("description") or f"{shown['title']}: {rules['title']}."
        if sub is not None:
            return _document(api_root, path, sub["title"], description, _collection_links(
                api_root, paths, [m["collection_id"] for m in members]))
        held = {m["subfamily"] for m in members if m["collection_id"] is None}
        children = [_catalog_link(api_root, f"{path}/{s['id']}", s["title"])
                    for s in found.get("subfamilies", []) if s["id"] in held]
        children += _collection_links(api_root, paths, [
            m["collection_id"] for m in members if m["collection_id"] is not None])
        return _document(api_root, path, found["title"], description, children)

    def refuse() -> None:
        raise Forbidden(GENERATED)

    for where in ("", "/{rest:path}"):
        router.add_api_route(where, refuse, methods=["POST", "PUT", "DELETE"],
                             include_in_schema=False)
    return router
