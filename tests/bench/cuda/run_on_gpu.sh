#!/usr/bin/env bash
# The cuda backend's conformance tests and benchmark on a GPU machine, in one
# command, from the repository root, with the .gpu/ folder that
# tests/bench/cuda/pack_for_gpu.sh made here (the GPU image has none of
# hetc's Debian libraries, and nothing is built there).
#
# One call of the device tool (`run`), after pack_for_gpu.sh:
#   command:   bash tests/bench/cuda/run_on_gpu.sh
#   carry:     [".gpu"]
#   timeout_s: 600
# Everything it prints is also in $OUT/gpu_run.log; the tables come back as
# $OUT/bench_cuda.txt, cudnn_layers.txt/.csv, hetc_vs_cudnn.txt/.csv and
# summary.txt (7 files: the tool returns at most 8).
#
#   run_on_gpu.sh [STAGE...]
# Stages, in the order run by default (naming some runs those, in the order
# named; 'env' always runs first):
#   env          loader path for .gpu's libraries, nvidia-smi -L (fails: no GPU)
#   plugins      hetc plugins; the target's plugin must be ready with a GPU
#   conformance  HETC_CONFORMANCE_TARGET=cuda test_template_conformance
#   ops          HETC_KERNELS_TARGET=cuda test_cpu_kernels (the ops but conv2d)
#   bench        bench_conv_vs_onednn --target cuda --no-onednn on ResNet-50
#   cudnn        cudnn_layers.py: cuDNN (PyTorch) on the same conv2d layers
#   join         join_cudnn.py: hetc vs cuDNN per layer, geomean, whole network
#   e2e          HETC_E2E_TARGET=cuda test_e2e_samples (every sample model)
# e2e runs last although it is a test: it is the longest, and last it takes
# whatever time the others left, after the benchmark tables are safe.
#
# Time: the whole run keeps within HETC_GPU_BUDGET_S (default 530 s, inside
# the tool's 9-10 minutes). Each stage has a default limit (they add up to
# the budget) and also gets what earlier stages left unused; a short budget
# squeezes the later stages. A stage that runs out is killed and reported
# as TIMEOUT.
#
# Environment (all optional):
#   HETC_GPU_TARGET        target under test (default cuda; 'vec' dry-runs the
#                          pipeline on a CPU machine, with HETC_GPU_FORCE=1)
#   HETC_GPU_FORCE=1       go on without a GPU (nvidia-smi missing or no GPU)
#   HETC_GPU_FORCE_DEPS=1  use every carried library, even where the system has one
#   HETC_GPU_BUDGET_S      total seconds (default 530)
#   HETC_GPU_LIMIT_<STAGE> a stage's default limit in s, e.g. HETC_GPU_LIMIT_E2E=300
#   HETC_GPU_CONFORMANCE_WORKLOADS  workloads per template (default 30, the test's)
#   HETC_GPU_OPS_ROUNDS    rounds of test_cpu_kernels (default 30, as opencl's)
#   HETC_GPU_E2E_QUICK=1   e2e on the tiny models only
#   HETC_GPU_BENCH_REPEAT  timed runs per layer (default 25)
#   HETC_GPU_BENCH_MODEL   the model of the bench and cudnn stages (default
#                          samples/resnet50.json)
#   HETC_GPU_PACK          the packed folder (default .gpu at the root)
#   HETC_GPU_BENCH_ARGS    more bench_conv_vs_onednn arguments, e.g. '--search 16'
#   HETC_GPU_CUDNN_ARGS    more cudnn_layers.py arguments, e.g. '--repeat 50'
#   HETC_GPU_CUDNN_DEVICE  cpu: with a target other than cuda, time PyTorch's
#                          CPU convolution instead (a trial, not a yardstick)
#   OUT                    where the logs and tables go (the tool sets it;
#                          else a new folder under /tmp)
# The stage functions run through `bash -c stage_NAME`:
# shellcheck disable=SC2317
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$root" || exit 1
export HETC_GPU_ROOT=$root
export HETC_GPU_PACK=${HETC_GPU_PACK:-$root/.gpu}
export HETC_GPU_BENCH_MODEL=${HETC_GPU_BENCH_MODEL:-$root/samples/resnet50.json}
export HETC_GPU_TARGET=${HETC_GPU_TARGET:-cuda}
if [ -z "${OUT:-}" ]; then
  OUT=$(mktemp -d /tmp/hetc-gpu-out.XXXXXX)
fi
mkdir -p "$OUT"
export OUT
HETC_GPU_WORK=$(mktemp -d /tmp/hetc-gpu-work.XXXXXX)
export HETC_GPU_WORK
# The tests' HETC_BINARY_DIR: .gpu's bin and lib through links (the programs
# find their plugins from their real path), in a scratch folder, so the
# packages test_e2e_samples writes there (and leaves when killed) stay out
# of .gpu.
export HETC_GPU_BINARY_DIR=$HETC_GPU_WORK/tree
mkdir -p "$HETC_GPU_BINARY_DIR"
ln -s "$HETC_GPU_PACK/bin" "$HETC_GPU_PACK/lib" "$HETC_GPU_BINARY_DIR/"

