#!/usr/bin/env bash
# Installs what building and testing hetc needs on Debian 12, skipping the
# apt round trip when everything is already there. Run as root (or with
# sudo available).
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3
  python3-numpy       # the peers benchmark (tests/bench/peers) and its smoke run
  libcjson-dev        # model and manifest JSON
  libsodium-dev       # signed packages (ed25519 signatures, BLAKE2b digests)
  libcmocka-dev       # unit tests
  libsqlite3-dev      # the tuning records store
  sqlite3             # its command line: the tests and benchmarks read stores with it
  libpq-dev           # the tuning queue on PostgreSQL (libpq)
  postgresql          # a PostgreSQL server for the queue and server-store tests (initdb, pg_ctl, psql)
  libdnnl-dev         # oneDNN: the reference's cross-check and the benchmarks' yardstick
  ocl-icd-opencl-dev  # oneDNN's CMake package asks for OpenCL
  clang libclang-rt-14-dev  # libFuzzer for the fuzz targets
  llvm-15-dev         # the cpu backend's JIT (LLVM 15: the one PoCL links)
  pocl-opencl-icd     # OpenCL on the CPU (tests load it beside the cpu backend)
  libxgboost-dev      # the tuner's cost model (XGBoost's C API)
  libprotobuf-c-dev protobuf-c-compiler  # ONNX import: C generated from onnx.proto
  libonnx-dev         # onnx.proto itself (ONNX 1.12)
  chromium            # renders `hetc compare`'s HTML report in its smoke test (skipped without it)
)

# The cuda plugin needs the CUDA toolkit's headers, NVRTC and ptxas (not a
# GPU). This machine kind ships the toolkit in /usr/local/cuda; Debian's
# nvidia-cuda-toolkit lives in non-free, which is not enabled by default,
# so it is not installed from here.
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda_home/include/nvrtc.h" ]; then
  echo "install-deps: no CUDA toolkit in $cuda_home (set CUDA_HOME): the cuda plugin and its tests will be left out"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
