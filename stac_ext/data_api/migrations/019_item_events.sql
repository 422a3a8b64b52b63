-- What happens to items, for whoever listens (the subscriptions): a transactional outbox.
-- The search index's statement triggers (functions/index.sql) write one row per item a
-- statement creates, updates or deletes, in the transaction of the write, however items
-- arrive (the API, `geocatalog load`, publishing, SQL): an acknowledged write's events are
-- committed with it, and a rolled-back write leaves none. While nothing listens
-- (`item_event_listeners` is empty) no row is written: the writes pay nothing.
--
-- A created or updated item's row holds its keys (its state is the search index's when the
-- row is read); a deleted item's holds its index row as it was, the last of it. An item
-- deleted and written again by one transaction (pgstac's and our updates, an upsert's
-- replacement) is one `updated` row.

CREATE TABLE geocatalog.item_event_listeners (
    name text PRIMARY KEY
);

CREATE TABLE geocatalog.item_events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('created', 'updated', 'deleted')),
    happened timestamptz NOT NULL DEFAULT now(),
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    -- the search index's columns, by their names there: a search's SQL reads either
    id text NOT NULL,
    collection text NOT NULL,
    datetime timestamptz,
    end_datetime timestamptz,
    geometry geometry,
    content jsonb,
    words tsvector,
    owner text,
    readers text
);
-- an item's removals: found again when its transaction writes it again (an update), and
-- by an earlier event of it read once it is gone
CREATE INDEX item_events_deleted_idx ON geocatalog.item_events (collection, id, txid)
    WHERE kind = 'deleted';
