"""Named SQL of the job store (schema `processes`)."""

#: New jobs in one statement (`jobs`: a JSON array of their records).
INSERT_JOBS = """
INSERT INTO processes.jobs (id, process_id, owner, project, inputs, secrets, resources,
                           service_url, api_url, subscriber, trace_context, process_revision,
                           staging)
SELECT id, process_id, owner, project, inputs, secrets, resources, service_url, api_url,
       subscriber, trace_context, process_revision, staging
FROM jsonb_to_recordset(%(jobs)s) AS j(id uuid, process_id text, owner text, project text,
    inputs jsonb, secrets text, resources jsonb, service_url text, api_url text,
    subscriber jsonb, trace_context jsonb, process_revision int, staging jsonb)
RETURNING *
"""

GET_JOB = "SELECT * FROM processes.jobs WHERE id = %(id)s"

#: The jobs the reader (`Caller.reader`, JSON) sees: those the access table lets them read
#: (`processes.may_read`), until dismissed (then gone, as OGC says; the row stays for audit).
_VISIBLE = ("processes.may_read(owner, project, %(reader)s::jsonb) "
            "AND status <> 'dismissed'")

#: A job the reader sees.
GET_VISIBLE_JOB = f"SELECT * FROM processes.jobs WHERE id = %(id)s AND {_VISIBLE}"

#: OGC Part 1's job list of the jobs the reader sees: `processID`, `status` (lists),
#: `created` within [from, to], a duration (seconds: finished or now, minus started) within
#: [min, max] (a job not started has none: out of such a list).
LIST_JOBS = f"""
SELECT * FROM processes.jobs
WHERE {_VISIBLE}
  AND NOT %(none)s
  AND (%(process_ids)s::text[] IS NULL OR process_id = ANY(%(process_ids)s))
  AND (%(statuses)s::text[] IS NULL OR status = ANY(%(statuses)s))
  AND (%(created_from)s::timestamptz IS NULL OR created >= %(created_from)s)
  AND (%(created_to)s::timestamptz IS NULL OR created <= %(created_to)s)
  AND (%(min_duration)s::float8 IS NULL AND %(max_duration)s::float8 IS NULL OR
       started IS NOT NULL AND extract(epoch FROM coalesce(finished, now()) - started)
           BETWEEN coalesce(%(min_duration)s, 0) AND coalesce(%(max_duration)s, 'Infinity'))
ORDER BY created DESC, id
LIMIT %(limit)s OFFSET %(offset)s
"""

#: accepted -> running, once: a second worker picking the same job gets nothing (nor does
#: a worker picking a job dismissed while queued).
#: accepted -> running. Tried again after a failover lost its answer, it finds the start
#: its first try committed (running, for the same queue job): the job runs once, its
#: attempt counted once. (The second SELECT sees the table as it was before the UPDATE.)
START_JOB = """
WITH started AS (
    UPDATE processes.jobs
    SET status = 'running', started = now(), updated = now(), attempts = attempts + 1,
        message = 'running', progress = 0, queue_job_id = %(queue_job_id)s
    WHERE id = %(id)s AND status = 'accepted'
    RETURNING *
)
SELECT * FROM started
UNION ALL
SELECT * FROM processes.jobs
WHERE id = %(id)s AND status = 'running' AND queue_job_id = %(queue_job_id)s
"""

PROGRESS = """
UPDATE processes.jobs SET progress = %(progress)s, message = %(message)s, updated = now()
WHERE id = %(id)s AND status = 'running'
"""

FINISH_JOB = """
UPDATE processes.jobs
SET status = %(status)s, message = %(message)s, results = %(results)s,
    resources = coalesce(%(resources)s, resources),
    provenance = coalesce(%(provenance)s, provenance),
    progress = CASE WHEN %(status)s = 'successful' THEN 100 ELSE progress END,
    finished = now(), updated = now(), secrets = NULL
WHERE id = %(id)s AND status IN ('accepted', 'running')
RETURNING *
"""

#: Back to the queue after its worker died (the process allows retries).
REQUEUE_JOB = """
UPDATE processes.jobs
SET status = 'accepted', message = %(message)s, started = NULL, updated = now()
WHERE id = %(id)s AND status = 'running'
"""

