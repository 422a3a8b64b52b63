"""The process plugin interface: what a process declares, and how processes are found.

A process is a `Process` value whose `entry` names a function `run(inputs, context)`
(importable as `module:function`), run in a child OS process of a worker. Built-ins are
listed here; a deployment adds its own through the `geocatalog.processes` entry point
group (each entry point loads a `Process`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol

ENTRY_POINT_GROUP = "geocatalog.processes"
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


class Context(Protocol):
    """What a running process knows of its job, and may tell it."""

    job_id: str | None
    owner: str  # the caller: the process runs as them
    project: str | None  # the caller's group project, or None (personal)
    service_url: str | None  # the service root the job was submitted through

    def progress(self, percent: int, message: str | None = None) -> None: ...


RunFunction = Callable[[dict[str, Any], Context], dict[str, Any]]


@dataclass(frozen=True)
class Process:
    """One computation the service offers."""

    id: str  # may carry a version suffix, e.g. `publish-dataset@1.2`
    title: str
    description: str
    version: str
    inputs: Mapping[str, Any]  # JSON Schema of `processInputs`
    outputs: Mapping[str, Any]  # JSON Schema of the results
    entry: str  # `module:function` of the run function
    sync_execute: bool = False
    retries: int = 0  # how often a job whose worker died is started again
    keywords: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"process id {self.id!r}: use [A-Za-z0-9_.-]")
        if ":" not in self.entry:
            raise ValueError(f"process {self.id}: entry must be 'module:function'")

    @property
    def job_control_options(self) -> list[str]:
        return ["async-execute", "dismiss"] + (["sync-execute"] if self.sync_execute else [])

    def load(self) -> RunFunction:
        module, _, name = self.entry.partition(":")
        return getattr(importlib.import_module(module), name)


class Registry:
    """The processes of this deployment, by id."""

    def __init__(self, processes: Iterable[Process]) -> None:
        self._by_id: dict[str, Process] = {}
        for process in processes:
            if process.id in self._by_id:
                raise ValueError(f"two processes with the id {process.id}")
            self._by_id[process.id] = process

    @classmethod
    def discover(cls, extra: Iterable[Process] = ()) -> Registry:
        """Built-ins, entry points of the `geocatalog.processes` group, then `extra`."""
        from process_api.processes import BUILT_IN

        found = [ep.load() for ep in entry_points(group=ENTRY_POINT_GROUP)]
        return cls([*BUILT_IN, *found, *extra])

    def get(self, process_id: str) -> Process | None:
        return self._by_id.get(process_id)

    def __iter__(self):
        return iter(self._by_id.values())
