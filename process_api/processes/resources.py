"""A job's `resources`: Kubernetes quantities, checked against the operator's ceilings
(`Ceilings`) and the worker, and enforced.

Every job has a memory limit (`limits.memory`, else the operator's default), a number of
processes, a size of its sandbox's `/tmp` and a wall time; the memory becomes the limit of
the job's control group (`cgroups`: every process it starts, its `/tmp` writes included)
and its process's RLIMIT_DATA; `limits.cpu` the number of cores it may run on (CPU
affinity, at least one; a fraction rounds up). `requests` must fit what this worker offers.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

#: Kubernetes quantities, as the `resources` schema section declares them; digits bounded
#: (a quantity of 400 nines overflowed the engine and left its job `running`).
CPU_PATTERN = r"^([0-9]{1,6}(\.[0-9]{1,3})?|[0-9]{1,9}m)$"
MEMORY_PATTERN = r"^([0-9]{1,15}(?:\.[0-9]{1,6})?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$"
#: The most a job may ask for, whatever the worker: beyond any machine's size.
MAX_CPU = 1024
MAX_MEMORY = 2**50  # 1 Pi
_MEMORY = re.compile(MEMORY_PATTERN)
_FACTORS = {None: 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


@dataclass(frozen=True)
class Ceilings:
    """The operator's bounds on every job: what a job's memory is when it asks none, the
    most it may ask (above: a 400), and what no job passes (processes and threads at once,
    its sandbox's `/tmp`, its run's wall time)."""

    memory: int = 2 * 2**30
    memory_max: int = 16 * 2**30
    cpu_max: float = MAX_CPU
    processes: int = 512
    tmp_bytes: int = 2**30
    wall_seconds: float = 86400.0

    def describe(self) -> str:
        return (f"memory {quantity(self.memory)} by default, at most "
                f"{quantity(self.memory_max)}; {self.processes} processes; /tmp "
                f"{quantity(self.tmp_bytes)}; wall time {self.wall_seconds:g} s")


class ResourceError(ValueError):
    """The job asks for more than this worker can give."""


def parse_cpu(quantity: str) -> float:
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def parse_memory(quantity: str) -> int:
    match = _MEMORY.match(quantity)
    if not match:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    return int(float(match.group(1)) * _FACTORS[match.group(2)])


def quantity(size: int) -> str:
    """`size` bytes as the shortest exact Kubernetes quantity (`256Mi`, `1500`)."""
    for suffix in ("Ti", "Gi", "Mi", "Ki"):
        if size and size % _FACTORS[suffix] == 0:
            return f"{size // _FACTORS[suffix]}{suffix}"
    return str(size)


def quantity_problems(resources: dict[str, Any] | None, ceilings: Ceilings = Ceilings()
                      ) -> list[str]:
    """What is out of bounds in a job's `resources` (shaped by the schema), by path: each
    quantity more than nothing, at most MAX_CPU cores and the operator's most memory, a
    request at most its limit."""
    resources = resources or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    most_memory = min(MAX_MEMORY, ceilings.memory_max)
    most_cpu = min(MAX_CPU, ceilings.cpu_max)
    problems = []
    for name, parse, most, shown in (
            ("cpu", parse_cpu, most_cpu, f"{most_cpu:g} cores (JOB_CPU_MAX)"),
            ("memory", parse_memory, most_memory, f"{quantity(most_memory)} (JOB_MEMORY_MAX)")):
        values = {section: parse(quantities[name]) for section, quantities in
                  (("limits", limits), ("requests", requests)) if name in quantities}
        problems += [f"resources/{section}/{name}: at most {shown}"
                     for section, value in values.items() if value > most]
        problems += [f"resources/{section}/{name}: more than 0"
                     for section, value in values.items() if value <= 0]
        if values.get("requests", 0) > values.get("limits", math.inf):
            problems.append(f"resources/requests/{name}: more than resources/limits/{name}")
    return problems


def resource_problems(resources: object, ceilings: Ceilings = Ceilings()) -> list[str]:
    """`quantity_problems` of a job's inputs' `resources`, whatever their shape."""
    if not resources:
        return []
    try:
        return quantity_problems(resources, ceilings)  # type: ignore[arg-type]
    except (ValueError, TypeError, AttributeError, KeyError):
        return ["resources: limits and requests of Kubernetes quantities (cpu, memory)"]


def worker_offer() -> tuple[int, int]:
    """(cores, bytes of memory) this machine gives a job."""
    cores = len(os.sched_getaffinity(0))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return cores, memory


@dataclass(frozen=True)
class Plan:
    cores: list[int] | None  # this worker's cores it runs on (None: any)
    memory_bytes: int
    processes: int
    tmp_bytes: int
    wall_seconds: float
    memory_asked: bool  # the job's own limits.memory (else the operator's JOB_MEMORY)
    record: dict[str, Any]
    cpus: int = 1  # the cores a scheduler gives it: its cpu limit, else request, rounded up

    def child_limits(self) -> dict[str, Any]:
        """What `process_api.runner.child` applies before it runs the process."""
        return {"cores": self.cores, "memory_bytes": self.memory_bytes,
                "processes": self.processes}


def plan(resources: dict[str, Any] | None, ceilings: Ceilings = Ceilings(),
         local: bool = True) -> Plan:
    """What to enforce for a job's `resources` within the operator's `ceilings`;
    ResourceError when requests do not fit this worker (`local`: the job runs here; else
    its scheduler checks them against its nodes), or the job asks beyond a ceiling (a job
    submitted before the operator lowered it)."""
    if problems := quantity_problems(resources, ceilings):
        raise ResourceError("; ".join(problems))
    resources = resources or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    asked_cpu = parse_cpu(limits.get("cpu") or requests.get("cpu") or "1")
    # a scheduler checks requests against its nodes; the ceilings bound them already
    cores_offered, memory_offered = worker_offer() if local else (MAX_CPU, MAX_MEMORY)
    if "cpu" in requests and parse_cpu(requests["cpu"]) > cores_offered:
        raise ResourceError(f"requests.cpu {requests['cpu']} is more than this worker's "
                            f"{cores_offered} cores")
    if "memory" in requests and parse_memory(requests["memory"]) > memory_offered:
        raise ResourceError(f"requests.memory {requests['memory']} is more than this "
                            f"worker's {memory_offered // 2**20}Mi")
    cores = None
    if "cpu" in limits and local:
        count = max(1, min(cores_offered, math.ceil(parse_cpu(limits["cpu"]))))
        cores = sorted(os.sched_getaffinity(0))[:count]
    asked = "memory" in limits
    memory = parse_memory(limits["memory"]) if asked else \
        max(ceilings.memory, parse_memory(requests.get("memory", "0")))
    memory = min(memory, ceilings.memory_max)
    cpus = max(1, math.ceil(asked_cpu))
    record: dict[str, Any] = {
        "limits": limits, "requests": requests,
        "applied": {"cores": len(cores) if cores else None if local else cpus,
                    "memoryBytes": memory, "processes": ceilings.processes,
                    "tmpBytes": ceilings.tmp_bytes, "wallSeconds": ceilings.wall_seconds}}
    if local:
        record["worker"] = {"cores": cores_offered, "memoryBytes": memory_offered}
    return Plan(cores=cores, memory_bytes=memory, processes=ceilings.processes,
                tmp_bytes=ceilings.tmp_bytes, wall_seconds=ceilings.wall_seconds,
                memory_asked=asked, record=record, cpus=cpus)
