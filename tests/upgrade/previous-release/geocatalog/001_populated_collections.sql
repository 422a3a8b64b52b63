-- SPEC: GET /collections lists only collections with at least one item.
-- A marker row per non-empty collection, kept by triggers on pgstac.items' partitions however
-- items arrive (API, pypgstac COPY straight into a partition), so the listing is one indexed
-- join instead of a probe of every collection's partitions.

CREATE TABLE geocatalog.populated_collections (
    collection text PRIMARY KEY REFERENCES pgstac.collections (id) ON DELETE CASCADE
);
-- pgstac's roles read it (collection search) and cascade into it (collection delete).
GRANT USAGE ON SCHEMA geocatalog TO pgstac_read, pgstac_ingest, pgstac_admin;
GRANT SELECT ON geocatalog.populated_collections TO pgstac_read, pgstac_ingest, pgstac_admin;
GRANT DELETE ON geocatalog.populated_collections TO pgstac_ingest, pgstac_admin;

-- Kept by the search index's triggers on each partition of pgstac.items (migration 004):
-- nothing here touches pgstac's partitions, whose number has no bound. (This migration's
-- first form created row triggers on pgstac.items itself, one lock per partition in one
-- transaction; 004 neutralises them where they exist.)

-- Stock stac-fastapi-pgstac calls `collection_search(jsonb)` unqualified; the API's
-- search_path puts this schema first, so this version answers: pgstac's collection
-- search (same filters, sort, fields, offset paging and links) over non-empty ones.
CREATE FUNCTION geocatalog.collection_search(_search jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path TO pgstac, public
AS $$
DECLARE
    _where text := stac_search_to_where(_search);
    _limit int := search_limit(_search);
    _offset int := search_offset(_search);
    _orderby text := sort_sqlorderby(_search, FALSE, '{id}');
    _fields jsonb := coalesce(_search->'fields', '{}'::jsonb);
    _href text := concat(rtrim(base_url(_search->'conf'), '/'), '/collections');
    _from text := 'collections_asitems c JOIN geocatalog.populated_collections p '
                  'ON p.collection = c.id';
    matched bigint;
    page jsonb;
    links jsonb := '[]'::jsonb;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s WHERE %s', _from, _where) INTO matched;
    EXECUTE format(
        'SELECT coalesce(jsonb_agg(r.doc ORDER BY r.n), ''[]''::jsonb) FROM ('
        '  SELECT jsonb_fields(collectionjson, %L) AS doc, row_number() OVER (ORDER BY %s) AS n'
        '  FROM %s WHERE %s ORDER BY %s LIMIT %L OFFSET %L) r',
        _fields, _orderby, _from, _where, _orderby, _limit, _offset
    ) INTO page;

    IF _offset > 0 THEN
        links := links || jsonb_build_object(
            'rel', 'prev', 'type', 'application/json', 'method', 'GET', 'href', _href,
            'body', jsonb_build_object(
                'offset', greatest(least(_offset, matched) - greatest(_limit, 1), 0)),
            'merge', true);
    END IF;
    IF _limit > 0 AND _offset + _limit < matched THEN
        links := links || jsonb_build_object(
            'rel', 'next', 'type', 'application/json', 'method', 'GET', 'href', _href,
            'body', jsonb_build_object('offset', _offset + _limit),
            'merge', true);
    END IF;

    RETURN jsonb_build_object(
        'collections', page,
        'numberMatched', matched,
        'numberReturned', jsonb_array_length(page),
        'links', links
    );
END;
$$;
