"""Named SQL of the catalogs tree. One query answers each read, whatever its size. Items
are known by the data API's search index (`geocatalog.search_items`: pgstac.items' keys in
one table, whatever the number of partitions).

JSON parameters are sent as text and cast (`$n::text::jsonb`), as stac-fastapi-pgstac does.
"""

#: The catalog at a path ($1) with its sub-catalogs (and who reads each) and live
#: collection/item links (titled as the link, else as the collection or item is), as the
#: reader ($2, JSON) reads them: none if it, or a catalog above it, is hidden from them; its
#: hidden sub-catalogs and items left out (as links to items removed by other means, e.g. a
#: direct pgstac load, are).
GET_CATALOG = """
SELECT c.pk, c.id, c.path, c.title, c.description, c.owner, c.project, c.visibility,
       c.extra, c.extra_links, c.created, c.updated,
       coalesce((SELECT jsonb_agg(jsonb_build_object('id', s.id, 'title', s.title,
                                                     'visibility', s.visibility,
                                                     'project', s.project)
                                  ORDER BY s.id)
                 FROM catalogs.catalogs s
                 WHERE s.parent_pk = c.pk
                   AND catalogs.may_read(s.visibility, s.owner, s.project, $2::text::jsonb)),
                '[]') AS children,
       coalesce((SELECT jsonb_agg(jsonb_build_object(
                     'collection', l.collection_id, 'item', l.item_id,
                     'title', coalesce(l.title, CASE WHEN l.item_id IS NULL
                                                     THEN col.content->>'title'
                                                     ELSE i.content->'properties'->>'title'
                                                END))
                     ORDER BY l.position)
                 FROM catalogs.links l JOIN pgstac.collections col ON col.id = l.collection_id
                 LEFT JOIN geocatalog.search_items i
                   ON i.collection = l.collection_id AND i.id = l.item_id
                 WHERE l.catalog_pk = c.pk
                   AND (l.item_id IS NULL OR (
                        i.id IS NOT NULL
                        AND geocatalog.may_read(i.content->'properties', $2::text::jsonb)))),
                '[]') AS links
FROM catalogs.catalogs c
WHERE c.pk = catalogs.readable_pk($1, $2::text::jsonb)
"""

#: The top-level catalogs the reader ($1, JSON) reads, and who reads each.
TOP_LEVEL = """
SELECT id, title, visibility, project FROM catalogs.catalogs
WHERE parent_pk IS NULL AND catalogs.may_read(visibility, owner, project, $1::text::jsonb)
ORDER BY id
"""

#: The catalogs under the one at $1 that the reader ($2, JSON) reads, level by level and by
#: id within a parent (a hidden one, and what is under it, left out), at most $3; `found`
#: false when the catalog itself is missing or hidden from them.
SUBTREE = """
WITH RECURSIVE top AS (SELECT catalogs.readable_pk($1, $2::text::jsonb) AS pk),
subtree AS (
    SELECT c.pk, c.path, 1 AS depth FROM catalogs.catalogs c JOIN top ON c.parent_pk = top.pk
    WHERE catalogs.may_read(c.visibility, c.owner, c.project, $2::text::jsonb)
    UNION ALL
    SELECT c.pk, c.path, s.depth + 1 FROM catalogs.catalogs c JOIN subtree s ON c.parent_pk = s.pk
    WHERE catalogs.may_read(c.visibility, c.owner, c.project, $2::text::jsonb)
)
SELECT top.pk IS NOT NULL AS found,
       ARRAY(SELECT path FROM subtree
             ORDER BY depth, string_to_array(path, '/') LIMIT $3) AS paths
FROM top
"""

#: Whether the reader ($2) reads the catalog at $1 (a write to a hidden one is a 404).
READABLE = "SELECT catalogs.readable_pk($1, $2::text::jsonb) IS NOT NULL"

#: Locks the row for the rest of the transaction (PUT, child creation, delete).
LOCK_CATALOG = """
SELECT pk, owner, project, path FROM catalogs.catalogs WHERE path = $1 FOR UPDATE
"""

#: For a child's creation: the parent may not be deleted until we commit.
LOCK_PARENT = """
SELECT pk, owner, project, path FROM catalogs.catalogs WHERE path = $1 FOR KEY SHARE
"""

CHILD_IDS = "SELECT id FROM catalogs.catalogs WHERE parent_pk = $1"

#: Children are what `rel: child` lists: sub-catalogs and collections.
HAS_CHILDREN = """
SELECT EXISTS (SELECT 1 FROM catalogs.catalogs WHERE parent_pk = $1)
    OR EXISTS (SELECT 1 FROM catalogs.links WHERE catalog_pk = $1 AND item_id IS NULL)
"""

INSERT_CATALOG = """
INSERT INTO catalogs.catalogs (parent_pk, id, path, title, description, owner, project,
                               extra, extra_links, visibility)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9::text::jsonb, $10)
RETURNING pk
"""

UPDATE_CATALOG = """
UPDATE catalogs.catalogs
SET title = $2, description = $3, extra = $4::text::jsonb,
    extra_links = coalesce($5::text::jsonb, extra_links),
    visibility = coalesce($6, visibility),
    updated = now()
WHERE pk = $1
"""

