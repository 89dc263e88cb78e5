#!/bin/sh
# `hetc worker` against the tests' own PostgreSQL server (pg_server.sh):
# - two submitters at once, then three workers (two on vec, one on cpu)
#   share the jobs and finish them, tuning into the queue's database (the
#   records store they share): every task done once, the trials the queue
#   counts and the trials the workers measured are exactly the records the
#   store holds (none lost, none twice), no two measurements the store
#   logged overlapped on a device, no measurement overlapped a build
#   (HETC_MEASURE_LOG), and `hetc jobs show` listed each worker's task;
# - a worker killed with SIGKILL during a build, and one killed during a
#   measurement (told apart by the holds on the cores' lock): its lease
#   runs out, another worker claims the task again (attempt 2) and goes on
#   from the records the first one wrote; the job completes with the
#   queue's trials equal to the store's records;
# - a worker stopped with SIGSTOP while it holds the cores' lock keeps
#   it: the next worker there claims its task when the lease lapses,
#   gives up waiting after HETC_LOCK_TIMEOUT naming the stopped process,
#   and hands the task back; the first, let go on, finishes the job;
# - a worker whose connections are cut (pg_terminate_backend), and one
#   whose server restarts, in the middle of a task: each connects again and
#   finishes the job, with the queue's trials equal to its records;
# - a job cancelled while a worker tunes it: the task stops after its batch
#   and nothing more of the job is claimed;
# - a bad job (its stored model is not a model) fails its tasks with the
#   message naming the model file, the job is failed (wait exits 1), and
#   the worker goes on with the next jobs, one of them an ONNX model whose
#   weights are external data that stayed with the submitter;
# - a worker whose targets no job needs claims nothing.
# usage: test_worker_cli.sh HETC SAMPLES_DIR SERVER_DIR WORK_DIR
# Exit 77 (skipped) without a server.
set -u
hetc=$1 samples=$2 server=$3 work=$4
. "$(dirname "$0")/common.sh"
records() { "$hetc" records list --records "$1" 2>/dev/null | tail -n +2 | grep -c .; }
# The measurements the store logged (hetc_records.measurements) that
# overlap another on the same device of the same machine.
overlaps() {
  sql "$1" -c "SELECT count(*) FROM hetc_records.measurements a JOIN hetc_records.measurements b
    ON a.lock = b.lock AND a.host = b.host AND (a.pid, a.started_us) <> (b.pid, b.started_us)
    AND a.started_us < b.ended_us AND b.started_us < a.ended_us"
}
# The turns log's check (check_turns.awk says what it checks).
check_turns() { awk -f "$(dirname "$0")/../tune/check_turns.awk" "$1"; }
# Waits (up to 60 s) until the query prints something other than 0. The
# faults below land while a task is claimed and has a first batch done: its
# trials are many enough that it lasts seconds, polled every 0.1 s.
await() {
  for _ in $(seq 1 600); do
    [ "$(sql "$1" -c "$2")" != 0 ] && return 0
    sleep 0.1
  done
  fail "timed out waiting for: $2"
  return 1
}

# ---- two submitters, three workers (vec, vec, cpu) ---------------------------------------
fresh shared
q="$base/shared"
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec,cpu --trials 4 --queue "$q" >/dev/null &
submitter=$!
"$hetc" jobs submit "$samples/tiny_residual.json" --targets vec,cpu --trials 4 --queue "$q" >/dev/null ||
  fail "second submit"
wait $submitter || fail "first submit"
# vec and cpu are both this machine's cores: the three workers take turns.
export HETC_LOCK_DIR="$work/locks" HETC_MEASURE_LOG="$work/turns.log"
for w in vec1:vec vec2:vec cpu1:cpu; do
  "$hetc" worker --queue "$q" --targets "${w#*:}" --idle-exit 2 --workers 1 \
    >"$work/${w%%:*}.out" 2>"$work/${w%%:*}.err" &
  eval "pid_${w%%:*}=\$!"
done
# While they work, `hetc jobs show` lists each worker and what it does.
for _ in $(seq 1 300); do
  "$hetc" jobs show 1 --queue "$q" >"$work/show" 2>&1
  grep -q '^workers: 3$' "$work/show" && grep -q ': \(starting\|[0-9]*/4 trials\)$' "$work/show" && break
  sleep 0.1
done
grep -q '^workers: 3$' "$work/show" || { fail "jobs show: not 3 workers"; cat "$work/show"; }
grep -q 'heartbeat .* s ago  job [12], model 0, task [0-9]* on \(vec\|cpu\): \(starting\|[0-9]*/4 trials\)$' "$work/show" ||
  { fail "jobs show: no worker's task and trials"; cat "$work/show"; }
