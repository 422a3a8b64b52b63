"""A worker's executors, chosen by setting from a registry (`EXECUTORS`, by
`JOB_EXECUTOR`): which runs the service's own processes (by whether they need network), a
deployed process's job, one whose tools name images, and the publishing of results."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from process_api.runner.container_sandbox import ContainerSandbox
from process_api.runner.containers import Podman
from process_api.runner.executor import Executor
from process_api.runner.fork_servers import ForkServers
from process_api.runner.own_sandbox import Made, OwnSandbox
from process_api.runner.sandbox import JOB_PACKAGES, Sandbox
from process_api.runner.slurm import Slurm
from process_api.runner.slurm_executor import SlurmExecutor


@dataclass(frozen=True)
class SlurmSite:
    """The Slurm a deployment runs jobs on: its commands, the folder its workers' hosts
    share with the nodes, the account of a job of no project (None: Slurm's default)."""

    slurm: Slurm
    folder: Path
    account: str | None = None


@dataclass(frozen=True)
class Setup:
    """What a worker's executors are made of: the jobs' sandbox and environment, what the
    service's processes import (their fork servers import it once), what a deployed job's
    process loads before its request (cwltool), podman (None: no containers), the
    registries images may come from, the sandboxes started ahead, what publishing imports,
    and the Slurm of `JOB_EXECUTOR=slurm`."""

    sandbox: Sandbox | None
    environment: Mapping[str, str]
    modules: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    podman: Podman | None = None
    cgroups: bool = True  # put each container in a cgroup of its own, where one is offered
    registries: tuple[str, ...] = ()
    spares: int = 0
    made: Made | None = None  # files the deployed processes' sandboxes read, made once
    publishing: tuple[str, ...] = ("process_api",)
    slurm: SlurmSite | None = None


@dataclass
class Executors:
    """A worker's executors: `service` (by whether the process needs network),
    `deployed`, `containers` (a deployed process whose tools name images) and
    `publishing` (a job's results described into the catalog: a sandbox of its own, it
    reads files a user's code wrote)."""

    service: dict[bool, Executor]
    deployed: Executor
    containers: Executor
    publishing: Executor

    def of(self, deployed: bool, network: bool, images: bool) -> Executor:
        """The executor of a job: of a deployed process (whose tools name images, or not),
        else of the service's (needing network, or not)."""
        if deployed:
            return self.containers if images else self.deployed
        return self.service.get(network) or self.service[True]

    @property
    def local(self) -> bool:
        """Whether every job's process runs on this worker's host."""
        return self.deployed.local

    def _all(self) -> list[Executor]:
        seen: list[Executor] = []
        for executor in (*self.service.values(), self.deployed, self.containers,
                         self.publishing):
            if not any(executor is s for s in seen):
                seen.append(executor)
        return seen

    async def start(self) -> None:
        for executor in self._all():
            await executor.start()

    async def stop(self) -> None:
        for executor in self._all():
            await executor.stop()


def local(setup: Setup) -> Executors:
    """Every job on this worker's host."""
    forks = ForkServers(setup.modules, setup.sandbox, setup.environment)
    return Executors(
        service={network: forks for network in (False, True)},
        deployed=OwnSandbox(setup.sandbox, setup.environment, preload=setup.preload,
                            spares=setup.spares, made=setup.made),
        containers=ContainerSandbox(setup.sandbox, setup.environment, setup.podman,
                                    preload=setup.preload, use_cgroups=setup.cgroups,
                                    made=setup.made, spares=setup.spares),
        publishing=_publishing(setup))


def slurm(setup: Setup) -> Executors:
    """Every job's process a Slurm job, in the sandbox it would have here (its results'
    publishing here)."""
    site = setup.slurm
    if site is None:
        raise ValueError("JOB_EXECUTOR=slurm needs SLURM_FOLDER")

    def on_slurm(network: bool, modules: tuple[str, ...],
                 registries: tuple[str, ...] = ()) -> SlurmExecutor:
        assert site is not None
        return SlurmExecutor(site.slurm, site.folder, setup.sandbox, setup.environment,
                             network, modules, registries, site.account)

    deployed = on_slurm(False, JOB_PACKAGES, setup.registries)
    return Executors(
        service={network: on_slurm(network, setup.modules) for network in (False, True)},
        deployed=deployed, containers=deployed, publishing=_publishing(setup))


def _publishing(setup: Setup) -> OwnSandbox:
    return OwnSandbox(setup.sandbox, setup.environment, network=True,
                      modules=setup.publishing)


#: The executors of a worker by `JOB_EXECUTOR`.
EXECUTORS: dict[str, Callable[[Setup], Executors]] = {"local": local, "slurm": slurm}
