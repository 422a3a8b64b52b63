"""A job's file of this service (`{processes}/jobs/{job}/files/{path}`, where the process API
serves the results store): whether the caller may read it is the process API's own
decision, asked of it in this process with the caller's token (its answer's status only:
the file is then read from the results store, chunk-wise, not through the API)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message

from process_api import job_file_of


@dataclass(frozen=True)
class JobFile:
    """A job's file: the API path that serves it and its results store key."""

    path: str  # from the service root, as requested: `/processes/jobs/{job}/files/{file}`
    key: str  # `<job id>/<file path>`


def job_file(href: str, processes_prefix: str, origins: set[str]) -> JobFile | None:
    """The job's file `href` names, when it is one of this service (its origin one of
    `origins`: the request's, `BASE_URL`'s); else None (another address, read as such)."""
    parts = urlsplit(href)
    if f"{parts.scheme}://{parts.netloc}".lower() not in origins or parts.query:
        return None
    prefix = re.escape(processes_prefix.rstrip("/"))
    found = re.match(rf"^(.*?){prefix}/(jobs/.+)$", parts.path)
    key = job_file_of(found[2]) if found else None
    if found is None or key is None:
        return None
    return JobFile(path=parts.path[len(found[1]):], key="/".join(key))


async def status_for(app: ASGIApp, path: str, authorization: str | None) -> int:
    """The status the service answers a GET of `path` with, for the caller of
    `authorization`: asked in this process, the answer's body left unread (the request is
    ended as a client that leaves once it has the status)."""
    started = asyncio.Event()
    status = 0
    asked = False
    headers = [(b"host", b"explorer.internal"), (b"accept", b"*/*")]
    if authorization:
        headers.append((b"authorization", authorization.encode("latin-1")))
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": headers, "server": ("explorer.internal", 80),
        "client": ("127.0.0.1", 0)}

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await started.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            started.set()

    await app(scope, receive, send)
    return status
