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

ALTER TABLE geocatalog.search_items ADD COLUMN words tsvector;
UPDATE geocatalog.search_items s
SET words = geocatalog.item_words(s.content->'properties', s.collection, c.content->>'title')
FROM pgstac.collections c WHERE c.id = s.collection;
ALTER TABLE geocatalog.search_items ALTER COLUMN words SET NOT NULL;
CREATE INDEX search_items_words_idx ON geocatalog.search_items USING GIN (words);
CREATE TRIGGER geocatalog_collection_retitled
AFTER UPDATE ON pgstac.collections
FOR EACH ROW WHEN (OLD.content->>'title' IS DISTINCT FROM NEW.content->>'title')
EXECUTE FUNCTION geocatalog.collection_retitled();
