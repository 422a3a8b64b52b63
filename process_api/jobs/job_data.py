"""A deployed process's job's data, around its run (`run_with_data`, for the worker):
the files its inputs reference staged in (`staging.stage_in`) before its sandbox starts,
the files it wrote stored (the caller's storage, else the service's results store),
published into the catalog when its request asks (the composition root's publisher, in a
sandbox of its own), and what it read and wrote kept as its provenance."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from process_api.data.staging import (
    ResultsStore,
    StageLimits,
    StageWatch,
    StagingError,
    caller_store,
    files_href,
    media_type,
    safe_name,
    service_filesystem,
    stage_in,
    stalled,
)
from process_api.jobs.queue import UNREACHABLE
from process_api.jobs.secrets import Scrubber
from process_api.jobs.store import Job
from process_api.jobs.supervisor import WALL_TIME, Supervisor
from process_api.jobs.tasks import in_thread
from process_api.processes.definition import Process
from process_api.processes.resources import Plan
from process_api.runner.executor import Executor
from process_api.runner.sandbox import INPUTS_MOUNT

#: The sections of a job's inputs for its worker alone (storage keys, where results go).
WORKER_SECTIONS = ("s3", "results", "publish")
#: The formats a published result may be (what the catalog's inspector describes).
PUBLISHED_TYPES = ("application/netcdf", "application/vnd.apache.parquet")
#: A job's data folders on the worker's host: `<prefix><worker pid>-...`.
JOB_DATA_PREFIX = "geocatalog-job-data-"
#: How often the worker looks at a job whose inputs are being staged in.
WATCH_SECONDS = 0.5


class Dismissed(StagingError):
    """The job was dismissed while its data moved."""


class OutOfTime(StagingError):
    """The job's wall time ran out while its data moved (the message: where)."""


@dataclass(frozen=True)
class DataConfig:
    """How workers move jobs' data: the bounds of a job's inputs, the service's results
    store (an fsspec URL and its options), the process that publishes results (None:
    publishing is refused)."""

    limits: StageLimits = field(default_factory=StageLimits)
    result_files: int = 1000  # the most files one job stores
    store_url: str = ""
    store_options: dict[str, Any] = field(default_factory=dict)
    publisher: Process | None = None

    # made once per process (a cached property writes the instance's __dict__, which a
    # frozen dataclass allows): every download and dismissal asks for it
    @cached_property
    def _service_filesystem(self) -> tuple[Any, str]:
        return service_filesystem(self.store_url, self.store_options)

    def service_store(self, api_url: str) -> ResultsStore:
        """The service's results store, its files read through the API at `api_url`."""
        if not self.store_url:
            raise StagingError("This service has no results store (RESULTS_STORE): give "
                               "results.prefix in your own storage.")
        fs, root = self._service_filesystem
        return ResultsStore(fs, root, partial(files_href, api_url))


