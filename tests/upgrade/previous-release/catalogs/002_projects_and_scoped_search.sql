-- Project catalogs, reserved ids, and item search inside a subtree.

-- The project (a group of its creator's token) whose members govern the catalog as its
-- owner does; NULL: a personal catalog. Children inherit it unless they name another.
ALTER TABLE catalogs.catalogs ADD COLUMN project text;

-- Ids starting with `_` are reserved (`{path}/_search`); `.` and `..` would break
-- relative links. Existing rows are left as they are (NOT VALID).
ALTER TABLE catalogs.catalogs ADD CONSTRAINT catalogs_id_reserved
    CHECK (id ~ '^[A-Za-z0-9.-][A-Za-z0-9_.-]*$' AND id NOT IN ('.', '..')) NOT VALID;

-- The CQL2-JSON filter matching what the subtree at `catalog_path` links: items linked
-- with `rel: item` anywhere below it (one clause per collection), and the items of
-- collections linked with `rel: child`. NULL when the catalog does not exist; `[]` when
-- the subtree links nothing.
CREATE FUNCTION catalogs.subtree_filter(catalog_path text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
WITH RECURSIVE root AS (
    SELECT pk FROM catalogs.catalogs WHERE path = catalog_path
), subtree AS (
    SELECT pk FROM root
    UNION ALL
    SELECT c.pk FROM catalogs.catalogs c JOIN subtree s ON c.parent_pk = s.pk
), targets AS (
    SELECT DISTINCT l.collection_id, l.item_id
    FROM catalogs.links l JOIN subtree s ON l.catalog_pk = s.pk
), clauses AS (
    SELECT jsonb_build_object('op', 'in', 'args', jsonb_build_array(
               jsonb_build_object('property', 'collection'), jsonb_agg(collection_id)))
           AS clause
    FROM targets WHERE item_id IS NULL HAVING count(*) > 0
    UNION ALL
    SELECT jsonb_build_object('op', 'and', 'args', jsonb_build_array(
               jsonb_build_object('op', '=', 'args', jsonb_build_array(
                   jsonb_build_object('property', 'collection'), collection_id)),
               jsonb_build_object('op', 'in', 'args', jsonb_build_array(
                   jsonb_build_object('property', 'id'), jsonb_agg(item_id)))))
    FROM targets WHERE item_id IS NOT NULL GROUP BY collection_id
)
SELECT CASE
    WHEN NOT EXISTS (SELECT 1 FROM root) THEN NULL
    WHEN (SELECT count(*) FROM clauses) = 0 THEN '[]'::jsonb
    WHEN (SELECT count(*) FROM clauses) = 1 THEN (SELECT clause FROM clauses)
    ELSE jsonb_build_object('op', 'or', 'args', (SELECT jsonb_agg(clause) FROM clauses))
END
$$;

-- pgstac's item search limited to the subtree at `catalog_path`: the request's own filter
-- (CQL2-JSON) AND the subtree's, so `collections`, `ids`, `bbox`, ... narrow it further.
-- One statement per page; NULL when the catalog does not exist.
CREATE FUNCTION catalogs.search(body jsonb, catalog_path text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    scope jsonb := catalogs.subtree_filter(catalog_path);
BEGIN
    IF scope IS NULL THEN
        RETURN NULL;
    END IF;
    IF scope = '[]'::jsonb THEN  -- nothing linked: an empty page
        RETURN '{"type": "FeatureCollection", "features": [], "links": [],
                 "numberMatched": 0, "numberReturned": 0}'::jsonb;
    END IF;
    IF body ? 'filter' AND body->'filter' <> 'null'::jsonb THEN
        scope := jsonb_build_object('op', 'and', 'args', jsonb_build_array(body->'filter', scope));
    END IF;
    RETURN pgstac.search(body || jsonb_build_object('filter', scope, 'filter-lang', 'cql2-json'));
END
$$;

GRANT EXECUTE ON FUNCTION catalogs.subtree_filter(text), catalogs.search(jsonb, text)
    TO pgstac_read, pgstac_ingest, pgstac_admin;
