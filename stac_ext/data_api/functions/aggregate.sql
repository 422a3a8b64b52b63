-- Aggregation: counts and facets of a search.

-- An ISO 8601 UTC instant as STAC writes them (no fraction when there is none).
CREATE OR REPLACE FUNCTION geocatalog.utc_text(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
                          '\.?0+$', '') || 'Z'
$$;

-- What a `_frequency` aggregation counts by: an expression of a search index row, or of a
-- kept count's (`kept`: its year is the row's `datetime` truncated to its year).
DROP FUNCTION IF EXISTS geocatalog.frequency_key(text);
CREATE OR REPLACE FUNCTION geocatalog.frequency_key(name text, kept boolean DEFAULT false)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE name
        WHEN 'collection_frequency' THEN 'collection'
        WHEN 'datetime_frequency' THEN 'date_trunc(''month'', datetime, ''UTC'')'
        WHEN 'datetime_yearly_frequency' THEN
            CASE WHEN kept THEN 'year' ELSE 'date_trunc(''year'', datetime, ''UTC'')' END
        ELSE format('content->''properties''->>%L', left(name, -length('_frequency'))) END
$$;

-- The aggregations named in `_names` of the items `_search` matches, in that order, each
-- {name, data_type, value} or {name, data_type, buckets, overflow}. A name ending in
-- `_frequency` that is none of collection_frequency, datetime_frequency (by month),
-- datetime_yearly_frequency counts the values of the property before the suffix
-- (`platform_frequency`: properties.platform); the API offers only those it is set to.
-- Term buckets: the `_buckets` most frequent, most frequent first; `overflow`: the matches
-- in none of them (beyond them, or without the property).
-- One pass over the matches (a pass per aggregation read every match again): a grouping
-- set per frequency's key beside the whole one, told apart by GROUPING()'s mask. A bitmap
-- of many matches stays exact in `work_mem` (a lossy one has every row of its pages
-- checked again: at 10 million items, 6 times the pages read). Where the kept counts answer
-- (`counts_answer`: no criteria but collections; counts by collection and year) the same
-- pass sums them instead (`item_counts`: a row per collection, readers and year).
-- Otherwise the pass reads about `_exact_up_to` matching rows at most, whatever the items:
-- it counts the sample's matches from its coarsest tier down (`search_sample`: one row in
-- 1,000, then 100, then 10) and answers from the first tier whose next would read more
-- than `_exact_up_to` rows, each count scaled by the tier's rate and each aggregation
-- marked `"approximate": true`; when even the one-in-10 tier's matches times 10 are within
-- `_exact_up_to`, every match is read and the answer is exact.
DROP FUNCTION IF EXISTS geocatalog.aggregate(jsonb, text[], int);
CREATE OR REPLACE FUNCTION geocatalog.aggregate(_search jsonb, _names text[],
                                                _buckets int DEFAULT 1000,
                                                _exact_up_to int DEFAULT 2000)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public SET work_mem TO '32MB' AS $$
DECLARE
    kept boolean := geocatalog.counts_answer(_search, _names);
    _where text;
    _collections text[] := to_text_array(_search->'collections');
    source text := 'geocatalog.search_items';
    terms text[];  -- the keys counted by, k1 .. kN
    keys text;  -- 'k1, .., kN' (NULL: none)
    key_columns text;  -- ', <term 1> AS k1, ..'
    key_sets text;  -- ', (k1), ..': a grouping set per key
    whole int;  -- GROUPING(k1, .., kN) of the row of all matches: every key's bit set
    totals text := 'count(*) * $1 AS n, count(*) AS matched';  -- $1: the rows' rate
    parts text[] := '{}';
    name text;
    nth int;
    in_time boolean;
    part text;
    statement text;
    answers jsonb;
    matched bigint;
