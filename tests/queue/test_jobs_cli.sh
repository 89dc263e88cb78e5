#!/bin/sh
# `hetc jobs` against the tests' own PostgreSQL server (pg_server.sh):
# - URIs that cannot work (another scheme, a refused port, a database that
#   does not exist, a malformed one) exit 2 with a message that names the
#   URI without its password; so does a database whose queue tables are of
#   another schema version, and one whose tables of the queue's names are
#   another program's or damaged (and nothing is written into it);
# - submit stores one task per task of each model and target (counted in
#   the database against `hetc tasks`), all or nothing: an unknown target, a
#   missing model or one a worker could not load leaves no job behind;
# - list, show, cancel and wait report the jobs' states, a job with a
#   failed task as failed (wait exits 1); a JOB that is not a number from
#   1 to 2^63-1 is refused;
# - two submitters at once, on a database neither has opened before, both
#   succeed with their own job numbers.
# usage: test_jobs_cli.sh HETC SAMPLES_DIR SERVER_DIR WORK_DIR
# Exit 77 (skipped) when the server could not be started for want of
# PostgreSQL's binaries.
set -u
hetc=$1 samples=$2 server=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

# expect_usage STDERR_LINE -- ARGS...: exit status 2, the message, then the usage.
expect_usage() {
  want_message=$1
  shift 2
  "$hetc" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq 2 ] || fail "hetc $*: exit status $status, expected 2"
  [ "$(head -1 "$work/err")" = "$want_message" ] || { fail "hetc $*: stderr's first line differs:"; head -1 "$work/err"; }
  grep -q '^usage: hetc jobs submit' "$work/err" || fail "hetc $*: no usage after the message"
}
# expect_prefix STATUS PREFIX -- ARGS...: exit status and stderr's start.
expect_prefix() {
  want_status=$1 prefix=$2
  shift 3
  "$hetc" "$@" >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq "$want_status" ] || fail "hetc $*: exit status $status, expected $want_status"
  case $(cat "$work/err") in "$prefix"*) ;; *) fail "hetc $*: stderr does not start with '$prefix':"; cat "$work/err" ;; esac
}

# ---- URIs that cannot work --------------------------------------------------
expect 2 "hetc: mysql://hetc@127.0.0.1/x: not a PostgreSQL URI (expected postgresql://USER@HOST:PORT/DATABASE)" -- \
  jobs list --queue mysql://hetc@127.0.0.1/x
expect_prefix 2 "hetc: postgresql://hetc@127.0.0.1:1/postgres: cannot connect: connection to server at \"127.0.0.1\", port 1 failed: Connection refused" -- \
  jobs list --queue postgresql://hetc:secret@127.0.0.1:1/postgres
grep -q secret "$work/err" && fail "a refused connection's message shows the password"
expect_prefix 2 "hetc: $base/nosuchdb: cannot connect: " -- jobs list --queue "$base/nosuchdb"
grep -q 'database "nosuchdb" does not exist' "$work/err" || { fail "a missing database is not named"; cat "$work/err"; }
expect 2 "hetc: postgresql://[::1/x: not a valid PostgreSQL URI: end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://[::1/x\"" -- \
  jobs list --queue "postgresql://[::1/x"
expect 2 "hetc: postgresql://127.0.0.1:notaport/x: cannot connect: invalid integer value \"notaport\" for connection option \"port\"" -- \
  jobs list --queue postgresql://127.0.0.1:notaport/x
expect_usage "hetc jobs list: no queue: give --queue URI or set HETC_QUEUE" -- jobs list

# ---- another schema version ---------------------------------------------------
fresh other_schema
"$hetc" jobs list --queue "$base/other_schema" >/dev/null || fail "jobs list on a new database"
sql "$base/other_schema" -c "UPDATE hetc_meta SET value = '99' WHERE key = 'queue_schema'"
expect 2 "hetc: $base/other_schema: the database holds hetc queue tables of schema 99; this hetc reads schema 1" -- \
  jobs list --queue "$base/other_schema"

