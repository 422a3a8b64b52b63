-- Project catalogs, reserved ids, and item search inside a subtree.

-- The project (a group of its creator's token) whose members govern the catalog as its
-- owner does; NULL: a personal catalog. Children inherit it unless they name another.
ALTER TABLE catalogs.catalogs ADD COLUMN project text;

-- Ids starting with `_` are reserved (`{path}/_search`); `.` and `..` would break
-- relative links. Existing rows are left as they are (NOT VALID).
ALTER TABLE catalogs.catalogs ADD CONSTRAINT catalogs_id_reserved
    CHECK (id ~ '^[A-Za-z0-9.-][A-Za-z0-9_.-]*$' AND id NOT IN ('.', '..')) NOT VALID;

-- (its functions, the subtree filter and search, were replaced by 003 and 004: functions/)
