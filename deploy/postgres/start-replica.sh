#!/bin/bash
# PostgreSQL streaming replica: clone the primary with pg_basebackup -R on first start, then run.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until PGPASSWORD="$POSTGRES_REPLICATION_PASSWORD" pg_basebackup -h "$PRIMARY_HOST" -U replicator -D "$PGDATA" -R -X stream; do
    echo "waiting for the primary"; rm -rf "${PGDATA:?}"/*; sleep 2
  done
  chmod 0700 "$PGDATA"
fi
exec postgres -c hot_standby=on
