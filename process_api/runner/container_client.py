"""Asks the job's worker for one tool's container (`container_broker`): cwltool's
`--user-space-docker-cmd`, run in the job's sandbox as `CLIENT run [options] IMAGE
COMMAND...`. It passes its stdin, stdout and stderr (the tool's, as cwltool opened them)
and exits with the tool's status; the worker's message, when there is one, goes to its
stderr (the job's log). It imports nothing else of the service: every tool's container
starts a Python for it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

#: The variable naming the worker's socket, in the job's environment.
SOCKET_VARIABLE = "GEOCATALOG_CONTAINERS"
#: What a request that cannot run exits with (as `podman run` itself: 125).
REFUSED = 125

#: The client as a program cwltool starts (written into the job's folder).
SCRIPT = """#!{python}
import sys
from process_api.runner.container_client import main
sys.exit(main(sys.argv[1:]))
"""


def write_script(folder: Path) -> Path:
    """The client as an executable in `folder`, run by this Python."""
    path = folder / "container"
    path.write_text(SCRIPT.format(python=sys.executable))
    path.chmod(0o700)
    return path


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "run":
        print("container: only `run` is offered here", file=sys.stderr)
        return REFUSED
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        conn.connect(os.environ[SOCKET_VARIABLE])
        socket.send_fds(conn, [json.dumps(argv[1:]).encode()], [0, 1, 2])
        reply = json.loads(conn.recv(65536) or b"{}")
    if reply.get("message"):
        print(reply["message"], file=sys.stderr, flush=True)
    return int(reply.get("status", REFUSED))
