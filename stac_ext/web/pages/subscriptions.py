"""The signed-in user's subscriptions: a shell the page's script fills through
`/data/subscriptions` with her token (their last deliveries and runs; pause, resume,
delete). The search page's "Notify me" and "Process new data" save its search
(`follow.js`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stac_ext.web.templating import page

router = APIRouter()


@router.get("/ui/subscriptions")
async def subscriptions_page(request: Request) -> HTMLResponse:
    return page(request, "subscriptions.html")
