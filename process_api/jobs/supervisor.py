"""One job's run, supervised by the worker running the job: launched by its executor (or
reattached to), in a cgroup of its own where the machine offers them, its progress and
output relayed into the job record, ended when the job is dismissed or its wall time is
over; where a scheduler's run waits or runs said in the job's message."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import procrastinate

from process_api.data.staging import CHUNK, multihash
from process_api.jobs.job_log import JobLog
from process_api.jobs.job_status import JobStatus
from process_api.jobs.metrics import JOB_PROCESSES
from process_api.jobs.queue import UNREACHABLE
from process_api.jobs.store import JobStore
from process_api.jobs.tasks import cancelled
from process_api.processes.definition import JOB_DATABASE_URL, Process
from process_api.processes.resources import Plan
from process_api.runner.cgroups import Cgroups, JobCgroup
from process_api.runner.container_run import ContainerJob
from process_api.runner.executor import (
    ContainersUnavailable,
    End,
    Executor,
    Handle,
    JobRun,
    JobStream,
)
from process_api.runner.protocol import MAX_LINE_BYTES
from process_api.runner.slurm import SlurmError

#: What `outcome["ceiling"]` may name: the limit a failed job met.
WALL_TIME = "time"
#: How long a job's progress goes unwritten once a write found the database away.
AWAY_SECONDS = 2.0


class Supervisor:
    """Runs one job on an executor: relays its progress and output, ends it on dismissal
    or at its wall time; the job's record hears where a scheduler's run is
    (`RunEvents`)."""

    def __init__(self, store: JobStore, job_id: str, context: procrastinate.JobContext,
                 dsn: str, executor: Executor, cgroups: Cgroups | None = None,
                 sandboxed: bool = True, lost: Callable[[], None] = lambda: None,
                 batch_id: str | None = None, account: str | None = None) -> None:
        self.store = store
        self.job_id = job_id
        self.context = context
        self.dsn = dsn
        self.executor = executor
        self.cgroups = cgroups
        self.sandboxed = sandboxed
        self.lost = lost  # called when the job's record cannot be written (database away)
        self._away_until = 0.0  # progress is not written before (the database is away)
        self.outputs: Path | None = None  # where the job's result files are received
        self.tmp_bytes = 0  # the largest file a job can send (its /tmp holds it)
        self.max_files = 0  # the most files a job sends
        self.batch_id = batch_id  # its run at a scheduler, as its record keeps it
        self.account = account  # a scheduler's account of it (its project)
        self._progressed = False  # the job said its progress: its message is its own

    def environment(self, process: Process) -> dict[str, str]:
        """What the job's process adds to the jobs' environment (an allow-list of the
        worker's): its own role's database URL (`JOB_DATABASE_URL`), for a process that
        declares it needs the database (`Process.database`)."""
        return {JOB_DATABASE_URL: self.dsn} if process.database else {}

    def child_limits(self, limits: Plan) -> dict[str, Any]:
        """What the job's process applies itself: its cores, and where no cgroup counts
        them, its memory and processes as rlimits (per process, and per user); the size of
        a sandbox's `/tmp`, for the message of a job that filled it."""
        applied = limits.child_limits()
        if not self.executor.local:  # a scheduler places it on its node's cores
            applied["cores"] = None
        elif self.cgroups is not None:  # counted by the cgroup, for all its processes
            applied.update(memory_bytes=None, processes=None)
        elif not self.sandboxed:  # counted per user: the service's own processes too
            applied["processes"] = None
        if self.sandboxed:
            applied["tmp_bytes"] = limits.tmp_bytes
        return applied

    async def run(self, process: Process, inputs: dict[str, Any], limits: Plan,
                  about: dict[str, Any], secrets: Sequence[str] = (),
                  staged: Path | None = None, outputs: Path | None = None,
                  max_files: int = 0) -> dict[str, Any]:
        """The job's outcome (`result` or `error`, `returncode`, and `ceiling` when it met
        one); its output in its record's log meanwhile, `secrets` scrubbed. `staged`: the
        folder of its inputs, which it reads; `outputs`: where its result files are
        received (`outcome["files"]`: number -> `{"local", "size", "checksum"}`), at most
        `max_files`."""
        self.outputs = outputs
        self.max_files = max_files
        self.tmp_bytes = limits.tmp_bytes
        # on a scheduler, each of a workflow's containers is a job of its own (its steps
        # over the nodes), the workflow's own job one core
        local = self.executor.local
        apart = process.workflow and not local
        containers = None if not process.images else ContainerJob(
            job_id=self.job_id, images=frozenset(process.images),
            memory_bytes=limits.memory_bytes, processes=limits.processes,
            cpus=len(limits.cores) if limits.cores else limits.cpus if apart else None,
            apart=apart)
        run = JobRun(
            job_id=self.job_id, request=json.dumps({
                "entry": process.entry, "command": process.command, "files": process.files,
                "inputs": inputs, "limits": self.child_limits(limits), "job": about,
                "env": self.environment(process), "send_files": outputs is not None,
                }).encode() + b"\n",
            network=process.network or process.database, inputs=staged,
            containers=containers, cpus=1 if apart and containers else limits.cpus,
            memory_bytes=limits.memory_bytes, wall_seconds=limits.wall_seconds,
            account=self.account, batch_id=self.batch_id, events=self)
        try:
            started = await self.executor.reattach(run)
            if started is not None:  # its stream is read again from the start
                await self.store.clear_log(self.job_id)
            else:
                started = await self.executor.launch(run)
        except ContainersUnavailable as e:
            return {"error": str(e)}
        except SlurmError as e:
            return {"error": f"Slurm refused the job: {e}"}
        cgroup = await self._contained(started, limits)
        log = JobLog(self.store, self.job_id, secrets)
        flushing = asyncio.create_task(log.flushing())
        watcher = asyncio.create_task(self._watch_dismissal(started))
        outcome: dict[str, Any] = {}
        JOB_PROCESSES.inc()
        try:
            await started.release()
            stream = self.executor.follow(started)
            try:
                async with asyncio.timeout(limits.wall_seconds):
                    await self._relay(started, stream, log, outcome)
            except TimeoutError:  # stopped: whatever it said, it did not end in time
                outcome.pop("result", None)
                outcome.update(ceiling=WALL_TIME)
                await self.executor.end(started, End.WALL_TIME)
                await self._relay(started, stream, log, {})
        finally:
            JOB_PROCESSES.dec()
            if refused := outcome.pop("refused", None):  # whatever it said after, it failed
                outcome.pop("result", None)
                outcome["error"] = refused
            watcher.cancel()
            # let go: a job still running (the worker is stopping) ends, a scheduler's runs
            # on; its containers are stopped and removed
            await asyncio.shield(self.executor.end(started, End.RELEASED))
            if started.broker is not None:
                if started.broker.hit and "result" not in outcome:
                    outcome.setdefault("ceiling", started.broker.hit[0])
                # a container that did not run is why its job failed, in one line
                if started.broker.failures and "result" not in outcome:
                    outcome["error"] = started.broker.failures[0]
            try:
                await cancelled(flushing)
                await asyncio.shield(log.flush(final=True))
            finally:
                if cgroup is not None:  # what it left running dies (a stopping worker too)
                    if "result" not in outcome:  # a job that failed: was a ceiling why?
                        outcome.setdefault("ceiling", next(iter(cgroup.hit()), None))
                    await asyncio.shield(asyncio.to_thread(cgroup.close))
        return outcome

    async def submitted(self, batch_id: str) -> None:
        """A new Slurm job's id in the job's record: a restarted worker reattaches to it."""
        self.batch_id = batch_id
        await self.store.set_batch_job(self.job_id, batch_id)

    async def where(self, words: str) -> None:
        """Where a scheduler's run is, in the job's message, unless the job says its own."""
        if self._progressed:
            return
        with contextlib.suppress(*UNREACHABLE):
            await self.store.progress(self.job_id, 0, words)

    async def _contained(self, started: Handle, limits: Plan) -> JobCgroup | None:
        """The job's process in a cgroup of its own, bounded, before it runs anything."""
        if self.cgroups is None or started.pid is None:
            return None
        cgroup = self.cgroups.create()
        try:  # off the event loop: cgroup v1's attach waits for an RCU grace period (~10 ms)
            await asyncio.to_thread(cgroup.contain, started.pid, limits.memory_bytes,
                                    limits.processes)
        except BaseException:
            await self.executor.end(started, End.RELEASED)  # its process, waiting, ends
            await asyncio.shield(asyncio.to_thread(cgroup.close))
            raise
        return cgroup

    async def _relay(self, started: Handle, stream: JobStream, log: JobLog,
                     outcome: dict[str, Any]) -> None:
        """The job's lines until its process's return code: progress into its record,
        output into its log, its result or error into `outcome`."""
        lines = started.first.splitlines()
        while True:
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:  # the rest of a line cut at MAX_LINE_BYTES
                    continue
                if "pid" in message:  # started (its pid is the sandbox's, not ours)
                    continue
                if "log" in message:
                    log.add(str(message["log"]))
                elif "file" in message:
                    if not await self._receive(stream, message, outcome):
                        await self.executor.end(started, End.DISMISSED)
                elif "progress" in message:
                    await self._progress(message)
                else:  # the result or the error, then the return code
                    outcome.update(message)
                    if "returncode" in message:  # the process is gone: nothing follows
                        return
            try:
                line = await stream.readline()
            except ValueError:  # longer than MAX_LINE_BYTES (the child refuses to send one)
                outcome["error"] = f"The job's output has a line over {MAX_LINE_BYTES} bytes."
                await self.executor.end(started, End.DISMISSED)
                lines = []
                continue
            except ConnectionError:  # a kill written to it found its process gone
                return
            if not line:
                return
            lines = [line]

    async def _receive(self, stream: JobStream, message: dict[str, Any],
                       outcome: dict[str, Any]) -> bool:
        """One result file's bytes into the outputs folder, with its checksum; False (and
        an error) when the job may not send it."""
        size = int(message.get("size") or 0)
        if self.outputs is None or not 0 <= size <= self.tmp_bytes:
            outcome["error"] = outcome["refused"] = "The job sent a file it may not send."
            return False
        if len(outcome.get("files") or {}) >= self.max_files:
            outcome["error"] = outcome["refused"] = (
                f"The job wrote more than {self.max_files} result files (JOB_RESULT_FILES).")
            return False
        number = int(message["file"])
        local = self.outputs / str(number)
        digest = hashlib.sha256()
        with local.open("wb") as out:
            left = size
            while left:
                chunk = await stream.readexactly(min(left, CHUNK))
                digest.update(chunk)
                await asyncio.to_thread(out.write, chunk)
                left -= len(chunk)
        outcome.setdefault("files", {})[number] = {
            "local": str(local), "size": size, "checksum": multihash(digest)}
        return True

    async def _progress(self, message: dict[str, Any]) -> None:
        """The job's progress in its record; while the database is away, the job goes on,
        its progress unwritten (tried again after AWAY_SECONDS: the relay of its output
        must not wait for each)."""
        self._progressed = True
        if time.monotonic() < self._away_until:
            return
        try:
            await self.store.progress(self.job_id, message["progress"], message.get("message"))
        except UNREACHABLE:
            self.lost()
            self._away_until = time.monotonic() + AWAY_SECONDS

    async def _watch_dismissal(self, started: Handle) -> None:
        while True:
            await asyncio.sleep(0.5)
            try:
                dismissed = await self.store.status(self.job_id) == JobStatus.DISMISSED
            except UNREACHABLE:
                self.lost()
                continue
            if self.context.should_abort() or dismissed:
                # its process kills its process group (a scheduler's job is cancelled)
                await self.executor.end(started, End.DISMISSED)
                return
