-- Processes deployed through the API (OGC API Processes Part 2): one row per revision. A
-- replacement adds a revision and retires the one before; an undeployment retires the
-- last. Jobs keep the revision they were submitted with (`jobs.process_revision`): a job
-- queued before a replacement runs what its caller saw.
CREATE TABLE processes.deployed (
    id text NOT NULL,
    revision int NOT NULL,
    owner text NOT NULL,
    project text,  -- `project` visibility: its members see and run it
    visibility text NOT NULL CHECK (visibility IN ('private', 'project', 'public')),
    media_type text NOT NULL,  -- of the package as deployed
    package text NOT NULL,     -- the request body as deployed (`/processes/{id}/package`)
    cwl text NOT NULL,         -- the CWL document its jobs run
    description jsonb NOT NULL,  -- title, description, version, inputs and outputs schemas
    created timestamptz NOT NULL DEFAULT now(),
    retired timestamptz,
    PRIMARY KEY (id, revision),
    CHECK ((visibility = 'project') = (project IS NOT NULL))
);
CREATE UNIQUE INDEX deployed_current ON processes.deployed (id) WHERE retired IS NULL;

ALTER TABLE processes.jobs ADD COLUMN process_revision int;
CREATE TRIGGER deployed_announced AFTER INSERT OR UPDATE ON processes.deployed
    FOR EACH ROW EXECUTE FUNCTION processes.announce_deployed();
