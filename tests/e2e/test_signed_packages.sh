#!/usr/bin/env bash
# Signed packages: `hetc keys new`, `hetc compile --sign` and `--trust` on
# run, bench and verify. A package opens under --trust only when its
# signature verifies with the key and every file is the one signed; each
# refusal is exit 2 naming the package's file and the key, and runs none of
# the package (the vec kernel with an ELF constructor of
# test_verify_runs_nothing.sh, re-hashed into the manifest, is refused).
#   test_signed_packages.sh HETC SOURCE_DIR WORK_DIR
set -uo pipefail
hetc=$1
source_dir=$2
work=$3/signed-packages
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export HETC_RECORDS=$work/default.sqlite
export XDG_CACHE_HOME=$work/cache
. "$source_dir/tests/e2e/tamper_helpers.sh"
make_evil_so

# Keys: a pair, never written over.
expect 0 "wrote ci.secret (keep it private) and ci.public" "$hetc" keys new ci
[ "$(stat -c %a ci.secret)" = 600 ] || fail "ci.secret is mode $(stat -c %a ci.secret), not 600"
head -1 ci.public | grep -qxF "hetc-public-key 1" || fail "ci.public: $(cat ci.public)"
cp ci.secret ci.secret.before
expect 2 "hetc: ci.secret: exists; not writing over it" "$hetc" keys new ci
cmp -s ci.secret ci.secret.before || fail "keys new wrote over ci.secret"
touch taken.public
expect 2 "hetc: taken.public: exists; not writing over it" "$hetc" keys new taken
[ -e taken.secret ] && fail "keys new left taken.secret beside a taken.public it did not write"
expect 0 "" "$hetc" keys new other
expect 2 "hetc keys: unknown subcommand 'old' (new)" "$hetc" keys old x

# Good: signed, opened, benched and verified with the key.
model=$source_dir/samples/tiny_conv.json
expect 0 "" "$hetc" compile "$model" --targets vec -o p.hetc --quiet --sign ci.secret
[ -f p.hetc/signature ] || fail "compile --sign wrote no p.hetc/signature"
expect 0 "" "$hetc" run p.hetc --trust ci.public
expect 0 "" "$hetc" bench p.hetc --runs 2 --warmup 0 --trust ci.public
expect 0 "p.hetc: ok: 8 steps, 9 values, 17 files (0.1 MB) matching their checksums and formats, finite parameters, signed with the secret key of ci.public" \
  "$hetc" verify p.hetc --trust ci.public
# A signed package opens without --trust as any package does.
expect 0 "" "$hetc" run p.hetc

# Wrong key, missing signature.
key=$(sed -n 2p ci.public)
expect 2 "hetc: p.hetc/signature: signed with another key, whose public key starts ${key:0:16} (trusted key: other.public)" \
  "$hetc" run p.hetc --trust other.public
expect 0 "" "$hetc" compile "$model" --targets vec -o unsigned.hetc --quiet
expect 2 "hetc: unsigned.hetc: not signed: there is no unsigned.hetc/signature (trusted key: ci.public)" \
  "$hetc" run unsigned.hetc --trust ci.public
expect 2 "hetc: unsigned.hetc: 1 problem (listed above)" "$hetc" verify unsigned.hetc --trust ci.public
grep -qxF "  unsigned.hetc: not signed: there is no unsigned.hetc/signature (trusted key: ci.public)" err.txt ||
  fail "verify --trust did not list the missing signature: $(cat err.txt)"

# Tampered: the manifest, weights.bin (which open checks by size only), a
# kernel re-hashed into the manifest, a file added, a file removed, the
# signature itself.
cp -r p.hetc manifest.hetc
python3 - manifest.hetc/manifest.json << 'EOF'
import json, sys
manifest = json.load(open(sys.argv[1]))
manifest['model'] = 'renamed'
json.dump(manifest, open(sys.argv[1], 'w'))
EOF
expect 2 "hetc: manifest.hetc/manifest.json: changed since the package was signed (trusted key: ci.public)" \
  "$hetc" run manifest.hetc --trust ci.public
expect 2 "hetc: manifest.hetc: 1 problem (listed above)" "$hetc" verify manifest.hetc --trust ci.public
cp -r p.hetc weights.hetc
printf '\x7f' | dd of=weights.hetc/weights.bin bs=1 seek=100 conv=notrunc status=none
expect 2 "hetc: weights.hetc/weights.bin: changed since the package was signed (trusted key: ci.public)" \
  "$hetc" run weights.hetc --trust ci.public
