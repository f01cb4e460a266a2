#!/usr/bin/env bash
# Everything we check on the GPU machine, in one call (docs/device.md). Read-only, always.
#   scripts/device-check.sh [SECTION...]
# sections: foundation latency readonly (the default), occupancy telemetry bench torch multigpu,
# nvlink doctor2 h200cal (several GPUs),
# copy_variants gemm_dtypes power_by_data dmon_groups serve serve_load doctor govern top bench_copy trace
# memory_power bench_inputs power_mixed nccl_job;
# docs/device.md says which docs/results/ page each one produced.
# Build first, here: cmake --preset device && cmake --build build/device -j2
# Run there with carry ["build/device"]: results table on stdout, full logs under $OUT.
# Binaries: GPUCLK_BIN (build/device/gpuclk); the perf scripts find the others in build/device
# (PROBE, TOOL and DEVICE_TESTS override).
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${GPUCLK_BIN:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-device-check}
mkdir -p "$OUT"
DEVICE_TESTS=${DEVICE_TESTS:-build/device/tests/device/gpuclk_device_tests}
export GPUCLK_BIN=$BIN GPUCLK=$BIN
SECTIONS=${*:-foundation latency readonly}
status=0

section_foundation() {
  echo "## foundation: gpuclk vs nvidia-smi on the same fields"
  nvidia-smi -q > "$OUT/smi_q.txt" 2>&1
  nvidia-smi topo -m > "$OUT/smi_topo.txt" 2>&1
  for cmd in "" info clocks topo; do
    "$BIN" $cmd > "$OUT/gpuclk_${cmd:-status}.txt" 2>&1 || { echo "gpuclk $cmd failed"; status=1; }
  done
  "$BIN" info --format json > "$OUT/gpuclk_info.json" 2>&1
  # Fields with the same name and meaning in both tools.
  local fields=(name uuid pci.bus_id driver_version compute_cap pstate persistence_mode
    clocks.max.sm clocks.max.mem clocks.applications.graphics clocks.applications.memory
    clocks.default_applications.graphics clocks.default_applications.memory
    power.limit power.default_limit power.min_limit power.max_limit enforced.power.limit
    memory.total pcie.link.gen.max pcie.link.width.max pcie.link.width.current
    clocks_event_reasons.supported ecc.mode.current compute_mode)
  local list; list=$(IFS=,; echo "${fields[*]}")
  nvidia-smi --query-gpu="$list" --format=csv,noheader,nounits > "$OUT/smi_fields.csv"
  "$BIN" query --fields "$list" --format csv,noheader,nounits > "$OUT/gpuclk_fields.csv"
  echo "| field | nvidia-smi | gpuclk | same |"
  echo "|---|---|---|---|"
  paste -d'\n' "$OUT/smi_fields.csv" "$OUT/gpuclk_fields.csv" | python3 scripts/lib/compare_fields.py "$list" || status=1
  # Volatile fields: sampled back to back, they agree within sampling.
  local volatile=clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu,memory.used
  echo; echo "volatile fields, nvidia-smi then gpuclk back to back:"
  nvidia-smi --query-gpu=$volatile --format=csv,noheader
  "$BIN" query --fields $volatile --format csv,noheader
  # Supported clocks: the same list.
  local smi_count ours
  smi_count=$(nvidia-smi -q -d SUPPORTED_CLOCKS | grep -c "Graphics *:")
  ours=$("$BIN" clocks --format json | python3 -c 'import json,sys; print(sum(m["graphics_count"] for g in json.load(sys.stdin)["gpus"] for m in g["supported_clocks"]))')
  echo "supported graphics clocks (all memory clocks, all GPUs): nvidia-smi $smi_count, gpuclk $ours"
  [ "$smi_count" = "$ours" ] || status=1
  echo; echo "topology: nvidia-smi topo -m / gpuclk topo"; cat "$OUT/smi_topo.txt"; cat "$OUT/gpuclk_topo.txt"
}

section_latency() {
  echo "## latency: perf/cli_latency.sh"
  perf/cli_latency.sh "$BIN" 30 | tee "$OUT/cli_latency.md"
  echo; echo "where a fresh process's time goes (perf/nvml_open_costs.py):"
  python3 perf/nvml_open_costs.py || status=1
  section_trace
}

section_trace() {
  echo; echo "## where each command's NVML time goes (GPUCLK_NVML_TRACE; wall time inside the library)"
  local cmd
  for cmd in clocks "query --fields index,clocks.sm,clocks.mem,power.draw,temperature.gpu" status info; do
    local name=${cmd%% *}
    ( TIMEFORMAT='%R s wall'; { time GPUCLK_NVML_TRACE="$OUT/trace_$name.txt" "$BIN" --direct $cmd > /dev/null 2>&1; } 2> "$OUT/time_$name.txt" )
    echo "### gpuclk $cmd ($(cat "$OUT/time_$name.txt" 2>/dev/null))"; head -14 "$OUT/trace_$name.txt"
  done
}

