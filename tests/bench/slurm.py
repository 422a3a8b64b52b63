"""Jobs through Slurm against the local executor, on a one-node Slurm this run starts
(`tests.support.slurm`): the per-job overhead (built-in echo jobs run synchronously one at
a time, p50 and p95 of the whole request, with the failures of each), then 200 short jobs
submitted at once and the time until every one has ended (no target: the figures go to
docs/performance.md).

    .venv/bin/python -m tests.bench.run --feature slurm
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import httpx

from tests.bench import features, servers
from tests.bench.containers import job_times
from tests.support.slurm import start_slurm

#: Jobs a Slurm worker keeps in Slurm at once (it only waits for them).
SLURM_CONCURRENCY = 200


def _one_at_a_time(base: str, token: str, rounds: int) -> dict[str, Any]:
    """`rounds` echo jobs, each run synchronously, one after the other."""
    times: list[float] = []
    errors = 0
    headers = {"Authorization": f"Bearer {token}", "Prefer": "respond-sync"}
    with httpx.Client(base_url=base, headers=headers, timeout=600) as http:
        for n in range(rounds):
            started = time.perf_counter()
            answer = http.post("/processes/echo/execution",
                               json={"inputs": {"message": f"job {n}"}})
            elapsed = time.perf_counter() - started
            if answer.status_code == 200 and answer.json().get("message") == f"job {n}":
                times.append(elapsed * 1000)
            else:
                errors += 1
    return job_times(times, errors)


def slurm_jobs(dsn: str, data_dir: Path, token: str, port: int, rounds: int = 20,
               short: int = 200) -> dict[str, Any]:
    cluster = start_slurm()
    shared = data_dir / "slurm-shared"
    shared.mkdir(exist_ok=True)
    try:
        jobs = servers.job_service(dsn, data_dir, JOB_USER_RUNNING=str(SLURM_CONCURRENCY),
                                   JOB_USER_QUEUED=str(short * 2))
        on_slurm = dataclasses.replace(jobs, env={
            **jobs.env, **cluster.env, "JOB_EXECUTOR": "slurm", "SLURM_FOLDER": str(shared)})
        found: dict[str, Any] = {}
        with servers.serving(jobs, port) as running:
            base = running.url.removesuffix("/data") + "/processes"
            with servers.job_workers(jobs, 1, 4):
                found["local"] = _one_at_a_time(base, token, rounds)
            with servers.job_workers(on_slurm, 1, SLURM_CONCURRENCY):
                found["slurm"] = _one_at_a_time(base, token, rounds)
                many = features.echo_jobs(dsn, running, token, short, clients=20)
        found["short_jobs"] = {key: many[key] for key in (
            "submitted", "successful", "failed", "lost", "all_done_s")}
        if found["local"]["p50_ms"] and found["slurm"]["p50_ms"]:
            found["overhead_p50_ms"] = round(found["slurm"]["p50_ms"] -
                                             found["local"]["p50_ms"], 1)
        found["cluster"] = "one node, its 2 cores; SchedulerParameters=batch_sched_delay=0"
        return found
    finally:
        cluster.stop()
