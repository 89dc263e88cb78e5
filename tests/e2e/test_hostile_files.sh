#!/usr/bin/env bash
# Files a user can hand hetc that are not what they seem: devices, FIFOs,
# symlinks and directories where a file is expected, damaged plugins in a
# plugin directory, and compiles stopped by a signal. Each case asserts the
# exit status, the message, and that nothing was replaced or left behind.
#   test_hostile_files.sh HETC SOURCE_DIR WORK_DIR VEC_PLUGIN_SO
set -uo pipefail
hetc=$1
source_dir=$2
work=$3/hostile-files
vec_plugin=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export HETC_RECORDS=$work/default.sqlite
export XDG_CACHE_HOME=$work/cache
samples=$source_dir/samples
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS "MESSAGE" COMMAND...: the command exits with STATUS within
# 30 s (a FIFO used to block forever) and its stderr contains MESSAGE.
expect() {
  local want=$1 message=$2
  shift 2
  timeout 30 "$@" > out.txt 2> err.txt
  local got=$?
  if [ "$got" != "$want" ]; then
    fail "$* exited $got, expected $want; stderr: $(cat err.txt)"
  elif [ -n "$message" ] && ! grep -qF -- "$message" err.txt; then
    fail "$* did not say \"$message\"; stderr: $(cat err.txt)"
  else
    echo "ok: $* -> $got: $(head -1 err.txt)"
  fi
}

# A store with records to export.
"$hetc" tune "$samples/tiny_conv.json" --targets cpu --trials 4 --tasks 1 --records store.sqlite > /dev/null 2>&1 ||
  fail "tune for the export store failed"

# 1. Export never replaces what is not a regular file hetc may replace.
if [ -c /dev/full ]; then
  expect 1 "hetc: /dev/full: write failed: No space left on device" "$hetc" records export /dev/full --records store.sqlite
  [ -c /dev/full ] || fail "/dev/full is no longer a character device"
fi
mkdir adir
expect 2 "hetc: adir: is a directory; not writing over it" "$hetc" records export adir --records store.sqlite
echo "old content" > real.jsonl
ln -s real.jsonl link.jsonl
expect 0 "" "$hetc" records export link.jsonl --records store.sqlite
[ -L link.jsonl ] || fail "the symlink was replaced"
grep -q '"config"' real.jsonl || fail "the symlink's target did not get the records"
ln -s nowhere/x.jsonl dangling.jsonl
expect 2 "hetc: dangling.jsonl: is a symbolic link to nothing; not writing over it" \
  "$hetc" records export dangling.jsonl --records store.sqlite
mkfifo pipe.jsonl
(cat pipe.jsonl > from_pipe.jsonl) &
reader=$!
expect 0 "" "$hetc" records export pipe.jsonl --records store.sqlite
wait $reader
[ -p pipe.jsonl ] || fail "the FIFO was replaced"
cmp -s from_pipe.jsonl real.jsonl || fail "the FIFO's reader did not get what the file got"
"$hetc" records export /dev/stdout --records store.sqlite > stdout.jsonl 2> /dev/null || fail "export to /dev/stdout"
grep -q '"config"' stdout.jsonl || fail "export to /dev/stdout wrote no records"
ls -- *.tmp-* > /dev/null 2>&1 && fail "a temporary file was left: $(ls -- *.tmp-*)"

# 9. A FIFO where a model, a weights file or an overrides file is read is
# refused at once.
mkfifo model.json
expect 2 "hetc: model.json: is a FIFO, not a regular file" "$hetc" tasks model.json
cp "$samples/tiny_weights.json" weights_model.json
sed -i 's/"tiny_weights.weights"/"fifo.weights"/' weights_model.json
mkfifo fifo.weights
grep -q fifo.weights weights_model.json || fail "weights_model.json does not name fifo.weights"
expect 2 "fifo.weights: is a FIFO, not a regular file" "$hetc" tasks weights_model.json

# Import reads a pipe as it comes (/dev/stdin, a FIFO), and a FIFO no
# process writes as empty, rather than waiting; a malformed file is refused
# before the store is opened, so no new store is left behind.
expect 0 "" "$hetc" records import pipe.jsonl --records new1.sqlite
grep -qF "imported 0 records from pipe.jsonl" out.txt || fail "import of an unwritten FIFO said: $(cat out.txt)"
"$hetc" records import /dev/stdin --records new1.sqlite < real.jsonl > out.txt 2>&1 || fail "import from /dev/stdin"
grep -qF "imported 4 records from /dev/stdin" out.txt || fail "import from /dev/stdin said: $(cat out.txt)"
echo '{"bad": 1}' > bad.jsonl
expect 2 "hetc: bad.jsonl:1: /: unknown key \"bad\"" "$hetc" records import bad.jsonl --records new2.sqlite
ls new2.sqlite > /dev/null 2>&1 && fail "a refused import left a store: $(ls new2.sqlite*)"
expect 2 "hetc: adir: is a directory, not a file of records" "$hetc" records import adir --records new2.sqlite

