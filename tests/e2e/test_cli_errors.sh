#!/usr/bin/env bash
# Bad command lines and environment variables, every subcommand: exit status
# 2, nothing on stdout, and the exact message (cli.h, "Arguments"; README.md,
# "The command line"). An argument error is followed by the command's usage;
# a bad environment variable by nothing. Then the cases that must work: a
# HETC_NUM_THREADS above the cap runs (vec and cpu) with one warning, and
# --input NAME=FILE,... on a two-input package.
#   test_cli_errors.sh HETC SOURCE_DIR
set -uo pipefail
hetc=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every store the commands below could open is in the work folder.
export HETC_RECORDS=$work/records.sqlite
# and the vec backend's compiled kernels.
export XDG_CACHE_HOME=$work/cache
unset HETC_NUM_THREADS HETC_LOG_LEVEL HETC_PLUGIN_PATH HETC_LOCK_TIMEOUT
model=$source_dir/samples/tiny_conv.json
failures=0
count=0

# check_error WANT_FIRST_LINE USAGE_PREFIX [ENV=VALUE...] -- ARGS...
# USAGE_PREFIX: what the second line of stderr starts with ("" when stderr
# is the message alone).
check_error() {
  local want=$1 usage=$2
  shift 2
  local -a environment=()
  while [ "$1" != "--" ]; do environment+=("$1"); shift; done
  shift
  count=$((count + 1))
  local status=0
  env ${environment[@]+"${environment[@]}"} timeout 60 "$hetc" "$@" > "$work/out" 2> "$work/err" || status=$?
  local first second lines
  first=$(sed -n 1p "$work/err")
  second=$(sed -n 2p "$work/err")
  lines=$(wc -l < "$work/err")
  local problem=""
  [ "$status" = 2 ] || problem="exit $status"
  [ -s "$work/out" ] && problem="$problem; wrote to stdout"
  [ "$first" = "$want" ] || problem="$problem; stderr '$first'"
  if [ -n "$usage" ]; then
    case $second in "$usage"*) ;; *) problem="$problem; second line '$second', not the usage" ;; esac
  elif [ "$lines" != 1 ]; then
    problem="$problem; $lines lines on stderr"
  fi
  if [ -n "$problem" ]; then
    echo "FAIL: ${environment[*]+${environment[*]} }hetc $*: ${problem#; } (want '$want')"
    failures=$((failures + 1))
  fi
}

# bad CMD WANT ARGS...: an argument error of `hetc CMD ARGS...`.
bad() {
  local command=$1 want=$2
  shift 2
  local usage="usage: hetc $command"
  [ "$command" = records ] && usage="usage: hetc records"
  check_error "$want" "$usage" -- "$command" "$@"
}

# bad_env WANT ENV=VALUE ARGS...: a bad environment variable.
bad_env() {
  local want=$1 assignment=$2
  shift 2
  check_error "$want" "" "$assignment" -- "$@"
}

pkg=$work/never.hetc  # argument errors are found before any package is opened

# -- numbers: --repeat, --runs, --warmup, --random-input, --device, --timeout,
#    --task, --trials, --early-stopping, --batch, --workers, --seed, --limit, --keep
for v in 0 -1 abc 1.5 100001 " 3" +3 3x 0x10 99999999999999999999; do
  bad run "hetc run: --repeat: expected a whole number from 1 to 100000, got '$v'" "$pkg" --repeat "$v"
