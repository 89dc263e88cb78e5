#!/usr/bin/env bash
# Builds what the GPU run needs on THIS machine (Debian 12, x86-64) and packs
# it into .gpu/ at the repository root, for tests/bench/cuda/run_on_gpu.sh
# on a GPU machine whose image has none of hetc's Debian libraries.
#
#   tests/bench/cuda/pack_for_gpu.sh [BUILD_DIR]      (default: build-gpu)
#
# Environment: HETC_GPU_JOBS (parallel build jobs, default nproc),
# HETC_GPU_MAX_MIB (size .gpu/ may reach before the script fails, default 56),
# HETC_GPU_PACK (the folder to pack into, default .gpu at the repository
# root), HETC_GPU_AS_CONFIGURED=1 (build BUILD_DIR as it is configured
# rather than configure it Release: the test suite's smoke run packs from
# its own tree this way).
#
# Then, with the device tool (one call; see tests/bench/cuda/README.md):
#   command: bash tests/bench/cuda/run_on_gpu.sh
#   carry:   [".gpu"]
#
# .gpu/ mirrors a build tree, so the programs find their plugins in
# <exe>/../lib/hetc/plugins and the tests take HETC_BINARY_DIR=.gpu:
#   bin/        hetc and the test and bench programs (stripped)
#   lib/        libhetc.so.0; lib/hetc/plugins/ (vec, cuda) and
#               lib/hetc/hetc-measure-worker
#   deps/       every other shared library they link that a stock CUDA image
#               lacks (cJSON, SQLite, XGBoost, dmlc, cmocka, oneDNN, the
#               OpenCL ICD loader, libgomp); run_on_gpu.sh puts on the loader
#               path only those the machine has no copy of. Files over 4 MiB
#               are gzipped (name.gz) and unpacked by run_on_gpu.sh.
#   MANIFEST.txt  commit, build, files, sizes, what each program links
# Not carried: libc, libm, libpthread, libdl, librt, ld-linux (glibc: Debian 12
# has 2.36, Ubuntu 24.04 2.39, so binaries built here run there), and
# libstdc++ / libgcc_s (every CUDA image has them: nvcc's host compiler and
# PyTorch need them). Plugins that need LLVM or an OpenCL driver (cpu,
# opencl) are left out: the GPU image has neither LLVM 15 nor PoCL.
set -euo pipefail

# The repository this script is in, wherever it is run from (a build tree
# outside the source tree is not in it).
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
build=${1:-build-gpu}
jobs=${HETC_GPU_JOBS:-$(nproc)}
max_mib=${HETC_GPU_MAX_MIB:-56}
pack=${HETC_GPU_PACK:-.gpu}

say() { printf 'pack_for_gpu: %s\n' "$*"; }
die() { printf 'pack_for_gpu: error: %s\n' "$*" >&2; exit 1; }

for tool in cmake strip ldd gzip objdump sha256sum; do
  command -v "$tool" > /dev/null || die "'$tool' is not installed"
done

# .gpu/ is carried to the device machine explicitly; git must not see it.
if [ "$pack" = .gpu ]; then
  exclude=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$exclude")"
  if ! grep -qxF '/.gpu/' "$exclude" 2> /dev/null; then
    echo '/.gpu/' >> "$exclude"
    say "added /.gpu/ to $exclude"
  fi
fi

# ---- configure and build -------------------------------------------------
build_type=Release
if [ "${HETC_GPU_AS_CONFIGURED:-0}" = 1 ]; then
  [ -f "$build/CMakeCache.txt" ] || die "$build is not a configured build tree (HETC_GPU_AS_CONFIGURED=1)"
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
  say "building $build as it is configured (${build_type:-no build type})"
else
  say "configuring $build (Release, HETC_BUILD_BENCH=ON)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHETC_BUILD_TESTS=ON -DHETC_BUILD_BENCH=ON \
    > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; die "cmake configure failed (log above)"; }
  rm -f "$build.configure.log"
fi

targets=(hetc_cli hetc test_template_conformance test_e2e_samples test_cpu_kernels bench_conv_vs_onednn
         hetc_plugin_vec hetc_measure_worker)
target_list=$(cmake --build "$build" --target help 2> /dev/null || true)
have_target() { grep -qE "(^|[ .:])$1([ :]|$)" <<< "$target_list"; }
have_cuda=0
if have_target hetc_plugin_cuda; then
  have_cuda=1
  targets+=(hetc_plugin_cuda)
else
  say "no hetc_plugin_cuda target in this tree (plugins/cuda not wired in yet): packing without it"
fi
for t in "${targets[@]}"; do
  have_target "$t" || die "target $t is not defined in $build (test_cpu_kernels needs LLVM 15 found, bench_conv_vs_onednn oneDNN)"
done
say "building ${targets[*]} with -j$jobs"
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# ---- assemble .gpu/ --------------------------------------------------------
rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib/hetc/plugins" "$pack/deps"

copy_stripped() { # SRC DEST
  cp -L "$1" "$2"
  chmod u+w "$2"
  strip --strip-unneeded "$2"
}

programs=(hetc test_template_conformance test_e2e_samples test_cpu_kernels bench_conv_vs_onednn)
for p in "${programs[@]}"; do
  [ -x "$build/bin/$p" ] || die "$build/bin/$p was not built"
  copy_stripped "$build/bin/$p" "$pack/bin/$p"