section_readonly() {
  echo "## read-only: every write refused with exit 4"
  tests/device/readonly_test.sh "$BIN" > "$OUT/readonly.log" 2>&1 || status=1
  tail -14 "$OUT/readonly.log"
  local rc=0
  for cmd in "set --app-clocks 2619,1980" "set --power-limit 600" "set --persistence on" \
             "set --lock-gpu-clocks 1410" "reset --app-clocks" "restore" \
             "sweep --sm-clocks 1410:1980:285 --workload gemm-bf16" \
             "sweep --power-limits 400,700 --workload mem-copy"; do
    "$BIN" --read-only $cmd >/dev/null 2>"$OUT/ro.err"; rc=$?
    echo "gpuclk $cmd -> exit $rc: $(head -1 "$OUT/ro.err")"
    [ $rc -eq 4 ] || status=1
  done
}

section_occupancy() {
  echo "## occupancy: our calculator vs cudaOccupancyMaxActiveBlocksPerMultiprocessor"
  OUT=$OUT tests/device/occupancy_device.sh > "$OUT/occupancy.log" 2>&1 || status=1
  grep -iE "mismatch|cases|agree|differ|FAIL" "$OUT/occupancy.log" | head -12
}

section_telemetry() {
  echo "## telemetry: sampler vs pynvml, dmon vs nvidia-smi dmon, stat around a BF16 GEMM"
  timeout 200 perf/sampler_vs_pynvml.sh > "$OUT/sampler.log" 2>&1 || status=1
  tail -14 "$OUT/sampler.log"
  timeout 170 perf/dmon_vs_nvidia_smi.sh > "$OUT/dmon.log" 2>&1 || status=1
  tail -40 "$OUT/dmon.log"
}

section_bench() {
  echo "## bench: workload tests and gpuclk bench"
  "$DEVICE_TESTS" > "$OUT/bench_device_tests.log" 2>&1 || status=1
  tail -5 "$OUT/bench_device_tests.log"
  timeout 150 tests/device/bench_cli_test.sh "$BIN" > "$OUT/bench_cli.log" 2>&1 || status=1
  tail -20 "$OUT/bench_cli.log"
}

section_torch() {
  echo "## torch: perf/bench_vs_torch.sh"
  perf/bench_vs_torch.sh > "$OUT/bench_vs_torch.log" 2>&1 || status=1
  tail -25 "$OUT/bench_vs_torch.log"
}

section_multigpu() {
  echo "## multigpu: every GPU at once, topology, selection across GPUs"
  export NCCL_NVLS_ENABLE=0
  nvidia-smi -L
  "$BIN" || status=1
  nvidia-smi topo -m; "$BIN" topo || status=1
  local uuids buses
  mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
  mapfile -t buses < <(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader)
  if [ "${#uuids[@]}" -ge 2 ]; then
    echo "-i ${uuids[1]},${buses[0]} ->"
    "$BIN" -i "${uuids[1]},${buses[0]}" query --fields index,uuid,pci.bus_id --format csv,noheader || status=1
    echo "-i ${buses[1]#0000} ->"
    "$BIN" -i "${buses[1]#0000}" query --fields index,uuid --format csv,noheader || status=1
  else
    echo "one GPU only: selection across GPUs not checked"
  fi
}

# Python jobs for the sections with several GPUs: a BF16 GEMM loop on the given CUDA devices from
# one process (a 2-GPU job), or a peer copy loop from device 0 to device 1 that prints its GB/s.
gpu_job() {  # [VISIBLE=N] gpu_job SECONDS DEVICES... (CUDA ordinals among the visible GPUs)
  env ${VISIBLE:+CUDA_VISIBLE_DEVICES=$VISIBLE} python3 - "$@" <<'PY' >/dev/null 2>&1 &
import sys, time, torch
seconds, devs = float(sys.argv[1]), [int(d) for d in sys.argv[2:]]
mats = [(torch.randn(8192, 8192, device=f"cuda:{d}", dtype=torch.bfloat16),) * 2 + (torch.empty(8192, 8192, device=f"cuda:{d}", dtype=torch.bfloat16),) for d in devs]
end = time.time() + seconds
while time.time() < end:
    for a, b, c in mats:
        with torch.cuda.device(a.device):
            for _ in range(8): torch.matmul(a, b, out=c)
    for a, _, _ in mats: torch.cuda.synchronize(a.device)
PY
  JOB_PID=$!
}
peer_copy() {  # peer_copy SECONDS: device 0 -> 1, 256 MiB per copy; its rate at the end
  python3 - "$1" <<'PY' > "$OUT/peer_copy_rate.txt" 2>&1 &
import sys, time, torch
a = torch.empty(256 << 20, dtype=torch.uint8, device="cuda:0"); b = torch.empty_like(a, device="cuda:1")
print("peer access 0->1:", torch.cuda.can_device_access_peer(0, 1))
end = time.time() + float(sys.argv[1]); n = 0; t0 = time.time()
while time.time() < end:
    for _ in range(20): b.copy_(a)
    torch.cuda.synchronize(0); torch.cuda.synchronize(1); n += 20
print("torch copy_ cuda:0 -> cuda:1: %.1f GB/s over %d copies" % (n * a.numel() / (time.time() - t0) / 1e9, n))
PY
  COPY_PID=$!
}

