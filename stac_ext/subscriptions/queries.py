"""Named SQL of the subscriptions (the matcher and the upkeep are SQL functions:
functions/match.sql, functions/upkeep.sql)."""

#: A subscription as its owner reads it.
_DOCUMENT = """
s.id, s.owner, s.title, s.search, s.kinds, s.webhook, s.status, s.paused_reason, s.job,
s.secret_version, s.service_url, s.reader, s.created, s.updated, g.last_number,
g.delivered_number, g.failures, g.failing_since, g.next_attempt, g.last_error, g.dropped
"""
_SUBSCRIPTIONS = """
subscriptions.subscriptions s JOIN subscriptions.progress g ON g.subscription_id = s.id
"""

#: $1 id, $2 owner, $3 title, $4 search (JSON), $5 catalog path, $6 kinds, $7 reader (JSON),
#: $8 webhook, $9 service URL, $10 job (JSON), $11 its secrets (sealed), $12 the owner's
#: most subscriptions: no row when she has as many already.
CREATE = f"""
WITH s AS (
    INSERT INTO subscriptions.subscriptions (
        id, owner, title, search, collections, geometry, starts, ends, items_owner,
        condition, catalog, kinds, reader, reader_keys, webhook, service_url, job,
        job_secrets)
    SELECT $1, $2, $3, $4::text::jsonb, c.collections, c.geometry, c.starts, c.ends,
           c.items_owner, c.condition, $5, $6::text[], $7::text::jsonb,
           geocatalog.reader_keys($7::text::jsonb), $8, $9, $10::text::jsonb, $11
    FROM subscriptions.criteria($4::text::jsonb) c
    WHERE (SELECT count(*) FROM subscriptions.subscriptions WHERE owner = $2) < $12
    RETURNING *),
g AS (
    INSERT INTO subscriptions.progress (subscription_id, sending)
    SELECT id, webhook IS NOT NULL FROM s
    RETURNING *)
SELECT {_DOCUMENT} FROM s JOIN g ON g.subscription_id = s.id
"""

#: Which of the collections $1 do not exist.
UNKNOWN_COLLECTIONS = """
SELECT coalesce(array_agg(c ORDER BY c), '{}') FROM unnest($1::text[]) c
WHERE NOT EXISTS (SELECT FROM pgstac.collections WHERE id = c)
"""

#: $1 id, $2 the caller, $3 whether the caller is an administrator (who reads them all).
GET = f"""
SELECT {_DOCUMENT} FROM {_SUBSCRIPTIONS}
WHERE s.id = $1 AND (s.owner = $2 OR $3)
"""

#: Her subscriptions, oldest first: $1 owner, $2 limit, $3 offset.
LIST = f"""
SELECT {_DOCUMENT} FROM {_SUBSCRIPTIONS}
WHERE s.owner = $1 ORDER BY s.created, s.id LIMIT $2 OFFSET $3
"""

#: Everything a change may set, the search's criteria made again: $1 id, $2 title,
#: $3 search, $4 catalog, $5 kinds, $6 reader, $7 webhook, $8 status, $9 why it is paused,
#: $10 whether its failures are forgotten (resumed).
CHANGE = f"""
WITH s AS (
    UPDATE subscriptions.subscriptions s
    SET title = $2, search = $3::text::jsonb, collections = c.collections,
        geometry = c.geometry, starts = c.starts, ends = c.ends,
        items_owner = c.items_owner, condition = c.condition,
        catalog = $4, kinds = $5::text[], reader = $6::text::jsonb,
        reader_keys = geocatalog.reader_keys($6::text::jsonb), webhook = $7, status = $8,
        paused_reason = $9, updated = now()
    FROM subscriptions.criteria($3::text::jsonb) c
    WHERE s.id = $1
    RETURNING s.*),
g AS (
    UPDATE subscriptions.progress g
    SET sending = $7 IS NOT NULL AND $8 = 'active',
        failures = CASE WHEN $10 THEN 0 ELSE g.failures END,
        failing_since = CASE WHEN $10 THEN NULL ELSE g.failing_since END,
        next_attempt = CASE WHEN $10 THEN NULL ELSE g.next_attempt END
    WHERE g.subscription_id = $1
    RETURNING g.*)
SELECT {_DOCUMENT} FROM s JOIN g ON g.subscription_id = s.id
"""

#: A new secret: $1 id; the new version.
NEW_SECRET = """
UPDATE subscriptions.subscriptions SET secret_version = secret_version + 1, updated = now()
WHERE id = $1 RETURNING secret_version
"""

DELETE = "DELETE FROM subscriptions.subscriptions WHERE id = $1"

