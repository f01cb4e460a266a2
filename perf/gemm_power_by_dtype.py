#!/usr/bin/env python3
"""GEMM rate, SM clock and power per data type and shape on a real GPU at its current settings.

The simulator's calibration input for tensor-core power (docs/simulator.md, "GEMM power by data
type"): for FP16, BF16, TF32, FP32 and FP8 (where torch offers it), three shapes each — large square,
medium square and a skinny K — each run for SECONDS after WARMUP with an NVML sampler every 50 ms.
Read-only: torch.matmul and NVML getters, nothing on the card is changed.

    python3 perf/gemm_power_by_dtype.py [--device 0] [--seconds 4] [--warmup 1] [--json OUT.json]
"""
import argparse
import json
import statistics
import threading
import time

import pynvml
import torch

SHAPES = {"square-8192": (8192, 8192, 8192), "square-4096": (4096, 4096, 4096), "skinny-k512": (8192, 8192, 512)}
DTYPES = ["fp16", "bf16", "tf32", "fp32", "fp8"]
POWER_CAP_BIT = 0x4


class Sampler(threading.Thread):
    def __init__(self, handle, period=0.05):
        super().__init__(daemon=True)
        self.handle, self.period, self.samples, self.stop = handle, period, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            h = self.handle
            self.samples.append((time.time(), pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                                 pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                                 pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                                 pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)))
            time.sleep(self.period)


def make_operands(dtype, m, n, k, dev):
    if dtype == "fp8":
        a = torch.empty(m, k, device=dev).uniform_(-1, 1).to(torch.float8_e4m3fn)
        b = torch.empty(n, k, device=dev).uniform_(-1, 1).to(torch.float8_e4m3fn).t()  # column-major
        one = torch.tensor(1.0, device=dev)
        out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, out=out)
    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32, "fp32": torch.float32}[dtype]
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    a = torch.empty(m, k, device=dev, dtype=torch_dtype).uniform_(-1, 1)
    b = torch.empty(k, n, device=dev, dtype=torch_dtype).uniform_(-1, 1)
    c = torch.empty(m, n, device=dev, dtype=torch_dtype)
    return lambda: torch.matmul(a, b, out=c)


def run_one(handle, dtype, shape, seconds, warmup, dev):
    m, n, k = SHAPES[shape]
    try:
        op = make_operands(dtype, m, n, k, dev)
        op()
    except Exception as e:  # torch without FP8 GEMM on this card
        return {"dtype": dtype, "shape": shape, "error": str(e).splitlines()[0][:200]}
    torch.cuda.synchronize()
    t_end = time.time() + warmup
    while time.time() < t_end:
        op()
        torch.cuda.synchronize()
    sampler = Sampler(handle)
    e0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    sampler.start()
    start, iters = time.time(), 0
    batch = 1
    while time.time() - start < seconds:
        for _ in range(batch):
            op()
        torch.cuda.synchronize()
        iters += batch
        batch = min(batch * 2, 64)
    elapsed = time.time() - start
    sampler.stop.set()
    sampler.join()
    e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    clocks = [s[1] for s in sampler.samples]
    capped = sum(1 for s in sampler.samples if s[4] & POWER_CAP_BIT)
    return {"dtype": dtype, "shape": shape, "m": m, "n": n, "k": k, "seconds": elapsed, "iterations": iters,
            "rate_tflops": 2.0 * m * n * k * iters / elapsed / 1e12,
            "energy_j": (e1 - e0) / 1000.0, "power_w_from_energy": (e1 - e0) / 1000.0 / elapsed,
            "power_w_median": statistics.median(s[2] for s in sampler.samples),
            "sm_clock_mhz_median": statistics.median(clocks), "sm_clock_mhz_p5": sorted(clocks)[len(clocks) // 20],
            "temperature_c_end": sampler.samples[-1][3], "power_capped_fraction": capped / len(sampler.samples),
            "samples": len(sampler.samples)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    pynvml.nvmlInit()
    dev = torch.device("cuda", args.device)
    props = torch.cuda.get_device_properties(dev)
    bus = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus)
    info = {"name": pynvml.nvmlDeviceGetName(handle), "driver": pynvml.nvmlSystemGetDriverVersion(),
            "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0, "torch": torch.__version__}
    results = []
    print(f"# {info['name']}, driver {info['driver']}, power limit {info['power_limit_w']:.0f} W, torch {info['torch']}")
    print(f"{'dtype':5} {'shape':12} {'TFLOP/s':>9} {'power W':>8} {'SM MHz':>7} {'p5 MHz':>7} {'capped':>7} {'temp':>5}")
    for dtype in DTYPES:
        for shape in SHAPES:
            r = run_one(handle, dtype, shape, args.seconds, args.warmup, dev)
            results.append(r)
            if "error" in r:
                print(f"{dtype:5} {shape:12} not run: {r['error']}")
                continue
            print(f"{dtype:5} {shape:12} {r['rate_tflops']:9.1f} {r['power_w_from_energy']:8.1f} "
                  f"{r['sm_clock_mhz_median']:7.0f} {r['sm_clock_mhz_p5']:7.0f} "
                  f"{100 * r['power_capped_fraction']:6.0f}% {r['temperature_c_end']:5}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": info, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
