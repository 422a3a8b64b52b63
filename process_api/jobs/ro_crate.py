"""A job's provenance as a Workflow Run RO-Crate (ro-crate-py): the job as a
`CreateAction` whose instrument is the process (a deployed process's CWL package, as a
`ComputationalWorkflow`), its objects the files it read, its results the files it wrote
(each with its checksum and size), its agent its owner. The same record as the PROV-JSON
document (`provenance`), for RO-Crate's tools; served at `/processes/jobs/{id}/prov` to
`Accept: application/ld+json`."""

from __future__ import annotations

import json
from typing import Any

from process_api.jobs.job_status import JobStatus
from process_api.jobs.status import iso
from process_api.jobs.store import Job

#: The media type of the crate's metadata document.
RO_CRATE = 'application/ld+json; profile="https://w3id.org/ro/crate"'
#: The profiles it conforms to: Process Run Crate and Workflow Run Crate.
PROFILES = ("https://w3id.org/ro/wfrun/process/0.5", "https://w3id.org/ro/wfrun/workflow/0.5")
_STATUS = {JobStatus.SUCCESSFUL: "http://schema.org/CompletedActionStatus",
           JobStatus.FAILED: "http://schema.org/FailedActionStatus"}


def ro_crate(job: Job, base: str) -> str:
    """The crate's `ro-crate-metadata.json` (`base`: the process API's root URL)."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.model.person import Person
    from rocrate.rocrate import ROCrate

    crate = ROCrate(gen_preview=False)
    process_url = f"{base}processes/{job['process_id']}"
    if job.get("process_revision") is not None:  # deployed: its CWL package
        instrument = crate.add_workflow(f"{process_url}/package", main=True, lang="cwl",
                                        fetch_remote=False, properties={
                                            "name": job["process_id"],
                                            "version": str(job["process_revision"])})
    else:
        instrument = crate.add(ContextEntity(crate, process_url, properties={
            "@type": "SoftwareApplication", "name": job["process_id"]}))
    recorded = job.get("provenance") or {}

    def files(records: list[dict[str, Any]]) -> list[Any]:
        return [crate.add_file(r["href"], fetch_remote=False, properties={
            "sha256": str(r.get("checksum", "")).removeprefix("1220"),
            "contentSize": int(r.get("size") or 0),
            **({"encodingFormat": r["type"]} if r.get("type") else {}),
            **({"isBasedOn": {"@id": r["item"]}} if r.get("item") else {})})
            for r in records]

    owner = crate.add(Person(crate, f"#{job['owner']}", properties={"name": job["owner"]}))
    action = crate.add_action(
        instrument, identifier=f"{base}jobs/{job['id']}",
        object=files(recorded.get("inputs") or []),
        result=files(recorded.get("outputs") or []),
        properties={"name": f"job {job['id']}", "startTime": iso(job.get("started")),
                    "endTime": iso(job.get("finished")),
                    "actionStatus": _STATUS.get(job["status"], "")})
    action["agent"] = owner
    crate.root_dataset["conformsTo"] = [{"@id": profile} for profile in PROFILES]
    crate.root_dataset["name"] = f"The run of job {job['id']}"
    return json.dumps(crate.metadata.generate())