section_nvlink() {
  echo "## nvlink: gpuclk next to nvidia-smi nvlink -s / -e / -gt d"
  nvidia-smi nvlink -s > "$OUT/smi_nvlink_s.txt" 2>&1
  nvidia-smi nvlink -e > "$OUT/smi_nvlink_e.txt" 2>&1
  local fields=index,nvlink.link_count,nvlink.active,nvlink.version,nvlink.speed,nvlink.bandwidth,nvlink.errors.replay,nvlink.errors.recovery,nvlink.errors.crc,nvlink.errors.ecc
  "$BIN" query --fields "$fields" --format csv,noheader,nounits > "$OUT/gpuclk_nvlink.csv" || status=1
  python3 scripts/lib/compare_nvlink.py "$OUT/smi_nvlink_s.txt" "$OUT/smi_nvlink_e.txt" "$OUT/gpuclk_nvlink.csv" || status=1
  echo; echo "gpuclk info, NVLink part:"; "$BIN" info > "$OUT/gpuclk_info.txt" 2>&1 || status=1
  sed -n '/NVLink/,/^$/p' "$OUT/gpuclk_info.txt" | head -30
  echo; echo "## nvlink traffic: a torch peer copy 0 -> 1 for 25 s; gpuclk dmon -s n, nvidia-smi nvlink -gt d, /metrics"
  peer_copy 25
  sleep 4
  nvidia-smi nvlink -gt d > "$OUT/smi_gt_1.txt" 2>&1; local t1=$(date +%s.%N)
  GPUCLK_NVML_TRACE="$OUT/dmon_n_trace.txt" "$BIN" dmon -s n -d 1 -c 6 | tee "$OUT/dmon_n.txt" || status=1
  nvidia-smi nvlink -gt d > "$OUT/smi_gt_2.txt" 2>&1; local t2=$(date +%s.%N)
  python3 - "$OUT/smi_gt_1.txt" "$OUT/smi_gt_2.txt" "$t1" "$t2" <<'PY'
import re, sys
def totals(path):
    gpu, out = None, {}
    for line in open(path):
        m = re.match(r"GPU (\d+):", line)
        if m: gpu = int(m.group(1)); continue
        m = re.search(r"Data (Tx|Rx):\s*(\d+)\s*KiB", line)
        if m and gpu is not None: out[(gpu, m.group(1))] = out.get((gpu, m.group(1)), 0) + int(m.group(2))
    return out
a, b = totals(sys.argv[1]), totals(sys.argv[2]); dt = float(sys.argv[4]) - float(sys.argv[3])
for k in sorted(b):
    print("nvidia-smi nvlink -gt d: GPU %d %s %.0f MB/s over %.1f s" % (k[0], k[1], (b[k] - a.get(k, 0)) * 1024 / dt / 1e6, dt))
PY
  echo "the NVML calls of dmon -s n (count, time):"; grep -i nvlink "$OUT/dmon_n_trace.txt" | head -12
  "$BIN" --socket "$OUT/n.sock" serve --listen 127.0.0.1:0 --metrics-detail nvlink 2>"$OUT/serve_n.log" &
  local spid=$! port=""
  for _ in $(seq 100); do port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/serve_n.log" | head -1 | sed 's/.*://'); [ -n "$port" ] && break; sleep 0.1; done
  sleep 4
  curl -s "http://127.0.0.1:$port/metrics" > "$OUT/metrics_nvlink.txt"
  echo "/metrics NVLink series (link 0 and totals):"
  grep -E '^gpuclk_nvlink' "$OUT/metrics_nvlink.txt" | grep -E 'link="0"' | head -12
  echo "links up per GPU: $(awk '/^gpuclk_nvlink_up\{/ { match($0, /gpu="[0-9]+"/); g = substr($0, RSTART, RLENGTH); n[g] += $NF } END { for (g in n) printf "%s=%d ", g, n[g] }' "$OUT/metrics_nvlink.txt")"
  kill $spid; wait $spid 2>/dev/null
  wait $COPY_PID 2>/dev/null; cat "$OUT/peer_copy_rate.txt"
  echo; echo "topo through gpuclk (NVLink lines):"; "$BIN" --direct topo | grep -i nvlink
}

