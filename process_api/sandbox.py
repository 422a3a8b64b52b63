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
from collections.abc import Iterable
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


@functools.cache
def code_roots(modules: tuple[str, ...]) -> frozenset[Path]:
    """What Python loads these modules (and itself) from: its own folders and installed
    packages, and each module's top-level package (its folder, not the checkout around it:
    a source checkout holds more than code). The same for every sandbox this process
    starts (a deployed job starts one)."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
    roots |= {Path(p).resolve() for p in sys.path if p and Path(p).is_dir()}
    roots = {root for root in roots if _site(root.resolve())}
    for module in modules:
        spec = importlib.util.find_spec(module.partition(".")[0])
        if spec is None:
            continue
        roots |= {Path(location) for location in
                  spec.submodule_search_locations or [spec.origin or ""] if location}
    return frozenset(root.resolve() for root in roots if root.exists())


#: Where a job's sandbox sees its staged inputs (read-only).
INPUTS_MOUNT = "/inputs"
#: The most a sandbox's `/dev/shm` holds (shared memory: semaphores, small buffers).
SHM_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Sandbox:
    hidden: tuple[Path, ...] = ()  # folders no job sees, even inside a visible one
    program: str = "bwrap"
    tmp_bytes: int = 2**30  # the size of its /tmp (memory: a tmpfs)
    packages: tuple[str, ...] = ("process_api",)  # the service's code, which jobs import

    @classmethod
    def available(cls, hidden: Iterable[Path], tmp_bytes: int = 2**30,
                  packages: Iterable[str] = ("process_api",)) -> Sandbox:
        """bubblewrap, found on this machine; else SandboxError saying how to get it."""
        program = shutil.which("bwrap")
        if program is None:
            raise SandboxError("bubblewrap (`bwrap`) is not installed: `apt-get install "
                               "bubblewrap` (make run and make test install it), or set "
                               "JOB_SANDBOX=none where jobs are isolated otherwise.")
        return cls(tuple(Path(h).resolve() for h in hidden), program, tmp_bytes,
                   tuple(packages))

    def wrap(self, command: list[str], network: bool, modules: Iterable[str] = (),
             read_only: Iterable[tuple[Path, str]] = ()) -> list[str]:
        """`command` run inside the sandbox, which can import `modules` and read each
        `(host folder, where)` of `read_only` (a job's staged inputs)."""
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
                 "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--proc", "/proc",
                 "--size", str(self.tmp_bytes), "--tmpfs", "/tmp",
                 "--symlink", "/tmp", "/var/tmp"]
        for root in sorted(code_roots(tuple(sorted({*self.packages, *modules})))):
            if not any(root.is_relative_to(s) for s in SYSTEM):
                args += ["--ro-bind", str(root), str(root)]
        for folder in self.hidden:  # where a mounted folder holds one: an empty one
            if folder.is_dir():
                args += ["--size", "4096", "--tmpfs", str(folder), "--remount-ro", str(folder)]
        for host, where in read_only:
            args += ["--ro-bind", str(host), where]
        # the same working directory (`python -m` imports from it: only the packages
        # mounted above are in it); each job gets a folder of its own in the private /tmp
        # (`child.run`)
        return [*args, "--dir", str(Path.cwd()), "--remount-ro", "/", "--chdir",
                str(Path.cwd()), "--setenv", "HOME", "/tmp", "--", *command]
