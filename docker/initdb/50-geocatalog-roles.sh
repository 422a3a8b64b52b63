#!/bin/sh
# Run once by the PostgreSQL image when it creates the database: one login role per part
# of geocatalog (README "Database roles"). `geocatalog migrate` grants each what its part
# needs; the schemas stay owned by POSTGRES_USER, the role `migrate` connects as.
set -eu
psql -v ON_ERROR_STOP=1 -v api="$GEOCATALOG_API_PASSWORD" \
     -v worker="$GEOCATALOG_WORKER_PASSWORD" -v job="$GEOCATALOG_JOB_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', role, password)
FROM (VALUES ('geocatalog_api', :'api'), ('geocatalog_worker', :'worker'),
             ('geocatalog_job', :'job')) AS parts (role, password)
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role)
\gexec
SQL
