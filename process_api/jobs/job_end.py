"""A job's end: its outcome as its record keeps it (`recorded`: results checked against
the process's outputs schema, a ceiling met said in words, never a secret nor a NUL), and
told (`told`: one log line, the metrics, its subscriber's callback)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import jsonschema
import psycopg

from process_api.jobs.callbacks import FAILED, SUCCESS, Notifier
from process_api.jobs.job_status import JobStatus
from process_api.jobs.metrics import JOB_DURATION, JOBS_ENDED
from process_api.jobs.secrets import Scrubber
from process_api.jobs.status import status_info
from process_api.jobs.store import Job, JobStore
from process_api.jobs.supervisor import WALL_TIME
from process_api.processes.definition import Process
from process_api.processes.resources import Plan, quantity
from process_api.runner.child import EXIT_MEMORY

logger = logging.getLogger("geocatalog.jobs")

#: The `process` label of every deployed process's jobs.
DEPLOYED_LABEL = "deployed"


async def recorded(store: JobStore, job_id: str, process: Process, outcome: dict[str, Any],
                   hide: list[str], limits: Plan, provenance: dict[str, Any] | None = None
                   ) -> Job | None:
    """The job's end in its record (not if it was dismissed meanwhile): the row."""
    applied = limits.record
    if "result" in outcome and (name := _holding_nul(outcome["result"])) is not None:
        return await store.finish(
            job_id, JobStatus.FAILED, f"Output {name} holds a NUL character, which a job's "
            "record cannot keep.", resources=applied, provenance=provenance)
    if "result" in outcome:
        try:
            process.outputs_validator.validate(outcome["result"])
        except jsonschema.ValidationError as e:
            return await store.finish(
                job_id, JobStatus.FAILED, f"The process returned results that do not match its "
                f"outputs schema: {e.message}", resources=applied)
        try:
            return await store.finish(job_id, JobStatus.SUCCESSFUL,
                                      outcome.get("note") or "finished",
                                      outcome["result"], resources=applied,
                                      provenance=provenance)
        except psycopg.DataError:  # e.g. half of a UTF-16 pair: its files stay its own
            return await store.finish(
                job_id, JobStatus.FAILED, "The job's results hold characters a job's record "
                "cannot keep.", resources=applied, provenance=provenance)
    error = outcome.get("error") or "the process stopped without a result"
    ceiling = outcome.get("ceiling")
    if ceiling == "memory" or error == "memory" or \
            outcome.get("returncode") == EXIT_MEMORY:
        error = memory_exceeded(limits)
    elif ceiling == WALL_TIME:
        during = f" {outcome['during']}" if outcome.get("during") else ""
        error = (f"Wall time limit reached: the job ran for {limits.wall_seconds:.0f} s "
                 f"(JOB_WALL_SECONDS) and was stopped{during}.")
    elif ceiling == "processes":
        error = (f"Process limit reached: the job asked for more than {limits.processes} "
                 f"processes and threads at once (JOB_PROCESSES). {error}")
    # an error text must never carry a secret, nor a NUL (which no record keeps)
    error = Scrubber(hide)(error).replace("\x00", "\ufffd")
    return await store.finish(job_id, JobStatus.FAILED, error, resources=applied,
                              provenance=provenance)


def memory_exceeded(limits: Plan) -> str:
    size = quantity(limits.memory_bytes)
    where = "its resources.limits.memory" if limits.memory_asked else \
        "the default of JOB_MEMORY"
    return f"Memory limit exceeded: the job needed more than {size} ({where})."


async def told(notifier: Notifier, started: Job, job: Job | None) -> None:
    """A job a worker started and ended (`job` None: it was dismissed meanwhile), in one
    line saying how (procrastinate's own line says "Success" for every job whose task ran to
    its end, failed and dismissed ones too: the logging configuration quiets it), in the
    metrics, and to its subscriber."""
    job_id, process_id = started["id"], str(started["process_id"])
    status = JobStatus.DISMISSED if job is None else str(job["status"])
    JOBS_ENDED.labels(metric_label(started), status).inc()
    JOB_DURATION.labels(metric_label(started), status).observe(
        (((job or {}).get("finished") or datetime.now(UTC)) - started["started"]
         ).total_seconds())
    if job is None:
        logger.info("job %s: dismissed", job_id)
        return
    if job["status"] == JobStatus.FAILED:
        reason = (str(job.get("message") or "").strip().splitlines() or ["no reason"])[0]
        logger.info("job %s (%s): failed: %s", job_id, process_id, reason)
    else:
        logger.info("job %s (%s): %s", job_id, process_id, job["status"])
    callback(notifier, job, SUCCESS if job["status"] == JobStatus.SUCCESSFUL else FAILED)


def callback(notifier: Notifier, job: Job, which: str) -> None:
    """The job's subscriber hears of it: its results on success, else its status."""
    if not (job.get("subscriber") or {}).get(which):
        return
    body = job["results"] if which == SUCCESS else status_info(job, job["api_url"] or "/")
    notifier.send(str(job["id"]), job["subscriber"], which, body)


def _holding_nul(result: dict[str, Any]) -> str | None:
    """The first output whose value holds a NUL character, or None."""
    return next((name for name, value in result.items()
                 if "\\u0000" in json.dumps(value)), None)


def metric_label(job: Job) -> str:
    """A job's `process` label: the id of a process of the service's, `deployed` for a
    user's (its id is the user's value, and may be private)."""
    return DEPLOYED_LABEL if job.get("process_revision") is not None else \
        str(job["process_id"])

