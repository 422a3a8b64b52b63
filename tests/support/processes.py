"""Processes that exist only for tests (run by the real engine, in child processes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from process_api import Process
from process_api.processes.sections import RESOURCES


def hog(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """Holds `mebibytes` of memory at once."""
    blocks = [bytearray(1 << 20) for _ in range(int(inputs["mebibytes"]))]
    return {"held": len(blocks)}


def big(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """Returns `mebibytes` of text."""
    return {"text": "x" * (int(inputs["mebibytes"]) * 2**20)}


BIG = Process(
    id="test-big", version="1", title="Big results", description="Returns a lot.",
    inputs={"type": "object"}, outputs={"type": "object"}, entry="tests.support.processes:big",
)


def fail(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    raise RuntimeError(f"could not reach the provider with {inputs.get('token')}")


def environment(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """Which of the worker's secrets its process sees."""
    import os

    return {name: name in os.environ for name in (
        "DATABASE_URL", "API_DATABASE_URL", "WORKER_DATABASE_URL", "JOB_DATABASE_URL",
        "JOB_SECRETS_KEY")}


def database_role(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """The database role its process is given."""
    import os

    import psycopg

    with psycopg.connect(os.environ["JOB_DATABASE_URL"]) as conn:
        row = conn.execute("SELECT current_user").fetchone()
    return {"role": row[0] if row else None}


DATABASE_ROLE = Process(
    id="test-database-role", version="1", title="Database role",
    description="Reports its database role.", inputs={"type": "object"},
    outputs={"type": "object"}, entry="tests.support.processes:database_role", database=True,
)


ENVIRONMENT = Process(
    id="test-environment", version="1", title="Environment", description="Reports secrets.",
    inputs={"type": "object"}, outputs={"type": "object"},
    entry="tests.support.processes:environment",
)

HOG = Process(
    id="test-hog", version="1", title="Memory hog", description="Allocates memory.",
    inputs={"type": "object", "required": ["mebibytes"],
            "properties": {"mebibytes": {"type": "integer"}, "resources": RESOURCES}},
    outputs={"type": "object"}, entry="tests.support.processes:hog",
)

FAIL = Process(
    id="test-fail", version="1", title="Failure", description="Fails, naming its secret.",
    inputs={"type": "object", "properties": {
        "token": {"type": "string", "writeOnly": True}}},
    outputs={"type": "object"}, entry="tests.support.processes:fail", sync=True,
)

def miscount(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"count": "many"}


MISCOUNT = Process(
    id="test-miscount", version="1", title="Miscount",
    description="Returns results its outputs schema refuses.", inputs={"type": "object"},
    outputs={"type": "object", "properties": {"count": {"type": "integer"}}},
    entry="tests.support.processes:miscount",
)

def probe(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """What its process may do: read `read` (paths), see `pids` in /proc, connect to
    `connect` ([host, port] pairs), write `write` (paths); each "ok" or the error's name.
    And where it works."""
    import os
    import socket

    def attempt(action: Any) -> str:
        try:
            action()
            return "ok"
        except OSError as e:
            return type(e).__name__

    def read(path: str) -> None:
        with open(path, "rb") as f:
            f.read()

    def write(path: str) -> None:
        with open(path, "wb") as f:
            f.write(b"x")

    def connect(host: str, port: int) -> None:
        socket.create_connection((host, port), timeout=2).close()

    return {
        "read": {p: attempt(lambda p=p: read(p)) for p in inputs.get("read", [])},
        "pids": {str(p): attempt(lambda p=p: read(f"/proc/{p}/environ"))
                 for p in inputs.get("pids", [])},
        "connect": {f"{h}:{p}": attempt(lambda h=h, p=p: connect(h, p))
                    for h, p in inputs.get("connect", [])},
        "write": {p: attempt(lambda p=p: write(p)) for p in inputs.get("write", [])},
        "cwd": os.getcwd(), "writable_cwd": attempt(lambda: write("mine.txt")),
    }


PROBE = Process(
    id="test-probe", version="1", title="Probe", description="Reports what it may do.",
    inputs={"type": "object"}, outputs={"type": "object"},
    entry="tests.support.processes:probe",
)
PROBE_NETWORK = Process(
    id="test-probe-network", version="1", title="Probe with network",
    description="Reports what it may do, declaring it needs the network.",
    inputs={"type": "object"}, outputs={"type": "object"},
    entry="tests.support.processes:probe", network=True,
)

TEST_PROCESSES = [HOG, BIG, FAIL, ENVIRONMENT, DATABASE_ROLE, MISCOUNT, PROBE, PROBE_NETWORK]

#: Processes defined as data, for tests (beside the shipped ones).
TEST_DEFINITIONS = Path(__file__).with_name("definitions")


def nap(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    import time

    time.sleep(float(inputs.get("seconds", 3)))
    return {"napped": True}


NAP = Process(
    id="test-nap", version="1", title="Nap, retried", description="Sleeps; retried once "
    "when its worker dies.", inputs={"type": "object"}, outputs={"type": "object"},
    entry="tests.support.processes:nap", retries=1, sync=True,
)

TEST_PROCESSES.append(NAP)


def chatty(inputs: dict[str, Any], context: Any) -> dict[str, Any]:
    """Writes its secret, a child process's line, `flood` characters (or its secret
    `straddle`-ing the cut of a long line), then waits `seconds`."""
    import subprocess
    import sys
    import time

    print(f"token is {inputs.get('token')}", flush=True)
    subprocess.run(["sh", "-c", "echo from a child process >&2"], check=True)
    if inputs.get("flood"):
        sys.stderr.write("x" * int(inputs["flood"]) + "\n")
    if inputs.get("straddle"):  # its token across the relay's cut of a long line
        sys.stderr.write("x" * (16384 - 4) + str(inputs["token"])[:4])
        sys.stderr.flush()
        time.sleep(0.5)
        sys.stderr.write(str(inputs["token"])[4:] + "\n")
    print("waiting", flush=True)
    time.sleep(float(inputs.get("seconds", 0)))
    print("the end")
    return {}


CHATTY = Process(
    id="test-chatty", version="1", title="Chatty", description="Writes to its log.",
    inputs={"type": "object", "properties": {
        "token": {"type": "string", "writeOnly": True}, "flood": {"type": "integer"},
        "straddle": {"type": "boolean"}, "seconds": {"type": "number"}}},
    outputs={"type": "object"}, entry="tests.support.processes:chatty",
)

TEST_PROCESSES.append(CHATTY)
