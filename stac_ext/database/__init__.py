"""Database lifecycle: the embedded cluster, schema migrations, the migration sets of
every package (`migration_sets`: the only module here that names `catalogs_ext` and
`process_api`, for their migration folders), bulk loading through pypgstac (`loader`; its
checks and writes spread over processes by `load_workers`), and the group
commit that writes concurrent requests together (`group_commit`: item POSTs, job
submissions).

May import psycopg, asyncpg, pypgstac, pystac, `stac_ext.service.keyfiles` and
`stac_ext.service.errors` (the busy pool's exception).
"""
