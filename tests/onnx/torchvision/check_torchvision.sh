#!/bin/sh
# Issue 33's torchvision survey, its check half: holds hetc to onnxruntime
# on the files make_torchvision.py wrote (NAME.onnx, NAME.input.bin,
# NAME.expected.bin in OUTDIR). No torch, no numpy: POSIX sh, the hetc
# given, and python3's standard library for the comparison.
#
#   check_torchvision.sh HETC OUTDIR [NAME...]
#
# For each model (every NAME.onnx in OUTDIR, or the NAMEs given):
#   hetc tasks NAME.onnx                             the import
#   hetc compile NAME.onnx --targets T -o PKG        the compile
#   hetc run PKG --input NAME.input.bin --output OUT --repeat 1
# and OUT against NAME.expected.bin: the largest absolute difference over
# the largest |expected|, which must be within 1e-4, or within twice torch's
# own error in the same measure where NAME.noise holds it (make_torchvision
# writes it) and that is larger: on deep random-weight networks torch and
# onnxruntime themselves differ by more than 1e-4, and no float32 order of
# summation can be held closer to one of them than the other is. One line
# per model (name, imports, compiles, that error, or hetc's message), then
# "N of M import, C compile on T, K match". A malformed NAME.noise is
# ignored (the tolerance stays 1e-4).
# The stated tolerance per op: a package that runs a conv as Winograd
# (cpu_conv2d_winograd) is held to twice that. Winograd F(4x4, 3x3) trades
# exactness for fewer multiplies: about 5 times direct convolution's fp32
# error per layer at 256 input channels (plugins/llvm_cpu/winograd.c), and
# on inception_v3 1.16e-4 from onnxruntime against 6.5e-5 with every conv
# direct. oneDNN and OpenVINO make the same trade where they pick it.
# T is HETC_CHECK_TARGET (default cpu; vec, opencl, or several: cpu,vec).
# Each hetc command is limited to HETC_CHECK_TIMEOUT seconds (default 1800);
# packages go to a temporary folder, each removed after its model. Exit
# status 0 when every model matches, 1 otherwise, 2 on bad usage.
set -u
if [ $# -lt 2 ]; then
  echo "usage: check_torchvision.sh HETC OUTDIR [NAME...]" >&2
  exit 2
fi
hetc=$1
dir=$2
shift 2
limit=${HETC_CHECK_TIMEOUT:-1800}
target=${HETC_CHECK_TARGET:-cpu}
tolerance=1e-4
if [ ! -x "$hetc" ] || [ ! -d "$dir" ]; then
  echo "check_torchvision: $hetc is not an executable or $dir not a folder" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  for f in "$dir"/*.onnx; do
    [ -e "$f" ] || { echo "check_torchvision: no .onnx file in $dir" >&2; exit 2; }
    name=$(basename "$f" .onnx)
    set -- "$@" "$name"
  done
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tv-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

# The first line hetc printed on stderr that is not a note or a warning
# (else the first line), without the "hetc: PATH: " prefix.
message() {
  { grep -v -e '^hetc: note: ' -e '^hetc: warning: ' -e '^[[:space:]]*$' "$1" || sed -n '/./p' "$1"; } |
    sed -n '1{s/^hetc: //;p;}' | sed -e "s|^$2: ||" -e "s|^compile: ||"
}

# max|got - expected| / max|expected| of two raw float32 files (python3's
# standard library only), then "match" or "DIFFERS" against the tolerance.
compare() {
  python3 - "$1" "$2" "$3" <<'EOF'
import array, math, sys
got, expected = array.array("f"), array.array("f")
for values, path in ((got, sys.argv[1]), (expected, sys.argv[2])):
    with open(path, "rb") as f:
        values.frombytes(f.read())
if sys.byteorder != "little":
    got.byteswap(); expected.byteswap()
if len(got) != len(expected):
    print(f"- DIFFERS: {len(got)} values, expected {len(expected)}")
    sys.exit(0)
scale = max((abs(v) for v in expected if math.isfinite(v)), default=0.0)
worst = max((abs(a - b) for a, b in zip(got, expected)), default=0.0) / (scale or 1.0)
nonfinite = sum(1 for v in got if not math.isfinite(v))
if nonfinite or not math.isfinite(worst):
    print(f"nan DIFFERS: {nonfinite} of {len(got)} values NaN or infinite")
else:
    print("%.2e %s" % (worst, "match" if worst <= float(sys.argv[3]) else "DIFFERS"))
EOF
}

total=0
imported=0
compiled=0
matched=0
printf '%-32s %-7s %-8s %-9s %-8s %s\n' model imports compiles error seconds "note / hetc's message"
for name in "$@"; do
  model="$dir/$name.onnx"
  total=$((total + 1))
  err="$work/stderr"
  if ! timeout "$limit" "$hetc" tasks "$model" >/dev/null 2>"$err"; then
    printf '%-32s %-7s %-8s %-9s %-8s %s\n' "$name" no - - - "$(message "$err" "$model")"
    continue
  fi
  imported=$((imported + 1))
  package="$work/$name.hetc"
  started=$(date +%s)
  if ! timeout "$limit" "$hetc" compile "$model" --targets "$target" -o "$package" >/dev/null 2>"$err"; then
    status=$?
    note=$(message "$err" "$model")
    [ "$status" -eq 124 ] && note="compile ran past ${limit} s"
    printf '%-32s %-7s %-8s %-9s %-8s %s\n' "$name" yes no - $(($(date +%s) - started)) "$note"
    rm -rf "$package"
    continue
  fi
  compiled=$((compiled + 1))
  seconds=$(($(date +%s) - started))
  out="$work/$name.out.bin"
  if ! timeout "$limit" "$hetc" run "$package" --input "$dir/$name.input.bin" --output "$out" --repeat 1 \
       >/dev/null 2>"$err"; then
    status=$?
    note="run: $(message "$err" "$package")"
    [ "$status" -eq 124 ] && note="run ran past ${limit} s"
    printf '%-32s %-7s %-8s %-9s %-8s %s\n' "$name" yes yes - "$seconds" "$note"
    rm -rf "$package" "$out"
    continue
  fi
  allowed=$tolerance
  if [ -r "$dir/$name.noise" ]; then
    allowed=$(python3 -c 'import sys
try: twice = 2 * float(open(sys.argv[2]).read())
except ValueError: twice = 0
print("%.2e" % twice if twice > float(sys.argv[1]) else sys.argv[1])' "$tolerance" "$dir/$name.noise")
  fi
  why=
  [ "$allowed" != "$tolerance" ] && why="twice torch's $(cat "$dir/$name.noise")"
  if grep -q '"template":"cpu_conv2d_winograd"' "$package/manifest.json"; then
    allowed=$(python3 -c 'import sys; print("%.2e" % (2 * float(sys.argv[1])))' "$allowed")
    why="${why:+$why, }doubled for Winograd convs"
  fi
  result=$(compare "$out" "$dir/$name.expected.bin" "$allowed")
  error=${result%% *}
  verdict=${result#* }
  [ "$verdict" = match ] && matched=$((matched + 1))
  [ -n "$why" ] && verdict="$verdict (within $allowed: $why)"
  printf '%-32s %-7s %-8s %-9s %-8s %s\n' "$name" yes yes "$error" "$seconds" "$verdict"
  rm -rf "$package" "$out"
done
echo "$imported of $total import, $compiled compile on $target, $matched match"
[ "$matched" -eq "$total" ]
