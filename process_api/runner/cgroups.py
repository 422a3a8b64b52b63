"""Control groups for jobs: every process a job starts (and its `/tmp` writes, which the
kernel charges to the writer) in a cgroup of its own, its memory and its number of
processes bounded, all of it killed when the job ends.

cgroup v2 (the unified hierarchy, with `memory` and `pids` enabled for a folder of the
jobs') or v1's `memory` and `pids` hierarchies, whichever this machine offers writable to
the worker; with neither, `Cgroups.available()` is None and only rlimits apply (`child`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("geocatalog.jobs")

#: The folder of the jobs' cgroups, under the worker's own (v1) or the hierarchy's root (v2).
JOBS_FOLDER = "geocatalog-jobs"
#: The folder of containers' cgroups, at each hierarchy's root: podman makes a container's
#: cgroup under a parent named by one path, the same in every hierarchy.
CONTAINERS_FOLDER = "geocatalog-containers"
CONTROLLERS = ("memory", "pids")
#: How long the end of a job waits for its cgroup's last processes to die.
EMPTY_SECONDS = 5.0


def _mounts() -> dict[str, tuple[Path, str]]:
    """Controller (`memory`, `pids`; `unified` for v2) -> (mount point, mount root)."""
    found: dict[str, tuple[Path, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        separator = fields.index("-")
        kind, options = fields[separator + 1], fields[separator + 3].split(",")
        if kind == "cgroup2":
            found.setdefault("unified", (Path(fields[4]), fields[3]))
        elif kind == "cgroup":
            for controller in CONTROLLERS:
                if controller in options:
                    found.setdefault(controller, (Path(fields[4]), fields[3]))
    return found


def _all_mounts() -> list[tuple[Path, str]]:
    """Every hierarchy's (mount point, mount root): v1's, and v2's beside them."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[fields.index("-") + 1] in ("cgroup", "cgroup2"):
            found.append((Path(fields[4]), fields[3]))
    return found


def _own(hierarchy: str) -> str:
    """This process's cgroup in a v1 hierarchy (`memory`), or in v2's (`unified`)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (hierarchy == "unified" and controllers == "") or \
                hierarchy in controllers.split(","):
            return path
    raise OSError(f"no {hierarchy} cgroup")


def _folder(mount: tuple[Path, str], path: str) -> Path:
    point, root = mount
    relative = path[len(root):] if root != "/" and path.startswith(root) else path
    return point / relative.lstrip("/")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


@dataclass(frozen=True)
class Cgroups:
    """Where jobs' cgroups are made: v1, a folder per controller; v2, one folder."""

    version: int
    folders: tuple[Path, ...]

    @classmethod
    def available(cls) -> Cgroups | None:
        """This machine's cgroups for jobs, made ready and tried once; None when it offers
        none the worker may use (no controllers, a read-only hierarchy, not root)."""
        try:
            found = cls._located(lambda c, mounts: _folder(mounts[c], _own(c)) / JOBS_FOLDER,
                                 JOBS_FOLDER)
            if found is not None:
                found.create().close()  # a cgroup made and removed: it works
            return found
        except OSError as e:
            logger.warning("jobs' cgroups: none usable here (%s); jobs are bounded by "
                           "rlimits and their /tmp's size only", e)
            return None

    @classmethod
    def for_containers(cls) -> Cgroups | None:
        """Where containers' cgroups are made (`CONTAINERS_FOLDER`), or None (as
        `available`)."""
        try:
            return cls._located(lambda c, mounts: mounts[c][0] / CONTAINERS_FOLDER,
                                CONTAINERS_FOLDER)
        except OSError as e:
            logger.warning("containers' cgroups: none usable here (%s); containers are "
                           "bounded by podman's own limits", e)
            return None

    @classmethod
    def _located(cls, v1: Callable[[str, dict[str, tuple[Path, str]]], Path],
                 name: str) -> Cgroups | None:
        """The cgroups in `v1(controller, mounts)` (v1) or `name` at v2's root, made ready
        and with dead workers' removed; None when this machine offers neither."""
        mounts = _mounts()
        if all(c in mounts for c in CONTROLLERS):
            found = cls(1, tuple(v1(c, mounts) for c in CONTROLLERS))
        elif "unified" in mounts:
            found = cls(2, (mounts["unified"][0] / name,))
        else:
            return None
        found._prepare()
        found._forget_dead_workers()
        return found

    def _prepare(self) -> None:
        if self.version == 2:
            root = self.folders[0].parent
            enabled = set((root / "cgroup.controllers").read_text().split())
            if not set(CONTROLLERS) <= enabled:
                raise OSError(f"cgroup v2 offers {' '.join(sorted(enabled)) or 'nothing'}, "
                              f"not {' and '.join(CONTROLLERS)}")
            _write(root / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
        for folder in self.folders:
            folder.mkdir(exist_ok=True)
        if self.version == 2:
            _write(self.folders[0] / "cgroup.subtree_control",
                   " ".join(f"+{c}" for c in CONTROLLERS))

    def _forget_dead_workers(self) -> None:
        """Remove the cgroups of workers that died without removing them (`kill -9`):
        each is named after its worker's pid, and empty once its processes died."""
        for folder in self.folders:
            for cgroup in folder.glob("job-*-*"):
                worker = int(cgroup.name.split("-")[1])
                if worker != os.getpid() and not Path(f"/proc/{worker}").exists():
                    JobCgroup(self.version, (cgroup,)).close()

    def create(self) -> JobCgroup:
        name = f"job-{os.getpid()}-{uuid.uuid4().hex}"
        folders = tuple(folder / name for folder in self.folders)
        for folder in folders:
            folder.mkdir()
        return JobCgroup(self.version, folders)

    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(map(str, self.folders))})"


