-- Who may read an item: `properties.visibility` is `public` (or absent), `private` (its
-- owner and administrators), or `project` (with `properties.project`: that group's members,
-- and its owner). Decided in the SQL that answers each read, never after it: a hidden item
-- is absent from a search, its page and its count, exactly as a missing one is.
--
-- The search index keeps who reads each item in `readers`, a column the database computes
-- from the properties it already keeps (a generated column): NULL for a public item,
-- `user:<owner>` for a private one, `project:<group>`. Anything else an operator may have
-- loaded (an unknown visibility, a `project` without its group, a private item without an
-- owner) reads as `private`, which only administrators read: fail closed. The markers of
-- non-empty collections (`populated_collections`, migration 001) are kept per readers too:
-- the collections listing shows those with an item the caller reads.

ALTER TABLE geocatalog.search_items ADD COLUMN readers text
    GENERATED ALWAYS AS (geocatalog.item_readers(content->'properties')) STORED;
-- one collection's count for a reader stays an index-only scan (items pages count theirs)
DROP INDEX geocatalog.search_items_collection_idx;
CREATE INDEX search_items_collection_idx
    ON geocatalog.search_items (collection, datetime DESC) INCLUDE (readers);

-- One item as stored, if `_reader` may read it (else NULL, as for a missing item). The
-- item's row and who reads it in one statement; a public item (most) is answered without
-- looking at the reader, a hidden one by `may_read`'s rule.
DROP FUNCTION IF EXISTS geocatalog.stored_item(text, text);

-- Non-empty collections, per readers of their items (`public` for public ones).
ALTER TABLE geocatalog.populated_collections ADD COLUMN readers text NOT NULL DEFAULT 'public';
ALTER TABLE geocatalog.populated_collections DROP CONSTRAINT populated_collections_pkey;
ALTER TABLE geocatalog.populated_collections ADD PRIMARY KEY (collection, readers);
DELETE FROM geocatalog.populated_collections;
INSERT INTO geocatalog.populated_collections (collection, readers)
SELECT DISTINCT collection, coalesce(readers, 'public') FROM geocatalog.search_items;
-- a collection's hidden items, for the markers' upkeep (public items: no entry)
CREATE INDEX search_items_readers_idx ON geocatalog.search_items (collection, readers)
    WHERE readers IS NOT NULL;

-- The new column's statistics (its null fraction: most items are public), before any
-- search plans with it: unknown, `readers IS NULL` would read as rare and an items page
-- scan its whole collection instead of the first of its index.
ANALYZE geocatalog.search_items;
