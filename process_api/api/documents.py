"""JSON documents of the process API: process summaries and descriptions (a job's status
info is the engine's: `process_api.jobs.status`, which callbacks send too), and the API's
root URL their links start from (`api_base`)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from process_api.processes.definition import Process

JSON = "application/json"


def api_base(request: Request) -> str:
    """This API's root URL: the mount point (`root_path`) on the request's host."""
    return f"{request.url.scheme}://{request.url.netloc}{request.scope.get('root_path', '')}/"


def summary(process: Process, base: str) -> dict[str, Any]:
    return {
        "id": process.id, "title": process.title, "description": process.description,
        "version": process.version, "jobControlOptions": process.job_control_options,
        "outputTransmission": ["value"],
        # OGC Part 2: deployed through the API (replaceable, undeployable) or not
        "mutable": process.deployed,
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
    """The OGC process description (`ogc-process-description`): our default form has
    the whole body's JSON Schema in `inputs` and `outputs`, which OGC's does not allow."""
    return {**summary(process, base), "inputs": _by_id(dict(process.inputs), occurs=True),
            "outputs": _by_id(dict(process.outputs), occurs=False)}