@dataclass(frozen=True)
class JobCgroup:
    version: int
    folders: tuple[Path, ...]  # v1: (memory, pids); v2: (the one folder,)

    @property
    def _memory(self) -> Path:
        return self.folders[0]

    @property
    def _pids(self) -> Path:
        return self.folders[-1]

    @property
    def path(self) -> str:
        """Its path from the hierarchy's root (podman's `--cgroup-parent`)."""
        return f"/{self.folders[0].parent.name}/{self.folders[0].name}"

    def limit(self, memory_bytes: int, processes: int) -> None:
        """At most `memory_bytes` of memory (no swap) and `processes` processes and
        threads, for all its processes together."""
        _write(self._pids / "pids.max", str(processes))
        if self.version == 2:
            _write(self._memory / "memory.max", str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):  # a kernel without swap
                _write(self._memory / "memory.swap.max", "0")
        else:
            _write(self._memory / "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(FileNotFoundError, OSError):  # no swap accounting
                _write(self._memory / "memory.memsw.limit_in_bytes", str(memory_bytes))

    def add(self, pid: int) -> None:
        """`pid` (before it starts anything) into the cgroup."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def contain(self, pid: int, memory_bytes: int, processes: int) -> None:
        """`limit`, then `add`."""
        self.limit(memory_bytes, processes)
        self.add(pid)

    def hit(self, killed: bool = False) -> list[str]:
        """The ceilings its processes met: `memory` (the kernel killed one for it; or,
        `killed`: one of them was killed while it reached its limit), `processes` (a fork
        or a thread was refused)."""
        hit = []
        memory_events = "memory.events" if self.version == 2 else "memory.oom_control"
        if _counter(self._memory / memory_events, "oom_kill"):
            hit.append("memory")
        elif killed and self.version == 1 and \
                _number(self._memory / "memory.max_usage_in_bytes") >= \
                _number(self._memory / "memory.limit_in_bytes"):
            # v1 counts a kill in the killed process's own cgroup (a container's, gone by
            # now): a process killed while this cgroup reached its limit died of it
            hit.append("memory")
        if _counter(self._pids / "pids.events", "max"):
            hit.append("processes")
        return hit

    def close(self) -> None:
        """Kill whatever of the job is left (a process that left its group), then remove
        the cgroup."""
        deadline = time.monotonic() + EMPTY_SECONDS
        for folder in self.folders:
            while True:
                pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    _remove(folder)
                    break
                except OSError:  # busy: its processes are dying
                    if time.monotonic() > deadline:
                        logger.warning("cgroup %s: processes left, not removed", folder)
                        break
                    time.sleep(0.01)
        if self.version == 1:  # the folders podman made beside ours, in other hierarchies
            for point, _ in _all_mounts():
                with contextlib.suppress(OSError):
                    _remove(point / self.path.lstrip("/"))


def _remove(folder: Path) -> None:
    """A cgroup and the empty ones in it (podman's monitor leaves `conmon`)."""
    for below, _, _ in os.walk(folder, topdown=False):
        if below != str(folder):
            Path(below).rmdir()
    folder.rmdir()


def _number(path: Path) -> int:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text())
    return 0


def _counter(path: Path, name: str) -> int:
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0
