-- Who reads a catalog (the access table of `stac_ext/platform/access.py`, in SQL).

-- One catalog's own rule (not its ancestors'): true or false, never NULL (a project
-- catalog without its project would compare NULL, and `NOT may_read` let a reader by).
CREATE OR REPLACE FUNCTION catalogs.may_read(visibility text, owner text, project text, reader jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(
        visibility = 'public'
        OR coalesce(reader->>'all', '') = 'true'
        OR (coalesce(reader->>'user', '') <> ''
            AND (owner = reader->>'user'
                 OR (visibility = 'project' AND jsonb_typeof(reader->'groups') = 'array'
                     AND reader->'groups' ? project))),
        false)
$$;

-- The catalog at `catalog_path` if the reader may read it and every catalog above it;
-- else NULL, as for a missing one.
CREATE OR REPLACE FUNCTION catalogs.readable_pk(catalog_path text, reader jsonb) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT c.pk FROM catalogs.catalogs c
    WHERE c.path = catalog_path
      AND NOT EXISTS (
          SELECT 1 FROM catalogs.catalogs a
          WHERE a.path = ANY (ARRAY(
                    SELECT array_to_string(parts[1:n], '/')
                    FROM (SELECT string_to_array(catalog_path, '/') AS parts) p,
                         generate_series(1, cardinality(p.parts)) n))
            AND NOT catalogs.may_read(a.visibility, a.owner, a.project, reader))
$$;
