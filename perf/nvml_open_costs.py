"""What opening a GPU costs on this driver: each NVML call gpu::Device makes once per process
(its Identity probe), timed through pynvml (median of 7 calls, µs), plus nvmlInit and
nvmlShutdown. Explains gpuclk's per-invocation latency (perf/cli_latency.sh). Read-only.
"""
import statistics
import sys
import time

import pynvml as n


def timed(fn, *args, repeat=7):
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            fn(*args)
        except n.NVMLError as e:  # not supported is a cost too
            pass
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


t0 = time.perf_counter(); n.nvmlInit(); init_us = (time.perf_counter() - t0) * 1e6
h = n.nvmlDeviceGetHandleByIndex(0)
calls = {
    "GetName": (n.nvmlDeviceGetName, h), "GetUUID": (n.nvmlDeviceGetUUID, h),
    "GetSerial": (n.nvmlDeviceGetSerial, h), "GetPciInfo": (n.nvmlDeviceGetPciInfo, h),
    "GetArchitecture": (n.nvmlDeviceGetArchitecture, h),
    "GetCudaComputeCapability": (n.nvmlDeviceGetCudaComputeCapability, h),
    "GetNumGpuCores": (n.nvmlDeviceGetNumGpuCores, h), "GetMemoryBusWidth": (n.nvmlDeviceGetMemoryBusWidth, h),
    "GetMemoryInfo": (n.nvmlDeviceGetMemoryInfo, h),
    "GetMaxClockInfo x4": (lambda: [n.nvmlDeviceGetMaxClockInfo(h, c) for c in range(4)],),
    "GetMaxCustomerBoostClock x4": (lambda: [n.nvmlDeviceGetMaxCustomerBoostClock(h, c) for c in range(4)],),
    "GetDefaultApplicationsClock x4": (lambda: [n.nvmlDeviceGetDefaultApplicationsClock(h, c) for c in range(4)],),
    "GetSupportedMemoryClocks": (n.nvmlDeviceGetSupportedMemoryClocks, h),
    "GetSupportedGraphicsClocks x2": (lambda: [n.nvmlDeviceGetSupportedGraphicsClocks(h, m) for m in (2619, 1593)],),
    "GetPowerManagementLimitConstraints": (n.nvmlDeviceGetPowerManagementLimitConstraints, h),
    "GetPowerManagementDefaultLimit": (n.nvmlDeviceGetPowerManagementDefaultLimit, h),
    "GetTemperatureThreshold x4": (lambda: [n.nvmlDeviceGetTemperatureThreshold(h, t) for t in range(4)],),
    "GetMaxPcieLinkGeneration": (n.nvmlDeviceGetMaxPcieLinkGeneration, h),
    "GetMaxPcieLinkWidth": (n.nvmlDeviceGetMaxPcieLinkWidth, h),
    "GetGpuMaxPcieLinkGeneration": (n.nvmlDeviceGetGpuMaxPcieLinkGeneration, h),
    "GetSupportedClocksEventReasons": (n.nvmlDeviceGetSupportedClocksEventReasons, h),
    "GetNumaNodeId": (n.nvmlDeviceGetNumaNodeId, h),
    "GetCpuAffinity": (n.nvmlDeviceGetCpuAffinity, h, 16),
    "GetCount": (n.nvmlDeviceGetCount,), "GetHandleByIndex": (n.nvmlDeviceGetHandleByIndex, 0),
    "SystemGetDriverVersion": (n.nvmlSystemGetDriverVersion,),
    "SystemGetNVMLVersion": (n.nvmlSystemGetNVMLVersion,),
    "SystemGetCudaDriverVersion_v2": (n.nvmlSystemGetCudaDriverVersion_v2,),
}
rows = [(name, timed(*spec)) for name, spec in calls.items()]
t0 = time.perf_counter(); n.nvmlShutdown(); shutdown_us = (time.perf_counter() - t0) * 1e6
print("| NVML call (pynvml, median of 7) | µs |\n|---|---:|")
print(f"| nvmlInit (first, this process) | {init_us:.0f} |")
for name, us in sorted(rows, key=lambda r: -r[1]):
    print(f"| {name} | {us:.1f} |")
print(f"| nvmlShutdown | {shutdown_us:.0f} |")
print(f"| total of the probe calls above | {sum(us for _, us in rows):.0f} |")
