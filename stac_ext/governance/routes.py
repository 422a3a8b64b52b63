"""`/data/proposals`: community proposals in the data API. Anyone reads them (a held
item shows to its owner and administrators only); a signed-in user proposes; an
administrator (`manageCollections`) accepts or rejects, with a reason."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import asyncpg
import attr
from fastapi import APIRouter, Body, Depends, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from stac_fastapi.types.extension import ApiExtension
from stac_fastapi.types.requests import get_base_url

from stac_ext.data_api.policy import COLLECTIONS, DataPolicy
from stac_ext.data_api.urls import collection_path
from stac_ext.governance.collection_rule import vocabulary_description
from stac_ext.governance.names import look_up
from stac_ext.governance.proposals import ProposalRefused, Proposals, Status, document
from stac_ext.platform.access import require
from stac_ext.platform.auth.principal import Principal

#: Relative: the data API serves it, and writes it against its own address.
CONFORMANCE = "spec/proposals/v1.0"
SPEC = ("/proposals holds the community's proposals of collections (for a known standard "
        "name of a convention's vocabulary) and of collections' descriptions: GET lists "
        "and reads them, a signed-in user POSTs one, an administrator accepts or rejects "
        "one (POST /proposals/{id}/accept, /reject) with a reason, recorded with who and "
        "when. Items published for a collection not made yet wait in its proposal, read by "
        "their owner only, until the decision.")
MAX_LIMIT = 100
#: An owner no item has: anonymous readers see no held item.
NOBODY = ""


class ProposalIn(BaseModel):
    """A proposal: a collection for a known standard name (its id), or a new description
    of a collection."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["collection", "description"] = "collection"
    collection: str = Field(min_length=1, max_length=300)
    #: what follows the vocabulary's description in the collection's
    description: str | None = Field(default=None, min_length=1, max_length=100_000)
    comment: str | None = Field(default=None, max_length=10_000)


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=10_000)


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


async def proposal_document(conn: asyncpg.Connection, api_root: str,
                            row: asyncpg.Record) -> dict[str, Any]:
    """A proposal as the API answers it, with what the vocabulary says of its variable."""
    url = f"{api_root}proposals/{row['id']}"
    links: list[dict[str, Any]] = [{"rel": "self", "type": "application/json", "href": url}]
    if row["status"] == "accepted" or row["kind"] == "description":  # it exists
        links.append({"rel": "collection", "type": "application/json",
                      "title": row["collection_id"],
                      "href": api_root + collection_path(row["collection_id"])})
    lookup = await look_up(conn, row["collection_id"])
    variable = None
    if lookup.variable is not None and lookup.kind == "name":
        v = lookup.variable
        variable = {"standard_name": v.name, "title": v.title,
                    "description": vocabulary_description(v), "unit": v.units or None,
                    "vocabulary": v.vocabulary, "version": v.version}
    decision = None if row["status"] == "open" else {
        "by": row["decided_by"], "at": _iso(row["decided"]), "reason": row["reason"]}
    return {
        "id": row["id"], "kind": row["kind"], "collection": row["collection_id"],
        "status": row["status"], "proposer": row["proposer"], "created": _iso(row["created"]),
        "description": row["description"], "comment": row["comment"], "variable": variable,
        "decision": decision, "held_items": row["held"], "released_items": row["released"],
        "items": document(row["items"]),
        "links": links,
    }


