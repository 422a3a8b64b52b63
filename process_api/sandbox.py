"""The jobs' sandbox: Debian's bubblewrap around a worker's fork server, so that every job's
process sees a read-only system (the OS, Python, the processes' code), a private `/tmp`,
its own process tree (not the worker's `/proc`, whose environment holds the service's
secrets), none of the folders it hides (the data dir: the database's password files, the
issuer's key, the job secrets key), and no network unless its process declares it needs
one (`Process.network`, or `database`).

What is visible is listed (an allow-list), not what is hidden: a path nobody thought of
stays out.
"""

from __future__ import annotations

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


def code_roots(modules: Iterable[str]) -> set[Path]:
    """The folders Python loads these modules (and itself) from."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
    roots |= {Path(p) for p in sys.path if p and Path(p).is_dir()}
    roots.add(Path.cwd())  # `python -m` puts it first on sys.path
    for module in modules:
        spec = importlib.util.find_spec(module.partition(".")[0])
        if spec is None:
            continue
        for location in spec.submodule_search_locations or [spec.origin or ""]:
            if location:
                roots.add(Path(location).resolve().parent)
    return {root.resolve() for root in roots if root.exists()}


@dataclass(frozen=True)
class Sandbox:
    hidden: tuple[Path, ...] = ()  # folders no job sees, even inside a visible one
    program: str = "bwrap"

    @classmethod
    def available(cls, hidden: Iterable[Path]) -> Sandbox:
        """bubblewrap, found on this machine; else SandboxError saying how to get it."""
        program = shutil.which("bwrap")
        if program is None:
            raise SandboxError("bubblewrap (`bwrap`) is not installed: `apt-get install "
                               "bubblewrap` (make run and make test install it), or set "
                               "JOB_SANDBOX=none where jobs are isolated otherwise.")
        return cls(tuple(Path(h).resolve() for h in hidden), program)

    def wrap(self, command: list[str], writable: Iterable[Path], network: bool,
             modules: Iterable[str] = ()) -> list[str]:
        """`command` run inside the sandbox; `writable` folders stay writable."""
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
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        for root in sorted(code_roots(modules)):
            if not any(root.is_relative_to(s) for s in SYSTEM):
                args += ["--ro-bind", str(root), str(root)]
        for folder in self.hidden:
            if folder.is_dir():
                args += ["--tmpfs", str(folder)]
        for folder in writable:
            args += ["--bind", str(folder), str(folder)]
        # the same working directory (read-only): `python -m` imports from it; each job
        # gets a folder of its own in the private /tmp (`child.run`)
        return [*args, "--chdir", str(Path.cwd()), "--setenv", "HOME", "/tmp", "--", *command]
