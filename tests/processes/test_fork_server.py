"""The fork server of built-in processes' jobs: its socket's folder is the worker's own, and
a killed worker's folder is removed by the next fork server. Real processes."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from process_api.runner.fork_servers import FORK_SERVER_PREFIX, ForkServer
from process_api.runner.isolation import job_environment


async def test_a_killed_workers_folder_is_removed_by_the_next_fork_server() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = Path(tempfile.mkdtemp(prefix=f"{FORK_SERVER_PREFIX}{dead.pid}-"))
    alive = Path(tempfile.mkdtemp(prefix=f"{FORK_SERVER_PREFIX}{os.getppid()}-"))
    server = ForkServer(["json"], None, job_environment(os.environ))
    try:
        await server.start()
        assert (gone.exists(), alive.exists()) == (False, True)
        folder = server.socket_path.parent
        assert (folder.parent, folder.name.startswith(f"{FORK_SERVER_PREFIX}{os.getpid()}-"),
                server.socket_path.is_socket()) == (Path(tempfile.gettempdir()), True, True)
    finally:
        await server.stop()
        alive.rmdir()
    assert not folder.exists()