@attr.s
class ProposalsExtension(ApiExtension):
    """The `/proposals` routes, on the data API's router prefix."""

    policy: DataPolicy = attr.ib()
    conformance_classes: list[str] = attr.ib(factory=lambda: [CONFORMANCE])
    schema_href: str | None = attr.ib(default=None)

    def _viewer(self, principal: Principal | None) -> str | None:
        """Whose held items a caller sees: None (all) for an administrator."""
        if principal is None:
            return NOBODY
        return None if self.policy.is_admin(principal) else principal.username

    def register(self, app: FastAPI) -> None:
        router = APIRouter(prefix=f"{app.state.router_prefix}/proposals", tags=["Proposals"])
        self._reads(router)
        self._writes(router)
        app.include_router(router)

    def _reads(self, router: APIRouter) -> None:
        reader = self.policy.auth.optional_client(self.policy.client_id)

        @router.get("", summary="The proposals, newest first")
        async def list_proposals(
            request: Request,
            status: Annotated[Status | None, Query(description="open, accepted or "
                                                   "rejected")] = None,
            mine: Annotated[bool, Query(description="only those proposed by the caller "
                                        "or holding items of theirs")] = False,
            limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
            offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
        ) -> dict[str, Any]:
            principal = await reader(request)
            if mine and principal is None:
                raise HTTPException(status_code=401, detail="Authentication required: "
                                    "`mine` names the signed-in user's proposals.",
                                    headers={"WWW-Authenticate": "Bearer"})
            api_root = get_base_url(request)
            async with request.app.state.get_connection(request, "r") as conn:
                rows = await Proposals(conn).list(
                    self._viewer(principal), status,
                    principal.username if mine and principal else None, limit, offset)
                proposals = [await proposal_document(conn, api_root, r) for r in rows]
            matched = rows[0]["matched"] if rows else 0
            links = [{"rel": "self", "type": "application/json",
                      "href": str(request.url)}]
            if offset + limit < matched:
                links.append({"rel": "next", "type": "application/json", "href": str(
                    request.url.include_query_params(offset=offset + limit))})
            return {"proposals": proposals, "numberMatched": matched,
                    "numberReturned": len(proposals), "links": links}

        @router.get("/{proposal_id}", summary="A proposal")
        async def get_proposal(request: Request, proposal_id: Annotated[
                int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
            principal = await reader(request)
            async with request.app.state.get_connection(request, "r") as conn:
                row = await Proposals(conn).read(proposal_id, self._viewer(principal))
                if row is None:
                    raise HTTPException(status_code=404,
                                        detail=f"Proposal {proposal_id} does not exist.")
                return await proposal_document(conn, get_base_url(request), row)

    def _writes(self, router: APIRouter) -> None:
        writer = self.policy.auth.client(self.policy.client_id)

        @router.post("", status_code=201, summary="Propose a collection, or a description")
        async def propose(request: Request, body: Annotated[ProposalIn, Body()],
                          principal: Principal = Depends(writer)) -> JSONResponse:
            api_root = get_base_url(request)
            async with request.app.state.get_connection(request, "w") as conn, \
                    conn.transaction():
                proposals = Proposals(conn)
                try:
                    new = await proposals.propose(body.kind, body.collection,
                                                  body.description, body.comment,
                                                  principal.username)
                except ProposalRefused as e:
                    raise HTTPException(status_code=e.status, detail=str(e)) from None
                row = await proposals.read(new, self._viewer(principal))
                assert row is not None
                document = await proposal_document(conn, api_root, row)
            return JSONResponse(document, status_code=201,
                                headers={"Location": f"{api_root}proposals/{new}"})

        for decision in ("accept", "reject"):
            router.add_api_route(f"/{{proposal_id}}/{decision}", self._decision(decision, writer),
                                 methods=["POST"],
                                 summary=f"{decision.title()} a proposal (administrators)")

    def _decision(self, decision: Literal["accept", "reject"],
                  writer: Callable[..., Awaitable[Principal]]
                  ) -> Callable[..., Awaitable[dict[str, Any]]]:
        """The endpoint accepting, or rejecting, a proposal with a reason."""

        async def decide(request: Request, proposal_id: Annotated[int, Path(ge=1, le=2**62)],
                         body: Annotated[DecisionIn, Body()],
                         principal: Principal = Depends(writer)) -> dict[str, Any]:
            # deciding a proposal writes a collection: the access table's rule of those
            require(self.policy.caller(principal), "change", COLLECTIONS)
            async with request.app.state.get_connection(request, "w") as conn, \
                    conn.transaction():
                proposals = Proposals(conn)
                try:
                    await getattr(proposals, decision)(proposal_id, principal.username,
                                                       body.reason)
                except ProposalRefused as e:
                    raise HTTPException(status_code=e.status, detail=str(e)) from None
                row = await proposals.read(proposal_id, None)
                assert row is not None
                return await proposal_document(conn, get_base_url(request), row)

        decide.__name__ = decision  # its OpenAPI operation's id
        return decide
