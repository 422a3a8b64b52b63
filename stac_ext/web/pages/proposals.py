"""Community proposals in a browser: the open ones (anyone reads them), the signed-in
user's own with the items held in them, a form to propose a variable, and, for
administrators, accept and reject with a reason. Every form is a request to
`/data/proposals` with the user's token, in the browser."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.public_api import get_json
from stac_ext.web.templating import page

router = APIRouter()
#: a page shows this many proposals of each list (the API pages the rest)
SHOWN = "100"


async def _proposals(request: Request, params: dict[str, str],
                     authorization: str | None = None) -> tuple[list[dict[str, Any]], Any, int]:
    """The proposals the API lists with `params` to the caller of `authorization` (else
    anyone), the error body if any, and the status."""
    prefix = request.app.state.web.data_prefix
    status, body = await get_json(request, f"{prefix}/proposals",
                                  params={"limit": SHOWN, **params},
                                  authorization=authorization)
    if status != 200:
        return [], body, status
    return list(body.get("proposals", [])), None, status


@router.get("/ui/proposals")
async def proposals_page(request: Request) -> HTMLResponse:
    """The open proposals as anyone reads them; signed in, the user's own and (for an
    administrator) the held items come with their token (`proposals_fragment`)."""
    found, error, status = await _proposals(request, {"status": "open"})
    return page(request, "proposals.html", {"proposals": found, "error": error,
                                            "mine": False}, status_code=status)


@router.get("/ui/fragments/proposals")
async def proposals_fragment(request: Request, mine: bool = False,
                             authorization: str | None = Header(default=None)
                             ) -> HTMLResponse:
    params = {"mine": "true"} if mine else {"status": "open"}
    found, error, status = await _proposals(request, params, authorization)
    return page(request, "fragments/proposal_list.html",
                {"proposals": found, "error": error, "mine": mine}, status_code=status)