all_stages=(plugins conformance ops bench cudnn join e2e)
declare -A default_limit=([plugins]=20 [conformance]=130 [ops]=75 [bench]=70 [cudnn]=60 [join]=10 [e2e]=120)
declare -A needs_gpu=([plugins]=1 [conformance]=1 [ops]=1 [bench]=1 [cudnn]=1 [join]=1 [e2e]=1)

# ---- the stages (each runs in its own bash under `timeout`) ---------------

# Line-buffered stdout, so that a stage killed at its limit still shows
# where it was (stdio buffers a pipe's output in blocks).
linebuf() {
  if command -v stdbuf > /dev/null 2>&1; then stdbuf -oL -eL "$@"; else "$@"; fi
}

stage_plugins() {
  local listing
  listing=$("$HETC_GPU_PACK/bin/hetc" plugins 2>&1)
  local rc=$?
  printf '%s\n' "$listing"
  [ "$rc" -eq 0 ] || { echo "hetc plugins exited with $rc"; return 1; }
  # The target's block: state ready, and (for cuda) at least one GPU device.
  printf '%s\n' "$listing" | awk -v target="$HETC_GPU_TARGET" '
    /^\// { block = ""; state = ""; name = ""; gpu = 0 }
    /^  state: / { state = $2 }
    /^  target: / { name = $2 }
    /^  device [0-9]+: .*\(gpu\)/ { gpu = 1 }
    name == target && state == "ready" && (gpu || target != "cuda") { ok = 1 }
    END { exit ok ? 0 : 1 }' && { echo "target '$HETC_GPU_TARGET' is ready"; return 0; }
  echo "target '$HETC_GPU_TARGET' is not ready with a GPU device here (see its state and reason above)"
  return 1
}

stage_conformance() {
  HETC_CONFORMANCE_TARGET=$HETC_GPU_TARGET HETC_CONFORMANCE_WORKLOADS=${HETC_GPU_CONFORMANCE_WORKLOADS:-30} \
    HETC_SOURCE_DIR=$HETC_GPU_ROOT HETC_BINARY_DIR=$HETC_GPU_BINARY_DIR linebuf "$HETC_GPU_PACK/bin/test_template_conformance"
}

stage_ops() {
  HETC_KERNELS_TARGET=$HETC_GPU_TARGET HETC_KERNELS_ROUNDS=${HETC_GPU_OPS_ROUNDS:-30} \
    HETC_SOURCE_DIR=$HETC_GPU_ROOT HETC_BINARY_DIR=$HETC_GPU_BINARY_DIR linebuf "$HETC_GPU_PACK/bin/test_cpu_kernels"
}

stage_e2e() {
  HETC_E2E_TARGET=$HETC_GPU_TARGET HETC_E2E_QUICK=${HETC_GPU_E2E_QUICK:-0} \
    HETC_SOURCE_DIR=$HETC_GPU_ROOT HETC_BINARY_DIR=$HETC_GPU_BINARY_DIR linebuf "$HETC_GPU_PACK/bin/test_e2e_samples"
}

stage_bench() {
  # oneDNN's CPU column says nothing about a GPU target: --no-onednn. The
  # %peak columns use the GPU descriptor's peak (the header says which).
  # shellcheck disable=SC2086
  linebuf "$HETC_GPU_PACK/bin/bench_conv_vs_onednn" --target "$HETC_GPU_TARGET" \
    --model "$HETC_GPU_BENCH_MODEL" --repeat "${HETC_GPU_BENCH_REPEAT:-25}" --no-onednn \
    ${HETC_GPU_BENCH_ARGS:-} 2>&1 | tee "$OUT/bench_cuda.txt"
  return "${PIPESTATUS[0]}"
}

stage_cudnn() {
  # hetc's own task list names and orders the rows, so they join with the
  # bench table by task number.
  "$HETC_GPU_PACK/bin/hetc" tasks "$HETC_GPU_BENCH_MODEL" > "$HETC_GPU_WORK/tasks.txt" ||
    { echo "hetc tasks failed"; return 1; }
  local device=cuda
  [ "$HETC_GPU_TARGET" = cuda ] || device=${HETC_GPU_CUDNN_DEVICE:-cuda}
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 python3 "$HETC_GPU_ROOT/tests/bench/cuda/cudnn_layers.py" \
    --model "$HETC_GPU_BENCH_MODEL" --hetc-tasks "$HETC_GPU_WORK/tasks.txt" --device "$device" \
    --csv "$OUT/cudnn_layers.csv" ${HETC_GPU_CUDNN_ARGS:-} 2>&1 | tee "$OUT/cudnn_layers.txt"
  return "${PIPESTATUS[0]}"
}

