-- Items carry `properties.owner` (set by the server from the token). As a pgstac
-- queryable, `owner` is listed in /queryables and filters read it through `to_text`; its
-- index is the search index's (migration 004), one table whatever the number of partitions.
-- pgstac's statement trigger on queryables walks every partition (one lock each, in this
-- transaction) to maintain per-partition indexes: a queryable asking for none needs no such
-- walk, so it is skipped for this one insert. (This migration's first form asked pgstac for
-- a BTREE index on every partition.)
SET LOCAL search_path TO pgstac, public;

ALTER TABLE pgstac.queryables DISABLE TRIGGER queryables_insert_trigger;
INSERT INTO pgstac.queryables (name, definition, property_wrapper, property_index_type)
SELECT 'owner',
       '{"type": "string", "title": "Owner", "description": "User name of the item owner"}',
       'to_text', NULL
WHERE NOT EXISTS (SELECT 1 FROM pgstac.queryables WHERE name = 'owner');
ALTER TABLE pgstac.queryables ENABLE TRIGGER queryables_insert_trigger;