# 6. Damaged files in a plugin directory are refused; hetc goes on.
mkdir plugins
head -c 100000 "$vec_plugin" > plugins/libtruncated.so
# Cut inside the last program segment, with no section table to notice.
python3 - "$vec_plugin" plugins/libsegments.so <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
phoff, = struct.unpack_from('<Q', data, 0x20)
phnum, = struct.unpack_from('<H', data, 0x38)
end = max(struct.unpack_from('<Q', data, phoff + 56 * i + 8)[0] + struct.unpack_from('<Q', data, phoff + 56 * i + 32)[0]
          for i in range(phnum))
struct.pack_into('<H', data, 0x3c, 0)  # e_shnum = 0
open(sys.argv[2], 'wb').write(data[:end - 16])
EOF
mkfifo plugins/libfifo.so
echo "not a plugin" > plugins/libtext.so
export HETC_PLUGIN_PATH=$work/plugins
expect 0 "" "$hetc" plugins
grep -qF "plugins/libtruncated.so: truncated or damaged: its section table lies outside the file" out.txt ||
  fail "hetc plugins does not refuse libtruncated.so: $(grep -A2 libtruncated out.txt)"
grep -qF "plugins/libsegments.so: truncated: segment" out.txt ||
  fail "hetc plugins does not refuse libsegments.so: $(grep -A2 libsegments out.txt)"
grep -qF "plugins/libfifo.so: is a FIFO, not a shared object" out.txt || fail "hetc plugins does not refuse libfifo.so"
grep -qF "plugins/libtext.so: not an ELF file (13 bytes)" out.txt || fail "hetc plugins does not refuse libtext.so"
expect 0 "" "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o tiny.hetc --quiet
expect 0 "" "$hetc" run tiny.hetc
unset HETC_PLUGIN_PATH

# 5. A compile stopped by SIGINT or SIGTERM removes its temporary package
# and says so; one killed outright leaves it for the next compile to remove.
for signal in INT TERM; do
  "$hetc" compile "$samples/resnet18.json" --targets cpu -o big.hetc --quiet > /dev/null 2> err.txt &
  pid=$!
  for _ in $(seq 100); do ls -d big.hetc.tmp-* > /dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  kill -$signal $pid
  wait $pid
  status=$?
  want=$((128 + $(kill -l $signal)))
  [ "$status" = "$want" ] || fail "compile stopped by SIG$signal exited $status, expected $want"
  grep -qF "hetc: interrupted by SIG$signal; big.hetc was not written" err.txt ||
    fail "compile stopped by SIG$signal said: $(cat err.txt)"
  ls -d big.hetc* > /dev/null 2>&1 && fail "SIG$signal left $(ls -d big.hetc*)"
done
"$hetc" compile "$samples/resnet18.json" --targets cpu -o big.hetc --quiet > /dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do ls -d big.hetc.tmp-* > /dev/null 2>&1 && break; sleep 0.1; done
kill -KILL $pid
wait $pid
stale=$(ls -d big.hetc.tmp-* 2> /dev/null)
[ -n "$stale" ] || fail "no temporary to clean up after SIGKILL"
expect 0 "hetc: removed ./$stale, left behind by an interrupted run (process $pid)" \
  "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o big.hetc --quiet
[ -f big.hetc/manifest.json ] || fail "the compile after SIGKILL wrote no package"
ls -d big.hetc.tmp-* > /dev/null 2>&1 && fail "the stale temporary is still there"
# Killed between moving the earlier package aside and renaming the new one
# in: the next compile puts the earlier package back first.
mv big.hetc big.hetc.old-999999999-abcdef
expect 0 "hetc: restored big.hetc, which an interrupted run had moved aside" \
  "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o big.hetc --quiet
[ -f big.hetc/manifest.json ] || fail "no package after the restore"
ls -d big.hetc.old-* > /dev/null 2>&1 && fail "the moved-aside package is still there"

# Sibling of 5: hetc compare stopped by SIGINT keeps none of its temporary
# packages (they live under TMPDIR). Its package phase with one run lasts
# about 0.6 s here; 300 runs keep it going for seconds after the signal.
mkdir compare_tmp
TMPDIR=$work/compare_tmp "$hetc" compare "$samples/resnet18.json" --targets cpu --runs 300 --warmup 0 \
  > /dev/null 2> err.txt &
pid=$!
# Once it compiles its packages (after timing each task).
for _ in $(seq 600); do [ -n "$(ls compare_tmp)" ] && break; sleep 0.1; done
[ -n "$(ls compare_tmp)" ] || fail "compare made no temporary package directory within a minute"
sleep 0.5
kill -INT $pid
wait $pid
status=$?
[ "$status" = 130 ] || fail "compare stopped by SIGINT exited $status, expected 130: $(cat err.txt)"
grep -qF "interrupted by SIGINT" err.txt || fail "compare stopped by SIGINT said: $(cat err.txt)"
[ -z "$(ls compare_tmp)" ] || fail "compare stopped by SIGINT left $(ls compare_tmp)"

