#!/usr/bin/env python3
"""Power, clock and rate of one GPU by the data its kernels move (issue 27's measurements).

For each case (a kernel, a shape, an input kind) a warm-up, then a steady window sampled every
100 ms through NVML: total power (the 1 s average, nvmlDeviceGetPowerUsage), power by scope from
field values 185/186 (average / instant; GPU, memory and module scopes, as far as the card answers
them), SM and memory clock, temperature, the clock event reasons; the kernel's rate from CUDA
events. Inputs: zeros, a constant, a repeated byte pattern, random normal values, random bits
(copies only: random bits in a float are NaNs and infinities). Also the idle power with a CUDA
context held, before any work and after it. Read-only: it only runs kernels.

usage: perf/power_by_data.py [--warmup S] [--seconds S] [--device N] [--json FILE] [--quick]
Prints a Markdown table; --json writes every case with its samples' medians.
"""
import argparse
import json
import statistics
import sys
import threading
import time

import pynvml as n
import torch

FI_POWER_AVERAGE = 185  # NVML_FI_DEV_POWER_AVERAGE
FI_POWER_INSTANT = 186  # NVML_FI_DEV_POWER_INSTANT
SCOPES = {"gpu": 0, "module": 1, "memory": 2}  # NVML_POWER_SCOPE_GPU, _MODULE, _MEMORY


class Sampler(threading.Thread):
    def __init__(self, handle, interval=0.1):
        super().__init__(daemon=True)
        self.h, self.interval, self.rows, self.stop_flag = handle, interval, [], threading.Event()
        self.fields = [(f, s) for f in (FI_POWER_AVERAGE, FI_POWER_INSTANT) for s in SCOPES.values()]

    def run(self):
        while not self.stop_flag.is_set():
            r = {"t": time.time()}
            try:
                r["power_w"] = n.nvmlDeviceGetPowerUsage(self.h) / 1000
                r["sm_mhz"] = n.nvmlDeviceGetClockInfo(self.h, n.NVML_CLOCK_SM)
                r["mem_mhz"] = n.nvmlDeviceGetClockInfo(self.h, n.NVML_CLOCK_MEM)
                r["temp_c"] = n.nvmlDeviceGetTemperature(self.h, n.NVML_TEMPERATURE_GPU)
                r["reasons"] = n.nvmlDeviceGetCurrentClocksEventReasons(self.h)
                values = n.nvmlDeviceGetFieldValues(self.h, self.fields)
                if not self.rows:  # which fields and scopes the card answers, once
                    print("field values (id, scope, NVML return):",
                          [(f, sc, v.nvmlReturn) for (f, sc), v in zip(self.fields, values)], file=sys.stderr)
                for (fid, scope), v in zip(self.fields, values):
                    if v.nvmlReturn == 0:
                        name = "%s_%s_w" % ("avg" if fid == FI_POWER_AVERAGE else "inst",
                                            [k for k, s in SCOPES.items() if s == scope][0])
                        r[name] = v.value.uiVal / 1000
            except (n.NVMLError, TypeError) as e:
                r["error"] = str(e)
            self.rows.append(r)
            time.sleep(self.interval)

    def stop(self):
        self.stop_flag.set()
        self.join()


def fill(t, kind):
    """Fills tensor t in place with the input kind."""
    if kind == "zeros":
        t.zero_()
    elif kind == "constant":
        t.fill_(0.7 if t.is_floating_point() else 0x55)
    elif kind == "pattern":  # bytes 0..255 repeated
        b = t.reshape(-1).view(torch.uint8)  # contiguous: a view, whatever t's shape
        b.copy_(torch.arange(b.numel(), device=t.device, dtype=torch.int64).remainder_(256).to(torch.uint8))
    elif kind == "normal":
        if t.is_floating_point():
            t.normal_()
        else:
            t.copy_(torch.randn(t.shape, device=t.device).mul_(40).clamp_(-128, 127).to(t.dtype))
    elif kind == "bits":
        t.view(torch.uint8).random_(0, 256)
    else:
        raise ValueError(kind)
    return t


