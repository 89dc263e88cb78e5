#!/bin/bash
# The SDK as a vendor gets it: `cmake --install` of this build into a fresh
# prefix, then, with nothing but that prefix,
#   - the installed hetc finds its plugins without any variable,
#   - samples/vendor_plugin (copied out of the tree) builds with
#     find_package(hetc) on the installed plugin kit (hetc::plugin_kit) and
#     installs where that hetc finds it,
#   - the same sources build with plain cc and hetc-plugin-kit.pc, and a
#     program embedding libhetc links through hetc.pc,
#   - samples/embed builds with find_package(hetc) and compiles, runs and
#     times a sample model placed over vec and the vendor's plugin,
#   - plugin-check passes the vendor plugin (full run) and every built-in
#     plugin (--quick; cuda skips its device checks without a GPU).
# The models test (test_sdk_vendor_models) then compiles the sample models
# for the vendor target with the installed hetc.
# usage: test_sdk_install.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR SANITIZE WERROR
set -euo pipefail
build=$1 src=$2 work=$3 libdir=$4 sanitize=$5
# The samples compiled with plain cc below: warnings are errors as in the
# tree's own build (HETC_WERROR), so that a user's newer compiler does not
# fail the suite on a warning it adds.
werror=""
[ "${6:-OFF}" = ON ] && werror="-Werror"
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
# `hetc plugins` keeps device peaks in the records store: this one, not the user's.
export HETC_RECORDS=$work/records.sqlite
unset HETC_PLUGIN_PATH

step() { echo; echo "== $*"; }

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/hetc "$libdir/libhetc.so" share/doc/hetc/plugin-guide.md share/hetc/samples/vendor_plugin/CMakeLists.txt \
         share/hetc/samples/embed/embed.c share/hetc/samples/tiny_conv.json include/hetc/plugin.h include/hetc/hetc.h \
         "$libdir/cmake/hetc/hetcConfig.cmake" "$libdir/cmake/hetc/HetcPlugin.cmake" \
         "$libdir/pkgconfig/hetc.pc" "$libdir/hetc/hetc-measure-worker" \
         include/hetc/kit/kit.h include/hetc/kit/buffers.h "$libdir/libhetc_plugin_kit.a" \
         "$libdir/pkgconfig/hetc-plugin-kit.pc" share/hetc/samples/vendor_plugin/sources.cmake \
         share/hetc/abi-headers/minor0/hetc/plugin.h share/hetc/abi-headers/minor2/hetc/plugin.h \
         share/hetc/samples/broken_plugins/broken_plugin.c "$libdir/libhetc-private.so" \
         "$libdir/hetc/plugins/libhetc_plugin_cpu.so" "$libdir/hetc/plugins/libhetc_plugin_vec.so"; do
  [ -e "$prefix/$f" ] || { echo "FAIL: the install lacks $f"; exit 1; }
done
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"

step "the installed hetc finds its plugins with no variable set"
"$prefix/bin/hetc" plugins > "$work/plugins.txt"
grep -q "^search path: $prefix/$libdir/hetc/plugins" "$work/plugins.txt" ||
  { cat "$work/plugins.txt"; echo "FAIL: the search path does not start at the prefix"; exit 1; }
for plugin in cpu vec; do
  grep -A1 "^$prefix/$libdir/hetc/plugins/libhetc_plugin_$plugin.so\$" "$work/plugins.txt" | grep -q "state: ready" ||
    { cat "$work/plugins.txt"; echo "FAIL: $plugin is not ready"; exit 1; }
done
echo "ok"

# A plugin exports hetc_plugin_query alone, whatever of the kit it links.
exports_only_query() {
  local exported
  exported=$(nm -D --defined-only "$1" | awk '{print $3}' | tr '\n' ' ')
  [ "$exported" = "hetc_plugin_query " ] || { echo "FAIL: $1 exports '$exported', not only hetc_plugin_query"; exit 1; }
}

# A hetc built with sanitizers installs a kit built with them too: what
# links it (a plugin, a program embedding libhetc) is built with them.
sanitizer_flags=""
[ "$sanitize" = ON ] && sanitizer_flags="-fsanitize=address,undefined"

step "samples/vendor_plugin out of tree with find_package(hetc) and hetc::plugin_kit"
# The sample as installed, copied: nothing of the source tree is reachable.
cp -r "$prefix/share/hetc/samples/vendor_plugin" "$work/vendor_src"
cmake -S "$work/vendor_src" -B "$work/vendor_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" ${sanitizer_flags:+-DCMAKE_C_FLAGS=$sanitizer_flags} \
      > "$work/vendor_configure.log"
