-- The generated `variables` tree: collections grouped by family (and sub-family) of their
-- standard name's words, by rules an administrator may change (`custom`; NULL: the ones
-- this release ships, which `migrate` keeps current). Each collection's families are
-- kept as collections are made (a statement trigger, whatever writes them) and removed
-- with them (the foreign key); the tree shows those that hold items the reader reads.

-- The id is the generated tree's: a catalog of a user's named so at the top level moves
-- aside (its subtree with it), as `variables-1`.
UPDATE catalogs.catalogs SET id = 'variables-1' WHERE parent_pk IS NULL AND id = 'variables';
UPDATE catalogs.catalogs SET path = 'variables-1' || substr(path, length('variables') + 1)
WHERE path = 'variables' OR path LIKE 'variables/%';
ALTER TABLE catalogs.catalogs ADD CONSTRAINT catalogs_generated_id
    CHECK (parent_pk IS NOT NULL OR id <> 'variables');

CREATE TABLE catalogs.family_rules (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    shipped jsonb NOT NULL,
    custom jsonb,
    applied jsonb,  -- the rules the memberships below were made by
    updated timestamptz NOT NULL DEFAULT now(),
    updated_by text
);

CREATE TABLE catalogs.collection_families (
    collection_id text NOT NULL REFERENCES pgstac.collections (id) ON DELETE CASCADE,
    family text NOT NULL,
    subfamily text NOT NULL DEFAULT '',  -- '': in the family itself
    PRIMARY KEY (family, subfamily, collection_id)
);
CREATE INDEX collection_families_collection_idx ON catalogs.collection_families (collection_id);
-- pgstac's roles cascade into it when they delete a collection
GRANT SELECT, DELETE ON catalogs.collection_families TO pgstac_ingest, pgstac_admin;

CREATE TRIGGER collections_families AFTER INSERT ON pgstac.collections
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION catalogs.collections_added();
