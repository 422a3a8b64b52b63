"""The processes the service offers, as the API and the workers find them: its own (the
`Registry`: built-in, entry points, defined as data) and those users deployed (`Deployed`,
in the database, seen by every process at once)."""

from __future__ import annotations

from typing import Any

from process_api.deployment.deployed import Deployed
from process_api.jobs.store import Job
from process_api.processes.definition import Process
from process_api.processes.registry import Registry


class ProcessCatalog:
    def __init__(self, registry: Registry, deployed: Deployed) -> None:
        self.registry = registry
        self.deployed = deployed

    def builtin(self, process_id: str) -> Process | None:
        """One of the service's own processes (never replaced through the API)."""
        return self.registry.get(process_id)

    def every(self) -> list[tuple[Process, Any]]:
        """Every process: the service's (with no deployment) and the deployed ones (with
        theirs: who may see them is the caller's to decide)."""
        return [*((p, None) for p in self.registry),
                *((d.process, d) for d in self.deployed.all())]

    async def process_of(self, job: Job) -> Process | None:
        """The process a job runs: a deployed one at the revision it was submitted with."""
        if job.get("process_revision") is not None:
            found = await self.deployed.revision(job["process_id"], job["process_revision"])
            return found.process if found else None
        return self.registry.get(job["process_id"])
