"""The executor of Slurm's nodes (`JOB_EXECUTOR=slurm`): a job's process is submitted as a
Slurm job whose batch step (`slurm_job`) starts it in its sandbox on the node Slurm chose,
and writes its stream to Slurm's output file of the job. The worker follows that file as
it would the job's connection (`Follower`), ends the job with `scancel` (`Control`), and
keeps the Slurm job's id in the job's record (`RunEvents.submitted`), so that a worker
started again after a crash reattaches to it and reads its stream from the start. The
states of the Slurm jobs it follows are counted (`SLURM_JOBS`) and said in their jobs'
messages.

Every job's folder is in the folder the deployment shares between the worker's host and
the nodes (`SLURM_FOLDER`): its description (`job.json`, read and removed by the batch
step: it holds the job's inputs), its staged inputs, Slurm's output and error files. It is
removed once the job's stream has been read to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import BinaryIO

from prometheus_client import Gauge

from process_api.runner.executor import End, Handle, JobRun, JobStream, RunEvents
from process_api.runner.protocol import MAX_LINE_BYTES
from process_api.runner.sandbox import Sandbox
from process_api.runner.slurm import (
    POLL_SECONDS,
    Slurm,
    SlurmError,
    SlurmState,
    Submission,
    batch_script,
)

logger = logging.getLogger("geocatalog.jobs")

#: How soon a followed output file is read again once all of it has been read (then less
#: and less often while it stays quiet, down to every POLL_SECONDS).
FOLLOW_SECONDS = 0.05
#: What a job's Slurm job is named (`--job-name`), by the job's id.
NAME_PREFIX = "geocatalog-"
#: How much of the output file is read at once.
CHUNK = 1 << 20
#: The state of a Slurm job while Slurm does not answer (the job is not gone for that).
UNANSWERED = SlurmState("UNANSWERED")
SLURM_JOBS = Gauge("geocatalog_slurm_jobs", "Jobs the workers follow in Slurm "
                   "(JOB_EXECUTOR=slurm), by their Slurm state: pending, running.",
                   ["state"], multiprocess_mode="livesum")


def _ended_message(slurm_id: str, state: SlurmState | None) -> dict[str, object]:
    """The outcome of a Slurm job that ended before its job's process said how it ended."""
    if state is None:
        return {"error": f"The Slurm job {slurm_id} of this job is gone: Slurm no longer "
                "knows it, and it ended without a result.", "returncode": -9}
    if state.state == "TIMEOUT":
        return {"error": "Slurm stopped it at its time limit.", "ceiling": "time",
                "returncode": -9}
    if state.state == "OUT_OF_MEMORY":
        return {"error": "memory", "ceiling": "memory", "returncode": -9}
    if state.state == "CANCELLED":
        return {"error": f"The Slurm job {slurm_id} of this job was cancelled (scancel) "
                "before it finished.", "returncode": -15}
    reason = f" ({state.reason})" if state.reason and state.reason != "None" else ""
    return {"error": f"The Slurm job {slurm_id} of this job ended {state.state}{reason} "
            "before its process did.", "returncode": -9}