done
bad run "hetc run: --repeat: expected a whole number from 1 to 100000, got nothing" "$pkg" --repeat
bad run "hetc run: --repeat: expected a whole number from 1 to 100000, got ''" "$pkg" --repeat=
bad run "hetc run: --random-input: expected a whole number from 0 to 9223372036854775807, got '-1'" "$pkg" --random-input -1
bad run "hetc run: --random-input: expected a whole number from 0 to 9223372036854775807, got '9223372036854775808'" "$pkg" --random-input 9223372036854775808
bad bench "hetc bench: --runs: expected a whole number from 1 to 1000000, got '0'" "$pkg" --runs 0
bad bench "hetc bench: --runs: expected a whole number from 1 to 1000000, got '1000001'" "$pkg" --runs=1000001
bad bench "hetc bench: --warmup: expected a whole number from 0 to 1000000, got '-1'" "$pkg" --warmup -1
bad bench "hetc bench: --random-input: expected a whole number from 0 to 9223372036854775807, got '-1'" "$pkg" --random-input -1
bad compare "hetc compare: --runs: expected a whole number from 1 to 1000000, got '0'" "$model" --targets cpu --runs 0
bad compare "hetc compare: --warmup: expected a whole number from 0 to 1000000, got 'x'" "$model" --targets cpu --warmup x
bad plugin-check "hetc plugin-check: --device: expected a whole number from 0 to 1048576, got '-1'" x.so --device -1
bad plugin-check "hetc plugin-check: --timeout: expected a whole number from 1 to 86400, got '0'" x.so --timeout 0
bad plugin-check "hetc plugin-check: --timeout: expected a whole number from 1 to 86400, got '1.5'" x.so --timeout 1.5
bad space "hetc space: --task: expected a whole number from 1 to 2147483647, got '0'" "$model" --task 0 --target cpu
bad space "hetc space: --task: expected a whole number from 1 to 2147483647, got 'one'" "$model" --task one --target cpu
bad tune "hetc tune: --trials: expected a whole number from 1 to 1000000, got '0'" "$model" --targets cpu --trials 0
bad tune "hetc tune: --early-stopping: expected a whole number from 0 to 1000000, got '-5'" "$model" --targets cpu --early-stopping -5
bad tune "hetc tune: --batch: expected a whole number from 1 to 256, got '257'" "$model" --targets cpu --batch 257
bad tune "hetc tune: --workers: expected a whole number from 1 to 64, got '0'" "$model" --targets cpu --workers 0
bad tune "hetc tune: --seed: expected a whole number from 0 to 9223372036854775807, got '-1'" "$model" --targets cpu --seed -1
bad records "hetc records list: --limit: expected a whole number from 0 to 2147483647, got 'x'" list --limit x
bad records "hetc records export: --limit: expected a whole number from 0 to 2147483647, got '-1'" export f.jsonl --limit -1
bad records "hetc records prune: --keep: expected a whole number from 0 to 2147483647, got '-1'" prune --keep -1

# -- seconds: --budget, --build-timeout, --run-timeout
for v in 0 -1 inf nan 0x10 " 5" 1e400 abc; do
  bad tune "hetc tune: --budget: expected seconds, a number above 0 and at most 31536000, got '$v'" "$model" --targets cpu --budget "$v"
done
bad tune "hetc tune: --build-timeout: expected seconds, a number above 0 and at most 86400, got '86401'" "$model" --targets cpu --build-timeout 86401
bad tune "hetc tune: --run-timeout: expected seconds, a number above 0 and at most 86400, got '0'" "$model" --targets cpu --run-timeout=0

# -- choices: --placement, --split, --search
bad compile "hetc compile: --placement: expected one of cost|first, got 'bogus'" "$model" --targets cpu -o "$pkg" --placement bogus
bad compile "hetc compile: --placement: expected one of cost|first, got nothing" "$model" --targets cpu -o "$pkg" --placement
bad compile "hetc compile: --split: expected one of auto|never|all, got 'Auto'" "$model" --targets cpu -o "$pkg" --split Auto
bad tune "hetc tune: --search: expected one of model|random|grid|genetic, got 'annealing'" "$model" --targets cpu --search annealing

# -- target lists: --targets of compile, tune, compare
for command in compile tune compare; do
  set -- "$model" -o "$pkg"
  [ "$command" = compile ] || set -- "$model"
  bad $command "hetc $command: --targets: empty target name in 'cpu,'" "$@" --targets cpu,
  bad $command "hetc $command: --targets: empty target name in ',cpu'" "$@" --targets ,cpu
  bad $command "hetc $command: --targets: empty target name in 'cpu,,vec'" "$@" --targets cpu,,vec
  bad $command "hetc $command: --targets: empty target name in ','" "$@" --targets ,
  bad $command "hetc $command: --targets: target 'cpu' is listed twice in 'cpu,vec,cpu'" "$@" --targets cpu,vec,cpu
  bad $command "hetc $command: --targets: expected target names, comma-separated, got ''" "$@" --targets ""
  bad $command "hetc $command: --targets is required" "$@"
done
bad compile "hetc compile: --targets: at most 16 targets, got 17 in 'a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q'" \
  "$model" -o "$pkg" --targets a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q