# The findings of a doctor JSON report, one line each; `stragglers FILE` counts the straggler ones.
# (Python, not jq: the GPU machine has no jq.)
findings() { python3 -c 'import json,sys; [print(f["severity"], f["rule"], "GPUs", ",".join(map(str, f["gpus"])) + ":", f["summary"]) for f in json.load(open(sys.argv[1]))["findings"]]' "$1"; }
stragglers() { python3 -c 'import json,sys; print(sum(f["rule"] == "straggler" for f in json.load(open(sys.argv[1]))["findings"]))' "$1" 2>/dev/null || echo "?"; }

section_doctor2() {
  echo "## doctor on 2 GPUs: a BF16 GEMM on GPU 1 only (GPU 0 idle, no process): no straggler expected"
  VISIBLE=1 gpu_job 30 0
  sleep 5
  "$BIN" --format json doctor --duration 20 > "$OUT/doctor_gpu1.json" 2>"$OUT/doctor_gpu1.err"; local rc=$?
  "$BIN" doctor --explain straggler > /dev/null 2>&1
  findings "$OUT/doctor_gpu1.json"
  echo "exit code $rc; straggler findings: $(stragglers "$OUT/doctor_gpu1.json")"
  [ "$(stragglers "$OUT/doctor_gpu1.json")" = 0 ] || status=1
  wait $JOB_PID 2>/dev/null
  echo; echo "## doctor on 2 GPUs: one process running BF16 GEMMs on both (a 2-GPU job)"
  gpu_job 30 0 1
  sleep 5
  "$BIN" --format json doctor --duration 20 > "$OUT/doctor_job2.json" 2>"$OUT/doctor_job2.err"; rc=$?
  findings "$OUT/doctor_job2.json"
  echo "exit code $rc; straggler findings: $(stragglers "$OUT/doctor_job2.json")"
  wait $JOB_PID 2>/dev/null
  echo; echo "## stat around a 2-GPU job (15 s of BF16 GEMMs on both)"
  "$BIN" stat -- python3 -c '
import time, torch
m = [(torch.randn(8192, 8192, device=f"cuda:{d}", dtype=torch.bfloat16),) for d in (0, 1)]
end = time.time() + 15
while time.time() < end:
    for (a,) in m:
        with torch.cuda.device(a.device):
            for _ in range(8): a @ a
    torch.cuda.synchronize(0); torch.cuda.synchronize(1)' 2>&1 | tee "$OUT/stat_job2.txt" || status=1
  echo; echo "## serve with both GPUs busy: status through the service, /metrics per GPU"
  "$BIN" --socket "$OUT/s2.sock" serve --listen 127.0.0.1:0 2>"$OUT/serve_2.log" &
  local spid=$! port=""
  for _ in $(seq 100); do port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/serve_2.log" | head -1 | sed 's/.*://'); [ -n "$port" ] && break; sleep 0.1; done
  gpu_job 15 0 1
  sleep 8
  "$BIN" --socket "$OUT/s2.sock" | tee "$OUT/status_serve2.txt"
  curl -s "http://127.0.0.1:$port/metrics" > "$OUT/metrics_2.txt"
  grep -E '^gpuclk_gpu_(power_watts|sm_clock_hertz|utilization_ratio|temperature_celsius)\{' "$OUT/metrics_2.txt"
  nvidia-smi --query-gpu=index,power.draw,clocks.sm,utilization.gpu,temperature.gpu --format=csv,noheader
  kill $spid; wait $spid 2>/dev/null; wait $JOB_PID 2>/dev/null
}

section_h200cal() {
  echo "## calibration: idle readings, then a BF16 GEMM and a device copy on each GPU (for the simulator's model)"
  nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks.max.sm,clocks.max.mem,power.limit,power.default_limit,power.min_limit,power.max_limit,memory.total --format=csv
  nvidia-smi -q -d SUPPORTED_CLOCKS | grep -cE "Graphics *:" | sed 's/^/supported graphics clocks: /'
  "$BIN" --format json bench gemm --dtype bf16 --seconds 5 > "$OUT/cal_gemm_bf16.json" 2> "$OUT/cal_gemm.err" || status=1
  "$BIN" --format json bench mem --kind copy --seconds 3 > "$OUT/cal_mem_copy.json" 2> "$OUT/cal_mem.err" || status=1
  for f in cal_gemm_bf16 cal_mem_copy; do
    python3 - "$OUT/$f.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def walk(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items(): yield from walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x): yield from walk(v, path + "[%d]" % i)
    else: yield path, x
keep = ("rate", "median", "clock", "power", "energy", "temperature", "name", "variant")
for p, v in walk(d):
    if any(k in p.lower() for k in keep) and "repetitions" not in p: print(sys.argv[1].split("/")[-1], p, v)
PY
  done
}