class Follower:
    """A Slurm job's output file read as its job's stream (`Handle.stream`): what is
    written is read as it comes; once Slurm says the job ended and the file is read to its
    end, the stream ends, with the outcome of a job whose process could not say it."""

    def __init__(self, slurm: Slurm, slurm_id: str, folder: Path,
                 events: RunEvents | None = None) -> None:
        self.slurm = slurm
        self.slurm_id = slurm_id
        self.output = folder / "slurm.out"
        self.events = events
        self.counted: str | None = None  # as `SLURM_JOBS` counts it
        self.finished = False  # read to its end: the job's folder may go
        self._file: BinaryIO | None = None
        self._buffer = bytearray()
        self._last: SlurmState | None = None
        self._tail = b""  # the last bytes read: did the process say its return code?

    async def readline(self) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_LINE_BYTES:
                raise ValueError("a line over MAX_LINE_BYTES")
            if not await self._more():
                line, self._buffer = bytes(self._buffer), bytearray()
                return line
        line = bytes(self._buffer[:end + 1])
        del self._buffer[:end + 1]
        return line

    async def readexactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not await self._more():
                raise asyncio.IncompleteReadError(bytes(self._buffer), size)
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _read(self) -> bytes:
        if self._file is None:
            try:
                self._file = self.output.open("rb")
            except FileNotFoundError:  # not started yet
                return b""
        data = self._file.read(CHUNK)
        if data:
            self._tail = (self._tail + data)[-256:]
        return data

    async def _more(self) -> bool:
        """More of the stream in the buffer; False at its end."""
        if self.finished:
            return False
        wait, seen = FOLLOW_SECONDS, self._last
        while True:
            if data := await asyncio.to_thread(self._read):
                self._buffer += data
                return True
            state = await self._state()
            if state is not None and not state.ended:
                if state != seen:  # it started: its output may come at once
                    wait, seen = FOLLOW_SECONDS, state
                await asyncio.sleep(wait)
                wait = min(POLL_SECONDS, wait * 2)  # a job that runs long, quiet, costs less
                continue
            # ended (or gone): what it wrote before it ended, then its end
            while data := await asyncio.to_thread(self._read):
                self._buffer += data
            if not self._said_returncode():
                self._buffer += b"\n" + json.dumps(_ended_message(self.slurm_id, state)
                                                   ).encode() + b"\n"
                await asyncio.to_thread(self._log_errors, state)
            self.finished = True
            return bool(self._buffer)

    @property
    def read_out(self) -> bool:
        """Whether the stream has been read to its end: the process's return code (its
        last line) read, or the Slurm job ended."""
        return self.finished or (not self._buffer and self._said_returncode())

    def _log_errors(self, state: SlurmState | None) -> None:
        """The end of Slurm's error file of a job that ended before its process said how,
        in the worker's log (the operator's: it may name the node's paths)."""
        try:
            errors = (self.output.parent / "slurm.err").read_text(errors="replace")[-2000:]
        except OSError:
            errors = ""
        logger.warning("Slurm job %s ended (%s) before its job's process did: %s",
                       self.slurm_id, state.state if state else "gone",
                       errors.strip() or "no error output")

    def _said_returncode(self) -> bool:
        last = self._tail.rstrip(b"\n").rpartition(b"\n")[2]
        with contextlib.suppress(ValueError):
            return "returncode" in json.loads(last)
        return False

    async def _state(self) -> SlurmState | None:
        """The Slurm job's state (as old as `Slurm.state` keeps it), its changes heard;
        `UNANSWERED` while Slurm does not answer (the job is not gone for that)."""
        try:
            state = await self.slurm.state(self.slurm_id)
        except SlurmError as e:
            logger.warning("Slurm job %s: no state (%s)", self.slurm_id, e)
            return UNANSWERED
        if state != self._last and state is not None:
            await self._heard(state)
        self._last = state
        return state

    async def _heard(self, state: SlurmState) -> None:
        """A new state: counted, and said in the job's message."""
        self.count(state.state.lower())
        if self.events is None:
            return
        if state.state == "PENDING":
            reason = f": {state.reason}" if state.reason not in ("", "None") else ""
            await self.events.where(f"waiting in Slurm (job {self.slurm_id}{reason})")
        elif state.state == "RUNNING":
            await self.events.where(f"running in Slurm (job {self.slurm_id} on {state.node})")

    def count(self, state: str | None) -> None:
        """This job counted in `SLURM_JOBS` under `state` (None: no more)."""
        if self.counted is not None:
            SLURM_JOBS.labels(self.counted).dec()
        self.counted = state if state in ("pending", "running") else None
        if self.counted is not None:
            SLURM_JOBS.labels(self.counted).inc()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Control:
    """A Slurm job's end, as the supervisor writes it (`Handle.control`): `kill` cancels
    it; closing it stops following (the Slurm job runs on: a worker that stops leaves it to
    the one that reattaches)."""

    def __init__(self, slurm: Slurm, follower: Follower, folder: Path) -> None:
        self.slurm = slurm
        self.follower = follower
        self.folder = folder
        self._cancelling: asyncio.Task[None] | None = None

    def write(self, data: bytes) -> None:
        if b"kill" in data and self._cancelling is None:
            self._cancelling = asyncio.create_task(self._cancel())

    async def _cancel(self) -> None:
        try:
            await self.slurm.cancel(self.follower.slurm_id)
        except SlurmError as e:  # ended meanwhile; else the job's end says what happened
            logger.warning("Slurm job %s: not cancelled (%s)", self.follower.slurm_id, e)

    async def drain(self) -> None:
        if self._cancelling is not None:
            await asyncio.shield(self._cancelling)

    def close(self) -> None:
        self.follower.close()
        if self.follower.read_out:  # nothing of it is needed again
            self.slurm.forget(self.follower.slurm_id)
            shutil.rmtree(self.folder, ignore_errors=True)


