"""The jobs' sandbox: Debian's bubblewrap around a worker's fork server, so that every job's
process sees a read-only system (the OS, Python, the processes' code: their packages, not
the checkout around them), a private `/tmp` of bounded size (the only writable place),
its own process tree (not the worker's `/proc`, whose environment holds the service's
secrets), none of the folders it hides (the data dir: the database's password files, the
issuer's key, the job secrets key), and no network unless its process declares it needs
one (`Process.network`, or `database`).

What is visible is listed (an allow-list), not what is hidden: a path nobody thought of
stays out.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: The system a process may use, read-only; symlinks of a merged /usr are kept as links.
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Files of /etc no job reads.
MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")


class SandboxError(RuntimeError):
    """The sandbox cannot be set up here; the message says what to do."""


def _site(path: Path) -> bool:
    """Python's own folders and installed packages (not a source checkout on the path)."""
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(path.is_relative_to(prefix) for prefix in prefixes) or \
        path.name in ("site-packages", "dist-packages")


def _outermost(paths: Iterable[Path]) -> list[Path]:
    found = sorted(set(paths))
    return [p for p in found if not any(p != q and p.is_relative_to(q) for q in found)]


#: Where a sandbox sees the code it runs: Python's folders under `python/N`, the service's
#: packages side by side in `code` (the working directory `python -m` imports from).
VIEW = Path("/opt/geocatalog")


@functools.cache
def code_views(modules: tuple[str, ...]) -> tuple[tuple[Path, Path], ...]:
    """What Python loads these modules (and itself) from, as `(host folder, where the
    sandbox sees it)`: its own folders and installed packages, and each module's top-level
    package (its folder, not the checkout around it: a source checkout holds more than
    code). No host path shows inside, so a job sees the same wherever the service lives.
    The same for every sandbox this process starts (a deployed job starts one)."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent}
    roots |= {Path(p) for p in sys.path if p and Path(p).is_dir()}
    sites = _outermost(root.resolve() for root in roots
                       if _site(root.resolve()) and root.exists() and not _system(root))
    packages: set[Path] = set()
    for module in modules:
        spec = importlib.util.find_spec(module.partition(".")[0])
        if spec is not None:
            packages |= {Path(location).resolve() for location in
                         spec.submodule_search_locations or [spec.origin or ""] if location}
    # the base Python keeps its path: a venv names it by that path
    base = Path(sys.base_prefix).resolve()
    views = [(base, base)] if base in sites else []
    views += [(site, VIEW / "python" / str(n))
              for n, site in enumerate(s for s in sites if s != base)]
    views += [(package, VIEW / "code" / package.name) for package in sorted(packages)
              if package.exists() and not _system(package)
              and not any(package.is_relative_to(site) for site in sites)]
    return tuple(views)


def _system(path: Path) -> bool:
    return any(path.resolve().is_relative_to(s) for s in SYSTEM)


def seen_as(path: str, views: Iterable[tuple[Path, Path]]) -> str:
    """A host path (the Python that runs) as the sandbox sees it."""
    # its folder resolved, not itself: a venv's python is a link out of the venv
    located = Path(path).parent.resolve() / Path(path).name
    for host, where in views:
        if located.is_relative_to(host):
            return str(where / located.relative_to(host))
    return path


#: The service's code every job's process imports: the process API and the platform it
#: imports (the access table: its top-level package's folder is what is mounted).
JOB_PACKAGES = ("process_api", "stac_ext.platform")

#: Where a job's sandbox sees its staged inputs (read-only).
INPUTS_MOUNT = "/inputs"
#: The most a sandbox's `/dev/shm` holds (shared memory: semaphores, small buffers).
SHM_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Sandbox:
    hidden: tuple[Path, ...] = ()  # folders no job sees, even inside a visible one
    program: str = "bwrap"
    tmp_bytes: int = 2**30  # the size of its /tmp (memory: a tmpfs)
    packages: tuple[str, ...] = JOB_PACKAGES  # the service's code, which jobs import

    @classmethod
    def available(cls, hidden: Iterable[Path], tmp_bytes: int = 2**30,
                  packages: Iterable[str] = JOB_PACKAGES) -> Sandbox:
        """bubblewrap, found on this machine; else SandboxError saying how to get it."""
        program = shutil.which("bwrap")
        if program is None:
            raise SandboxError("bubblewrap (`bwrap`) is not installed: `apt-get install "
                               "bubblewrap` (make run and make test install it), or set "
                               "JOB_SANDBOX=none where jobs are isolated otherwise.")
        return cls(tuple(Path(h).resolve() for h in hidden), program, tmp_bytes,
                   tuple(packages))

    def wrap(self, command: list[str], network: bool, modules: Iterable[str] = (),
             read_only: Iterable[tuple[Path, str]] = (), tmp: Path | None = None,
             environment: Mapping[str, str] | None = None) -> list[str]:
        """`command` run inside the sandbox, which can import `modules` and read each
        `(host folder, where)` of `read_only` (a job's staged inputs); `tmp`: a host folder
        as its `/tmp` (a job whose tools run in containers shares its folders with them),
        instead of a tmpfs; `environment`: variables it adds."""
        args = [self.program, "--unshare-user", "--unshare-pid", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL"]
        if not network:
            args.append("--unshare-net")
        for path in SYSTEM:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in MASKED:
            if os.path.exists(path):
                args += ["--ro-bind", "/dev/null", path]
        # every writable place is a tmpfs of bounded size: the root and /dev (tmpfs of
        # bubblewrap's, sized by nothing) are read-only
        args += ["--dev", "/dev", "--size", str(min(SHM_BYTES, self.tmp_bytes)),
                 "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc"]
        args += ["--size", str(self.tmp_bytes), "--tmpfs", "/tmp"] if tmp is None else \
            ["--bind", str(tmp), "/tmp"]
        args += ["--symlink", "/tmp", "/var/tmp"]
        for name, value in (environment or {}).items():
            args += ["--setenv", name, value]
        views = code_views(tuple(sorted({*self.packages, *modules})))
        for host, where in views:
            args += ["--ro-bind", str(host), str(where)]
        for folder in self.hidden:  # where a mounted folder holds one: an empty one
            for host, where in views:
                if folder.is_dir() and folder.is_relative_to(host):
                    empty = str(where / folder.relative_to(host))
                    args += ["--size", "4096", "--tmpfs", empty, "--remount-ro", empty]
        for given, mount in read_only:
            args += ["--ro-bind", str(given), mount]
        # the packages mounted above are importable from any working directory (each job
        # works in a folder of its own in the private /tmp, `child.run`)
        code = str(VIEW / "code")
        return [*args, "--dir", code, "--remount-ro", "/", "--chdir", code,
                "--setenv", "HOME", "/tmp", "--setenv", "PYTHONPATH", code,
                "--", seen_as(command[0], views), *command[1:]]