#: Any job but a dismissed one: a queued or running job stops, a finished one loses its
#: results.
DISMISS_JOB = """
UPDATE processes.jobs
SET status = 'dismissed', message = 'dismissed by the user', results = NULL,
    finished = coalesce(finished, now()), updated = now(), secrets = NULL
WHERE id = %(id)s AND status <> 'dismissed'
RETURNING *
"""

JOB_STATUS = "SELECT status FROM processes.jobs WHERE id = %(id)s"

#: More of a job's output, its tail kept up to %(max)s characters.
APPEND_LOG = """
INSERT INTO processes.job_logs AS l (job_id, text, dropped)
VALUES (%(id)s, right(%(text)s, %(max)s), %(dropped)s + greatest(0, length(%(text)s) - %(max)s))
ON CONFLICT (job_id) DO UPDATE
SET text = right(l.text || excluded.text, %(max)s),
    dropped = l.dropped + %(dropped)s
        + greatest(0, length(l.text) + length(%(text)s) - %(max)s)
"""

GET_LOG = "SELECT text, dropped FROM processes.job_logs WHERE job_id = %(id)s"

#: A job's output let go: its stream is relayed again from the start (reattached).
CLEAR_LOG = "DELETE FROM processes.job_logs WHERE job_id = %(id)s"

#: One reaper at a time decides about a stalled job (a lock held to the transaction's end),
#: and only while it is still stalled: still `doing` for the worker it was seen with (a
#: job queued again and taken since is another worker's). $1: the job's queue id.
CLAIM_STALLED = """
SELECT pg_try_advisory_xact_lock(hashtext('geocatalog.reap'), (%(id)s %% 2147483647)::int)
   AND EXISTS (SELECT 1 FROM procrastinate_jobs WHERE id = %(id)s AND status = 'doing'
               AND worker_id IS NOT DISTINCT FROM %(worker)s)
"""

#: The Slurm job of a running job, once submitted.
SET_BATCH_JOB = """
UPDATE processes.jobs SET batch_job = %(batch_job)s, updated = now()
WHERE id = %(id)s AND status = 'running'
"""

#: A user's, and a project's, jobs queued or running (the quotas' counts).
#: The submission's quota holders (`user:<name>`, `project:<name>`) locked until its
#: transaction ends, in one order: concurrent submissions of one user or project count
#: and write one after the other (a count taken before another's insert is never used).
LOCK_QUOTA_HOLDERS = """
SELECT pg_advisory_xact_lock(hashtextextended('geocatalog.jobs.quota:' || holder, 0))
FROM (SELECT DISTINCT unnest(%(holders)s::text[]) AS holder ORDER BY 1) AS held
"""

#: The jobs queued or running of each user and each project named; and each user's turn:
#: the lowest queue priority of their jobs waiting (`turn:<name>`; none waiting: no row).
ACTIVE_BY_HOLDER = """
SELECT 'user:' || name AS holder,
       (SELECT count(*) FROM processes.jobs
        WHERE owner = name AND status IN ('accepted', 'running')) AS jobs
FROM unnest(%(owners)s::text[]) AS name
UNION ALL
SELECT 'project:' || name,
       (SELECT count(*) FROM processes.jobs
        WHERE project = name AND status IN ('accepted', 'running'))
FROM unnest(%(projects)s::text[]) AS name
UNION ALL
SELECT 'turn:' || name, min(q.priority)
FROM unnest(%(owners)s::text[]) AS name
JOIN procrastinate.procrastinate_jobs q ON q.status = 'todo'
 AND starts_with(q.lock, 'owner:' || name || ':')
 AND substr(q.lock, length('owner:' || name || ':') + 1) ~ '^[0-9]+$'
GROUP BY name
"""


#: Whether the database answers.
PING = "SELECT 1 AS answered"

#: What the records of the given jobs say about their stored files.
RESULT_OWNERS = """
SELECT id::text, status, provenance FROM processes.jobs WHERE id = ANY(%(ids)s::uuid[])
"""