def measure(name, work_per_call, call, handle, warmup, seconds, extra):
    """Runs call() back to back: warm-up, then a sampled window. Returns the case's record.
    work_per_call: the work of one call, or a function giving the work done so far (a call whose
    work varies, as a mixed case's)."""
    counted = callable(work_per_call)
    torch.cuda.synchronize()
    t = time.time()
    call()
    torch.cuda.synchronize()
    batch = max(4, int(0.05 / max(time.time() - t, 1e-6)))  # ~50 ms of work between syncs
    end = time.time() + warmup
    while time.time() < end:
        for _ in range(batch):
            call()
        torch.cuda.synchronize()
    sampler = Sampler(handle)
    sampler.start()
    start_ev, end_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls, t0 = 0, time.time()
    work0 = work_per_call() if counted else 0
    start_ev.record()
    while time.time() - t0 < seconds:
        for _ in range(batch):
            call()
        calls += batch
        torch.cuda.synchronize()
    end_ev.record()
    torch.cuda.synchronize()
    work1 = work_per_call() if counted else 0  # at once: the window ends here, not at stop()
    sampler.stop()
    gpu_s = start_ev.elapsed_time(end_ev) / 1000
    rows = [r for r in sampler.rows if "error" not in r][2:]  # the 1 s average needs a moment
    med = lambda k: statistics.median([r[k] for r in rows if k in r]) if any(k in r for r in rows) else None
    work = work1 - work0 if counted else work_per_call * calls
    rec = dict(name=name, **extra, rate=work / gpu_s, calls=calls, seconds=gpu_s)
    for k in ("power_w", "sm_mhz", "mem_mhz", "temp_c", "avg_gpu_w", "avg_memory_w", "avg_module_w",
              "inst_gpu_w", "inst_memory_w", "inst_module_w"):
        rec[k] = med(k)
    for k in ("power_w", "sm_mhz", "avg_memory_w"):  # the means too: a mixed case's median is one phase's
        vals = [r[k] for r in rows if k in r]
        rec["mean_" + k] = statistics.fmean(vals) if vals else None
    rec["power_capped_pct"] = 100 * sum(1 for r in rows if r["reasons"] & 0x4) / max(1, len(rows))
    return rec


