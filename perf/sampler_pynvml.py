#!/usr/bin/env python3
"""The peer for gpuclk-sampler-overhead: the same fast reads as gpuclk's sampler, through pynvml.

One fast sample per GPU = power, SM clock, memory clock, clock event reasons, GPU temperature,
memory temperature (field value 82), utilization, memory info, P-state: the nine NVML calls of
gpuclk's fast tier (FieldSet::standard). Prints one JSON object with the CPU and wall µs per
sample per GPU. Read-only: NVML getters only.

pynvml (nvidia-ml-py) is used when importable; otherwise a ctypes binding of the same calls
(binding: "ctypes"), which is what pynvml is built on, so the figures stay comparable. The
library is libnvidia-ml.so.1, or GPUCLK_NVML_LIB for the ctypes binding (the simulator).

Usage: sampler_pynvml.py [SAMPLES]
"""
import ctypes
import json
import os
import sys
import time


def ctypes_binding():
    lib = ctypes.CDLL(os.environ.get("GPUCLK_NVML_LIB") or "libnvidia-ml.so.1")

    class Utilization(ctypes.Structure):
        _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    class FieldValue(ctypes.Structure):
        _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                    ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                    ("value", ctypes.c_ulonglong)]

    def check(rc):
        if rc != 0:
            raise RuntimeError(f"NVML error {rc}")

    class Binding:
        NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU, NVML_FI_DEV_MEMORY_TEMP = 1, 2, 0, 82

        def nvmlInit(self):
            check(lib.nvmlInit_v2())

        def nvmlDeviceGetCount(self):
            n = ctypes.c_uint()
            check(lib.nvmlDeviceGetCount_v2(ctypes.byref(n)))
            return n.value

        def nvmlDeviceGetHandleByIndex(self, i):
            h = ctypes.c_void_p()
            check(lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(i), ctypes.byref(h)))
            return h

        def _uint(self, fn, *args):
            v = ctypes.c_uint()
            check(fn(*args, ctypes.byref(v)))
            return v.value

        def nvmlDeviceGetPowerUsage(self, h):
            return self._uint(lib.nvmlDeviceGetPowerUsage, h)

        def nvmlDeviceGetClockInfo(self, h, t):
            return self._uint(lib.nvmlDeviceGetClockInfo, h, ctypes.c_int(t))

        def nvmlDeviceGetTemperature(self, h, s):
            return self._uint(lib.nvmlDeviceGetTemperature, h, ctypes.c_int(s))

        def nvmlDeviceGetPerformanceState(self, h):
            return self._uint(lib.nvmlDeviceGetPerformanceState, h)

        def nvmlDeviceGetCurrentClocksEventReasons(self, h):
            v = ctypes.c_ulonglong()
            check(lib.nvmlDeviceGetCurrentClocksEventReasons(h, ctypes.byref(v)))
            return v.value

        def nvmlDeviceGetUtilizationRates(self, h):
            u = Utilization()
            check(lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(u)))
            return u

        def nvmlDeviceGetMemoryInfo(self, h):
            m = Memory()
            check(lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)))
            return m

        def nvmlDeviceGetFieldValues(self, h, ids):
            values = (FieldValue * len(ids))()
            for i, f in enumerate(ids):
                values[i].fieldId = f
            check(lib.nvmlDeviceGetFieldValues(h, ctypes.c_int(len(ids)), values))
            return values

    return Binding()


def main():
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    try:
        import pynvml as nvml
        binding = "pynvml"
        reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    except ImportError:
        nvml = ctypes_binding()
        binding = "ctypes"
        reasons = nvml.nvmlDeviceGetCurrentClocksEventReasons
    memory_temp = getattr(nvml, "NVML_FI_DEV_MEMORY_TEMP", 82)
    nvml.nvmlInit()
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]

    def fast_sample(h):
        nvml.nvmlDeviceGetPowerUsage(h)
        nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)
        nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)
        reasons(h)
        nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)
        nvml.nvmlDeviceGetFieldValues(h, [memory_temp])
        nvml.nvmlDeviceGetUtilizationRates(h)
        nvml.nvmlDeviceGetMemoryInfo(h)
        nvml.nvmlDeviceGetPerformanceState(h)

    for h in handles:  # warm up
        for _ in range(100):
            fast_sample(h)
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    for _ in range(samples):
        for h in handles:
            fast_sample(h)
    c1, w1 = time.thread_time_ns(), time.perf_counter_ns()
    n = samples * len(handles)
    print(json.dumps({"binding": binding, "gpus": len(handles), "samples": samples,
                      "fast_sample_us": {"cpu": (c1 - c0) / n / 1e3, "wall": (w1 - w0) / n / 1e3}}))


if __name__ == "__main__":
    main()
