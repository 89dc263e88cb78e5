#!/bin/sh
# Runs `hetc tasks` on every case of tests/model/bad_cases.txt and checks the
# CLI contract for bad input: exit status 2, nothing on stdout, and stderr
# exactly "hetc: MESSAGE\n".
# usage: run_cli_bad_cases.sh HETC_BINARY CASES_DIR [LEAST_CASES]
# CASES_DIR holds bad/ and bad_cases.txt (tests/model, tests/onnx); fewer
# than LEAST_CASES cases (default 45) means the list was cut short.
set -u
if [ $# -ne 2 ] && [ $# -ne 3 ]; then
  echo "usage: $0 HETC_BINARY CASES_DIR [LEAST_CASES]" >&2
  exit 2
fi
hetc=$1
dir=$2
least=${3:-45}
case $hetc in /*) ;; *) hetc=$(pwd)/$hetc ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$dir/bad" || exit 1
tab=$(printf '\t')
count=0
failures=0
while IFS="$tab" read -r file code message; do
  case $file in '' | '#'*) continue ;; esac
  count=$((count + 1))
  "$hetc" tasks "$file" >"$tmp/out" 2>"$tmp/err"
  status=$?
  printf 'hetc: %s\n' "$message" >"$tmp/want"
  bad=0
  if [ "$status" -ne 2 ]; then
    echo "$file ($code): exit status $status, expected 2"
    bad=1
  fi
  if [ -s "$tmp/out" ]; then
    echo "$file ($code): wrote to stdout:"
    sed 's/^/  | /' "$tmp/out"
    bad=1
  fi
  if ! cmp -s "$tmp/want" "$tmp/err"; then
    echo "$file ($code): stderr differs (- expected, + got):"
    diff "$tmp/want" "$tmp/err" | sed 's/^/  /'
    bad=1
  fi
  failures=$((failures + bad))
done <../bad_cases.txt
echo "$count cases, $failures failed"
[ "$count" -ge "$least" ] && [ "$failures" -eq 0 ]
