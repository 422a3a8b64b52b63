-- OGC API Processes job records. The job engine (procrastinate, schema `procrastinate`)
-- keeps its own queue state; this table is what the API serves.
CREATE SCHEMA processes;

CREATE TABLE processes.jobs (
    id uuid PRIMARY KEY,
    process_id text NOT NULL,
    owner text NOT NULL,
    project text,  -- NULL: the owner's personal project
    status text NOT NULL DEFAULT 'accepted'
        CHECK (status IN ('accepted', 'running', 'successful', 'failed', 'dismissed')),
    message text,
    progress int CHECK (progress BETWEEN 0 AND 100),
    inputs jsonb NOT NULL,       -- secret values replaced by a placeholder
    secrets text,                -- the secret values, encrypted (JWE); erased when the job ends
    resources jsonb,             -- limits and requests, as given and as applied
    results jsonb,
    queue_job_id bigint,         -- the engine's job
    attempts int NOT NULL DEFAULT 0,
    created timestamptz NOT NULL DEFAULT now(),
    started timestamptz,
    finished timestamptz,
    updated timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_owner_idx ON processes.jobs (owner, created DESC);
CREATE INDEX jobs_project_idx ON processes.jobs (project, created DESC) WHERE project IS NOT NULL;
CREATE INDEX jobs_active_idx ON processes.jobs (status) WHERE status IN ('accepted', 'running');
