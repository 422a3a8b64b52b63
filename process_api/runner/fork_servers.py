"""The worker's side of its fork servers (`forkserver`): `ForkServers`, the executor of the
service's own processes (`executor.Executor`), one `forkserver` with network and one
without, each started with the jobs' environment, an allow-list, and none of the worker's
descriptors, in the jobs' sandbox when there is one, started again if it died."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from process_api.runner.executor import End, Handle, JobRun, JobStream, ended
from process_api.runner.handshake import handshake
from process_api.runner.isolation import spawn
from process_api.runner.orphans import forget_dead_folders
from process_api.runner.sandbox import Sandbox

#: How long a fork server may take to import the processes' modules.
START_SECONDS = 120

#: Folders `<prefix><worker pid>-...`, a killed worker's removed by the next: a fork
#: server's (its socket in it).
FORK_SERVER_PREFIX = "geocatalog-jobs-"


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
            return await handshake(sock, run)
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

