#!/bin/sh
# `hetc tune a.json b.json`: each model on each target tuned at once as a
# job, the jobs' builds, model work and measurements taking turns through
# one scheduler:
# - every job finishes, each job's summary is printed in the order given,
#   then each model's plan over both targets; the store holds exactly the
#   trials the summaries count, every progress line names its job, and the
#   jobs ran at once (their measurements interleave) without a measurement
#   overlapping any other hold of the cores (HETC_MEASURE_LOG) or another
#   measurement in the store's log;
# - a missing model fails its job (exit 2, its message) while the other
#   job is tuned and its plan kept;
# - a job killed with SIGKILL gives back its turns: the other job finishes
#   and the run exits 128 + 9.
# usage: test_tune_jobs.sh HETC SAMPLES_DIR WORK_DIR
set -u
hetc=$1 samples=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export HETC_LOCK_DIR="$work/locks"
# The turns log's check (check_turns.awk says what it checks).
check_turns() { awk -f "$(dirname "$0")/check_turns.awk" "$1"; }

# ---- two jobs at once --------------------------------------------------------------------
HETC_MEASURE_LOG="$work/turns.log" "$hetc" tune "$samples/tiny_conv.json" "$samples/tiny_residual.json" \
  --targets vec,cpu --trials 6 --records "$work/r.sqlite" >"$work/out" 2>"$work/err" ||
  { fail "two models: exit status $?"; cat "$work/err"; }
[ "$(grep '^== ' "$work/out")" = "== $samples/tiny_conv.json on vec ==
== $samples/tiny_conv.json on cpu ==
== $samples/tiny_residual.json on vec ==
== $samples/tiny_residual.json on cpu ==" ] || { fail "two models: the summaries' headers"; cat "$work/out"; }
grep -q '^tuned 2 models on 2 targets as 4 jobs at once in [0-9.]* s$' "$work/out" || fail "two models: no jobs line"
[ "$(grep -c '^tuned [0-9]* tasks in ' "$work/out")" = 4 ] || fail "two models: not four summaries"
[ "$(grep -c '^tiny_conv.json: graph-level selection: .*kept in the records for hetc compile' "$work/out")" = 1 ] &&
  [ "$(grep -c '^tiny_residual.json: graph-level selection: .*kept in the records for hetc compile' "$work/out")" = 1 ] ||
  { fail "two models: not a plan kept for each"; cat "$work/out"; }
grep '\[Task ' "$work/err" | grep -v '^\[tiny_conv.json \(vec\|cpu\)\] \|^\[tiny_residual.json \(vec\|cpu\)\] ' | grep -q . &&
  { fail "two models: progress lines without their job's name"; cat "$work/err"; }
summed=$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { s += $6 } END { print s }' "$work/out")
stored=$("$hetc" records list --records "$work/r.sqlite" | tail -1 | cut -d' ' -f1)
[ "$summed" = "$stored" ] || fail "two models: the summaries count $summed trials, the store holds $stored records"
check_turns "$work/turns.log" >"$work/turns" || { fail "two models: measurements shared the cores"; cat "$work/turns"; }
# At once: each job measured before every other's last measurement.
awk '$1 == "measure" { if (!($5 in first) || $3 < first[$5]) first[$5] = $3; if ($4 > last[$5]) last[$5] = $4 }
     END { n = 0; for (p in first) pid[++n] = p
           for (a = 1; a <= n; a++) for (b = 1; b <= n; b++) if (first[pid[a]] > last[pid[b]]) exit 1
           exit n != 4 }' "$work/turns.log" ||
  fail "two models: the jobs ran one after another"
[ "$(sqlite3 "$work/r.sqlite" "SELECT count(DISTINCT pid) FROM measurements")" = 4 ] ||
  fail "two models: the store's log is not of two jobs"
[ "$(sqlite3 "$work/r.sqlite" "SELECT count(*) FROM measurements a JOIN measurements b ON a.lock = b.lock
  AND (a.pid, a.started_us) <> (b.pid, b.started_us) AND a.started_us < b.ended_us AND b.started_us < a.ended_us")" = 0 ] ||
  fail "two models: the store logged overlapping measurements"

# ---- a missing model fails its job alone ----------------------------------------------------
"$hetc" tune "$samples/tiny_conv.json" "$work/missing.json" --targets vec --trials 2 --records "$work/m.sqlite" \
  >"$work/out" 2>"$work/err"
status=$?
[ $status = 2 ] || fail "a missing model: exit status $status, expected 2"
grep -q "^hetc: $work/missing.json: cannot open: No such file or directory$" "$work/err" ||
  { fail "a missing model: its message"; cat "$work/err"; }
grep -q '^tiny_conv.json: graph-level selection: .*kept in the records' "$work/out" ||
  { fail "a missing model: the other job"; cat "$work/out"; }

# ---- a job killed ------------------------------------------------------------------------
"$hetc" tune "$samples/tiny_conv.json" "$samples/tiny_residual.json" --targets vec --trials 40 --batch 2 \
  --records "$work/k.sqlite" >"$work/out" 2>"$work/err" &
parent=$!
# The jobs are the run's children, started in order: the first is tiny_conv's.
victim=""
for _ in $(seq 1 300); do
  victim=$(pgrep -P $parent | sort -n | head -1)
  [ -n "$victim" ] && grep -q '^\[tiny_conv.json vec\] ' "$work/err" && break
  sleep 0.1
done
[ -n "$victim" ] && kill -9 "$victim"
wait $parent
status=$?
[ $status = 137 ] || fail "a job killed: exit status $status, expected 137"
grep -q '^tuned 6 tasks in ' "$work/out" || { fail "a job killed: the other job did not finish"; cat "$work/out"; }

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "PASS: hetc tune with several models"
