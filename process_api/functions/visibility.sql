-- Who reads a job (the access table of `stac_ext/platform/access.py`, in SQL): its owner,
-- the members of its project, an administrator. `reader` is the caller as every read's
-- SQL takes it (`Caller.reader`): NULL anonymous, {"all": true} an administrator, else
-- {"user": name, "groups": [...]}.

-- The reader's groups (plpgsql: called with a query's parameter, it is computed once at
-- planning, and `project = ANY (...)` reads the project index).
CREATE OR REPLACE FUNCTION processes.reader_groups(reader jsonb) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF coalesce(jsonb_typeof(reader->'groups'), '') <> 'array' THEN
        RETURN '{}'::text[];
    END IF;
    RETURN ARRAY(SELECT jsonb_array_elements_text(reader->'groups'));
END;
$$;

-- The one rule of every job read (a job, the job list); inlined into the query that calls
-- it, so the owner's and the project's indexes serve.
CREATE OR REPLACE FUNCTION processes.may_read(owner text, project text, reader jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(reader->>'all', '') = 'true'
        OR (coalesce(reader->>'user', '') <> ''
            AND (owner = reader->>'user'
                 OR (project IS NOT NULL AND project = ANY (processes.reader_groups(reader)))))
$$;
