"""nvmlInit variants on this driver, each in a fresh process: nvmlInit_v2, and
nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH = 2); then the first clock and power reads, and
nvmlShutdown. Timed inside the process (µs), so interpreter start-up does not count. Read-only.
    python3 perf/nvml_init_costs.py            # runs both variants 5 times each, prints a table
"""
import ctypes
import statistics
import subprocess
import sys
import time


def one(flags):
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    t0 = time.perf_counter()
    rc = lib.nvmlInit_v2() if flags is None else lib.nvmlInitWithFlags(ctypes.c_uint(flags))
    t1 = time.perf_counter()
    h = ctypes.c_void_p()
    rc_h = lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
    clk = ctypes.c_uint()
    rc_c = lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(clk))
    mw = ctypes.c_uint()
    rc_p = lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(mw))
    t2 = time.perf_counter()
    lib.nvmlShutdown()
    t3 = time.perf_counter()
    print(f"{(t1-t0)*1e6:.0f} {(t2-t1)*1e6:.0f} {(t3-t2)*1e6:.0f} {rc} {rc_h} {rc_c} {rc_p} {clk.value} {mw.value}")


if len(sys.argv) > 1:
    one(None if sys.argv[1] == "v2" else int(sys.argv[1]))
    sys.exit(0)

print("| init | init µs | handle + clock + power µs | shutdown µs | return codes (init, handle, clock, power) | SM MHz, mW |")
print("|---|---:|---:|---:|---|---|")
for variant, label in (("v2", "nvmlInit_v2"), ("2", "nvmlInitWithFlags(NO_ATTACH)")):
    procs = [subprocess.run([sys.executable, __file__, variant], capture_output=True, text=True) for _ in range(5)]
    runs = [p.stdout.split() for p in procs if p.returncode == 0 and len(p.stdout.split()) == 9]
    if not runs:  # e.g. driver 580.159.04 segfaults on the first read after NO_ATTACH
        print(f"| {label} | – | – | – | process died (exit {procs[-1].returncode}) | – |")
        continue
    med = lambda i: statistics.median(float(r[i]) for r in runs)
    print(f"| {label} | {med(0):.0f} | {med(1):.0f} | {med(2):.0f} | {' '.join(runs[-1][3:7])} | {runs[-1][7]}, {runs[-1][8]} |")