#: A subscription's events after number $2, at most $5, each with whether the reader
#: ($3 reader JSON, $4 user name) may read its item: as it is now, or as it was when it
#: went (a removed item).
_EVENTS = """
SELECT e.number, e.kind, e.collection, e.item_id, e.happened,
       subscriptions.may_read(
           CASE WHEN i.id IS NULL THEN e.readers ELSE i.readers END,
           CASE WHEN i.id IS NULL THEN e.owner ELSE i.owner END, {keys}, $4) AS readable
FROM subscriptions.events e
LEFT JOIN geocatalog.search_items i
    ON e.kind <> 'deleted' AND i.collection = e.collection AND i.id = e.item_id
WHERE e.subscription_id = $1 AND e.number > $2
ORDER BY e.number LIMIT $5
"""
#: For a reader as JSON ($3).
FEED = _EVENTS.format(keys="geocatalog.reader_keys($3::text::jsonb)")
#: For the reader keys a subscription keeps ($3).
NEXT_EVENTS = _EVENTS.format(keys="$3::text[]")

#: Her last webhook attempts: $1 id, $2 limit.
DELIVERIES = """
SELECT attempted, number, event_id, kind, item, status, error, milliseconds
FROM subscriptions.deliveries WHERE subscription_id = $1
ORDER BY attempt DESC LIMIT $2
"""

#: Her standing job's last windows: $1 id, $2 limit.
RUNS = """
SELECT number, status, opened, closes, closed, items, attempts, next_try, job_id, job_url,
       jobs, message, updated
FROM subscriptions.runs WHERE subscription_id = $1
ORDER BY number DESC LIMIT $2
"""

# -- the dispatcher -----------------------------------------------------------------------

#: Whether anything may be waiting: item events, webhooks due, windows or runs pending.
ANYTHING = """
SELECT EXISTS (SELECT FROM geocatalog.item_events)
    OR EXISTS (SELECT FROM subscriptions.progress
               WHERE sending AND last_number > delivered_number)
    OR EXISTS (SELECT FROM subscriptions.runs
               WHERE status IN ('open', 'due', 'submitting', 'submitted'))
"""

#: A batch of the outbox matched ($1 rows at most): how many were taken, NULL when another
#: matcher has it.
MATCH = "SELECT subscriptions.match($1)"

#: Webhooks with events to send and no attempt due later, leased to this process for $2
#: seconds: $1 at most.
CLAIM_WEBHOOKS = """
WITH leased AS (
    UPDATE subscriptions.progress g
    SET lease_until = now() + $2::float8 * interval '1 second'
    WHERE g.subscription_id IN (
        SELECT subscription_id FROM subscriptions.progress
        WHERE sending AND last_number > delivered_number
          AND (next_attempt IS NULL OR next_attempt <= now())
          AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt NULLS FIRST
        LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING g.*)
SELECT s.id, s.webhook, s.secret_version, s.service_url, s.reader_keys, s.owner,
       g.delivered_number, g.failures, g.failing_since
FROM leased g JOIN subscriptions.subscriptions s ON s.id = g.subscription_id
"""

#: Attempts of a webhook: $1 id and arrays $2 numbers, $3 event ids, $4 kinds, $5 items,
#: $6 statuses, $7 errors, $8 milliseconds, $9 times.
ATTEMPTS = """
INSERT INTO subscriptions.deliveries (subscription_id, number, event_id, kind, item, status,
                                      error, milliseconds, attempted)
SELECT $1, * FROM unnest($2::bigint[], $3::uuid[], $4::text[], $5::text[], $6::int[],
                         $7::text[], $8::int[], $9::timestamptz[])
"""

#: A webhook's batch sent: $1 id, $2 sent up to number, $3 failures in a row now, $4 failing
#: since, $5 next attempt, $6 last error, $7 paused (why), its lease released.
SENT = """
UPDATE subscriptions.progress
SET delivered_number = greatest(delivered_number, $2), failures = $3, failing_since = $4,
    next_attempt = $5, last_error = coalesce($6, last_error), lease_until = NULL,
    sending = sending AND $7::text IS NULL
WHERE subscription_id = $1
"""
#: A webhook paused by the service: $1 id, $2 why.
PAUSED = """
UPDATE subscriptions.subscriptions SET status = 'paused', paused_reason = $2, updated = now()
WHERE id = $1
"""

#: Windows whose time is up: due.
CLOSE_WINDOWS = """
UPDATE subscriptions.runs SET status = 'due', closed = now(), updated = now()
WHERE status = 'open' AND closes <= now()
"""

