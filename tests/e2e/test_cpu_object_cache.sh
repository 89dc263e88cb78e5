#!/usr/bin/env bash
# The cpu target's disk cache of kernel objects ($XDG_CACHE_HOME/hetc/cpu,
# plugins/llvm_cpu/jit.c): a compile fills it with ELF objects; compiling
# again links them and writes none (every file keeps its inode, which the
# atomic write of a fresh object would change); an entry that is not an
# object, or an ELF that does not link, is compiled again and replaced, and
# the package's outputs stay the same to the bit; each vector ISA keeps its
# own objects (the AVX-512 part skips, saying so, without AVX-512); a
# relative XDG_CACHE_HOME is ignored for $HOME/.cache, and a cache folder
# that cannot be written is left alone (every built-in plugin finds its
# folder the same way).
#   test_cpu_object_cache.sh HETC SOURCE_DIR WORK_DIR
set -uo pipefail
hetc=$1
model=$2/samples/tiny_allops.json
work=$3/cpu-object-cache
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export HETC_RECORDS=$work/records.sqlite XDG_CACHE_HOME=$work/cache HETC_CPU_ISA=avx2
cache=$XDG_CACHE_HOME/hetc/cpu
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# compile_and_run NAME: the model compiled for cpu and run on a fixed input
# into NAME.out.
compile_and_run() {
  "$hetc" compile "$model" --targets cpu -o "$1.hetc" --quiet > /dev/null 2> "$1.err" &&
    "$hetc" run "$1.hetc" --random-input 5 --repeat 1 --output "$1.out" > /dev/null 2>> "$1.err" ||
    fail "$1: compile or run failed: $(cat "$1.err")"
}
# inodes: every cached file with its inode, sorted.
inodes() { find "$cache" -type f -printf '%f %i\n' | sort; }
elf_count() { for f in "$cache"/*.o; do head -c 4 "$f" | grep -q $'^\x7fELF' && echo; done | wc -l; }

compile_and_run first
n=$(find "$cache" -name '*.o' | wc -l)
[ "$n" -gt 5 ] && [ "$(elf_count)" = "$n" ] && echo "ok: the first compile kept $n ELF objects" ||
  fail "the cache holds $n objects, $(elf_count) of them ELF"
[ -z "$(find "$cache" -type f ! -name '*.o')" ] || fail "the cache holds other files: $(ls "$cache")"
before=$(inodes)
compile_and_run second
[ "$(inodes)" = "$before" ] && echo "ok: compiling again linked every object from the cache, writing none" ||
  fail "compiling again wrote objects: $(diff <(echo "$before") <(inodes) | head -5)"
cmp -s first.out second.out && echo "ok: the same outputs from cached objects" || fail "cached objects change the outputs"

# Damaged entries: one not an object at all, one an ELF header on garbage.
set -- "$cache"/*.o
printf 'not an object' > "$1"
{ printf '\177ELF'; head -c 200 /dev/zero | tr '\0' 'x'; } > garbage.o
cp garbage.o "$2"
compile_and_run damaged
[ "$(elf_count)" = "$n" ] && ! cmp -s garbage.o "$2" && echo "ok: damaged entries were compiled again and replaced" ||
  fail "damaged entries were not replaced ($(elf_count) of $n are ELF)"
cmp -s first.out damaged.out && echo "ok: the same outputs after damaged entries" ||
  fail "damaged entries change the outputs"

if ! HETC_CPU_ISA=avx512 "$hetc" compile "$model" --targets cpu -o avx512.hetc --quiet > /dev/null 2> avx512.err; then
  grep -qF "HETC_CPU_ISA=avx512, but" avx512.err || fail "HETC_CPU_ISA=avx512 failed otherwise: $(cat avx512.err)"
  echo "skipped: the AVX-512 part ($(grep -o 'but .*' avx512.err))"
else
  m=$(find "$cache" -name '*.o' | wc -l)
  [ "$m" -gt "$n" ] && echo "ok: AVX-512 kernels were compiled beside the AVX2 ones ($n, then $m objects)" ||
    fail "AVX-512 kernels came from the AVX2 objects ($n, then $m objects)"
fi
# Where the caches are (plugins/common hpc_cache_dir, which every built-in
# plugin uses): a relative XDG_CACHE_HOME is ignored, as the XDG rule asks,
# for $HOME/.cache; a folder that cannot be written is no cache at all.
mkdir -p home
XDG_CACHE_HOME=relative HOME=$work/home "$hetc" compile "$model" --targets cpu,vec -o relative.hetc --quiet \
  > /dev/null 2> relative.err || fail "compile with a relative XDG_CACHE_HOME: $(cat relative.err)"
[ ! -e relative ] && [ -n "$(ls home/.cache/hetc/cpu)" ] && [ -n "$(ls home/.cache/hetc/vec)" ] &&
  echo "ok: a relative XDG_CACHE_HOME is ignored for \$HOME/.cache" ||
  fail "a relative XDG_CACHE_HOME: $(ls -d relative 2> /dev/null) $(ls home/.cache/hetc 2> /dev/null)"
if [ "$(id -u)" != 0 ]; then
  mkdir -p locked/hetc/cpu && chmod 555 locked/hetc/cpu
  XDG_CACHE_HOME=$work/locked "$hetc" compile "$model" --targets cpu -o locked.hetc --quiet > /dev/null 2> locked.err ||
    fail "compile with a cache that cannot be written: $(cat locked.err)"
  [ -z "$(ls locked/hetc/cpu)" ] && echo "ok: a cache that cannot be written is left alone" ||
    fail "a cache that cannot be written got $(ls locked/hetc/cpu)"
  chmod 755 locked/hetc/cpu
else
  echo "skipped: a cache that cannot be written (root writes anywhere)"
fi
[ "$failures" = 0 ] && echo "all cpu object cache checks passed" || echo "$failures failure(s)"
[ "$failures" = 0 ]
