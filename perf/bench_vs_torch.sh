#!/usr/bin/env bash
export GPUCLK_READ_ONLY=1
# gpuclk bench against PyTorch on the same GPU in the same run (issue 7's performance goal):
#   torch.matmul at M×N×K for fp32 (TF32 off), tf32 and bf16, and dst.copy_(src) on 1 GiB,
#   against our gemm and mem copy with the same sizes, timing and statistic: gpuclk-bench-probe
#   (RUNNER=probe, the default) or the gpuclk bench command itself (RUNNER=gpuclk).
# Each workload runs torch → ours → torch, and ours is compared with the mean of the two torch
# runs, so a GPU warming up (and, under the power cap, slowing down) favours neither side.
# pynvml, when present, samples the SM clock and power of each run (read-only NVML getters).
#
# Usage (on the GPU machine, from the repository root, build/device carried):
#   perf/bench_vs_torch.sh                 RUNNER=gpuclk perf/bench_vs_torch.sh
# Environment: RUNNER (probe | gpuclk), PROBE (default build/device/src/bench/gpuclk-bench-probe),
#   GPUCLK (default build/device/gpuclk; gets the GPU by PCI bus id with -i), DEVICE (CUDA ordinal,
#   0), SIZE (8192) or M/N/K, COPY_MIB (1024), SECONDS (3, measured window per run), WARMUP (1),
#   STRICT=1 (exit 2 when a goal is missed), OUT (logs and results.json go there when set).
# Exit: 0 ran and every check passed; 1 the probe or PyTorch failed or a result check failed;
#   2 with STRICT=1, a ratio below its goal (gemm ≥ 0.98, copy ≥ 0.97).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNNER=${RUNNER:-probe}
PROBE=${PROBE:-build/device/src/bench/gpuclk-bench-probe}
GPUCLK=${GPUCLK:-build/device/gpuclk}
if [ "$RUNNER" = gpuclk ]; then
  if [ ! -x "$GPUCLK" ]; then
    echo "bench_vs_torch: gpuclk not found at $GPUCLK (cmake --preset device && cmake --build build/device --target gpuclk)" >&2
    exit 1
  fi
  PROBE=$GPUCLK
elif [ "$RUNNER" != probe ]; then
  echo "bench_vs_torch: RUNNER must be probe or gpuclk" >&2
  exit 1
elif [ ! -x "$PROBE" ]; then
  echo "bench_vs_torch: probe not found at $PROBE (cmake --preset device && cmake --build build/device --target gpuclk-bench-probe)" >&2
  exit 1
fi
LOG_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$LOG_DIR"
export PROBE GPUCLK RUNNER LOG_DIR

{
  echo "== $(date -u +%FT%TZ) $(hostname)"
  nvidia-smi --query-gpu=index,name,uuid,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv 2>&1 || true
  ldd "$PROBE" 2>&1 || true
} >"$LOG_DIR/environment.log"

set +e
python3 - "$@" <<'EOF' 2>&1 | tee "$LOG_DIR/bench_vs_torch.log"
import ctypes, json, os, statistics, subprocess, sys, threading, time

PROBE = os.environ["PROBE"]
RUNNER = os.environ.get("RUNNER", "probe")
GPUCLK = os.environ.get("GPUCLK", "")
LOG_DIR = os.environ["LOG_DIR"]
DEVICE = int(os.environ.get("DEVICE", "0"))
SIZE = int(os.environ.get("SIZE", "8192"))
M, N, K = (int(os.environ.get(v, SIZE)) for v in ("M", "N", "K"))
COPY_MIB = int(os.environ.get("COPY_MIB", "1024"))
SECONDS = float(os.environ.get("SECONDS", "3"))
WARMUP = float(os.environ.get("WARMUP", "1"))
STRICT = os.environ.get("STRICT", "0") == "1"
REPETITION_SECONDS = 0.1  # the probe's default
MIN_REPETITIONS = 5
GOALS = {"gemm": 0.98, "copy": 0.97}

import torch

torch.cuda.set_device(DEVICE)
dev = torch.device("cuda", DEVICE)

