#!/usr/bin/env bash
# Limits agree end to end (api/limits.md): a model of the most nodes the
# model format allows must compile into a package whose manifest hetc run
# reads. Compiling 100000 nodes takes minutes, so this compiles a 2000-node
# chain, checks that it runs, and checks that the manifest's bytes per step,
# times 100000 steps, stay under what the reader accepts, with room for the
# larger steps of other models (a third of the limit).
#   test_limits.sh HETC WORK_DIR
set -euo pipefail
hetc=$1
work=$2/limits
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export HETC_RECORDS=$work/records.sqlite
export XDG_CACHE_HOME=$work/cache

python3 - <<'EOF'
import json
nodes, previous = [], "data"
for i in range(2000):
    nodes.append({"name": f"relu{i}", "op": "relu", "inputs": [previous]})
    previous = f"relu{i}"
json.dump({"format": "hetc-model", "version": 1, "name": "chain",
           "inputs": [{"name": "data", "shape": [1, 8, 4, 4], "dtype": "float32", "layout": "NCHW"}],
           "weights": {"init": "random", "seed": 1}, "nodes": nodes, "outputs": [previous]},
          open("chain.json", "w"))
EOF
"$hetc" compile chain.json --targets cpu -o chain.hetc --quiet
"$hetc" run chain.hetc --repeat 1 > run.txt
grep -q "output relu1999 \[1,8,4,4\]" run.txt || { cat run.txt; exit 1; }
"$hetc" verify chain.hetc

# The reader's limit, from the header that both the writer and the reader use.
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
limit=$(python3 -c "
import re
text = open('$source_dir/driver/package/plan.h').read()
m = re.search(r'HETC_PACKAGE_MAX_MANIFEST_BYTES \(\(size_t\)(\d+) << (\d+)\)', text)
print(int(m.group(1)) << int(m.group(2)))")
bytes=$(stat -c %s chain.hetc/manifest.json)
steps=$(python3 -c "import json; print(len(json.load(open('chain.hetc/manifest.json'))['steps']))")
projected=$((bytes / steps * 100000))
echo "manifest: $bytes bytes for $steps steps; 100000 steps would be about $projected bytes; the reader takes $limit"
if [ $((projected * 3)) -gt "$limit" ]; then
  echo "FAIL: a 100000-node model's manifest would come too close to (or past) the reader's limit"
  exit 1
fi
echo "limits agree"
