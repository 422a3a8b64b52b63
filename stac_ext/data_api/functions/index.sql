-- The search index (`geocatalog.search_items`) and what keeps it: the triggers of pgstac's items
-- and partitions, the non-empty collections, the items' time spans.

-- The triggers of one member of pgstac.items' partition tree (the root included).
CREATE OR REPLACE FUNCTION geocatalog.index_triggers(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    EXECUTE format('CREATE TRIGGER geocatalog_index_insert AFTER INSERT ON %s '
                   'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION geocatalog.index_upsert()', member);
    EXECUTE format('CREATE TRIGGER geocatalog_index_update AFTER UPDATE ON %s '
                   'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_remove()', member);
    EXECUTE format('CREATE TRIGGER geocatalog_index_delete AFTER DELETE ON %s '
                   'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION geocatalog.index_remove()', member);
END;
$$;

-- Whether a member of pgstac.items' partition tree is in the index (has its triggers).
CREATE OR REPLACE FUNCTION geocatalog.indexed(member regclass) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
    SELECT EXISTS (SELECT 1 FROM pg_trigger g
                   WHERE g.tgrelid = member AND g.tgname = 'geocatalog_index_insert')
$$;

-- The partitions of pgstac.items not in the index yet.
CREATE OR REPLACE FUNCTION geocatalog.unindexed_partitions() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
    SELECT t.relid FROM pg_partition_tree('pgstac.items'::regclass) t
    WHERE t.level > 0 AND NOT geocatalog.indexed(t.relid)
$$;

-- Those of `members` not in the index yet into it, in their order: how many.
CREATE OR REPLACE FUNCTION geocatalog.index_members(members regclass[]) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    member regclass;
    n int := 0;
BEGIN
    FOREACH member IN ARRAY members LOOP
        CONTINUE WHEN geocatalog.indexed(member);
        PERFORM geocatalog.index_partition(member);
        n := n + 1;
    END LOOP;
    RETURN n;
END;
$$;

-- A batch of them into the index (a step of `geocatalog migrate`: one transaction a batch,
-- so that the locks taken stay a batch's whatever the number of partitions): how many.
CREATE OR REPLACE FUNCTION geocatalog.index_partitions(batch int) RETURNS int
LANGUAGE sql SET search_path = pg_catalog, public AS $$
    SELECT geocatalog.index_members(ARRAY(
        SELECT * FROM geocatalog.unindexed_partitions() LIMIT batch))
$$;

-- A partition pgstac creates (it records each in partition_stats, in the transaction that
-- creates it and before any item is written to it) is indexed at once, with the partitioned
-- table between it and pgstac.items when its collection is partitioned by time too.
CREATE OR REPLACE FUNCTION geocatalog.index_new_partition() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    leaf regclass := to_regclass(format('pgstac.%I', NEW.partition));
BEGIN
    PERFORM geocatalog.index_members(ARRAY(
        SELECT a.relid FROM pg_partition_ancestors(leaf) a
        WHERE a.relid <> 'pgstac.items'::regclass));
    RETURN NULL;
END;
$$;

-- 009's, copying a partition's rows only when it holds any (pgstac makes them empty).
CREATE OR REPLACE FUNCTION geocatalog.index_partition(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    holds_items boolean;
BEGIN
    PERFORM geocatalog.index_triggers(member);
    IF (SELECT relkind FROM pg_class WHERE oid = member) <> 'r' THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TRIGGER geocatalog_index_truncate AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()',
                   member);
    EXECUTE format('SELECT EXISTS (SELECT FROM %s)', member) INTO holds_items;
    IF NOT holds_items THEN
        RETURN;
    END IF;
    EXECUTE format('INSERT INTO geocatalog.search_items (id, geometry, collection, '
                   'datetime, end_datetime, content, words) SELECT i.id, i.geometry, '
                   'i.collection, i.datetime, i.end_datetime, jsonb_build_object('
                   '''properties'', i.content->''properties''), geocatalog.item_words('
                   'i.content->''properties'', i.collection, c.content->>''title'') '
                   'FROM %s i LEFT JOIN pgstac.collections c ON c.id = i.collection '
                   'ON CONFLICT DO NOTHING', member);
    EXECUTE format('SELECT geocatalog.note_written((SELECT jsonb_agg(DISTINCT '
                   'jsonb_build_array(collection, coalesce(geocatalog.item_readers('
                   'content->''properties''), ''public''))) FROM %1$s), (SELECT '
                   'jsonb_object_agg(collection, span) FROM (SELECT collection, '
                   'max(end_datetime - datetime) AS span FROM %1$s GROUP BY collection) n))',
                   member);
END;
$$;

-- A deleted collection's rows leave the index (the foreign key's ON DELETE CASCADE did).
CREATE OR REPLACE FUNCTION geocatalog.index_collections_deleted() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM geocatalog.search_items s USING deleted_collections d
    WHERE s.collection = d.id;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.forget_populated(_pairs jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM geocatalog.populated_collections m
    USING jsonb_array_elements(coalesce(_pairs, '[]')) p
    WHERE m.collection = p->>0 AND m.readers = p->>1
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND m.readers = 'public'
                        AND s.readers IS NULL)
      AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items s
                      WHERE s.collection = m.collection AND s.readers = m.readers);
END;
$$;

-- What written rows tell of their collections: the (collection, readers) pairs now
-- populated, and each collection's longest time span of an item so far.
CREATE OR REPLACE FUNCTION geocatalog.note_written(_pairs jsonb, _spans jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.populated_collections (collection, readers)
    SELECT p->>0, p->>1 FROM jsonb_array_elements(coalesce(_pairs, '[]')) p
    ON CONFLICT DO NOTHING;
    INSERT INTO geocatalog.item_spans (collection, span)
    SELECT n.collection, n.span::interval FROM jsonb_each_text(_spans) n(collection, span)
    WHERE NOT EXISTS (SELECT 1 FROM geocatalog.item_spans s
                      WHERE s.collection = n.collection AND s.span >= n.span::interval)
    ON CONFLICT (collection) DO UPDATE SET span = greatest(geocatalog.item_spans.span,
                                                           EXCLUDED.span);
END;
$$;

-- The outbox's `deleted` events of items removed (`_ids` and `_collections` in pairs), each
-- with its index row as it was: what a subscriber may read of it is decided at delivery.
CREATE OR REPLACE FUNCTION geocatalog.announce_removed(_ids text[], _collections text[])
RETURNS void LANGUAGE sql SET search_path = pg_catalog, public AS $$
    INSERT INTO geocatalog.item_events (kind, id, collection, datetime, end_datetime, geometry,
                                        content, words, owner, readers)
    SELECT 'deleted', r.id, r.collection, s.datetime, s.end_datetime, s.geometry, s.content,
           s.words, s.owner, s.readers
    FROM unnest(_ids, _collections) AS r(id, collection)
    LEFT JOIN geocatalog.search_items s ON s.id = r.id AND s.collection = r.collection;
$$;

-- The index's writers: 009's index_upsert (on INSERT) and index_remove (on UPDATE and
-- DELETE) were two copies of the same upsert. They are one body now, each statement taking
-- the parts of its operation (a transition table exists only for the operations that have
-- it, and a plpgsql statement is planned only when it runs); the triggers of every
-- partition name both functions, so both are made from that body. Each collection's words
-- are made once a statement.
DO $migration$
DECLARE
    body constant text := $body$
BEGIN
    -- The outbox (019), while anyone listens: a removed item's index row before it goes; an
    -- item this transaction removed and writes again, updated (transition tables are seen
    -- only here, hence the statements in this body).
    IF EXISTS (SELECT FROM geocatalog.item_event_listeners) THEN
        IF TG_OP = 'DELETE' THEN
            PERFORM geocatalog.announce_removed(array_agg(o.id), array_agg(o.collection))
            FROM old_rows o;
            PERFORM set_config('geocatalog.items_removed', 'yes', true);
        ELSIF TG_OP = 'UPDATE' THEN
            PERFORM geocatalog.announce_removed(array_agg(o.id), array_agg(o.collection))
            FROM old_rows o
            WHERE NOT EXISTS (SELECT FROM new_rows n
                              WHERE n.id = o.id AND n.collection = o.collection);
            INSERT INTO geocatalog.item_events (kind, id, collection)
            SELECT CASE WHEN EXISTS (SELECT FROM old_rows o WHERE o.id = n.id
                                     AND o.collection = n.collection)
                        THEN 'updated' ELSE 'created' END, n.id, n.collection
            FROM new_rows n;
        ELSIF current_setting('geocatalog.items_removed', true) = 'yes' THEN
            WITH again AS (
                UPDATE geocatalog.item_events e
                SET kind = 'updated', datetime = NULL, end_datetime = NULL, geometry = NULL,
                    content = NULL, words = NULL, owner = NULL, readers = NULL
                FROM new_rows n
                WHERE e.kind = 'deleted' AND e.txid = pg_current_xact_id()
                  AND e.collection = n.collection AND e.id = n.id
                RETURNING e.id, e.collection)
            INSERT INTO geocatalog.item_events (kind, id, collection)
            SELECT 'created', n.id, n.collection FROM new_rows n
            WHERE NOT EXISTS (SELECT FROM again a WHERE a.id = n.id
                              AND a.collection = n.collection);
        ELSE
            INSERT INTO geocatalog.item_events (kind, id, collection)
            SELECT 'created', n.id, n.collection FROM new_rows n;
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection;
    ELSIF TG_OP = 'UPDATE' THEN  -- the rows updated away (an id or collection changed)
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection
          AND NOT EXISTS (SELECT 1 FROM new_rows n
                          WHERE n.id = o.id AND n.collection = o.collection);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO geocatalog.search_items (id, geometry, collection, datetime,
                                             end_datetime, content, words)
        SELECT n.id, n.geometry, n.collection, n.datetime, n.end_datetime,
               jsonb_build_object('properties', n.content->'properties'),
               geocatalog.own_words(n.content->'properties') || t.words
        FROM new_rows n
        JOIN (SELECT d.collection,
                     geocatalog.collection_words(d.collection, c.content->>'title') AS words
              FROM (SELECT DISTINCT collection FROM new_rows) d
              LEFT JOIN pgstac.collections c ON c.id = d.collection) t
          ON t.collection = n.collection
        ON CONFLICT (id, collection) DO UPDATE
            SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
                end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content,
                words = EXCLUDED.words;
        PERFORM geocatalog.note_written(
            (SELECT jsonb_agg(DISTINCT jsonb_build_array(collection, coalesce(
                geocatalog.item_readers(content->'properties'), 'public'))) FROM new_rows),
            (SELECT jsonb_object_agg(collection, span) FROM (
                SELECT collection, max(end_datetime - datetime) AS span FROM new_rows
                GROUP BY collection) n));
        PERFORM geocatalog.fresh_statistics();
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM geocatalog.forget_populated((
            SELECT jsonb_agg(DISTINCT jsonb_build_array(collection, coalesce(
                geocatalog.item_readers(content->'properties'), 'public'))) FROM old_rows));
    END IF;
    RETURN NULL;
END;
$body$;
    writer text;
BEGIN
    FOREACH writer IN ARRAY ARRAY['index_upsert', 'index_remove'] LOOP
        EXECUTE format('CREATE OR REPLACE FUNCTION geocatalog.%I() RETURNS trigger '
                       'LANGUAGE plpgsql SECURITY DEFINER '
                       'SET search_path = pg_catalog, public AS %L', writer, body);
    END LOOP;
END
$migration$;

CREATE OR REPLACE FUNCTION geocatalog.index_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    emptied text := (SELECT pgstac.partition_collection(a.relid)
                     FROM pg_partition_ancestors(TG_RELID) a
                     WHERE pgstac.partition_collection(a.relid) IS NOT NULL LIMIT 1);
BEGIN
    EXECUTE format('DELETE FROM geocatalog.search_items s WHERE s.collection = %L '
                   'AND NOT EXISTS (SELECT 1 FROM pgstac.items i WHERE i.collection = %L '
                   'AND i.id = s.id)', emptied, emptied);
    PERFORM geocatalog.forget_populated((
        SELECT jsonb_agg(jsonb_build_array(collection, readers))
        FROM geocatalog.populated_collections WHERE collection = emptied));
    RETURN NULL;
END;
$$;

-- A collection's new title is in its items' words at once (an admin's rare write: it
-- rewrites the collection's rows of the index).
CREATE OR REPLACE FUNCTION geocatalog.collection_retitled() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    UPDATE geocatalog.search_items s
    SET words = geocatalog.item_words(s.content->'properties', s.collection,
                                      NEW.content->>'title')
    WHERE s.collection = NEW.id;
    RETURN NULL;
END;
$$;
