#!/bin/sh
# A records store on the tests' own PostgreSQL server (pg_server.sh),
# through the commands users run:
# - `hetc tune --records postgresql://...` makes the store and keeps its
#   records, the plan it chose, its cost model and its measurements' holds
#   there, and nothing beside it; `hetc compile` builds from them (tuned
#   configs, the plan kept) and so does, alike, a compile that finds the
#   URI in $HETC_RECORDS;
# - `hetc records export` from the server and `import` into a file, and
#   back from the file into a new database, give byte-identical JSON Lines
#   (the same records, in the same order); a second import is all "already
#   there"; list, best and prune work on the server as on a file;
# - bad input exits 2 with its exact message and leaves nothing: a refused
#   port (password hidden), a database that does not exist, a database
#   with no store opened to read, another program's tables in the store's
#   schema, a store of a newer schema version.
# usage: test_records_server_cli.sh HETC SAMPLES_DIR SERVER_DIR WORK_DIR
# Exit 77 (skipped) without a server.
set -u
hetc=$1 samples=$2 server=$3 work=$4
. "$(dirname "$0")/common.sh"

fresh tuned
store="$base/tuned"
"$hetc" tune "$samples/tiny_residual.json" --targets vec --trials 6 --records "$store" -q >"$work/tune.out" 2>&1 ||
  { fail "tune into the server"; cat "$work/tune.out"; }
records=$(sql "$store" -c "SELECT count(*) FROM hetc_records.records")
tasks=$("$hetc" tasks "$samples/tiny_residual.json" | tail -n +2 | grep -c .)
[ "$records" -ge "$tasks" ] || fail "the server holds $records records for $tasks tasks"
[ "$(sql "$store" -c "SELECT count(*) FROM hetc_records.cost_models")" = 1 ] || fail "no cost model on the server"
[ "$(sql "$store" -c "SELECT count(DISTINCT model_key) FROM hetc_records.selections")" = 1 ] ||
  fail "no plan kept on the server"
[ "$(sql "$store" -c "SELECT count(*) FROM hetc_records.measurements")" -ge 1 ] || fail "no measurement holds kept"
ls . "$work" | grep -q unsaved && fail "records were written beside the store instead of into it"
"$hetc" compile "$samples/tiny_residual.json" --targets vec --records "$store" -o "$work/r.hetc" >"$work/compile" 2>&1 ||
  { fail "compile from the server"; cat "$work/compile"; }
grep -q "^configs: [1-9][0-9]* tuned" "$work/compile" || { fail "compile: nothing tuned"; cat "$work/compile"; }
grep -q "kept in the records by an earlier tune or compile" "$work/compile" || { fail "compile: the plan kept"; cat "$work/compile"; }
HETC_RECORDS="$store" "$hetc" compile "$samples/tiny_residual.json" --targets vec -o "$work/r2.hetc" >"$work/compile2" 2>&1 ||
  { fail "compile with HETC_RECORDS"; cat "$work/compile2"; }
[ "$(tail -n +2 "$work/compile2")" = "$(tail -n +2 "$work/compile")" ] ||
  { fail "compile with HETC_RECORDS differs"; cat "$work/compile" "$work/compile2"; }

# Server to file to server: the same lines.
"$hetc" records export "$work/a.jsonl" --records "$store" >/dev/null || fail "export from the server"
[ "$(grep -c . "$work/a.jsonl")" = "$records" ] || fail "exported $(grep -c . "$work/a.jsonl") of $records records"
"$hetc" records import "$work/a.jsonl" --records "$work/file.sqlite" >/dev/null || fail "import into a file"
"$hetc" records export "$work/b.jsonl" --records "$work/file.sqlite" >/dev/null || fail "export from the file"
fresh copied
"$hetc" records import "$work/b.jsonl" --records "$base/copied" >"$work/import" || fail "import into the server"
[ "$(cat "$work/import")" = "imported $records records from $work/b.jsonl into $base/copied (0 already there)" ] ||
  { fail "import's line"; cat "$work/import"; }
