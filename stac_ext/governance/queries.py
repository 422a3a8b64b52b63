"""Named SQL of the governance schema: vocabularies (loaded with psycopg: `%s`), the
names' lookups, proposals and held items (asyncpg: `$n`)."""

# -- loading (psycopg) --------------------------------------------------------------------

VERSION = "SELECT version FROM governance.conventions WHERE convention = %s"

LOCK_CONVENTION = "SELECT version FROM governance.conventions WHERE convention = %s FOR UPDATE"

#: Every name of the convention, and the version that retired it (NULL: current).
KEYS = "SELECT key, retired_in FROM governance.names WHERE convention = %s"

ALIAS_SINCE = "SELECT key, since FROM governance.aliases WHERE convention = %s"

UPSERT_CONVENTION = """
INSERT INTO governance.conventions (convention, title, version, source)
VALUES (%s, %s, %s, %s)
ON CONFLICT (convention) DO UPDATE
SET title = EXCLUDED.title, version = EXCLUDED.version, source = EXCLUDED.source,
    loaded = now()
"""

UPSERT_NAMES = """
INSERT INTO governance.names (convention, key, name, description, units)
SELECT %s, k, n, d, u FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS x(k, n, d, u)
ON CONFLICT (convention, key) DO UPDATE
SET name = EXCLUDED.name, description = EXCLUDED.description, units = EXCLUDED.units,
    retired_in = NULL
"""

RETIRE_NAMES = """
UPDATE governance.names SET retired_in = %s
WHERE convention = %s AND key = ANY(%s::text[]) AND retired_in IS NULL
"""

DELETE_ALIASES = "DELETE FROM governance.aliases WHERE convention = %s"

INSERT_ALIASES = """
INSERT INTO governance.aliases (convention, key, alias, target_key, since)
SELECT %s, k, a, t, s FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS x(k, a, t, s)
"""

#: Names that are now aliases (a name the new table retired in favour of another).
DROP_ALIASED_NAMES = """
DELETE FROM governance.names n USING governance.aliases a
WHERE n.convention = %s AND a.convention = n.convention AND a.key = n.key
"""

COUNTS = """
SELECT (SELECT count(*) FROM governance.names WHERE convention = %(c)s AND retired_in IS NULL),
       (SELECT count(*) FROM governance.aliases WHERE convention = %(c)s)
"""

RECORD_LOAD = """
INSERT INTO governance.vocabulary_loads (convention, version, previous_version, source,
    loaded_by, names, aliases, added, retired)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
"""

#: The conventions loaded, their versions and sizes (`geocatalog vocabulary list`).
CONVENTIONS = """
SELECT c.convention, c.title, c.version, c.loaded,
       (SELECT count(*) FROM governance.names n
        WHERE n.convention = c.convention AND n.retired_in IS NULL),
       (SELECT count(*) FROM governance.aliases a WHERE a.convention = c.convention)
FROM governance.conventions c ORDER BY c.convention
"""

# -- lookups (asyncpg) ---------------------------------------------------------------------

#: A name of a convention ($1) by its key ($2): no row when the convention has no
#: vocabulary; else the convention's version and title, the name if it is one, and the
#: current name it stands for if it is an alias.
RESOLVE = """
SELECT c.version, c.title,
       n.name, n.description, n.units, n.retired_in,
       a.alias, t.key AS target_key, t.name AS target, t.description AS target_description,
       t.units AS target_units
FROM governance.conventions c
LEFT JOIN governance.names n ON n.convention = c.convention AND n.key = $2
LEFT JOIN governance.aliases a ON a.convention = c.convention AND a.key = $2
LEFT JOIN governance.names t ON t.convention = a.convention AND t.key = a.target_key
WHERE c.convention = $1
"""

#: The current names of a convention ($1), for the nearest to an unknown one.
CURRENT_NAMES = """
SELECT name FROM governance.names WHERE convention = $1 AND retired_in IS NULL ORDER BY key
"""

KNOWN_CONVENTIONS = "SELECT convention FROM governance.conventions ORDER BY convention"

# -- proposals (asyncpg) -------------------------------------------------------------------