done_tasks=0 measured=0
for w in vec1 vec2 cpu1; do
  eval "wait \$pid_$w" || { fail "worker $w"; cat "$work/$w.err"; }
  n=$(sed -n 's/^worker: \([0-9]*\) tasks done, 0 failed, 0 stopped;.*/\1/p' "$work/$w.out")
  [ -n "$n" ] || { fail "worker $w's summary"; cat "$work/$w.out"; }
  done_tasks=$((done_tasks + ${n:-0}))
  m=$(sed -n 's/^worker: .*; \([0-9]*\) trials measured$/\1/p' "$work/$w.out")
  measured=$((measured + ${m:-0}))
done
[ "$done_tasks" = 18 ] || fail "the workers did $done_tasks tasks, the jobs have 18"
unset HETC_MEASURE_LOG
check_turns "$work/turns.log" || fail "measurements shared the cores"
[ "$(cut -d' ' -f5 "$work/turns.log" | sort -u | wc -l)" -ge 2 ] || fail "the turns log is not of several workers"
for job in 1 2; do
  "$hetc" jobs wait $job --queue "$q" --timeout 5 >/dev/null || fail "job $job is not done"
done
[ "$(sql "$q" -c "SELECT count(*) FROM hetc_tasks WHERE state <> 'done'")" = 0 ] || fail "tasks not done"
counted=$(sql "$q" -c "SELECT sum(trials_done) FROM hetc_tasks")
stored=$(records "$q")
[ "$counted" = "$stored" ] || fail "the queue counts $counted trials, the store holds $stored records"
[ "$measured" = "$stored" ] || fail "the workers measured $measured trials, the store holds $stored records"
held=$(sql "$q" -c "SELECT count(*) || ' measurements by ' || count(DISTINCT pid) || ' workers' FROM hetc_records.measurements")
case $held in 0\ *|*\ by\ 1\ workers) fail "the store logged $held" ;; esac
[ "$(overlaps "$q")" = 0 ] || fail "the store logged $(overlaps "$q") overlapping measurements"
[ "$(sql "$q" -c "SELECT count(*) FROM hetc_records.cost_models")" = 1 ] || fail "no cost model kept in the store"
[ "$(sql "$q" -c "SELECT count(*) FROM hetc_workers")" = 0 ] || fail "workers left their rows behind"

# ---- SIGKILL during a build, then during a measurement -----------------------------------
# A build holds the cores' lock shared, a measurement on vec (the cores)
# holds it alone: flock(1) from outside tells which the worker is in.
cores="$work/kill-locks/cores.lock"
in_build() { ! flock -n -x "$cores" true 2>/dev/null && flock -n -s "$cores" true 2>/dev/null; }
in_measurement() { [ -e "$cores" ] && ! flock -n -s "$cores" true 2>/dev/null; }
# The model is one conv big enough that a measurement lasts tens of ms
# (tiny_conv's last a quarter of one, too short to be seen reliably).
for phase in build measurement; do
  fresh "killed_$phase"
  q="$base/killed_$phase"
  "$hetc" jobs submit "$(dirname "$0")/measured_conv.json" --targets vec --trials 40 --queue "$q" >/dev/null ||
    fail "submit"
  HETC_LOCK_DIR="$work/kill-locks" "$hetc" worker --queue "$q" --lease 2 --batch 2 --workers 1 >/dev/null 2>&1 &
  victim=$!
  await "$q" "SELECT count(*) FROM hetc_tasks WHERE state = 'claimed' AND trials_done >= 4"
  # The worker is stopped while its locks are looked at, so the phase seen
  # is the phase it dies in, and the looking (slow on a loaded machine)
  # does not eat into its task: it runs 10 ms between looks.
  caught=0
  for _ in $(seq 1 3000); do
    kill -STOP $victim 2>/dev/null || break
    if in_$phase; then
      kill -9 $victim
      caught=1
      break
    fi
    kill -CONT $victim
    sleep 0.01
  done
  [ $caught = 1 ] || { fail "never saw the worker in a $phase"; kill -9 $victim; }
  wait $victim 2>/dev/null
  before=$(records "$q")
  HETC_LOCK_DIR="$work/kill-locks" "$hetc" worker --queue "$q" --lease 2 --batch 2 --workers 1 --idle-exit 4 \
    >"$work/killed.out" 2>"$work/killed.err" || { fail "$phase: the second worker"; cat "$work/killed.err"; }
  # Its progress as last reported (0 when killed before the task's first
  # report); what it stored is the store's, which the second worker finds.
  grep -q "claimed (attempt 2), [0-9]*/40 trials done before" "$work/killed.err" ||
    { fail "$phase: the killed worker's task was not claimed again"; cat "$work/killed.err"; }
  "$hetc" jobs wait 1 --queue "$q" --timeout 5 >/dev/null || fail "$phase: the job with a killed worker is not done"
  counted=$(sql "$q" -c "SELECT sum(trials_done) FROM hetc_tasks")
  stored=$(records "$q")
  [ "$counted" = "$stored" ] || fail "killed in a $phase: the queue counts $counted trials, the store holds $stored records"
  [ "$before" -ge 4 ] || fail "killed in a $phase: the killed worker had stored $before records"
  again=$(sed -n 's/^worker: .*; \([0-9]*\) trials measured$/\1/p' "$work/killed.out")
  [ "$((stored - before))" = "$again" ] ||
    fail "killed in a $phase: the second worker measured $again trials, the store gained $((stored - before))"
  [ "$(overlaps "$q")" = 0 ] || fail "killed in a $phase: overlapping measurements"
