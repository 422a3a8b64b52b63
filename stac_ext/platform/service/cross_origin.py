"""Cross-origin requests: Starlette's `CORSMiddleware`, the stock API's own. A request
without `Origin` is no cross-origin request (browsers send it on every one): Starlette
answers it as it is, adding `Origin` to its `Vary`, and so does this, without the header
objects Starlette builds for every request and every answer to find that out.
"""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from stac_ext.platform.service.answer_headers import add_vary, raw


class CrossOrigin(CORSMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or any(name == b"origin" for name, _ in scope["headers"]):
            await super().__call__(scope, receive, send)
            return

        async def varying(message: Message) -> None:
            if message["type"] == "http.response.start":
                add_vary(raw(message), b"Origin")
            await send(message)

        await self.app(scope, receive, varying)
