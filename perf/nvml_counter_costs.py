#!/usr/bin/env python3
"""What each of the service's counter reads costs in the driver, and what the same value costs
through nvmlDeviceGetFieldValues (docs/results/serve_h200.md): N calls of each, back to back and
spaced, on GPU 0. Read-only. Needs pynvml (the GPU host has it).
  python3 perf/nvml_counter_costs.py [N]"""
import statistics, sys, time
import pynvml as n

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)

def timed(name, fn, value):
    us = []
    for _ in range(N):
        t = time.perf_counter(); v = fn(); us.append((time.perf_counter() - t) * 1e6)
        time.sleep(0.05)  # spaced as the service's reads are, not back to back
    print(f"{name:58s} median {statistics.median(us):9.1f} us  max {max(us):9.1f} us  value {value(v)}")

fv = lambda ids: (lambda: n.nvmlDeviceGetFieldValues(h, ids))
fvals = lambda r: [(x.nvmlReturn, x.value.ullVal) for x in r]
timed("nvmlDeviceGetTotalEnergyConsumption", lambda: n.nvmlDeviceGetTotalEnergyConsumption(h), lambda v: v)
timed("FieldValues(TOTAL_ENERGY_CONSUMPTION)", fv([n.NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION]), fvals)
timed("nvmlDeviceGetViolationStatus(POWER)", lambda: n.nvmlDeviceGetViolationStatus(h, n.NVML_PERF_POLICY_POWER), lambda v: v.violationTime)
timed("nvmlDeviceGetViolationStatus(THERMAL)", lambda: n.nvmlDeviceGetViolationStatus(h, n.NVML_PERF_POLICY_THERMAL), lambda v: v.violationTime)
timed("FieldValues(PERF_POLICY_POWER, PERF_POLICY_THERMAL)", fv([n.NVML_FI_DEV_PERF_POLICY_POWER, n.NVML_FI_DEV_PERF_POLICY_THERMAL]), fvals)
timed("FieldValues(energy, policy power, policy thermal)", fv([n.NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, n.NVML_FI_DEV_PERF_POLICY_POWER, n.NVML_FI_DEV_PERF_POLICY_THERMAL]), fvals)
timed("nvmlDeviceGetApplicationsClock(GRAPHICS)", lambda: n.nvmlDeviceGetApplicationsClock(h, n.NVML_CLOCK_GRAPHICS), lambda v: v)
timed("nvmlDeviceGetPowerManagementLimit", lambda: n.nvmlDeviceGetPowerManagementLimit(h), lambda v: v)
def procutil():
    try: return n.nvmlDeviceGetProcessUtilization(h, 0)
    except n.NVMLError as e: return str(e)
timed("nvmlDeviceGetProcessUtilization", procutil, lambda v: v if isinstance(v, str) else len(v))
timed("nvmlDeviceGetPowerUsage", lambda: n.nvmlDeviceGetPowerUsage(h), lambda v: v)
