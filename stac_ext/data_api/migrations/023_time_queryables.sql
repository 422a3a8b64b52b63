-- Items' `created` and `updated` (STAC common metadata, RFC 3339 instants) as queryables
-- of instants: a filter comparing one with a TIMESTAMP read the property as text, and
-- the database refused the comparison ("operator does not exist: text > timestamp with
-- time zone", a 400 in its words). Read through `to_tstz`, no index; inserted without
-- pgstac's per-partition walk, as migration 003 explains.
SET LOCAL search_path TO pgstac, public;

ALTER TABLE pgstac.queryables DISABLE TRIGGER queryables_insert_trigger;
INSERT INTO pgstac.queryables (name, definition, property_wrapper, property_index_type)
SELECT q.name, q.definition::jsonb, 'to_tstz', NULL
FROM (VALUES
    ('created', '{"type": "string", "format": "date-time", "title": "Created", "description": "When the metadata of the item was created"}'),
    ('updated', '{"type": "string", "format": "date-time", "title": "Updated", "description": "When the metadata of the item was last updated"}')
) AS q(name, definition)
WHERE NOT EXISTS (SELECT 1 FROM pgstac.queryables e WHERE e.name = q.name);
ALTER TABLE pgstac.queryables ENABLE TRIGGER queryables_insert_trigger;