# 10, 11. hetc verify checks everything and lists every problem; NaN
# parameters and outputs are warned about by run too.
expect 0 "" "$hetc" compile "$samples/tiny_conv.json" --targets vec -o v.hetc --quiet
expect 0 "" "$hetc" verify v.hetc
grep -qE "^v.hetc: ok: 8 steps, 9 values, 17 files \(0.1 MB\) matching their checksums and formats, finite parameters$" out.txt ||
  fail "verify of a whole package said: $(cat out.txt)"
cp -r v.hetc nan.hetc
python3 - nan.hetc <<'EOF'
import json, struct, sys
package = sys.argv[1]
manifest = json.load(open(package + '/manifest.json'))
offset = [s for s in manifest['steps'] if s.get('params')][0]['params'][0][0]
weights = bytearray(open(package + '/weights.bin', 'rb').read())
struct.pack_into('<3f', weights, offset, float('nan'), float('inf'), float('nan'))
open(package + '/weights.bin', 'wb').write(weights)
EOF
expect 0 "hetc: warning: output prob: 13 of 13 values are NaN or infinite" "$hetc" run nan.hetc
grep -qF "warning: weights.bin: step 1 (conv1): param 0 holds 3 NaN or infinite values; the outputs will too" err.txt ||
  fail "run of nan.hetc did not warn about the param: $(cat err.txt)"
expect 2 "hetc: nan.hetc: 2 problems (listed above)" "$hetc" verify nan.hetc
grep -qF "nan.hetc/weights.bin: its checksum is " err.txt || fail "verify missed the checksum: $(cat err.txt)"
grep -qF "nan.hetc/weights.bin: step 1 (conv1): param 0 holds 3 NaN or infinite values" err.txt ||
  fail "verify missed the NaN param: $(cat err.txt)"
cp -r v.hetc damaged.hetc
size=$(stat -c %s v.hetc/kernels/s0002-vec.so)
echo junk > damaged.hetc/kernels/extra.txt
truncate -s 100 damaged.hetc/kernels/s0002-vec.so
expect 2 "hetc: damaged.hetc: 2 problems (listed above)" "$hetc" verify damaged.hetc
grep -qF "damaged.hetc/kernels/s0002-vec.so: 100 bytes, the manifest says $size: the package is damaged" err.txt ||
  fail "verify: $(cat err.txt)"
grep -qF "damaged.hetc/kernels/extra.txt: not listed in the manifest" err.txt || fail "verify: $(cat err.txt)"
expect 2 "hetc: damaged.hetc/kernels/s0002-vec.so: 100 bytes, the manifest says $size: the package is damaged; recompile it" \
  "$hetc" run damaged.hetc

# 13. A cpu object file cut short or from another step: exit 2 naming the
# package. Format 3's checksums catch it before the JIT sees it; a
# version-2 package (no checksums) gets the JIT's refusal as the package's
# defect, not as a failure of hetc.
expect 0 "" "$hetc" compile "$samples/tiny_conv.json" --targets cpu -o c.hetc --quiet
cp -r c.hetc cut.hetc
truncate -s 2000 cut.hetc/kernels/s0001-cpu.o
expect 2 "hetc: cut.hetc/kernels/s0001-cpu.o: 2000 bytes, the manifest says " "$hetc" run cut.hetc
cp -r c.hetc old.hetc
python3 - old.hetc <<'EOF'
import json, sys
path = sys.argv[1] + '/manifest.json'
manifest = json.load(open(path))
manifest['version'] = 2
del manifest['files']
json.dump(manifest, open(path, 'w'))
EOF
cp old.hetc/kernels/s0003-cpu.o old.hetc/kernels/s0001-cpu.o
expect 2 "hetc: old.hetc: step 1 (conv1): loading artifact s0001-cpu: cpu: old.hetc/kernels/s0001-cpu.o cannot be loaded: " \
  "$hetc" run old.hetc

# Siblings of 1: run --output removed its output file when a write failed,
# which for a device meant deleting the device node; it now writes through.
if [ -c /dev/full ]; then
  expect 1 "hetc: /dev/full: write failed: No space left on device" "$hetc" run v.hetc --output /dev/full
  [ -c /dev/full ] || fail "run --output /dev/full replaced or removed the device"
fi
expect 2 "hetc: adir: is a directory; not writing over it" "$hetc" run v.hetc --output adir
expect 0 "" "$hetc" run v.hetc --output link.jsonl
[ -L link.jsonl ] && [ "$(stat -c %s real.jsonl)" = 52 ] || fail "run --output did not write 13 floats through the link"
expect 2 "hetc: adir: is a directory; not writing over it" "$hetc" compare "$samples/tiny_conv.json" --targets cpu \
  --runs 1 --warmup 0 --csv adir
# Siblings of 9: a FIFO as run's --input.
expect 2 "hetc: pipe.jsonl: is a FIFO, not a regular file" "$hetc" run v.hetc --input pipe.jsonl

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all cases passed"
