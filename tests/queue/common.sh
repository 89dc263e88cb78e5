# Sourced by the queue's shell tests after `set -u` and with hetc, server
# and work set: skips (exit 77) without the tests' PostgreSQL server
# (pg_server.sh), else sets uri (its postgres database) and base (the URI
# without a database), makes an empty $work, and defines fail, sql (psql
# without notices), fresh (a new, empty database NAME), dump (a database's
# schema and data, to compare before and after) and expect (a hetc
# command's exit status and exact stderr).
if [ ! -s "$server/uri" ]; then
  echo "SKIP: no PostgreSQL server for the tests: $(cat "$server/why" 2>/dev/null || echo 'it did not start')"
  exit 77
fi
uri=$(cat "$server/uri")
base=${uri%/*}
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
sql() { PGOPTIONS='-c client_min_messages=warning' psql -X -q -tA -v ON_ERROR_STOP=1 "$@"; }
# pg_dump leaves out the random key it writes around the dump.
dump() { pg_dump "$1" 2>&1 | grep -v '^\\\(un\)\{0,1\}restrict '; }
fresh() { sql "$uri" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" || fail "CREATE DATABASE $1"; }
# expect STATUS STDERR -- ARGS...: exit status and exact stderr.
expect() {
  want_status=$1 want_message=$2
  shift 3
  "$hetc" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq "$want_status" ] || fail "hetc $*: exit status $status, expected $want_status"
  if [ -n "$want_message" ]; then printf '%s\n' "$want_message" >"$work/want"; else : >"$work/want"; fi
  cmp -s "$work/want" "$work/err" || { fail "hetc $*: stderr differs"; diff "$work/want" "$work/err"; }
}
