-- Least privilege: one role per part of the service (README "Database roles"). Applied by
-- every `geocatalog migrate` after all schemas, by their owner, so it is idempotent and
-- covers tables that later migrations add. The roles are groups (NOLOGIN unless the
-- embedded cluster made them login roles): deployments grant them to their login users.
DO $$
DECLARE
    part text;
BEGIN
    FOREACH part IN ARRAY ARRAY['geocatalog_api', 'geocatalog_worker', 'geocatalog_job'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = part) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', part);
        END IF;
    END LOOP;
END $$;

-- Every part may ask whether the database is ready (our bookkeeping, pgstac's version).
GRANT USAGE ON SCHEMA geocatalog, pgstac TO geocatalog_api, geocatalog_worker, geocatalog_job;
GRANT SELECT ON geocatalog.schema_migrations, geocatalog.schema_functions, pgstac.migrations
    TO geocatalog_api, geocatalog_worker, geocatalog_job;
GRANT EXECUTE ON FUNCTION pgstac.get_version() TO geocatalog_api, geocatalog_worker, geocatalog_job;

-- The catalog: the API and job processes (publishing) read and write items, collections
-- and catalogs; pgstac's own writer role holds its rights (pgstac_ingest). Our triggers on
-- pgstac's items keep geocatalog.populated_collections.
GRANT pgstac_ingest TO geocatalog_api, geocatalog_job;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA geocatalog
    TO geocatalog_api, geocatalog_job;
REVOKE INSERT, UPDATE, DELETE ON geocatalog.schema_migrations, geocatalog.schema_functions
    FROM geocatalog_api, geocatalog_job;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA geocatalog TO geocatalog_api, geocatalog_job;
GRANT USAGE ON SCHEMA catalogs TO geocatalog_api, geocatalog_job;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA catalogs
    TO geocatalog_api, geocatalog_job;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA catalogs TO geocatalog_api, geocatalog_job;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA catalogs TO geocatalog_api, geocatalog_job;

-- Jobs: the API submits, lists and dismisses them (and runs the in-process worker); the
-- workers take them from the queue and keep their records. Job processes never see them:
-- the records hold other jobs' inputs and encrypted secrets.
GRANT USAGE ON SCHEMA processes, procrastinate TO geocatalog_api, geocatalog_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA processes, procrastinate
    TO geocatalog_api, geocatalog_worker;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA processes, procrastinate
    TO geocatalog_api, geocatalog_worker;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA processes, procrastinate
    TO geocatalog_api, geocatalog_worker;

-- Browser sessions (their tokens, sealed): the API alone; workers and jobs never see them.
-- (Migrated by an earlier release's sets, a database has no such schema yet.)
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'sessions') THEN
        GRANT USAGE ON SCHEMA sessions TO geocatalog_api;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA sessions TO geocatalog_api;
    END IF;
END $$;

-- Governance: the API and publishing jobs read the vocabularies and write proposals and
-- the items held in them; vocabularies are loaded by their owner (`geocatalog vocabulary`).
-- (Its schema exists once its migrations ran: a database migrated by an older release's
-- sets has none.)
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'governance') THEN
        GRANT USAGE ON SCHEMA governance TO geocatalog_api, geocatalog_job;
        GRANT SELECT ON ALL TABLES IN SCHEMA governance TO geocatalog_api, geocatalog_job;
        GRANT INSERT, UPDATE, DELETE ON governance.proposals, governance.held_items
            TO geocatalog_api, geocatalog_job;
        GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA governance
            TO geocatalog_api, geocatalog_job;
    END IF;
END $$;

-- Subscriptions: the API's processes keep them, match the outbox and deliver (a database
-- migrated by a release before them has no such schema).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_namespace WHERE nspname = 'subscriptions') THEN
        GRANT USAGE ON SCHEMA subscriptions TO geocatalog_api;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA subscriptions
            TO geocatalog_api;
        GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA subscriptions TO geocatalog_api;
        GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA subscriptions TO geocatalog_api;
    END IF;
END $$;
