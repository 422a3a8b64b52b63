-- Stock stac-fastapi-pgstac adds `type = Collection` to every collection search (pgstac keeps
-- catalogs in the collections table too), as a CQL2 clause or, with `query`, a query term.
-- Every collection with items is a collection, and the clause made pgstac build every
-- collection's document to test it (80 ms a page at 5,000 collections): it is taken out
-- before the search (migration 001's function, renamed collection_page, answers it).
ALTER FUNCTION geocatalog.collection_search(jsonb) RENAME TO collection_page;

CREATE FUNCTION geocatalog.collection_search(_search jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path TO pgstac, public
AS $$
DECLARE
    is_collection constant jsonb := '{"op": "=", "args": [{"property": "type"}, "Collection"]}';
    clauses jsonb := _search->'filter';
BEGIN
    IF clauses = is_collection THEN
        _search := _search - 'filter'::text;
    ELSIF clauses->>'op' = 'and' AND jsonb_array_length(clauses->'args') = 2
            AND clauses->'args'->1 = is_collection THEN
        _search := jsonb_set(_search, '{filter}', clauses->'args'->0);
    END IF;
    IF _search->'query'->'type' = '{"eq": "Collection"}'::jsonb THEN
        _search := CASE WHEN _search->'query' = '{"type": {"eq": "Collection"}}'::jsonb
                        THEN _search - 'query'::text
                        ELSE jsonb_set(_search, '{query}', (_search->'query') - 'type'::text)
                   END;
    END IF;
    RETURN geocatalog.collection_page(_search);
END;
$$;
