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
. "$source_dir/tests/e2e/tamper_helpers.sh"

expect 0 "" "$hetc" compile "$source_dir/samples/tiny_conv.json" --targets vec -o v.hetc --quiet
[ -f v.hetc/kernels/s0000-vec.so ] || fail "no s0000-vec.so in the package: $(ls v.hetc/kernels)"

# The attack: a constructor that leaves a marker when the object is loaded.
make_evil_so
cp -r v.hetc evil.hetc
replace evil.hetc kernels/s0000-vec.so evil.so
expect 0 "evil.hetc: ok: 8 steps, 9 values, 17 files (0.1 MB) matching their checksums and formats, finite parameters" \
  "$hetc" verify evil.hetc
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
grep -qxF "  wrong.hetc/kernels/s0001-vec.so: an ELF file but not a shared object (type 1)" err.txt ||
  fail "verify took an object file for a shared object: $(cat err.txt)"
grep -qxF "  wrong.hetc/kernels/s0002-vec.so: not an ELF file (14 bytes)" err.txt ||
  fail "verify took text for a shared object: $(cat err.txt)"
grep -qxF "  wrong.hetc/kernels/s0003-vec.c: a .c file that is not text (a NUL byte at offset 6)" err.txt ||
  fail "verify took a binary file for C source: $(cat err.txt)"
[ -e marker ] && fail "hetc verify ran the package's code"

finish
