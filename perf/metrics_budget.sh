#!/usr/bin/env bash
# /metrics's series per GPU, family by family, on the simulated 8x H100 (NVSwitch) and 2x H200
# (NV18) nodes: by default and with each group of `--metrics-detail` (nvlink, gpu, attribution).
# Prints the markdown table docs/exporter.md shows between its metrics-budget markers
# (tests/cli/metrics_budget_test.sh checks that the two agree and that the default stays within
# the budget of 40 series per GPU).
#   perf/metrics_budget.sh [GPUCLK_BIN]          (default build/release/gpuclk)
# Each node starts 45 s after power-on, in its scenario's steady work, its counters read every
# second; the text is scraped once two slow samples (GPM activity and the NVLink sums need two)
# and the node state are in. The per-GPU counts are the same every run; the node-level count
# (findings, users) may vary.
set -u
BIN=${1:-build/release/gpuclk}
BUDGET=40
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-budget.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# scrape SCENARIO DETAIL: /metrics of a fresh frozen node into $TMP/SCENARIO.DETAIL.prom.
scrape() {
  local scenario=$1 detail=$2 log="$TMP/$1.$2.log" url=""
  local args=()
  [ "$detail" != default ] && args=(--metrics-detail "$detail")
  GPUCLK_SIM_STATE="$TMP/$scenario.$detail.state" GPUCLK_SIM_SPEED=1 GPUCLK_SIM_START=45 \
    GPUCLK_STATE_DIR="$TMP/journal" "$BIN" --sim "$scenario" --socket "$TMP/$scenario.sock" \
    serve --listen 127.0.0.1:0 --counters-interval 1s "${args[@]}" 2>"$log" &
  PID=$!
  for _ in $(seq 300); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$log" 2>/dev/null) && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "metrics_budget: serve did not start: $(cat "$log")" >&2; exit 1; }
  sleep 3.5
  curl -sf "$url" >"$TMP/$scenario.$detail.prom" || { echo "metrics_budget: no /metrics" >&2; exit 1; }
  kill "$PID"
  wait "$PID" 2>/dev/null
  PID=""
}

for scenario in 8xh100 2xh200; do
  for detail in default nvlink gpu attribution; do scrape "$scenario" "$detail"; done
done

python3 - "$TMP" "$BUDGET" <<'PY'
import collections, re, sys
tmp, budget = sys.argv[1], int(sys.argv[2])
scenarios, groups = ["8xh100", "2xh200"], ["nvlink", "gpu", "attribution"]
sample = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? \S+$')

def read(scenario, detail):
    """(per-GPU count by family, GPUs, node-level series, the most series of one GPU)"""
    per_family, per_gpu, node = collections.Counter(), collections.Counter(), 0
    for line in open(f"{tmp}/{scenario}.{detail}.prom"):
        m = sample.match(line.strip())
        if not m:
            continue
        gpu = re.search(r'(?:^|,)gpu="(\d+)"', m.group(3) or "")
        if gpu:
            per_family[m.group(1)] += 1
            per_gpu[gpu.group(1)] += 1
        else:
            node += 1
    gpus = len(per_gpu)
    return ({f: n / gpus for f, n in per_family.items()}, gpus, node, max(per_gpu.values()))

data = {(s, d): read(s, d) for s in scenarios for d in ["default"] + groups}
order = []
for d in ["default"] + groups:
    for s in scenarios:
        for f in data[(s, d)][0]:
            if f not in order:
                order.append(f)

def num(x):
    return f"{x:g}"

print("| family | per GPU by default (8xh100 / 2xh200) | added per GPU by `--metrics-detail` |")
print("|---|---|---|")
for f in order:
    base = [data[(s, "default")][0].get(f, 0) for s in scenarios]
    added = []
    for g in groups:
        more = [data[(s, g)][0].get(f, 0) - b for s, b in zip(scenarios, base)]
        if any(more):
            added.append(f"{g}: +{' / +'.join(num(x) for x in more)}")
    print(f"| `{f}` | {' / '.join(num(x) for x in base)} | {', '.join(added)} |")
tops = [data[(s, "default")][3] for s in scenarios]
alls = [sum(data[(s, g)][3] - data[(s, "default")][3] for g in groups) + data[(s, "default")][3]
        for s in scenarios]
nodes = [data[(s, "default")][2] for s in scenarios]
print(f"| **series per GPU** (budget {budget}) | **{' / '.join(str(t) for t in tops)}** | "
      f"all groups: {' / '.join(str(a) for a in alls)} |")
print(f"| node-level series (no GPU label) | {' / '.join(str(n) for n in nodes)} | |")
worst = max(tops)
if worst > budget:
    print(f"metrics_budget: {worst} series on one GPU by default, over the budget of {budget}",
          file=sys.stderr)
    sys.exit(1)
PY