# ---- other programs' tables of the queue's names -----------------------------------
# Each refused naming the table, the database as it was: no row added to
# a foreign hetc_meta, no table made beside a foreign one.
foreign() { # DATABASE SETUP_SQL WHY [TABLE]
  fresh "$1"
  sql "$base/$1" -c "$2" || fail "$1: setting up"
  dump "$base/$1" >"$work/before.sql"
  expect 2 "hetc: $base/$1: table ${4:-hetc_meta} belongs to another program ($3): hetc does not write into tables it did not make" -- \
    jobs list --queue "$base/$1"
  dump "$base/$1" >"$work/after.sql"
  cmp -s "$work/before.sql" "$work/after.sql" || { fail "$1: the database changed"; diff "$work/before.sql" "$work/after.sql"; }
}
meta="CREATE TABLE hetc_meta (key text PRIMARY KEY, value text NOT NULL)"
foreign meta_columns "CREATE TABLE hetc_meta (name text, other integer)" "it has no column 'key'"
foreign meta_rows "$meta; INSERT INTO hetc_meta VALUES ('theirs', '1')" "it holds no queue_schema"
foreign meta_zero "$meta; INSERT INTO hetc_meta VALUES ('queue_schema', '0')" "its queue_schema is '0', not a version"
foreign meta_text "$meta; INSERT INTO hetc_meta VALUES ('queue_schema', 'abc')" "its queue_schema is 'abc', not a version"
foreign their_jobs "CREATE TABLE hetc_jobs (id integer, what text)" "the database has no hetc_meta" hetc_jobs
# A queue's table that lost a column is no longer the queue's.
fresh damaged
"$hetc" jobs list --queue "$base/damaged" >/dev/null || fail "jobs list on a new database"
sql "$base/damaged" -c "ALTER TABLE hetc_tasks DROP COLUMN attempts"
expect 2 "hetc: $base/damaged: table hetc_tasks belongs to another program (it has no column 'attempts'): hetc does not write into tables it did not make" -- \
  jobs list --queue "$base/damaged"
sql "$base/damaged" -c "DROP TABLE hetc_tasks"
expect 2 "hetc: $base/damaged: damaged queue: schema 1 has a table hetc_tasks, this database has none" -- \
  jobs list --queue "$base/damaged"

# ---- submit, list, show, cancel, wait ---------------------------------------------
export HETC_QUEUE="$base/jobs"
fresh jobs
models="$samples/tiny_conv.json $samples/tiny_residual.json"
# shellcheck disable=SC2086
"$hetc" jobs submit $models --targets vec,cpu --trials 8 >"$work/out" 2>"$work/err" || { fail "submit"; cat "$work/err"; }
tasks=0
for model in $models; do
  n=$("$hetc" tasks "$model" | grep -c '^ *[0-9][0-9]* ')
  tasks=$((tasks + n))
done
want_rows=$((tasks * 2))
[ "$(cat "$work/out")" = "job 1: $want_rows tasks (task and target pairs), $((want_rows * 8)) trials, in $base/jobs" ] ||
  { fail "submit printed:"; cat "$work/out"; }
[ "$(sql "$base/jobs" -c "SELECT count(*) FROM hetc_tasks WHERE job_id = 1")" = "$want_rows" ] || fail "hetc_tasks rows"
[ "$(sql "$base/jobs" -c "SELECT string_agg(file_name, ',' ORDER BY model_index) FROM hetc_job_models")" = \
  "tiny_conv.json,tiny_residual.json" ] || fail "the models stored"
[ "$(sql "$base/jobs" -c "SELECT md5(content) FROM hetc_job_models WHERE job_id = 1 AND model_index = 0")" = \
  "$(md5sum <"$samples/tiny_conv.json" | cut -d' ' -f1)" ] || fail "tiny_conv.json's bytes were not stored as they are"

expect_prefix 2 "hetc: unknown target 'tpu': no plugin here and no worker of the queue offers it (targets: " -- \
  jobs submit "$samples/tiny_conv.json" --targets vec,tpu
grep -q 'targets: .*vec' "$work/err" || { fail "the unknown target's message lists no vec"; cat "$work/err"; }
expect_prefix 2 "hetc: " -- jobs submit "$work/missing.json" --targets vec
# A worker gets the model file alone: a shape kept as external data beside
# it would fail every task of the job, so the job is refused here.
expect 2 "hetc: $here/reshape_external_shape.onnx: a worker could not load it: reshape_external_shape.onnx: initializer 'shape': external data file 'reshape_external_shape.bin' cannot be opened: No such file or directory (a job keeps the model file alone, not the files beside it: submit the model.json that \`hetc import\` writes, or keep that data in the model file)" -- \
  jobs submit "$here/reshape_external_shape.onnx" --targets vec
[ "$(sql "$base/jobs" -c "SELECT count(*) FROM hetc_jobs")" = 1 ] || fail "a refused submit left a job"

