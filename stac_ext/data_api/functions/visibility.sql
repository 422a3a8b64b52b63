-- Who reads an item (the access table of `stac_ext/platform/access.py`, in SQL).

-- Who reads an item, as the search index keeps it (`readers`): NULL for a public item (or
-- one without a visibility), `user:<owner>` for a private one, `project:<group>`. Anything
-- else (an unknown visibility, `project` without its group, a private item without an
-- owner) reads as private, which only administrators read: fail closed.
CREATE OR REPLACE FUNCTION geocatalog.item_readers(properties jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN coalesce(properties->>'visibility', 'public') = 'public' THEN NULL
        WHEN properties->>'visibility' = 'project'
             AND jsonb_typeof(properties->'project') = 'string'
            THEN 'project:' || (properties->>'project')
        WHEN properties->>'visibility' = 'private'
             AND coalesce(properties->>'owner', '') <> ''
            THEN 'user:' || (properties->>'owner')
        ELSE 'private' END
$$;

-- The caller of a read, as the API puts it in a search (`_search->'reader'`, never the
-- client's): absent or {} anonymous; {"user": name, "groups": [...]}; {"all": true} an
-- administrator. What it reads beyond public items: those `readers` keys (NULL: all).
-- (plpgsql: its plans are kept by the session, where an SQL function that cannot be inlined
-- is planned at each call: a quarter of a single item's read)
CREATE OR REPLACE FUNCTION geocatalog.reader_keys(reader jsonb) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF coalesce(reader->>'all', '') = 'true' THEN
        RETURN NULL;
    ELSIF coalesce(reader->>'user', '') = '' THEN
        RETURN '{}'::text[];
    END IF;
    RETURN ARRAY['user:' || (reader->>'user')] || ARRAY(
        SELECT 'project:' || g FROM jsonb_array_elements_text(
            CASE jsonb_typeof(reader->'groups') WHEN 'array' THEN reader->'groups'
                 ELSE '[]' END) g);
END;
$$;

-- The reader's condition over the search index, as SQL text: comparisons of its columns the
-- planner sees, the keys a literal (no function called per row). An item's owner reads it
-- whatever its visibility (a project item, its owner out of the project since).
CREATE OR REPLACE FUNCTION geocatalog.readable(reader jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    keys text[] := geocatalog.reader_keys(reader);
BEGIN
    IF keys IS NULL THEN
        RETURN 'TRUE';
    ELSIF keys = '{}' THEN
        RETURN 'readers IS NULL';
    END IF;
    RETURN format('(readers IS NULL OR readers = ANY (%L::text[]) '
                  'OR owner = %L)', keys, reader->>'user');
END;
$$;

-- The same rule for one item's properties (a single item read, a catalog's item links):
-- true or false, never NULL (a private item without an owner compared NULL with the
-- reader's name, and `NOT may_read` let a signed-in reader through).
CREATE OR REPLACE FUNCTION geocatalog.may_read(properties jsonb, reader jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(
        geocatalog.item_readers(properties) IS NULL
        OR geocatalog.reader_keys(reader) IS NULL
        OR geocatalog.item_readers(properties) = ANY (geocatalog.reader_keys(reader))
        OR (coalesce(reader->>'user', '') <> '' AND properties->>'owner' = reader->>'user'),
        false)
$$;
