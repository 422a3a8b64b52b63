-- The partitions of items about to be written, each made (or its time constraint widened)
-- as pgstac's `check_partition` makes it.

-- pgstac's `check_partition`: the partition that will hold a collection's items of these
-- time ranges, made if missing, its time constraint widened to them. The first partition
-- of a collection not partitioned by time is made here in about half pgstac's time
-- (docs/performance.md): the same table, index, rights and constraint (written with the
-- table, not added and validated after it), the same `partition_stats` row, and pgstac's
-- index upkeep (`maintain_partitions`, which reads every index of the schema) only when a
-- queryable asks for an index, without which it makes none. Every other case is pgstac's own
-- function (`checked_partition`).
-- The table is made on its own and attached: attaching locks pgstac.items against other
-- attachments only, where `CREATE TABLE ... PARTITION OF` locks out every reader and writer
-- of every partition until the transaction ends (a load writes while it makes partitions).
-- `test_partitions.py` compares the two.
-- pgstac's `check_partition`, one writer of a collection at a time where it widens a time
-- constraint. To widen, pgstac drops the constraint and adds the union of the one it read
-- and the new ranges: two writers at once each added their own union, the second dropping
-- the first's, and a later row of the first's range was refused (CheckViolation). A writer
-- whose ranges are inside the constraint (most) takes no lock and reads it once: the
-- partition is answered here, as pgstac answers it. Here a constraint is read as it is,
-- where pgstac takes a missing one for the partition's range: a reader blocked by a writer
-- altering it reads none once that writer commits (its old one gone, its new one made
-- after the reader's snapshot), and goes on to pgstac's function, which reads it anew.
CREATE OR REPLACE FUNCTION geocatalog.checked_partition(_collection text, _dtrange tstzrange,
                                                        _edtrange tstzrange)
RETURNS text
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
DECLARE
    _partition text;
BEGIN
    SELECT ps.partition INTO _partition
    FROM partition_stats ps
    JOIN LATERAL partition_oid(ps.partition) AS p(oid) ON TRUE
    WHERE ps.collection = _collection AND ps.partition_dtrange @> _dtrange
      AND get_tstz_constraint(p.oid, 'datetime') @> _dtrange
      AND get_tstz_constraint(p.oid, 'end_datetime') @> _edtrange
    LIMIT 1;
    IF FOUND THEN
        RETURN _partition;
    END IF;
    -- held to the commit, as pgstac's lock on the partition it alters
    PERFORM pg_advisory_xact_lock(hashtextextended('geocatalog.partition:' || _collection, 0));
    RETURN check_partition(_collection, _dtrange, _edtrange);
END;
$$;

CREATE OR REPLACE FUNCTION geocatalog.make_partition(_collection text, _dtrange tstzrange,
                                                     _edtrange tstzrange)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path TO pgstac, public AS $$
DECLARE
    _name text := '_items_' || (SELECT c.key FROM collections c
                                WHERE c.id = _collection AND c.partition_trunc IS NULL);
BEGIN
    IF _name IS NULL OR to_regclass(format('pgstac.%I', _name)) IS NOT NULL
            OR isempty(_dtrange) OR isempty(_edtrange) THEN
        RETURN geocatalog.checked_partition(_collection, _dtrange, _edtrange);
    END IF;
    BEGIN
        EXECUTE format(
            $q$
                CREATE TABLE %1$I (LIKE items INCLUDING DEFAULTS, CONSTRAINT %2$I CHECK (
                    (datetime >= %3$L) AND (datetime <= %4$L)
                    AND (end_datetime >= %5$L) AND (end_datetime <= %6$L)));
                CREATE UNIQUE INDEX %8$I ON %1$I (id);
                ALTER TABLE items ATTACH PARTITION %1$I FOR VALUES IN (%7$L);
                GRANT ALL ON %1$I TO pgstac_ingest;
            $q$,
            _name, concat(_name, '_dt'), lower(_dtrange), upper(_dtrange), lower(_edtrange),
            upper(_edtrange), _collection, concat(_name, '_pk'));
    EXCEPTION WHEN duplicate_table OR unique_violation THEN
        -- made meanwhile by another writer (two tables of one name made at once: the
        -- second waits for the first to commit, then collides in the catalog's index)
        RETURN geocatalog.checked_partition(_collection, _dtrange, _edtrange);
    END;
    IF EXISTS (SELECT 1 FROM queryables q WHERE q.property_index_type IS NOT NULL) THEN
        PERFORM maintain_partitions(_name);
    END IF;
    -- pgstac's statistics of a new, empty partition are its identity alone, unless it keeps
    -- collections' extents (or queues the step)
    IF NOT get_setting_bool('update_collection_extent')
            OR NOT update_partition_stats_q(_name, true) THEN
        INSERT INTO partition_stats (partition, collection, partition_dtrange)
        VALUES (_name, _collection, tstzrange('-infinity', 'infinity', '[]'));
    END IF;
    RETURN _name;
END;
$$;
-- Run as pgstac's own `check_partition` runs: its partitions are pgstac_admin's.
ALTER FUNCTION geocatalog.make_partition(text, tstzrange, tstzrange) OWNER TO pgstac_admin;

-- The partitions of items about to be written, each made or widened: one call per
-- collection and partition range, as pgstac's staging trigger checks them.
CREATE OR REPLACE FUNCTION geocatalog.check_partitions(_items jsonb) RETURNS void
LANGUAGE plpgsql SET search_path TO pgstac, public AS $$
BEGIN
    PERFORM geocatalog.make_partition(
        p.collection, tstzrange(min(lower(p.dtr)), max(lower(p.dtr)), '[]'),
        tstzrange(min(upper(p.dtr)), max(upper(p.dtr)), '[]'))
    FROM (SELECT i->>'collection' AS collection, stac_daterange(i->'properties') AS dtr,
                 c.partition_trunc
          FROM jsonb_array_elements(_items) AS i
          JOIN collections AS c ON c.id = i->>'collection') AS p
    GROUP BY p.collection, date_trunc(p.partition_trunc, lower(p.dtr))
    ORDER BY p.collection, date_trunc(p.partition_trunc, lower(p.dtr));
END;
$$;
