"""Jobs run by Slurm (`JOB_EXECUTOR=slurm`): a job's process is submitted as a Slurm job
whose batch step (`slurm_job`) starts it in its sandbox on the node Slurm chose, and writes
its stream to Slurm's output file of the job. The worker follows that file as it would the
job's connection (`Follower`), ends the job with `scancel` (`Control`), and keeps the Slurm
job's id in the job's record, so that a worker started again after a crash reattaches to
it and reads its stream from the start.

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
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO

from process_api.runner.container_broker import ContainerJob
from process_api.runner.launcher import Started
from process_api.runner.protocol import MAX_LINE_BYTES
from process_api.runner.sandbox import Sandbox
from process_api.runner.slurm import (
    POLL_SECONDS,
    BatchJob,
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
    """A Slurm job's output file read as its job's stream (`Started.reader`): what is
    written is read as it comes; once Slurm says the job ended and the file is read to its
    end, the stream ends, with the outcome of a job whose process could not say it."""

    def __init__(self, slurm: Slurm, slurm_id: str, folder: Path,
                 state: Callable[[SlurmState], Awaitable[None]] | None = None) -> None:
        self.slurm = slurm
        self.slurm_id = slurm_id
        self.output = folder / "slurm.out"
        self.heard = state
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
        if state != self._last and state is not None and self.heard is not None:
            await self.heard(state)
        self._last = state
        return state

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Control:
    """A Slurm job's end, as the supervisor writes it (`Started.writer`): `kill` cancels
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


@dataclass(frozen=True)
class SlurmExecutor:
    """How a deployment runs its jobs on Slurm: its commands, the folder its worker's host
    shares with the nodes, the account of a job of no project (None: Slurm's default)."""

    slurm: Slurm
    folder: Path
    account: str | None = None

    def launcher(self, sandbox: Sandbox | None, environment: Mapping[str, str],
                 network: bool, modules: tuple[str, ...],
                 registries: tuple[str, ...] = ()) -> SlurmLauncher:
        return SlurmLauncher(self.slurm, self.folder, sandbox, environment, network,
                             modules, registries)

    async def submitted(self, job_id: str) -> str | None:
        """The Slurm job of a job whose record names none: its folder is made before it is
        submitted, so a worker that stopped between the two left one to look for."""
        if not (self.folder / job_id).exists():
            return None
        return await self.slurm.find(NAME_PREFIX + job_id)

    async def end(self, job_id: str, slurm_id: str | None) -> None:
        """A job that fails without its Slurm job: that cancelled, its folder removed."""
        try:
            if slurm_id:
                await self.slurm.cancel(slurm_id)
        finally:
            await asyncio.to_thread(shutil.rmtree, self.folder / job_id, True)


class SlurmLauncher:
    """Each job's process submitted to Slurm, in the sandbox it would have on the worker's
    host (`sandbox`, with or without `network`, importing `modules`), its tools'
    containers run by podman on the node; `folder`: the folder shared with the nodes."""

    local = False

    def __init__(self, slurm: Slurm, folder: Path, sandbox: Sandbox | None,
                 environment: Mapping[str, str], network: bool = False,
                 modules: tuple[str, ...] = (), registries: tuple[str, ...] = ()) -> None:
        self.slurm = slurm
        self.folder = folder
        self.sandbox = sandbox
        self.environment = dict(environment)
        self.network = network
        self.modules = modules
        self.registries = registries

    async def connect(self, request: bytes, inputs: Path | None = None,
                      containers: ContainerJob | None = None,
                      batch: BatchJob | None = None) -> Started:
        """The job's Slurm job, submitted (or, when its record names one, reattached to)."""
        if batch is None:
            raise ValueError("a job run by Slurm needs its batch job")
        folder = self.folder / batch.job_id
        slurm_id = batch.slurm_id
        if slurm_id is None and folder.exists():  # an attempt ended before it was recorded
            slurm_id = await self.slurm.find(NAME_PREFIX + batch.job_id)
            if slurm_id is None:
                await asyncio.to_thread(shutil.rmtree, folder, True)
        if slurm_id is None:
            await asyncio.to_thread(self._prepare, folder, request, inputs, containers,
                                    batch)
            try:
                slurm_id = await self.slurm.submit(Submission(
                    name=NAME_PREFIX + batch.job_id, folder=folder,
                    script=batch_script("process_api.runner.slurm_job", folder),
                    cpus=batch.cpus,
                    memory_bytes=batch.memory_bytes, wall_seconds=batch.wall_seconds,
                    account=batch.account))
            except BaseException:
                await asyncio.to_thread(shutil.rmtree, folder, True)
                raise
        if batch.submitted is not None and slurm_id != batch.slurm_id:
            await batch.submitted(slurm_id)
        follower = Follower(self.slurm, slurm_id, folder, batch.state)
        return Started(follower, Control(self.slurm, follower, folder), b"", None)

    def _prepare(self, folder: Path, request: bytes, inputs: Path | None,
                 containers: ContainerJob | None, batch: BatchJob) -> None:
        """The job's folder: its description (readable by this user alone) and inputs."""
        folder.mkdir(mode=0o700, parents=True)
        if inputs is not None:
            shutil.copytree(inputs, folder / "inputs", symlinks=True)
        sandbox = None if self.sandbox is None else {
            **asdict(self.sandbox), "hidden": [str(h) for h in self.sandbox.hidden]}
        description = {
            "request": request.decode(), "environment": self.environment,
            "sandbox": sandbox, "network": self.network, "modules": list(self.modules),
            "containers": None if containers is None else {
                **asdict(containers), "images": sorted(containers.images)},
            "registries": list(self.registries),
            # what a workflow's steps ask of Slurm, each a Slurm job of its own
            "partition": self.slurm.partition, "account": batch.account,
            "wall_seconds": batch.wall_seconds,
            # where this worker imports from (the same install on every node): the jobs'
            # modules are found, and mounted in their sandbox, as here
            "path": [p for p in sys.path if p]}
        fd = os.open(folder / "job.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(description, out)