# ---- NVML sampler (optional): SM clock and power per labelled phase --------------------------
class Sampler:
    def __init__(self):
        self.samples, self.label, self.ok = [], None, False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = None
            count = pynvml.nvmlDeviceGetCount()
            if count == 1:
                self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            else:
                # NVML numbers GPUs by PCI order, CUDA by speed unless told: match the bus id.
                props = torch.cuda.get_device_properties(DEVICE)
                for i in range(count):
                    h = pynvml.nvmlDeviceGetHandleByIndex(i)
                    pci = pynvml.nvmlDeviceGetPciInfo(h)
                    if (pci.bus, pci.device, pci.domain) == (props.pci_bus_id, props.pci_device_id, props.pci_domain_id):
                        self.handle = h
            self.ok = self.handle is not None
        except Exception as e:  # no pynvml, or an old torch without pci fields
            print(f"# NVML sampler off: {e}")
        if self.ok:
            threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        n = self.nvml
        while True:
            label = self.label
            if label:
                try:
                    clk = n.nvmlDeviceGetClockInfo(self.handle, n.NVML_CLOCK_SM)
                    mw = n.nvmlDeviceGetPowerUsage(self.handle)
                    self.samples.append((label, time.time(), clk, mw / 1000.0))
                except Exception:
                    pass
            time.sleep(0.05)

    def summary(self, label):
        s = [x for x in self.samples if x[0] == label]
        if not s:
            return None, None
        return statistics.median(x[2] for x in s), statistics.mean(x[3] for x in s)

sampler = Sampler()

# ---- PyTorch side: the probe's method (warm-up, ~0.1 s repetitions queued back to back, median) --
def torch_measure(op, work_per_launch):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); op(); stop.record(); stop.synchronize()
    per_launch = start.elapsed_time(stop) / 1e3
    t0 = time.time()
    while time.time() - t0 < WARMUP:
        chunk = max(1, round(REPETITION_SECONDS / max(per_launch, 1e-6)))
        start.record()
        for _ in range(chunk):
            op()
        stop.record(); stop.synchronize()
        per_launch = start.elapsed_time(stop) / 1e3 / chunk
    per_rep = max(1, round(REPETITION_SECONDS / max(per_launch, 1e-6)))
    reps = max(MIN_REPETITIONS, round(SECONDS / (per_rep * per_launch)))
    events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
    torch.cuda.synchronize()
    events[0].record()
    for r in range(reps):
        for _ in range(per_rep):
            op()
        events[r + 1].record()
    events[-1].synchronize()
    rates = [work_per_launch * per_rep / (events[r].elapsed_time(events[r + 1]) / 1e3) for r in range(reps)]
    return statistics.median(rates)

def torch_gemm(dtype_name):
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
    # Same input distribution as the probe (uniform in [-1, 1)): under a power cap the data's bit
    # activity sets the power and so the clock.
    a = torch.empty(M, K, device=dev, dtype=dtype).uniform_(-1, 1)
    b = torch.empty(K, N, device=dev, dtype=dtype).uniform_(-1, 1)
    c = torch.empty(M, N, device=dev, dtype=dtype)
    rate = torch_measure(lambda: torch.matmul(a, b, out=c), 2.0 * M * N * K)
    del a, b, c
    torch.cuda.empty_cache()
    return rate

def torch_copy():
    elements = COPY_MIB * 2**20 // 4
    src = torch.empty(elements, device=dev, dtype=torch.float32).uniform_(-1, 1)
    dst = torch.empty_like(src)
    rate = torch_measure(lambda: dst.copy_(src), 2.0 * elements * 4)
    del src, dst
    torch.cuda.empty_cache()
    return rate

# ---- our side: the probe or gpuclk bench, one process per workload ---------------------------
failures = []

