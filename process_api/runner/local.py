"""The executors of the worker's own host (`executor.Executor`): its fork servers
(`ForkServers`, the service's own processes: one `forkserver` with network and one without,
each started with the jobs' environment, an allow-list, and none of the worker's
descriptors, in the jobs' sandbox when there is one, started again if it died); a sandbox
of the job's own (`OwnSandbox`, a deployed process: code nobody here reviewed shares
nothing with other jobs); and the same with its tools' containers (`ContainerSandbox`).

A job starts in two steps: the worker sends its request, the job's process answers
`{"pid": N}` and waits; the worker learns that process's pid in its own namespace from the
kernel (the credentials of the answer: N is the sandbox's pid), may put it in the job's
cgroup before it starts anything, then writes `go` (`Handle.release`)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from process_api.runner.cgroups import Cgroups
from process_api.runner.container_broker import (
    SOCKET_NAME,
    SOCKET_VARIABLE,
    Broker,
    ContainerJob,
    Steps,
    forget_dead_workspaces,
)
from process_api.runner.containers import Podman
from process_api.runner.executor import (
    ContainersUnavailable,
    End,
    Handle,
    JobRun,
    JobStream,
    ended,
)
from process_api.runner.isolation import spawn
from process_api.runner.orphans import forget_dead_folders
from process_api.runner.protocol import MAX_LINE_BYTES, readable
from process_api.runner.sandbox import INPUTS_MOUNT, JOB_PACKAGES, Sandbox

logger = logging.getLogger("geocatalog.jobs")

#: How long a fork server may take to import the processes' modules.
START_SECONDS = 120

#: Folders `<prefix><worker pid>-...`, a killed worker's removed by the next: a sandbox's
#: started ahead (its inputs folder in it), a fork server's (its socket in it).
SPARE_PREFIX, FORK_SERVER_PREFIX = "geocatalog-spare-", "geocatalog-jobs-"
FILES_PREFIX = "geocatalog-sandbox-files-"  # the files every sandbox reads (`Made`)

#: Files made once in a folder of the worker's (given), for every sandbox to read: as
#: `(file, where a sandbox sees it)`; none where they could not be made.
Made = Callable[[Path], list[tuple[Path, str]]]

#: Where a job's sandbox sees the folder of its containers' socket (read-only).
CONTROL_MOUNT = "/run/geocatalog"


#: `struct ucred` (pid, uid, gid) of SCM_CREDENTIALS.
_UCRED = struct.Struct("3i")


async def _handshake(sock: socket.socket, run: JobRun) -> Handle:
    """Send the run's request on a connection to a fork server; the first line of the job's
    process, with that process's pid as the kernel translates it for this namespace."""
    request = run.request
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # before it can answer
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_sendall(sock, request)
    first, pid = b"", None
    while not first.endswith(b"\n"):
        await readable(sock)
        try:
            data, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(_UCRED.size))
        except BlockingIOError:
            continue
        if not data:  # refused, or ended before it answered
            break
        first += data
        for level, kind, payload in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS) and pid is None:
                pid = _UCRED.unpack(payload[:_UCRED.size])[0]
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE_BYTES)
    return Handle(run, reader, writer, first, pid)


