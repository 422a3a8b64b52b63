"""One interface for every place a job's process runs, on toil's batch-system model: an
executor `launch`es a run of a job (`JobRun`, the one description of it), `follow`s it
(the stream its process writes: progress, log, result files, its end), `reattach`es to a
run that a worker before it left running (by the job's record), and `end`s it, saying why.
The executors of this package: fork servers (`fork_servers.ForkServers`, the service's
own processes), a sandbox of the job's own (`own_sandbox.OwnSandbox`, deployed processes),
the same with its tools' containers (`container_sandbox.ContainerSandbox`), and Slurm's
nodes (`slurm_executor.SlurmExecutor`); `executors` holds a worker's, chosen by setting."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from process_api.runner.container_broker import Broker
    from process_api.runner.container_run import ContainerJob


class End(StrEnum):
    """Why a run ends before its process says it ended, or why it is let go."""

    DISMISSED = "dismissed"  # the job was dismissed: its process is killed
    WALL_TIME = "wall time"  # its time is up: killed
    RELEASED = "released"  # the worker stops following it: a local process ends with it,
    # a scheduler's run goes on for the worker that reattaches (unless it has ended)
    ABANDONED = "abandoned"  # the job fails without it: whatever is left of it goes


class ContainersUnavailable(RuntimeError):
    """This worker runs no containers; the message says why."""


class JobStream(Protocol):
    """What a job's process says (its connection, or a Slurm job's output file)."""

    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class JobControl(Protocol):
    """What the worker says to a job's process: `go`, `kill`; closing it ends a local job."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class RunEvents(Protocol):
    """What a run tells its job's record while it is launched and waits (a scheduler's)."""

    async def submitted(self, batch_id: str) -> None:
        """Its id at the scheduler, kept for a worker that reattaches."""
        ...

    async def where(self, words: str) -> None:
        """Where it waits or runs, in words (the job's message, unless its process says
        its own progress)."""
        ...


@dataclass(frozen=True)
class JobRun:
    """One run of a job's process, as any executor takes it."""

    job_id: str
    request: bytes  # the JSON line its process reads (its entry, inputs, limits)
    network: bool = False
    inputs: Path | None = None  # its staged inputs, which it reads at `INPUTS_MOUNT`
    containers: ContainerJob | None = None  # what its tools' containers may use
    cpus: int = 1  # what a scheduler is asked for it
    memory_bytes: int = 2**31
    wall_seconds: float = 86400.0
    account: str | None = None
    batch_id: str | None = None  # its run at a scheduler, from its record (reattached)
    events: RunEvents | None = None


@dataclass
class Handle:
    """A launched run: its stream and control, its process waiting for `release`."""

    run: JobRun
    stream: JobStream
    control: JobControl
    first: bytes = b""  # what its process answered first (`{"pid": N}`), read
    pid: int | None = None  # its process in the worker's namespace (None: elsewhere)
    broker: Broker | None = None  # its tools' containers

    async def release(self) -> None:
        """Let the job's process run."""
        self.control.write(b"go\n")
        await self.control.drain()


class Executor(Protocol):
    """Where jobs' processes run."""

    #: Whether the run's process is on this host (the worker bounds it with its cgroup).
    local: bool

    async def start(self) -> None:
        """Ready to launch (what a dead worker of this host left, removed)."""
        ...

    async def stop(self) -> None:
        """Every run it launched and what it started ahead, ended."""
        ...

    async def launch(self, run: JobRun) -> Handle:
        """A new run of the job, its process waiting for `Handle.release`."""
        ...

    async def reattach(self, run: JobRun) -> Handle | None:
        """The run a worker launched before (its record's, or one it launched but did not
        record), followed again from its start; None: there is none to reattach to (a
        local process ends with its worker)."""
        ...

    def follow(self, handle: Handle) -> JobStream:
        """What the run's process says, from its first line to its end."""
        ...

    async def end(self, handle: Handle, why: End) -> None:
        """End the run, or let it go, as `why` says."""
        ...


async def ended(handle: Handle, why: End) -> None:
    """`end` of a run whose process is the worker's to kill or let end: killed (its
    process kills its process group), or its connection closed (it ends with it)."""
    if why in (End.DISMISSED, End.WALL_TIME):
        with contextlib.suppress(ConnectionError):  # it has gone already: ended all the same
            handle.control.write(b"kill\n")
            await handle.control.drain()
    else:
        handle.control.close()
