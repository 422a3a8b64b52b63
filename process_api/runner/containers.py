"""Containers for the tools of deployed processes (CWL `DockerRequirement`), run by podman
on the worker's host: where an image may come from, the `podman run` of one tool (the
container is its sandbox: no network, a read-only root, no capabilities, no new
privileges, a user that is not root, a cgroup bounding its memory and processes), and the
containers, images and cgroups a dead worker left behind.

Images: a local one (`dockerImageId`, or a `dockerPull` of `localhost/`), or one pulled
from a registry the operator allows (`CONTAINER_REGISTRIES`; none by default). Nothing is
ever built, loaded or imported from a package.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from process_api.runner.programs import Ran, run_program

#: The label every container of a job carries: `<host>:<worker pid>:<job id>`.
LABEL = "geocatalog.job"
#: Where each container's cgroup is made, the same path in every hierarchy.
CGROUP_PARENT = "geocatalog-containers"
#: The user a tool runs as in its container (`nobody`: owns nothing of the image or host).
USER = "65534:65534"
#: The registry a name without one comes from (as Docker and podman read it).
DEFAULT_REGISTRY = "docker.io"
#: An image's name, id or digest (`registry:port/path/name:tag@sha256:...`).
_IMAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$")
#: How long podman may take to stop and remove a container.
REMOVE_SECONDS = 30.0


class ImageRefused(ValueError):
    """An image this service does not run; the message names why."""


def registry_of(image: str) -> str:
    """The registry an image name pulls from (`docker.io` when it names none)."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return DEFAULT_REGISTRY


def image_problem(requirement: dict[str, object], allowed: Iterable[str] | None
                  ) -> str | None:
    """Why a `DockerRequirement` cannot run here, or None: its image is local or pulled
    from an `allowed` registry (None: any, checked later), never built, loaded or
    imported."""
    for refused in ("dockerFile", "dockerLoad", "dockerImport"):
        if refused in requirement:
            return (f"DockerRequirement: {refused} is not offered (images are never built "
                    "or loaded from a package); name a local image (dockerImageId) or "
                    "one of an allowed registry (dockerPull).")
    if problem := name_problem(image_of(requirement)):
        return problem
    if "dockerImageId" in requirement:
        return None
    pull = str(requirement.get("dockerPull") or "")
    if not pull:
        return "DockerRequirement: name the image (dockerPull or dockerImageId)."
    return None if allowed is None else pull_problem(pull, allowed)


def pull_problem(image: str, allowed: Iterable[str]) -> str | None:
    """Why an image may not be pulled here, or None (a local one, or an allowed
    registry's)."""
    registry, allowed = registry_of(image), list(allowed)
    if registry == "localhost" or registry in allowed:
        return None
    return (f"DockerRequirement: the image {image} comes from the registry {registry}, "
            f"which this service does not allow (CONTAINER_REGISTRIES: "
            f"{', '.join(allowed) or 'none, local images only'}).")


def name_problem(image: str) -> str | None:
    """Why a string cannot name an image, or None."""
    if _IMAGE_NAME.match(image):
        return None
    return f"DockerRequirement: {image[:200]!r} is not an image name."


def image_of(requirement: dict[str, object]) -> str:
    """The image a `DockerRequirement` runs, as cwltool names it."""
    return str(requirement.get("dockerImageId") or requirement.get("dockerPull"))


@dataclass(frozen=True)
class Mount:
    """A host folder or file seen in the container (`writable` or read-only)."""

    source: Path
    target: str
    writable: bool = False


@dataclass(frozen=True)
class ToolRun:
    """One tool's container: its image, command, folders and limits."""

    name: str
    job_id: str
    image: str
    command: Sequence[str]
    workdir: str
    mounts: Sequence[Mount]
    environment: dict[str, str] = field(default_factory=dict)
    cgroup: str | None = None  # its cgroup's path (`ContainerCgroup.path`)
    cpus: float | None = None


