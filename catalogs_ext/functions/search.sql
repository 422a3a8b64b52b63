-- A catalog's subtree as a search.

-- 002's subtree filter, of the catalogs of the subtree the reader reads.
CREATE OR REPLACE FUNCTION catalogs.subtree_filter(catalog_path text, reader jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $$
WITH RECURSIVE root AS (
    SELECT catalogs.readable_pk(catalog_path, reader) AS pk
), subtree AS (
    SELECT pk FROM root WHERE pk IS NOT NULL
    UNION ALL
    SELECT c.pk FROM catalogs.catalogs c JOIN subtree s ON c.parent_pk = s.pk
    WHERE catalogs.may_read(c.visibility, c.owner, c.project, reader)
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
    WHEN (SELECT pk FROM root) IS NULL THEN NULL
    WHEN (SELECT count(*) FROM clauses) = 0 THEN '[]'::jsonb
    WHEN (SELECT count(*) FROM clauses) = 1 THEN (SELECT clause FROM clauses)
    ELSE jsonb_build_object('op', 'or', 'args', (SELECT jsonb_agg(clause) FROM clauses))
END
$$;

-- 003's scope, for the search body's reader (the API sets it: items are filtered by it too).
CREATE OR REPLACE FUNCTION catalogs.scope(body jsonb, catalog_path text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    subtree jsonb := catalogs.subtree_filter(catalog_path, body->'reader');
BEGIN
    IF subtree IS NULL THEN
        RETURN NULL;
    END IF;
    IF subtree = '[]'::jsonb THEN  -- nothing linked: no item has no id
        subtree := '{"op": "isNull", "args": [{"property": "id"}]}';
    END IF;
    IF body ? 'filter' AND body->'filter' <> 'null'::jsonb THEN
        subtree := jsonb_build_object('op', 'and',
                                      'args', jsonb_build_array(body->'filter', subtree));
    END IF;
    RETURN body || jsonb_build_object('filter', subtree, 'filter-lang', 'cql2-json');
END
$$;