_PROPOSAL_FIELDS = """
p.id, p.kind, p.collection_id, p.description, p.comment, p.proposer, p.created, p.status,
p.decided_by, p.decided, p.reason, p.released,
(SELECT count(*) FROM governance.held_items h WHERE h.proposal_id = p.id) AS held,
coalesce((SELECT jsonb_agg(jsonb_build_object(
              'id', h.id, 'owner', h.owner, 'title', h.content->'properties'->>'title',
              'visibility', coalesce(h.content->'properties'->>'visibility', 'public'))
              ORDER BY h.owner, h.id)
          FROM governance.held_items h
          WHERE h.proposal_id = p.id AND ({owner}::text IS NULL OR h.owner = {owner})), '[]')
    AS items
"""

#: A proposal ($1) with its held items of the owner $2 (NULL: all of them).
PROPOSAL = f"SELECT {_PROPOSAL_FIELDS.format(owner='$2')} FROM governance.proposals p " \
    "WHERE p.id = $1"

#: Proposals with their held items of the owner $1 (NULL: all), by status ($2, NULL: any),
#: those of the user $3 only when given (proposed by them, or holding items of theirs),
#: newest first, $4 at most from the $5th on; `matched`: how many in all.
PROPOSALS = f"""
SELECT {_PROPOSAL_FIELDS.format(owner='$1')}, count(*) OVER () AS matched
FROM governance.proposals p
WHERE ($2::text IS NULL OR p.status = $2)
  AND ($3::text IS NULL OR p.proposer = $3 OR EXISTS (
        SELECT 1 FROM governance.held_items h WHERE h.proposal_id = p.id AND h.owner = $3))
ORDER BY p.id DESC LIMIT $4 OFFSET $5
"""

#: The open proposal of a collection to be made ($1), if any.
OPEN_FOR = """
SELECT id FROM governance.proposals
WHERE collection_id = $1 AND kind = 'collection' AND status = 'open'
"""

INSERT_PROPOSAL = """
INSERT INTO governance.proposals (kind, collection_id, description, comment, proposer)
VALUES ($1, $2, $3, $4, $5) RETURNING id
"""

#: The open proposal of a collection ($1) for publishing to hold items in: made (by $2,
#: with the comment $3) when there is none.
OPEN_PROPOSAL = """
WITH made AS (
    INSERT INTO governance.proposals (kind, collection_id, comment, proposer)
    VALUES ('collection', $1, $3, $2)
    ON CONFLICT (collection_id) WHERE status = 'open' AND kind = 'collection' DO NOTHING
    RETURNING id)
SELECT id FROM made
UNION ALL
SELECT id FROM governance.proposals
WHERE collection_id = $1 AND kind = 'collection' AND status = 'open'
LIMIT 1
"""

#: Items ($4, a JSON array) of the owner $3 held in the proposal $1 for the collection
#: $2 (to be linked into the catalog $5 once released); one of the same id held for the
#: same owner is replaced (a publishing run again), another owner's is not: the ids held.
HOLD_ITEMS = """
INSERT INTO governance.held_items (proposal_id, collection_id, id, owner, content, catalog_pk)
SELECT $1, $2, e.item->>'id', $3, e.item, $5
FROM jsonb_array_elements($4::text::jsonb) AS e(item)
ON CONFLICT (collection_id, id) DO UPDATE
SET proposal_id = EXCLUDED.proposal_id, content = EXCLUDED.content,
    catalog_pk = EXCLUDED.catalog_pk, held = now()
WHERE governance.held_items.owner = EXCLUDED.owner
RETURNING id
"""

#: The proposal $1, locked for its decision.
LOCK_PROPOSAL = """
SELECT id, kind, collection_id, description, status FROM governance.proposals
WHERE id = $1 FOR UPDATE
"""

HELD_OF = """
SELECT id, owner, content, catalog_pk FROM governance.held_items
WHERE proposal_id = $1 ORDER BY id
"""

RELEASE_HELD = "DELETE FROM governance.held_items WHERE proposal_id = $1 AND id = ANY($2::text[])"

#: The decision on the proposal $1: status $2, by $3, why $4, items released $5.
DECIDE = """
UPDATE governance.proposals
SET status = $2, decided_by = $3, decided = now(), reason = $4, released = $5
WHERE id = $1
"""
