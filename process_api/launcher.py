"""The worker's side of its fork server (`forkserver`): starts it with the jobs'
environment (an allow-list, never the worker's) and none of the worker's descriptors, in the
jobs' sandbox (`sandbox`) when there is one, with or without network; connects one job to
it, stops it with the worker, and starts it again if it died."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from process_api.isolation import close_on_exec, job_environment
from process_api.sandbox import Sandbox

#: How long a fork server may take to import the processes' modules.
START_SECONDS = 120


Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Launcher(Protocol):
    async def connect(self) -> Streams:
        """A connection for one job, speaking the fork server's protocol."""
        ...


async def _started(command: list[str], environment: Mapping[str, str],
                   pass_fds: tuple[int, ...] = (), **streams: Any
                   ) -> asyncio.subprocess.Process:
    """`command` with `environment` only, inheriting no descriptor of this process but
    `pass_fds` (an event loop may not close the others: uvloop does not)."""
    close_on_exec(keep=pass_fds)
    return await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.DEVNULL, env=dict(environment), close_fds=True,
        pass_fds=pass_fds, **streams)


class ForkServer:
    def __init__(self, modules: Iterable[str], sandbox: Sandbox | None = None,
                 network: bool = False, environment: Mapping[str, str] | None = None) -> None:
        self.modules = sorted(set(modules))
        self.sandbox = sandbox
        self.network = network  # outside a sandbox every job has the worker's network
        self.environment = job_environment(os.environ) if environment is None \
            else environment
        self._process: asyncio.subprocess.Process | None = None
        self._folder: Path | None = None
        self._lock = asyncio.Lock()

    @property
    def socket_path(self) -> Path:
        assert self._folder is not None
        return self._folder / "forkserver.sock"

    async def _start(self) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="geocatalog-jobs-"))  # 0700
        command = [sys.executable, "-m", "process_api.forkserver", str(self.socket_path),
                   *self.modules]
        if self.sandbox is not None:
            command = self.sandbox.wrap(command, writable=[self._folder],
                                        network=self.network, modules=self.modules)
        self._process = await _started(
            command, self.environment, stdout=asyncio.subprocess.PIPE,
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

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection for one job."""
        await self.start()
        return await asyncio.open_unix_connection(str(self.socket_path), limit=2**26)

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


class OwnSandbox:
    """Each job in a process (and sandbox) of its own, started for it: a deployed process
    runs code nobody here reviewed, so it shares nothing with other jobs, not even a `/tmp`
    (jobs of a fork server share its sandbox). Python starts per job (about a second with
    cwltool's imports)."""

    def __init__(self, sandbox: Sandbox | None, network: bool = False,
                 environment: Mapping[str, str] | None = None) -> None:
        self.sandbox = sandbox
        self.network = network
        self.environment = job_environment(os.environ) if environment is None \
            else environment
        self._started: set[asyncio.Task[int]] = set()

    async def connect(self) -> Streams:
        ours, theirs = socket.socketpair()
        command = [sys.executable, "-m", "process_api.forkserver", "--one",
                   str(theirs.fileno())]
        if self.sandbox is not None:  # its /tmp is its own: its job folder is in it
            command = self.sandbox.wrap(command, writable=[], network=self.network,
                                        modules=["process_api"])
        try:
            process = await _started(
                command, self.environment, pass_fds=(theirs.fileno(),),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        finally:
            theirs.close()
        reaped = asyncio.create_task(process.wait())  # reaped once it ends
        self._started.add(reaped)
        reaped.add_done_callback(self._started.discard)
        return await asyncio.open_unix_connection(sock=ours, limit=2**26)
