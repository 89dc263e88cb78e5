#!/bin/sh
# A benchmark's smoke run (the test suite's bench_smoke_* entries): runs the
# benchmark on a tiny model, shows what it printed, and passes when it
# exited 0 and printed a line matching PATTERN (a line of its table), so
# that a change elsewhere cannot break a benchmark unnoticed. It times
# nothing worth reading: the numbers are the benchmarks' own business.
#
# usage: smoke.sh PATTERN COMMAND [ARG...]     (PATTERN: grep -E)
set -u
pattern=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
status=$?
cat "$out"
if [ "$status" != 0 ]; then
  echo "smoke: FAIL: '$*' exited with $status"
  exit 1
fi
if ! grep -qE -- "$pattern" "$out"; then
  echo "smoke: FAIL: '$*' printed no line matching '$pattern' (its table)"
  exit 1
fi
echo "smoke: PASS: it exited 0 and printed its table"