"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --priority 5 >/dev/null || fail "second submit"
"$hetc" jobs list >"$work/list" || fail "list"
grep -q '^ *2  queued .*  0/[0-9]* .*tiny_conv.json  *vec$' "$work/list" || { fail "list: job 2"; cat "$work/list"; }
grep -q '^ *1  queued .*tiny_conv.json,tiny_residual.json  *vec,cpu$' "$work/list" || { fail "list: job 1"; cat "$work/list"; }
"$hetc" jobs show 1 >"$work/show" || fail "show"
[ "$(grep -c ' queued ' "$work/show")" = "$want_rows" ] || { fail "show: task rows"; cat "$work/show"; }
grep -q '^job 1: queued, priority 0, submitted ' "$work/show" || { fail "show: header"; cat "$work/show"; }

expect 0 "" -- jobs cancel 1
[ "$(cat "$work/out")" = "job 1 cancelled" ] || fail "cancel printed $(cat "$work/out")"
expect 1 "hetc: job 1 was cancelled (0 of $want_rows tasks done)" -- jobs wait 1
job2_tasks=$(sql "$base/jobs" -c "SELECT count(*) FROM hetc_tasks WHERE job_id = 2")
expect 1 "hetc: job 2 is still queued after 1 s (0 of $job2_tasks tasks done)" -- jobs wait 2 --timeout 1
expect 2 "hetc: $base/jobs: no job 999" -- jobs show 999
expect 2 "hetc: $base/jobs: no job 9223372036854775807" -- jobs wait 9223372036854775807
for job in x 0 +1 ' 1' 1x 0x1 99999999999999999999 9223372036854775808; do
  for command in show cancel wait; do
    expect_usage "hetc jobs $command: JOB: expected a job number from 1 to 9223372036854775807, got '$job'" -- \
      jobs $command "$job"
  done
done

# ---- a job whose tasks failed: failed, not done -------------------------------------
# (the states a worker writes, test_worker_cli.sh, written here by hand)
fresh failing
q="$base/failing"
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --queue "$q" >/dev/null || fail "submit"
n=$(sql "$q" -c "SELECT count(*) FROM hetc_tasks")
sql "$q" -c "UPDATE hetc_tasks SET state = 'failed', message = 'job 1, model 0: broken' WHERE task_number = 1"
expect 1 "hetc: job 1 is still running after 1 s (0 of $n tasks done, 1 failed)" -- jobs wait 1 --queue "$q" --timeout 1
sql "$q" -c "UPDATE hetc_tasks SET state = 'done', trials_done = trials WHERE task_number > 1"
expect 1 "hetc: job 1 failed ($((n - 1)) of $n tasks done, 1 failed; hetc jobs show 1 says why)" -- jobs wait 1 --queue "$q"
"$hetc" jobs list --queue "$q" | grep -q '^ *1  failed ' || fail "list: the failed job"
"$hetc" jobs show 1 --queue "$q" >"$work/show" || fail "show a failed job"
grep -q "^job 1: failed, " "$work/show" && grep -q "^models: tiny_conv.json; targets: vec; $((n - 1)) of $n tasks done, 1 failed; " "$work/show" ||
  { fail "show: a failed job"; cat "$work/show"; }
expect 0 "" -- jobs cancel 1 --queue "$q"
[ "$(cat "$work/out")" = "job 1 failed already: nothing to cancel" ] || fail "cancel printed $(cat "$work/out")"
sql "$q" -c "UPDATE hetc_tasks SET state = 'done', message = NULL, trials_done = trials"
expect 0 "" -- jobs wait 1 --queue "$q"
[ "$(cat "$work/out")" = "job 1 done: $n tasks, $((n * 200)) trials" ] || fail "wait printed $(cat "$work/out")"

# ---- two submitters at once, on a new database -----------------------------------
fresh racing
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --queue "$base/racing" >"$work/a" 2>&1 &
first=$!
"$hetc" jobs submit "$samples/tiny_residual.json" --targets cpu --queue "$base/racing" >"$work/b" 2>&1
second=$?
wait $first || { fail "first racing submit"; cat "$work/a"; }
[ "$second" -eq 0 ] || { fail "second racing submit"; cat "$work/b"; }
[ "$(sql "$base/racing" -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM hetc_jobs")" = "1,2" ] || fail "racing job ids"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "PASS: hetc jobs against PostgreSQL"