section_copy_variants() {
  echo "## copy kernel variants vs cudaMemcpyAsync (perf/copy_kernel_variants.cu)"
  local probe=${COPY_PROBE:-build/devprobe/copy_kernel_variants}
  [ -x "$probe" ] || { echo "build it first: nvcc -O3 -std=c++17 -arch=sm_90 perf/copy_kernel_variants.cu -o $probe"; status=1; return; }
  "$probe" 1024 40 | tee "$OUT/copy_kernel_variants.txt"
}

section_gemm_dtypes() {
  echo "## GEMM rate, clock and power per data type and shape (perf/gemm_power_by_dtype.py)"
  python3 perf/gemm_power_by_dtype.py --seconds 4 --warmup 1 --json "$OUT/gemm_power_by_dtype.json"
}

section_power_by_data() {
  echo "## power, clock and rate by the data a kernel moves (perf/power_by_data.py; issue 27)"
  CUDA_DEVICE_ORDER=PCI_BUS_ID python3 perf/power_by_data.py --json "$OUT/power_by_data.json"
}

section_power_mixed() {
  echo "## mixed phases: BF16 GEMMs with idle gaps and alternating with copies (perf/power_by_data.py --mixed; issue 27)"
  CUDA_DEVICE_ORDER=PCI_BUS_ID python3 perf/power_by_data.py --mixed --seconds 8 \
    --json "$OUT/power_mixed.json"
}

section_dmon_groups() {
  echo "## dmon CPU time per group: gpuclk dmon -s G vs nvidia-smi dmon -s G (10 samples at 1 s, all at once)"
  local g pids=()
  for g in p u c v m e t pucvmet puc; do
    ( TIMEFORMAT='%U %S'; { time "$BIN" -i 0 dmon -s $g -d 1 -c 10 >/dev/null 2>&1; } 2> "$OUT/dmon_ours_$g.time" ) &
    pids+=($!)
    ( TIMEFORMAT='%U %S'; { time nvidia-smi dmon -i 0 -s $g -d 1 -c 10 >/dev/null 2>&1; } 2> "$OUT/dmon_smi_$g.time" ) &
    pids+=($!)
  done
  # Only these: a bare `wait` (bash >= 5.1) also waits for the process substitution that tees this
  # section's output, which ends only when the section does: the section never ended.
  wait "${pids[@]}"
  echo "| group | gpuclk user+sys s | nvidia-smi user+sys s | ratio |"
  echo "|---|---|---|---|"
  for g in p u c v m e t puc pucvmet; do
    local a b
    a=$(awk '{print $1 + $2}' "$OUT/dmon_ours_$g.time"); b=$(awk '{print $1 + $2}' "$OUT/dmon_smi_$g.time")
    echo "| $g | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }') |"
  done
  if command -v strace >/dev/null; then
    strace -c -f -o "$OUT/dmon_pucvmet.strace" "$BIN" -i 0 dmon -s pucvmet -d 1 -c 5 >/dev/null 2>&1
    head -25 "$OUT/dmon_pucvmet.strace"
  fi
}

# A BF16 GEMM loop in the background for SECONDS (PyTorch), on GPU 0.
gemm_in_background() {
  python3 - "$1" <<'PY' >/dev/null 2>&1 &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a); c = torch.empty_like(a)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(8): torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
PY
  GEMM_PID=$!
}

