"""The processes of a deployment: the built-ins, those of the `geocatalog.processes` entry
point group (each entry point loads a `Process`), and those the composition root adds."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points

from process_api.processes.built_in import BUILT_IN
from process_api.processes.definition import Process

ENTRY_POINT_GROUP = "geocatalog.processes"


class Registry:
    """The processes of this deployment, by id."""

    def __init__(self, processes: Iterable[Process]) -> None:
        self._by_id: dict[str, Process] = {}
        self._by_folded_id: dict[str, Process] = {}  # ids are unique without regard to case
        for process in processes:
            if process.id.lower() in self._by_folded_id:
                raise ValueError(f"two processes with the id {process.id} (case aside)")
            self._by_id[process.id] = process
            self._by_folded_id[process.id.lower()] = process

    @classmethod
    def discover(cls, extra: Iterable[Process] = ()) -> Registry:
        """Built-ins, entry points of the `geocatalog.processes` group, then `extra`."""
        found = [ep.load() for ep in entry_points(group=ENTRY_POINT_GROUP)]
        return cls([*BUILT_IN, *found, *extra])

    def get(self, process_id: str) -> Process | None:
        return self._by_id.get(process_id)

    def twin(self, process_id: str) -> Process | None:
        """The process whose id is `process_id` but for case."""
        return self._by_folded_id.get(process_id.lower())

    def __iter__(self) -> Iterator[Process]:
        return iter(self._by_id.values())
