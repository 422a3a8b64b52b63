"""Where the identity provider sends the browser back after sign-in and sign-out: the page's
script finishes the code flow (PKCE) and keeps the tokens in the tab's session storage."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.templating import page

router = APIRouter()


@router.get("/ui/signed-in")
async def signed_in(request: Request) -> HTMLResponse:
    return page(request, "signed_in.html")
