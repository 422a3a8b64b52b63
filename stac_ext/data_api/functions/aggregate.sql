-- Aggregation: counts and facets of a search.

-- An ISO 8601 UTC instant as STAC writes them (no fraction when there is none).
CREATE OR REPLACE FUNCTION geocatalog.utc_text(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
                          '\.?0+$', '') || 'Z'
$$;

-- The aggregations named in `_names` of the items `_search` matches, in that order, each
-- {name, data_type, value} or {name, data_type, buckets, overflow}. A name ending in
-- `_frequency` that is none of collection_frequency, datetime_frequency (by month),
-- datetime_yearly_frequency counts the values of the property before the suffix
-- (`platform_frequency`: properties.platform); the API offers only those it is set to.
-- Term buckets: the `_buckets` most frequent, most frequent first; `overflow`: the matches
-- in none of them (beyond them, or without the property).
CREATE OR REPLACE FUNCTION geocatalog.aggregate(_search jsonb, _names text[], _buckets int DEFAULT 1000)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    _where text := geocatalog.search_where(_search);
    _collections text[] := to_text_array(_search->'collections');
    single record;
    name text;
    key_sql text;
    in_time boolean;
    found jsonb;
    answers jsonb := '[]'::jsonb;
BEGIN
    IF cardinality(_collections) = 1 THEN  -- as search(): the one collection's index
        _where := format('%s AND collection = %L', _where, _collections[1]);
    END IF;
    IF _names && ARRAY['total_count', 'datetime_min', 'datetime_max', 'spatial_extent'] THEN
        EXECUTE format('SELECT count(*) AS n, min(datetime) AS lo, max(datetime) AS hi, '
                       'ST_Extent(geometry) AS box FROM geocatalog.search_items WHERE %s',
                       _where)
            INTO single;
    END IF;
    FOREACH name IN ARRAY _names LOOP
        IF name = 'total_count' THEN
            found := jsonb_build_object('data_type', 'integer', 'value', single.n);
        ELSIF name IN ('datetime_min', 'datetime_max') THEN
            found := jsonb_build_object('data_type', 'datetime', 'value', geocatalog.utc_text(
                CASE name WHEN 'datetime_min' THEN single.lo ELSE single.hi END));
        ELSIF name = 'spatial_extent' THEN
            found := jsonb_build_object('data_type', 'bbox', 'value', CASE
                WHEN single.box IS NULL THEN NULL
                ELSE jsonb_build_array(ST_XMin(single.box), ST_YMin(single.box),
                                       ST_XMax(single.box), ST_YMax(single.box)) END);
        ELSIF name LIKE '%\_frequency' THEN
            in_time := name IN ('datetime_frequency', 'datetime_yearly_frequency');
            key_sql := CASE name
                WHEN 'collection_frequency' THEN 'collection'
                WHEN 'datetime_frequency' THEN 'date_trunc(''month'', datetime, ''UTC'')'
                WHEN 'datetime_yearly_frequency' THEN 'date_trunc(''year'', datetime, ''UTC'')'
                ELSE format('content->''properties''->>%L',
                            left(name, -length('_frequency'))) END;
            -- time buckets in time order; terms most frequent first; the matches without
            -- the property: no bucket (rank NULL), in the overflow
            EXECUTE format(
                'SELECT jsonb_build_object(''buckets'', coalesce(jsonb_agg(jsonb_build_object('
                '''key'', %s, ''data_type'', ''frequency_distribution'', ''frequency'', n) '
                'ORDER BY %s) FILTER (WHERE rank <= %s), ''[]''), ''overflow'', '
                'coalesce(sum(n) FILTER (WHERE rank IS NULL OR rank > %s), 0)) '
                'FROM (SELECT k, n, CASE WHEN k IS NULL THEN NULL ELSE row_number() OVER '
                '(ORDER BY k IS NULL, n DESC, k) END AS rank '
                'FROM (SELECT %s AS k, count(*) AS n FROM geocatalog.search_items '
                'WHERE %s GROUP BY 1) g) r',
                CASE WHEN in_time THEN 'geocatalog.utc_text(k)' ELSE 'k' END,
                CASE WHEN in_time THEN 'k' ELSE 'n DESC, k' END,
                _buckets, _buckets, key_sql, _where)
                INTO found;
            found := found || '{"data_type": "frequency_distribution"}'::jsonb;
        ELSE
            RAISE EXCEPTION 'unknown aggregation: %', name USING ERRCODE = 'invalid_parameter_value';
        END IF;
        answers := answers || (jsonb_build_object('name', name) || found);
    END LOOP;
    RETURN answers;
END;
$$;