done

# ---- SIGSTOP while holding the cores' lock --------------------------------------------------
# Stopped in a build, its model work or a measurement, a worker keeps its
# hold of the cores' lock. The next worker on the machine claims its task
# when the lease lapses, and the first measurement it needs (of that task,
# or of the next when that one's space was measured whole) waits
# HETC_LOCK_TIMEOUT for the stopped holder, names it and hands the task
# back; the first worker, let go on, finds its task lost and the job is
# finished.
fresh stopped
q="$base/stopped"
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --trials 40 --queue "$q" >/dev/null || fail "submit"
HETC_LOCK_DIR="$work/stop-locks" "$hetc" worker --queue "$q" --lease 2 --batch 2 --workers 1 --idle-exit 3 \
  >"$work/stopped.out" 2>"$work/stopped.err" &
sleeper=$!
await "$q" "SELECT count(*) FROM hetc_tasks WHERE state = 'claimed' AND trials_done >= 2"
cores="$work/stop-locks/cores.lock"
holding() { [ -e "$cores" ] && ! flock -n -x "$cores" true 2>/dev/null; }
task=""
for _ in $(seq 1 3000); do
  holding || continue
  kill -STOP $sleeper
  if holding; then
    task=$(sql "$q" -c "SELECT task_number FROM hetc_tasks WHERE state = 'claimed'")
    break
  fi
  kill -CONT $sleeper
done
if [ -n "$task" ]; then
  await "$q" "SELECT count(*) FROM hetc_tasks WHERE task_number = $task AND lease_until < now()"
  HETC_LOCK_TIMEOUT=2 HETC_LOCK_DIR="$work/stop-locks" "$hetc" worker --queue "$q" --lease 2 --batch 2 --workers 1 \
    --idle-exit 3 >"$work/waiter.out" 2>"$work/waiter.err"
  status=$?
  [ $status = 1 ] || fail "the waiting worker: exit status $status, expected 1"
  sed -n 2p "$work/waiter.err" | grep -q "^job 1, model 0, task $task on vec: claimed (attempt 2), " ||
    { fail "the waiting worker did not claim the stopped one's task"; cat "$work/waiter.err"; }
  given_back=$(sed -n 's/^job 1, model 0, task \([0-9]*\) on vec: claimed .*/\1/p' "$work/waiter.err" | tail -1)
  key=$(sql "$q" -c "SELECT workload_key FROM hetc_tasks WHERE task_number = ${given_back:-0}")
  [ "$(tail -1 "$work/waiter.err")" = "hetc: tuning $key on vec: $cores: the tuning lock is held by process $sleeper ($hetc worker), which is stopped; gave up after 2 s (HETC_LOCK_TIMEOUT)" ] ||
    { fail "the waiting worker's message"; cat "$work/waiter.err"; }
  [ "$(sql "$q" -c "SELECT state || ' ' || coalesce(worker_id::text, '-') FROM hetc_tasks WHERE task_number = ${given_back:-0}")" = "queued -" ] ||
    fail "the waiting worker did not hand its task back"
else
  fail "never stopped the worker holding the cores' lock"
fi
kill -CONT $sleeper
wait $sleeper || { fail "the stopped worker, let go on"; cat "$work/stopped.err"; }
grep -q "^worker: [23] tasks done, 0 failed, 1 stopped;" "$work/stopped.out" ||
  { fail "the stopped worker's summary"; cat "$work/stopped.out" "$work/stopped.err"; }
"$hetc" jobs wait 1 --queue "$q" --timeout 5 >/dev/null || fail "the job of a stopped worker is not done"

