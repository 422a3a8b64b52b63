-- The collections list: only collections with items, one query a page.

CREATE OR REPLACE FUNCTION geocatalog.collection_search(_search jsonb DEFAULT '{}'::jsonb)
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

-- The collections listing (001's collection_page): those with an item the reader reads.
CREATE OR REPLACE FUNCTION geocatalog.collection_page(_search jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path TO pgstac, public
AS $$
DECLARE
    keys text[] := geocatalog.reader_keys(_search->'reader');
    _where text := format(
        '(%s) AND EXISTS (SELECT 1 FROM geocatalog.populated_collections p '
        'WHERE p.collection = c.id%s)', stac_search_to_where(_search - 'reader'),
        CASE WHEN keys IS NULL THEN ''
             ELSE format(' AND p.readers = ANY (%L::text[])', ARRAY['public'] || keys) END);
    _limit int := search_limit(_search);
    _offset int := search_offset(_search);
    _orderby text := sort_sqlorderby(_search, FALSE, '{id}');
    _fields jsonb := coalesce(_search->'fields', '{}'::jsonb);
    _href text := concat(rtrim(base_url(_search->'conf'), '/'), '/collections');
    _from text := 'geocatalog.collections_asitems c';  -- (extents across 180° as two boxes)
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

-- A collection's spatial extent as a geometry: `_stored` (pgstac's envelope of its first
-- box), or the two boxes either side of 180° when that box crosses the antimeridian (west
-- east of east, 2D or 3D).
CREATE OR REPLACE FUNCTION geocatalog.extent_geometry(_collection jsonb, _stored geometry)
RETURNS geometry
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(b) = 'array' AND jsonb_array_length(b) IN (4, 6)
                     AND (b->>0)::float > (b->>(jsonb_array_length(b) / 2))::float
        THEN ST_SetSRID(ST_Collect(
            ST_MakeEnvelope((b->>0)::float, (b->>1)::float,
                            180, (b->>(jsonb_array_length(b) / 2 + 1))::float),
            ST_MakeEnvelope(-180, (b->>1)::float, (b->>(jsonb_array_length(b) / 2))::float,
                            (b->>(jsonb_array_length(b) / 2 + 1))::float)), 4326)
        ELSE _stored END
    FROM (SELECT _collection->'extent'->'spatial'->'bbox'->0 AS b) x
$$;
