"""No process of a job outlives what started it: the kernel kills it when its parent dies."""

from __future__ import annotations


def die_with_parent() -> None:
    """SIGKILL the calling process when its parent process dies (Linux' PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