class JobData:
    """One job's folders (its staged inputs, its received outputs) and what moved."""

    def __init__(self, config: DataConfig, job: Job, inputs: dict[str, Any]) -> None:
        self.config = config
        self.job = job
        self.inputs = inputs  # with its secrets: the storage keys
        # named by this worker's pid: a killed worker's are removed by the next one
        self.folder = Path(tempfile.mkdtemp(prefix=f"{JOB_DATA_PREFIX}{os.getpid()}-"))
        self.staged = self.folder / "inputs"
        self.outputs = self.folder / "outputs"
        self.staged.mkdir()
        self.outputs.mkdir()
        self.read: list[dict[str, Any]] = []  # the staging, with paths and checksums
        self.written: list[dict[str, Any]] = []  # each stored file: output, href, checksum
        self.store: ResultsStore | None = None
        self._fetching: asyncio.Future[list[dict[str, Any]]] | None = None

    @property
    def s3(self) -> dict[str, Any]:
        return dict(self.inputs.get("s3") or {})

    @property
    def job_url(self) -> str:
        return f"{self.job['api_url'] or '/'}jobs/{self.job['id']}"

    async def close(self) -> None:
        """The job's folders removed (a stopped fetch's once it has let go of them)."""
        if self._fetching is not None and not self._fetching.done():
            self._fetching.add_done_callback(
                lambda _: shutil.rmtree(self.folder, ignore_errors=True))
            return
        await asyncio.to_thread(shutil.rmtree, self.folder, True)

    async def stage_in(self, mount: str, deadline: float,
                       dismissed: Callable[[], Awaitable[bool]]) -> dict[str, Any]:
        """The files the inputs reference fetched; the inputs as the job reads them (each
        reference a `{"path"}` where it sees the staged folder: `mount`), without the
        sections the worker uses: the job's code never sees the storage's keys.

        The fetch runs in a thread of its own, watched from here: it is stopped (a
        StagingError saying why) when the job is dismissed, at its wall time (`deadline`,
        monotonic) and when a source sends nothing for the stall time; the job then ends
        at once, the thread letting go at its next bytes or read timeout."""
        given = {k: v for k, v in self.inputs.items() if k not in WORKER_SECTIONS}
        staging = self.job.get("staging") or []
        if not staging:
            return given
        watch = StageWatch()
        store = self.config.service_store(self.job["api_url"] or "/") \
            if self.config.store_url else None
        self._fetching = in_thread(stage_in, staging, self.staged, self.s3,
                                   self.config.limits, mount, watch, store)
        while True:
            done, _ = await asyncio.wait({self._fetching}, timeout=WATCH_SECONDS)
            if done:
                break
            if (why := await self._why_stop(watch, deadline, dismissed)) is not None:
                watch.stop(why)
                raise why
        self.read = self._fetching.result()
        # last index first: an array's reference may become several files
        for entry in sorted(self.read, key=lambda e: -1 if e["index"] is None else -e["index"]):
            files = [{"path": f["path"]} for f in entry["files"]]
            if entry["index"] is None:
                given[entry["input"]] = files[0]
            else:
                value = list(given[entry["input"]])
                value[entry["index"]:entry["index"] + 1] = files
                given[entry["input"]] = value
        return given

    async def store_results(self, result: dict[str, Any], received: dict[int, Any]
                            ) -> dict[str, Any]:
        """The results with every file the job sent stored: its `href`, `type`, `size`,
        `checksum` (and `contents`, small text, as the job gave it)."""
        prefix = (self.inputs.get("results") or {}).get("prefix")
        if received:
            self.store = caller_store(prefix, self.s3) if prefix else \
                self.config.service_store(self.job["api_url"] or "/")
        stored: dict[str, Any] = {}
        for output, value in result.items():
            if isinstance(value, list):
                stored[output] = [await self._stored(output, v, str(i), received)
                                  for i, v in enumerate(value)]
            else:
                stored[output] = await self._stored(output, value, "", received)
        return stored

    async def _stored(self, output: str, value: Any, index: str,
                      received: dict[int, Any]) -> Any:
        if not (isinstance(value, dict) and "file" in value):
            return value
        assert self.store is not None
        got = received.get(int(value["file"]))
        if got is None:
            raise StagingError(f"Output {output}: its file did not arrive.")
        name = safe_name(str(value.get("basename") or "data"))
        key = "/".join(filter(None, [str(self.job["id"]), output, index, name]))
        href = await asyncio.to_thread(self.store.put, Path(got["local"]), key)
        found = {"basename": name, "href": href, "type": media_type(name),
                 "size": got["size"], "checksum": got["checksum"]}
        if "contents" in value:
            found["contents"] = value["contents"]
        self.written.append({"output": output, "key": key, "local": got["local"],
                             "service_store": not (self.inputs.get("results") or {}),
                             **{k: found[k] for k in ("href", "type", "size", "checksum")}})
        return found

    async def _why_stop(self, watch: StageWatch, deadline: float,
                        dismissed: Callable[[], Awaitable[bool]]) -> StagingError | None:
        """Why the staging stops now, or None: it goes on."""
        now, stall = time.monotonic(), self.config.limits.stall_seconds
        if now >= deadline:
            return OutOfTime(f"while its inputs were staged in (at {watch.href})")
        if now - watch.last >= stall:
            return stalled(watch.href, self.config.limits)
        try:
            if await dismissed():
                return Dismissed("The job was dismissed while its inputs were staged in.")
        except UNREACHABLE:  # the database away: the staging goes on
            pass
        return None

    def publish_request(self, process: Process, mount: str) -> dict[str, Any] | None:
        """The publisher's inputs (the files it describes: the outputs folder, which it
        sees at `mount`), or None when the request asks for no publishing."""
        publish = self.inputs.get("publish")
        if publish is None:
            return None
        items = sorted({f["item"] for e in self.read for f in e["files"] if f.get("item")})
        files = [{"path": f"{mount}/{Path(w['local']).name}", "href": w["href"],
                  "output": w["output"]} for w in self.written if w["type"] in PUBLISHED_TYPES]
        return {"files": files, "catalog": publish.get("catalog"),
                "visibility": publish.get("visibility") or
                ("project" if self.job.get("project") else "private"),
                "lineage": {"process": process.id, "version": process.version,
                            "revision": self.job.get("process_revision"),
                            "job": self.job_url, "provenance": f"{self.job_url}/prov",
                            "datetime": datetime.now(UTC).isoformat(),
                            "derived_from": items}}

    @staticmethod
    def with_items(result: dict[str, Any], published: list[dict[str, Any]],
                   unpublished: list[dict[str, Any]]) -> dict[str, Any]:
        """The results, each stored file with the items it became (`items`: their URLs)
        and what of it was not published, and why (`unpublished`)."""
        made: dict[str, list[str]] = {}
        for item in published:
            made.setdefault(str(item.get("file")), []).append(str(item["url"]))
        left: dict[str, list[str]] = {}
        for skip in unpublished:
            left.setdefault(str(skip["file"]), []).append(str(skip["reason"]))

        def linked(value: Any) -> Any:
            if isinstance(value, list):
                return [linked(v) for v in value]
            if isinstance(value, dict) and (value.get("href") in made or
                                            value.get("href") in left):
                href = value["href"]
                return {**value, **({"items": made[href]} if href in made else {}),
                        **({"unpublished": left[href]} if href in left else {})}
            return value

        return {name: linked(value) for name, value in result.items()}

    @staticmethod
    def unpublished_note(unpublished: list[dict[str, Any]], published: list[dict[str, Any]]
                         ) -> str | None:
        """The job's message when files it was asked to publish (of a format the catalog
        describes) became no item: which, and why."""
        made = {str(item.get("file")) for item in published}
        missed: dict[str, list[str]] = {}
        for skip in unpublished:
            if skip["file"] not in made and not skip.get("format"):
                missed.setdefault(str(skip["file"]), []).append(str(skip["reason"]))
        if not missed:
            return None
        return "finished; not published: " + "; ".join(
            f"{href.rsplit('/', 1)[-1]} ({', '.join(reasons)})"
            for href, reasons in missed.items())

    def provenance(self, published: list[dict[str, Any]]) -> dict[str, Any]:
        """What the job record keeps of what the job read and wrote."""
        return {"inputs": [{**{k: v for k, v in f.items() if k != "path"},
                            "input": e["input"]} for e in self.read for f in e["files"]],
                "outputs": [{k: v for k, v in w.items() if k != "local"}
                            for w in self.written],
                "published": published}


