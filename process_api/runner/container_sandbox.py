"""A sandbox of the job's own with its tools' containers (`ContainerSandbox`, the executor
of deployed processes whose tools name images: the worker runs each container the job asks
for, checked by `container_broker`)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from process_api.runner.cgroups import Cgroups
from process_api.runner.container_broker import (
    SOCKET_NAME,
    Broker,
    Steps,
    forget_dead_workspaces,
    made_folders,
)
from process_api.runner.container_client import SOCKET_VARIABLE
from process_api.runner.container_run import ContainerJob
from process_api.runner.containers import Podman
from process_api.runner.executor import ContainersUnavailable, End, Handle, JobRun, ended
from process_api.runner.handshake import handshake
from process_api.runner.own_sandbox import Made, OwnSandbox, Spare
from process_api.runner.sandbox import INPUTS_MOUNT, JOB_PACKAGES, Sandbox

logger = logging.getLogger("geocatalog.jobs")


#: Where a job's sandbox sees the folder of its containers' socket (read-only).
CONTROL_MOUNT = "/run/geocatalog"



class ContainerSandbox(OwnSandbox):
    """The executor of deployed processes whose tools name images: a sandbox of the job's
    own, as `OwnSandbox`'s (`spares` started ahead once a first job came, when it has a
    sandbox), with a broker of its containers (the worker runs each tool's container its
    cwltool asks for, checked: `container_broker`) and the job's folders on the host
    where its containers see them: a spare's made with it, its broker started with its
    job."""

    def __init__(self, sandbox: Sandbox | None, environment: Mapping[str, str],
                 podman: Podman | None, cgroups: Cgroups | None = None,
                 steps: Steps | None = None, workspaces: Path | None = None,
                 preload: Iterable[str] = (), modules: Iterable[str] = JOB_PACKAGES,
                 network: bool = False, use_cgroups: bool = False,
                 made: Made | None = None, spares: int = 0) -> None:
        super().__init__(sandbox, environment, network=network, modules=modules,
                         workspaces=workspaces, preload=preload, made=made,
                         spares=spares if sandbox is not None else 0)
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

    async def _started_spare(self) -> Spare:
        """A sandbox started ahead with its job's folders on the host (its `/tmp`, its
        inputs', its containers' socket's), where its broker, started with its job, finds
        them."""
        folder = self._spare_folder()
        assert folder is not None  # spares are started in a sandbox only
        control = made_folders(folder, self.workspaces is not None)
        seen = [(folder / "inputs", INPUTS_MOUNT), (control, CONTROL_MOUNT)]
        ours, process = await self._spawn(seen, self._seen_environment, folder / "tmp",
                                          removed=(folder, control))
        return Spare(ours, process, folder, control)

    @property
    def _seen_environment(self) -> dict[str, str]:
        """A sandboxed job's environment: its containers' socket where it sees it."""
        return {**self.environment, SOCKET_VARIABLE: f"{CONTROL_MOUNT}/{SOCKET_NAME}"}

    async def launch(self, run: JobRun) -> Handle:
        if run.containers is None:
            raise ValueError("a job without containers runs in an OwnSandbox")
        if self.podman is None:
            raise ContainersUnavailable(
                "This worker runs no containers (podman is not installed, or JOB_CONTAINERS "
                "is none): the process's tools need one.")
        spare = await self._spare_for(run.inputs) if self.spares else None
        if spare is not None:
            assert spare.folder is not None and spare.control is not None
            ours = spare.socket
            broker = Broker.in_workspace(self.podman, self.cgroups, run.containers,
                                         spare.folder, spare.control, "/tmp",
                                         (INPUTS_MOUNT, spare.folder / "inputs"), self.steps)
            try:
                await _listening(broker)
            except BaseException:
                ours.close()
                raise
        else:
            broker = await _listening(self._broker(self.podman, run.containers, run.inputs))
            # its folders on the host, where its containers see them
            tmp = broker.workspace / "tmp"
            read_only = [(run.inputs, INPUTS_MOUNT)] if run.inputs is not None else []
            read_only.append((broker.control, CONTROL_MOUNT))
            environment = self._seen_environment
            if self.sandbox is None:
                environment |= {"TMPDIR": str(tmp), SOCKET_VARIABLE: str(broker.socket_path)}
            try:
                ours, _ = await self._spawn(read_only, environment, tmp)
            except BaseException:
                await broker.close()
                raise
        try:
            return dataclasses.replace(await handshake(ours, run), broker=broker)
        except BaseException:
            ours.close()
            await broker.close()
            raise

    async def end(self, handle: Handle, why: End) -> None:
        await ended(handle, why)
        if why in (End.RELEASED, End.ABANDONED) and handle.broker is not None:
            # its containers stopped and removed (the limits they met kept: `hit`)
            await asyncio.shield(handle.broker.close())

    def _broker(self, podman: Podman, job: ContainerJob, inputs: Path | None) -> Broker:
        """The broker of a job's containers with the job's folders on the host, made for
        it: its `/tmp`, its socket's (`Broker.with_workspace`)."""
        sandboxed = self.sandbox is not None
        seen = None if inputs is None else (INPUTS_MOUNT if sandboxed else str(inputs), inputs)
        return Broker.with_workspace(podman, self.cgroups, job,
                                     "/tmp" if sandboxed else None, seen, self.steps,
                                     self.workspaces)


async def _listening(broker: Broker) -> Broker:
    """`broker` listening (closed, its folders removed, if it cannot)."""
    try:
        await broker.start()
    except BaseException:
        await broker.close()
        raise
    return broker