done
copy_stripped "$build/lib/libhetc.so.0" "$pack/lib/libhetc.so.0"
ln -s libhetc.so.0 "$pack/lib/libhetc.so"
copy_stripped "$build/lib/hetc/hetc-measure-worker" "$pack/lib/hetc/hetc-measure-worker"
plugins=(vec)
[ "$have_cuda" = 1 ] && plugins+=(cuda)
for name in "${plugins[@]}"; do
  so="$build/lib/hetc/plugins/libhetc_plugin_$name.so"
  [ -f "$so" ] || die "$so was not built"
  # A plugin that links LLVM or an OpenCL loader cannot load there.
  if ldd "$so" | grep -qE 'libLLVM|libOpenCL|libpocl'; then
    die "$so links LLVM/OpenCL, which the GPU image lacks: $(ldd "$so" | grep -E 'libLLVM|libOpenCL|libpocl' | tr -s ' \t' ' ')"
  fi
  copy_stripped "$so" "$pack/lib/hetc/plugins/libhetc_plugin_$name.so"
done

# Every library the packed ELF files link, by soname, minus the base system
# and libhetc itself (ldd lists the whole closure).
base_system='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libhetc\.so\.0)$'
declare -A dep_path=()
elves=("$pack"/bin/* "$pack"/lib/libhetc.so.0 "$pack"/lib/hetc/hetc-measure-worker "$pack"/lib/hetc/plugins/*.so)
for f in "${elves[@]}"; do
  out=$(LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$f") || die "ldd $f failed"
  if grep -q 'not found' <<< "$out"; then die "$f: $(grep 'not found' <<< "$out" | tr -s ' \t' ' ')"; fi
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ "$soname" =~ $base_system ]] && continue
    dep_path[$soname]=$path
  done <<< "$out"
done
for soname in $(printf '%s\n' "${!dep_path[@]}" | sort); do
  copy_stripped "${dep_path[$soname]}" "$pack/deps/$soname"
done

# Big files travel gzipped (gzip is on every image; libdnnl is ~40 MB raw).
for f in "$pack"/deps/* "$pack"/bin/*; do
  if [ "$(stat -c %s "$f")" -gt $((4 * 1024 * 1024)) ]; then
    gzip -9 -n "$f"
  fi
done

# ---- manifest and size -----------------------------------------------------
# The newest glibc and libstdc++ symbol versions anything packed needs.
versions=$(for f in "${elves[@]}" "$pack"/deps/*; do
             case "$f" in *.gz) gzip -dc "$f" > "$pack/.probe" && f="$pack/.probe" ;; esac
             objdump -T "$f" 2> /dev/null | grep -oE '(GLIBC|GLIBCXX)_[0-9.]+' || true
           done)
rm -f "$pack/.probe"
glibc_max=$(grep '^GLIBC_' <<< "$versions" | sort -t_ -k2 -V | tail -1)
glibcxx_max=$(grep '^GLIBCXX_' <<< "$versions" | sort -t_ -k2 -V | tail -1)
{
  echo "hetc GPU pack, made by tests/bench/cuda/pack_for_gpu.sh"
  echo "commit:   $(git rev-parse HEAD)$(git diff --quiet HEAD -- 2> /dev/null || echo ' (with uncommitted changes)')"
  echo "made:     $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)"
  echo "build:    $build (${build_type:-no build type})"
  echo "plugins:  ${plugins[*]}$([ "$have_cuda" = 1 ] || echo '  (NO cuda plugin: the tree had no hetc_plugin_cuda target)')"
  echo "glibc:    needs up to $glibc_max; libstdc++ up to ${glibcxx_max:-none} (GCC 14's, Ubuntu 24.04's, has GLIBCXX_3.4.33)"
  echo
  echo "files (bytes, sha256):"
  (cd "$pack" && find . -type f ! -name MANIFEST.txt | sort | while read -r f; do
     printf '  %-45s %10s  %s\n' "${f#./}" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)"
   done)
  echo
  echo "carried libraries (soname <- where it came from):"
  for soname in $(printf '%s\n' "${!dep_path[@]}" | sort); do
    printf '  %-24s <- %s\n' "$soname" "$(readlink -f "${dep_path[$soname]}")"
  done
  echo
  echo "what each program links (beyond the base system):"
  for f in "${elves[@]}"; do
    printf '  %-45s %s\n' "${f#"$pack"/}" \
      "$(objdump -p "$f" | awk '/NEEDED/ {print $2}' | grep -vE "$base_system" | tr '\n' ' ')"
  done
} > "$pack/MANIFEST.txt"

bytes=$(du -sb "$pack" | cut -f1)
tree_bytes=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2> /dev/null |
             awk '{s += $1} END {print s + 0}')
say "packed $pack/: $((bytes / 1024 / 1024)) MiB ($bytes bytes); the working tree that travels with it: $(((bytes + tree_bytes) / 1024 / 1024)) MiB of the device tool's 64 MiB"
say "plugins: ${plugins[*]}; carried libraries: $(printf '%s\n' "${!dep_path[@]}" | sort | tr '\n' ' ')"
[ "$have_cuda" = 1 ] || say "WARNING: no cuda plugin in the pack; run_on_gpu.sh will fail its 'plugins' stage"
if [ "$bytes" -gt $((max_mib * 1024 * 1024)) ]; then
  die "$pack/ is over $max_mib MiB"
fi
if [ "$pack" = .gpu ]; then
  say "next: the device tool's run with command 'bash tests/bench/cuda/run_on_gpu.sh' and carry [\".gpu\"]"
fi
