-- Deployed processes: every worker hears of a deployment.

-- Every API process and worker keeps the deployed processes in memory: a change is
-- announced to all of them (LISTEN geocatalog_processes), with the id that changed.
CREATE OR REPLACE FUNCTION processes.announce_deployed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('geocatalog_processes', NEW.id);
    RETURN NULL;
END
$$;