BEGIN
    IF kept THEN  -- the same conditions as search_where's over the counts' columns
        source := 'geocatalog.item_counts';
        totals := 'coalesce(sum(n), 0) AS n, 0 AS matched';
        _where := format('%s AND %s', CASE WHEN _search ? 'collections'
                         THEN format('collection = ANY (%L)', _collections) ELSE 'TRUE' END,
                         geocatalog.readable(_search->'reader'));
    ELSE
        _where := geocatalog.search_where(_search);
        IF cardinality(_collections) = 1 THEN  -- as search(): the one collection's index
            _where := format('%s AND collection = %L', _where, _collections[1]);
        END IF;
    END IF;
    SELECT coalesce(array_agg(DISTINCT geocatalog.frequency_key(u, kept)), '{}') INTO terms
    FROM unnest(_names) u WHERE u LIKE '%\_frequency';
    whole := (1 << cardinality(terms)) - 1;
    SELECT string_agg('k' || i, ', ' ORDER BY i),
           string_agg(format(', %s AS k%s', t, i), '' ORDER BY i),
           string_agg(format(', (k%s)', i), '' ORDER BY i)
        INTO keys, key_columns, key_sets
    FROM unnest(terms) WITH ORDINALITY u(t, i);
    IF _names && ARRAY['datetime_min', 'datetime_max'] THEN
        totals := totals || ', min(datetime) AS lo, max(datetime) AS hi';
    END IF;
    IF 'spatial_extent' = ANY(_names) THEN
        totals := totals || ', ST_Extent(geometry) AS box';
    END IF;
    FOREACH name IN ARRAY _names LOOP
        IF name = 'total_count' THEN
            part := '''integer'', ''value'', g.n';
        ELSIF name IN ('datetime_min', 'datetime_max') THEN
            part := format('''datetime'', ''value'', geocatalog.utc_text(g.%s)',
                           CASE name WHEN 'datetime_min' THEN 'lo' ELSE 'hi' END);
        ELSIF name = 'spatial_extent' THEN
            part := '''bbox'', ''value'', CASE WHEN g.box IS NULL THEN NULL ELSE '
                    'jsonb_build_array(ST_XMin(g.box), ST_YMin(g.box), ST_XMax(g.box), '
                    'ST_YMax(g.box)) END';
        ELSIF name LIKE '%\_frequency' THEN
            nth := array_position(terms, geocatalog.frequency_key(name, kept));
            in_time := name IN ('datetime_frequency', 'datetime_yearly_frequency');
            -- the set grouped by key nth: its bit (the first key's the highest) clear. Time
            -- buckets in time order; terms most frequent first; the matches without the
            -- property: no bucket (rank NULL), in the overflow
            parts := parts || format(
                '(SELECT jsonb_build_object(''name'', %L, ''data_type'', '
                '''frequency_distribution'', ''buckets'', coalesce(jsonb_agg('
                'jsonb_build_object(''key'', %s, ''data_type'', ''frequency_distribution'', '
                '''frequency'', n) ORDER BY %s) FILTER (WHERE rank <= %s), ''[]''), '
                '''overflow'', coalesce(sum(n) FILTER (WHERE rank IS NULL OR rank > %s), 0)) '
                'FROM (SELECT k, n, CASE WHEN k IS NULL THEN NULL ELSE row_number() OVER '
                '(ORDER BY k IS NULL, n DESC, k) END AS rank '
                'FROM (SELECT g.k%s AS k, g.n FROM g WHERE g.mask = %s AND g.n > 0) f) r)',
                name,
                CASE WHEN in_time THEN 'geocatalog.utc_text(k)' ELSE 'k' END,
                CASE WHEN in_time THEN 'k' ELSE 'n DESC, k' END,
                _buckets, _buckets, nth, whole # (1 << (cardinality(terms) - nth)));
            CONTINUE;
        ELSE
            RAISE EXCEPTION 'unknown aggregation: %', name USING ERRCODE = 'invalid_parameter_value';
        END IF;
        parts := parts || format('(SELECT jsonb_build_object(''name'', %L, ''data_type'', '
                                 '%s) FROM g WHERE g.mask = %s)', name, part, whole);
    END LOOP;
    -- %1$s the rows read, %2$s their condition (the names and keys hold no `%`: the API
    -- offers aggregations of property names of [A-Za-z0-9_:.-] only)
    statement := format(
        'WITH g AS (SELECT %s AS mask, %s FROM (SELECT *%s FROM %%1$s '
        'WHERE %%2$s) s GROUP BY GROUPING SETS (()%s)) SELECT jsonb_build_array(%s), '
        '(SELECT matched FROM g WHERE g.mask = %s)',
        CASE WHEN keys IS NULL THEN '0' ELSE format('GROUPING(%s)', keys) END,
        concat_ws(', ', totals, keys), key_columns, key_sets,
        array_to_string(parts, ', '), whole);
    IF NOT kept THEN
        FOR tier IN REVERSE 3..1 LOOP
            EXECUTE format(statement, 'geocatalog.search_sample',
                           format('(%s) AND tier >= %s', _where, tier))
                INTO answers, matched USING (10 ^ tier)::bigint;
            IF matched * 10 > _exact_up_to THEN  -- the next tier would read more
                RETURN (SELECT jsonb_agg(a || '{"approximate": true}' ORDER BY i)
                        FROM jsonb_array_elements(answers) WITH ORDINALITY e(a, i));
            END IF;
        END LOOP;
    END IF;
    EXECUTE format(statement, source, _where) INTO answers USING 1::bigint;
    RETURN answers;
END;
$$;
