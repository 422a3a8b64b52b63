"""A workflow's steps over Slurm's nodes: on Slurm, each container a workflow's cwltool asks
for (checked by the job's broker, `container_broker`) is a Slurm job of its own
(`SlurmSteps`, in the job's batch step), whose batch step runs it on the node Slurm chose
(`python -m process_api.runner.slurm_step FOLDER`) as a worker would: a cgroup bounded as
the job is, its mounts checked, podman. Its folder, in the job's shared folder, holds its
description, its stdin, stdout and stderr (relayed to the tool's own once it has ended:
they do not cross nodes as descriptors) and its exit status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from process_api.runner.cgroups import Cgroups
from process_api.runner.container_client import REFUSED
from process_api.runner.container_run import (
    KILLED,
    ContainerJob,
    caller_gone,
    run_container,
)
from process_api.runner.containers import Mount, Podman, ToolRun
from process_api.runner.isolation import close_inherited, not_dumpable
from process_api.runner.slurm import (
    POLL_SECONDS,
    Slurm,
    SlurmError,
    Submission,
    batch_script,
)

#: What a step's Slurm job is named, by its job's id (`squeue --name`).
STEP_PREFIX = "geocatalog-step-"


def _copy(source: int | Path, target: int | Path) -> None:
    """Bytes from a descriptor or file to another, to the end (descriptors stay open)."""
    with open(source, "rb", closefd=not isinstance(source, int)) as read, \
            open(target, "wb", closefd=not isinstance(target, int)) as write:
        shutil.copyfileobj(read, write)


class SlurmSteps:
    """Each of a job's containers as a Slurm job of its own, asking what the job asked
    (its cores and memory, its time limit, its account)."""

    def __init__(self, slurm: Slurm, wall_seconds: float, account: str | None = None,
                 registries: tuple[str, ...] = ()) -> None:
        self.slurm = slurm
        self.wall_seconds = wall_seconds
        self.account = account
        self.registries = registries

    async def run(self, run: ToolRun, job: ContainerJob, stdio: list[int],
                  conn: socket.socket, workspace: Path) -> dict[str, Any]:
        step = Path(tempfile.mkdtemp(prefix="step-", dir=workspace))
        await asyncio.to_thread(_copy, stdio[0], step / "stdin")
        description = {"run": {**asdict(run), "mounts": [
            [str(m.source), m.target, m.writable] for m in run.mounts]},
            "job": {**asdict(job), "images": sorted(job.images)},
            "registries": list(self.registries)}
        (step / "step.json").write_text(json.dumps(description))
        try:
            slurm_id = await self.slurm.submit(Submission(
                name=STEP_PREFIX + job.job_id, folder=step,
                script=batch_script("process_api.runner.slurm_step", step),
                cpus=max(1, round(job.cpus or 1)), memory_bytes=job.memory_bytes,
                wall_seconds=self.wall_seconds, account=self.account))
        except SlurmError as e:
            return {"status": REFUSED, "message": f"Slurm refused the step: {e}"}
        ended = asyncio.create_task(self._ended(slurm_id))
        gone = asyncio.create_task(caller_gone(conn))
        try:
            await asyncio.wait({ended, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not ended.done():  # its caller went: so does its Slurm job
                ended.cancel()
                with contextlib.suppress(SlurmError):
                    await asyncio.shield(self.slurm.cancel(slurm_id))
            self.slurm.forget(slurm_id)
        if ended.cancelled():  # its caller went: nobody reads its end
            return {"status": KILLED}
        for name, fd in (("stdout", stdio[1]), ("stderr", stdio[2])):
            if (step / name).exists():  # (none when its container never started)
                await asyncio.to_thread(_copy, step / name, fd)
        return json.loads((step / "status").read_text()) if (step / "status").exists() \
            else {"status": KILLED, "message": f"The Slurm job {slurm_id} of a step ended "
                  "before its container did."}

    async def _ended(self, slurm_id: str) -> None:
        """Until Slurm says the step's job ended (or no longer knows it)."""
        while True:
            with contextlib.suppress(SlurmError):  # the controller away: ask again
                state = await self.slurm.state(slurm_id)
                if state is None or state.ended:
                    return
            await asyncio.sleep(POLL_SECONDS)


async def run_step(folder: Path) -> dict[str, Any]:
    """The step's container, on this node, to its end: its reply."""
    description = json.loads((folder / "step.json").read_text())
    given = description["run"]
    run = ToolRun(**{**given, "mounts": [Mount(Path(source), target, writable)
                                         for source, target, writable in given["mounts"]]})
    job = ContainerJob(**{**description["job"],
                          "images": frozenset(description["job"]["images"])})
    podman = Podman.available(tuple(description["registries"]))
    if podman is None:
        return {"status": REFUSED, "message": "This node runs no containers (podman is not "
                "installed): the step needs one."}
    stdio = [os.open(folder / "stdin", os.O_RDONLY),
             os.open(folder / "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
             os.open(folder / "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    try:
        return await run_container(podman, Cgroups.for_containers(), job, run, folder, stdio)
    finally:
        for fd in stdio:
            os.close(fd)


async def _main(folder: Path) -> None:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    reply = await run_step(folder)
    (folder / "status").write_text(json.dumps(reply))


if __name__ == "__main__":
    not_dumpable()
    close_inherited()
    try:
        asyncio.run(_main(Path(sys.argv[1])))
    except asyncio.CancelledError:
        sys.exit(143)
