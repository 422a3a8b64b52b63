"""A hostile pass over jobs' data and quotas (`make fuzz`): jobs reading sources that lie
about their size (over HTTP and as S3), trickle, stall or answer a web page, each of which
must fail in words (never succeed, never take the worker with it); and crowds of
concurrent submissions beyond the caller's queued quota, of which exactly the quota may be
accepted. The service must run with `JOB_STAGE_BYTES=1Mi`, a short `JOB_WALL_SECONDS` and
`JOB_STAGE_STALL_SECONDS`, `JOB_USER_QUEUED=QUOTA` and `OUTBOUND_ALLOW` naming loopback."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx

from tests.support.cwl import python_tool
from tests.support.lying_sources import lying_sources

#: The queued quota the service runs with.
QUOTA = 5
SOURCES = ["/unannounced/a.nc", "/understated/b.nc", "/lying/c.nc", "/trickle/d.nc",
           "/stall/e.nc", "/page/f.nc"]


def _ended(client: httpx.Client, url: str, seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        job = client.get(url).json()
        if job["status"] in ("successful", "failed", "dismissed") or \
                time.monotonic() > deadline:
            return job
        time.sleep(0.5)


async def _crowd(base: str, token: str, n: int) -> list[int]:
    """`n` submissions at once (each accepted job dismissed once all have answered)."""
    async with httpx.AsyncClient(base_url=base, timeout=120, headers={
            "Authorization": f"Bearer {token}"}) as client:
        answers = await asyncio.gather(*(client.post(
            "/processes/processes/sleep/execution", json={"processInputs": {"seconds": 600}})
            for _ in range(n)))
        for r in answers:
            if r.status_code == 201:
                await client.delete(r.headers["Location"])
    return [r.status_code for r in answers]


def sources_pass(base: str, token: str, crowd_token: str) -> list[str]:
    """The problems found: `token` may deploy processes; `crowd_token` is a user with no
    job yet."""
    problems: list[str] = []
    process = f"hostile-size-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=base, timeout=60, headers={
            "Authorization": f"Bearer {token}"}) as client, lying_sources() as sources:
        r = client.post("/processes/processes", headers={
            "Content-Type": "application/cwl+yaml"}, content=python_tool(
                process, "import os, sys\nprint(os.path.getsize(sys.argv[1]))",
                {"data": "File"}, {"size": "stdout"}))
        if r.status_code != 201:
            return [f"deploying the size process: {r.status_code} {r.text[:200]}"]
        for path in SOURCES:
            data = {"href": f"s3://{path.removeprefix('/')}"} if path.startswith("/lying/") \
                else {"href": sources.url(path)}
            s3 = {"s3": {"endpoint": sources.base}} if path.startswith("/lying/") else {}
            r = client.post(f"/processes/processes/{process}/execution",
                            json={"processInputs": {"data": data, **s3}})
            if r.status_code != 201:
                problems.append(f"{path}: submission answered {r.status_code}")
                continue
            job = _ended(client, r.headers["Location"])
            if job["status"] != "failed" or not job.get("message"):
                problems.append(f"{path}: the job ended {job['status']}: {job.get('message')}")
            sent = sum(s.bytes for s in sources.sent_to(path))
            if sent > 16 * 2**20:
                problems.append(f"{path}: the worker read {sent} bytes of a 1Mi limit")
        if client.get("/healthz").status_code != 200:
            problems.append("the service stopped answering")
    statuses = asyncio.run(_crowd(base, crowd_token, 10 * QUOTA))
    if sorted(statuses) != [201] * QUOTA + [429] * (9 * QUOTA):
        problems.append(f"{10 * QUOTA} concurrent submissions against a quota of {QUOTA}: "
                        f"{sorted(statuses)}")
    return problems
