-- Functions replaced by others of functions/*.sql (a function file creates, never drops).
-- One read of an item by its key, `geocatalog.stored_item`: the hydrated reads beside it go
-- (the API hydrates what it reads).
DROP FUNCTION IF EXISTS geocatalog.get_item(text, text);
DROP FUNCTION IF EXISTS geocatalog.read_item(text, text, jsonb);
-- What written rows tell of their collections, in one call: `geocatalog.note_written`.
DROP FUNCTION IF EXISTS geocatalog.note_populated(jsonb);
DROP FUNCTION IF EXISTS geocatalog.note_spans(jsonb);