bad compare "hetc compare: --targets: at most 8 targets, got 9 in 'a,b,c,d,e,f,g,h,i'" "$model" --targets a,b,c,d,e,f,g,h,i

# -- paths and names: empty, missing, or an option taken for one
bad compile "hetc compile: -o: expected a path, got ''" "$model" --targets cpu -o ""
bad compile "hetc compile: --output: expected a path, got ''" "$model" --targets cpu --output=
bad compile "hetc compile: -o: expected a path, got '--quiet'" "$model" --targets cpu -o --quiet
bad compile "hetc compile: --records: expected a path, got ''" "$model" --targets cpu -o "$pkg" --records ""
bad compile "hetc compile: -o is required" "$model" --targets cpu
bad run "hetc run: --output: expected a path, got ''" "$pkg" --output ""
bad run "hetc run: --output: expected a path, got '--repeat'" "$pkg" --output --repeat 3
bad run "hetc run: --input: expected a file, or NAME=FILE,... for several inputs, got ''" "$pkg" --input ""
bad bench "hetc bench: --input: expected a file, or NAME=FILE,... for several inputs, got nothing" "$pkg" --input
bad compare "hetc compare: --csv: expected a path, got ''" "$model" --targets cpu --csv ""
bad compare "hetc compare: --json: expected a path, got ''" "$model" --targets cpu --json ""
bad compare "hetc compare: --html: expected a path, got ''" "$model" --targets cpu --html=
bad compare "hetc compare: --keep: expected a directory, got ''" "$model" --targets cpu --keep ""
bad compare "hetc compare: --csv and --html name the same file 'r'" "$model" --targets cpu --csv r --html r
bad space "hetc space: --target: expected a target name, got ''" "$model" --task 1 --target ""
bad space "hetc space: --overrides: expected a path, got ''" "$model" --task 1 --target cpu --overrides ""
bad space "hetc space: --target is required" "$model" --task 1
bad space "hetc space: --task is required" "$model" --target cpu
bad tune "hetc tune: --records: expected a path, got ''" "$model" --targets cpu --records ""
bad tune "hetc tune: --overrides: expected a path, got ''" "$model" --targets cpu --overrides ""
bad tune "hetc tune: --simulate: expected a path, got ''" "$model" --targets cpu --simulate ""
bad plugins "hetc plugins: --records: expected a path, got ''" --records ""
bad plugins "hetc plugins: --records: expected a path, got nothing" --records
bad records "hetc records list: --records: expected a path, got ''" list --records ""
bad records "hetc records list: --target: expected a target name, got ''" list --target ""
bad records "hetc records best: --device: expected a device fingerprint, got ''" best --device ""
bad records "hetc records export: --workload: expected a workload key, got ''" export f.jsonl --workload ""
bad records "hetc records list: --template: expected a template name, got ''" list --template=

# -- task lists: --tasks
for v in 0 1,,3 1, ,1 3-1 1-x " 1" 1000001 x; do
  bad tune "hetc tune: --tasks: expected task numbers from 1 to 1000000 such as 1,3,5-8, got '$v'" "$model" --targets cpu --tasks "$v"
done
bad tune "hetc tune: --tasks: task 2 is listed twice in '1-3,2'" "$model" --targets cpu --tasks 1-3,2
bad tune "hetc tune: --tasks: at most 4096 tasks, got more in '1-5000'" "$model" --targets cpu --tasks 1-5000

# -- positional arguments: missing, empty, one too many
bad tasks "hetc tasks: no MODEL.json given"
bad tasks "hetc tasks: MODEL.json: expected a path, got ''" ""
bad tasks "hetc tasks: unexpected argument 'b.json'" a.json b.json
bad tasks "hetc tasks: unexpected argument '--verbose'" a.json --verbose
bad compile "hetc compile: no MODEL.json given" --targets cpu -o "$pkg"
bad compile "hetc compile: unexpected argument 'b.json'" "$model" b.json --targets cpu -o "$pkg"
bad run "hetc run: no PACKAGE given"
bad run "hetc run: PACKAGE: expected a path, got ''" ""
bad run "hetc run: unexpected argument 'b.hetc'" a.hetc b.hetc
bad bench "hetc bench: no PACKAGE given" --runs 3
bad compare "hetc compare: no MODEL.json given" --targets cpu
bad space "hetc space: no MODEL.json given" --task 1 --target cpu
bad tune "hetc tune: no MODEL.json given" --targets cpu
bad plugin-check "hetc plugin-check: no PLUGIN.so given" --quick
bad plugin-check "hetc plugin-check: unexpected argument 'b.so'" a.so b.so
bad plugins "hetc plugins: unexpected argument 'extra'" extra
bad records "hetc records: no subcommand given (list, best, export, import or prune)"
bad records "hetc records: unknown subcommand 'show' (list, best, export, import or prune)" show
bad records "hetc records import: no FILE.jsonl given" import
bad records "hetc records export: no FILE.jsonl given" export --limit 3
bad records "hetc records list: unexpected argument 'f.jsonl'" list f.jsonl
bad records "hetc records export: unexpected argument 'g.jsonl'" export f.jsonl g.jsonl