async def run_with_data(data: JobData, process: Process, limits: Plan,
                        about: dict[str, Any], hide: list[str],
                        supervise: Callable[[Executor], Supervisor], *, own: Executor,
                        publishing: Executor, sandboxed: bool,
                        dismissed: Callable[[], Awaitable[bool]]
                        ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A deployed process's job, in a sandbox of its own (`own`): its inputs' data staged
    in first, its files stored and (as asked) published after (in the `publishing`
    sandbox). Its outcome, and its provenance (None when nothing could be staged). The
    staging counts against the job's wall time, and stops when it is `dismissed`."""
    deadline = time.monotonic() + limits.wall_seconds
    try:
        try:
            given = await data.stage_in(INPUTS_MOUNT if sandboxed else str(data.staged),
                                        deadline, dismissed)
        except OutOfTime as e:
            return {"ceiling": WALL_TIME, "during": Scrubber(hide)(str(e))}, None
        except StagingError as e:
            return {"error": Scrubber(hide)(str(e))}, None
        left = dataclasses.replace(limits, wall_seconds=max(1.0, deadline - time.monotonic()))
        outcome = await supervise(own).run(process, given, left, about, hide,
                                           staged=data.staged, outputs=data.outputs,
                                           max_files=data.config.result_files)
        if "result" not in outcome:
            return outcome, data.provenance([])
        try:
            result = await data.store_results(outcome["result"], outcome.pop("files", {}))
            request = data.publish_request(process, INPUTS_MOUNT if sandboxed else
                                           str(data.outputs))
            published, unpublished = await _published(data, request, limits, about, hide,
                                                      supervise(publishing))
        except StagingError as e:
            return {"error": Scrubber(hide)(str(e))}, data.provenance([])
        note = data.unpublished_note(unpublished, published)
        return {**outcome, "result": data.with_items(result, published, unpublished),
                **({"note": note} if note else {})}, data.provenance(published)
    finally:
        await data.close()


async def _published(data: JobData, request: dict[str, Any] | None, limits: Plan,
                     about: dict[str, Any], hide: list[str], supervisor: Supervisor
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The job's files published as items (when its request asks): the items, and what
    was not published (`{"file", "reason"}`)."""
    if request is None:
        return [], []
    skipped = [{"file": w["href"], "format": True, "reason": "not a format the catalog "
                "describes (NetCDF, Parquet)"} for w in data.written
               if w["type"] not in PUBLISHED_TYPES]
    if not request["files"]:
        return [], skipped
    publisher = data.config.publisher
    if publisher is None:
        raise StagingError("This service does not publish results (no publisher).")
    outcome = await supervisor.run(publisher, request, limits, about, hide,
                                   staged=data.outputs)
    if "result" not in outcome:
        raise StagingError("The job's files are stored; publishing them failed: "
                           f"{outcome.get('error') or 'the publisher stopped'}")
    found = outcome["result"]
    skipped += [{"file": s["file"], "reason": f"{s['variable']}: {s['reason']}"}
                for s in found.get("skipped", [])]
    skipped += [{"file": w["file"], "reason": w["message"]} for w in found.get("warnings", [])]
    return [*found.get("created", []), *found.get("updated", [])], skipped