#: A catalog's links that reader $2 sees, removed (links to items it cannot read stay: it
#: was never shown them, and its replacement cannot mean them).
DELETE_SEEN_LINKS = """
DELETE FROM catalogs.links l
WHERE l.catalog_pk = $1
  AND NOT EXISTS (SELECT 1 FROM geocatalog.search_items i
                  WHERE l.item_id IS NOT NULL
                    AND i.collection = l.collection_id AND i.id = l.item_id
                    AND NOT geocatalog.may_read(i.content->'properties', $2::text::jsonb))
"""

INSERT_LINKS = """
INSERT INTO catalogs.links (catalog_pk, position, collection_id, item_id, title)
SELECT $1, n, c, i, t
FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS l(c, i, t, n)
ON CONFLICT DO NOTHING
"""

EXISTING_COLLECTIONS = "SELECT id FROM pgstac.collections WHERE id = ANY($1::text[])"

#: The items among the wanted ones that the reader ($3, JSON) reads (one hidden from them
#: is as missing: a link neither confirms it nor shows it), each held (KEY SHARE, on its row
#: of the data API's search index, which the item's delete removes) until the transaction
#: ends: an item delete waits for the links to commit, then removes them (its unlink runs
#: after its delete), so a catalog never keeps a link to a deleted item.
EXISTING_ITEMS = """
SELECT i.collection, i.id
FROM unnest($1::text[], $2::text[]) AS wanted(collection, id)
JOIN geocatalog.search_items i ON i.collection = wanted.collection AND i.id = wanted.id
WHERE geocatalog.may_read(i.content->'properties', $3::text::jsonb)
FOR KEY SHARE OF i
"""

#: Who governs each catalog of a subtree (and including its top), rows locked until the
#: transaction ends: a forced delete removes only what the caller governs, all of it.
LOCK_SUBTREE = """
WITH RECURSIVE subtree AS (
    SELECT pk FROM catalogs.catalogs WHERE pk = $1
    UNION ALL
    SELECT c.pk FROM catalogs.catalogs c JOIN subtree s ON c.parent_pk = s.pk
)
SELECT c.path, c.owner, c.project,
       catalogs.may_read(c.visibility, c.owner, c.project, $2::text::jsonb) AS readable
FROM catalogs.catalogs c JOIN subtree s ON c.pk = s.pk
ORDER BY c.path
FOR UPDATE OF c
"""

#: The whole subtree under (and including) a catalog, removed in one statement.
DELETE_SUBTREE = """
WITH RECURSIVE subtree AS (
    SELECT pk FROM catalogs.catalogs WHERE pk = $1
    UNION ALL
    SELECT c.pk FROM catalogs.catalogs c JOIN subtree s ON c.parent_pk = s.pk
)
DELETE FROM catalogs.catalogs c USING subtree s WHERE c.pk = s.pk
RETURNING c.path
"""

#: Item search inside a subtree: the search body limited to the subtree, for the data API's
#: search to run (an SQL expression of $1, the search body as JSON text, and $2, the
#: catalog's path). NULL when the catalog does not exist.
SUBTREE_BODY = "catalogs.scope($1::text::jsonb, $2)"

#: For the data API's item delete: run in the same transaction as the delete itself.
UNLINK_ITEM = "DELETE FROM catalogs.links WHERE collection_id = $1 AND item_id = $2"

#: The rules of the generated `variables` tree in force (an administrator's, else the
#: shipped ones), whether they are the shipped ones, who changed them last and when.
FAMILY_RULES = """
SELECT coalesce(custom, shipped) AS rules, custom IS NULL AS shipped, updated, updated_by
FROM catalogs.family_rules
"""

_READER = "WITH k AS (SELECT geocatalog.reader_keys($1::text::jsonb) AS keys)"
#: A membership `f` whose collection holds an item the reader (`k`) reads.
_PRESENT = """
EXISTS (SELECT 1 FROM geocatalog.populated_collections p
        WHERE p.collection = f.collection_id
          AND (k.keys IS NULL OR p.readers = ANY (ARRAY['public'] || k.keys)))
"""

#: Which of the families ($2) hold a collection with items the reader ($1, JSON) reads:
#: each asked whether one does (the first found answers), not counted.
PRESENT_FAMILIES = f"""
{_READER}
SELECT wanted.family FROM unnest($2::text[]) AS wanted(family), k
WHERE EXISTS (SELECT 1 FROM catalogs.collection_families f
              WHERE f.family = wanted.family AND {_PRESENT})
"""

#: In the family $2: which of its sub-families ($3) hold a collection with items the
#: reader ($1, JSON) reads (a row each, no collection), and its own collections that do
#: (subfamily '', by id); of its sub-family $4 only, when not NULL, those collections.
FAMILY_MEMBERS = f"""
{_READER}
SELECT wanted.subfamily, NULL AS collection_id
FROM unnest($3::text[]) AS wanted(subfamily), k
WHERE $4::text IS NULL AND EXISTS (
    SELECT 1 FROM catalogs.collection_families f
    WHERE f.family = $2 AND f.subfamily = wanted.subfamily AND {_PRESENT})
UNION ALL
(SELECT f.subfamily, f.collection_id FROM catalogs.collection_families f, k
 WHERE f.family = $2 AND f.subfamily = coalesce($4::text, '') AND {_PRESENT}
 ORDER BY f.collection_id)
"""

#: The generated tree's title (none before `migrate` put its rules).
FAMILIES_TITLE = "SELECT coalesce(custom, shipped)->>'title' FROM catalogs.family_rules"

#: An administrator's rules ($1, JSON; NULL: the shipped ones) by $2, applied at once.
SET_FAMILY_RULES = "SELECT catalogs.set_family_rules($1::text::jsonb, $2)"
