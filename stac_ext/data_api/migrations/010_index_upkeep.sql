-- The search index's upkeep made cheaper for bulk loads, with the same rows: a load of a
-- million items into 5,000 collections writes each index row in the transaction of its
-- item, and makes each partition's triggers as pgstac makes the partition (measured in
-- docs/performance.md).
--
-- - A statement's items share their collection (pypgstac writes one partition a statement):
--   the collection's words are made once per collection, not once per item. An item's words
--   stay item_words(): its own words, then its collection's (tsvector || is associative).
-- - The foreign key from the index to pgstac.collections checked each row written (a tenth
--   of a row's cost). pgstac.items holds only items of existing collections, so the index
--   can hold no other: what the key did on a collection's deletion, a trigger does.
-- - A partition pgstac has just made is empty: its triggers are made, and nothing is copied.
-- - The markers' and spans' writers are plpgsql (a session keeps their plans; an SQL
--   function's statement was planned again at each call, once per partition written).
-- - The index's two writers were copies of one upsert: they are made from one body.

-- The words of an item without those of its collection (a field it lacks adds none).

CREATE TRIGGER geocatalog_index_collections_deleted
AFTER DELETE ON pgstac.collections
REFERENCING OLD TABLE AS deleted_collections FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.index_collections_deleted();

ALTER TABLE geocatalog.search_items DROP CONSTRAINT search_items_collection_fkey;