cp -r p.hetc evil.hetc
replace evil.hetc kernels/s0000-vec.so evil.so
expect 2 "hetc: evil.hetc/manifest.json: changed since the package was signed (trusted key: ci.public)" \
  "$hetc" run evil.hetc --trust ci.public
[ -e marker ] && fail "run --trust ran the replaced kernel of evil.hetc"
# The kernel alone replaced (the manifest left as signed) is named itself.
cp p.hetc/manifest.json evil.hetc/manifest.json
expect 2 "hetc: evil.hetc/kernels/s0000-vec.so: changed since the package was signed (trusted key: ci.public)" \
  "$hetc" bench evil.hetc --trust ci.public
[ -e marker ] && fail "bench --trust ran the replaced kernel of evil.hetc"
cp -r p.hetc added.hetc
cp added.hetc/kernels/s0001-vec.so added.hetc/kernels/s0001-vec.bin
expect 2 "hetc: added.hetc/kernels/s0001-vec.bin: not covered by the signature: added since the package was signed (trusted key: ci.public)" \
  "$hetc" run added.hetc --trust ci.public
cp -r p.hetc removed.hetc
rm removed.hetc/kernels/s0003-vec.c
expect 2 "hetc: removed.hetc/kernels/s0003-vec.c: signed, but missing (trusted key: ci.public)" \
  "$hetc" run removed.hetc --trust ci.public
cp -r p.hetc resigned.hetc
python3 - resigned.hetc/signature << 'EOF'
import sys
text = open(sys.argv[1]).read()
at = text.rindex('ed25519 ') + 8
open(sys.argv[1], 'w').write(text[:at] + ('1' if text[at] == '0' else '0') + text[at + 1:])
EOF
expect 2 "hetc: resigned.hetc/signature: the signature does not verify: the file was altered (trusted key: ci.public)" \
  "$hetc" run resigned.hetc --trust ci.public
cp -r p.hetc cut.hetc
head -c 40 p.hetc/signature > cut.hetc/signature
expect 2 "hetc: cut.hetc/signature: line 2: expected \"key\" and 64 hex digits (trusted key: ci.public)" \
  "$hetc" run cut.hetc --trust ci.public

# Malformed key files: exit 2 naming the file; compile writes nothing.
printf 'hetc-public-key 1\n%s\n' "${key:0:63}" > short.public
printf 'hetc-public-key 1\n%s\nmore\n' "$key" > long.public
printf 'ssh-ed25519 AAAA\n' > ssh.public
: > empty.public
expect 2 "hetc: short.public: line 2: expected 64 hex digits, the ed25519 public key" "$hetc" run p.hetc --trust short.public
expect 2 "hetc: long.public: line 3: unexpected text after the key" "$hetc" run p.hetc --trust long.public
expect 2 "hetc: ssh.public: line 1: expected \"hetc-public-key 1\": not a hetc public key file" \
  "$hetc" run p.hetc --trust ssh.public
expect 2 "hetc: empty.public: line 1: expected \"hetc-public-key 1\": not a hetc public key file" \
  "$hetc" bench p.hetc --trust empty.public
expect 2 "hetc: ci.secret: line 1: a secret key, where a public key is expected" "$hetc" run p.hetc --trust ci.secret
expect 2 "hetc: missing.public: cannot open: No such file or directory" "$hetc" run p.hetc --trust missing.public
expect 2 "hetc: p.hetc: 1 problem (listed above)" "$hetc" verify p.hetc --trust short.public
grep -qxF "  short.public: line 2: expected 64 hex digits, the ed25519 public key" err.txt ||
  fail "verify --trust did not name the malformed key: $(cat err.txt)"
expect 2 "hetc: ci.public: line 1: a public key, where a secret key is expected" \
  "$hetc" compile "$model" --targets vec -o bad.hetc --quiet --sign ci.public
ls -d bad.hetc* > /dev/null 2>&1 && fail "compile with a bad key left $(ls -d bad.hetc*)"
expect 2 "hetc compile: --sign: expected a secret key file, got ''" "$hetc" compile "$model" --targets vec -o bad.hetc --sign=

finish
