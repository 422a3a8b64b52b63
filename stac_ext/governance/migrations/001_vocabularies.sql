-- The conventions' vocabularies: each convention's current table (version recorded), its
-- names (description, canonical units) and aliases (a retired or other name -> the
-- current one), and every load. `geocatalog migrate` loads CF's table when it is missing;
-- `geocatalog vocabulary load|update` loads the others and newer ones.
-- Names keep the table's spelling (CF's hold capitals: `..._13C_...`); `key` is the name
-- lower-cased, as a collection id holds it, unique within a convention.

CREATE SCHEMA governance;

CREATE TABLE governance.conventions (
    convention text PRIMARY KEY CHECK (convention ~ '^[a-z0-9_]+$'),
    title text NOT NULL,
    version text NOT NULL,
    source text NOT NULL,
    loaded timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE governance.names (
    convention text NOT NULL REFERENCES governance.conventions ON DELETE CASCADE,
    key text NOT NULL CHECK (key ~ '^[a-z0-9_]+$'),
    name text NOT NULL CHECK (lower(name) = key),
    description text NOT NULL DEFAULT '',
    units text NOT NULL DEFAULT '',
    -- the version whose table no longer held it, and named no alias for it: it stays
    -- known (its collections and items with it), NULL while the table holds it
    retired_in text,
    PRIMARY KEY (convention, key)
);

CREATE TABLE governance.aliases (
    convention text NOT NULL REFERENCES governance.conventions ON DELETE CASCADE,
    key text NOT NULL CHECK (key ~ '^[a-z0-9_]+$'),
    alias text NOT NULL CHECK (lower(alias) = key),
    target_key text NOT NULL,
    -- the version in which a name of ours became this alias (NULL: the table's own)
    since text,
    PRIMARY KEY (convention, key),
    FOREIGN KEY (convention, target_key) REFERENCES governance.names (convention, key)
        ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
);

-- Who loaded which version when, and what it changed.
CREATE TABLE governance.vocabulary_loads (
    pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    convention text NOT NULL,
    version text NOT NULL,
    previous_version text,
    source text NOT NULL,
    loaded_by text NOT NULL,
    loaded timestamptz NOT NULL DEFAULT now(),
    names int NOT NULL,
    aliases int NOT NULL,
    added int NOT NULL,
    retired text[] NOT NULL DEFAULT '{}'
);