check_error "hetc version: unexpected argument 'x'" "usage: hetc COMMAND" -- version x
check_error "hetc --help: unexpected argument 'run'" "usage: hetc COMMAND" -- --help run
check_error "hetc: unknown command 'frobnicate'" "usage: hetc COMMAND" -- frobnicate

# -- options a subcommand does not take, and options that exclude each other
bad run "hetc run: unexpected argument '--runs'" "$pkg" --runs 3
bad bench "hetc bench: unexpected argument '--repeat'" "$pkg" --repeat 3
bad records "hetc records list: unexpected argument '--keep'" list --keep 3
bad records "hetc records prune: unexpected argument '--target'" prune --target cpu
bad records "hetc records import: unexpected argument '--limit'" import f.jsonl --limit 3
bad records "hetc records best: unexpected argument '--limit'" best --limit 3
bad run "hetc run: --input and --random-input exclude each other" "$pkg" --input f --random-input 3
bad bench "hetc bench: --input and --random-input exclude each other" "$pkg" --random-input 3 --input f
bad compile "hetc compile: --quiet takes no value, got '--quiet=yes'" "$model" --targets cpu -o "$pkg" --quiet=yes

# -- an option given twice, whichever spelling
bad run "hetc run: --repeat given twice" "$pkg" --repeat 3 --repeat 4
bad run "hetc run: --random-input given twice" "$pkg" --random-input 3 --random-input=3
bad run "hetc run: --output given twice" "$pkg" --output a --output b
bad bench "hetc bench: --steps given twice" "$pkg" --steps --steps
bad compile "hetc compile: -o given twice" "$model" --targets cpu --output a -o b
bad compile "hetc compile: --targets given twice" "$model" --targets cpu -o "$pkg" --targets vec
bad compile "hetc compile: --placement given twice" "$model" --targets cpu -o "$pkg" --placement cost --placement first
bad compile "hetc compile: -q given twice" "$model" --targets cpu -o "$pkg" --quiet -q
bad compare "hetc compare: --runs given twice" "$model" --targets cpu --runs 3 --runs 4
bad space "hetc space: --task given twice" "$model" --task 1 --task 2 --target cpu
bad tune "hetc tune: --trials given twice" "$model" --targets cpu --trials 3 --trials 4
bad tune "hetc tune: --check given twice" "$model" --targets cpu --check --check
bad plugin-check "hetc plugin-check: --device given twice" x.so --device 0 --device 1
bad plugins "hetc plugins: --records given twice" --records a --records b
bad records "hetc records list: --target given twice" list --target cpu --target vec
bad records "hetc records list: --ok given twice" list --ok --ok

# -- environment variables: refused by every command, before it does anything
for v in 0 -1 abc 1.5 " 4" +4 4x; do
  for command in "tasks $model" "run $pkg" "records list"; do
    # shellcheck disable=SC2086
    bad_env "hetc: HETC_NUM_THREADS: expected a whole number of threads, 1 or more, got '$v'" \
      "HETC_NUM_THREADS=$v" $command
  done
done
for v in verbose WARNING 3 warn; do
  bad_env "hetc: HETC_LOG_LEVEL: expected one of error|warning|info|debug, got '$v'" "HETC_LOG_LEVEL=$v" tasks "$model"
done
for v in soon -1 86401 inf 1e9 0x10; do
  bad_env "hetc: HETC_LOCK_TIMEOUT: expected seconds from 0 to 86400, got '$v'" "HETC_LOCK_TIMEOUT=$v" tasks "$model"
