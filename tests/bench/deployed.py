"""A deployed CWL `CommandLineTool` (echo) beside the built-in echo: each job run
synchronously through the process API, the two alternated (ABBA), p50 and p95 of the whole
request with each kind's failures. Jobs come one at a time with a pause between them (a
person running a tool), so the worker's sandboxes started ahead are ready
(`JOB_WARM_SANDBOXES`: a first job, not measured, starts them); then a burst of deployed
jobs back to back, which outruns them, says what a job costs when none is ready; and again
on a worker with none (`JOB_WARM_SANDBOXES=0`), where each job's sandbox starts with it.
Target: the deployed job's p50 at most 0.25 s and p95 at most 0.5 s.

    .venv/bin/python -m tests.bench.run --runs 0 --only geocatalog --no-cf --feature deployed
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx

from tests.bench.containers import job_times

#: A trivial tool: the cost measured is the job's, not the tool's.
TOOL = """\
cwlVersion: v1.2
class: CommandLineTool
id: {id}
baseCommand: echo
inputs:
  message: {{type: string, inputBinding: {{position: 1}}}}
stdout: said.txt
outputs:
  said: {{type: stdout}}
"""
#: Between two jobs one at a time: longer than a sandbox takes to start and load cwltool.
PAUSE_SECONDS = 1.5


def _timed(http: httpx.Client, process: str, done: str) -> float | None:
    """One sync job's whole request, in ms; None: it failed."""
    started = time.perf_counter()
    answer = http.post(f"/processes/{process}/execution", json={"inputs": {"message": "1"}},
                       headers={"Prefer": "respond-sync"})
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed if answer.status_code == 200 and done in answer.json() else None


def deployed_jobs(base: str, token: str, rounds: int = 30, burst: int = 20) -> dict[str, Any]:
    """`rounds` jobs of each kind, alternated, then `burst` deployed ones back to back,
    through the process API at `base` (`token` may deploy)."""
    headers = {"Authorization": f"Bearer {token}"}
    process = f"bench-echo-{uuid.uuid4().hex[:8]}"
    kinds = {"built-in echo": ("echo", "message"), "deployed CWL": (process, "said")}
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    errors = dict.fromkeys(kinds, 0)
    with httpx.Client(base_url=base, headers=headers, timeout=600) as http:
        http.post("/processes", content=TOOL.format(id=process),
                  headers={"Content-Type": "application/cwl+yaml"}).raise_for_status()
        try:
            _timed(http, *kinds["deployed CWL"])  # the worker's first: it starts the spares
            time.sleep(PAUSE_SECONDS)
            order = [*kinds, *reversed(kinds)]
            for n in range(rounds * 2):
                kind = order[n % 4]
                took = _timed(http, *kinds[kind])
                if took is None:
                    errors[kind] += 1
                else:
                    times[kind].append(took)
                time.sleep(PAUSE_SECONDS)
            burst_times = [_timed(http, *kinds["deployed CWL"]) for _ in range(burst)]
        finally:
            http.delete(f"/processes/{process}")
    found: dict[str, Any] = {kind: job_times(values, errors[kind])
                             for kind, values in times.items()}
    answered = [t for t in burst_times if t is not None]
    if burst_times:
        found["burst"] = job_times(answered, len(burst_times) - len(answered))
    found["pause_s"] = PAUSE_SECONDS
    return found
