"""Job callbacks (OGC API Processes `callback` class). An execution request's `subscriber`
names URLs the worker POSTs to: `inProgressUri` when the job starts (its status info),
`successUri` when it succeeds (its results), `failedUri` when it fails (its status info).

Sent from the worker in the background, never holding up the job; in order per job; each
with a timeout and bounded retries (after a network error, a 5xx or a 429). The targets
are user input: each is checked against the outbound policy when it is sent (no private,
loopback or link-local address unless OUTBOUND_ALLOW names it), redirects are not
followed, and logs name only the host (a callback URL may carry a token).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

import httpx

from process_api.jobs.metrics import CALLBACKS
from process_api.processes.outbound import TargetRefused, check_reachable

logger = logging.getLogger("geocatalog.jobs")

IN_PROGRESS, SUCCESS, FAILED = "inProgressUri", "successUri", "failedUri"


class Notifier:
    """Callbacks through one shared HTTP client, at most `in_flight` at a time (the others
    wait their turn): a slow or silent target costs that many connections, not one per
    job (500 jobs to a target that never answered held ~430 connections and 400 MB)."""

    def __init__(self, attempts: int = 3, timeout: float = 5.0, backoff: float = 0.5,
                 in_flight: int = 16) -> None:
        self.attempts = attempts
        self.timeout = timeout
        self.backoff = backoff
        self.in_flight = in_flight
        self._slots = asyncio.Semaphore(in_flight)
        self._client: httpx.AsyncClient | None = None
        self._last: dict[str, asyncio.Task[None]] = {}  # per job: its latest callback

    @property
    def pending(self) -> int:
        """Jobs with callbacks not yet delivered (or given up)."""
        return len(self._last)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False,
                limits=httpx.Limits(max_connections=self.in_flight,
                                    max_keepalive_connections=self.in_flight))
        return self._client

    def send(self, job_id: str, subscriber: dict[str, Any] | None, which: str,
             body: Any) -> None:
        """Queue one callback of a job, after the job's earlier ones."""
        url = (subscriber or {}).get(which)
        if not url:
            return
        task = asyncio.create_task(self._deliver(self._last.get(job_id), url, body))
        self._last[job_id] = task
        task.add_done_callback(lambda done: self._forget(job_id, done))

    def _forget(self, job_id: str, task: asyncio.Task[None]) -> None:
        if self._last.get(job_id) is task:
            del self._last[job_id]

    async def drain(self) -> None:
        """Wait for every queued callback (a worker that stops lets them finish), then
        close the client."""
        await asyncio.gather(*self._last.values(), return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _deliver(self, previous: asyncio.Task[None] | None, url: str, body: Any) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        async with self._slots:
            await self._post(url, body)

    async def _post(self, url: str, body: Any) -> None:
        host = urlsplit(url).hostname or "?"
        try:
            await check_reachable(url)
        except TargetRefused:
            logger.warning("callback to %s refused: not an allowed target", host)
            CALLBACKS.labels("refused").inc()
            return
        client = self._http()
        last = "no answer"  # what the last attempt met
        for attempt in range(self.attempts):
            try:
                response = await client.post(url, json=body)
                last = f"answered {response.status_code}"
                if response.status_code < 500 and response.status_code != 429:
                    if response.status_code >= 400:
                        logger.warning("callback to %s: %d", host, response.status_code)
                    CALLBACKS.labels("failed" if response.status_code >= 400 else "sent").inc()
                    return
            except httpx.HTTPError:
                last = "no answer"
            if attempt + 1 < self.attempts:
                await asyncio.sleep(self.backoff * 2**attempt)
        logger.warning("callback to %s: %s after %d attempts", host, last, self.attempts)
        CALLBACKS.labels("failed").inc()
