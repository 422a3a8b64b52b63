"""JSON documents of the process API: summaries, descriptions, job status info."""

from __future__ import annotations

from typing import Any

from process_api.definition import Process
from process_api.store import Job

JSON = "application/json"


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def summary(process: Process, base: str) -> dict[str, Any]:
    return {
        "id": process.id, "title": process.title, "description": process.description,
        "version": process.version, "jobControlOptions": process.job_control_options,
        "outputTransmission": ["value"],
        "links": [{"rel": "self", "type": JSON, "title": "Process description",
                   "href": f"{base}processes/{process.id}"},
                  {"rel": "http://www.opengis.net/def/rel/ogc/1.0/execute", "type": JSON,
                   "title": "Execute", "href": f"{base}processes/{process.id}/execution"}],
    }


def description(process: Process, base: str) -> dict[str, Any]:
    return {**summary(process, base), "inputs": dict(process.inputs),
            "outputs": dict(process.outputs)}


def status_info(job: Job, base: str) -> dict[str, Any]:
    url = f"{base}jobs/{job['id']}"
    links = [{"rel": "self", "type": JSON, "title": "Job status", "href": url},
             {"rel": "up", "type": JSON, "title": "Job list", "href": f"{base}jobs"}]
    if job["status"] == "successful":
        links.append({"rel": "http://www.opengis.net/def/rel/ogc/1.0/results", "type": JSON,
                      "title": "Results", "href": f"{url}/results"})
    info = {
        "jobID": str(job["id"]), "processID": job["process_id"], "type": "process",
        "status": job["status"], "message": job["message"], "progress": job["progress"],
        "created": _iso(job["created"]), "started": _iso(job["started"]),
        "finished": _iso(job["finished"]), "updated": _iso(job["updated"]),
        "owner": job["owner"], "project": job["project"], "links": links,
    }
    return {k: v for k, v in info.items() if v is not None}
