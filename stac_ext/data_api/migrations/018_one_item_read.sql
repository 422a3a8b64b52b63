-- One read of an item by its key, `geocatalog.stored_item` (functions/items.sql): the
-- hydrated reads beside it go (the API hydrates what it reads).
DROP FUNCTION IF EXISTS geocatalog.get_item(text, text);
DROP FUNCTION IF EXISTS geocatalog.read_item(text, text, jsonb);
