"""A deployed tool in a podman container against the same tool in the job's bubblewrap
sandbox: CDO computing a time mean of a field it makes (no input staged), deployed twice
(with and without `DockerRequirement`: the tests' CDO image), each job run synchronously,
the two alternated; p50 and p95 of the whole request reported, with the failures of each
(no target: the cost of a container per tool, written down).

    .venv/bin/python -m tests.bench.run --feature containers
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

import httpx

from tests.support.containers import cdo_image

#: CDO making a 1-degree field of 12 steps and its time mean: real work, a few ms of it.
TOOL = """\
cwlVersion: v1.2
class: CommandLineTool
id: {id}
{requirements}baseCommand: [cdo, -s, -f, nc, timmean, "-settaxis,2021-01-01,00:00:00,1mon",
              "-duplicate,12", "-const,1,r360x180", mean.nc]
inputs: []
outputs:
  mean:
    type: File
    outputBinding: {{glob: mean.nc}}
"""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def job_times(values: list[float], errors: int) -> dict[str, Any]:
    """Whole-request times in ms of the jobs that answered: how many, the failures, p50
    and p95."""
    return {"jobs": len(values), "errors": errors,
            "p50_ms": round(statistics.median(values), 1) if values else None,
            "p95_ms": round(_percentile(values, 0.95), 1) if values else None}


def container_jobs(base: str, token: str, rounds: int = 20) -> dict[str, Any]:
    """`rounds` jobs of each kind, alternated (ABBA), through the process API at `base`."""
    image = cdo_image()
    kinds = {"bubblewrap": "", "container": f'requirements:\n  DockerRequirement: '
                                             f'{{dockerImageId: "{image}"}}\n'}
    headers = {"Authorization": f"Bearer {token}"}
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    errors = dict.fromkeys(kinds, 0)
    with httpx.Client(base_url=base, headers=headers, timeout=600) as http:
        ids = {}
        for kind, requirements in kinds.items():
            ids[kind] = f"bench-cdo-{kind}-{uuid.uuid4().hex[:8]}"
            http.post("/processes", content=TOOL.format(id=ids[kind],
                                                        requirements=requirements),
                      headers={"Content-Type": "application/cwl+yaml"}).raise_for_status()
        order = [*kinds, *reversed(kinds)]
        for n in range(rounds * 2):
            kind = order[n % 4]
            started = time.perf_counter()
            answer = http.post(f"/processes/{ids[kind]}/execution", json={"inputs": {}},
                               headers={"Prefer": "respond-sync"})
            elapsed = time.perf_counter() - started
            if answer.status_code == 200 and "mean" in answer.json():
                times[kind].append(elapsed * 1000)
            else:
                errors[kind] += 1
        for process in ids.values():
            http.delete(f"/processes/{process}")
    found = {kind: job_times(values, errors[kind]) for kind, values in times.items()}
    if found["container"]["p50_ms"] and found["bubblewrap"]["p50_ms"]:
        found["ratio_p50"] = round(found["container"]["p50_ms"] /
                                   found["bubblewrap"]["p50_ms"], 2)
    return found
