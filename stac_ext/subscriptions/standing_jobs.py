"""Standing jobs: a subscription's process run on each window's items, as its owner, through
the process API's own execution endpoint (its checks, quotas and answers), the items given
as OGC API Processes Part 3 collection inputs; each run followed to its end, retried as the
subscription says.

A window is a run's key: a run is claimed (`submitting`) before its job is submitted, so
that a window triggered twice makes one job. Should the process submitting it stop before
the job is recorded, the run is taken up again: the owner's jobs of the process created
since the claim are looked at first, and one not recorded by another run is taken as the
run's (a job the owner started by hand in those seconds would be taken for it: the window
then makes no second job).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import jsonschema
from starlette.types import ASGIApp

from process_api import SecretBox, merge_secrets, split_secrets
from stac_ext.data_api.urls import api_root, collection_path
from stac_ext.subscriptions.models import StandingJob
from stac_ext.subscriptions.service_calls import as_user, said, user_principal


class JobRefused(ValueError):
    """A standing job the process API would not run: why, in its words."""


@dataclass(frozen=True)
class Processes:
    """The process API as the standing jobs reach it: the service's app, where the two APIs
    are mounted, and the clients a user's principal is issued to."""

    app: ASGIApp
    data_prefix: str
    processes_prefix: str
    clients: frozenset[str]
    box: SecretBox | None = None  # seals a job's secret inputs (None: jobs take none)

    def _path(self, rest: str) -> str:
        return f"{self.processes_prefix.rstrip('/')}/{rest}"

    async def description(self, process: str, owner: str, reader: dict[str, Any] | None,
                          service_url: str) -> dict[str, Any]:
        """The process as its owner sees it; JobRefused when she cannot run it."""
        principal = user_principal(owner, reader, self.clients)
        async with as_user(self.app, service_url, reader, principal) as client:
            answer = await client.get(self._path(f"processes/{quote(process, safe='')}"))
        if answer.status_code != 200:
            raise JobRefused(f"job.process: {said(answer)}")
        return dict(answer.json())

    def checked(self, job: StandingJob, description: Mapping[str, Any]
                ) -> tuple[dict[str, Any], str | None]:
        """The job's record (its secret inputs as placeholders) and those sealed, once its
        inputs are the process's (the items input given a collection input)."""
        schema = description.get("inputs") or {}
        given = (schema.get("properties") or {}).get(job.items_input)
        if not isinstance(given, Mapping) or not _takes_files(given):
            raise JobRefused(f"job.itemsInput: the process {job.process} has no file input "
                             f"{job.items_input!r} (an input of files, or an array of them, "
                             "takes the window's items).")
        for reserved in (job.items_input, "publish"):
            if reserved in job.inputs:
                raise JobRefused(f"job.inputs.{reserved}: given by the subscription (the "
                                 "window's items; `job.publish`).")
        trial = inputs_of(job.inputs, job.items_input, given, job.publish,
                          [("https://example.invalid/data/collections/c", ["x"])])
        problems = sorted(jsonschema.Draft202012Validator(schema).iter_errors(trial),
                          key=lambda e: list(e.absolute_path))
        if problems:
            raise JobRefused("job.inputs do not match the process's inputs: "
                             + "; ".join(map(_problem, problems)))
        stored, secrets = split_secrets(dict(job.inputs), schema)
        if secrets and self.box is None:
            raise JobRefused("job.inputs: this service keeps no secret inputs.")
        record = job.model_dump(by_alias=True, exclude_none=True)
        record["inputs"] = stored
        return record, self.box.seal(secrets) if secrets and self.box else None

    async def submit(self, run: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
                     ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The run's job submitted as its owner: the API's status, body and headers."""
        job = _json(run["job"])
        reader = _json(run["reader"])
        secrets = self.box.open(run["job_secrets"]) if self.box and run["job_secrets"] else []
        root = api_root(run["service_url"], self.data_prefix)
        by_collection: dict[str, list[str]] = defaultdict(list)
        for item in items:
            by_collection[item["collection"]].append(item["item_id"])
        description = await self.description(job["process"], run["owner"], reader,
                                             run["service_url"])
        given = ((description.get("inputs") or {}).get("properties") or {}).get(
            job["itemsInput"]) or {}
        inputs = inputs_of(merge_secrets(job.get("inputs") or {}, secrets), job["itemsInput"],
                           given, job.get("publish"),
                           [(f"{root}{collection_path(c)}", ids)
                            for c, ids in by_collection.items()])
        body: dict[str, Any] = {"processInputs": inputs}
        if job.get("project"):
            body["metadata"] = {"project": job["project"]}
        principal = user_principal(run["owner"], reader, self.clients)
        async with as_user(self.app, run["service_url"], reader, principal) as client:
            answer = await client.post(self._path(f"processes/{job['process']}/execution"),
                                       json=body)
        try:
            document = answer.json()
        except ValueError:
            document = {}
        return answer.status_code, document if isinstance(document, dict) else {}, \
            dict(answer.headers)

    async def job(self, run: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The run's job as its owner reads it: the API's status and body."""
        reader = _json(run["reader"])
        principal = user_principal(run["owner"], reader, self.clients)
        async with as_user(self.app, run["service_url"], reader, principal) as client:
            answer = await client.get(self._path(f"jobs/{run['job_id']}"))
        return answer.status_code, answer.json() if answer.content else {}

    async def jobs_since(self, run: Mapping[str, Any], since: datetime
                         ) -> list[tuple[str, str | None]]:
        """The owner's jobs of the run's process created since `since`, oldest first: each
        its id and its URL."""
        job = _json(run["job"])
        reader = _json(run["reader"])
        principal = user_principal(run["owner"], reader, self.clients)
        async with as_user(self.app, run["service_url"], reader, principal) as client:
            answer = await client.get(self._path("jobs"), params={
                "processID": job["process"], "limit": 100,
                "datetime": f"{since.isoformat()}/.."})
        if answer.status_code != 200:
            return []
        return [(j["jobID"], next((link.get("href") for link in j.get("links") or ()
                                   if link.get("rel") == "self"), None))
                for j in reversed(answer.json().get("jobs") or [])]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _takes_files(schema: Mapping[str, Any]) -> bool:
    """A file input, or an array of them (process_api's FILE_INPUT: one of its forms is a
    collection input)."""
    if schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        schema = schema["items"]
    return any(isinstance(form, Mapping) and "collection" in (form.get("properties") or {})
               for form in schema.get("oneOf") or ())


def inputs_of(inputs: Mapping[str, Any], items_input: str, schema: Mapping[str, Any],
              publish: Mapping[str, Any] | None,
              collections: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Any]:
    """`processInputs`: the subscription's, the window's items as one collection input per
    collection (its URL, and a filter on their ids: exactly those items, as the owner reads
    them when the job is submitted), the publish section."""
    references = [{"collection": url, "filter-lang": "cql2-json",
                   "filter": {"op": "in", "args": [{"property": "id"}, list(ids)]}}
                  for url, ids in collections]
    made = dict(inputs)
    made[items_input] = references if schema.get("type") == "array" else references[0]
    if publish is not None:
        made["publish"] = dict(publish)
    return made


def _problem(error: jsonschema.ValidationError) -> str:
    """Where and which rule, never the value (it may be a password)."""
    where = "/".join(map(str, error.absolute_path)) or "(root)"
    if error.validator in ("required", "additionalProperties"):
        return f"{where}: {error.message[:200]}"
    return f"{where}: must satisfy {error.validator}"