stage_join() {
  [ -s "$OUT/bench_cuda.txt" ] || { echo "no bench table ($OUT/bench_cuda.txt): run the bench stage"; return 1; }
  [ -s "$OUT/cudnn_layers.csv" ] || { echo "no cuDNN table ($OUT/cudnn_layers.csv): run the cudnn stage"; return 1; }
  python3 "$HETC_GPU_ROOT/tests/bench/cuda/join_cudnn.py" --bench "$OUT/bench_cuda.txt" --cudnn "$OUT/cudnn_layers.csv" \
    --csv "$OUT/hetc_vs_cudnn.csv" 2>&1 | tee "$OUT/hetc_vs_cudnn.txt"
  return "${PIPESTATUS[0]}"
}

export -f linebuf stage_plugins stage_conformance stage_ops stage_e2e stage_bench stage_cudnn stage_join

# ---- env: the loader path, the GPU -------------------------------------------

# Is SONAME in the loader cache (x86-64)?
system_has() {
  command -v ldconfig > /dev/null 2>&1 || return 1
  ldconfig -p 2> /dev/null | grep -qE "^[[:space:]]+$(sed 's/[.+]/\\&/g' <<< "$1") \(.*x86-64"
}

setup_env() {
  local ok=0
  echo "host: $(uname -srm); $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME"); $(nproc) cores"
  echo "repository: $root; output: $OUT"
  if [ ! -e "$HETC_GPU_PACK/bin/hetc" ]; then
    echo "no $HETC_GPU_PACK/bin/hetc: run tests/bench/cuda/pack_for_gpu.sh on the build machine and carry .gpu"
    return 2
  fi
  # In case the copy lost the modes.
  chmod u+x "$HETC_GPU_PACK"/bin/* "$HETC_GPU_PACK/lib/hetc/hetc-measure-worker" 2> /dev/null
  sed -n '1,6p' "$HETC_GPU_PACK/MANIFEST.txt" 2> /dev/null
  # Carried libraries, only where the system has no copy (a newer system
  # libgomp or libsqlite3 serves as well, and the compilers there match it).
  local libdir=$HETC_GPU_WORK/lib used=() system=()
  mkdir -p "$libdir"
  for f in "$HETC_GPU_PACK"/deps/*; do
    [ -e "$f" ] || continue
    local name
    name=$(basename "${f%.gz}")
    if [ "${HETC_GPU_FORCE_DEPS:-0}" != 1 ] && system_has "$name"; then
      system+=("$name")
      continue
    fi
    case "$f" in
      *.gz) gzip -dc "$f" > "$libdir/$name" || { echo "cannot unpack $f"; return 2; } ;;
      *) ln -sf "$f" "$libdir/$name" ;;
    esac
    used+=("$name")
  done
  echo "carried libraries used: ${used[*]:-none}; the system's: ${system[*]:-none}"
  local path=$HETC_GPU_PACK/lib:$libdir
  # NVRTC and libcuda: the plugin tries the loader's search, then
  # $CUDA_HOME/lib64 and /usr/local/cuda/lib64; a toolkit elsewhere (a
  # versioned folder, PyTorch's wheels) is put on the loader path.
  if ! system_has libnvrtc.so.13 && ! system_has libnvrtc.so.12 && [ -z "${HETC_NVRTC_LIBRARY:-}" ] &&
     ! ls "${CUDA_HOME:-/usr/local/cuda}"/lib64/libnvrtc.so* > /dev/null 2>&1; then
    local found
    found=$( { ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib 2> /dev/null
               python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib")) for p in nvidia.__path__ for d in os.listdir(p)]' 2> /dev/null
             } | while read -r d; do ls "$d"/libnvrtc.so.* > /dev/null 2>&1 && { echo "$d"; break; }; done)
    if [ -n "$found" ]; then path=$path:$found; echo "NVRTC from $found"; else echo "NVRTC: not found on this machine"; fi
  fi
  if ! system_has libcuda.so.1; then
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
      if [ -e "$d/libcuda.so.1" ]; then path=$path:$d; echo "libcuda.so.1 from $d"; break; fi
    done
  fi
  export LD_LIBRARY_PATH=$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  # The vec plugin builds its kernels with the host C compiler.
  if ! command -v "${HETC_VEC_CC:-cc}" > /dev/null 2>&1 && command -v gcc > /dev/null 2>&1; then
    export HETC_VEC_CC=gcc
  fi
  echo "C compiler for vec: $(command -v "${HETC_VEC_CC:-cc}" || echo 'none (the vec plugin cannot build kernels)')"
  # Every packed program must load.
  local missing
  missing=$(for f in "$HETC_GPU_PACK"/bin/* "$HETC_GPU_PACK"/lib/hetc/plugins/*.so; do
              ldd "$f" 2> /dev/null | grep 'not found' | sed "s|^|$(basename "$f"): |"
            done)
  if [ -n "$missing" ]; then
    echo "libraries not found:"
    echo "$missing"
    return 2
  fi
  command -v nvcc > /dev/null 2>&1 && echo "nvcc: $(nvcc --version | tail -1)"
  if ! command -v nvidia-smi > /dev/null 2>&1; then
    echo "no GPU: nvidia-smi is not installed on this machine"
    ok=1
  elif ! timeout 30 nvidia-smi -L; then
    echo "no GPU: nvidia-smi -L failed"
    ok=1
  else
    timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  fi
  return $ok
}

# ---- the run ---------------------------------------------------------------

main() {
  local stages=() s
  if [ $# -eq 0 ]; then
    stages=("${all_stages[@]}")
  else
    for s in "$@"; do
      [ "$s" = env ] && continue
      [ -n "${default_limit[$s]:-}" ] || { echo "unknown stage '$s' (stages: env ${all_stages[*]})"; return 2; }
      stages+=("$s")
    done
  fi
  local budget=${HETC_GPU_BUDGET_S:-530} start=$SECONDS
  declare -A result=() took=()
  local order=(env "${stages[@]}")

  echo "==== env ===="
  local t0=$SECONDS gpu=1
  setup_env
  case $? in
    0) result[env]=PASS ;;
    1) result[env]="FAIL (no GPU)"; gpu=0 ;;
    *) result[env]="FAIL (setup)"; gpu=-1 ;;
  esac
  took[env]=$((SECONDS - t0))

  local i
  for ((i = 0; i < ${#stages[@]}; ++i)); do
    s=${stages[i]}
    echo
    if [ $gpu -lt 0 ]; then
      result[$s]="SKIP (setup failed)"; took[$s]=0
      echo "==== $s: skipped (setup failed) ===="; continue
    fi
    if [ $gpu -eq 0 ] && [ "${needs_gpu[$s]}" = 1 ] && [ "${HETC_GPU_FORCE:-0}" != 1 ]; then
      result[$s]="SKIP (no GPU)"; took[$s]=0
      echo "==== $s: skipped (no GPU; HETC_GPU_FORCE=1 runs it anyway) ===="; continue
    fi
    # This stage's limit: what is left once the later stages' defaults are
    # set aside (its own default plus what earlier stages left unused), but
    # at least its own default while the budget lasts (a short budget
    # squeezes the later stages, not this one); 5 s each for a kill's grace.
    local later=0 j var
    for ((j = i + 1; j < ${#stages[@]}; ++j)); do
      var=HETC_GPU_LIMIT_${stages[j]^^}
      later=$((later + ${!var:-${default_limit[${stages[j]}]}} + 5))
    done
    var=HETC_GPU_LIMIT_${s^^}
    local own=${!var:-${default_limit[$s]}}
    local left=$((budget - (SECONDS - start) - 5))
    local limit=$((left - later))
    [ $limit -lt "$own" ] && limit=$own
    [ $limit -gt $left ] && limit=$left
    if [ $limit -lt 5 ]; then
      result[$s]="SKIP (no time left)"; took[$s]=0
      echo "==== $s: skipped (no time left in the ${budget} s budget) ===="; continue
    fi
    echo "==== $s (limit ${limit} s) ===="
    t0=$SECONDS
    timeout -k 5 "$limit" bash -c "stage_$s"
    local rc=$?
    took[$s]=$((SECONDS - t0))
    case $rc in
      0) result[$s]=PASS ;;
      124 | 137) result[$s]="TIMEOUT (${limit} s)" ;;
      *) result[$s]="FAIL (exit $rc)" ;;
    esac
    echo "---- $s: ${result[$s]} in ${took[$s]} s"
  done

  local failed=0
  for s in "${order[@]}"; do
    [ "${result[$s]}" = PASS ] || failed=1
  done
  {
    echo
    echo "==== summary: target '$HETC_GPU_TARGET', $((SECONDS - start)) s of the ${budget} s budget ===="
    for s in "${order[@]}"; do
      printf '  %-12s %-24s %5s s\n' "$s" "${result[$s]}" "${took[$s]}"
    done
    if [ $failed = 0 ]; then echo "ALL PASS"; else echo "SOME STAGES DID NOT PASS"; fi
    echo "logs and tables: $OUT"
  } | tee "$OUT/summary.txt"
  ls -la "$OUT" | sed 1d
  return $failed
}

main "$@" 2>&1 | tee "$OUT/gpu_run.log"
status=${PIPESTATUS[0]}
rm -rf "$HETC_GPU_WORK"
exit "$status"
