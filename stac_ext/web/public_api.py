"""Reading the public APIs from a page handler: the same app over in-process HTTP, so a page
shows exactly what a client of the API would get (and every rule stays the API's)."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import Request


async def get_json(request: Request, path: str, params: dict[str, str] | None = None,
                   authorization: str | None = None) -> tuple[int, Any]:
    """GET `path` (from the service root, e.g. `/processes/processes`): status and body.
    `authorization`: the browser's own header, passed on for this one call, never kept."""
    headers = {"Accept": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    transport = httpx.ASGITransport(app=request.app)
    base = f"{request.url.scheme}://{request.url.netloc}"
    async with httpx.AsyncClient(transport=transport, base_url=base) as client:
        response = await client.get(path, params=params, headers=headers)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None
