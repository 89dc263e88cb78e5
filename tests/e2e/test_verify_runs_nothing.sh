#!/usr/bin/env bash
# `hetc verify` judges a package from its files and runs none of its code:
# a vec kernel replaced by a shared object with an ELF constructor, and
# re-hashed into the manifest as a tamperer would, must not run during
# verify. It passes verify (checksums catch damage, not tampering) and runs
# under `hetc run`: that is the trust model README.md states. Artifacts
# that are not what their names say are refused by verify.
#   test_verify_runs_nothing.sh HETC SOURCE_DIR WORK_DIR
set -uo pipefail
hetc=$1
source_dir=$2
work=$3/verify-runs-nothing
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export HETC_RECORDS=$work/default.sqlite
export XDG_CACHE_HOME=$work/cache
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS "MESSAGE" COMMAND...: the command exits with STATUS and its
# stdout or stderr contains MESSAGE.
expect() {
  local want=$1 message=$2
  shift 2
  "$@" > out.txt 2> err.txt
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$* exited $got, expected $want; stderr: $(cat err.txt)"
  elif [ -n "$message" ] && ! grep -qF -- "$message" out.txt err.txt; then
    fail "$* did not say \"$message\"; stdout: $(cat out.txt); stderr: $(cat err.txt)"
  else
    echo "ok: $* -> $got: $(head -1 err.txt)"
  fi
}

# replace PACKAGE FILE SOURCE: puts SOURCE in the package as FILE and writes
# its size and FNV-1a checksum into the manifest, as a tamperer would.
replace() {
  cp "$3" "$1/$2"
  python3 - "$1" "$2" << 'EOF'
import json, sys
package, name = sys.argv[1], sys.argv[2]
data = open(package + '/' + name, 'rb').read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
path = package + '/manifest.json'
manifest = json.load(open(path))
entry = [f for f in manifest['files'] if f['path'] == name][0]
entry['bytes'], entry['fnv1a64'] = len(data), '%016x' % h
json.dump(manifest, open(path, 'w'))
EOF
}

expect 0 "" "$hetc" compile "$source_dir/samples/tiny_conv.json" --targets vec -o v.hetc --quiet
[ -f v.hetc/kernels/s0000-vec.so ] || fail "no s0000-vec.so in the package: $(ls v.hetc/kernels)"

# The attack: a constructor that leaves a marker when the object is loaded.
cat > evil.c << EOF
#include <stdio.h>
__attribute__((constructor)) static void leave_marker(void) {
  FILE *f = fopen("$work/marker", "w");
  if (f) fclose(f);
}
EOF
cc -shared -fPIC -o evil.so evil.c || fail "cannot build evil.so"
cp -r v.hetc evil.hetc
replace evil.hetc kernels/s0000-vec.so evil.so
expect 0 "evil.hetc: ok: 8 steps, 9 values, 17 files" "$hetc" verify evil.hetc
[ -e marker ] && fail "hetc verify ran the package's code: the constructor left its marker"
# A package is a program: running it runs the constructor, checksums or not.
expect 0 "" "$hetc" run evil.hetc
[ -e marker ] || fail "hetc run did not load the replaced kernel (no marker); the attack was not reproduced"
rm -f marker

# Artifacts that are not what their names say, checked from their bytes.
cc -c -fPIC -o evil.o evil.c || fail "cannot build evil.o"
printf 'int x;\0' > nul.c
echo "not an object" > text.so
cp -r v.hetc wrong.hetc
replace wrong.hetc kernels/s0001-vec.so evil.o
replace wrong.hetc kernels/s0002-vec.so text.so
replace wrong.hetc kernels/s0003-vec.c nul.c
expect 2 "hetc: wrong.hetc: 3 problems (listed above)" "$hetc" verify wrong.hetc
grep -qF "wrong.hetc/kernels/s0001-vec.so: an ELF file but not a shared object (type 1)" err.txt ||
  fail "verify took an object file for a shared object: $(cat err.txt)"
grep -qF "wrong.hetc/kernels/s0002-vec.so: not an ELF file (14 bytes)" err.txt ||
  fail "verify took text for a shared object: $(cat err.txt)"
grep -qF "wrong.hetc/kernels/s0003-vec.c: a .c file that is not text (a NUL byte at offset 6)" err.txt ||
  fail "verify took a binary file for C source: $(cat err.txt)"
[ -e marker ] && fail "hetc verify ran the package's code"

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all cases passed"
