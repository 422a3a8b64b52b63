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
        # OGC Part 2: deployed through the API (replaceable, undeployable) or not
        "mutable": process.mutable,
        "links": [{"rel": "self", "type": JSON, "title": "Process description",
                   "href": f"{base}processes/{process.id}"},
                  {"rel": "http://www.opengis.net/def/rel/ogc/1.0/execute", "type": JSON,
                   "title": "Execute", "href": f"{base}processes/{process.id}/execution"}],
    }


def description(process: Process, base: str) -> dict[str, Any]:
    return {**summary(process, base), "inputs": dict(process.inputs),
            "outputs": dict(process.outputs)}


#: `?profile=ogc` on a process: its description in OGC's form (inputs and outputs by id).
OGC_PROFILE = "ogc"


def _by_id(schema: dict[str, Any], occurs: bool) -> dict[str, Any]:
    """A JSON Schema of an object as OGC's map of inputs (or outputs) by id: one per
    property, with its schema, title and description (and, for inputs, how often)."""
    required = set(schema.get("required", []))
    described = {}
    for name, property_schema in (schema.get("properties") or {}).items():
        entry: dict[str, Any] = {"schema": property_schema}
        for field in ("title", "description"):
            if field in property_schema:
                entry[field] = property_schema[field]
        entry.setdefault("title", name)
        if occurs:
            entry |= {"minOccurs": 1 if name in required else 0, "maxOccurs": 1}
        described[name] = entry
    return described


def ogc_description(process: Process, base: str) -> dict[str, Any]:
    """The OGC process description (`ogc-process-description`): SPEC's default form has
    the whole body's JSON Schema in `inputs` and `outputs`, which OGC's does not allow."""
    return {**summary(process, base), "inputs": _by_id(dict(process.inputs), occurs=True),
            "outputs": _by_id(dict(process.outputs), occurs=False)}


#: The link relation of a job's provenance document (W3C PROV-AQ).
HAS_PROVENANCE = "http://www.w3.org/ns/prov#has_provenance"


def status_info(job: Job, base: str) -> dict[str, Any]:
    url = f"{base}jobs/{job['id']}"
    links = [{"rel": "self", "type": JSON, "title": "Job status", "href": url},
             {"rel": "up", "type": JSON, "title": "Job list", "href": f"{base}jobs"},
             {"rel": "logs", "type": "text/plain", "title": "Output of the job's process",
              "href": f"{url}/logs"}]
    if job["status"] == "successful":
        links.append({"rel": "http://www.opengis.net/def/rel/ogc/1.0/results", "type": JSON,
                      "title": "Results", "href": f"{url}/results"})
    if job["status"] in ("successful", "failed"):
        links.append({"rel": HAS_PROVENANCE, "type": JSON, "href": f"{url}/prov",
                      "title": "What the job read and wrote (W3C PROV)"})
    info = {
        "jobID": str(job["id"]), "processID": job["process_id"], "type": "process",
        "status": job["status"], "message": job["message"], "progress": job["progress"],
        "created": _iso(job["created"]), "started": _iso(job["started"]),
        "finished": _iso(job["finished"]), "updated": _iso(job["updated"]),
        "owner": job["owner"], "project": job["project"], "links": links,
    }
    return {k: v for k, v in info.items() if v is not None}
