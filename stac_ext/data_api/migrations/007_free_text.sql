-- Free text on items (`q`): each index row carries the words of its item (title, keywords,
-- description) and of its collection (the variable's name in its id, its title), kept by
-- the index's own triggers however items arrive, in a GIN index: a search by words reads
-- that index, never the items. pgstac's own `q` for items matches a vector it builds per
-- row (a scan of every partition), misses every item without a description (the vector of
-- a NULL is NULL), and raises on text its parser does not expect (a 500 in the API).
--
-- `q` is read as PostgreSQL's web search syntax (websearch_to_tsquery: words all present,
-- "quoted phrases", `or`, `-word` to exclude; never a syntax error), each of the
-- extension's comma-separated terms (joined with ` OR ` by stac-fastapi) one alternative.
-- The answers keep the search's order (`sortby`, or pgstac's default: newest first), so
-- paging tokens stay pgstac's.

-- The words of an item of `collection` (whose title is `collection_title`): its fields
-- concatenated as vectors, so that no phrase spans two of them.
CREATE FUNCTION geocatalog.item_words(properties jsonb, collection text,
                                      collection_title text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, coalesce(properties->>'title', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'keywords', ''))
        || to_tsvector('english'::regconfig, coalesce(properties->>'description', ''))
        -- cf-sea_water_salinity: the words of the variable's standard name
        || to_tsvector('english'::regconfig, translate(collection, '_-', '  '))
        || to_tsvector('english'::regconfig, coalesce(collection_title, ''))
$$;

