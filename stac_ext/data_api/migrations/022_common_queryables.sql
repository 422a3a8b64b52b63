-- Items' `title` and `description` (STAC common metadata) as queryables: filters named them
-- already (pgstac reads any property), but /queryables listed only datetime, geometry, id
-- and owner, so clients that build their filters from it (STAC Browser) offered only the
-- owner. Text, read through `to_text` as `owner`, no index (a title is searched by words:
-- `q`); inserted without pgstac's per-partition walk, as migration 003 explains.
SET LOCAL search_path TO pgstac, public;

ALTER TABLE pgstac.queryables DISABLE TRIGGER queryables_insert_trigger;
INSERT INTO pgstac.queryables (name, definition, property_wrapper, property_index_type)
SELECT q.name, q.definition::jsonb, 'to_text', NULL
FROM (VALUES
    ('title', '{"type": "string", "title": "Title", "description": "A human-readable title of the item"}'),
    ('description', '{"type": "string", "title": "Description", "description": "A detailed description of the item"}')
) AS q(name, definition)
WHERE NOT EXISTS (SELECT 1 FROM pgstac.queryables e WHERE e.name = q.name);
ALTER TABLE pgstac.queryables ENABLE TRIGGER queryables_insert_trigger;
