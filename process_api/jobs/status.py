"""A job's status info: the document `GET /jobs/{id}` answers and its callbacks send."""

from __future__ import annotations

from typing import Any

from process_api.jobs.job_status import FINISHED, JobStatus
from process_api.jobs.store import Job

JSON = "application/json"
#: The link relation of a job's provenance document (W3C PROV-AQ).
HAS_PROVENANCE = "http://www.w3.org/ns/prov#has_provenance"


def iso(value: Any) -> str | None:
    """A timestamp as RFC 3339 in UTC (`Z`), or None."""
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def status_info(job: Job, base: str) -> dict[str, Any]:
    url = f"{base}jobs/{job['id']}"
    links = [{"rel": "self", "type": JSON, "title": "Job status", "href": url},
             {"rel": "up", "type": JSON, "title": "Job list", "href": f"{base}jobs"},
             {"rel": "logs", "type": "text/plain", "title": "Output of the job's process",
              "href": f"{url}/logs"}]
    if job["status"] == JobStatus.SUCCESSFUL:
        links.append({"rel": "http://www.opengis.net/def/rel/ogc/1.0/results", "type": JSON,
                      "title": "Results", "href": f"{url}/results"})
    if job["status"] in FINISHED:
        links.append({"rel": HAS_PROVENANCE, "type": JSON, "href": f"{url}/prov",
                      "title": "What the job read and wrote (W3C PROV)"})
    info = {
        "jobID": str(job["id"]), "processID": job["process_id"], "type": "process",
        "status": job["status"], "message": job["message"], "progress": job["progress"],
        "created": iso(job["created"]), "started": iso(job["started"]),
        "finished": iso(job["finished"]), "updated": iso(job["updated"]),
        "owner": job["owner"], "project": job["project"], "links": links,
    }
    return {k: v for k, v in info.items() if v is not None}
