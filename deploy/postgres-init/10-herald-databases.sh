#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume
# (mounted at /docker-entrypoint-initdb.d by docker-compose.yml).
#
# herald               system of record, owned by role herald (DATABASE_URL)
# temporal             Temporal persistence, owned by role temporal
# temporal_visibility  Temporal visibility, owned by role temporal
#
# The temporal-schema job then sets up and upgrades the two Temporal schemas; `herald migrate`
# migrates the herald database.
set -eu

: "${HERALD_DB_PASSWORD:?HERALD_DB_PASSWORD must be set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD must be set}"

psql --set=ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  --set=herald_password="$HERALD_DB_PASSWORD" \
  --set=temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE herald LOGIN PASSWORD :'herald_password';
CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE herald OWNER herald;
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
-- Temporal's visibility schema needs btree_gin; create it as superuser so the temporal role need not be one.
\connect temporal_visibility
CREATE EXTENSION IF NOT EXISTS btree_gin;
SQL