#: A due run taken by this process (a submission begins): at most one at a time, the
#: oldest first.
CLAIM_RUN = """
UPDATE subscriptions.runs r
SET status = 'submitting', claimed = now(), attempts = r.attempts + 1, updated = now()
FROM (SELECT subscription_id, number FROM subscriptions.runs
      WHERE status = 'due' AND (next_try IS NULL OR next_try <= now())
      ORDER BY next_try NULLS FIRST, opened
      LIMIT 1 FOR UPDATE SKIP LOCKED) d,
     subscriptions.subscriptions s
WHERE r.subscription_id = d.subscription_id AND r.number = d.number
  AND s.id = r.subscription_id
RETURNING r.subscription_id, r.number, r.status, r.attempts, r.claimed, r.jobs, s.owner,
          s.reader, s.job, s.job_secrets, s.service_url
"""

#: A window's items: $1 subscription, $2 window.
RUN_ITEMS = """
SELECT collection, item_id FROM subscriptions.run_items
WHERE subscription_id = $1 AND number = $2 ORDER BY collection, item_id
"""

# The changes of a run below apply only while it is as its process read it: its status and
# its claim (`claimed`, new at each claim). Every API process follows and takes up runs, so
# another may have moved it on meanwhile (taken up the same cut-short submission, followed
# the same job, claimed it again): a change made from the older state would record a job
# twice, or make a window due while its next submission is under way (a second job).

#: A run's job recorded: $1 subscription, $2 window, $3 job id, $4 its URL, $5 its claim.
RUN_SUBMITTED = """
UPDATE subscriptions.runs
SET status = 'submitted', job_id = $3::text, job_url = $4, jobs = jobs || $3::text,
    message = NULL, next_try = NULL, updated = now()
WHERE subscription_id = $1 AND number = $2 AND status = 'submitting' AND claimed = $5
"""

#: A run's outcome: $1 subscription, $2 window, $3 status (`due` again, `successful`,
#: `failed`), $4 its words, $5 when to try again (due); $6 its status and $7 its claim as
#: its process read them.
RUN_STATUS = """
UPDATE subscriptions.runs
SET status = $3, message = $4, next_try = $5, updated = now()
WHERE subscription_id = $1 AND number = $2 AND status = $6 AND claimed = $7
"""

#: A run refused for now (quotas, a busy service): the same attempt at $3, saying $4; $5
#: its claim.
RUN_WAITS = """
UPDATE subscriptions.runs
SET status = 'due', attempts = attempts - 1, next_try = $3, message = $4, updated = now()
WHERE subscription_id = $1 AND number = $2 AND status = 'submitting' AND claimed = $5
"""

#: A cut-short submission's job, found: $1 subscription, $2 window, $3 job id, $4 its URL,
#: $5 the claim it was cut short in.
RUN_TAKEN_UP = """
UPDATE subscriptions.runs
SET status = 'submitted', job_id = $3::text, job_url = $4, jobs = jobs || $3::text,
    next_try = NULL, updated = now()
WHERE subscription_id = $1 AND number = $2 AND status = 'submitting' AND claimed = $5
"""

#: Runs whose job runs: the oldest looked at first.
SUBMITTED_RUNS = """
SELECT r.subscription_id, r.number, r.status, r.attempts, r.claimed, r.job_id, r.job_url,
       s.owner, s.reader, s.job, s.service_url
FROM subscriptions.runs r JOIN subscriptions.subscriptions s ON s.id = r.subscription_id
WHERE r.status = 'submitted' AND (r.next_try IS NULL OR r.next_try <= now())
ORDER BY r.next_try NULLS FIRST LIMIT $1
"""

#: A submitted run looked at again later: $1 subscription, $2 window, $3 when.
RUN_LATER = """
UPDATE subscriptions.runs SET next_try = $3 WHERE subscription_id = $1 AND number = $2
"""

#: Submissions whose process stopped before they were recorded ($1 seconds ago at least).
STALE_SUBMISSIONS = """
SELECT r.subscription_id, r.number, r.status, r.claimed, r.jobs, s.owner, s.reader, s.job,
       s.service_url
FROM subscriptions.runs r JOIN subscriptions.subscriptions s ON s.id = r.subscription_id
WHERE r.status = 'submitting' AND r.claimed < now() - $1::float8 * interval '1 second'
"""

#: Job ids already recorded by the subscription's runs: $1 subscription.
RECORDED_JOBS = """
SELECT coalesce(array_agg(j), '{}') FROM subscriptions.runs r, unnest(r.jobs) j
WHERE r.subscription_id = $1
"""

#: $1 days kept, $2 backlog, $3 attempts kept.
PRUNE = "SELECT subscriptions.prune($1::float8 * interval '1 day', $2, $3)"
