#!/usr/bin/env bash
# The cpu target's vector ISA (HETC_CPU_ISA, plugins/llvm_cpu/isa.c): an
# unknown value is refused (exit 2); AVX2 kernels hold no AVX-512
# instruction; AVX-512 kernels use zmm registers; the ISA is in the device
# fingerprint; an AVX-512 package is refused where the cpu target runs AVX2
# (exit 2, naming both, nothing run), and an AVX2 package runs on an AVX-512
# target with the same outputs. The AVX-512 half skips, saying so, on a
# machine without AVX-512.
#   test_cpu_isa.sh HETC SOURCE_DIR WORK_DIR
set -uo pipefail
hetc=$1
samples=$2/samples
work=$3/cpu-isa
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export HETC_RECORDS=$work/records.sqlite
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# expect STATUS "MESSAGE" COMMAND...: exit status and a line of stderr.
expect() {
  local want=$1 message=$2
  shift 2
  "$@" > out.txt 2> err.txt
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$* exited $got, expected $want; stderr: $(cat err.txt)"
  elif [ -n "$message" ] && ! grep -qF -- "$message" err.txt; then
    fail "$* did not say \"$message\"; stderr: $(cat err.txt)"
  else
    echo "ok: $* -> $got"
  fi
}
# zmm_count PACKAGE: zmm operands in its cpu kernels' code.
zmm_count() { for f in "$1"/kernels/*-cpu.o; do objdump -d "$f"; done | grep -c zmm; }
# evex_count PACKAGE: operands only EVEX can encode (zmm, x/ymm16-31, k masks).
evex_count() {
  for f in "$1"/kernels/*-cpu.o; do objdump -d "$f"; done |
    grep -cE '%zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|%k[0-7]\b'
}

model=$samples/resnet18.json
expect 2 "cpu: HETC_CPU_ISA is 'sse'; it takes avx2 or avx512" \
  env HETC_CPU_ISA=sse "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o bad.hetc
[ -e bad.hetc ] && fail "a refused compile left bad.hetc"

expect 0 "" env HETC_CPU_ISA=avx2 "$hetc" compile "$model" --targets cpu -o avx2.hetc --quiet
grep -qF -- ':avx2+fma"' avx2.hetc/manifest.json || fail "avx2.hetc's fingerprint does not name avx2+fma"
n=$(evex_count avx2.hetc)
[ "$n" = 0 ] && echo "ok: AVX2 kernels hold no EVEX operand" || fail "AVX2 kernels hold $n EVEX operands"
expect 0 "" env HETC_CPU_ISA=avx2 "$hetc" run avx2.hetc --output avx2.out --repeat 1

if ! env HETC_CPU_ISA=avx512 "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o probe.hetc --quiet \
    > /dev/null 2> probe.txt; then
  grep -qF "HETC_CPU_ISA=avx512, but" probe.txt || fail "HETC_CPU_ISA=avx512 failed otherwise: $(cat probe.txt)"
  echo "skipped: the AVX-512 half ($(grep -o 'but .*' probe.txt))"
else
  expect 0 "" env HETC_CPU_ISA=avx512 "$hetc" compile "$model" --targets cpu -o avx512.hetc --quiet
  grep -qF -- ':avx512"' avx512.hetc/manifest.json || fail "avx512.hetc's fingerprint does not name avx512"
  n=$(zmm_count avx512.hetc)
  [ "$n" -gt 1000 ] && echo "ok: AVX-512 kernels use zmm ($n operands)" || fail "AVX-512 kernels use $n zmm operands"
  # Refused before any of its code is linked, naming both ISAs.
  expect 2 "holds AVX-512 (x86-64-v4) code, and this cpu target runs AVX2 + FMA (x86-64-v3) (HETC_CPU_ISA); recompile the package here" \
    env HETC_CPU_ISA=avx2 "$hetc" run avx512.hetc --output refused.out
  [ -e refused.out ] && fail "a refused run wrote refused.out"
  expect 2 "holds AVX-512 (x86-64-v4) code" env HETC_CPU_ISA=avx2 "$hetc" bench avx512.hetc --runs 1
  # An AVX2 package runs as it is on an AVX-512 target: the same code, the
  # same outputs, bit for bit.
  expect 0 "" env HETC_CPU_ISA=avx512 "$hetc" run avx2.hetc --output avx2-on-avx512.out --repeat 1
  cmp -s avx2.out avx2-on-avx512.out && echo "ok: the AVX2 package's outputs are identical on AVX-512" ||
    fail "the AVX2 package's outputs differ on the AVX-512 target"
fi
[ "$failures" = 0 ] && echo "all cpu ISA checks passed" || echo "$failures failure(s)"
[ "$failures" = 0 ]
