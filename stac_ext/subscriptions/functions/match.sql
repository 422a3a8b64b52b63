-- Matching: the data API's outbox (geocatalog.item_events) against every subscription's
-- saved search, one batch a transaction, by one matcher at a time; and what a saved search
-- becomes for it.

-- What a saved search becomes: the criteria the matcher reads from this schema's indexes
-- (collections, place, time window, as pgstac reads them; the items' owner) and the rest as
-- SQL over the search index's columns (its ids, filter, words: pgstac's translation, as
-- geocatalog.search makes it; NULL: nothing more).
DROP FUNCTION IF EXISTS subscriptions.criteria(jsonb);  -- before its `items_owner`
CREATE OR REPLACE FUNCTION subscriptions.criteria(
    _search jsonb, OUT collections text[], OUT geometry geometry, OUT starts timestamptz,
    OUT ends timestamptz, OUT items_owner text, OUT condition text)
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    rest jsonb := _search - '{collections,bbox,intersects,datetime,q,catalog,owner}'::text[];
    window_ tstzrange;
BEGIN
    IF _search ? 'collections' THEN
        collections := to_text_array(_search->'collections');
    END IF;
    geometry := stac_geom(_search);
    IF _search ? 'datetime' THEN
        window_ := parse_dtrange(_search->'datetime');
        starts := nullif(lower(window_), '-infinity');
        ends := nullif(upper(window_), 'infinity');
    END IF;
    items_owner := _search->>'owner';
    IF rest ?| ARRAY['ids', 'filter'] THEN
        condition := format('(%s)', geocatalog.plain_properties(stac_search_to_where(rest)));
    END IF;
    IF jsonb_typeof(_search->'q') IN ('string', 'array') THEN
        condition := concat_ws(' AND ', condition, format(
            'words @@ %L::tsquery', geocatalog.words_query(_search->'q')));
    END IF;
END;
$$;

-- The items a catalog's subtree links, as the reader sees the subtree, as SQL over the
-- search index's columns (read at each batch: links change).
CREATE OR REPLACE FUNCTION subscriptions.scope_condition(_catalog text, _reader jsonb)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path TO pgstac, public AS $$
DECLARE
    subtree jsonb := catalogs.subtree_filter(_catalog, _reader);
BEGIN
    IF subtree IS NULL OR subtree = '[]'::jsonb THEN  -- gone, hidden, or linking nothing
        RETURN 'FALSE';
    END IF;
    RETURN format('(%s)', geocatalog.plain_properties(stac_search_to_where(
        jsonb_build_object('filter', subtree, 'filter-lang', 'cql2-json'))));
END;
$$;