def gpuclk_select():
    # gpuclk's -i takes NVML's view of a GPU; CUDA's ordinal DEVICE is found by PCI bus id.
    try:
        p = torch.cuda.get_device_properties(DEVICE)
        return ["-i", f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0"]
    except AttributeError:
        return ["-i", str(DEVICE)]

def ours_command(args, seconds, warmup):
    if RUNNER == "probe":
        return [PROBE, "--devices", str(DEVICE), "--seconds", str(seconds), "--warmup", str(warmup)] + args
    if args[:2] == ["--min-repetitions", "1"]:  # a probe-only option; gpuclk keeps its minimum
        args = args[2:]
    return ([GPUCLK] + gpuclk_select() + ["--format", "json", "bench"] + args
            + ["--seconds", str(seconds), "--warmup", str(warmup)])

def from_gpuclk(report):
    """gpuclk bench's JSON report in the probe's shape (rates in FLOP/s and B/s)."""
    results = []
    for r in report.get("results", []):
        scale = 1e12 if r["unit"] == "TFLOP/s" else 1e9
        check = r.get("check", "")
        results.append({"workload": r["workload"], "variant": r["variant"],
                        "unit": "FLOP/s" if r["unit"].endswith("FLOP/s") else "B/s",
                        "rate": {"median": r["rate"]["median"] * scale},
                        "details": r.get("details", {}),
                        "verification": {"checked": not check.startswith("skipped"),
                                         "passed": check.startswith("passed"),
                                         "failures": check, "samples": "", "max_error": 0}})
    return {"results": results, "errors": [{"error": e.get("message", "")} for e in report.get("errors", [])]}

def probe(args, log_name, env=None, seconds=SECONDS, warmup=WARMUP):
    cmd = ours_command(args, seconds, warmup)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    with open(os.path.join(LOG_DIR, log_name + ".json"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(LOG_DIR, log_name + ".stderr"), "w") as f:
        f.write(proc.stderr)
    try:
        out = json.loads(proc.stdout)
        if RUNNER == "gpuclk":
            out = from_gpuclk(out)
    except json.JSONDecodeError:
        out = {"results": [], "errors": [{"error": proc.stderr.strip() or "no JSON output"}]}
    if proc.returncode != 0 or out.get("errors"):
        failures.append(f"{' '.join(cmd)}: exit {proc.returncode}: "
                        + "; ".join(e.get("error", "") for e in out.get("errors", [])))
    for r in out.get("results", []):
        v = r["verification"]
        if v["checked"] and not v["passed"]:
            failures.append(f"{r['workload']} {r['variant']}: check failed "
                            f"({v['failures']}/{v['samples']}, max error {v['max_error']:.3g})")
    return out.get("results", [])

def cublaslt_version_in_this_process():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libcublasLt.so" in line}
    for p in sorted(paths):
        try:
            return p, ctypes.CDLL(p).cublasLtGetVersion()
        except OSError:
            pass
    return None, None

rows = []  # (workload, torch_a, ours, torch_b, goal, clocks)
results_json = {"device": DEVICE, "m": M, "n": N, "k": K, "copy_mib": COPY_MIB,
                "seconds": SECONDS, "warmup": WARMUP, "torch": torch.__version__, "rows": []}

def timed(label, fn):
    sampler.label = label
    try:
        return fn()
    finally:
        sampler.label = None

def compare(name, torch_fn, probe_args, pick, goal_kind, env=None, log=None):
    t_a = timed(name + "/torch1", torch_fn)
    results = timed(name + "/ours", lambda: probe(probe_args, log or name.replace(" ", "_"), env))
    t_b = timed(name + "/torch2", torch_fn)
    ours = pick(results)
    rows.append((name, t_a, ours, t_b, goal_kind))
    return results

# Preflight: a tiny checked GEMM, so a probe that cannot run fails in seconds, not minutes.
probe(["--min-repetitions", "1", "gemm", "--dtype", "bf16", "--m", "256", "--n", "256", "--k", "256"],
      "preflight", seconds=0.05, warmup=0)
if failures:
    print("FAILED: " + failures[0])
    sys.exit(1)

print(f"# torch {torch.__version__}, device {DEVICE}: {torch.cuda.get_device_name(DEVICE)}")
_x = torch.ones(64, 64, device=dev, dtype=torch.bfloat16)
torch.matmul(_x, _x)  # loads torch's cuBLAS before asking which one it is
torch.cuda.synchronize()
torch_lib, torch_ver = cublaslt_version_in_this_process()
print(f"# torch's cuBLASLt: {torch_lib} (version {torch_ver})")

def median_of(variant_prefix):
    def pick(results):
        for r in results:
            if r["variant"].startswith(variant_prefix):
                return r["rate"]["median"]
        return None
    return pick

def version_number(text):
    digits = "".join(ch for ch in str(text or "") if ch.isdigit())
    return int(digits) if digits else None

ours_lib_version = None
for dtype in ("fp32", "tf32", "bf16"):
    res = compare(f"gemm {dtype}", lambda d=dtype: torch_gemm(d),
                  ["gemm", "--dtype", dtype, "--m", str(M), "--n", str(N), "--k", str(K)],
                  median_of(dtype), "gemm", log=f"gemm_{dtype}")
    for r in res:
        ours_lib_version = r["details"].get("library", ours_lib_version)
print(f"# probe's cuBLASLt: {ours_lib_version}")

# If torch brought its own cuBLAS and it differs from the system's, also run ours on torch's
# library: it tells the kernel choice apart from the library version.
if torch_lib and torch_ver and version_number(ours_lib_version) not in (None, torch_ver):
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(torch_lib) + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    for dtype in ("fp32", "tf32", "bf16"):
        compare(f"gemm {dtype} (torch's cuBLAS)", lambda d=dtype: torch_gemm(d),
                ["gemm", "--dtype", dtype, "--m", str(M), "--n", str(N), "--k", str(K)],
                median_of(dtype), "gemm", env=env, log=f"gemm_{dtype}_torch_cublas")

copy_args = ["mem", "--kind", "copy,copy_kernel", "--mib", str(COPY_MIB)]
res = compare("copy", torch_copy, copy_args, median_of("copy "), "copy", log="mem_copy")
kernel = median_of("copy_kernel")(res)
if kernel is not None:
    # The kernel ran in the same window between the same two torch runs.
    rows.append(("copy (kernel)", rows[-1][1], kernel, rows[-1][3], "copy"))

extra = probe(["mem", "--kind", "triad", "--mib", str(COPY_MIB)], "mem_triad") + probe(["fma"], "fma")

# ---- table ----------------------------------------------------------------------------------
def fmt_rate(x, unit):
    if x is None:
        return "failed"
    return f"{x / 1e12:8.2f} T{unit}"

def clock_text(label):
    mhz, watts = sampler.summary(label)
    return f"{mhz:5.0f} MHz {watts:4.0f} W" if mhz else ""

print()
hdr = f"{'workload':32} {'torch (mean of 2)':>18} {'ours':>14} {'ours/torch':>10} {'goal':>6}  {'torch runs':>23}  clocks torch | ours"
print(hdr)
print("-" * len(hdr))
missed = []
for name, t_a, ours, t_b, goal_kind in rows:
    unit = "B/s" if goal_kind == "copy" else "FLOP/s"
    torch_mean = (t_a + t_b) / 2
    ratio = ours / torch_mean if ours else None
    goal = GOALS[goal_kind]
    verdict = "" if ratio is None else ("ok" if ratio >= goal else "BELOW")
    base = name.split(" (")[0] if name.startswith("copy") else name
    clocks = f"{clock_text(base + '/torch1')} | {clock_text(base + '/ours')}"
    print(f"{name:32} {fmt_rate(torch_mean, unit):>18} {fmt_rate(ours, unit):>14} "
          f"{(f'{ratio:.3f}' if ratio else 'n/a'):>10} {goal:>6.2f}  "
          f"{t_a/1e12:10.2f} {t_b/1e12:10.2f}  {clocks}  {verdict}")
    results_json["rows"].append({"workload": name, "torch_runs": [t_a, t_b], "ours": ours,
                                 "ratio": ratio, "goal": goal})
    if ratio is not None and ratio < goal and "torch's cuBLAS" not in name:
        missed.append(f"{name} {ratio:.3f} < {goal}")
for r in extra:
    unit = "B/s" if r.get("unit") == "B/s" else "FLOP/s"
    print(f"{r['workload'] + ' ' + r['variant']:32} {'':>18} {fmt_rate(r['rate']['median'], unit):>14}")
    results_json["rows"].append({"workload": r["workload"] + " " + r["variant"], "ours": r["rate"]["median"]})
print()
print(f"# goal: gemm >= {GOALS['gemm']}x torch.matmul (fp32 with TF32 off, tf32, bf16), copy >= {GOALS['copy']}x dst.copy_(src)")
print(f"# logs: {LOG_DIR}")
results_json["failures"], results_json["missed"] = failures, missed
with open(os.path.join(LOG_DIR, "results.json"), "w") as f:
    json.dump(results_json, f, indent=2)
for f in failures:
    print(f"FAILED: {f}")
for m in missed:
    print(f"BELOW GOAL: {m}")
sys.exit(1 if failures else (2 if missed and STRICT else 0))
EOF
status=${PIPESTATUS[0]}
exit "$status"