class SlurmExecutor:
    """Each job's process submitted to Slurm, in the sandbox it would have on the worker's
    host (`sandbox`, with or without `network`, importing `modules`), its tools'
    containers run by podman on the node; `folder`: the folder the deployment shares
    between the workers' hosts and the nodes (the same path on each); `account`: a job's
    of no project (its project's is its account; None: Slurm's default)."""

    local = False

    def __init__(self, slurm: Slurm, folder: Path, sandbox: Sandbox | None,
                 environment: Mapping[str, str], network: bool = False,
                 modules: tuple[str, ...] = (), registries: tuple[str, ...] = (),
                 account: str | None = None) -> None:
        self.slurm = slurm
        self.folder = folder
        self.sandbox = sandbox
        self.environment = dict(environment)
        self.network = network
        self.modules = modules
        self.registries = registries
        self.account = account

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass  # its Slurm jobs run on, for the worker that reattaches

    async def launch(self, run: JobRun) -> Handle:
        """The job's Slurm job, submitted."""
        folder = self.folder / run.job_id
        await asyncio.to_thread(self._prepare, folder, run)
        try:
            slurm_id = await self.slurm.submit(Submission(
                name=NAME_PREFIX + run.job_id, folder=folder,
                script=batch_script("process_api.runner.slurm_job", folder),
                cpus=run.cpus, memory_bytes=run.memory_bytes,
                wall_seconds=run.wall_seconds, account=run.account or self.account))
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, folder, True)
            raise
        return await self._following(run, slurm_id)

    async def reattach(self, run: JobRun) -> Handle | None:
        """The Slurm job of the job's record, or one submitted before its id was kept;
        None: there is none (a folder of an attempt that never submitted is removed)."""
        slurm_id = await self.submitted(run.job_id, run.batch_id)
        return None if slurm_id is None else await self._following(run, slurm_id)

    async def submitted(self, job_id: str, batch_id: str | None) -> str | None:
        """A job's Slurm job: its record's (`batch_id`); else one found by its name, when
        the job's folder is there (it is made before the job is submitted, so a worker that
        stopped between the two left one); else None."""
        if batch_id:
            return batch_id
        folder = self.folder / job_id
        if not folder.exists():
            return None
        found = await self.slurm.find(NAME_PREFIX + job_id)
        if found is None:
            await asyncio.to_thread(shutil.rmtree, folder, True)
        return found

    def follow(self, handle: Handle) -> JobStream:
        return handle.stream

    async def end(self, handle: Handle, why: End) -> None:
        control = handle.control
        assert isinstance(control, Control)
        if why in (End.DISMISSED, End.WALL_TIME):
            control.write(b"kill\n")
            await control.drain()
            return
        control.follower.count(None)
        if why == End.ABANDONED:  # cancelled, its folder removed
            with contextlib.suppress(SlurmError):
                await self.slurm.cancel(control.follower.slurm_id)
            await asyncio.to_thread(shutil.rmtree, control.folder, True)
        control.close()

    async def _following(self, run: JobRun, slurm_id: str) -> Handle:
        if run.events is not None and slurm_id != run.batch_id:
            await run.events.submitted(slurm_id)
        folder = self.folder / run.job_id
        follower = Follower(self.slurm, slurm_id, folder, run.events)
        return Handle(run, follower, Control(self.slurm, follower, folder))

    def _prepare(self, folder: Path, run: JobRun) -> None:
        """The job's folder: its description (readable by this user alone) and inputs."""
        folder.mkdir(mode=0o700, parents=True)
        if run.inputs is not None:
            shutil.copytree(run.inputs, folder / "inputs", symlinks=True)
        sandbox = None if self.sandbox is None else {
            **asdict(self.sandbox), "hidden": [str(h) for h in self.sandbox.hidden]}
        containers = run.containers
        description = {
            "request": run.request.decode(), "environment": self.environment,
            "sandbox": sandbox, "network": self.network, "modules": list(self.modules),
            "containers": None if containers is None else {
                **asdict(containers), "images": sorted(containers.images)},
            "registries": list(self.registries),
            # what a workflow's steps ask of Slurm, each a Slurm job of its own
            "partition": self.slurm.partition, "account": run.account or self.account,
            "wall_seconds": run.wall_seconds,
            # where this worker imports from (the same install on every node): the jobs'
            # modules are found, and mounted in their sandbox, as here
            "path": [p for p in sys.path if p]}
        fd = os.open(folder / "job.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(description, out)
