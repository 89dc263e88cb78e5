#!/bin/sh
# Several tuning jobs on one machine, three ways (the load-aware scheduling
# study's comparison): one job per target of MODEL, with fixed trials,
#   (a) one after another: `hetc tune MODEL --targets T` for each T in turn;
#   (b) as independent `hetc tune` processes at once, each with a lock
#       folder and a store of its own, so that nothing makes them take
#       turns (what running independent tuners side by side gives);
#   (c) through the scheduler: `hetc tune MODEL --targets T1,T2,... --jobs`.
# Prints, for each way: the completion time, each device's idle fraction
# (the time no measurement held it, from HETC_MEASURE_LOG), and the p50 of
# each job's tuned package (`hetc compile MODEL --targets T` from that
# way's records, then `hetc bench`), the packages benchmarked in rounds
# that alternate the three ways; medians over the rounds, with the spread
# (lowest to highest).
#
# usage: tests/bench/queue/jobs.sh BUILD_DIR [MODEL]        (not in CI)
# Environment: TARGETS (default "cpu vec opencl"), TRIALS (per task,
# default 16), ROUNDS (bench rounds, default 5), RUNS (per bench, default
# 30), KEEP (a folder to keep the stores, logs and packages in).
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../../.." && pwd)
model=${2:-$source_dir/samples/resnet18.json}
hetc=$build/bin/hetc
targets=${TARGETS:-"cpu vec opencl"}
trials=${TRIALS:-16}
rounds=${ROUNDS:-5}
runs=${RUNS:-30}
work=${KEEP:-$(mktemp -d /tmp/hetc-jobs-XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
comma=$(echo $targets | tr ' ' ',')
now() { date +%s.%N; }
# A step that failed is shown and the run goes on, but ends with status 1.
failed=0
fail() { echo "$1"; cat "$2"; failed=1; }

tune_a() {
  for t in $targets; do
    HETC_LOCK_DIR=$work/a-locks HETC_MEASURE_LOG=$work/a.log "$hetc" tune "$model" --targets "$t" --trials "$trials" \
      --records "$work/a.sqlite" -q >"$work/a-$t.out" 2>&1 || fail "(a) $t failed" "$work/a-$t.out"
  done
}
tune_b() {
  for t in $targets; do
    (HETC_LOCK_DIR=$work/b-locks-$t HETC_MEASURE_LOG=$work/b.log "$hetc" tune "$model" --targets "$t" \
      --trials "$trials" --records "$work/b-$t.sqlite" -q >"$work/b-$t.out" 2>&1; echo $? >"$work/b-$t.rc") &
  done
  wait
  for t in $targets; do
    [ "$(cat "$work/b-$t.rc")" = 0 ] || fail "(b) $t failed" "$work/b-$t.out"
  done
}
tune_c() {
  HETC_LOCK_DIR=$work/c-locks HETC_MEASURE_LOG=$work/c.log "$hetc" tune "$model" --targets "$comma" --jobs \
    --trials "$trials" --records "$work/c.sqlite" -q >"$work/c.out" 2>&1 || fail "(c) failed" "$work/c.out"
}
store_of() { # WAY TARGET
  if [ "$1" = b ]; then echo "$work/b-$2.sqlite"; else echo "$work/$1.sqlite"; fi
}

echo "model $(basename "$model"), targets $targets, $trials trials per task; $(nproc) cores"
for way in a b c; do
  rm -f "$work/$way.log"
  start=$(now)
  tune_$way
  end=$(now)
  echo "$start $end" >"$work/$way.span"
done

# Each device's busy time: the union of its measurement holds.
printf '\n%-4s %12s' way seconds
for t in $targets; do printf '  %16s' "idle $t"; done
printf '\n'
for way in a b c; do
  read -r start end <"$work/$way.span"
  printf '%-4s %12.1f' "$way" "$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')"
  for t in $targets; do
    device=$(sqlite3 "$(store_of $way "$t")" \
      "SELECT device_fingerprint FROM records WHERE target = '$t' LIMIT 1" | tr -c 'A-Za-z0-9.\n-' '_')
    awk -v dev="$device" -v s="$start" -v e="$end" '
      $1 == "measure" && $6 == dev { n++; from[n] = $3 / 1e6; to[n] = $4 / 1e6 }
      END {
        busy = 0; reach = 0
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (from[j] < from[i]) {
          x = from[i]; from[i] = from[j]; from[j] = x; x = to[i]; to[i] = to[j]; to[j] = x }
        for (i = 1; i <= n; i++) {
          if (to[i] <= reach) continue
          busy += to[i] - (from[i] > reach ? from[i] : reach); reach = to[i]
        }
        printf "  %15.1f%%", 100 * (1 - busy / (e - s))
      }' "$work/$way.log"
  done
  printf '\n'
done

# The packages, benchmarked in rounds that alternate the ways.
for way in a b c; do
  for t in $targets; do
    "$hetc" compile "$model" --targets "$t" --records "$(store_of $way "$t")" -o "$work/$way-$t.hetc" \
      >"$work/$way-$t.compile" 2>&1 || fail "compile ($way) $t failed" "$work/$way-$t.compile"
  done
done
for round in $(seq 1 "$rounds"); do
  for t in $targets; do
    for way in a b c; do
      "$hetc" bench "$work/$way-$t.hetc" --runs "$runs" --warmup 3 --random-input 1 >"$work/bench.out" 2>&1 ||
        fail "bench ($way) $t failed" "$work/bench.out"
      sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' "$work/bench.out" | head -1 >>"$work/$way-$t.p50"
    done
  done
done
printf '\n%-8s' target
for way in a b c; do printf '  %26s' "($way) p50 ms (spread)"; done
printf '\n'
for t in $targets; do
  printf '%-8s' "$t"
  for way in a b c; do
    sort -n "$work/$way-$t.p50" | awk '{ v[NR] = $1 } END {
      if (!NR) { printf "  %26s", "-"; exit }
      printf "  %11.3f (%6.3f-%6.3f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
  done
  printf '\n'
done
[ "$failed" = 0 ] || { echo "jobs.sh: some steps failed (above)"; exit 1; }
