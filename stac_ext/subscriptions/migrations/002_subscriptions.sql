-- Subscriptions to searches: who is told of which items, how, what was told, and the
-- standing jobs' windows. Matched from the data API's outbox (geocatalog.item_events).

CREATE TABLE subscriptions.subscriptions (
    id uuid PRIMARY KEY,
    owner text NOT NULL,
    title text,
    search jsonb NOT NULL,             -- the saved search, as the API shows it
    -- what every match meets, read from this table's indexes by the matcher (match.sql)
    collections text[],                -- NULL: any collection
    geometry geometry,                 -- the search's bbox or intersects; NULL: anywhere
    starts timestamptz,                -- the search's datetime window, as pgstac reads it
    ends timestamptz,
    items_owner text,                  -- the search's `owner`
    -- the rest of the search, as SQL over the search index's columns (NULL: nothing more)
    condition text,
    catalog text,                      -- a catalog's path: the items its subtree links
    kinds text[] NOT NULL,             -- which of created, updated, deleted she is told of
    -- who she reads as: her groups and rights as her token had them when she last saved it
    reader jsonb NOT NULL,
    reader_keys text[],                -- geocatalog.reader_keys(reader); NULL: everything
    webhook text,                      -- where events are POSTed (NULL: the feed only)
    secret_version int NOT NULL DEFAULT 1,  -- the webhook secret's (derived, never stored)
    service_url text NOT NULL,         -- the service's root as she reached it: links
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    paused_reason text,
    job jsonb,                         -- a standing job (its secret inputs as placeholders)
    job_secrets text,                  -- and those, encrypted
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_owner_idx ON subscriptions.subscriptions (owner, created);
-- those with a standing job (a batch asks whether any matched)
CREATE INDEX subscriptions_jobs_idx ON subscriptions.subscriptions (id) WHERE job IS NOT NULL;
-- the matcher's ways in: by place, else by collection, else by the items' owner, else
-- every item
CREATE INDEX subscriptions_geometry_idx ON subscriptions.subscriptions USING GIST (geometry);
CREATE INDEX subscriptions_collections_idx ON subscriptions.subscriptions
    USING GIN (collections) WHERE geometry IS NULL;
CREATE INDEX subscriptions_items_owner_idx ON subscriptions.subscriptions (items_owner)
    WHERE geometry IS NULL AND collections IS NULL;
CREATE INDEX subscriptions_any_item_idx ON subscriptions.subscriptions (id)
    WHERE geometry IS NULL AND collections IS NULL AND items_owner IS NULL;

-- What changes as events come and go, apart (a narrow row, two small indexes): the rows
-- above, and their place and collection indexes, are written only when she changes them.
CREATE TABLE subscriptions.progress (
    subscription_id uuid PRIMARY KEY REFERENCES subscriptions.subscriptions ON DELETE CASCADE,
    sending boolean NOT NULL,          -- a webhook, active: events are sent to it
    -- her events are numbered 1, 2, ... (the feed's cursor); a webhook is sent them in order
    last_number bigint NOT NULL DEFAULT 0,
    delivered_number bigint NOT NULL DEFAULT 0,
    failures int NOT NULL DEFAULT 0,   -- attempts failed in a row
    failing_since timestamptz,
    next_attempt timestamptz,
    lease_until timestamptz,           -- a dispatcher is sending (until then)
    last_error text,
    dropped bigint NOT NULL DEFAULT 0  -- events dropped unsent (kept too long, too many)
);
-- webhooks with events to send
CREATE INDEX progress_due_idx ON subscriptions.progress (next_attempt)
    WHERE sending AND last_number > delivered_number;

-- Each subscription's matched events: its feed, and what its webhook is sent. The rows a
-- burst of items makes are many (one per subscription an item meets): narrow, and without
-- a foreign key (checked per row); a subscription's go with it (`subscriptions_gone`).
-- An event's CloudEvent id is made of its subscription and number (the same on every copy).
CREATE TABLE subscriptions.events (
    subscription_id uuid NOT NULL,
    number bigint NOT NULL,
    kind text NOT NULL,
    collection text NOT NULL,
    item_id text NOT NULL,
    happened timestamptz NOT NULL,     -- the item's write
    matched timestamptz NOT NULL DEFAULT now(),
    -- who read the item when it was matched: a deleted item's check at delivery
    owner text,
    readers text,
    PRIMARY KEY (subscription_id, number)
);
-- rows come in time order: a block range index, next to free to keep (pruning by age)
CREATE INDEX events_matched_idx ON subscriptions.events USING BRIN (matched);

-- Each webhook attempt: the delivery log (the last ones of each subscription are kept).
CREATE TABLE subscriptions.deliveries (
    subscription_id uuid NOT NULL REFERENCES subscriptions.subscriptions ON DELETE CASCADE,
    attempt bigint GENERATED ALWAYS AS IDENTITY,
    attempted timestamptz NOT NULL DEFAULT now(),
    number bigint,                     -- the event's
    event_id uuid,
    kind text,
    item text,                         -- collection/id
    status int,                        -- the receiver's HTTP status; NULL: no answer
    error text,
    milliseconds int,
    PRIMARY KEY (subscription_id, attempt)
);

-- A standing job's windows: each a run of its process on the items matched in it. The
-- window's number is its key: one job per window, however often it is triggered.
CREATE TABLE subscriptions.runs (
    subscription_id uuid NOT NULL REFERENCES subscriptions.subscriptions ON DELETE CASCADE,
    number int NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN (
        'open', 'due', 'submitting', 'submitted', 'successful', 'failed')),
    opened timestamptz NOT NULL DEFAULT now(),
    closes timestamptz,                -- the window's end in time (NULL: by count only)
    closed timestamptz,
    items int NOT NULL DEFAULT 0,
    attempts int NOT NULL DEFAULT 0,
    next_try timestamptz,
    claimed timestamptz,               -- a submission began (a dispatcher's lease)
    job_id text,                       -- the last attempt's job
    job_url text,
    jobs text[] NOT NULL DEFAULT '{}', -- every attempt's
    message text,
    updated timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subscription_id, number)
);
CREATE UNIQUE INDEX runs_open_idx ON subscriptions.runs (subscription_id) WHERE status = 'open';
CREATE INDEX runs_pending_idx ON subscriptions.runs (status, next_try)
    WHERE status IN ('open', 'due', 'submitting', 'submitted');

-- A window's items, each event of the subscription in one window at most (an event given
-- again, to any window, is given once).
CREATE TABLE subscriptions.run_items (
    subscription_id uuid NOT NULL,
    number int NOT NULL,
    collection text NOT NULL,
    item_id text NOT NULL,
    event_number bigint NOT NULL,
    PRIMARY KEY (subscription_id, number, collection, item_id),
    UNIQUE (subscription_id, event_number),
    FOREIGN KEY (subscription_id, number) REFERENCES subscriptions.runs ON DELETE CASCADE
);

-- A candidate match of the matcher: an outbox row and a subscription.
CREATE TYPE subscriptions.pair AS (seq bigint, subscription uuid);

CREATE TRIGGER subscriptions_gone AFTER DELETE ON subscriptions.subscriptions
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
    EXECUTE FUNCTION subscriptions.events_gone();

-- The data API writes its outbox while a subscription exists.
CREATE TRIGGER subscriptions_listening AFTER INSERT OR DELETE ON subscriptions.subscriptions
    FOR EACH STATEMENT EXECUTE FUNCTION subscriptions.listening();