"$hetc" records export "$work/c.jsonl" --records "$base/copied" >/dev/null || fail "export the copy"
cmp -s "$work/a.jsonl" "$work/b.jsonl" || fail "server to file changed the records"
cmp -s "$work/a.jsonl" "$work/c.jsonl" || fail "file to server changed the records"
"$hetc" records import "$work/a.jsonl" --records "$base/copied" >"$work/import" || fail "import again"
[ "$(cat "$work/import")" = "imported 0 records from $work/a.jsonl into $base/copied ($records already there)" ] ||
  { fail "a second import's line"; cat "$work/import"; }
"$hetc" records list --records "$store" --limit 2 | tail -1 >"$work/list"
[ "$(cat "$work/list")" = "2 records in $store" ] || { fail "list's last line"; cat "$work/list"; }
[ "$("$hetc" records best --records "$store" | grep -c 'ms (')" = "$("$hetc" records best --records "$work/file.sqlite" | grep -c 'ms (')" ] ||
  fail "best differs between the server and the file"
"$hetc" records prune --records "$base/copied" --keep 1 >"$work/prune" || fail "prune on the server"
"$hetc" records prune --records "$work/file.sqlite" --keep 1 >"$work/prune.file" || fail "prune a file"
[ "$(cut -d' ' -f2 "$work/prune")" = "$(cut -d' ' -f2 "$work/prune.file")" ] ||
  { fail "prune removed other counts"; cat "$work/prune" "$work/prune.file"; }

# Bad input: exit 2, the exact message, nothing made.
port=$(cat "$server/port")
expect 2 "hetc: postgresql://hetc@127.0.0.1:1/x: cannot connect: connection to server at \"127.0.0.1\", port 1 failed: Connection refused Is the server running on that host and accepting TCP/IP connections?" \
  -- records list --records "postgresql://hetc:secret@127.0.0.1:1/x"
expect 2 "hetc: $base/nowhere: cannot connect: connection to server at \"127.0.0.1\", port $port failed: FATAL: database \"nowhere\" does not exist" \
  -- records list --records "$base/nowhere"
fresh empty
expect 2 "hetc: $base/empty: no records store there (hetc tune and hetc records import create one)" \
  -- records list --records "$base/empty"
[ "$(sql "$base/empty" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'hetc_records'")" = 0 ] ||
  fail "reading an empty database made a store in it"
# Another program's tables in the store's schema: refused naming the
# table, the database as it was. An empty schema (made for hetc by someone
# who may) takes a store.
for case in "records:CREATE TABLE hetc_records.records (x integer):schema hetc_records has no hetc meta table" \
  "meta:CREATE TABLE hetc_records.meta (name text):it has no column 'key'"; do
  table=${case%%:*} setup=${case#*:}
  why=${setup#*:} setup=${setup%%:*}
  fresh "their_$table"
  sql "$base/their_$table" -c "CREATE SCHEMA hetc_records" -c "$setup" || fail "their_$table: setting up"
  dump "$base/their_$table" >"$work/before.sql"
  for command in "records import $work/a.jsonl" "records list"; do
    # shellcheck disable=SC2086
    expect 2 "hetc: $base/their_$table: table hetc_records.$table belongs to another program ($why): hetc does not write into tables it did not make" \
      -- $command --records "$base/their_$table"
  done
  dump "$base/their_$table" >"$work/after.sql"
  cmp -s "$work/before.sql" "$work/after.sql" || { fail "their_$table: the database changed"; diff "$work/before.sql" "$work/after.sql"; }
done
fresh empty_schema
sql "$base/empty_schema" -c "CREATE SCHEMA hetc_records"
"$hetc" records import "$work/a.jsonl" --records "$base/empty_schema" >/dev/null || fail "import into an empty schema"
sql "$base/copied" -c "UPDATE hetc_records.meta SET value = '9' WHERE key = 'schema_version'"
expect 2 "hetc: $base/copied: records schema version 9, this hetc reads version 5 (written by a newer hetc)" \
  -- tune "$samples/tiny_conv.json" --targets vec --trials 2 --records "$base/copied" -q

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "PASS: records stores on PostgreSQL"
