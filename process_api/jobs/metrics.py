"""The job engine's Prometheus metrics: what a worker did (jobs started and ended, their
durations, the job processes running, callbacks), counted where it happens; and what the
job store holds (queued and running jobs, the oldest one's wait, live workers), read from
the database every few seconds.

The metrics live in prometheus-client's default registry, which the service's `/metrics`
and a worker's metrics port expose (in multi-process mode, through the files of
`PROMETHEUS_MULTIPROC_DIR`).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

JOBS_STARTED = Counter("geocatalog_jobs_started", "Jobs a worker started.", ["process"])
JOBS_ENDED = Counter("geocatalog_jobs_ended", "Jobs a worker ended, by how they ended "
                     "(successful, failed, dismissed).", ["process", "status"])
JOB_DURATION = Histogram(
    "geocatalog_job_duration_seconds", "From a job's start by a worker to its end.",
    ["process", "status"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, float("inf")))
JOB_PROCESSES = Gauge("geocatalog_job_processes", "Job processes running (children of the "
                      "workers' fork servers).", multiprocess_mode="livesum")
CALLBACKS = Counter("geocatalog_callbacks", "Job callbacks, by outcome: sent (the "
                    "subscriber took it: 2xx, 3xx), failed (4xx, or no answer after every "
                    "attempt), refused (the outbound policy forbids the target).", ["outcome"])

JOBS_REFUSED = Counter("geocatalog_jobs_refused", "Submissions refused (429) by a quota: "
                       "user_queued, project_queued.", ["quota"])
JOB_QUOTA = Gauge("geocatalog_job_quota", "The job quotas (JOB_USER_RUNNING, JOB_USER_QUEUED, "
                  "JOB_PROJECT_QUEUED): jobs of one user running at once, of one user and "
                  "of one project queued or running.", ["quota"], multiprocess_mode="mostrecent")

#: The job store's state, read from the database by `Engine.sample_queue` (every process
#: reads the same numbers: the most recent reading counts).
JOBS = Gauge("geocatalog_jobs", "Jobs queued (accepted) or running, in the job store.",
             ["status"], multiprocess_mode="mostrecent")
OLDEST_QUEUED = Gauge("geocatalog_jobs_oldest_accepted_age_seconds", "How long the oldest "
                      "queued job has waited for a worker (0: none waits).",
                      multiprocess_mode="mostrecent")
WORKERS = Gauge("geocatalog_job_workers", "Workers whose heartbeat the engine saw within "
                "the stalled time (procrastinate's worker table).",
                multiprocess_mode="mostrecent")

QUEUE_STATE = """
SELECT (SELECT count(*) FROM processes.jobs WHERE status = 'accepted') AS accepted,
       (SELECT count(*) FROM processes.jobs WHERE status = 'running') AS running,
       (SELECT coalesce(extract(epoch FROM now() - min(created)), 0) FROM processes.jobs
        WHERE status = 'accepted') AS oldest,
       (SELECT count(*) FROM procrastinate.procrastinate_workers
        WHERE last_heartbeat > now() - make_interval(secs => %(stalled)s)) AS workers
"""
