"""What a job's processes keep of the service: nothing. Its descriptors are closed to them,
its environment is replaced by an allow-list, and the job's supervising processes (the
fork server, the job's own process before it runs another program) are not dumpable, so
that no `ptrace`, `pidfd_getfd` or read of `/proc/<pid>/{environ,mem,fd}` from a job
reaches them."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any

#: The variables of the worker's environment a job's processes get, when the operator
#: names none: a program's basics and the outbound policy (`outbound`), never a secret.
JOB_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ", "OUTBOUND_ALLOW", "SSL_CERT_FILE",
                   "SSL_CERT_DIR")


def job_environment(environ: Mapping[str, str], names: Iterable[str] = JOB_ENVIRONMENT,
                    home: str = "/tmp") -> dict[str, str]:
    """The environment every process of a job starts with: `names` taken from `environ`
    where set, and `HOME`."""
    return {**{name: environ[name] for name in names if name in environ}, "HOME": home}


def close_on_exec(keep: Collection[int] = ()) -> None:
    """Mark every descriptor of this process but 0-2 and `keep` close-on-exec: a program it
    starts inherits none (a socket received from a parent process, e.g. uvicorn's listening
    socket in a worker of its manager, comes without the flag)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # the listing's own, closed by now
                os.set_inheritable(fd, False)


async def spawn(command: list[str], environment: Mapping[str, str],
                pass_fds: tuple[int, ...] = (), **streams: Any) -> asyncio.subprocess.Process:
    """`command` with `environment` only, inheriting no descriptor of this process but
    `pass_fds` (an event loop may not close the others: uvloop does not); stdin is
    /dev/null unless `streams` say."""
    close_on_exec(keep=pass_fds)
    return await asyncio.create_subprocess_exec(
        *command, env=dict(environment), close_fds=True, pass_fds=pass_fds,
        **{"stdin": asyncio.subprocess.DEVNULL, **streams})


def close_inherited(keep: Collection[int] = ()) -> None:
    """Close every descriptor but 0-2 and `keep`, whatever its flags."""
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def not_dumpable() -> None:
    """This process, and the processes it forks until they run another program, cannot be
    traced or have their descriptors, memory or environment read by processes of the same
    user without privileges (Linux' PR_SET_DUMPABLE 0)."""
    import ctypes

    pr_set_dumpable = 4
    if ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_dumpable, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
