"""The worker's side of a job whose tools run in containers: cwltool runs in the job's
sandbox as for any deployed process, and asks for each tool's container on a socket of this
job's (`container_client`, cwltool's `--user-space-docker-cmd`); the worker checks the
request, makes the container (`containers.Podman`), checks that what it mounted is what
was checked (`mounts`), then starts it, the tool's stdin, stdout and stderr being the ones
cwltool gave (passed over the socket).

What a request may name: an image the process declared; folders of the job's own working
folder (its outputs and temporary folder writable, the rest read-only) and its staged
inputs (read-only); nothing else of the host. The container is bounded by the job's
`resources` (its memory and processes in a cgroup of its own, its cores), stopped and
removed when its tool's caller goes (a dismissed job) and when the job ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import socket
import stat
import tempfile
import uuid
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from process_api.runner.cgroups import Cgroups
from process_api.runner.container_client import REFUSED
from process_api.runner.container_run import (
    ContainerJob,
    caller_gone,
    run_container,
)
from process_api.runner.containers import Mount, Podman, ToolRun
from process_api.runner.orphans import forget_dead_folders
from process_api.runner.protocol import readable

logger = logging.getLogger("geocatalog.jobs")

#: The folders of container jobs on the worker's host: `<prefix><worker pid>-...`.
WORKSPACE_PREFIX = "geocatalog-container-job-"
#: The broker's socket, in its control folder.
SOCKET_NAME = "containers.sock"
#: The most bytes one request holds (the tool's command line and its folders).
MAX_REQUEST = 1 << 16
#: The most containers one job starts.
MAX_CONTAINERS = 256


def forget_dead_workspaces() -> None:
    """Remove the job folders (`WORKSPACE_PREFIX<worker pid>-...`) of workers that are
    gone."""
    forget_dead_folders(WORKSPACE_PREFIX)


def made_folders(workspace: Path, apart: bool) -> Path:
    """A job's `tmp` made in its `workspace`, and its socket's folder: in the workspace, or
    (`apart`: the workspace may be deep in a shared folder, a socket's path is short) in
    the temporary folder. The socket's folder."""
    (workspace / "tmp").mkdir()
    if apart:
        return Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{os.getpid()}-"))
    control = workspace / "control"
    control.mkdir()
    return control


class RequestRefused(ValueError):
    """A container request this job may not make; the message says why."""


class Steps(Protocol):
    """Where a job's containers run when each is a job of its own on a scheduler (a
    workflow's steps over the cluster's nodes: `slurm_step`)."""

    async def run(self, run: ToolRun, job: ContainerJob, stdio: list[int],
                  conn: socket.socket, workspace: Path) -> dict[str, Any]:
        """The container run to its end (or until `conn` closes), `stdio` its stdin,
        stdout and stderr: the reply, `{"status", "message"?, "hit"?}`."""
        ...


class Broker:
    """One job's containers: the socket its tools are asked on, the containers running."""

    def __init__(self, podman: Podman, cgroups: Cgroups | None, job: ContainerJob,
                 workspace: Path, roots: Mapping[str, tuple[Path, bool]],
                 steps: Steps | None = None, control: Path | None = None) -> None:
        self.podman = podman
        self.steps = steps  # runs its containers elsewhere when the job asks (`apart`)
        self.cgroups = cgroups
        self.job = job
        self.workspace = workspace  # the job's folders on the host, removed at its end
        # the socket's folder (on this host: a socket's path is short, a shared folder's
        # may not be)
        self.control = control or workspace / "control"
        # where the job sees a folder -> (that folder on the host, whether a tool may
        # write in it: its outputs and temporary folder only, checked per request)
        self.roots = roots
        self.hit: list[str] = []  # the limits a container met
        self.failures: list[str] = []  # why containers did not run, in order
        self._running: dict[str, asyncio.Task[None]] = {}
        self._removals: set[asyncio.Task[None]] = set()  # of containers whose tool ended
        self._listener: socket.socket | None = None
        self._serving: asyncio.Task[None] | None = None
        self._started = 0

    @classmethod
    def with_workspace(cls, podman: Podman, cgroups: Cgroups | None, job: ContainerJob,
                       tmp_seen_at: str | None, inputs: tuple[str, Path] | None,
                       steps: Steps | None = None, base: Path | None = None) -> Broker:
        """A broker with the job's folders on the host, made here and removed by `close`:
        `tmp`, the job's `/tmp` (which the job sees at `tmp_seen_at`, else at its own
        path; in `base`, else the temporary folder), and `control`, its socket's (in the
        temporary folder); `inputs`: where the job sees its staged inputs, and their folder
        (read-only to its tools)."""
        workspace = Path(tempfile.mkdtemp(prefix=f"{WORKSPACE_PREFIX}{os.getpid()}-",
                                          dir=base))
        control = made_folders(workspace, base is not None)
        return cls.in_workspace(podman, cgroups, job, workspace, control, tmp_seen_at, inputs,
                                steps)

    @classmethod
    def in_workspace(cls, podman: Podman, cgroups: Cgroups | None, job: ContainerJob,
                     workspace: Path, control: Path, tmp_seen_at: str | None,
                     inputs: tuple[str, Path] | None, steps: Steps | None = None) -> Broker:
        """A broker over a job's folders on the host made before (`made_folders`: a
        sandbox started ahead has them), removed by `close`."""
        roots = {tmp_seen_at or str(workspace / "tmp"): (workspace / "tmp", True)}
        if inputs is not None:
            roots[inputs[0]] = (inputs[1], False)
        return cls(podman, cgroups, job, workspace, roots, steps, control)

    @property
    def socket_path(self) -> Path:
        return self.control / SOCKET_NAME

    async def start(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(str(self.socket_path))
        listener.listen(16)
        listener.setblocking(False)
        self._listener = listener
        self._serving = asyncio.create_task(self._serve(listener))

    async def _serve(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(listener)
            name = f"geocatalog-{self.job.job_id[:36]}-{uuid.uuid4().hex[:8]}"
            task = asyncio.create_task(self._answer(conn, name))
            self._running[name] = task
            task.add_done_callback(partial(self._ended, name))

    def _ended(self, name: str, _: asyncio.Task[None]) -> None:
        self._running.pop(name, None)

    async def close(self) -> list[str]:
        """Every container of the job stopped and removed, the socket gone: the limits a
        container met."""
        if self._serving is not None:
            self._serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._serving
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # podman's files are in the job's folder
        await asyncio.gather(*self._removals, return_exceptions=True)
        if self._listener is not None:
            self._listener.close()
        shutil.rmtree(self.workspace, ignore_errors=True)
        shutil.rmtree(self.control, ignore_errors=True)
        return self.hit

    async def _answer(self, conn: socket.socket, name: str) -> None:
        fds: list[int] = []
        try:
            loop = asyncio.get_running_loop()
            await readable(conn)
            data, fds, flags, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
            reply = await self._reply(data, flags, fds, conn, name)
            if reply.get("message") and reply["status"] == REFUSED:
                self.failures.append(reply["message"])
            await loop.sock_sendall(conn, json.dumps(reply).encode())
        except (OSError, asyncio.CancelledError):
            pass  # the caller went (its job dismissed or ended): its container went too
        finally:
            for fd in fds:
                os.close(fd)
            conn.close()

    async def _reply(self, data: bytes, flags: int, fds: list[int], conn: socket.socket,
                     name: str) -> dict[str, Any]:
        """The answer to one request: the container's end, or why it did not run (one
        line, which the job's message takes)."""
        try:
            if flags & socket.MSG_TRUNC or len(fds) != 3:
                raise RequestRefused(f"A container request is at most {MAX_REQUEST} "
                                     "bytes, with its tool's stdin, stdout and stderr.")
            run = self._run(json.loads(data), name)
        except (RequestRefused, ValueError) as e:
            return {"status": REFUSED, "message": str(e)}
        try:
            return await self._contained(run, fds, conn)
        except Exception as e:  # podman, the cgroups: said, never swallowed
            logger.exception("job %s: a container of %s failed", self.job.job_id, run.image)
            said = next(iter(str(e).splitlines()), "")
            return {"status": REFUSED, "message": f"The worker could not run the container "
                    f"of {run.image}: {type(e).__name__}{f': {said}' if said else ''}."}

    async def _contained(self, run: ToolRun, fds: list[int], conn: socket.socket
                         ) -> dict[str, Any]:
        """The container run to its end, or until its caller goes."""
        if self.job.apart and self.steps is not None:
            reply = await self.steps.run(run, self.job, fds, conn, self.workspace)
        else:
            reply = await run_container(self.podman, self.cgroups, self.job, run,
                                        self.workspace, fds, caller_gone(conn),
                                        removals=self._removals)
        self.hit += [h for h in reply.pop("hit", []) if h not in self.hit]
        return reply

    def _run(self, request: Any, name: str) -> ToolRun:
        """The container a request (cwltool's arguments after `run`) asks for, checked."""
        if not isinstance(request, list) or not all(isinstance(a, str) for a in request):
            raise RequestRefused("A container request is a list of arguments.")
        self._started += 1
        if self._started > MAX_CONTAINERS:
            raise RequestRefused(f"A job starts at most {MAX_CONTAINERS} containers.")
        volumes, environment, workdir = [], {}, "/"
        at = 0
        while at < len(request) and request[at].startswith("--"):
            option, _, value = request[at].partition("=")
            if option == "--volume":
                volumes.append(value)
            elif option == "--env":
                key, _, given = value.partition("=")
                environment[key] = given
            elif option == "--workdir":
                workdir = value
            elif option != "--rm":
                raise RequestRefused(f"The container option {option} is not offered.")
            at += 1
        if at == len(request):
            raise RequestRefused("A container request names its image.")
        image, command = request[at], request[at + 1:]
        if image not in self.job.images:
            raise RequestRefused(f"The image {image} is not one this process declared.")
        mounts = [self._mount(volume, writable={workdir, "/tmp"}) for volume in volumes]
        return ToolRun(name=name, job_id=self.job.job_id, image=image, command=command,
                       workdir=workdir, mounts=mounts, environment=environment,
                       cpus=self.job.cpus)

    def _mount(self, volume: str, writable: set[str]) -> Mount:
        """`source:target`, its source a host path beneath one of the job's folders."""
        if any(c in volume for c in ",\n\0"):  # podman reads a mount's options split at ','
            raise RequestRefused(f"A volume's paths have no ',' ({volume[:200]}).")
        if volume.count(":/") != 1:
            raise RequestRefused(f"A volume is `source:target`, each an absolute path "
                                 f"without ':/' ({volume[:200]}).")
        source, target = volume.split(":/")
        target = "/" + target
        seen = os.path.normpath(source)
        for where, (host, may_write) in self.roots.items():
            if seen == where or seen.startswith(where.rstrip("/") + "/"):
                found = (host / os.path.relpath(seen, where)).resolve()
                if not found.is_relative_to(host.resolve()) or not found.exists():
                    break
                writes = may_write and target in writable
                if writes:
                    _open_to_tools(found)
                return Mount(found, target, writes)
        raise RequestRefused(f"The folder {source[:200]} is not the job's: a container "
                             "sees only the job's own folders.")


def _open_to_tools(path: Path) -> None:
    """A folder the tool (a user that is not root) writes in: open to every user (a link
    put there meanwhile is not followed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.fchmod(fd, 0o777)
    finally:
        os.close(fd)
