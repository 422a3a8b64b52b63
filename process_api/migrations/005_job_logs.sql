-- What a job's process wrote to stdout and stderr (secrets scrubbed), its tail kept up to
-- a bound (`dropped`: how many characters before it were let go). A table of its own: job
-- lists and status reads never carry the logs.
CREATE TABLE processes.job_logs (
    job_id uuid PRIMARY KEY REFERENCES processes.jobs ON DELETE CASCADE,
    text text NOT NULL,
    dropped bigint NOT NULL DEFAULT 0
);
