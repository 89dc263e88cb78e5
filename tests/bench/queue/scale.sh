#!/bin/sh
# Scaling of the tuning queue beyond this machine, by simulation: 1, 4, 16
# and 64 workers in simulation mode (`hetc worker --simulate STORE`: a
# records store replayed as the device, each batch taking, asleep, the
# build and run times its records took) against one PostgreSQL server of
# the benchmark's own, each worker tuning into the queue's database (the
# shared records store) with its own connections, claims, heartbeats and
# reports. Prints, per worker count: trials per second over the whole run
# (from the workers' start to the last task done) and its ratio to linear
# scaling from one worker; the same for the steady rate (the trials the
# store gained in the middle 80% of the seconds from its first record to
# its last, per second: what the run holds once every worker is started,
# before the last tasks leave workers idle -- 64 workers starting on the
# cores of one machine take seconds that 64 machines would not); and the
# claims' latency (the median of the
# workers' medians, the worst 95th percentile and the worst claim).
#
# usage: tests/bench/queue/scale.sh BUILD_DIR [COUNTS]     (not in CI)
#   COUNTS: worker counts, default "1 4 16 64"
# Environment: MODEL (default samples/resnet18.json) and TARGET (default
# cpu), tuned for real once into the replayed store (REPLAY_TRIALS per task,
# random search, default 64: their recorded build and run times are what
# the simulated workers spend); TRIALS (per simulated task, default 64),
# TASKS_PER_WORKER (default 32), REPLAY (a replayed store to use, or to
# keep the one made here in), HETC_PG_SERVER_OPTIONS (the server's settings; the default
# here raises max_connections to 400 and keeps fsync on).
set -u
build=$(cd "$1" && pwd)
counts=${2:-"1 4 16 64"}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../../.." && pwd)
hetc=$build/bin/hetc
trials=${TRIALS:-64}
replay_trials=${REPLAY_TRIALS:-64}
per_worker=${TASKS_PER_WORKER:-32}
model=${MODEL:-$source_dir/samples/resnet18.json}
target=${TARGET:-cpu}
work=$(mktemp -d /tmp/hetc-scale-XXXXXX)
server=$work/server
export HETC_PG_SERVER_OPTIONS=${HETC_PG_SERVER_OPTIONS:-"-c max_connections=400 -c fsync=on -c full_page_writes=on"}
export HETC_LOCK_DIR=$work/locks
trap 'sh "$source_dir/tests/queue/pg_server.sh" stop "$server" >/dev/null 2>&1; rm -rf "$work"' EXIT
sh "$source_dir/tests/queue/pg_server.sh" start "$server" >/dev/null || exit 1
[ -s "$server/uri" ] || { echo "no PostgreSQL server: $(cat "$server/why" 2>/dev/null)"; exit 1; }
uri=$(cat "$server/uri")
base=${uri%/*}
# The server's own psql: Debian's /usr/bin/psql is a Perl wrapper, whose
# start-up in the poll below would take CPU from the workers.
psql=$(pg_config --bindir 2>/dev/null)/psql
[ -x "$psql" ] || psql=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
[ -x "$psql" ] || psql=psql
sql() { PGOPTIONS='-c client_min_messages=warning' "$psql" -X -q -tA -v ON_ERROR_STOP=1 "$@"; }

# The replayed device: every task of the model tuned for real once (or
# the store $REPLAY names, kept from an earlier run).
if [ -n "${REPLAY:-}" ] && [ -s "$REPLAY" ]; then
  cp "$REPLAY" "$work/replay.sqlite"
else
  "$hetc" tune "$model" --targets "$target" --trials "$replay_trials" --search random \
    --records "$work/replay.sqlite" -q >"$work/replay.out" 2>&1 || { cat "$work/replay.out"; exit 1; }
  [ -n "${REPLAY:-}" ] && cp "$work/replay.sqlite" "$REPLAY"
fi
tasks_per_job=$("$hetc" tasks "$model" | sed -n 's/.* nodes after fusion, \([0-9]*\) tasks$/\1/p')
printf 'replayed store: %s records of %s tasks (%s on %s, this machine; %s s of builds and runs per trial on average); %s trials per simulated task\n' \
  "$("$hetc" records list --records "$work/replay.sqlite" | tail -1 | cut -d' ' -f1)" "$tasks_per_job" \
  "$(basename "$model")" "$target" "$(sqlite3 "$work/replay.sqlite" "SELECT round(avg(total_seconds), 3) FROM records")" "$trials"
printf '%8s  %6s  %7s  %9s  %8s  %8s  %9s  %8s  %9s  %12s  %12s\n' workers jobs tasks trials seconds 'trials/s' \
  'vs linear' 'steady/s' 'vs linear' 'claim p50 ms' 'p95 ms (max)'
single=""
single_steady=""
status=0
for n in $counts; do
  db=scale_$n
  sql "$uri" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  q=$base/$db
  jobs=$(( (n * per_worker + tasks_per_job - 1) / tasks_per_job ))
  for j in $(seq 1 "$jobs"); do
    "$hetc" jobs submit "$model" --targets "$target" --trials "$trials" --search random --queue "$q" >/dev/null || exit 1
  done
  start=$(date +%s.%N)
  for w in $(seq 1 "$n"); do
    "$hetc" worker --queue "$q" --targets "$target" --simulate "$work/replay.sqlite" --idle-exit 3 --workers 1 -q \
      >"$work/w$w.out" 2>"$work/w$w.err" &
  done
  # Polled every 0.25 s: the end is when the last task is done.
  while [ "$(sql "$q" -c "SELECT count(*) FROM hetc_tasks WHERE state NOT IN ('done', 'failed')")" != 0 ]; do
    sleep 0.25
  done
  end=$(date +%s.%N)
  wait
  done_trials=$(sql "$q" -c "SELECT sum(trials_done) FROM hetc_tasks")
  tasks=$(sql "$q" -c "SELECT count(*) FROM hetc_tasks WHERE state = 'done'")
  steady=$(sql "$q" -F ' ' -c "SELECT timestamp, count(*) FROM hetc_records.records GROUP BY timestamp" |
    awk '{ n[$1] = $2; if (NR == 1 || $1 < t0) t0 = $1; if ($1 > t1) t1 = $1 }
      END { from = t0 + 0.1 * (t1 - t0); to = t1 - 0.1 * (t1 - t0); s = 0; secs = 0
        for (t = int(from + 0.5); t <= int(to + 0.5); ++t) { s += n[t]; ++secs }
        printf "%.1f", secs ? s / secs : 0 }')
  failed=$(cat "$work"/w*.err | grep -c 'failed\|error' || true)
  stats=$(cat "$work"/w*.out | sed -n 's/^worker: [0-9]* claims took \([0-9.]*\) ms (median), \([0-9.]*\) ms (95th percentile), \([0-9.]*\) ms at most$/\1 \2 \3/p' |
    sort -n | awk '{ m[NR] = $1; if ($2 > p95) p95 = $2; if ($3 > mx) mx = $3 }
      END { printf "%.1f %.1f %.1f", m[int((NR + 1) / 2)], p95, mx }')
  line=$(awk -v n="$n" -v t="$done_trials" -v s="$start" -v e="$end" -v single="$single" -v st="$stats" \
    -v jobs="$jobs" -v tasks="$tasks" -v steady="$steady" -v single_steady="$single_steady" 'BEGIN {
      split(st, c, " "); secs = e - s; tps = t / secs
      ratio = single == "" ? 1 : tps / (n * single)
      steady_ratio = single_steady == "" ? 1 : steady / (n * single_steady)
      printf "%8d  %6d  %7d  %9d  %8.1f  %8.1f  %8.2fx  %8.1f  %8.2fx  %12s  %5s (%s)\n", n, jobs, tasks, t, secs, tps,
        ratio, steady, steady_ratio, c[1], c[2], c[3] }')
  echo "$line"
  if [ "$failed" != 0 ]; then
    echo "  ($failed lines of the workers' stderr say failed or error:)"
    grep -h 'failed\|error' "$work"/w*.err | head -5 | sed 's/^/    /'
    status=1
  fi
  [ -z "$single" ] && single=$(echo "$line" | awk -v n="$n" '{ print $6 / n }')
  [ -z "$single_steady" ] && single_steady=$(echo "$line" | awk -v n="$n" '{ print $8 / n }')
  rm -f "$work"/w*.out "$work"/w*.err
done
exit "$status"
