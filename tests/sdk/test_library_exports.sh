#!/usr/bin/env bash
# libhetc.so exports exactly the functions api/hetc/hetc.h declares with
# HETC_API: nothing internal leaks into the library's ABI, and nothing the
# header promises is missing.
# Usage: test_library_exports.sh LIBHETC_SO HETC_H
set -euo pipefail
library=$1
header=$2

declared=$(sed -n 's/^HETC_API .*\b\(hetc_[a-z0-9_]*\)(.*/\1/p' "$header" | sort)
exported=$(nm -D --defined-only "$library" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort)

if [ -z "$declared" ]; then
  echo "FAIL: no HETC_API declarations read from $header"
  exit 1
fi
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && printf 'FAIL: %s exports what %s does not declare:\n%s\n' "$library" "$header" "$extra"
  [ -n "$missing" ] && printf 'FAIL: %s lacks what %s declares:\n%s\n' "$library" "$header" "$missing"
  exit 1
fi
echo "PASS: $(echo "$exported" | wc -l) exported functions, each declared in $header"
