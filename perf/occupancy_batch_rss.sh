#!/usr/bin/env bash
# Peak memory of `gpuclk occupancy --batch` over N rows (default 1 000 000): CSV and JSON stream
# (bounded), the text table holds its rows (the peer, measured in the same run).
#   perf/occupancy_batch_rss.sh [GPUCLK] [ROWS]
set -euo pipefail
BIN=${1:-build/release/gpuclk}
ROWS=${2:-1000000}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
python3 - "$ROWS" > "$TMP/batch.csv" <<'PY'
import random, sys
random.seed(1)
print("name,arch,threads,regs,smem_static,smem_dynamic")
for i in range(int(sys.argv[1])):
    print(f"k{i},sm_90,{random.choice([128,256,512,1024])},{random.randint(16,128)},{random.choice([0,1024,16384])},0")
PY
echo "rows: $ROWS, input $(du -h "$TMP/batch.csv" | cut -f1)"
for fmt in csv json table; do
  args=(); [ $fmt != csv ] && args=(--format $fmt)
  /usr/bin/time -v "$BIN" occupancy --batch "$TMP/batch.csv" "${args[@]}" 2>"$TMP/time" >/dev/null
  rss=$(grep 'Maximum resident' "$TMP/time" | grep -o '[0-9]*$')
  wall=$(grep 'Elapsed' "$TMP/time" | awk '{print $NF}')
  echo "$fmt: peak RSS $((rss / 1024)) MiB, wall $wall"
done
