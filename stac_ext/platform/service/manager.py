"""A worker process of `geocatalog serve` ends with its manager (uvicorn's, which restarts
a worker that dies): a worker left alone would serve with nobody to restart it, and hold
the port that the service, restarted by its own supervisor (systemd, compose), needs."""

from __future__ import annotations

import os
import signal

#: Where `serve` tells its workers the manager's pid.
MANAGER_PID = "GEOCATALOG_MANAGER_PID"


def end_with_manager() -> None:
    """In a worker of `serve`: SIGTERM (a graceful stop) when the manager dies, or at once
    if it died already. Elsewhere (tests, another server): nothing."""
    manager = os.environ.get(MANAGER_PID)
    if not manager:
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != int(manager):  # it died before the line above
        os.kill(os.getpid(), signal.SIGTERM)