done
bad_env "hetc: HETC_PLUGIN_PATH: '$work/none': cannot open the directory: No such file or directory" \
  "HETC_PLUGIN_PATH=$work/none" plugins
bad_env "hetc: HETC_PLUGIN_PATH: '$model': cannot open the directory: Not a directory" \
  "HETC_PLUGIN_PATH=$work::$model" tasks "$model"

# -- what must work
# An empty variable is unset; empty HETC_PLUGIN_PATH entries are skipped.
ok() {
  count=$((count + 1))
  if ! "$@" > "$work/out" 2> "$work/err"; then
    echo "FAIL: $*: exit status not 0: $(head -n 3 "$work/err")"
    failures=$((failures + 1))
    return 1
  fi
}
ok env HETC_NUM_THREADS= HETC_LOG_LEVEL= HETC_PLUGIN_PATH="::$work" "$hetc" tasks "$model"
# Above the cap: capped with one warning, and the run works on both CPU
# backends (100000 crashed libgomp under vec and hung cpu before).
cores=$(getconf _NPROCESSORS_ONLN)
cap=$((cores * 4))
for target in vec cpu; do
  ok "$hetc" compile "$model" --targets $target -o "$work/$target.hetc" --quiet || continue
  for v in 100000 99999999999999999999 $((cap + 1)); do
    if ok env HETC_NUM_THREADS=$v timeout 120 "$hetc" run "$work/$target.hetc" --repeat 2; then
      want="hetc: warning: HETC_NUM_THREADS=$v is more than $cap (4 threads for each of the $cores online cores); using $cap"
      if [ "$(cat "$work/err")" != "$want" ] || ! grep -q "^latency: " "$work/out"; then
        echo "FAIL: HETC_NUM_THREADS=$v hetc run ($target): stderr '$(cat "$work/err")', want '$want'"
        failures=$((failures + 1))
      fi
    fi
  done
  # At the cap: no warning.
  if ok env HETC_NUM_THREADS=$cap "$hetc" run "$work/$target.hetc" --repeat 1 && [ -s "$work/err" ]; then
    echo "FAIL: HETC_NUM_THREADS=$cap (the cap) warned: $(cat "$work/err")"
    failures=$((failures + 1))
  fi
done

# --input NAME=FILE,... on a model with two inputs: each entry checked
# against the package's inputs (a misspelt name was ignored before).
cat > "$work/two.json" <<'EOF'
{"format": "hetc-model", "version": 1, "name": "two", "weights": {"init": "random", "seed": 1},
 "inputs": [{"name": "a", "shape": [1, 4], "dtype": "float32"}, {"name": "b", "shape": [1, 4], "dtype": "float32"}],
 "nodes": [{"name": "sum", "op": "add", "inputs": ["a", "b"]}], "outputs": ["sum"]}
EOF
head -c 16 /dev/zero > "$work/x.bin"
if ok "$hetc" compile "$work/two.json" --targets vec -o "$work/two.hetc" --quiet; then
  ok "$hetc" run "$work/two.hetc" --input "b=$work/x.bin,a=$work/x.bin" --repeat 1
  check_error "hetc: --input: the package has no input 'c' (its inputs: a, b)" "" -- \
    run "$work/two.hetc" --input "a=$work/x.bin,c=$work/x.bin"
  check_error "hetc: --input: input 'a' is given twice" "" -- \
    run "$work/two.hetc" --input "a=$work/x.bin,a=$work/x.bin,b=$work/x.bin"
  check_error "hetc: --input: '$work/x.bin' is not NAME=FILE (the package's inputs: a, b)" "" -- \
    run "$work/two.hetc" --input "$work/x.bin"
  check_error "hetc: --input: 'a=' is not NAME=FILE (the package's inputs: a, b)" "" -- \
    run "$work/two.hetc" --input "a=,b=$work/x.bin"
  check_error "hetc: --input: '' is not NAME=FILE (the package's inputs: a, b)" "" -- \
    run "$work/two.hetc" --input "a=$work/x.bin,,b=$work/x.bin"
  check_error "hetc: --input names no file for input 'b'" "" -- bench "$work/two.hetc" --input "a=$work/x.bin"
fi

echo "$count cases, $failures failed"
[ "$failures" -eq 0 ] && [ "$count" -ge 200 ]
