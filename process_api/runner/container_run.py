"""One tool's container run, wherever its job runs (the worker's broker, `container_broker`;
a Slurm step, `slurm_step`): a cgroup bounded as its job is, the container made and its
mounts checked against what was asked, run with the tool's stdio to its end or until its
caller goes, then removed with its cgroup.

May import the runner's podman, cgroup and mount modules and `processes.resources`; not the
broker (which imports this).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from process_api.processes.resources import quantity
from process_api.runner.cgroups import Cgroups, JobCgroup
from process_api.runner.container_client import REFUSED
from process_api.runner.containers import ImageRefused, Podman, ToolRun
from process_api.runner.mounts import mount_problem

logger = logging.getLogger("geocatalog.jobs")

#: The exit status of a process killed by SIGKILL.
KILLED = 128 + 9


@dataclass(frozen=True)
class ContainerJob:
    """What one job's containers may use."""

    job_id: str
    images: frozenset[str]
    memory_bytes: int
    processes: int
    cpus: float | None = None
    apart: bool = False  # each container a job of its own on a scheduler (`container_broker.Steps`)


async def run_container(podman: Podman, cgroups: Cgroups | None, job: ContainerJob,
                        run: ToolRun, folder: Path, stdio: list[int],
                        gone: Coroutine[Any, Any, None] | None = None,
                        removals: set[asyncio.Task[None]] | None = None) -> dict[str, Any]:
    """A tool's container, in a cgroup bounded as the job is, made and its mounts checked,
    then run with `stdio` (stdin, stdout, stderr: closed here once it has them) to its end
    or until `gone` returns; removed, with its cgroup: before the reply, or after it by a
    task put in `removals` (the caller waits for them before the job's folders go). The
    reply: `{"status", "message"?, "hit"}` (the ceilings it met)."""
    cgroup = await asyncio.to_thread(_bounded, cgroups, job)
    if cgroup is not None:
        run = ToolRun(**{**run.__dict__, "cgroup": cgroup.path})
    try:
        try:
            # mounted, not running: check them (podman's files in the job's folder)
            pid = await podman.prepare(run, folder)
        except ImageRefused as e:
            return {"status": REFUSED, "message": str(e), "hit": []}
        if problem := await asyncio.to_thread(
                mount_problem, pid, [(m.source, m.target) for m in run.mounts]):
            return {"status": REFUSED, "message": problem, "hit": []}
        process = await asyncio.create_subprocess_exec(
            *podman.start_command(run.name), stdin=stdio[0], stdout=stdio[1],
            stderr=stdio[2], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            cwd=folder)
        for fd in stdio:
            os.close(fd)
        stdio.clear()
        ended = asyncio.create_task(process.wait())
        waiting: set[asyncio.Future[Any]] = {ended}
        if gone is not None:
            waiting.add(asyncio.ensure_future(gone))
            gone = None  # watched: the task owns it
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiting - {ended}:
                task.cancel()
            if not ended.done():  # its caller went, or the job ends: so does it
                await asyncio.shield(podman.remove(run.name))
            status = await asyncio.shield(ended)
        hit = cgroup.hit(killed=status == KILLED) if cgroup is not None else []
    finally:
        if gone is not None:  # never watched (it did not start)
            gone.close()
        if removals is None:
            await asyncio.shield(_removed(podman, run.name, cgroup))
        else:  # the tool has ended: its caller need not wait for podman's cleanup
            removal = asyncio.ensure_future(_removed(podman, run.name, cgroup, said=True))
            removals.add(removal)
            removal.add_done_callback(removals.discard)
    if "memory" in hit:
        return {"status": status, "hit": hit, "message": (
            f"The container was stopped: its tool needed more than the job's "
            f"{quantity(job.memory_bytes)} of memory (resources.limits.memory).")}
    return {"status": status, "hit": hit}


async def _removed(podman: Podman, name: str, cgroup: JobCgroup | None,
                   said: bool = False) -> None:
    """A container and its cgroup removed; a failure logged when `said` (nobody waits for
    the removal's answer), else raised."""
    try:
        try:
            await podman.remove(name)
        finally:
            if cgroup is not None:
                await asyncio.to_thread(cgroup.close)
    except Exception:
        if not said:
            raise
        logger.exception("the container %s could not be removed", name)


def _bounded(cgroups: Cgroups | None, job: ContainerJob) -> JobCgroup | None:
    """A cgroup for one of the job's containers, bounded as the job is (None: none)."""
    if cgroups is None:
        return None
    cgroup = cgroups.create()
    try:
        cgroup.limit(job.memory_bytes, job.processes)
    except BaseException:
        cgroup.close()
        raise
    return cgroup


async def caller_gone(conn: socket.socket) -> None:
    """Until the caller closes its end (it ended, or was killed)."""
    loop = asyncio.get_running_loop()
    while await loop.sock_recv(conn, 1):
        pass
