#!/usr/bin/env bash
# gpuclk occupancy against the CUDA runtime on a real GPU (issue 6). Read-only.
#
#   tests/device/occupancy_device.sh build [DIR]   compile occupancy_device.cu into DIR
#                                                  (default build/device), here or there
#   tests/device/occupancy_device.sh [run]         compare on the GPU of this machine
#
# Run compares cudaOccupancyMaxActiveBlocksPerMultiprocessor with `gpuclk occupancy --batch`
# on ~40 000 cases: kernels using ~12..251 registers and 0..48 KiB static shared memory, block
# sizes 1..1024, dynamic shared memory up to the opt-in maximum, carveouts default/0/25/50/100.
# Then, where cuobjdump is installed, it checks `gpuclk occupancy --binary` reads the same
# registers and static shared memory as cudaFuncGetAttributes. Prints a Markdown table (also
# written to $OUT/occupancy_device.md for docs/results/) and exits 1 on any mismatch, 77 when
# there is no GPU.
#
# Environment: GPUCLK_BIN (default build/device/gpuclk), OUT (default
# /tmp/gpuclk-occupancy-device), NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# OCCUPANCY_ARCHS (SASS to build, default "80 90 100 120").
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${GPUCLK_BIN:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-occupancy-device}
MODE=${1:-run}

find_nvcc() {
  if [ -n "${NVCC:-}" ]; then echo "$NVCC"; return; fi
  command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; }
}

build() {
  local dir=${1:-build/device} nvcc gencode=()
  nvcc=$(find_nvcc) || true
  [ -n "$nvcc" ] || { echo "occupancy_device: nvcc not found (set NVCC)" >&2; return 1; }
  for arch in ${OCCUPANCY_ARCHS:-80 90 100 120}; do
    gencode+=(-gencode "arch=compute_$arch,code=sm_$arch")
  done
  mkdir -p "$dir"
  "$nvcc" -O3 "${gencode[@]}" -o "$dir/occupancy_device" tests/device/occupancy_device.cu
}

if [ "$MODE" = build ]; then
  build "${2:-build/device}"
  exit $?
fi

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skip: no NVIDIA GPU on this machine (nvidia-smi -L failed)"
  exit 77
fi
[ -x "$BIN" ] || { echo "occupancy_device: gpuclk binary $BIN not found (set GPUCLK_BIN)" >&2; exit 1; }
mkdir -p "$OUT"
DEVICE_BIN=$(dirname "$BIN")/occupancy_device
if [ ! -x "$DEVICE_BIN" ]; then
  DEVICE_BIN="$OUT/occupancy_device"
  build "$OUT" || exit 1
fi
status=0

# 1. Active blocks per SM: the runtime against gpuclk --batch.
"$DEVICE_BIN" > "$OUT/cases.csv" 2> "$OUT/device.txt" || { cat "$OUT/device.txt"; exit 1; }
"$BIN" occupancy --batch "$OUT/cases.csv" --format json > "$OUT/ours.json" 2> "$OUT/ours.err" || {
  echo "gpuclk occupancy --batch failed:"; cat "$OUT/ours.err"; exit 1; }
python3 - "$OUT" > "$OUT/occupancy_device.md" <<'EOF' || status=1
import collections, json, sys
out = sys.argv[1]
rows = json.load(open(f"{out}/ours.json"))
device = open(f"{out}/device.txt").read().strip()
per_kernel = collections.OrderedDict()
bad = []
for r in rows:
    key = (r["kernel"], r["regs"], r["smem_static"])
    total, wrong = per_kernel.get(key, (0, 0))
    same = int(r["runtime_blocks"]) == int(r["active_blocks"])
    per_kernel[key] = (total + 1, wrong + (not same))
    if not same:
        bad.append(r)
print(f"# gpuclk occupancy vs cudaOccupancyMaxActiveBlocksPerMultiprocessor\n\n{device}\n")
print("| kernel | registers | static shared (B) | cases | mismatches |")
print("|---|---:|---:|---:|---:|")
for (kernel, regs, smem), (total, wrong) in per_kernel.items():
    print(f"| {kernel.replace(';', ', ')} | {regs} | {smem} | {total} | {wrong} |")
print(f"\n{len(rows)} cases (block sizes 1..1024, dynamic shared memory up to the opt-in "
      f"maximum, carveouts default/0/25/50/100), {len(bad)} mismatches")
for r in bad[:20]:
    print(f"- {r['kernel']} threads={r['threads']} regs={r['regs']} static={r['smem_static']} "
          f"dynamic={r['smem_dynamic']} carveout={r['carveout'] or 'default'}: runtime "
          f"{r['runtime_blocks']}, gpuclk {r['active_blocks']} ({r['limiter'] or r['reason']})")
sys.exit(1 if bad else 0)
EOF
cat "$OUT/occupancy_device.md"

# 2. Kernel resources read from the binary: cuobjdump (through gpuclk) against the runtime.
arch=$(awk -F, 'NR == 2 { print $2 }' "$OUT/cases.csv")
if command -v cuobjdump >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/cuobjdump ]; then
  (command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump) | head -1 > "$OUT/cuobjdump_path.txt"
  "$(cat "$OUT/cuobjdump_path.txt")" --dump-resource-usage "$DEVICE_BIN" > "$OUT/cuobjdump_res_usage.txt" 2>&1
  "$DEVICE_BIN" --kernels > "$OUT/attributes.csv"
  if "$BIN" occupancy --binary "$DEVICE_BIN" --arch "$arch" --kernel pressure --format json \
       > "$OUT/binary.json" 2> "$OUT/binary.err"; then
    python3 - "$OUT" <<'EOF' | tee -a "$OUT/occupancy_device.md" || status=1
import csv, json, sys
out = sys.argv[1]
ours = {k["kernel"]: k for k in json.load(open(f"{out}/binary.json"))}
bad = 0
print("\n| kernel | registers (runtime / gpuclk) | static shared (runtime / gpuclk) | same |")
print("|---|---|---|---|")
for a in csv.DictReader(open(f"{out}/attributes.csv")):
    name = f"void pressure<{a['live']}, {a['static_request']}>(float*, float const*)"
    k = ours.get(name)
    regs, smem = (k["registers"], k["shared_static"]) if k else ("missing", "missing")
    same = k is not None and int(regs) == int(a["regs"]) and int(smem) == int(a["smem_static"])
    bad += not same
    print(f"| {name} | {a['regs']} / {regs} | {a['smem_static']} / {smem} | {'yes' if same else 'NO'} |")
print(f"\ncuobjdump through gpuclk: {bad} kernel(s) differ from cudaFuncGetAttributes")
sys.exit(1 if bad else 0)
EOF
  else
    echo "gpuclk occupancy --binary failed:"; cat "$OUT/binary.err"; status=1
  fi
else
  echo "cuobjdump not installed: binary check skipped" | tee -a "$OUT/occupancy_device.md"
fi

# 3. The worked example of docs/occupancy.md on this GPU, by --device.
"$BIN" occupancy --device 0 --threads 256 --regs 32 > "$OUT/worked_example.txt" 2>&1 || status=1
cat "$OUT/worked_example.txt"
exit $status
