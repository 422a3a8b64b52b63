"""The fork server of built-in processes' jobs: its socket's folder is the worker's own, and
a killed worker's folder is removed by the next fork server. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_what_a_fork_server_loads_is_kept_out_of_its_jobs_garbage_collection() -> None:
    """The modules loaded before the jobs are frozen (no job's collection scans or copies
    them), and every job runs with the cyclic collector on."""
    seen = subprocess.run(
        [sys.executable, "-c",
         "import gc, sys; from process_api.runner.forkserver import _preloaded; "
         "before = gc.get_freeze_count(); _preloaded(['json', 'no_such_module']); "
         "print(gc.isenabled(), before, gc.get_freeze_count() > 10_000, "
         "'json' in sys.modules)"],
        capture_output=True, text=True, check=True)
    assert seen.stdout == "True 0 True True\n"
