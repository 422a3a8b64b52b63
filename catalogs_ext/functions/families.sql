-- Variable families: which families (and sub-families) a standard name belongs to, by the
-- rules' words, and the memberships kept from them.
--
-- Rules: {"families": [{"id", "title", "description", "words": [...], "except": [...],
-- "subfamilies": [{"id", "title", "words": [...]}]}], "other": {"id", "title", ...}}. A
-- name is in every family one of whose words (a phrase of whole words, `sea_water`) it
-- holds and none of whose `except`; within a family, in the first sub-family whose words
-- it holds, else in the family itself; a name in no family is in `other`.

-- The standard name of a collection id (`<convention>-<standard_name>`), lower-case.
CREATE OR REPLACE FUNCTION catalogs.standard_name(collection_id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT lower(substr(collection_id, strpos(collection_id, '-') + 1))
$$;

-- Whether the name holds one of the phrases as whole words.
CREATE OR REPLACE FUNCTION catalogs.has_words(name text, phrases jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT EXISTS (
        SELECT 1 FROM jsonb_array_elements_text(
            CASE jsonb_typeof(phrases) WHEN 'array' THEN phrases ELSE '[]' END) AS p(phrase)
        WHERE strpos('_' || name || '_', '_' || lower(p.phrase) || '_') > 0)
$$;

CREATE OR REPLACE FUNCTION catalogs.families_of(name text, rules jsonb)
RETURNS TABLE (family text, subfamily text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH matched AS (
        SELECT f->>'id' AS family,
               coalesce((SELECT s->>'id'
                         FROM jsonb_array_elements(coalesce(f->'subfamilies', '[]'))
                              WITH ORDINALITY AS x(s, n)
                         WHERE catalogs.has_words(name, s->'words')
                         ORDER BY n LIMIT 1), '') AS subfamily
        FROM jsonb_array_elements(coalesce(rules->'families', '[]')) AS f
        WHERE catalogs.has_words(name, f->'words') AND NOT catalogs.has_words(name, f->'except'))
    SELECT family, subfamily FROM matched
    UNION ALL
    SELECT rules->'other'->>'id', ''
    WHERE rules->'other'->>'id' IS NOT NULL AND NOT EXISTS (SELECT 1 FROM matched)
$$;

-- Every collection's families made anew by `rules`, noted as applied: how many memberships.
CREATE OR REPLACE FUNCTION catalogs.apply_families(rules jsonb) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    made bigint;
BEGIN
    DELETE FROM catalogs.collection_families;
    INSERT INTO catalogs.collection_families (collection_id, family, subfamily)
    SELECT c.id, f.family, f.subfamily
    FROM pgstac.collections c, catalogs.families_of(catalogs.standard_name(c.id), rules) f
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS made = ROW_COUNT;
    UPDATE catalogs.family_rules SET applied = rules;
    RETURN made;
END;
$$;

-- `migrate`'s step: the shipped rules noted; the memberships made again when the rules in
-- force are not the ones they were made by (how many memberships; 0: none, or nothing to do).
CREATE OR REPLACE FUNCTION catalogs.refresh_families(shipped jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    found catalogs.family_rules;
BEGIN
    INSERT INTO catalogs.family_rules (shipped) VALUES (shipped)
    ON CONFLICT (one) DO UPDATE SET shipped = EXCLUDED.shipped
    WHERE catalogs.family_rules.shipped IS DISTINCT FROM EXCLUDED.shipped;
    SELECT * INTO found FROM catalogs.family_rules FOR UPDATE;
    IF found.applied IS NOT DISTINCT FROM coalesce(found.custom, found.shipped) THEN
        RETURN 0;
    END IF;
    RETURN catalogs.apply_families(coalesce(found.custom, found.shipped));
END;
$$;

-- An administrator's rules (NULL: back to the shipped ones), applied at once.
CREATE OR REPLACE FUNCTION catalogs.set_family_rules(rules jsonb, by_user text)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE catalogs.family_rules SET custom = rules, updated = now(), updated_by = by_user;
    RETURN catalogs.apply_families((SELECT coalesce(r.custom, r.shipped)
                                    FROM catalogs.family_rules r));
END;
$$;

-- The trigger of collections' creation: the new ones' families, by the rules in force.
CREATE OR REPLACE FUNCTION catalogs.collections_added() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rules jsonb := (SELECT coalesce(custom, shipped) FROM catalogs.family_rules);
BEGIN
    IF rules IS NOT NULL THEN
        INSERT INTO catalogs.collection_families (collection_id, family, subfamily)
        SELECT a.id, f.family, f.subfamily
        FROM added a, catalogs.families_of(catalogs.standard_name(a.id), rules) f
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;
