-- Item search inside a subtree is the data API's own search (of any number of collections)
-- with the subtree's filter: this gives the search body, the caller runs the search. NULL
-- when the catalog does not exist; a subtree that links nothing matches nothing.
-- Items are known by the data API's search index (geocatalog.search_items, same keys as
-- pgstac.items, one table however many partitions pgstac has).
CREATE FUNCTION catalogs.scope(body jsonb, catalog_path text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    subtree jsonb := catalogs.subtree_filter(catalog_path);
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

GRANT EXECUTE ON FUNCTION catalogs.scope(jsonb, text) TO pgstac_read, pgstac_ingest, pgstac_admin;
DROP FUNCTION catalogs.search(jsonb, text);
