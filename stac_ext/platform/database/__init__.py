"""Database lifecycle: the embedded cluster, schema migrations (each package's set is
handed to `migrate` by the composition root), the parts' roles, bulk loading through
pypgstac (`loader`; its checks and writes spread over processes by `load_workers`, the
partitions made ahead of the writes by `load_partitions`, the rows by `load_rows`), the
planner's statistics after a bulk change, and the group commit that writes concurrent
requests together (`group_commit`: item POSTs, job submissions), the data API's pools
and the connections its requests keep between them (`pools`, `kept_connections`), URLs that
name a cluster (`connection_urls`; the data API's connections try every host at once:
`cluster_connect`), and a Patroni cluster on loopback for the HA demo and
drills (`patroni_cluster`, its members: `patroni_members`, their processes: `machines`,
its backups: `pgbackrest`).

Of ours, imports only the service plumbing (`keyfiles`, the exceptions of a busy pool and of
a read-only server).

Third-party imports: `asyncpg`, `fastapi`, `orjson`, `psycopg`, `pydantic`,
`pydantic_settings`, `pypgstac`, `pystac`, `stac_fastapi`.
"""
