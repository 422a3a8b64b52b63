-- Who reads a catalog: `visibility` public (default), private (its owner and
-- administrators) or project (the members of its project, and its owner). A catalog is
-- read through the catalogs above it: one the caller may not read hides its subtree too.
-- The caller is the reader the API hands in, as for items (`reader` JSON: absent or {}
-- anonymous, {"user", "groups"}, {"all": true} an administrator).

ALTER TABLE catalogs.catalogs ADD COLUMN visibility text NOT NULL DEFAULT 'public'
    CHECK (visibility IN ('public', 'private', 'project'));
ALTER TABLE catalogs.catalogs ADD CONSTRAINT catalogs_project_visibility
    CHECK (visibility <> 'project' OR project IS NOT NULL);

DROP FUNCTION IF EXISTS catalogs.subtree_filter(text);
GRANT EXECUTE ON FUNCTION catalogs.subtree_filter(text, jsonb), catalogs.readable_pk(text, jsonb),
    catalogs.may_read(text, text, text, jsonb) TO pgstac_read, pgstac_ingest, pgstac_admin;