# ---- connections cut, then the server restarted, in the middle of a task -----------------
for fault in terminated restarted; do
  fresh "$fault"
  q="$base/$fault"
  "$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --trials 40 --queue "$q" >/dev/null || fail "submit"
  "$hetc" worker --queue "$q" --lease 5 --batch 2 --workers 1 --idle-exit 3 \
    >"$work/$fault.out" 2>"$work/$fault.err" &
  worker=$!
  await "$q" "SELECT count(*) FROM hetc_tasks WHERE state = 'claimed' AND trials_done >= 2"
  if [ "$fault" = terminated ]; then
    cut=$(sql "$uri" -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'terminated' AND application_name = 'hetc'")
    [ "$cut" -ge 3 ] || fail "terminated $cut of the worker's connections, expected its 3 (queue, heartbeat, store)"
  else
    sh "$(dirname "$0")/pg_server.sh" restart "$server" || fail "restarting the server"
  fi
  wait $worker || { fail "$fault: the worker"; cat "$work/$fault.err"; }
  grep -q "^worker: 3 tasks done, 0 failed, 0 stopped;" "$work/$fault.out" ||
    { fail "$fault: summary"; cat "$work/$fault.out" "$work/$fault.err"; }
  counted=$(sql "$q" -c "SELECT sum(trials_done) FROM hetc_tasks")
  stored=$(records "$q")
  [ "$counted" = "$stored" ] || fail "$fault: the queue counts $counted trials, the store holds $stored records"
done

# ---- cancelled while tuning -------------------------------------------------------------
fresh cancelled
q="$base/cancelled"
"$hetc" jobs submit "$samples/tiny_residual.json" --targets vec --trials 40 --queue "$q" >/dev/null || fail "submit"
"$hetc" worker --queue "$q" --records "$work/cancelled.sqlite" --batch 2 --workers 1 --idle-exit 2 \
  >"$work/cancelled.out" 2>"$work/cancelled.err" &
worker=$!
await "$q" "SELECT count(*) FROM hetc_tasks WHERE state = 'claimed' AND trials_done >= 2"
"$hetc" jobs cancel 1 --queue "$q" >/dev/null || fail "cancel"
wait $worker || { fail "the worker of a cancelled job"; cat "$work/cancelled.err"; }
grep -q "^worker: 0 tasks done, 0 failed, 1 stopped;" "$work/cancelled.out" ||
  { fail "cancelled: summary"; cat "$work/cancelled.out" "$work/cancelled.err"; }
[ "$(sql "$q" -c "SELECT count(*) FROM hetc_tasks WHERE state <> 'queued' AND attempts > 0")" -le 1 ] ||
  fail "tasks of a cancelled job were claimed"

# ---- a bad job, then good ones; a worker with nothing to do -------------------------------
# The third job's weights are ONNX external data, which stays with the
# submitter: the worker tunes it from the model file alone.
fresh bad
q="$base/bad"
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --trials 2 --queue "$q" >/dev/null || fail "submit"
"$hetc" jobs submit "$samples/tiny_conv.json" --targets vec --trials 2 --queue "$q" >/dev/null || fail "submit"
"$hetc" jobs submit "$samples/../tests/onnx/corpus/conv_external_data.onnx" --targets vec --trials 2 --queue "$q" \
  >/dev/null || fail "submit"
sql "$q" -c "UPDATE hetc_job_models SET content = 'not a model' WHERE job_id = 1"
"$hetc" worker --queue "$q" --targets cpu --idle-exit 1 --records "$work/idle.sqlite" >"$work/idle.out" 2>/dev/null ||
  fail "a worker with nothing to do"
grep -q "^worker: 0 tasks done, 0 failed, 0 stopped; 0 trials measured$" "$work/idle.out" ||
  { fail "idle worker's summary"; cat "$work/idle.out"; }
"$hetc" worker --queue "$q" --records "$work/bad.sqlite" --idle-exit 1 --workers 1 >"$work/bad.out" 2>"$work/bad.err" ||
  { fail "the worker of a bad job"; cat "$work/bad.err"; }
grep -q "^worker: 4 tasks done, 3 failed, 0 stopped;" "$work/bad.out" || { fail "bad job: summary"; cat "$work/bad.out"; }
"$hetc" jobs show 1 --queue "$q" >"$work/bad.show"
[ "$(grep -c ' failed ' "$work/bad.show")" = 3 ] || { fail "bad job: tasks not failed"; cat "$work/bad.show"; }
grep -q "job 1, model 0: tiny_conv.json: " "$work/bad.show" || { fail "bad job: no message"; cat "$work/bad.show"; }
expect 1 "hetc: job 1 failed (0 of 3 tasks done, 3 failed; hetc jobs show 1 says why)" -- jobs wait 1 --queue "$q"
for job in 2 3; do
  "$hetc" jobs wait $job --queue "$q" --timeout 5 >/dev/null || fail "good job $job after a bad one is not done"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "PASS: hetc worker against PostgreSQL"
