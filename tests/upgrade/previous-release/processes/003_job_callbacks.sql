-- Callbacks (OGC `callback` class): the execution request's `subscriber` URLs, and the
-- process API's root URL the job was submitted through (for the status info's links).
ALTER TABLE processes.jobs ADD COLUMN subscriber jsonb;
ALTER TABLE processes.jobs ADD COLUMN api_url text;
