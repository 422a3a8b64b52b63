"""No process of a job outlives what started it: the kernel kills it when its parent dies;
and the folders of a worker that died are removed by the next one."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def die_with_parent() -> None:
    """SIGKILL the calling process when its parent process dies (Linux' PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def forget_dead_folders(prefix: str, where: Path | None = None) -> None:
    """Remove the folders named `<prefix><worker pid>-...` of workers that are gone, in
    `where` (None: the temporary folder)."""
    for folder in (where or Path(tempfile.gettempdir())).glob(f"{prefix}*-*"):
        worker = folder.name[len(prefix):].partition("-")[0]
        if worker.isdigit() and int(worker) != os.getpid() and \
                not Path(f"/proc/{worker}").exists():
            shutil.rmtree(folder, ignore_errors=True)
