#!/bin/sh
# A PostgreSQL server of the tests' own.
#   pg_server.sh start DIR    a new cluster in a fresh folder under $TMPDIR
#                             (initdb; the superuser hetc, trusted on the
#                             loopback only), started on a free loopback
#                             port; DIR/uri is the URI clients connect with
#   pg_server.sh stop DIR     stops it and removes its folder
#   pg_server.sh restart DIR  stops and starts it again on the same port
# Without the server binaries (Debian's postgresql) `start` writes no URI and
# says why; every test that needs the server then skips (exit 77). As root
# (CI), the server runs as the postgres user: PostgreSQL will not run as root.
# $HETC_PG_SERVER_OPTIONS ("-c max_connections=400 -c fsync=on") is added to
# the server's settings, after the tests' own (fsync off: the tests' data is
# thrown away).
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 start|stop|restart DIR" >&2
  exit 2
fi
command=$1
dir=$2

bindir=""
if command -v pg_config >/dev/null 2>&1; then bindir=$(pg_config --bindir 2>/dev/null); fi
if [ ! -x "$bindir/pg_ctl" ]; then
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
fi

as_server_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cluster_of() { cat "$dir/cluster" 2>/dev/null; }

start_on() { # CLUSTER PORT
  as_server_user "$bindir/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
    -o "-p $2 -k $1 -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200 ${HETC_PG_SERVER_OPTIONS:-}" \
    start >/dev/null 2>&1
}

case $command in
  start)
    rm -f "$dir/uri"
    mkdir -p "$dir" || exit 1
    if [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
      echo "no PostgreSQL server binaries (initdb, pg_ctl; Debian's postgresql package): the tests that need a server skip" \
        >"$dir/why"
      cat "$dir/why"
      exit 0
    fi
    cluster=$(mktemp -d "${TMPDIR:-/tmp}/hetc-pg.XXXXXX") || exit 1
    echo "$cluster" >"$dir/cluster"
    if [ "$(id -u)" = 0 ]; then chown postgres "$cluster" || exit 1; fi
    if ! as_server_user "$bindir/initdb" -D "$cluster/data" -U hetc --auth=trust -E UTF8 --no-sync \
      >"$dir/initdb.log" 2>&1; then
      echo "initdb failed:"
      cat "$dir/initdb.log"
      exit 1
    fi
    # A port from a range that depends on the process, so that two trees
    # testing at once rarely try the same one; a taken port fails the start
    # and the next is tried.
    base=$((20000 + ($$ % 2000) * 10))
    for attempt in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do
      port=$((base + attempt))
      if start_on "$cluster" "$port"; then
        echo "$port" >"$dir/port"
        echo "postgresql://hetc@127.0.0.1:$port/postgres" >"$dir/uri"
        echo "PostgreSQL $("$bindir/pg_ctl" --version | sed 's/^[^0-9]*\([0-9.]*\).*/\1/') on 127.0.0.1:$port ($cluster)"
        exit 0
      fi
    done
    echo "PostgreSQL did not start on ports $base to $port:"
    tail -20 "$cluster/server.log"
    exit 1
    ;;
  stop)
    cluster=$(cluster_of)
    [ -n "$cluster" ] || exit 0
    as_server_user "$bindir/pg_ctl" -D "$cluster/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$cluster" "$dir/cluster" "$dir/uri" "$dir/port"
    ;;
  restart)
    cluster=$(cluster_of)
    port=$(cat "$dir/port" 2>/dev/null)
    [ -n "$cluster" ] && [ -n "$port" ] || { echo "no server to restart in $dir"; exit 1; }
    as_server_user "$bindir/pg_ctl" -D "$cluster/data" -m fast -w stop >/dev/null 2>&1
    start_on "$cluster" "$port" || { echo "PostgreSQL did not start again on $port"; exit 1; }
    ;;
  *)
    echo "usage: $0 start|stop|restart DIR" >&2
    exit 2
    ;;
esac