section_serve() {
  echo "## serve: CLI latency through the service, --direct and nvidia-smi (perf/cli_latency.sh, 50 runs)"
  perf/cli_latency.sh "$BIN" 50 | tee "$OUT/serve_cli_latency.md"
  echo; echo "## serve: scrape latency and the service's CPU over 60 s at 1 scrape/s, a BF16 GEMM running (perf/serve_cost.sh)"
  gemm_in_background 75
  sleep 5
  # The service's NVML calls over the run (count and time per entry point), written at its exit.
  GPUCLK_NVML_TRACE="$OUT/serve_nvml_trace.txt" perf/serve_cost.sh "$BIN" 60 | tee "$OUT/serve_cost.md"
  sleep 1; echo "the service's NVML calls, slowest first:"; head -20 "$OUT/serve_nvml_trace.txt" 2>/dev/null
  echo; echo "## serve: /metrics next to nvidia-smi during the GEMM"
  "$BIN" --socket "$OUT/m.sock" serve --listen 127.0.0.1:0 --metrics-detail gpu 2>"$OUT/serve_m.log" &
  local spid=$! port=""
  for _ in $(seq 100); do port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/serve_m.log" | head -1 | sed 's/.*://'); [ -n "$port" ] && break; sleep 0.1; done
  sleep 3
  for i in 1 2 3; do
    curl -s "http://127.0.0.1:$port/metrics" > "$OUT/metrics_$i.txt"
    nvidia-smi --query-gpu=power.draw,clocks.sm,clocks.mem,temperature.gpu,power.limit --format=csv,noheader,nounits > "$OUT/smi_$i.csv"
    python3 - "$OUT/metrics_$i.txt" "$OUT/smi_$i.csv" <<'PY'
import re, sys
m = {}
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    mm = re.match(r'(gpuclk_gpu_[a-z_]+)\{[^}]*gpu="0"[^}]*\} (\S+)', line)
    if mm: m.setdefault(mm.group(1), float(mm.group(2)))
smi = [float(x) for x in open(sys.argv[2]).read().split(",")]
pairs = [("power W", m.get("gpuclk_gpu_power_watts"), smi[0]), ("SM clock MHz", (m.get("gpuclk_gpu_sm_clock_hertz") or 0) / 1e6, smi[1]),
         ("memory clock MHz", (m.get("gpuclk_gpu_memory_clock_hertz") or 0) / 1e6, smi[2]),
         ("temperature C", m.get("gpuclk_gpu_temperature_celsius"), smi[3]), ("power limit W", m.get("gpuclk_gpu_power_limit_watts"), smi[4])]
print(" | ".join(f"{n}: /metrics {a} vs nvidia-smi {b}" for n, a, b in pairs))
e = m.get("gpuclk_gpu_energy_joules_total")
print(f"energy counter /metrics: {e} J")
PY
    sleep 2
  done
  kill $spid; wait $spid 2>/dev/null
  wait $GEMM_PID 2>/dev/null
}

section_serve_load() {
  echo "## serve under load: 1000 requests/s on the socket and on /metrics, 30 s (perf/serve_load.sh)"
  # wrk (Debian 12's) travels in .devbin/peers with libluajit (PEERS overrides); without it the
  # /metrics part is skipped.
  local peers=${PEERS:-.devbin/peers}
  if [ -x "$peers/wrk" ]; then
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib" exec "%s/wrk" "$@"\n' "$PWD/$peers" "$PWD/$peers" > "$OUT/wrk"
    chmod +x "$OUT/wrk"
  fi
  SIM= ABUSE=0 SECONDS_RUN=30 WRK="$OUT/wrk" perf/serve_load.sh "$BIN" | tee "$OUT/serve_load.txt"
}

section_doctor() {
  echo "## doctor --duration 20 at idle"
  "$BIN" -i 0 doctor --duration 20 > "$OUT/doctor_idle.txt" 2>&1; local rc=$?
  cat "$OUT/doctor_idle.txt"; echo "exit code $rc (0: nothing above info)"
  echo; echo "## doctor --duration 20 during a BF16 GEMM"
  gemm_in_background 28
  sleep 4
  "$BIN" -i 0 doctor --duration 20 > "$OUT/doctor_gemm.txt" 2>&1; rc=$?
  "$BIN" -i 0 --format json doctor --duration 1 > /dev/null 2>&1
  cat "$OUT/doctor_gemm.txt"; echo "exit code $rc (0: nothing above info)"
  wait $GEMM_PID 2>/dev/null
  echo; echo "## doctor --duration 20 through gpuclk serve: a look back over a BF16 GEMM that already ran"
  "$BIN" --socket "$OUT/d.sock" serve --listen off 2>"$OUT/serve_d.log" &
  local spid=$!
  sleep 2
  gemm_in_background 22
  wait $GEMM_PID 2>/dev/null
  local t0=$(date +%s.%N)
  "$BIN" --socket "$OUT/d.sock" -i 0 doctor --duration 20 > "$OUT/doctor_serve.txt" 2>&1; rc=$?
  local t1=$(date +%s.%N)
  cat "$OUT/doctor_serve.txt"; echo "exit code $rc; answered in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
  kill $spid; wait $spid 2>/dev/null
}

