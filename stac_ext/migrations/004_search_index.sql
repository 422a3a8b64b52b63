-- The search index: every item's search keys in one unpartitioned table, so that a search's
-- cost does not grow with the number of collections (pgstac partitions items by collection:
-- a search over thousands of collections planned, and locked, thousands of partitions, and
-- failed at PostgreSQL's default lock table). Its columns are pgstac.items' own names, and
-- `content` holds the item's properties: pgstac's own translation of a search into SQL
-- (stac_search_to_where, sort_sqlorderby, get_token_filter) applies to it unchanged, so the
-- answers stay pgstac's. A page's items are then read from their partitions by key.
--
-- Kept by row triggers on each partition of pgstac.items, in the transaction that writes the
-- item, however items arrive (API, pypgstac's COPY into a partition, upserts, moves): the
-- index never disagrees with pgstac.items. Triggers are put on existing partitions a batch
-- per transaction (`index_partitions`, a step of every `geocatalog migrate`), and on new
-- ones when pgstac records them (partition_stats): nothing locks every partition at once.

CREATE TABLE geocatalog.search_items (
    id text NOT NULL,
    geometry geometry NOT NULL,
    collection text NOT NULL REFERENCES pgstac.collections (id) ON DELETE CASCADE,
    datetime timestamptz NOT NULL,
    end_datetime timestamptz NOT NULL,
    content jsonb NOT NULL,  -- {"properties": ...}: what pgstac's filters and sorts read
    PRIMARY KEY (id, collection)
);
-- the default order (pgstac: datetime, then collection and id, all descending)
CREATE INDEX search_items_datetime_idx
    ON geocatalog.search_items (datetime DESC, collection DESC, id DESC);
-- one collection in that order (items pages), and emptiness checks
CREATE INDEX search_items_collection_idx
    ON geocatalog.search_items (collection, datetime DESC, id DESC);
CREATE INDEX search_items_end_datetime_idx ON geocatalog.search_items (end_datetime);
CREATE INDEX search_items_geometry_idx ON geocatalog.search_items USING GIST (geometry);
-- the `owner` queryable, in the default order (owner search), as pgstac writes it
CREATE INDEX search_items_owner_idx ON geocatalog.search_items
    (pgstac.to_text(content->'properties'->'owner'), datetime DESC, collection DESC, id DESC);

-- One row of pgstac.items, as the index holds it.
CREATE FUNCTION geocatalog.index_item() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR OLD.id <> NEW.id
                              OR OLD.collection <> NEW.collection) THEN
        DELETE FROM geocatalog.search_items WHERE id = OLD.id AND collection = OLD.collection;
        IF NOT EXISTS (SELECT 1 FROM geocatalog.search_items
                       WHERE collection = OLD.collection) THEN
            DELETE FROM geocatalog.populated_collections WHERE collection = OLD.collection;
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN NULL;
    END IF;
    INSERT INTO geocatalog.search_items (id, geometry, collection, datetime, end_datetime,
                                         content)
    VALUES (NEW.id, NEW.geometry, NEW.collection, NEW.datetime, NEW.end_datetime,
            jsonb_build_object('properties', NEW.content->'properties'))
    ON CONFLICT (id, collection) DO UPDATE
        SET geometry = EXCLUDED.geometry, datetime = EXCLUDED.datetime,
            end_datetime = EXCLUDED.end_datetime, content = EXCLUDED.content;
    IF NOT EXISTS (SELECT 1 FROM geocatalog.populated_collections
                   WHERE collection = NEW.collection) THEN
        INSERT INTO geocatalog.populated_collections (collection) VALUES (NEW.collection)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

-- A partition emptied by TRUNCATE (no row trigger fires): what it held leaves the index.
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

-- One leaf partition of pgstac.items into the index: its triggers, then its rows (under the
-- triggers' lock: no write slips between the two).
CREATE FUNCTION geocatalog.index_partition(leaf regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
    EXECUTE format('CREATE TRIGGER geocatalog_index_item AFTER INSERT OR UPDATE OR DELETE '
                   'ON %s FOR EACH ROW EXECUTE FUNCTION geocatalog.index_item()', leaf);
    EXECUTE format('CREATE TRIGGER geocatalog_index_truncated AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION geocatalog.index_truncated()', leaf);
    EXECUTE format('INSERT INTO geocatalog.search_items (id, geometry, collection, datetime, '
                   'end_datetime, content) SELECT id, geometry, collection, datetime, '
                   'end_datetime, jsonb_build_object(''properties'', content->''properties'') '
                   'FROM %s ON CONFLICT DO NOTHING', leaf);
    EXECUTE format('INSERT INTO geocatalog.populated_collections (collection) '
                   'SELECT DISTINCT collection FROM %s ON CONFLICT DO NOTHING', leaf);
END;
$$;

-- The leaf partitions of pgstac.items not in the index yet.
CREATE FUNCTION geocatalog.unindexed_partitions() RETURNS SETOF regclass
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
    SELECT t.relid FROM pg_partition_tree('pgstac.items'::regclass) t
    WHERE t.isleaf AND NOT EXISTS (
        SELECT 1 FROM pg_trigger g
        WHERE g.tgrelid = t.relid AND g.tgname = 'geocatalog_index_item')
$$;

-- A batch of them into the index (a step of `geocatalog migrate`: one transaction a batch,
-- so that the locks taken stay a batch's whatever the number of partitions): how many.
CREATE FUNCTION geocatalog.index_partitions(batch int) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
DECLARE
    leaf regclass;
    n int := 0;
BEGIN
    FOR leaf IN SELECT * FROM geocatalog.unindexed_partitions() LIMIT batch LOOP
        PERFORM geocatalog.index_partition(leaf);
        n := n + 1;
    END LOOP;
    RETURN n;
END;
$$;

-- A partition pgstac creates (it records each in partition_stats, in the transaction that
-- creates it and before any item is written to it) is indexed at once.
CREATE FUNCTION geocatalog.index_new_partition() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    leaf regclass := to_regclass(format('pgstac.%I', NEW.partition));
BEGIN
    IF leaf IS NOT NULL AND EXISTS (SELECT 1 FROM geocatalog.unindexed_partitions() u
                                    WHERE u = leaf) THEN
        PERFORM geocatalog.index_partition(leaf);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER geocatalog_index_new_partition
AFTER INSERT OR UPDATE OF partition ON pgstac.partition_stats
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
