"""One job's process, supervised by the worker running the job: started through the
worker's fork server, its progress and output relayed into the job record, ended when the
job is dismissed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import procrastinate

from process_api.definition import JOB_DATABASE_URL, Process
from process_api.job_log import JobLog
from process_api.launcher import Launcher
from process_api.metrics import JOB_PROCESSES
from process_api.store import JobStore
from process_api.tasks import cancelled


class Supervisor:
    """Runs one job in a process forked by a fork server of the worker: relays progress,
    ends it on dismissal."""

    def __init__(self, store: JobStore, job_id: str, context: procrastinate.JobContext,
                 dsn: str, forks: Launcher) -> None:
        self.store = store
        self.job_id = job_id
        self.context = context
        self.dsn = dsn
        self.forks = forks

    def environment(self, process: Process) -> dict[str, str]:
        """What the job's process adds to the fork server's environment (the worker's
        without its secrets): its own role's database URL (`JOB_DATABASE_URL`), for a
        process that declares it needs the database (`Process.database`)."""
        return {JOB_DATABASE_URL: self.dsn} if process.database else {}

    async def run(self, process: Process, inputs: dict[str, Any], limits: dict[str, Any],
                  about: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
        """The job's outcome (`result` or `error`, and `returncode`); its output in its
        record's log meanwhile, `secrets` scrubbed."""
        reader, writer = await self.forks.connect()
        writer.write(json.dumps({
            "entry": process.entry, "command": process.command, "files": process.files,
            "inputs": inputs,
            "limits": limits, "job": about, "env": self.environment(process)}).encode() + b"\n")
        await writer.drain()
        watcher: asyncio.Task[None] | None = None
        log = JobLog(self.store, self.job_id, secrets)
        flushing = asyncio.create_task(log.flushing())
        outcome: dict[str, Any] = {}
        JOB_PROCESSES.inc()
        try:
            async for line in reader:
                message = json.loads(line)
                if "pid" in message:  # started (its pid is the sandbox's, not ours)
                    watcher = asyncio.create_task(self._watch_dismissal(writer))
                elif "log" in message:
                    log.add(str(message["log"]))
                elif "progress" in message:
                    await self.store.progress(self.job_id, message["progress"],
                                              message.get("message"))
                else:  # the result or the error, then the return code
                    outcome.update(message)
                    if "returncode" in message:  # the process is gone: nothing follows
                        break
        finally:
            JOB_PROCESSES.dec()
            if watcher is not None:
                watcher.cancel()
            writer.close()  # a job still running (the worker is stopping) then ends
            await cancelled(flushing)
            await asyncio.shield(log.flush())
        return outcome

    async def _watch_dismissal(self, writer: asyncio.StreamWriter) -> None:
        while True:
            await asyncio.sleep(0.5)
            if self.context.should_abort() or \
                    await self.store.status(self.job_id) == "dismissed":
                writer.write(b"kill\n")  # the job's process kills its process group
                await writer.drain()
                return
