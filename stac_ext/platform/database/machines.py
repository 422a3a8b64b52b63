"""The machines of a cluster on this host: each member's Patroni, run as the server's user
(as PostgreSQL requires when we are root) under a process of ours that reaps whatever dies
beneath it (PID 1 of a container may not), and the processes found and signalled by pid.

Of ours, imports only the embedded cluster's error.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import urlopen

from stac_ext.platform.database.cluster import ClusterError

PR_SET_CHILD_SUBREAPER = 36
SERVER_USER = "postgres"


def machine(config: str, pid_file: str) -> None:
    """One member's machine: its Patroni (as the server's user when we are root), and every
    process orphaned beneath it reaped, until none is left. SIGTERM and SIGINT go to
    Patroni, which stops its PostgreSQL."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    user = {}
    if os.geteuid() == 0:
        server = pwd.getpwnam(SERVER_USER)
        user = {"user": server.pw_uid, "group": server.pw_gid, "extra_groups": []}
    # Patroni is Debian's, on the system's Python: nothing of ours on its path
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("PYTHON") and name != "VIRTUAL_ENV"}
    environment["HOME"] = str(Path(config).parent)
    patroni = subprocess.Popen(["patroni", config], env=environment,  # type: ignore[call-overload]
                               **user)
    Path(pid_file).write_text(str(patroni.pid))
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: signalled(patroni.pid, signum))
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def run_as_server_user(command: list[str]) -> str:
    """`command`'s output, run as the server's user when we are root."""
    if os.geteuid() == 0:
        command = ["runuser", "-u", SERVER_USER, "--", *command]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ClusterError(f"{command[-1]} failed: {result.stderr.strip() or result.stdout}")
    return result.stdout


def owned_by_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        user = pwd.getpwnam(SERVER_USER)
        os.chown(path, user.pw_uid, user.pw_gid)


def check_reachable(folder: Path) -> None:
    """The server's user can reach `folder`, or ClusterError saying so."""
    if os.geteuid() == 0 and subprocess.run(
            ["runuser", "-u", SERVER_USER, "--", "test", "-x", str(folder)],
            check=False).returncode != 0:
        raise ClusterError(f"the {SERVER_USER} user cannot reach {folder}: choose a folder "
                           "whose parent folders are world-executable")


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def get_json(url: str) -> Any:
    """What `url` answers, as JSON; None when it does not."""
    try:
        with urlopen(url, timeout=5) as answer:
            return json.loads(answer.read())
    except (URLError, OSError, ValueError):
        return None


def until(condition: Callable[[], object], seconds: float, failure: str) -> None:
    """Return once `condition` holds; ClusterError(`failure`) after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise ClusterError(failure)
        time.sleep(0.2)


def alive(pid: int | None) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def signalled(pid: int, signum: int) -> None:
    """`signum` sent to `pid`, if it still exists."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def killed_with_its_group(pid: int) -> None:
    """SIGKILL to the process group of `pid` (a postmaster and its children)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(os.getpgid(pid), signal.SIGKILL)


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
