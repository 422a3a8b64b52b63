-- Items carry `properties.owner` (set by the server from the token). As a pgstac
-- queryable with a BTREE index, `owner = ...` in a search is an index condition on every
-- partition, present and future (pgstac builds queryable indexes per partition).
-- pgstac's queryable triggers resolve its functions through the search_path.
SET LOCAL search_path TO pgstac, public;

INSERT INTO pgstac.queryables (name, definition, property_wrapper, property_index_type)
SELECT 'owner',
       '{"type": "string", "title": "Owner", "description": "User name of the item owner"}',
       'to_text', 'BTREE'
WHERE NOT EXISTS (SELECT 1 FROM pgstac.queryables WHERE name = 'owner');
