"""The fork server of a worker: a process that has imported the job runtime and every
process's module once, and forks one child per job. The child applies the job's limits and
runs it (`child.run`): a short job no longer pays for starting Python and its imports,
while every job keeps an OS process of its own (limits, kill on dismissal).

It starts with the jobs' environment (`fork_servers.ForkServers`), in the jobs' sandbox
when there is one, closes whatever descriptor it inherited but its own, is not dumpable
(nor are its children until they run another program: `isolation`), and dies with the
worker; its children die with it. One Unix-socket connection per job: the worker sends the
job's request as one JSON line (with `env`: what the job's process adds to that
environment, e.g. its database URL); it reads back `{"pid": N}` from the child (in the
sandbox's process tree), the child's protocol lines, then `{"returncode": N}` from the
server once the child is reaped (negative: killed by that signal). The child waits for the
worker's `go` (written once the worker has put it in the job's cgroup) before it runs the
job. The worker ends a job by writing `kill` on its connection, or by closing it: the child
then kills its process group (itself and what it started).

Each named module is imported before the first job (and its `warm()` called, if it has one:
what each of its runs would load first, loaded once).

    python -m process_api.runner.forkserver FD [module ...]
        (jobs' connections on a listening socket)
    python -m process_api.runner.forkserver --one FD [module ...]
        (one job, on an inherited socket)
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import selectors
import shutil
import signal
import socket
import sys
import threading
from typing import Any

from process_api.runner import child
from process_api.runner.isolation import close_inherited, not_dumpable
from process_api.runner.orphans import die_with_parent
from process_api.runner.protocol import Protocol

#: Children being run: their pidfd -> (pid, the connection their return code goes to).
_running: dict[int, tuple[int, socket.socket]] = {}


def _reaped(pidfd: int) -> None:
    """The child of `pidfd` ended: its return code to its connection, which then closes.
    (A pidfd per child, not a SIGCHLD handler: a handler can run between `fork` and the
    child's registration, reap a child that ended at once, and lose its return code.)"""
    pid, conn = _running.pop(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(child.job_folder(pid), ignore_errors=True)
    with contextlib.suppress(OSError):  # the worker went away
        conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)})
                     .encode() + b"\n")
    conn.close()


def _watched(conn: socket.socket) -> threading.Event:
    """In the child: a thread that sets the event it returns when the worker writes `go`,
    and kills the job's process group when it writes `kill` or hangs up (it stopped, or
    the job was dismissed)."""
    go = threading.Event()

    def watch() -> None:
        seen = b""
        with contextlib.suppress(OSError):
            while data := conn.recv(64):
                seen = (seen + data)[-8:]
                if b"kill" in seen:
                    break
                if b"go\n" in seen:
                    go.set()
        os.killpg(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
    return go


def _run_child(conn: socket.socket, request: dict[str, Any]) -> None:
    """In the forked child: never returns."""
    code = child.EXIT_ERROR
    try:
        die_with_parent()  # with the fork server, which dies with the worker
        os.setpgid(0, 0)  # a group of its own: what the job starts dies with it
        go = _watched(conn)
        os.environ.update(request.pop("env", None) or {})
        protocol = Protocol(conn.makefile("w"))
        protocol.send({"pid": os.getpid()})
        go.wait()  # the worker has put this process in the job's cgroup, if any
        sys.stdout = sys.stderr  # the process's prints: relayed as its log, never the protocol
        code = child.run(request, protocol)
    finally:
        os._exit(code)


def _started(listener: socket.socket, selector: selectors.BaseSelector) -> None:
    """Take one job's request and fork its child."""
    conn, _ = listener.accept()
    try:
        with conn.makefile("rb") as incoming:
            request = json.loads(incoming.readline())
    except (OSError, ValueError):
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        selector.close()
        listener.close()
        for pidfd, (_, other) in _running.items():  # other jobs': not this one's
            other.close()
            os.close(pidfd)
        _run_child(conn, request)
    pidfd = os.pidfd_open(pid)
    _running[pidfd] = (pid, conn)
    selector.register(pidfd, selectors.EVENT_READ)


def _isolated(keep: tuple[int, ...] = ()) -> None:
    """Before anything else: nothing of the worker kept, nothing of this process taken."""
    not_dumpable()
    close_inherited(keep)
    die_with_parent()


def _preloaded(modules: list[str]) -> None:
    """What every job would import (and load first): once, here. The objects loaded are
    not garbage: the cyclic collector neither scans them while they load (a sixth of the
    loading's CPU) nor in the forked jobs (which would copy their pages)."""
    gc.disable()
    try:
        for module in modules:
            with contextlib.suppress(Exception):  # a job of it fails then, saying why
                warm = getattr(importlib.import_module(module), "warm", None)
                if callable(warm):
                    warm()
        gc.freeze()
    finally:
        gc.enable()


def serve(fd: int, modules: list[str]) -> None:
    """Jobs' connections accepted on the inherited listening socket `fd`."""
    _isolated(keep=(fd,))
    _preloaded(modules)
    listener = socket.socket(fileno=fd)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                _started(listener, selector)
            else:  # a child's pidfd: it ended
                selector.unregister(key.fileobj)
                _reaped(key.fd)


def serve_one(fd: int, modules: list[str]) -> None:
    """One job on the inherited socket `fd`, as a connection of `serve` would run it: for a
    job in a sandbox of its own (`own_sandbox.OwnSandbox`, which may start it before the job
    comes: its request is read once `modules` are loaded)."""
    _isolated(keep=(fd,))
    _preloaded(modules)
    conn = socket.socket(fileno=fd)
    try:
        with conn.makefile("rb") as incoming:
            request = json.loads(incoming.readline())
    except (OSError, ValueError):
        return
    pid = os.fork()
    if pid == 0:
        _run_child(conn, request)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(child.job_folder(pid), ignore_errors=True)
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)})
                     .encode() + b"\n")
    conn.close()


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        serve_one(int(sys.argv[2]), sys.argv[3:])
    else:
        serve(int(sys.argv[1]), sys.argv[2:])
