-- Search: pgstac's WHERE and ORDER BY run on the search index, the page read by key.

-- The number of matches, exact or none: counted up to `context_count_max` (SEARCH_COUNT_MAX,
-- 1,000 unless set) and NULL above it, so that a count reads about as many rows as a page
-- however many items match; when the planner expects more, not counted at all (pgstac's
-- `context` 'on': counted whatever their number; 'off': none). A number given is the
-- matches' own (OGC API Features, STAC API), never the planner's estimate: a server leaves
-- it out where it is costly. With `anchor` (time_anchor's) the matches are counted nearest
-- in time first, as a page is read: the time-and-place index then stops at the bound,
-- where a bitmap of every match was made first. Kept for the TTL. A bitmap of many
-- matches stays exact in `work_mem` (see aggregate()).
DROP FUNCTION IF EXISTS geocatalog.matched(text, jsonb);  -- before its `anchor`
CREATE OR REPLACE FUNCTION geocatalog.matched(_where text, conf jsonb DEFAULT NULL,
                                             anchor timestamptz DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql SET search_path TO pgstac, public SET work_mem TO '32MB' AS $$
DECLARE
    _context text := lower(context(conf));
    bound bigint := CASE WHEN _context = 'on' THEN NULL
                         ELSE coalesce(get_setting('context_count_max', conf)::bigint, 1000) END;
    hash text := md5(concat(_where, ' up to ', bound));
    found_count bigint;
    plan jsonb;
BEGIN
    IF _context = 'off' THEN
        RETURN NULL;
    END IF;
    SELECT c.matched INTO found_count FROM geocatalog.search_counts c
    WHERE c.where_hash = hash AND now() - c.counted_at <= context_stats_ttl(conf);
    IF NOT FOUND THEN
        EXECUTE format('EXPLAIN (format json) SELECT FROM geocatalog.search_items WHERE %s',
                       _where) INTO plan;
        IF (plan->0->'Plan'->>'Plan Rows')::bigint > bound THEN
            found_count := bound + 1;  -- more than the bound, as far as is known
        ELSE  -- one past the bound tells that there are more
            EXECUTE format('SELECT count(*) FROM (SELECT FROM geocatalog.search_items '
                           'WHERE %s %s LIMIT %s) m', _where,
                           CASE WHEN anchor IS NOT NULL AND bound IS NOT NULL THEN
                               format('ORDER BY datetime <-> %L::timestamptz', anchor) END,
                           coalesce((bound + 1)::text, 'ALL'))
                INTO found_count;
        END IF;
        IF NOT readonly(conf) THEN
            INSERT INTO geocatalog.search_counts (where_hash, matched) VALUES (hash, found_count)
            ON CONFLICT (where_hash) DO UPDATE
                SET matched = EXCLUDED.matched, counted_at = EXCLUDED.counted_at;
            IF random() < 0.001 THEN  -- now and then, what no TTL would keep any longer
                DELETE FROM geocatalog.search_counts WHERE counted_at < now() - interval '1 day';
            END IF;
        END IF;
    END IF;
    RETURN CASE WHEN found_count > bound THEN NULL ELSE found_count END;
END;
$$;

-- The index row of a paging token (`next:` or `prev:`, then pgstac's hex collection and
-- id), as a pgstac.items row for get_token_filter; pgstac's checks and messages.
CREATE OR REPLACE FUNCTION geocatalog.token_item(_token text, OUT prev boolean, OUT item pgstac.items)
LANGUAGE plpgsql STABLE STRICT SET search_path TO pgstac, public AS $$
DECLARE
    parts text[] := string_to_array(lower(_token), ':');
BEGIN
    IF cardinality(parts) <> 3 OR parts[1] NOT IN ('next', 'prev')
            OR parts[2] !~ '^([0-9a-f]{2})+$' OR parts[3] !~ '^([0-9a-f]{2})+$' THEN
        RAISE EXCEPTION 'Invalid paging token: %', _token;
    END IF;
    prev := parts[1] = 'prev';
    SELECT s.id, s.geometry, s.collection, s.datetime, s.end_datetime, s.content, NULL
    INTO item
    FROM geocatalog.search_items s
    WHERE s.collection = convert_from(decode(parts[2], 'hex'), 'UTF8')
      AND s.id = convert_from(decode(parts[3], 'hex'), 'UTF8');
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Could not find item using token: %', _token;
    END IF;
END;
$$;

-- pgstac's SQL with its to_text wrapper of a property written `->>`, which gives the same
-- text (a string's, a number's, an object's): the index's expressions match it, and no
-- function is called per row. The owner's is the index's column of that text (013).
CREATE OR REPLACE FUNCTION geocatalog.plain_properties(pgstac_sql text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT replace(
        regexp_replace(pgstac_sql, 'to_text\(content->''properties''->(''[^'']+'')\)',
                       '(content->''properties''->>\1)', 'g'),
        '(content->''properties''->>''owner'')', 'owner')
$$;

-- pgstac's WHERE with each `end_datetime >= t` (or `>`) also saying `datetime >= t - the
-- longest span of any item` (item_spans): true of every row where the first is, so the
-- same rows, and the datetime index bounds the scan from both ends (pgstac's search sets
-- only an upper bound on datetime: over one table, half the index was read).
CREATE OR REPLACE FUNCTION geocatalog.datetime_bounded(_where text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    longest interval;
BEGIN
    IF strpos(_where, 'end_datetime') = 0 THEN  -- no time window: nothing to bound
        RETURN _where;
    END IF;
    longest := (SELECT max(span) FROM geocatalog.item_spans);
    IF longest IS NULL THEN
        RETURN _where;
    END IF;
    RETURN regexp_replace(
        _where, '(end_datetime >=? (''[^'']*''::timestamp(?:tz| with time zone)))',
        format('(\1 AND datetime >= \2 - %L::interval)', longest), 'g');
END;
$$;

-- The time a page starts from, when the search names a place (`bbox`, `intersects`) in
-- more than one collection (one collection's own index serves its order) and its order is
-- the default one by time (datetime, then collection and id; descending, or ascending for
-- a previous page): a paging token's time (its filter bounds the matches on that side),
-- else the end of a descending page's `datetime` window; NULL otherwise.
CREATE OR REPLACE FUNCTION geocatalog.time_anchor(_search jsonb, _orderby text, token_item pgstac.items)
RETURNS timestamptz
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    window_end timestamptz;
BEGIN
    IF NOT (_search ?| ARRAY['bbox', 'intersects'])
            OR cardinality(to_text_array(_search->'collections')) = 1
            OR _orderby NOT IN ('datetime DESC, collection DESC, id DESC',
                                'datetime ASC, collection ASC, id ASC') THEN
        RETURN NULL;
    END IF;
    IF token_item.id IS NOT NULL THEN
        RETURN token_item.datetime;
    END IF;
    IF _orderby LIKE 'datetime DESC%' AND jsonb_typeof(_search->'datetime') = 'string' THEN
        window_end := upper(parse_dtrange(_search->'datetime'));
        IF isfinite(window_end) THEN
            RETURN window_end;
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

-- A page's keys (`_limit` of them, in `_orderby`, the default one by time) as the nearest
-- in time to `anchor` (time_anchor's): in that order the time-and-place index (016) hands
-- out the matches nearest first, checking the place in the index, so that a page reads
-- about its own rows however many items there are. Read in the datetime index's order
-- instead, each row's place was read from the table until enough matched: thousands of
-- rows for a region's page. PostgreSQL orders by an index's distance only when it is the
-- whole ORDER BY, so the ties at the last time are read after: the matches at that time
-- join, and the page is cut in `_orderby`.
CREATE OR REPLACE FUNCTION geocatalog.nearest_keys(_where text, _orderby text, _limit int, anchor timestamptz)
RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    keys jsonb;
BEGIN
    -- true of every match (the anchor bounds them), and the index then reads one side only
    _where := format('%s AND datetime %s %L::timestamptz', _where,
                     CASE WHEN _orderby LIKE 'datetime DESC%' THEN '<=' ELSE '>=' END, anchor);
    EXECUTE format(
        'WITH nearest AS MATERIALIZED (SELECT collection, id, datetime '
        'FROM geocatalog.search_items WHERE %1$s ORDER BY datetime <-> %2$L::timestamptz '
        'LIMIT %3$s) '
        'SELECT coalesce(jsonb_agg(jsonb_build_array(collection, id, datetime)), ''[]'') '
        'FROM (SELECT collection, id, datetime FROM nearest UNION '
        'SELECT collection, id, datetime FROM geocatalog.search_items WHERE %1$s '
        'AND datetime = (SELECT %4$s(datetime) FROM nearest) ORDER BY %5$s LIMIT %3$s) k',
        _where, anchor, _limit,
        CASE WHEN _orderby LIKE 'datetime DESC%' THEN 'min' ELSE 'max' END, _orderby)
        INTO keys;
    RETURN keys;
END;
$$;

-- pgstac.search's answer for `_search` (005's), its WHERE made by search_where.
CREATE OR REPLACE FUNCTION geocatalog.search(_search jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
LANGUAGE plpgsql STRICT SET search_path TO pgstac, public AS $$
DECLARE
    _collections text[] := to_text_array(_search->'collections');
    _where text := geocatalog.search_where(_search);
    _orderby text := sort_sqlorderby(_search, FALSE, '{collection,id}', _collections);
    _limit int := search_limit(_search);
    _fields jsonb := coalesce(_search->'fields', '{}'::jsonb);
    hydrate bool := NOT (_search->'conf'->>'nohydrate' IS NOT NULL
                         AND (_search->'conf'->>'nohydrate')::boolean = true);
    base_url text := concat(rtrim(base_url(_search->'conf'), '/'));
    total_count bigint;
    token record;
    token_prev boolean := FALSE;
    token_item items;
    anchor timestamptz;
    full_where text;
    keys jsonb;
    leaves text;
    out_records jsonb;
    out_keys jsonb;
    out_len int;
    has_prev boolean := FALSE;
    has_next boolean := FALSE;
    links jsonb := '[]'::jsonb;
    prev text;
    next text;
    page jsonb;
BEGIN
    _orderby := geocatalog.plain_properties(_orderby);
    total_count := geocatalog.matched(_where, _search->'conf',
                                      geocatalog.time_anchor(_search, _orderby, NULL));
    IF cardinality(_collections) = 1 THEN
        -- the same rows; an equality the planner can follow the one collection's order by
        _where := format('%s AND collection = %L', _where, _collections[1]);
    END IF;
    full_where := _where;
    IF _search->>'token' IS NOT NULL THEN
        token := geocatalog.token_item(_search->>'token');
        token_prev := token.prev;
        token_item := token.item;
        full_where := concat_ws(' AND ', _where, geocatalog.plain_properties(get_token_filter(
            _search->'sortby', token_item, token_prev, FALSE, _collections)));
        IF token_prev THEN
            has_next := TRUE;
            _orderby := geocatalog.plain_properties(
                sort_sqlorderby(_search, TRUE, '{collection,id}', _collections));
        ELSE
            has_prev := TRUE;
        END IF;
    END IF;

    -- the page's keys, from the index
    anchor := geocatalog.time_anchor(_search, _orderby, token_item);
    IF anchor IS NULL THEN
        EXECUTE format('SELECT coalesce(jsonb_agg(jsonb_build_array(collection, id, datetime)), '
                       '''[]'') FROM (SELECT collection, id, datetime FROM geocatalog.search_items '
                       'WHERE %s ORDER BY %s LIMIT %s) k', full_where, _orderby, _limit + 1)
            INTO keys;
    ELSE
        keys := geocatalog.nearest_keys(full_where, _orderby, _limit + 1, anchor);
    END IF;
    -- its items, from the partitions holding them, each read by name (found as pgstac finds
    -- a partition: partition_stats), so that no statement plans or locks any other
    SELECT string_agg(format('SELECT * FROM pgstac.%I WHERE id = ANY (%L)', p.partition,
                             p.ids), ' UNION ALL ')
    INTO leaves
    FROM (SELECT ps.partition, array_agg(k.key->>1) AS ids
          FROM jsonb_array_elements(keys) k(key)
          JOIN partition_stats ps ON ps.collection = k.key->>0
                                  AND ps.partition_dtrange @> (k.key->>2)::timestamptz
          GROUP BY ps.partition) p;
    IF leaves IS NOT NULL THEN
        EXECUTE format(
            'SELECT jsonb_agg(format_item((i.id, i.geometry, i.collection, i.datetime, '
            '       i.end_datetime, i.content, i.private)::items, %L::jsonb, %L::boolean) '
            '       ORDER BY k.n), '
            '       jsonb_agg(jsonb_build_array(k.key->0, k.key->1) ORDER BY k.n) '
            'FROM jsonb_array_elements(%L::jsonb) WITH ORDINALITY AS k(key, n) '
            'JOIN (%s) i ON i.collection = k.key->>0 AND i.id = k.key->>1',
            _fields, hydrate, keys, leaves)
            INTO out_records, out_keys;
    END IF;

    -- from here on, pgstac.search's own assembly of the page
    IF token_prev THEN
        out_records := flip_jsonb_array(out_records);
        out_keys := flip_jsonb_array(out_keys);
    END IF;
    IF out_keys->0->>0 = token_item.collection AND out_keys->0->>1 = token_item.id THEN
        out_records := out_records - 0;
        out_keys := out_keys - 0;
    ELSIF out_keys->-1->>0 = token_item.collection AND out_keys->-1->>1 = token_item.id THEN
        out_records := out_records - -1;
        out_keys := out_keys - -1;
    END IF;
    IF jsonb_array_length(out_records) = _limit + 1 THEN
        IF token_prev THEN
            has_prev := TRUE;
            out_records := out_records - 0;
            out_keys := out_keys - 0;
        ELSE
            has_next := TRUE;
            out_records := out_records - -1;
            out_keys := out_keys - -1;
        END IF;
    END IF;
    out_len := coalesce(jsonb_array_length(out_records), 0);

    links := links || jsonb_build_object('rel', 'root', 'type', 'application/json',
                                         'href', base_url)
                   || jsonb_build_object('rel', 'self', 'type', 'application/json',
                                         'href', concat(base_url, '/search'));
    IF has_next AND out_len > 0 THEN
        next := page_token(out_keys->-1->>0, out_keys->-1->>1);
        links := links || jsonb_build_object(
            'rel', 'next', 'type', 'application/geo+json', 'method', 'GET',
            'href', concat(base_url, '/search?token=next:', next));
    END IF;
    IF has_prev AND (out_len > 0 OR _limit = 0) THEN
        prev := CASE WHEN out_len > 0 THEN page_token(out_keys->0->>0, out_keys->0->>1)
                     ELSE page_token(token_item.collection, token_item.id) END;
        IF lower(concat('prev:', prev)) IS DISTINCT FROM lower(_search->>'token') THEN
            links := links || jsonb_build_object(
                'rel', 'prev', 'type', 'application/geo+json', 'method', 'GET',
                'href', concat(base_url, '/search?token=prev:', prev));
        END IF;
    END IF;

    page := jsonb_build_object('type', 'FeatureCollection',
                               'features', coalesce(out_records, '[]'::jsonb),
                               'links', links)
            || jsonb_build_object('numberReturned', out_len);
    IF context(_search->'conf') != 'off' THEN
        page := page || jsonb_strip_nulls(jsonb_build_object('numberMatched', total_count));
    END IF;
    RETURN page;
END;
$$;

-- A paging token names an item: one the caller may not read is answered as a missing one
-- (the same error), so a token cannot tell that a hidden item exists, nor position a page
-- at its sort keys. search_where (009's) checks it: every search and items page is made
-- there, before the token's item is looked at.
CREATE OR REPLACE FUNCTION geocatalog.check_token(_token text, _reader jsonb) RETURNS void
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
BEGIN
    IF NOT geocatalog.may_read((geocatalog.token_item(_token)).item.content->'properties',
                               _reader) THEN
        RAISE EXCEPTION 'Could not find item using token: %', _token;
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.search_where(_search jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    _where text := geocatalog.datetime_bounded(geocatalog.plain_properties(
        stac_search_to_where(_search - 'q' - 'reader')));
BEGIN
    IF _search->>'token' IS NOT NULL THEN
        PERFORM geocatalog.check_token(_search->>'token', _search->'reader');
    END IF;
    IF jsonb_typeof(_search->'q') IN ('string', 'array') THEN
        _where := format('(%s) AND words @@ %L::tsquery', _where,
                         geocatalog.words_query(_search->'q'));
    END IF;
    RETURN format('(%s) AND %s', _where, geocatalog.readable(_search->'reader'));
END;
$$;