-- geocatalog.may_read over the search index's columns (`readers`, `owner`) and a reader's
-- keys (geocatalog.reader_keys; NULL: an administrator's) and user name.
CREATE OR REPLACE FUNCTION subscriptions.may_read(_readers text, _owner text, _keys text[],
                                                  _user text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT _readers IS NULL OR _keys IS NULL OR _readers = ANY (_keys)
        OR (coalesce(_user, '') <> '' AND _owner = _user)
$$;

-- The condition of the pair `p` by its subscription, among `_ids` (sorted) and their
-- `_conditions` from `_low` to `_high`: a tree of comparisons, as SQL.
CREATE OR REPLACE FUNCTION subscriptions.judging(_ids uuid[], _conditions text[], _low int,
                                                 _high int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN _low = _high THEN format('(%s)', _conditions[_low])
        ELSE format('CASE WHEN p.subscription <= %L::uuid THEN %s ELSE %s END',
                    _ids[(_low + _high) / 2],
                    subscriptions.judging(_ids, _conditions, _low, (_low + _high) / 2),
                    subscriptions.judging(_ids, _conditions, (_low + _high) / 2 + 1, _high))
    END
$$;

-- A batch of the outbox, oldest first, matched and gone from it: each subscription's events
-- numbered on from its last, its standing job's windows filled. How many outbox rows were
-- taken (0: none waiting); NULL when another matcher holds the batch.
CREATE OR REPLACE FUNCTION subscriptions.match(_batch int) RETURNS int
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    taken bigint[];
    batch geocatalog.item_events[];
    pairs subscriptions.pair[];
    judged_ids uuid[];
    judged text[];
    jobs jsonb;
    sub record;
BEGIN
    -- one matcher at a time: a subscription's events are numbered in the outbox's order
    IF NOT pg_try_advisory_xact_lock(hashtext('subscriptions.match')) THEN
        RETURN NULL;
    END IF;
    taken := ARRAY(SELECT seq FROM geocatalog.item_events ORDER BY seq LIMIT _batch);
    IF cardinality(taken) = 0 THEN
        RETURN 0;
    END IF;
    -- a removed item as it was; the others as the index holds them now, or, removed since,
    -- as they were last (their removal's row: committed, as the index's is, in this
    -- statement's snapshot)
    batch := ARRAY(
        SELECT ROW(b.*)::geocatalog.item_events FROM (
            SELECT e.* FROM geocatalog.item_events e
            WHERE e.seq = ANY (taken) AND e.kind = 'deleted'
            UNION ALL
            SELECT e.seq, e.kind, e.happened, e.txid, e.id, e.collection,
                   coalesce(i.datetime, g.datetime), coalesce(i.end_datetime, g.end_datetime),
                   coalesce(i.geometry, g.geometry), coalesce(i.content, g.content),
                   coalesce(i.words, g.words),
                   CASE WHEN i.id IS NULL THEN g.owner ELSE i.owner END,
                   CASE WHEN i.id IS NULL THEN g.readers ELSE i.readers END
            FROM geocatalog.item_events e
            LEFT JOIN geocatalog.search_items i ON i.id = e.id AND i.collection = e.collection
            LEFT JOIN LATERAL (
                SELECT d.* FROM geocatalog.item_events d
                WHERE i.id IS NULL AND d.kind = 'deleted' AND d.collection = e.collection
                  AND d.id = e.id AND d.seq > e.seq
                ORDER BY d.seq LIMIT 1) g ON TRUE
            WHERE e.seq = ANY (taken) AND e.kind <> 'deleted'
              AND (i.id IS NOT NULL OR g.id IS NOT NULL)) b
        ORDER BY b.seq);
    -- the subscriptions whose indexed criteria each item meets, that may read it
    pairs := ARRAY(
        SELECT ROW(b.seq, s.id)::subscriptions.pair
        FROM unnest(batch) b
        CROSS JOIN LATERAL (
            SELECT x.id, x.collections, x.starts, x.ends, x.items_owner, x.kinds,
                   x.reader_keys, x.owner
            FROM subscriptions.subscriptions x
            WHERE x.geometry && b.geometry AND st_intersects(b.geometry, x.geometry)
            UNION ALL
            SELECT x.id, x.collections, x.starts, x.ends, x.items_owner, x.kinds,
                   x.reader_keys, x.owner
            FROM subscriptions.subscriptions x
            WHERE x.geometry IS NULL AND x.collections @> ARRAY[b.collection]
            UNION ALL
            SELECT x.id, x.collections, x.starts, x.ends, x.items_owner, x.kinds,
                   x.reader_keys, x.owner
            FROM subscriptions.subscriptions x
            WHERE x.geometry IS NULL AND x.collections IS NULL AND x.items_owner = b.owner
            UNION ALL
            SELECT x.id, x.collections, x.starts, x.ends, x.items_owner, x.kinds,
                   x.reader_keys, x.owner
            FROM subscriptions.subscriptions x
            WHERE x.geometry IS NULL AND x.collections IS NULL AND x.items_owner IS NULL) s
        WHERE (s.collections IS NULL OR b.collection = ANY (s.collections))
          AND (s.items_owner IS NULL OR b.owner = s.items_owner)
          AND (s.starts IS NULL OR b.end_datetime >= s.starts)
          AND (s.ends IS NULL OR b.datetime <= s.ends)
          AND b.kind = ANY (s.kinds)
          AND subscriptions.may_read(b.readers, b.owner, s.reader_keys, s.owner));
    IF cardinality(pairs) > 0 THEN
        -- the rest of each search (its condition, its catalog's subtree), over its
        -- candidates only: one statement for them all, each pair judged by its own
        -- subscription's condition, found in a tree of them (a plan a batch, and a few
        -- comparisons a pair, however many subscriptions have a condition)
        SELECT array_agg(s.id ORDER BY s.id), array_agg(concat_ws(' AND ', s.condition,
                   CASE WHEN s.catalog IS NOT NULL THEN
                       subscriptions.scope_condition(s.catalog, s.reader) END) ORDER BY s.id)
        INTO judged_ids, judged
        FROM subscriptions.subscriptions s
        WHERE s.id IN (SELECT p.subscription FROM unnest(pairs) p)
          AND (s.condition IS NOT NULL OR s.catalog IS NOT NULL);
        IF judged_ids IS NOT NULL THEN
            EXECUTE format(
                'SELECT ARRAY(SELECT p FROM unnest($1) p LEFT JOIN unnest($2) j(judged) '
                'ON j.judged = p.subscription WHERE j.judged IS NULL) || ARRAY(SELECT p '
                'FROM unnest($1) p JOIN unnest($2) j(judged) ON j.judged = p.subscription '
                'JOIN unnest($3) b ON b.seq = p.seq WHERE %s)',
                subscriptions.judging(judged_ids, judged, 1, cardinality(judged_ids)))
                INTO pairs USING pairs, judged_ids, batch;
        END IF;
        -- standing jobs' subscriptions: their events from here on fill their windows
        IF EXISTS (SELECT FROM subscriptions.subscriptions WHERE job IS NOT NULL) THEN
            jobs := (SELECT jsonb_object_agg(s.id, g.last_number)
                     FROM (SELECT id FROM subscriptions.subscriptions WHERE job IS NOT NULL) s
                     JOIN subscriptions.progress g ON g.subscription_id = s.id
                     WHERE s.id IN (SELECT p.subscription FROM unnest(pairs) p));
        END IF;
        WITH added AS (
            INSERT INTO subscriptions.events (subscription_id, number, kind, collection,
                                              item_id, happened, owner, readers)
            SELECT p.subscription, g.last_number + row_number() OVER (
                       PARTITION BY p.subscription ORDER BY p.seq),
                   b.kind, b.collection, b.id, b.happened, b.owner, b.readers
            FROM unnest(pairs) p
            JOIN unnest(batch) b ON b.seq = p.seq
            JOIN subscriptions.progress g ON g.subscription_id = p.subscription
            RETURNING subscription_id, number)
        UPDATE subscriptions.progress g SET last_number = a.last
        FROM (SELECT subscription_id, max(number) AS last FROM added GROUP BY 1) a
        WHERE g.subscription_id = a.subscription_id;
        FOR sub IN SELECT key::uuid AS id, value::bigint AS after
                   FROM jsonb_each_text(coalesce(jobs, '{}'))
        LOOP
            PERFORM subscriptions.fill_windows(sub.id, sub.after);
        END LOOP;
    END IF;
    DELETE FROM geocatalog.item_events WHERE seq = ANY (taken);
    RETURN cardinality(taken);
END;
$$;

-- A standing job's windows, given its subscription's events after number `_after`: each
-- created or updated item once a window, each event in one window at most (given again, it
-- is not taken again), its own results (which name its process in `processing:software`)
-- never; a window closes (due) at its count of items.
CREATE OR REPLACE FUNCTION subscriptions.fill_windows(_subscription uuid, _after bigint)
RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    job jsonb := (SELECT s.job FROM subscriptions.subscriptions s WHERE s.id = _subscription);
    most int := (job->'window'->>'items')::int;
    seconds double precision := (job->'window'->>'seconds')::double precision;
    item record;
    open_number int;
    counted int;
BEGIN
    IF job IS NULL THEN
        RETURN;
    END IF;
    FOR item IN
        SELECT e.number, e.collection, e.item_id FROM subscriptions.events e
        LEFT JOIN geocatalog.search_items i ON i.collection = e.collection AND i.id = e.item_id
        WHERE e.subscription_id = _subscription AND e.number > _after
          AND e.kind IN ('created', 'updated')
          AND NOT EXISTS (SELECT FROM subscriptions.run_items r
                          WHERE r.subscription_id = _subscription AND r.event_number = e.number)
          AND NOT coalesce(i.content->'properties'->'processing:software' ? (job->>'process'),
                           false)
        ORDER BY e.number
    LOOP
        IF open_number IS NULL THEN
            SELECT r.number, r.items INTO open_number, counted FROM subscriptions.runs r
            WHERE r.subscription_id = _subscription AND r.status = 'open';
            IF open_number IS NULL THEN
                INSERT INTO subscriptions.runs (subscription_id, number, closes)
                VALUES (_subscription,
                        coalesce((SELECT max(r.number) FROM subscriptions.runs r
                                  WHERE r.subscription_id = _subscription), 0) + 1,
                        now() + seconds * interval '1 second')
                RETURNING number INTO open_number;
                counted := 0;
            END IF;
        END IF;
        INSERT INTO subscriptions.run_items (subscription_id, number, collection, item_id,
                                             event_number)
        VALUES (_subscription, open_number, item.collection, item.item_id, item.number)
        ON CONFLICT DO NOTHING;
        IF FOUND THEN
            counted := counted + 1;
            UPDATE subscriptions.runs SET items = counted, updated = now(),
                status = CASE WHEN counted >= most THEN 'due' ELSE status END,
                closed = CASE WHEN counted >= most THEN now() END
            WHERE subscription_id = _subscription AND number = open_number;
            IF counted >= most THEN
                open_number := NULL;
            END IF;
        END IF;
    END LOOP;
END;
$$;
