# Sourced by the tests that tamper with packages (test_verify_runs_nothing.sh,
# test_signed_packages.sh), after `cd` into their work directory $work.

failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS "LINE" COMMAND...: the command exits with STATUS and its
# stdout or stderr holds LINE as a whole line ("hetc: " and all).
expect() {
  local want=$1 line=$2
  shift 2
  "$@" > out.txt 2> err.txt
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$* exited $got, expected $want; stderr: $(cat err.txt)"
  elif [ -n "$line" ] && ! grep -qxF -- "$line" out.txt err.txt; then
    fail "$* did not say \"$line\"; stdout: $(cat out.txt); stderr: $(cat err.txt)"
  else
    echo "ok: $* -> $got: $(head -1 err.txt)"
  fi
}

# evil.so: a shared object whose ELF constructor leaves $work/marker when
# it is loaded, before any of its functions is called.
make_evil_so() {
  cat > evil.c << END_OF_C
#include <stdio.h>
__attribute__((constructor)) static void leave_marker(void) {
  FILE *f = fopen("$work/marker", "w");
  if (f) fclose(f);
}
END_OF_C
  cc -shared -fPIC -o evil.so evil.c || fail "cannot build evil.so"
}

# replace PACKAGE FILE SOURCE: puts SOURCE in the package as FILE and writes
# its size and FNV-1a checksum into the manifest, as a tamperer would.
replace() {
  cp "$3" "$1/$2"
  python3 - "$1" "$2" << 'END_OF_PYTHON'
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
END_OF_PYTHON
}

# Ends the test: exit 1 when any case failed.
finish() {
  if [ "$failures" != 0 ]; then
    echo "$failures failure(s)"
    exit 1
  fi
  echo "all cases passed"
}
