-- Process ids are unique without regard to case (`Echo` beside the built-in `echo` misled
-- users). Deployed processes whose ids differ only in case stop the migration, named: an
-- admin undeploys one of them, then migrates again.
DO $$
DECLARE
    twins text;
BEGIN
    SELECT string_agg(ids, '; ') INTO twins FROM (
        SELECT string_agg(id, ', ' ORDER BY id) AS ids FROM processes.deployed
        WHERE retired IS NULL GROUP BY lower(id) HAVING count(*) > 1) AS t;
    IF twins IS NOT NULL THEN
        RAISE EXCEPTION 'deployed processes whose ids differ only in case: %; undeploy one '
                        'of each, then migrate again', twins;
    END IF;
END;
$$;
CREATE UNIQUE INDEX deployed_current_without_case ON processes.deployed (lower(id))
    WHERE retired IS NULL;
