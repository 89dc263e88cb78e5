#!/usr/bin/env bash
# The hetc command is built on the library API alone: every file of
# driver/cli includes only system headers, "hetc/hetc.h" and the command's
# own "cli/cli.h" (which includes only hetc/hetc.h), and the executable
# links libhetc, not libhetc-private.
# Usage: test_cli_public_api.sh SOURCE_DIR HETC_EXECUTABLE
set -euo pipefail
source_dir=$1
executable=$2
failures=0

internal=$(grep -Hn '#[[:space:]]*include[[:space:]]*"' "$source_dir"/driver/cli/* |
  grep -v -e '#[[:space:]]*include[[:space:]]*"hetc/hetc.h"' -e '#[[:space:]]*include[[:space:]]*"cli/cli.h"' || true)
if [ -n "$internal" ]; then
  printf 'FAIL: driver/cli includes headers other than hetc/hetc.h and cli/cli.h:\n%s\n' "$internal"
  failures=$((failures + 1))
fi
own=$(grep -n '#[[:space:]]*include[[:space:]]*"' "$source_dir"/driver/cli/cli.h |
  grep -v '"hetc/hetc.h"' || true)
if [ -n "$own" ]; then
  printf 'FAIL: cli/cli.h includes more than hetc/hetc.h:\n%s\n' "$own"
  failures=$((failures + 1))
fi

needed=$(readelf -d "$executable" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if echo "$needed" | grep -q 'libhetc-private'; then
  printf 'FAIL: %s links libhetc-private:\n%s\n' "$executable" "$needed"
  failures=$((failures + 1))
fi
if ! echo "$needed" | grep -q '^libhetc\.so'; then
  printf 'FAIL: %s does not link libhetc:\n%s\n' "$executable" "$needed"
  failures=$((failures + 1))
fi

[ "$failures" = 0 ] || exit 1
echo "PASS: driver/cli includes only hetc/hetc.h and cli/cli.h; $(basename "$executable") links $(echo "$needed" | grep '^libhetc' | tr '\n' ' ')"