def idle(name, handle, seconds):
    torch.cuda.synchronize()
    s = Sampler(handle)
    s.start()
    time.sleep(seconds)
    s.stop()
    rows = [r for r in s.rows if "error" not in r][2:]
    rec = dict(name=name, kind="idle", input="-", shape="-", rate=0.0)
    for k in ("power_w", "sm_mhz", "mem_mhz", "temp_c", "avg_gpu_w", "avg_memory_w", "avg_module_w",
              "inst_gpu_w", "inst_memory_w", "inst_module_w"):
        vals = [r[k] for r in rows if k in r]
        rec[k] = statistics.median(vals) if vals else None
    rec["power_capped_pct"] = 0.0
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--quick", action="store_true", help="fewer cases (a smoke test)")
    ap.add_argument("--more", action="store_true",
                    help="the cases the first run left out instead: FP8 GEMMs by input, BF16/FP16 GEMMs "
                         "on a byte pattern and random bits, a GEMM with idle gaps (mixed phases)")
    ap.add_argument("--mixed", action="store_true",
                    help="mixed phases instead: BF16 GEMMs with idle gaps at three duty cycles, GEMMs "
                         "alternating with copies, each measured over whole cycles")
    a = ap.parse_args()
    n.nvmlInit()
    torch.cuda.set_device(a.device)
    h = n.nvmlDeviceGetHandleByIndex(a.device)  # CUDA_DEVICE_ORDER=PCI_BUS_ID keeps them equal
    name = n.nvmlDeviceGetName(h)
    out = []
    torch.zeros(1, device="cuda")  # a context, no work yet
    out.append(idle("idle, context held, before any work", h, 5))
    print("GPU %d: %s; power limit %.0f W" % (a.device, name, n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000),
          file=sys.stderr)

    def case(rec):
        out.append(rec)
        print("%-44s %-9s %10.1f  %4s MHz  %6.1f W  mem %s W  capped %3.0f%%" % (
            rec["name"], rec.get("input", "-"), rec["rate"] / 1e12 if rec.get("unit") == "TFLOP/s" else rec["rate"] / 1e9,
            rec["sm_mhz"], rec["power_w"] or 0, rec.get("avg_memory_w"), rec["power_capped_pct"]), file=sys.stderr)

    W, S = a.warmup, a.seconds
    if a.more or a.mixed:
        (more_cases if a.more else mixed_cases)(case, h, W, S)
        torch.cuda.empty_cache()
        time.sleep(1)
        out.append(idle("idle, context held, after the work", h, 5))
        report(out, name, a.json)
        n.nvmlShutdown()
        return
    kinds_copy = ["zeros", "constant", "pattern", "normal", "bits"]
    # Device copy, 1 GiB
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for k in kinds_copy if not a.quick else ["zeros", "bits"]:
        fill(src, k)
        dst.zero_()
        case(measure("copy 1 GiB (dst.copy_(src))", 2 * src.numel(), lambda: dst.copy_(src), h, W, S,
                     dict(kind="copy", input=k, shape="1 GiB", unit="GB/s")))
    del src, dst
    # Elementwise add and a reduction, FP32, 256 Mi elements (1 GiB per array)
    x = torch.empty(1 << 28, device="cuda")
    y = torch.empty_like(x)
    z = torch.empty_like(x)
    for k in ["zeros", "normal"] if not a.quick else ["normal"]:
        fill(x, k)
        fill(y, k)
        case(measure("add fp32 256Mi (torch.add)", 3 * 4 * x.numel(), lambda: torch.add(x, y, out=z), h, W, S,
                     dict(kind="elementwise", input=k, shape="256Mi", unit="GB/s")))
        r = torch.empty((), device="cuda")
        case(measure("sum fp32 256Mi (torch.sum)", 4 * x.numel(), lambda: torch.sum(x, dim=0, out=r), h, W, S,
                     dict(kind="reduction", input=k, shape="256Mi", unit="GB/s")))
    del x, y, z
    # GEMMs: every dtype at 8192, inputs zeros / constant / normal
    torch.backends.cuda.matmul.allow_tf32 = False
    for dt_name, dt, tf32 in (("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
                              ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        m = 8192
        A = torch.empty(m, m, device="cuda", dtype=dt)
        B = torch.empty_like(A)
        C = torch.empty_like(A)
        for k in (["zeros", "constant", "normal"] if dt_name in ("bf16", "fp16") else ["zeros", "normal"]):
            if a.quick and k == "constant":
                continue
            fill(A, k)
            fill(B, k)
            case(measure("gemm %s %d^3" % (dt_name, m), 2 * m ** 3, lambda: torch.matmul(A, B, out=C), h, W, S,
                         dict(kind="gemm", dtype=dt_name, input=k, shape="%dx%dx%d" % (m, m, m), unit="TFLOP/s")))
        del A, B, C
        if a.quick:
            break
    torch.backends.cuda.matmul.allow_tf32 = False
    # BF16 shapes, random normal inputs: square, skinny (small K), tall, batched
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (16384, 16384, 16384),
              (16384, 16384, 512), (16384, 16384, 1024), (65536, 1024, 8192), (1024, 65536, 8192)]
    for (M, N, K) in (shapes if not a.quick else shapes[2:3]):
        A = fill(torch.empty(M, K, device="cuda", dtype=torch.bfloat16), "normal")
        B = fill(torch.empty(K, N, device="cuda", dtype=torch.bfloat16), "normal")
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        case(measure("gemm bf16 %dx%dx%d" % (M, N, K), 2 * M * N * K, lambda: torch.matmul(A, B, out=C), h, W, S,
                     dict(kind="gemm", dtype="bf16", input="normal", shape="%dx%dx%d" % (M, N, K), unit="TFLOP/s")))
        del A, B, C
    if not a.quick:
        A = fill(torch.empty(64, 2048, 2048, device="cuda", dtype=torch.bfloat16), "normal")
        B = fill(torch.empty_like(A), "normal")
        C = torch.empty_like(A)
        case(measure("gemm bf16 batched 64x2048^3 (bmm)", 64 * 2 * 2048 ** 3, lambda: torch.bmm(A, B, out=C), h, W,
                     S, dict(kind="gemm", dtype="bf16", input="normal", shape="64x2048x2048x2048", unit="TFLOP/s")))
        del A, B, C
    torch.cuda.empty_cache()
    time.sleep(1)
    out.append(idle("idle, context held, after the work", h, 5))

    report(out, name, a.json)
    n.nvmlShutdown()


def more_cases(case, h, W, S):
    """The second run's cases (--more)."""
    m = 8192
    # FP8 (torch._scaled_mm, BF16 out) on zeros, a constant and random values.
    A = torch.empty(m, m, device="cuda").to(torch.float8_e4m3fn)
    B = torch.empty(m, m, device="cuda").to(torch.float8_e4m3fn)
    C = torch.empty(m, m, device="cuda", dtype=torch.bfloat16)
    one = torch.tensor(1.0, device="cuda")
    for k in ["zeros", "constant", "normal"]:
        src = torch.empty(m, m, device="cuda")
        fill(src, k)
        if k == "normal":
            src.clamp_(-8, 8)
        A.copy_(src.to(torch.float8_e4m3fn))
        B.copy_(src.to(torch.float8_e4m3fn))
        del src
        Bt = B.t()  # column-major, as _scaled_mm wants
        case(measure("gemm fp8 %d^3" % m, 2 * m ** 3,
                     lambda: torch._scaled_mm(A, Bt, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, out=C),
                     h, W, S, dict(kind="gemm", dtype="fp8", input=k, shape="%dx%dx%d" % (m, m, m), unit="TFLOP/s")))
    del A, B, C
    # BF16 and FP16 on a byte pattern and on random bits (NaN/Inf patterns cleared: bits of the
    # exponent field all ones would make the GEMM a different kernel's work).
    for dt_name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        A = torch.empty(m, m, device="cuda", dtype=dt)
        B = torch.empty_like(A)
        C = torch.empty_like(A)
        for k in ["pattern", "bits"]:
            fill(A, k)
            fill(B, k)
            A.nan_to_num_(0.0, 1.0, -1.0)
            B.nan_to_num_(0.0, 1.0, -1.0)
            case(measure("gemm %s %d^3" % (dt_name, m), 2 * m ** 3, lambda: torch.matmul(A, B, out=C), h, W, S,
                         dict(kind="gemm", dtype=dt_name, input=k, shape="%dx%dx%d" % (m, m, m), unit="TFLOP/s")))
        del A, B, C
    # Mixed phases: BF16 8192^3 GEMMs for ~0.6 s, then 0.4 s with the context held and nothing launched.
    A = fill(torch.empty(m, m, device="cuda", dtype=torch.bfloat16), "normal")
    B = fill(torch.empty_like(A), "normal")
    C = torch.empty_like(A)
    state = {"t": time.time()}

    def mixed():
        torch.matmul(A, B, out=C)
        if time.time() - state["t"] > 0.6:
            torch.cuda.synchronize()
            time.sleep(0.4)
            state["t"] = time.time()
    case(measure("gemm bf16 8192^3, 0.6 s on / 0.4 s idle", 2 * m ** 3, mixed, h, W, S,
                 dict(kind="mixed", dtype="bf16", input="normal", shape="%dx%dx%d" % (m, m, m), unit="TFLOP/s")))
    del A, B, C


def mixed_cases(case, h, W, S):
    """--mixed: phases that alternate within the sampled window in 1 s cycles (use --seconds 8 or
    more: the window's partial cycles at its ends move the means by up to a cycle over the
    window). The rate is the window's mean (work over the GPU time of the window, idle
    included); power, clock and temperature are the medians of the 100 ms samples (the power
    reading is NVML's 1 s average, so its median is near the cycle's mean)."""
    m = 8192
    A = fill(torch.empty(m, m, device="cuda", dtype=torch.bfloat16), "normal")
    B = fill(torch.empty_like(A), "normal")
    C = torch.empty_like(A)
    src = fill(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"), "bits")
    dst = torch.empty_like(src)
    gemm_s = 2 * m ** 3
    for on in (0.3, 0.6, 0.9):
        state = {"t": time.time()}

        def duty(on=on, state=state):
            torch.matmul(A, B, out=C)
            if time.time() - state["t"] > on:
                torch.cuda.synchronize()
                time.sleep(1 - on)
                state["t"] = time.time()
        case(measure("gemm bf16 8192^3, %.1f s on / %.1f s idle" % (on, 1 - on), gemm_s, duty, h, W, S,
                     dict(kind="mixed", dtype="bf16", input="normal", shape="%dx%dx%d" % (m, m, m),
                          unit="TFLOP/s", on_s=on, off_s=round(1 - on, 3), off="idle")))
    # GEMM 0.5 s, then 0.5 s of 1 GiB copies of random bits: the rate counted is the GEMM's. A
    # phase ends at the first call after its 0.5 s, once the GPU has drained (synchronize), so it
    # lasts a little longer than 0.5 s: gemm_share is the share of the window the GEMMs really
    # took (host time between synchronized points, when the GPU's queue is empty).
    state = {"t": time.time(), "gemm": True, "work": 0, "gemm_s": 0.0}
    marks = []

    def alternate():
        if state["gemm"]:
            torch.matmul(A, B, out=C)
            state["work"] += gemm_s
        else:
            dst.copy_(src)
        if time.time() - state["t"] > 0.5:
            torch.cuda.synchronize()
            now = time.time()
            if state["gemm"]:
                state["gemm_s"] += now - state["t"]
            state["t"], state["gemm"] = now, not state["gemm"]

    def work_so_far():  # measure() calls it synchronized, at the window's start and end
        now = time.time()
        marks.append((now, state["gemm_s"] + (now - state["t"] if state["gemm"] else 0)))
        return state["work"]
    rec = measure("gemm bf16 8192^3 0.5 s / copy 1 GiB bits 0.5 s", work_so_far, alternate, h, W, S,
                  dict(kind="mixed", dtype="bf16", input="normal", shape="%dx%dx%d" % (m, m, m),
                       unit="TFLOP/s", on_s=0.5, off_s=0.5, off="copy 1 GiB bits"))
    (t0, g0), (t1, g1) = marks[-2], marks[-1]
    rec["gemm_share"] = (g1 - g0) / (t1 - t0)
    case(rec)
    del A, B, C, src, dst


def report(out, name, json_path):
    print("| case | input | rate | SM MHz | mem MHz | power W | memory-scope avg W | module avg W | temp C | power-capped % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in out:
        unit = r.get("unit", "")
        rate = "-" if not r["rate"] else ("%.1f TFLOP/s" % (r["rate"] / 1e12) if unit == "TFLOP/s" else "%.1f GB/s" % (r["rate"] / 1e9))
        fmt = lambda v, p=1: "-" if v is None else ("%." + str(p) + "f") % v
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f |" % (
            r["name"], r.get("input", "-"), rate, fmt(r["sm_mhz"], 0), fmt(r["mem_mhz"], 0), fmt(r["power_w"]),
            fmt(r.get("avg_memory_w")), fmt(r.get("avg_module_w")), fmt(r["temp_c"], 0), r["power_capped_pct"]))
    if json_path:
        json.dump(dict(gpu=name, cases=out), open(json_path, "w"), indent=1)


if __name__ == "__main__":
    main()
