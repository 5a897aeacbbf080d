#!/bin/sh
# pg_ctl for the store's PostgreSQL tests (the executable of the pytest-postgresql executor in
# tests/store_fixtures.py): Debian's binaries (PG_BINDIR, default /usr/lib/postgresql/15/bin). PostgreSQL refuses to
# run as root, so under root (a container) it runs as the postgres user, who is given the data directory's folder and
# a way through its parents. That way lasts only as long as nobody closes a parent again: every pytest session that
# starts resets /tmp/pytest-of-<user> to 0700, so the data directory must not lie below it.
set -eu
PG_CTL="${PG_BINDIR:-/usr/lib/postgresql/15/bin}/pg_ctl"
if [ "$(id -u)" != 0 ]; then exec "$PG_CTL" "$@"; fi
prev=""; data=""
for arg in "$@"; do
    case "$prev" in -D|--pgdata) data="$arg";; esac
    case "$arg" in --pgdata=*) data="${arg#--pgdata=}";; esac
    prev="$arg"
done
if [ -n "$data" ]; then
    folder="$(dirname "$data")"
    mkdir -p "$folder"
    chown -R postgres "$folder"
    dir="$folder"
    while [ "$dir" != "/" ]; do dir="$(dirname "$dir")"; chmod o+x "$dir" 2>/dev/null || true; done
fi
exec runuser -u postgres -- "$PG_CTL" "$@"
