-- A user's and a project's jobs queued or running, counted at each submission (quotas).
CREATE INDEX jobs_active_owner_idx ON processes.jobs (owner)
    WHERE status IN ('accepted', 'running');
CREATE INDEX jobs_active_project_idx ON processes.jobs (project)
    WHERE project IS NOT NULL AND status IN ('accepted', 'running');
