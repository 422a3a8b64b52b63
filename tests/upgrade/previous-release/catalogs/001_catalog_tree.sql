-- The /catalogs tree: catalogs addressed by their path of ids, any depth.
-- A catalog's subtree goes with it (parent FK, ON DELETE CASCADE); its links are
-- references (collection id, item id), never copied hrefs.

CREATE SCHEMA catalogs;

CREATE TABLE catalogs.catalogs (
    pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parent_pk bigint REFERENCES catalogs.catalogs (pk) ON DELETE CASCADE,  -- NULL: top level
    id text NOT NULL CHECK (id ~ '^[A-Za-z0-9_.-]+$'),
    path text NOT NULL UNIQUE,  -- 'a/b/c': one index lookup per request
    title text,
    description text NOT NULL,
    owner text NOT NULL,
    extra jsonb NOT NULL DEFAULT '{}'::jsonb,  -- other STAC fields of the catalog
    extra_links jsonb NOT NULL DEFAULT '[]'::jsonb,  -- links that are not tree structure
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (parent_pk, id)
);
CREATE INDEX catalogs_parent_idx ON catalogs.catalogs (parent_pk);

-- `child` links to collections (item_id NULL) and `item` links to items.
CREATE TABLE catalogs.links (
    catalog_pk bigint NOT NULL REFERENCES catalogs.catalogs (pk) ON DELETE CASCADE,
    position int NOT NULL,
    collection_id text NOT NULL REFERENCES pgstac.collections (id) ON DELETE CASCADE,
    item_id text,
    title text,
    UNIQUE NULLS NOT DISTINCT (catalog_pk, collection_id, item_id)
);
CREATE INDEX catalogs_links_target_idx ON catalogs.links (collection_id, item_id);

-- pgstac's roles cascade into the links when they delete a collection.
GRANT USAGE ON SCHEMA catalogs TO pgstac_read, pgstac_ingest, pgstac_admin;
GRANT SELECT, DELETE ON catalogs.links TO pgstac_ingest, pgstac_admin;