cmake --build "$work/vendor_build" > "$work/vendor_build.log"
vendor_so=$work/vendor_build/libhetc_plugin_example_c.so
grep -q 'libhetc_plugin_kit\.a' "$work/vendor_build/CMakeFiles/hetc_plugin_example_c.dir/link.txt" ||
  { echo "FAIL: the vendor plugin does not link the installed kit"; exit 1; }
exports_only_query "$vendor_so"
cmake --install "$work/vendor_build" > "$work/vendor_install.log"
[ -e "$prefix/$libdir/hetc/plugins/libhetc_plugin_example_c.so" ] ||
  { echo "FAIL: hetc_add_plugin did not install into $libdir/hetc/plugins"; exit 1; }
"$prefix/bin/hetc" plugins | grep -A2 "libhetc_plugin_example_c.so\$" | grep -q "state: ready" ||
  { echo "FAIL: the installed hetc does not find the installed vendor plugin"; exit 1; }
echo "built, exports only hetc_plugin_query, installed and found"

step "pkg-config: the plugin with plain cc and hetc-plugin-kit, and a program embedding libhetc"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
mkdir -p "$work/pkgconfig"
cc -std=c11 -O2 -Wall -Wextra $werror -fPIC -shared -fvisibility=hidden $sanitizer_flags \
   $(pkg-config --cflags hetc-plugin-kit) \
   -o "$work/pkgconfig/libhetc_plugin_example_c.so" "$work"/vendor_src/*.c $(pkg-config --libs hetc-plugin-kit) \
   -Wl,--no-undefined
exports_only_query "$work/pkgconfig/libhetc_plugin_example_c.so"
"$prefix/bin/hetc" plugin-check "$work/pkgconfig/libhetc_plugin_example_c.so" --quick > "$work/pkgconfig/check.txt" ||
  { cat "$work/pkgconfig/check.txt"; echo "FAIL: plugin-check of the plugin built with pkg-config"; exit 1; }
tail -1 "$work/pkgconfig/check.txt"
cat > "$work/pkgconfig/embed.c" <<'C'
#include <stdio.h>
#include <hetc/hetc.h>
int main(int argc, char **argv) {
  hetc_model_t *model = NULL;
  hetc_status_t status = hetc_model_load(argv[argc - 1], &model);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    hetc_status_free(status);
    return 1;
  }
  printf("libhetc %s loaded model %s\n", HETC_VERSION_STRING, hetc_model_name(model));
  hetc_model_free(model);
  return 0;
}
C
# A libhetc built with sanitizers needs their runtime first in the program.
cc -std=c11 -Wall $werror $sanitizer_flags $(pkg-config --cflags hetc) -o "$work/pkgconfig/embed" \
   "$work/pkgconfig/embed.c" $(pkg-config --libs hetc) -Wl,-rpath,"$(pkg-config --variable=libdir hetc)"
"$work/pkgconfig/embed" "$src/samples/tiny_conv.json"

step "samples/embed out of tree: compile, open, run and bench through libhetc"
cp -r "$prefix/share/hetc/samples/embed" "$work/embed_src"
cmake -S "$work/embed_src" -B "$work/embed_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      ${sanitizer_flags:+-DCMAKE_C_FLAGS=$sanitizer_flags} > "$work/embed_configure.log"
cmake --build "$work/embed_build" > "$work/embed_build.log"
"$work/embed_build/embed" "$prefix/share/hetc/samples/tiny_conv.json" vec,example_c "$work/embed.hetc" \
  | tee "$work/embed.txt"
grep -q "^output prob: 13 values, the largest " "$work/embed.txt" &&
  grep -q "^latency over 50 runs: p50 " "$work/embed.txt" || { echo "FAIL: the embedding sample's report"; exit 1; }

step "plugin-check on the vendor plugin (full run)"
"$prefix/bin/hetc" plugin-check "$prefix/$libdir/hetc/plugins/libhetc_plugin_example_c.so"

for so in "$prefix/$libdir/hetc/plugins"/libhetc_plugin_*.so; do
  case "$so" in *example_c*) continue ;; esac
  step "plugin-check --quick $(basename "$so")"
  # LeakSanitizer's tracer has crashed at the exit of processes whose PoCL
  # threads were still up (see tests/e2e); leaks of the opencl plugin are
  # checked in process by its own tests.
  if [ "$sanitize" = ON ] && [[ "$so" == *opencl* ]]; then
    ASAN_OPTIONS=detect_leaks=0 "$prefix/bin/hetc" plugin-check "$so" --quick
  else
    "$prefix/bin/hetc" plugin-check "$so" --quick
  fi
done
echo
echo "SDK install test: all passed"