-- The search's `q` as a text search query (a string, or the extension's list of terms).
CREATE FUNCTION geocatalog.words_query(q jsonb) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT websearch_to_tsquery('english'::regconfig, CASE jsonb_typeof(q)
        WHEN 'array' THEN (SELECT string_agg(t, ' OR ') FROM jsonb_array_elements_text(q) t)
        ELSE q #>> '{}' END)
$$;

ALTER TABLE geocatalog.search_items ADD COLUMN words tsvector;
UPDATE geocatalog.search_items s
SET words = geocatalog.item_words(s.content->'properties', s.collection, c.content->>'title')
FROM pgstac.collections c WHERE c.id = s.collection;
ALTER TABLE geocatalog.search_items ALTER COLUMN words SET NOT NULL;
CREATE INDEX search_items_words_idx ON geocatalog.search_items USING GIN (words);

-- The index's rows of a statement's items (the three writers below): one title read per
-- collection, not per item.
CREATE OR REPLACE FUNCTION geocatalog.index_upsert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.search_items (id, geometry, collection, datetime, end_datetime,
                                         content, words)
    SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
           jsonb_build_object('properties', n.content->'properties'),
           geocatalog.item_words(n.content->'properties', n.collection, t.title)
    FROM new_rows n
    LEFT JOIN (SELECT c.id, c.content->>'title' AS title FROM pgstac.collections c
               WHERE c.id IN (SELECT DISTINCT collection FROM new_rows)) t
           ON t.id = n.collection
    ON CONFLICT (id, collection) DO UPDATE
        SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
            end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content,
            words = EXCLUDED.words;
    INSERT INTO geocatalog.populated_collections (collection)
    SELECT DISTINCT collection FROM new_rows
    ON CONFLICT DO NOTHING;
    PERFORM geocatalog.note_spans((SELECT jsonb_object_agg(collection, span) FROM (
        SELECT collection, max(end_datetime - datetime) AS span FROM new_rows
        GROUP BY collection) n));
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.index_remove() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection
          AND NOT EXISTS (SELECT 1 FROM new_rows n
                          WHERE n.id = o.id AND n.collection = o.collection);
        INSERT INTO geocatalog.search_items (id, geometry, collection, datetime,
                                             end_datetime, content, words)
        SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
               jsonb_build_object('properties', n.content->'properties'),
               geocatalog.item_words(n.content->'properties', n.collection, t.title)
        FROM new_rows n
        LEFT JOIN (SELECT c.id, c.content->>'title' AS title FROM pgstac.collections c
                   WHERE c.id IN (SELECT DISTINCT collection FROM new_rows)) t
               ON t.id = n.collection
        ON CONFLICT (id, collection) DO UPDATE
            SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
                end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content,
                words = EXCLUDED.words;
        INSERT INTO geocatalog.populated_collections (collection)
        SELECT DISTINCT collection FROM new_rows
        ON CONFLICT DO NOTHING;
        PERFORM geocatalog.note_spans((SELECT jsonb_object_agg(collection, span) FROM (
            SELECT collection, max(end_datetime - datetime) AS span FROM new_rows
            GROUP BY collection) n));
    ELSE
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection;
    END IF;
    DELETE FROM geocatalog.populated_collections p
    WHERE p.collection IN (SELECT DISTINCT collection FROM old_rows)
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = p.collection);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.index_partition(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM geocatalog.index_triggers(member);
    IF (SELECT relkind FROM pg_class WHERE oid = member) = 'r' THEN
        EXECUTE format('CREATE TRIGGER geocatalog_index_truncate AFTER TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()',
                       member);
        EXECUTE format('INSERT INTO geocatalog.search_items (id, geometry, collection, '
                       'datetime, end_datetime, content, words) SELECT i.id, i.geometry, '
                       'i.collection, i.datetime, i.end_datetime, jsonb_build_object('
                       '''properties'', i.content->''properties''), geocatalog.item_words('
                       'i.content->''properties'', i.collection, c.content->>''title'') '
                       'FROM %s i LEFT JOIN pgstac.collections c ON c.id = i.collection '
                       'ON CONFLICT DO NOTHING', member);
        EXECUTE format('INSERT INTO geocatalog.populated_collections (collection) '
                       'SELECT DISTINCT collection FROM %s ON CONFLICT DO NOTHING', member);
        EXECUTE format('SELECT geocatalog.note_spans((SELECT jsonb_object_agg(collection, '
                       'span) FROM (SELECT collection, max(end_datetime - datetime) AS span '
                       'FROM %s GROUP BY collection) n))', member);
    END IF;
END;
$$;

-- A collection's new title is in its items' words at once (an admin's rare write: it
-- rewrites the collection's rows of the index).
CREATE FUNCTION geocatalog.collection_retitled() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    UPDATE geocatalog.search_items s
    SET words = geocatalog.item_words(s.content->'properties', s.collection,
                                      NEW.content->>'title')
    WHERE s.collection = NEW.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER geocatalog_collection_retitled
AFTER UPDATE ON pgstac.collections
FOR EACH ROW WHEN (OLD.content->>'title' IS DISTINCT FROM NEW.content->>'title')
EXECUTE FUNCTION geocatalog.collection_retitled();

-- A search's WHERE over the index: pgstac's translation (stac_search_to_where) of all but
-- `q`, as geocatalog.search has read it since 005, and `q` by the words. The one place a
-- search's conditions are made: what a later condition adds, it adds here.
CREATE FUNCTION geocatalog.search_where(_search jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    _where text := geocatalog.datetime_bounded(geocatalog.plain_properties(
        stac_search_to_where(_search - 'q')));
BEGIN
    IF jsonb_typeof(_search->'q') IN ('string', 'array') THEN
        _where := format('(%s) AND words @@ %L::tsquery', _where,
                         geocatalog.words_query(_search->'q'));
    END IF;
    RETURN _where;
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
    total_count := geocatalog.matched(_where, _search->'conf');
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
    EXECUTE format('SELECT coalesce(jsonb_agg(jsonb_build_array(collection, id, datetime)), '
                   '''[]'') FROM (SELECT collection, id, datetime FROM geocatalog.search_items '
                   'WHERE %s ORDER BY %s LIMIT %s) k', full_where, _orderby, _limit + 1)
        INTO keys;
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
