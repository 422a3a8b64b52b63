"""A sandbox of the job's own (`OwnSandbox`, the executor of deployed processes: code
nobody here reviewed shares nothing with other jobs), started for its job or ahead of it
(spares, with the files every sandbox reads made once)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from process_api.runner.executor import End, Handle, JobRun, JobStream, ended
from process_api.runner.handshake import handshake
from process_api.runner.isolation import spawn
from process_api.runner.orphans import forget_dead_folders
from process_api.runner.sandbox import INPUTS_MOUNT, JOB_PACKAGES, Sandbox

#: Folders `<prefix><worker pid>-...`, a killed worker's removed by the next: a sandbox's
#: started ahead (its inputs folder in it).
SPARE_PREFIX = "geocatalog-spare-"
FILES_PREFIX = "geocatalog-sandbox-files-"  # the files every sandbox reads (`Made`)

#: Files made once in a folder of the worker's (given), for every sandbox to read: as
#: `(file, where a sandbox sees it)`; none where they could not be made.
Made = Callable[[Path], list[tuple[Path, str]]]


@dataclass
class Spare:
    """A sandbox started before its job: its process loads what jobs import, then waits for
    the request on `socket`; `folder`: its own on the host (None: no sandbox), with the
    `inputs` it sees at `INPUTS_MOUNT`; `control`: its containers' socket's folder (a
    `ContainerSandbox`'s)."""

    socket: socket.socket
    process: asyncio.subprocess.Process
    folder: Path | None
    control: Path | None = None

    @property
    def inputs(self) -> Path | None:
        return None if self.folder is None else self.folder / "inputs"


class OwnSandbox:
    """The executor of deployed processes: each job in a process (and sandbox) of its own,
    started for it: a deployed process runs code nobody here reviewed, so it shares nothing
    with other jobs, not even a `/tmp` (jobs of a fork server share its sandbox). Starting
    Python and loading `preload` (CWL: cwltool and its schemas) takes about a second, so
    once a first job has come, `spares` sandboxes are kept started ahead, each for one job:
    a job takes one (its staged inputs moved into the folder it sees), and another is
    started in its place. A worker that runs no such job starts none."""

    local = True

    def __init__(self, sandbox: Sandbox | None, environment: Mapping[str, str],
                 network: bool = False, modules: Iterable[str] = JOB_PACKAGES,
                 workspaces: Path | None = None, preload: Iterable[str] = (),
                 spares: int = 0, made: Made | None = None) -> None:
        self.sandbox = sandbox
        self.network = network
        self.modules = list(modules)
        self.environment = environment
        self.workspaces = workspaces  # where their job folders are made (None: /tmp)
        self.preload = list(preload)  # what a job's process loads before its request
        self.spares = spares
        self.made = made  # files its sandboxes read, made once (in a folder of its own)
        self._made: asyncio.Task[list[tuple[Path, str]]] | None = None
        self._spares: collections.deque[Spare] = collections.deque()
        self._adding: set[asyncio.Task[None]] = set()  # spares being started
        # every process it started, until reaped
        self._started: dict[asyncio.Task[None], asyncio.subprocess.Process] = {}

    async def start(self) -> None:
        """The folders of dead workers' spares removed."""
        for prefix in (SPARE_PREFIX, FILES_PREFIX):
            await asyncio.to_thread(forget_dead_folders, prefix, self.workspaces)

    async def stop(self) -> None:
        """Every sandbox it started ended, and their folders removed (its jobs have ended
        with the worker's)."""
        self.spares = 0
        await asyncio.gather(*self._adding, return_exceptions=True)
        if self._made is not None:
            await asyncio.gather(self._made, return_exceptions=True)
            if self._made.done() and not self._made.cancelled() and \
                    self._made.exception() is None:
                for path, _ in self._made.result():
                    shutil.rmtree(path.parent, ignore_errors=True)
        while self._spares:
            self._spares.popleft().socket.close()
        for process in self._started.values():
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await asyncio.gather(*self._started, return_exceptions=True)

    def _files(self) -> list[tuple[Path, str]]:
        """The files its sandboxes read, once made (their making started by the first)."""
        if self.made is None or self.sandbox is None:
            return []
        if self._made is None:
            self._made = asyncio.create_task(asyncio.to_thread(self._make, self.made))
        done = self._made.done() and not self._made.cancelled() and \
            self._made.exception() is None
        return self._made.result() if done else []

    def _make(self, made: Made) -> list[tuple[Path, str]]:
        folder = Path(tempfile.mkdtemp(prefix=f"{FILES_PREFIX}{os.getpid()}-",
                                       dir=self.workspaces))
        files = made(folder)
        if not files:
            shutil.rmtree(folder, ignore_errors=True)
        return files

    async def _add_spare(self, ahead: bool = False) -> None:
        """A sandbox started for a job to come (`ahead`: once its files are made)."""
        self._files()
        if ahead and self._made is not None:
            await asyncio.gather(self._made, return_exceptions=True)
        self._spares.append(await self._started_spare())

    def _spare_folder(self) -> Path | None:
        """A spare's folder, with the `inputs` it sees (None: no sandbox, its job reads
        the inputs where they are)."""
        if self.sandbox is None:
            return None
        folder = Path(tempfile.mkdtemp(prefix=f"{SPARE_PREFIX}{os.getpid()}-",
                                       dir=self.workspaces))
        (folder / "inputs").mkdir()
        return folder

    async def _started_spare(self) -> Spare:
        folder = self._spare_folder()
        seen = [] if folder is None else [(folder / "inputs", INPUTS_MOUNT)]
        ours, process = await self._spawn(seen, self.environment, None, removed=(folder,))
        return Spare(ours, process, folder)

    async def _spare_for(self, inputs: Path | None) -> Spare | None:
        """A started sandbox that sees `inputs` (the first job's: started now), and another
        started in its place; None: a sandbox is started for the job."""
        if not self._spares:
            await self._add_spare()
        found = None
        while self._spares and found is None:
            spare = self._spares.popleft()
            if spare.process.returncode is not None:  # it died
                spare.socket.close()
            elif _moved(inputs, spare.inputs):
                found = spare
            else:  # the inputs cannot move: kept for the next job
                self._spares.appendleft(spare)
                break
        if len(self._spares) + len(self._adding) < self.spares:
            task = asyncio.create_task(self._add_spare(ahead=True))
            self._adding.add(task)
            task.add_done_callback(self._adding.discard)
        return found

    async def launch(self, run: JobRun) -> Handle:
        if run.containers is not None:
            raise ValueError("a job of containers runs in a ContainerSandbox")
        spare = await self._spare_for(run.inputs) if self.spares else None
        if spare is not None:
            try:
                return await handshake(spare.socket, run)
            except BaseException:
                spare.socket.close()
                raise
        read_only = [(run.inputs, INPUTS_MOUNT)] if run.inputs is not None else []
        ours, _ = await self._spawn(read_only, self.environment, None)
        try:
            return await handshake(ours, run)
        except BaseException:
            ours.close()
            raise

    async def reattach(self, run: JobRun) -> Handle | None:
        return None  # its process ends with the worker that started it

    def follow(self, handle: Handle) -> JobStream:
        return handle.stream

    async def end(self, handle: Handle, why: End) -> None:
        await ended(handle, why)

    async def _spawn(self, read_only: list[tuple[Path, str]], environment: Mapping[str, str],
                     tmp: Path | None, removed: tuple[Path | None, ...] = ()
                     ) -> tuple[socket.socket, asyncio.subprocess.Process]:
        """A job's process started, and our end of its connection (`removed`: folders
        removed once it ends)."""
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "process_api.runner.forkserver", "--one",
                   str(theirs.fileno()), *self.preload]
        if self.sandbox is not None:  # its /tmp is its own: its job folder is in it
            command = self.sandbox.wrap(command, network=self.network, modules=self.modules,
                                        read_only=[*self._files(), *read_only], tmp=tmp)
        try:
            process = await spawn(
                command, environment, pass_fds=(theirs.fileno(),),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        reaped = asyncio.create_task(_reaped(process, removed))  # reaped once it ends
        self._started[reaped] = process
        reaped.add_done_callback(self._started.pop)
        return ours, process


async def _reaped(process: asyncio.subprocess.Process, folders: tuple[Path | None, ...]
                  ) -> None:
    await process.wait()
    for folder in folders:
        if folder is not None:
            await asyncio.to_thread(shutil.rmtree, folder, True)


def _moved(inputs: Path | None, seen: Path | None) -> bool:
    """The staged inputs moved into the folder a spare sees at `INPUTS_MOUNT` (`seen`;
    None: it has no sandbox, the job reads them where they are); False: they stay."""
    if inputs is None or seen is None:
        return True
    moved: list[Path] = []
    try:
        for entry in inputs.iterdir():
            entry.rename(seen / entry.name)
            moved.append(entry)
    except OSError:  # another filesystem: all back, for a sandbox of the job's own
        for entry in moved:
            (seen / entry.name).rename(entry)
        return False
    return True
