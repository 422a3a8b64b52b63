-- The public root URL of the service the job was submitted through, so that a process
-- can name the resources it creates (e.g. the URLs of published items).
ALTER TABLE processes.jobs ADD COLUMN service_url text;
