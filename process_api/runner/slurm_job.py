"""The batch step of a job run by Slurm (`slurm_executor`), on the node Slurm chose: it reads
the job's description and removes it (it holds the job's inputs), starts the job's process
in its sandbox there as a worker would (`own_sandbox.OwnSandbox`; its tools' containers run
by podman on the node: `container_sandbox.ContainerSandbox`), and writes the process's
stream (its protocol lines, its result files' bytes) to its standard output: Slurm's output
file of the job, which the worker follows. Slurm's `scancel` (SIGTERM) ends the job's
process and removes its containers.

    python -m process_api.runner.slurm_job FOLDER
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any, BinaryIO

from process_api.runner.cgroups import Cgroups
from process_api.runner.container_run import ContainerJob
from process_api.runner.container_sandbox import ContainerSandbox
from process_api.runner.containers import Podman
from process_api.runner.executor import End, Handle, JobRun
from process_api.runner.isolation import close_inherited, not_dumpable
from process_api.runner.own_sandbox import OwnSandbox
from process_api.runner.sandbox import Sandbox
from process_api.runner.slurm import Slurm
from process_api.runner.slurm_step import SlurmSteps


def _executor(description: dict[str, Any], folder: Path) -> OwnSandbox:
    given = description.get("sandbox")
    sandbox = None if given is None else Sandbox(**{
        **given, "hidden": tuple(Path(h) for h in given["hidden"]),
        "packages": tuple(given["packages"])})
    if description.get("containers") is None:
        return OwnSandbox(sandbox, description["environment"], network=description["network"],
                          modules=description["modules"], workspaces=folder)
    registries = tuple(description.get("registries") or ())
    steps = None
    if description["containers"].get("apart"):  # a workflow's steps over the nodes
        steps = SlurmSteps(Slurm.available(description.get("partition")),
                           description["wall_seconds"], description.get("account"),
                           registries)
    # its folders in the job's shared one: a step on another node sees them
    return ContainerSandbox(sandbox, description["environment"], Podman.available(registries),
                            Cgroups.for_containers(), steps, workspaces=folder,
                            modules=description["modules"], network=description["network"])


def _containers(description: dict[str, Any]) -> ContainerJob | None:
    given = description.get("containers")
    return None if given is None else ContainerJob(
        **{**given, "images": frozenset(given["images"])})


async def _relay(started: Handle, out: BinaryIO) -> None:
    """The job's stream to `out` as it comes, line by line (a file's bytes as they are
    announced); before the process's return code, the ceiling its containers met."""
    while line := await started.stream.readline():
        try:
            message = json.loads(line)
        except ValueError:
            message = {}
        if "returncode" in message and started.broker is not None:
            hit = await asyncio.shield(started.broker.close())
            started.broker = None
            if hit:
                out.write(json.dumps({"ceiling": hit[0]}).encode() + b"\n")
        out.write(line)
        if "file" in message and "size" in message:
            left = int(message["size"])
            while left:
                chunk = await started.stream.readexactly(min(left, 1 << 20))
                out.write(chunk)
                left -= len(chunk)
        out.flush()


async def run(folder: Path, out: BinaryIO) -> int:
    described = folder / "job.json"
    description = json.loads(described.read_text())
    described.unlink()  # the job's inputs, secrets too: read once
    inputs = folder / "inputs"
    sys.path[:0] = [p for p in description.get("path", []) if p not in sys.path]
    executor = _executor(description, folder)
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    started = await executor.launch(JobRun(
        job_id=folder.name, request=description["request"].encode(),
        network=description["network"], inputs=inputs if inputs.is_dir() else None,
        containers=_containers(description)))
    try:
        await started.release()
        await _relay(started, out)
    finally:  # its process group is killed (scancel: SIGTERM here), its containers gone
        await executor.end(started, End.RELEASED)
    return 0


if __name__ == "__main__":
    not_dumpable()
    close_inherited()
    try:
        sys.exit(asyncio.run(run(Path(sys.argv[1]), sys.stdout.buffer)))
    except asyncio.CancelledError:
        sys.exit(143)