section_govern() {
  echo "## govern --dry-run (phase, geopm, threshold) while PyTorch alternates GEMM, elementwise, sleep (perf/govern_phases_device.py)"
  python3 perf/govern_phases_device.py --gpuclk "$BIN" --cycles 3 --seconds 5 --out "$OUT"
  echo; echo "## govern without --dry-run under GPUCLK_READ_ONLY=1: nothing written"
  local before after
  before=$(nvidia-smi --query-gpu=clocks.applications.graphics,power.limit,persistence_mode --format=csv,noheader)
  timeout 6 "$BIN" -i 0 govern --policy phase --duration 3s > "$OUT/govern_ro.txt" 2>&1; echo "govern (no --dry-run) exit $?: $(head -2 "$OUT/govern_ro.txt" | tr '\n' ' ')"
  timeout 6 "$BIN" --read-only -i 0 govern --policy phase --duration 3s > "$OUT/govern_ro2.txt" 2>&1; echo "govern --read-only exit $?: $(head -2 "$OUT/govern_ro2.txt" | tr '\n' ' ')"
  echo; echo "## serve --govern phase under GPUCLK_READ_ONLY=1: a dry run; /metrics during a BF16 GEMM"
  "$BIN" --socket "$OUT/g.sock" -i 0 serve --listen 127.0.0.1:0 --govern phase 2>"$OUT/serve_govern.log" &
  local spid=$! port=""
  for _ in $(seq 150); do port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/serve_govern.log" | head -1 | sed 's/.*://'); [ -n "$port" ] && break; sleep 0.1; done
  gemm_in_background 10
  sleep 7
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^gpuclk_governor' | grep -vE '^gpuclk_governor_class.* 0$'
  kill "$spid"; wait "$spid"; echo "serve --govern exit $?"; grep -E "read-only|governing|stopped" "$OUT/serve_govern.log"
  wait "$GEMM_PID" 2>/dev/null
  after=$(nvidia-smi --query-gpu=clocks.applications.graphics,power.limit,persistence_mode --format=csv,noheader)
  echo "nvidia-smi settings before: $before; after: $after"; [ "$before" = "$after" ] || status=1
  for cmd in "set --lock-gpu-clocks 1410" "restore"; do
    "$BIN" $cmd >/dev/null 2>"$OUT/ro.err"; echo "gpuclk $cmd -> exit $?: $(head -1 "$OUT/ro.err")"
  done
}

section_top() {
  echo "## top: CPU at 1 s and 100 ms against nvtop and gpuclk dmon, a BF16 GEMM running (perf/top_cpu.sh)"
  # nvtop (Debian 12's 3.0.1; nvitop needs the Python registry, which the build host cannot reach)
  # and tmux travel in .devbin/peers with their libraries (PEERS overrides).
  local peers=${PEERS:-.devbin/peers}
  [ -x "$peers/nvtop" ] && [ -x "$peers/tmux" ] || { echo "no $peers/nvtop or $peers/tmux"; status=1; return; }
  export LD_LIBRARY_PATH="$peers/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TERMINFO_DIRS="$peers/terminfo"
  gemm_in_background 200
  sleep 3
  SIM=real NVTOP="$peers/nvtop" TMUX_CMD="$peers/tmux" perf/top_cpu.sh "$BIN" "${TOP_SECONDS:-20}" | tee "$OUT/top_cpu.txt"
  echo; echo "## top: the screen during the GEMM (120x40, after 5 s)"
  "$peers/tmux" -L gpuclk-cap new-session -d -x 120 -y 40 "TERM=xterm-256color '$BIN' top -d 0.5; sleep 60"
  sleep 5
  "$peers/tmux" -L gpuclk-cap capture-pane -p > "$OUT/top_screen.txt"
  "$peers/tmux" -L gpuclk-cap kill-server
  cat "$OUT/top_screen.txt"
  kill "$GEMM_PID" 2>/dev/null; wait "$GEMM_PID" 2>/dev/null
}

section_bench_copy() {
  echo "## bench: the copy kernel against cudaMemcpyAsync, verified"
  "$BIN" -i 0 bench mem --kind copy,copy_kernel --mib 1024 --seconds 3 > "$OUT/bench_copy.txt" 2>&1; echo "exit $?"
  grep -E "GPU|Median|method|grid|Check|check|Verif" "$OUT/bench_copy.txt" | head -30
  echo; echo "## RUNNER=gpuclk perf/bench_vs_torch.sh (SECONDS=2)"
  RUNNER=gpuclk GPUCLK="$BIN" SECONDS=2 OUT="$OUT/bvt" perf/bench_vs_torch.sh 2>&1 | tail -22
}

# A BF16 GEMM (8192^3, PyTorch) on GPU 0 for SECONDS on DATA: random (normal values) or zeros.
gemm_on() {
  python3 - "$1" "$2" <<'PY'
import sys, time, torch
seconds, data = float(sys.argv[1]), sys.argv[2]
make = torch.randn if data == "random" else torch.zeros
a = make(8192, 8192, device="cuda", dtype=torch.bfloat16); b = make(8192, 8192, device="cuda", dtype=torch.bfloat16)
c = torch.empty_like(a)
end = time.time() + seconds
while time.time() < end:
    for _ in range(8): torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
PY
}

section_memory_power() {
  echo "## the memory's power (NVML field 185, memory scope) as gpuclk reads it, against pynvml (issue 27)"
  echo "nvidia-smi's power fields:"; nvidia-smi --help-query-gpu | grep -o '^"[a-z._]*power[a-z._]*"' | tr '\n' ' '; echo
  echo "idle, no context: gpuclk query and pynvml's nvmlDeviceGetFieldValues(185, scope 2), one after the other"
  "$BIN" -i 0 query --fields index,name,power.draw,memory.power.draw.average --format csv
  python3 - <<'PY'
import pynvml as n
n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0)
# (field, scope) pairs: nvidia-ml-py sets scopeId from a tuple.
for field, scope, name in ((185, 0, "GPU average"), (185, 2, "memory average"), (186, 2, "memory instant")):
    r = n.nvmlDeviceGetFieldValues(h, [(field, scope)])[0]
    value = f"{r.value.uiVal / 1000:.3f} W" if r.nvmlReturn == 0 else "not supported"
    print(f"pynvml field {field} scope {scope} ({name}): return {r.nvmlReturn}, {value}")
