"""A job's start on a connection to its process (a fork server's, or a sandbox's own):
the worker sends the run's request, the job's process answers `{"pid": N}` and waits; the
worker learns that process's pid in its own namespace from the kernel (the credentials of
the answer: N is the sandbox's pid), may put it in the job's cgroup before it starts
anything, then writes `go` (`Handle.release`)."""

from __future__ import annotations

import asyncio
import socket
import struct

from process_api.runner.executor import Handle, JobRun
from process_api.runner.protocol import MAX_LINE_BYTES, readable

#: `struct ucred` (pid, uid, gid) of SCM_CREDENTIALS.
_UCRED = struct.Struct("3i")


async def handshake(sock: socket.socket, run: JobRun) -> Handle:
    """Send the run's request on a connection to a fork server; the first line of the job's
    process, with that process's pid as the kernel translates it for this namespace."""
    request = run.request
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # before it can answer
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_sendall(sock, request)
    first, pid = b"", None
    while not first.endswith(b"\n"):
        await readable(sock)
        try:
            data, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(_UCRED.size))
        except BlockingIOError:
            continue
        if not data:  # refused, or ended before it answered
            break
        first += data
        for level, kind, payload in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS) and pid is None:
                pid = _UCRED.unpack(payload[:_UCRED.size])[0]
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE_BYTES)
    return Handle(run, reader, writer, first, pid)
