"""A job's output on its way from its process to its record (`processes.job_logs`): the
job's secrets scrubbed (one cut between two pieces of output too: the end of a piece that
may begin a secret waits for the next), written in batches while it runs, its tail kept up
to a bound."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from process_api.jobs.secrets import Scrubber
from process_api.jobs.store import JobStore

logger = logging.getLogger("geocatalog.jobs")

#: The most of a job's output its record keeps (the end of it).
LOG_CHARS = 200_000
#: How often a running job's new output is written.
FLUSH_SECONDS = 0.5


class JobLog:
    def __init__(self, store: JobStore, job_id: str, secrets: Sequence[str]) -> None:
        self.store = store
        self.job_id = job_id
        self.scrub = Scrubber(secrets)
        self._pending = ""
        self._held = ""  # the end of the output so far, which may begin a secret
        self._dropped = 0
        self._failing = False  # the last write failed (said once)

    def add(self, text: str) -> None:
        text = self.scrub(self._held + text.replace("\x00", "\ufffd"))  # text has no NUL
        held = self.scrub.unfinished(text)
        self._held = text[len(text) - held:] if held else ""
        self._pending += text[:len(text) - held]
        self._bound()  # a flood between two writes

    async def flush(self, final: bool = False) -> None:
        """Write the new output (`final`: all of it, the job has ended). What cannot be
        written (the database is away) waits for the next flush, said once in the log."""
        if final:
            self._pending, self._held = self._pending + self._held, ""
        if not self._pending and not self._dropped:
            return
        text, dropped = self._pending, self._dropped
        self._pending, self._dropped = "", 0
        try:
            await self.store.append_log(self.job_id, text, dropped, LOG_CHARS)
            self._failing = False
        except Exception as e:  # the job goes on; its output waits for the next flush
            if not self._failing:
                logger.warning("job %s: output not recorded for now (%s)", self.job_id,
                               type(e).__name__)
            self._failing = True
            self._pending, self._dropped = text + self._pending, dropped + self._dropped
            self._bound()

    def _bound(self) -> None:
        """The pending output's last LOG_CHARS characters, the others counted as dropped."""
        if len(self._pending) > LOG_CHARS:
            self._dropped += len(self._pending) - LOG_CHARS
            self._pending = self._pending[-LOG_CHARS:]

    async def flushing(self) -> None:
        """Write new output every `FLUSH_SECONDS` until cancelled."""
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            await self.flush()
