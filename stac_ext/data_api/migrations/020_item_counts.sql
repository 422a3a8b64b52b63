-- Counts of the search index's rows kept ahead of reads (`item_counts`), by collection,
-- readers (with the owner of a row that is not public: an owner reads their own whatever
-- its visibility) and year of `datetime`, so that an aggregation of no criteria but
-- collections (the landing page's facets, a collection's) sums a few rows per collection and
-- year instead of counting every item: its cost follows the collections and years held, not
-- the items (a count read 200,000 rows in 0.27 s; ten million in seconds). Years, not
-- months: a catalog of 5,000 variables over 24 years has 120,000 keys at most, where its
-- months would make about one key per item up to 1.4 million.
--
-- The rows are deltas: each statement that writes the index adds one row per key it
-- changed (+ the rows it added, - those it removed), in its own transaction, so writers
-- never wait on one another for a count; a key's deltas are summed into one row now and
-- then (`functions/counts.sql`). A key's count is the sum of its rows.
CREATE TABLE geocatalog.item_counts (
    collection text NOT NULL,
    readers text,  -- the index's: NULL for a public row
    owner text,  -- the row's owner when it is not public (else NULL)
    year timestamptz NOT NULL,  -- of `datetime`, in UTC (`geocatalog.count_key`)
    n bigint NOT NULL
);
CREATE INDEX item_counts_collection_idx ON geocatalog.item_counts (collection);

INSERT INTO geocatalog.item_counts (collection, readers, owner, year, n)
SELECT k.*, count(*)
FROM geocatalog.search_items r,
     geocatalog.count_key(r.collection, r.readers, r.owner, r.datetime) k
GROUP BY 1, 2, 3, 4;

CREATE TRIGGER geocatalog_counts_insert AFTER INSERT ON geocatalog.search_items
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.count_rows();
CREATE TRIGGER geocatalog_counts_update AFTER UPDATE ON geocatalog.search_items
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.count_rows();
CREATE TRIGGER geocatalog_counts_delete AFTER DELETE ON geocatalog.search_items
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
EXECUTE FUNCTION geocatalog.count_rows();