class ForkServer:
    """One fork server process, started when first needed and again if it died."""

    def __init__(self, modules: Iterable[str], sandbox: Sandbox | None,
                 environment: Mapping[str, str], network: bool = False) -> None:
        self.modules = sorted(set(modules))
        self.sandbox = sandbox
        self.network = network  # outside a sandbox every job has the worker's network
        self.environment = environment
        self._process: asyncio.subprocess.Process | None = None
        self._folder: Path | None = None
        self._lock = asyncio.Lock()

    @property
    def socket_path(self) -> Path:
        assert self._folder is not None
        return self._folder / "forkserver.sock"

    async def _start(self) -> None:
        # the listening socket is made here and handed over: the sandbox mounts nothing
        # writable of the host (its path is in a folder of this worker's, mode 0700)
        await asyncio.to_thread(forget_dead_folders, FORK_SERVER_PREFIX)
        self._folder = Path(tempfile.mkdtemp(prefix=f"{FORK_SERVER_PREFIX}{os.getpid()}-"))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(self.socket_path))
            listener.listen(256)
            command = [sys.executable, "-m", "process_api.runner.forkserver",
                       str(listener.fileno()), *self.modules]
            if self.sandbox is not None:
                command = self.sandbox.wrap(command, network=self.network,
                                            modules=self.modules)
            self._process = await spawn(
                command, self.environment, pass_fds=(listener.fileno(),),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL)  # the jobs' prints may hold anything
        assert self._process.stdout is not None
        ready = await asyncio.wait_for(self._process.stdout.readline(), START_SECONDS)
        if ready.strip() != b"ready":
            raise RuntimeError("the job fork server did not start")

    async def start(self) -> None:
        """Start the server, or start it again if it died."""
        async with self._lock:
            if self._process is None or self._process.returncode is not None:
                await self._stopped()
                await self._start()

    async def fork(self, run: JobRun) -> Handle:
        """One job's process, forked by this server (which mounts nothing per job)."""
        await self.start()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, str(self.socket_path))
            return await _handshake(sock, run)
        except BaseException:
            sock.close()
            raise

    async def stop(self) -> None:
        async with self._lock:
            await self._stopped()

    async def _stopped(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            await self._process.wait()
        self._process = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class ForkServers:
    """The executor of the service's own processes (built-in, defined as data): forked by
    a fork server that imported what they import (a job starts in milliseconds), one with
    network and one without when jobs run in a sandbox (outside one, every job has the
    worker's network). Jobs of one fork server share its sandbox: no staged inputs, no
    containers."""

    local = True

    def __init__(self, modules: Iterable[str], sandbox: Sandbox | None,
                 environment: Mapping[str, str]) -> None:
        networks = (False, True) if sandbox is not None else (True,)
        self.servers = {network: ForkServer(modules, sandbox, environment, network)
                        for network in networks}

    async def start(self) -> None:
        """The first job needs not wait: the one without network (the most used) started
        ahead, the folders of dead workers' removed."""
        await self.servers[min(self.servers)].start()

    async def stop(self) -> None:
        for server in self.servers.values():
            await server.stop()

    async def launch(self, run: JobRun) -> Handle:
        if run.inputs is not None or run.containers is not None:
            raise ValueError("a fork server's jobs share its sandbox: no staged inputs, "
                             "no containers")
        return await (self.servers.get(run.network) or self.servers[True]).fork(run)

    async def reattach(self, run: JobRun) -> Handle | None:
        return None  # a forked process ends with the worker that forked it

    def follow(self, handle: Handle) -> JobStream:
        return handle.stream

    async def end(self, handle: Handle, why: End) -> None:
        await ended(handle, why)


@dataclass
class _Spare:
    """A sandbox started before its job: its process loads what jobs import, then waits for
    the request on `socket`; `inputs`: the host folder it sees at `INPUTS_MOUNT`."""

    socket: socket.socket
    process: asyncio.subprocess.Process
    inputs: Path | None


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
        self._spares: collections.deque[_Spare] = collections.deque()
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
        folder = inputs = None  # no sandbox: its job reads the inputs where they are
        if self.sandbox is not None:
            folder = Path(tempfile.mkdtemp(prefix=f"{SPARE_PREFIX}{os.getpid()}-",
                                           dir=self.workspaces))
            inputs = folder / "inputs"
            inputs.mkdir()
        seen = [] if inputs is None else [(inputs, INPUTS_MOUNT)]
        ours, process = await self._spawn(seen, self.environment, None, removed=folder)
        self._spares.append(_Spare(ours, process, inputs))

    async def _spare_for(self, inputs: Path | None) -> _Spare | None:
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
                return await _handshake(spare.socket, run)
            except BaseException:
                spare.socket.close()
                raise
        read_only = [(run.inputs, INPUTS_MOUNT)] if run.inputs is not None else []
        ours, _ = await self._spawn(read_only, self.environment, None)
        try:
            return await _handshake(ours, run)
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
                     tmp: Path | None, removed: Path | None = None
                     ) -> tuple[socket.socket, asyncio.subprocess.Process]:
        """A job's process started, and our end of its connection (`removed`: a folder
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


class ContainerSandbox(OwnSandbox):
    """The executor of deployed processes whose tools name images: a sandbox of the job's
    own, as `OwnSandbox`'s, never started ahead, with a broker of its containers (the
    worker runs each tool's container its cwltool asks for, checked: `container_broker`)
    and the job's folders on the host where its containers see them."""

    def __init__(self, sandbox: Sandbox | None, environment: Mapping[str, str],
                 podman: Podman | None, cgroups: Cgroups | None = None,
                 steps: Steps | None = None, workspaces: Path | None = None,
                 preload: Iterable[str] = (), modules: Iterable[str] = JOB_PACKAGES,
                 network: bool = False, use_cgroups: bool = False,
                 made: Made | None = None) -> None:
        super().__init__(sandbox, environment, network=network, modules=modules,
                         workspaces=workspaces, preload=preload, made=made)
        self.podman = podman  # runs its jobs' containers (None: this worker has none)
        self.cgroups = cgroups  # where their containers' cgroups are made
        self.use_cgroups = use_cgroups  # look for them at `start`
        self.steps = steps  # where a workflow's containers run apart (a scheduler's nodes)

    async def start(self) -> None:
        """Containers' cgroups found, and what dead workers of this host left removed:
        their containers, cgroups and job folders."""
        await super().start()
        if self.podman is not None:
            await asyncio.to_thread(self._containers_ready, self.podman)

    def _containers_ready(self, podman: Podman) -> None:
        if self.use_cgroups and self.cgroups is None:
            self.cgroups = Cgroups.for_containers()
        try:
            if removed := podman.reap():
                logger.warning("containers of workers that are gone, removed: %s",
                               ", ".join(removed))
        except (OSError, subprocess.SubprocessError) as e:
            logger.warning("containers of workers that are gone: not listed (%s)", e)
        forget_dead_workspaces()

    async def launch(self, run: JobRun) -> Handle:
        if run.containers is None:
            raise ValueError("a job without containers runs in an OwnSandbox")
        broker = await self._broker(run.containers, run.inputs)
        read_only = [(run.inputs, INPUTS_MOUNT)] if run.inputs is not None else []
        # its folders on the host, where its containers see them
        tmp = broker.workspace / "tmp"
        read_only.append((broker.control, CONTROL_MOUNT))
        environment = {**self.environment,
                       SOCKET_VARIABLE: f"{CONTROL_MOUNT}/{SOCKET_NAME}"}
        if self.sandbox is None:
            environment |= {"TMPDIR": str(tmp), SOCKET_VARIABLE: str(broker.socket_path)}
        try:
            ours, _ = await self._spawn(read_only, environment, tmp)
        except BaseException:
            await broker.close()
            raise
        try:
            return dataclasses.replace(await _handshake(ours, run), broker=broker)
        except BaseException:
            ours.close()
            await broker.close()
            raise

    async def end(self, handle: Handle, why: End) -> None:
        await ended(handle, why)
        if why in (End.RELEASED, End.ABANDONED) and handle.broker is not None:
            # its containers stopped and removed (the limits they met kept: `hit`)
            await asyncio.shield(handle.broker.close())

    async def _broker(self, job: ContainerJob, inputs: Path | None) -> Broker:
        """The broker of a job's containers, listening, with the job's folders on the
        host: its `/tmp`, its socket's (`Broker.with_workspace`)."""
        if self.podman is None:
            raise ContainersUnavailable(
                "This worker runs no containers (podman is not installed, or JOB_CONTAINERS "
                "is none): the process's tools need one.")
        sandboxed = self.sandbox is not None
        seen = None if inputs is None else (INPUTS_MOUNT if sandboxed else str(inputs), inputs)
        broker = Broker.with_workspace(self.podman, self.cgroups, job,
                                       "/tmp" if sandboxed else None, seen, self.steps,
                                       self.workspaces)
        try:
            await broker.start()
        except BaseException:
            await broker.close()
            raise
        return broker


async def _reaped(process: asyncio.subprocess.Process, folder: Path | None) -> None:
    await process.wait()
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