PY
  echo; echo "what the read costs (the sampler reads it every tick with the power): 200 reads each, pynvml"
  python3 - <<'PY'
import time, pynvml as n
n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0)
for name, ids in (("185 scope 2 (memory power)", [(185, 2)]), ("185 scope 0 (GPU power avg)", [(185, 0)]), ("82 memory temp", [82]), ("both 185/2 and 82", [(185, 2), 82])):
    ts = []
    for _ in range(200):
        t = time.perf_counter(); n.nvmlDeviceGetFieldValues(h, ids); ts.append(time.perf_counter() - t)
    ts.sort(); print(f"{name}: median {ts[100]*1e6:.1f} us, p90 {ts[180]*1e6:.1f} us")
t = time.perf_counter()
for _ in range(200): n.nvmlDeviceGetPowerUsage(h)
print(f"nvmlDeviceGetPowerUsage: mean {(time.perf_counter()-t)/200*1e6:.1f} us")
PY
  echo; echo "dmon -s px, 5 samples at 1 s, idle"
  "$BIN" -i 0 dmon -s px -c 5
  for data in random zeros; do
    echo; echo "gpuclk stat around a BF16 GEMM 8192^3 on $data data, 12 s"
    "$BIN" -i 0 stat --json "$OUT/stat_memory_power_$data.json" -- bash -c "$(declare -f gemm_on); gemm_on 12 $data" \
      2> "$OUT/stat_memory_power_$data.txt"
    echo "exit $?"
    grep -E "Energy|Memory|Mean|Peak|SM clock|Median|Verdict" "$OUT/stat_memory_power_$data.txt" | head -14
    sleep 5
  done
  echo; echo "/metrics: gpuclk_gpu_memory_power_watts beside gpuclk_gpu_power_watts"
  "$BIN" --socket "$OUT/mp.sock" serve --listen 127.0.0.1:0 2>"$OUT/serve_mp.log" &
  local spid=$! port=""
  for _ in $(seq 100); do port=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/serve_mp.log" | head -1 | sed 's/.*://'); [ -n "$port" ] && break; sleep 0.1; done
  sleep 3
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^gpuclk_gpu_(memory_)?power_watts\{gpu="0"'
  kill $spid; wait $spid 2>/dev/null
}
section_bench_inputs() {
  echo "## gpuclk bench --input: the same kernels on zeros, a constant and random data (issue 27)"
  echo "Against perf/power_by_data.py's PyTorch figures on the same card kind (docs/results/power_by_data_h100.md)."
  "$DEVICE_TESTS" --gtest_filter='*zeros_and_constant_inputs*:*mem_every_kind*' 2>&1 | tail -4
  echo
  echo "| workload | inputs | rate | SM clock median MHz | power mean W | check |"
  echo "|---|---|---:|---:|---:|---|"
  local run
  for run in "gemm --dtype bf16" "gemm --dtype fp16" "mem --kind copy"; do
    for input in zeros constant random; do
      sleep 5  # the card cools a little between runs, as the PyTorch script lets it
      local name=${run//--dtype /}; name=${name//--kind /}; name=${name// /_}
      local file="$OUT/bench_${name}_$input.json"
      "$BIN" -i 0 bench $run --input "$input" --seconds 4 --warmup 2 --json "$file" \
        > "$OUT/bench_${name}_$input.txt" 2>&1 || echo "exit $? for bench $run --input $input"
      python3 - "$file" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(f"| {r['workload']} {r['variant']} | {r.get('input', '?')} | {r['rate']['median']} {r['unit']} "
          f"| {r['sm_clock_mhz']['median']} | {r['power_w']['mean']} | {r['check']} |")
PY
    done
  done
}

section_nccl_job() {
  echo "## nccl_job: a PyTorch NCCL job with the NCCL Inspector, followed by gpuclk serve"
  # Every GPU a rank; on several, LATE_RANK=1 plants a late rank (tests/device/nccl_job_test.sh).
  OUT="$OUT/nccl_job" tests/device/nccl_job_test.sh || status=1
}

for s in $SECTIONS; do
  # Not a pipe: the section must run in this shell so its status reaches us.
  if declare -F "section_$s" >/dev/null; then "section_$s" > >(tee -a "$OUT/device-check.log") 2>&1
  else echo "unknown section $s"; status=2; fi
done
exit $status
