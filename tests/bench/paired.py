"""Two servers under the same load in alternating slices (A B B A A B ...), both running.

This VM's speed drifts by up to 2x within minutes, so two servers measured one after the
other, minutes apart, can differ by more than what separates them. Slices of a few seconds
in ABBA order put each pair of figures side by side in time; the median of the pairs'
ratios is what a comparison reports. Each slice also reads the server process's CPU time,
so the cost in the API itself is seen apart from the database's.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from typing import Any

from tests.bench import wrk
from tests.bench.servers import Running

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass(frozen=True)
class Slice:
    rps: float
    cpu_ms_per_request: float
    errors: int


def _slice(running: Running, requests: list[wrk.Request], seconds: float,
           connections: int, token: str) -> Slice:
    before = cpu_seconds(running.process.pid)
    # a tag of its own per slice: writes (POST item) make new ids in every slice
    figures = wrk.run(running.url, requests, seconds=seconds, connections=connections,
                      token=token, tag=f"paired{time.time_ns()}")
    used = cpu_seconds(running.process.pid) - before
    return Slice(figures.rps, 1000 * used / max(1, figures.requests), figures.errors)


def compare(a: Running, b: Running, requests: list[wrk.Request], *, pairs: int,
            seconds: float, connections: int, token: str = "") -> dict[str, Any]:
    """`a` against `b` in `pairs` ABBA-ordered pairs of slices: the median ratio of their
    req/s (a / b) and each one's median API CPU per request."""
    for running in (a, b):  # warm both first
        wrk.run(running.url, requests, seconds=2, connections=connections, token=token,
                tag=f"warm{time.time_ns()}")
    slices: dict[str, list[Slice]] = {"a": [], "b": []}
    for n in range(pairs):
        order = ("a", "b") if n % 2 == 0 else ("b", "a")
        for which in order:
            slices[which].append(_slice(a if which == "a" else b, requests, seconds,
                                        connections, token))
    ratios = [x.rps / y.rps for x, y in zip(slices["a"], slices["b"], strict=True)]
    return {
        "ratio": statistics.median(ratios),
        "ratios": [round(r, 3) for r in ratios],
        "rps": {k: statistics.median(s.rps for s in v) for k, v in slices.items()},
        "cpu_ms_per_request": {k: statistics.median(s.cpu_ms_per_request for s in v)
                               for k, v in slices.items()},
        "errors": {k: sum(s.errors for s in v) for k, v in slices.items()},
    }
