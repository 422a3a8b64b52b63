-- The search index: every item's search keys in one unpartitioned table, so that a search's
-- cost does not grow with the number of collections (pgstac partitions items by collection:
-- a search over thousands of collections planned, and locked, thousands of partitions, and
-- failed at PostgreSQL's default lock table). Its columns are pgstac.items' own names, and
-- `content` holds the item's properties: pgstac's own translation of a search into SQL
-- (stac_search_to_where, sort_sqlorderby, get_token_filter) applies to it unchanged, so the
-- answers stay pgstac's. A page's items are then read from their partitions by key.
--
-- Kept by statement triggers (set-based, with transition tables) on pgstac.items and on each
-- of its partitions, in the transaction that writes the items, however items arrive (the
-- API through pgstac.items, pypgstac's COPY into a partition, upserts, moves): the index
-- never disagrees with pgstac.items. A statement fires the triggers of the table it names
-- only, hence triggers on every member of the partition tree. They are put on existing
-- partitions a batch per transaction (`index_partitions`, a step of every `geocatalog
-- migrate`), and on new ones when pgstac records them (partition_stats): nothing locks
-- every partition at once.

CREATE TABLE geocatalog.search_items (
    id text NOT NULL,
    geometry geometry NOT NULL,
    collection text NOT NULL REFERENCES pgstac.collections (id) ON DELETE CASCADE,
    datetime timestamptz NOT NULL,
    end_datetime timestamptz NOT NULL,
    content jsonb NOT NULL,  -- {"properties": ...}: what pgstac's filters and sorts read
    PRIMARY KEY (id, collection)
);
-- Keys as narrow as the orders allow: the default order (datetime, then collection and id,
-- all descending), one collection's, an owner's. A page is read in the leading keys' order
-- and its rare ties sorted (an incremental sort); wider keys cost a bulk load a third more.
CREATE INDEX search_items_datetime_idx ON geocatalog.search_items (datetime DESC);
-- one collection in that order (items pages), and emptiness checks
CREATE INDEX search_items_collection_idx
    ON geocatalog.search_items (collection, datetime DESC);
CREATE INDEX search_items_geometry_idx ON geocatalog.search_items USING GIST (geometry);
-- the `owner` queryable, in the default order (owner search); text properties are read with
-- `->>`, which is what pgstac's to_text wrapper gives for them (geocatalog.search writes
-- them so: to_text, a function call per row, tripled this index's upkeep)
CREATE INDEX search_items_owner_idx ON geocatalog.search_items
    ((content->'properties'->>'owner'), datetime DESC);

-- The longest time span (end_datetime - datetime) of a collection's items, never shrunk: a
-- search's `end_datetime >= t` then also bounds datetime (>= t - the longest span), which
-- the datetime index can use (pgstac's partitions bound both by their ranges; one table
-- needs this). Written only when an item's span is longer than the stored one, so writers
-- of a collection do not queue on its row.
CREATE TABLE geocatalog.item_spans (
    collection text PRIMARY KEY REFERENCES pgstac.collections (id) ON DELETE CASCADE,
    span interval NOT NULL
);
-- the longest, read by every search with a time window: one index entry, not a scan
CREATE INDEX item_spans_span_idx ON geocatalog.item_spans (span);

CREATE FUNCTION geocatalog.note_spans(_spans jsonb) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    INSERT INTO geocatalog.item_spans (collection, span)
    SELECT n.collection, n.span::interval FROM jsonb_each_text(_spans) n(collection, span)
    WHERE NOT EXISTS (SELECT 1 FROM geocatalog.item_spans s
                      WHERE s.collection = n.collection AND s.span >= n.span::interval)
    ON CONFLICT (collection) DO UPDATE SET span = greatest(geocatalog.item_spans.span,
                                                           EXCLUDED.span)
$$;

-- Rows written to pgstac.items (or a partition of it), into the index: the statement's
-- transition tables, set-based (a row trigger halved the rate of a bulk load).
CREATE FUNCTION geocatalog.index_upsert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO geocatalog.search_items (id, geometry, collection, datetime, end_datetime,
                                         content)
    SELECT id, geometry, collection, datetime, end_datetime,
           jsonb_build_object('properties', content->'properties')
    FROM new_rows
    ON CONFLICT (id, collection) DO UPDATE
        SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
            end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content;
    INSERT INTO geocatalog.populated_collections (collection)
    SELECT DISTINCT collection FROM new_rows
    ON CONFLICT DO NOTHING;
    PERFORM geocatalog.note_spans((SELECT jsonb_object_agg(collection, span) FROM (
        SELECT collection, max(end_datetime - datetime) AS span FROM new_rows
        GROUP BY collection) n));
    RETURN NULL;
END;
$$;

-- Rows removed from pgstac.items (deleted, or updated away: an id or collection changed).
CREATE FUNCTION geocatalog.index_remove() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM geocatalog.search_items s USING old_rows o
        WHERE s.id = o.id AND s.collection = o.collection
          AND NOT EXISTS (SELECT 1 FROM new_rows n
                          WHERE n.id = o.id AND n.collection = o.collection);
        INSERT INTO geocatalog.search_items (id, geometry, collection, datetime,
                                             end_datetime, content)
        SELECT id, geometry, collection, datetime, end_datetime,
               jsonb_build_object('properties', content->'properties')
        FROM new_rows
        ON CONFLICT (id, collection) DO UPDATE
            SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
                end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content;
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

-- A partition emptied by TRUNCATE (no transition table): what it held leaves the index.
CREATE FUNCTION geocatalog.index_truncated() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    emptied text := (SELECT pgstac.partition_collection(a.relid)
                     FROM pg_partition_ancestors(TG_RELID) a
                     WHERE pgstac.partition_collection(a.relid) IS NOT NULL LIMIT 1);
BEGIN
    -- the collection's literal: pgstac.items is read in that collection's partitions only
    EXECUTE format('DELETE FROM geocatalog.search_items s WHERE s.collection = %L '
                   'AND NOT EXISTS (SELECT 1 FROM pgstac.items i WHERE i.collection = %L '
                   'AND i.id = s.id)', emptied, emptied);
    IF NOT EXISTS (SELECT 1 FROM geocatalog.search_items WHERE collection = emptied) THEN
        DELETE FROM geocatalog.populated_collections WHERE collection = emptied;
    END IF;
    RETURN NULL;
END;
$$;

-- The triggers of one member of pgstac.items' partition tree (the root included).
CREATE FUNCTION geocatalog.index_triggers(member regclass) RETURNS void
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

-- One partition of pgstac.items into the index: its triggers, then (a leaf) its rows,
-- under the triggers' lock: no write slips between the two.
CREATE FUNCTION geocatalog.index_partition(member regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM geocatalog.index_triggers(member);
    IF (SELECT relkind FROM pg_class WHERE oid = member) = 'r' THEN
        EXECUTE format('CREATE TRIGGER geocatalog_index_truncate AFTER TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()',
                       member);
        EXECUTE format('INSERT INTO geocatalog.search_items (id, geometry, collection, '
                       'datetime, end_datetime, content) SELECT id, geometry, collection, '
                       'datetime, end_datetime, jsonb_build_object(''properties'', '
                       'content->''properties'') FROM %s ON CONFLICT DO NOTHING', member);
        EXECUTE format('INSERT INTO geocatalog.populated_collections (collection) '
                       'SELECT DISTINCT collection FROM %s ON CONFLICT DO NOTHING', member);
        EXECUTE format('SELECT geocatalog.note_spans((SELECT jsonb_object_agg(collection, '
                       'span) FROM (SELECT collection, max(end_datetime - datetime) AS span '
                       'FROM %s GROUP BY collection) n))', member);
    END IF;
END;
$$;

SELECT geocatalog.index_triggers('pgstac.items');  -- statement triggers: the root alone

-- The partitions of pgstac.items not in the index yet.
CREATE FUNCTION geocatalog.unindexed_partitions() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
    SELECT t.relid FROM pg_partition_tree('pgstac.items'::regclass) t
    WHERE t.level > 0 AND NOT EXISTS (
        SELECT 1 FROM pg_trigger g
        WHERE g.tgrelid = t.relid AND g.tgname = 'geocatalog_index_insert')
$$;

-- A batch of them into the index (a step of `geocatalog migrate`: one transaction a batch,
-- so that the locks taken stay a batch's whatever the number of partitions): how many.
CREATE FUNCTION geocatalog.index_partitions(batch int) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    member regclass;
    n int := 0;
BEGIN
    FOR member IN SELECT * FROM geocatalog.unindexed_partitions() LIMIT batch LOOP
        PERFORM geocatalog.index_partition(member);
        n := n + 1;
    END LOOP;
    RETURN n;
END;
$$;

-- A partition pgstac creates (it records each in partition_stats, in the transaction that
-- creates it and before any item is written to it) is indexed at once, with the partitioned
-- table between it and pgstac.items when its collection is partitioned by time too.
CREATE FUNCTION geocatalog.index_new_partition() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    leaf regclass := to_regclass(format('pgstac.%I', NEW.partition));
    member regclass;
BEGIN
    IF leaf IS NULL THEN
        RETURN NULL;
    END IF;
    FOR member IN
        SELECT a.relid FROM pg_partition_ancestors(leaf) a
        WHERE a.relid <> 'pgstac.items'::regclass AND NOT EXISTS (
            SELECT 1 FROM pg_trigger g
            WHERE g.tgrelid = a.relid AND g.tgname = 'geocatalog_index_insert')
    LOOP
        PERFORM geocatalog.index_partition(member);
    END LOOP;
    RETURN NULL;
END;
$$;

-- on any change too: a partition pgstac drops and makes again keeps its row
CREATE TRIGGER geocatalog_index_new_partition
AFTER INSERT OR UPDATE ON pgstac.partition_stats
FOR EACH ROW EXECUTE FUNCTION geocatalog.index_new_partition();

-- Installs of migration 001's first form have row triggers on pgstac.items calling
-- mark_populated on every partition (dropping them would lock every partition at once):
-- the index's triggers keep the markers now, so it does nothing. Its statement trigger
-- is on the parent only, and goes.
DROP TRIGGER IF EXISTS geocatalog_unmark_emptied ON pgstac.items;
DROP FUNCTION IF EXISTS geocatalog.unmark_emptied();
DO $$
BEGIN
    IF to_regprocedure('geocatalog.mark_populated()') IS NOT NULL THEN
        EXECUTE $f$
            CREATE OR REPLACE FUNCTION geocatalog.mark_populated() RETURNS trigger
            LANGUAGE plpgsql AS $b$ BEGIN RETURN NULL; END; $b$
        $f$;
    END IF;
END $$;
