#!/bin/sh
# The machine's tuning locks (driver/tune/device_lock.c) held by a process
# that is not running: `hetc tune` waits for a running holder as long as
# it takes, but one that is stopped, or gone while a process it started
# keeps the lock file open, it waits for HETC_LOCK_TIMEOUT seconds and
# then names: exit 1, the lock, the holder's pid and what it is, no
# record written. (test_worker_cli.sh: a worker hands its task back.)
# usage: test_stalled_lock.sh HETC SAMPLES_DIR WORK_DIR
set -u
hetc=$1 samples=$2 work=$3
rm -rf "$work" && mkdir -p "$work/locks" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export HETC_LOCK_DIR="$work/locks"
lock="$work/locks/cores.lock"
model="$samples/tiny_conv.json"
key=$("$hetc" tasks "$model" | sed -n 's/^ *1  *[0-9][0-9]*  *[0-9.][0-9.]*  //p')
# hold SECONDS: flock(1) takes the cores' lock, as a measurement on vec
# does, and runs a sleep with the lock file open; $holder is flock's pid,
# $work/child the sleep's.
hold() {
  flock -x "$lock" sh -c 'echo $$ >"$1"; exec sleep "$2"' sh "$work/child" "$1" &
  holder=$!
  for _ in $(seq 1 100); do
    flock -n -s "$lock" true 2>/dev/null || return 0
    sleep 0.05
  done
  fail "flock never took $lock"
}
# tune_refused STORE WHY: exit 1, the message naming the holder, no record.
tune_refused() {
  HETC_LOCK_TIMEOUT=1 "$hetc" tune "$model" --targets vec --trials 2 --records "$work/$1" -q >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -eq 1 ] || fail "$1: exit status $status, expected 1"
  printf '%s\n' "hetc: tuning $key on vec: $lock: the tuning lock is held by $2; gave up after 1 s (HETC_LOCK_TIMEOUT)" \
    >"$work/want"
  cmp -s "$work/want" "$work/err" || { fail "$1: stderr differs"; diff "$work/want" "$work/err"; }
  records=$("$hetc" records list --records "$work/$1" 2>/dev/null | tail -n +2 | grep -c .)
  [ "$records" = 0 ] || fail "$1: $records records written"
}

# Stopped (SIGSTOP, Ctrl-Z): named with what it is.
hold 600
kill -STOP "$holder"
tune_refused stopped.sqlite "process $holder (flock), which is stopped"
# Gone, its lock kept by the sleep it started (which inherited the file).
child=$(cat "$work/child")
kill -KILL "$holder"
wait "$holder" 2>/dev/null
tune_refused gone.sqlite "process $holder, which is gone (a process it started may have the file open still)"
kill "$child"

# Running: waited for, however short the timeout.
hold 2
HETC_LOCK_TIMEOUT=0 "$hetc" tune "$model" --targets vec --trials 2 --records "$work/running.sqlite" -q \
  >"$work/out" 2>"$work/err" || { fail "a running holder: exit status $?"; cat "$work/err"; }
wait "$holder"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "PASS: tuning locks held by a stopped or gone process"