@dataclass(frozen=True)
class Podman:
    """The container runtime of this worker's host, and what it may pull."""

    program: str
    registries: tuple[str, ...] = ()

    @classmethod
    def available(cls, registries: Iterable[str] = ()) -> Podman | None:
        """podman, when this machine has it (else container jobs fail, saying so)."""
        program = shutil.which("podman")
        return cls(program, tuple(registries)) if program else None

    @property
    def owner(self) -> str:
        """The label value prefix of this worker's containers."""
        return f"{socket.gethostname()}:{os.getpid()}"

    def create_command(self, run: ToolRun, pidfile: Path | None = None) -> list[str]:
        """`podman create` of one tool's container, its stdio to be attached (`-i`)
        (`pidfile`: where podman writes its process's pid once initialised)."""
        args = [self.program, "create", "-i", "--name", run.name,
                "--label", f"{LABEL}={self.owner}:{run.job_id}",
                "--pull", "never", "--network", "none", "--read-only",
                "--read-only-tmpfs=false", "--cap-drop", "all",
                "--security-opt", "no-new-privileges", "--user", USER,
                "--log-driver", "none", "--workdir", run.workdir]
        if pidfile is not None:
            args += ["--pidfile", str(pidfile)]
        if run.cgroup is not None:
            args += ["--cgroup-parent", run.cgroup]
        if run.cpus is not None:
            args += ["--cpus", f"{run.cpus:g}"]
        for mount in run.mounts:
            options = f"type=bind,source={mount.source},target={mount.target}"
            args += ["--mount", options if mount.writable else options + ",readonly"]
        for name, value in run.environment.items():
            args += ["--env", f"{name}={value}"]
        return [*args, "--", run.image, *run.command]

    def start_command(self, name: str) -> list[str]:
        """`podman start` of a prepared container, attached: the caller's stdio is the
        tool's, its exit status the tool's."""
        return [self.program, "start", "--attach", "--interactive", name]

    async def prepare(self, run: ToolRun, folder: Path | None = None) -> int:
        """The tool's container created and initialised (its mounts made, its process not
        yet running): that process's pid; ImageRefused when podman could not, with its
        reason. Its image is looked for (and pulled) only when it could not be
        created. `folder`: podman's working directory, where its monitor (conmon) may
        write files (`oom`), and the pid's file (a folder the job cannot write)."""
        pidfile = None if folder is None else folder / f"{run.name}.pid"
        created = await self._call(*self.create_command(run, pidfile)[1:], cwd=folder)
        if created.code != 0 and not await self.present(run.image):
            await self._pull(run.image)
            created = await self._call(*self.create_command(run, pidfile)[1:], cwd=folder)
        if created.code != 0:
            raise ImageRefused(f"podman could not create the container of {run.image}: "
                               f"{created.reason()}.")
        ran = await self._call("init", run.name, cwd=folder)
        if ran.code != 0:
            raise ImageRefused(f"podman could not init the container of {run.image}: "
                               f"{ran.reason()}.")
        if pidfile is not None:
            pid, why = await asyncio.to_thread(_read_pid, pidfile), "it wrote no process id"
        else:
            ran = await self._call("inspect", "--format", "{{.State.Pid}}", run.name)
            pid, why = (ran.out.strip() if ran.code == 0 else ""), ran.reason()
        if not pid.isdigit() or int(pid) <= 0:
            raise ImageRefused(f"podman did not start the container of {run.image}: {why}.")
        return int(pid)

    async def present(self, image: str) -> bool:
        return (await self._call("image", "exists", "--", image)).code == 0

    async def _pull(self, image: str) -> None:
        """An absent image pulled when its registry is allowed; else ImageRefused saying
        what an admin does."""
        registry = registry_of(image)
        if registry not in self.registries:
            raise ImageRefused(f"The image {image} is not on this worker; an admin adds it "
                               f"(`geocatalog images pull {image}` from an allowed registry, "
                               "or `podman load`/`podman import`).")
        ran = await self._call("pull", "--quiet", "--", image)
        if ran.code != 0:
            raise ImageRefused(f"The image {image} could not be pulled from {registry}: "
                               f"{ran.reason()}.")

    async def remove(self, name: str) -> None:
        """The container gone, stopped first when it runs."""
        await self._call("rm", "--force", "--time", "0", "--ignore", name)

    async def _call(self, *args: str, cwd: Path | None = None) -> Ran:
        """podman's end and output (within REMOVE_SECONDS)."""
        return await run_program([self.program, *args], env=_environment(),
                                 seconds=REMOVE_SECONDS, cwd=cwd)

    # -- what an admin and a starting worker do (synchronous: the CLI, a worker's start) --

    def images(self) -> list[dict[str, Any]]:
        """The images on this host: id, names, size, created."""
        found = json.loads(self._output("images", "--format", "json") or "[]")
        return [{"id": str(i.get("Id", ""))[:12], "names": i.get("Names") or [],
                 "size": i.get("Size"), "created": i.get("CreatedAt")} for i in found]

    def pull(self, image: str) -> str:
        """Pull an image of an allowed registry (ImageRefused otherwise): its id."""
        registry = registry_of(image)
        if registry not in self.registries:
            raise ImageRefused(f"The registry {registry} is not allowed "
                               f"(CONTAINER_REGISTRIES: {', '.join(self.registries) or 'none'}).")
        if problem := name_problem(image):
            raise ImageRefused(problem)
        return self._output("pull", "--quiet", "--", image).strip()

    def reap(self) -> list[str]:
        """Remove the containers of this host's workers that are gone (`kill -9`, a crash):
        the names removed."""
        found = json.loads(self._output("ps", "--all", "--filter", f"label={LABEL}",
                                        "--format", "json") or "[]")
        host, removed = socket.gethostname(), []
        for container in found:
            owner = str((container.get("Labels") or {}).get(LABEL, ""))
            worker_host, _, rest = owner.partition(":")
            worker = rest.partition(":")[0]
            if worker_host == host and worker.isdigit() and not _alive(int(worker)):
                name = (container.get("Names") or [str(container.get("Id"))])[0]
                self._output("rm", "--force", "--time", "0", "--ignore", name)
                removed.append(name)
        return removed

    def _output(self, *args: str) -> str:
        return subprocess.run([self.program, *args], capture_output=True, text=True,
                              check=True, env=_environment(), stdin=subprocess.DEVNULL,
                              timeout=600).stdout


def _read_pid(pidfile: Path) -> str:
    """The pid podman wrote (the file removed), or "" when it wrote none."""
    try:
        return pidfile.read_text().strip()
    except OSError:
        return ""
    finally:
        pidfile.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    return pid == os.getpid() or Path(f"/proc/{pid}").exists()


def _environment() -> dict[str, str]:
    """podman's environment: a program's basics, nothing of the service's."""
    return {name: os.environ[name] for name in ("PATH", "LANG", "TZ") if name in os.environ}

