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

SELECT geocatalog.index_triggers('pgstac.items');  -- statement triggers: the root alone

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
