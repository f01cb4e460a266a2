#!/usr/bin/python3
"""Fits the simulator's H100 power and GEMM-shape parameters to what the card did (issue 27).

The steady state of sim/model/physics.cpp, in Python: a kernel at SM clock f draws

    P(f) = static + leak/°C × (T − T_ref) + memory interface
           + s(f) × [clock tree + pipes × d(pipe) + load/store × DRAM util × d(ls)]
           + DRAM J/byte × bytes/s × d(dram)

with s(f) = (V(f)/V(f_max))² f/f_max, and d(x) = 1 − share_x × (1 − a): the part of a term that
the data's switching activity `a` (zeros 0, random 1) scales. The clock is the highest one at
which P(f) ≤ the power limit, and the tensor pipes' data-independent peak (peak_w[dtype] × s(f) ×
pipe utilisation) ≤ the limit too (the driver caps GEMMs on zeros at 1575-1845 MHz while they
draw 420-580 W: it holds the worst case, not the average). A GEMM runs at

    rate = flop / (flop / (peak(f) × base[dtype] × waves × K/(K+K0[dtype])) + t0)

waves: the share of the last wave of output tiles (128×256, 132 SMs) that is full; t0: a fixed
cost per GEMM call (launch and tail).

Inputs: docs/results/raw/power_by_data_h100.json (issue 27's measurements: data kinds, BF16 shapes,
copies) and docs/results/raw/gemm_power_by_dtype_h100.json (five dtypes at three shapes, random
data). The cases marked HOLD are kept out of the fit; the table reports their error separately.
Least squares on the relative errors with scipy (Debian's python3-scipy), or a coordinate search
without it.

    python3 sim/tools/fit_power.py            # fit, print the parameters and the tables
    python3 sim/tools/fit_power.py --check    # only the tables at the built-in parameters
    python3 sim/tools/fit_power.py --scenario sim/scenarios/h100-power-by-data.toml
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RAW = os.path.join(ROOT, "docs", "results", "raw")

SM_COUNT = 132
F_MAX, F_MIN = 1980.0, 345.0
MEM_MAX = 2619.0
LIMIT_W = 700.0
FLOP_PER_CLOCK = {"fp32": 256, "tf32": 2048, "fp16": 4096, "bf16": 4096, "fp8": 8192}
PEAK_BW = 3352e9
VOLT = [(345, 0.70), (1095, 0.70), (1980, 1.05)]
# Data activity of the fill kinds of perf/power_by_data.py (random normal values and random bits
# are both 1: their copies drew 552 and 555 W).
ACTIVITY_NAMES = ("constant", "pattern")

# Held out of the fit: the kinds of run issue 27 names (square BF16 4096, skinny BF16, FP16 8192,
# elementwise add, reduction, idle after work) and one data kind.
HOLD = {
    ("gemm bf16 4096x4096x4096", "normal"),
    ("gemm bf16 16384x16384x512", "normal"),
    ("gemm fp16 8192^3", "normal"),
    ("add fp32 256Mi (torch.add)", "normal"),
    ("sum fp32 256Mi (torch.sum)", "normal"),
    ("idle, context held, after the work", "-"),
    ("copy 1 GiB (dst.copy_(src))", "bits"),
    ("gemm bf16 65536x1024x8192", "normal"),
}

# Parameters: sim/scenarios/models/h100-sxm5-80gb.toml's (what --check evaluates); the fit starts
# from them and prints what it found.
P0 = {
    "static_w": 51.8, "t_ref": 34.0, "leak_per_c": 1.1, "memif_w": 20.0, "clock_tree_w": 46.6,
    "full_fp32": 700, "full_tf32": 1242, "full_fp16": 1572, "full_bf16": 1344, "full_fp8": 1729,
    "busyfrac_fp32": 0, "busyfrac_tf32": 702 / 1242, "busyfrac_fp16": 1 / 1572,
    "busyfrac_bf16": 144 / 1344, "busyfrac_fp8": 97 / 1729,
    "peak_tf32": 911, "peak_fp16": 1349, "peak_bf16": 1185,
    "ls_full_w": 318.5, "dram_pj": 40,
    "share_fp32": 0.50, "share_tf32": 0.61, "share_fp16": 0.67, "share_bf16": 0.63,
    "share_fp8": 0.63, "share_ls": 0.41, "share_dram": 0.2,
    "act_constant": 0.06, "act_pattern": 0.45,
    "base_fp32": 0.803, "base_tf32": 0.969, "base_fp16": 0.968, "base_bf16": 0.975,
    "base_fp8": 0.980,
    "k0_fp32": 31, "k0_tf32": 215, "k0_fp16": 170, "k0_bf16": 179, "k0_fp8": 535,
    "t0_us": 11.8, "tile_q128": 0.99, "tile_q64": 0.5, "reread": 1.5, "l2_resident": 0,
    "mem_eff": 0.895, "mem_scope_idle_w": 41, "mem_scope_pj": 47,
    "tile_pj": 11.2, "tile_pj_fp32": 39.2, "tile_share": 0.34,
}
# What the stages fit (the rest is fixed: the model file's values, or the idle points' leakage).
FIT = ["base_" + d for d in FLOP_PER_CLOCK] + ["k0_" + d for d in FLOP_PER_CLOCK] + [
    "t0_us", "tile_q128", "tile_q64", "ls_full_w", "share_ls", "act_constant", "act_pattern",
    "reread", "l2_resident"] + ["full_" + d for d in FLOP_PER_CLOCK] + [
    "busyfrac_" + d for d in FLOP_PER_CLOCK] + ["share_" + d for d in ("bf16", "fp16", "tf32", "fp32")] + [
    "peak_" + d for d in ("bf16", "fp16", "tf32")]
BOUNDS = {"busyfrac_tf32": (0, 1), "busyfrac_fp16": (0, 1), "busyfrac_bf16": (0, 1),
          "busyfrac_fp8": (0, 1), "tile_q128": (0.5, 1), "tile_q64": (0.5, 1), "reread": (1, 20), "share_tf32": (0, 1), "share_fp16": (0, 1), "share_bf16": (0, 1), "share_fp32": (0, 1), "l2_resident": (0, 1), "share_ls": (0, 1), "share_dram": (0, 1), "act_constant": (0, 1),
          "act_pattern": (0, 1)}


def volt(f):
    for (f0, v0), (f1, v1) in zip(VOLT, VOLT[1:]):
        if f <= f1:
            return v0 + (v1 - v0) * (max(f, f0) - f0) / (f1 - f0)
    return VOLT[-1][1]


def dyn(f):
    return (volt(f) / volt(F_MAX)) ** 2 * f / F_MAX


def activity(p, kind):
    if kind in ("zeros",):
        return 0.0
    if kind in ("normal", "bits", "random", "-"):
        return 1.0
    return p["act_" + kind]


# Bytes per element of the operands and of the result (FP8 GEMMs write BF16).
ELT_AB = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
ELT_C = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 2}
L2_BYTES = 50 * 2 ** 20


def gemm_dram_bytes(p, dt, m, n, k, batch):
    """DRAM bytes per GEMM call: the operands read `reread` times through L2, the result once;
    a problem whose operands and result fit in L2 together moves only `l2_resident` of that."""
    ab = ELT_AB[dt] * (m * k + k * n) * batch
    c = ELT_C[dt] * m * n * batch
    moved = ab * p["reread"] + c
    return moved * (p["l2_resident"] if ab + c <= L2_BYTES else 1.0)


def waves(p, m, n, batch, tile=False):
    """The output tile a library would pick (the one that fills the SMs best), how full its waves
    are times that tile's own efficiency relative to 128×256, and the number of waves (and, with
    tile, the tile's m and n)."""
    best = (0.0, 1, (128, 256))
    for tm, tn, q in ((128, 256, 1.0), (128, 128, p["tile_q128"]), (64, 128, p["tile_q64"])):
        tiles = math.ceil(m / tm) * math.ceil(n / tn) * batch
        count = math.ceil(tiles / SM_COUNT)
        if q * tiles / (count * SM_COUNT) > best[0]:
            best = (q * tiles / (count * SM_COUNT), count, (tm, tn))
    return best if tile else best[:2]


def tile_bytes_per_flop(p, dt, m, n, k, batch):
    """Operand traffic through L2 per FLOP: a tm × tn output tile reads (tm + tn) × K elements for
    2 tm tn K FLOPs; none when operands and result fit in L2 together (physics.cpp)."""
    ab = ELT_AB[dt] * (m * k + k * n) * batch
    c = ELT_C[dt] * m * n * batch
    if ab + c <= L2_BYTES:
        return 0.0
    tm, tn = waves(p, m, n, batch, tile=True)[2]
    return ELT_AB[dt] * (tm + tn) / (2.0 * tm * tn)


def memory_scope(p, case, rate, bw, a):
    """NVML's memory scope: idle + J/byte × DRAM bytes of a memory kernel; under a GEMM its tile
    traffic through L2 instead (tile_pj, FP32's SIMT kernels tile_pj_fp32)."""
    d = lambda share: 1 - share * (1 - a)
    if case["kind"] == "gemm":
        pj = p["tile_pj_fp32"] if case["dtype"] == "fp32" else p["tile_pj"]
        tile = tile_bytes_per_flop(p, case["dtype"], *case["mnkb"]) * rate
        return p["mem_scope_idle_w"] + pj * 1e-12 * tile * d(p["tile_share"])
    return p["mem_scope_idle_w"] + p["mem_scope_pj"] * 1e-12 * bw * d(p["share_dram"])


def gemm_rate(p, dt, m, n, k, batch, f):
    """FLOP/s, the peak at f, and the share of the time a kernel runs (the rest is t0)."""
    peak = FLOP_PER_CLOCK[dt] * SM_COUNT * f * 1e6
    fill, count = waves(p, m, n, batch)
    eff = p["base_" + dt] * fill * k / (k + p["k0_" + dt])
    flop = 2.0 * m * n * k * batch
    kernel_s = flop / (peak * eff)
    # A kernel's fill and drain (t0) hide behind its other waves: a one-wave GEMM pays all of it.
    t0 = p["t0_us"] * 1e-6 / count
    return flop / (kernel_s + t0), peak, kernel_s / (kernel_s + t0)


def power(p, case, f, temp):
    """Board power at clock f (and the memory-scope power, and the rate)."""
    a = activity(p, case["input"])
    d = lambda share: 1 - share * (1 - a)
    base = p["static_w"] + p["leak_per_c"] * (temp - p["t_ref"]) + p["memif_w"]
    kind = case["kind"]
    if kind == "idle":
        return base + dyn(f) * p["clock_tree_w"], p["mem_scope_idle_w"], 0.0, 0.0
    if kind == "gemm":
        dt = case["dtype"]
        rate, peak, duty = gemm_rate(p, dt, *case["mnkb"], f)
        u = rate / peak
        m, n, k, b = case["mnkb"]
        bw = rate / (2.0 * m * n * k * b) * gemm_dram_bytes(p, dt, m, n, k, b)
        # FP8: no zero-data GEMM measured; ASSUMPTION: BF16's share (share_fp8 = share_bf16).
        share = p["share_" + dt]
        busy = p["busyfrac_" + dt] * p["full_" + dt]
        pipes = (busy * duty + (p["full_" + dt] - busy) * u) * d(share)
    else:  # copy, elementwise, reduction: bandwidth-bound at mem_eff of the peak
        bw = case["bw"]
        rate = bw
        pipes, u = 0.0, 0.0
    dram_util = bw / PEAK_BW
    switching = p["clock_tree_w"] + pipes + p["ls_full_w"] * dram_util * d(p["share_ls"])
    traffic = p["dram_pj"] * 1e-12 * bw * d(p["share_dram"])
    mem_scope = memory_scope(p, case, rate, bw, a)
    return base + dyn(f) * switching + traffic, mem_scope, rate, u


def steady(p, case):
    """Clock, rate, power as the power controller settles them (continuous clock)."""
    temp = case["temp_c"]
    if case["kind"] == "idle":
        pw, ms, _, _ = power(p, case, F_MAX, temp)
        return F_MAX, 0.0, pw, ms

    def over(f):
        pw, _, _, u = power(p, case, f, temp)
        peak = 0.0
        if case["kind"] == "gemm" and ("peak_" + case["dtype"]) in p:
            peak = p["peak_" + case["dtype"]] * dyn(f) * u
        return max(pw, peak) - LIMIT_W

    f = F_MAX
    if over(F_MAX) > 0:
        lo, hi = F_MIN, F_MAX
        for _ in range(40):
            mid = (lo + hi) / 2
            if over(mid) > 0:
                hi = mid
            else:
                lo = mid
        f = lo
    pw, ms, rate, _ = power(p, case, f, temp)
    return f, rate, pw, ms


def fit_memory_scope(p, cases):
    """Stage 4 (the memory scope alone; total power does not depend on it): J per byte of a GEMM's
    tile traffic (tensor types together, FP32 apart) and the part the data scales, at the card's
    rates, on the fitted GEMMs that do not fit in L2."""
    from scipy.optimize import least_squares
    gemms = [c for c in cases if c["kind"] == "gemm" and not c["hold"] and c.get("mem_w")
             and tile_bytes_per_flop(p, c["dtype"], *c["mnkb"]) > 0]
    keys = ["tile_pj", "tile_pj_fp32", "tile_share"]

    def residuals(x):
        q = dict(p, **dict(zip(keys, x)))
        return [memory_scope(q, c, c["rate"], 0, activity(q, c["input"])) / c["mem_w"] - 1
                for c in gemms]

    res = least_squares(residuals, [p[k] for k in keys], bounds=([0, 0, 0], [200, 200, 1]))
    return dict(p, **dict(zip(keys, res.x)))


# The cards: their measurements (power_by_data runs, then the GEMMs per dtype where there are any)
# and the peak DRAM bandwidth of their model file.
# mem_scope: the model file's memory scope at idle and per DRAM byte (from the copies).
CARDS = {
    "h100": {"runs": ["power_by_data_h100.json"], "dtypes": "gemm_power_by_dtype_h100.json",
             "peak_bw": 3352e9, "mem_scope": {"mem_scope_idle_w": 41, "mem_scope_pj": 47}},
    "h200": {"runs": ["power_by_data_h200.json", "power_by_data_more_h200.json"], "dtypes": None,
             "peak_bw": 4800e9, "mem_scope": {"mem_scope_idle_w": 32, "mem_scope_pj": 27.7}},
}


def load_cases(card="h100"):
    global PEAK_BW
    PEAK_BW = CARDS[card]["peak_bw"]
    cases = []
    for run in CARDS[card]["runs"]:
        d = json.load(open(os.path.join(RAW, run)))
        for r in d["cases"]:
            if r["kind"] == "mixed":  # a phase with idle gaps: the scenario's business, not a case
                continue
            c = {"name": r["name"], "input": r["input"], "temp_c": r["temp_c"], "power_w": r["power_w"],
                 "sm_mhz": r["sm_mhz"], "rate": r["rate"], "mem_w": r.get("avg_memory_w"),
                 "src": run}
            if r["kind"] == "idle":
                c["kind"] = "idle"
            elif r["kind"] == "gemm":
                c["kind"] = "gemm"
                c["dtype"] = r["dtype"]
                if "bmm" in r["name"]:
                    c["mnkb"] = (2048, 2048, 2048, 64)
                else:
                    m, n, k = (int(x) for x in r["shape"].split("x"))
                    c["mnkb"] = (m, n, k, 1)
            else:
                c["kind"] = r["kind"]
                c["bw"] = r["rate"]  # copies, adds and sums: the bandwidth they reached
            c["hold"] = (r["name"], r["input"]) in HOLD
            cases.append(c)
    if CARDS[card]["dtypes"]:
        d = json.load(open(os.path.join(RAW, CARDS[card]["dtypes"])))
        for r in d["results"]:
            if "error" in r:
                continue
            cases.append({"name": "dtypes %s %s" % (r["dtype"], r["shape"]), "input": "normal",
                          "kind": "gemm", "dtype": r["dtype"], "mnkb": (r["m"], r["n"], r["k"], 1),
                          "temp_c": r["temperature_c_end"], "power_w": r["power_w_median"],
                          "sm_mhz": r["sm_clock_mhz_median"], "rate": r["rate_tflops"] * 1e12,
                          "mem_w": None, "src": "gemm_by_dtype", "hold": False})
    return cases


def errors(p, c):
    f, rate, pw, ms = steady(p, c)
    e = {"power": pw / c["power_w"] - 1, "clock": f / c["sm_mhz"] - 1}
    if c["rate"]:
        e["rate"] = rate / c["rate"] - 1
    return e, (f, rate, pw, ms)


def loss(p, cases):
    total = 0.0
    for c in cases:
        if c["hold"]:
            continue
        e, _ = errors(p, c)
        total += sum(v * v for v in e.values())
    return total


def fit_rates(p, cases):
    """Stage 1: GEMM efficiency from the shape. At the clock the card ran, rate / peak(f) depends
    on the shape alone: base[dtype], K0[dtype], the per-call cost t0 and the smaller tiles' q."""
    from scipy.optimize import least_squares
    gemms = [c for c in cases if c["kind"] == "gemm" and not c["hold"]]
    dts = sorted({c["dtype"] for c in gemms})
    keys = ["base_" + d for d in dts] + ["k0_" + d for d in dts] + ["t0_us", "tile_q128", "tile_q64"]
    lo = [0.3] * len(dts) + [0] * len(dts) + [0, 0.5, 0.5]
    hi = [1.0] * len(dts) + [2000] * len(dts) + [100, 1, 1]

    def residuals(x):
        q = dict(p, **dict(zip(keys, x)))
        return [math.log(gemm_rate(q, c["dtype"], *c["mnkb"], c["sm_mhz"])[0] / c["rate"])
                for c in gemms]

    x0 = [min(h, max(l, p[k])) for k, l, h in zip(keys, lo, hi)]
    res = least_squares(residuals, x0, bounds=(lo, hi), x_scale="jac")
    return dict(p, **dict(zip(keys, res.x)))


def fit_memory_kernels(p, cases):
    """Stage 2: copies, adds and sums at 1980 MHz: the SM side of a byte (ls_full_w), the part of
    it the data scales (share_ls) and the activity of a constant and of a byte pattern."""
    from scipy.optimize import least_squares
    mem = [c for c in cases if c["kind"] in ("copy", "elementwise", "reduction") and not c["hold"]]
    keys = ["ls_full_w", "share_ls", "act_constant", "act_pattern"]

    def residuals(x):
        q = dict(p, **dict(zip(keys, x)))
        return [power(q, c, c["sm_mhz"], c["temp_c"])[0] / c["power_w"] - 1 for c in mem]

    res = least_squares(residuals, [p[k] for k in keys], bounds=([0, 0, 0, 0], [2000, 1, 1, 1]))
    return dict(p, **dict(zip(keys, res.x)))


def fit_gemm_power(p, cases):
    """Stage 3: each dtype's pipe power at the operating points the card ran (its clock, its rate,
    its temperature): busy and full from random data (linear), the data share from zeros and a
    constant, the data-independent peak from the clock the zero-data GEMM held."""
    import numpy as np
    from scipy.optimize import lsq_linear
    p = dict(p)
    gemms = [c for c in cases if c["kind"] == "gemm" and not c["hold"]]
    for dt in sorted({c["dtype"] for c in gemms}):
        rows, rhs = [], []
        for c in gemms:
            if c["dtype"] != dt or activity(p, c["input"]) != 1:
                continue
            # what the rest of the board draws at this point, pipes at zero
            q = dict(p, **{"full_" + dt: 0.0})
            rest, _, rate, _ = power(q, c, c["sm_mhz"], c["temp_c"])
            _, peak, duty = gemm_rate(p, dt, *c["mnkb"], c["sm_mhz"])
            u = c["rate"] / peak
            s = dyn(c["sm_mhz"])
            # busy × duty + (full − busy) × u = busy × (duty − u) + full × u
            rows.append([s * (duty - u), s * u])
            rhs.append(c["power_w"] - rest)
        if len(rows) >= 2:
            a, b = np.array(rows), np.array(rhs)
            w = 1 / b.clip(min=50)  # relative errors
            sol = lsq_linear(a * w[:, None], b * w, bounds=([0, 0], [5000, 5000])).x
            busy, full = sol
            p["full_" + dt] = max(full, busy)
            p["busyfrac_" + dt] = busy / p["full_" + dt] if p["full_" + dt] else 0
        shares, peaks = [], []
        for c in gemms:
            a_ = activity(p, c["input"])
            # zeros and a constant only: a byte pattern is the copies' measure of activity (a
            # GEMM's operands through nan_to_num are other data), checked, not fitted
            if c["dtype"] != dt or c["input"] not in ("zeros", "constant"):
                continue
            q = dict(p, **{"share_" + dt: 0.0})
            full_data, _, _, u = power(q, c, c["sm_mhz"], c["temp_c"])
            qz = dict(q, **{"full_" + dt: 0.0})
            rest = power(qz, c, c["sm_mhz"], c["temp_c"])[0]
            pipes = full_data - rest
            if pipes > 0:
                d = (c["power_w"] - rest) / pipes
                shares.append((1 - d) / (1 - a_))
            if c["sm_mhz"] < F_MAX - 15:  # the clock was held below the top: the peak limit
                peaks.append(LIMIT_W / (dyn(c["sm_mhz"]) * u))
        if shares:
            p["share_" + dt] = min(1.0, max(0.0, sum(shares) / len(shares)))
        if peaks:
            p["peak_" + dt] = sum(peaks) / len(peaks)
    return p


def fit(p, cases):
    """The three stages, with the DRAM traffic of a GEMM (operand re-reads, L2 residency) chosen
    on a grid by the whole forward model's error."""
    best = None
    for reread in (1, 1.5, 2, 3, 4, 5, 6):
        for resident in (0, 0.25, 0.5, 1):
            q = dict(p, reread=reread, l2_resident=resident)
            q = fit_gemm_power(fit_memory_kernels(fit_rates(q, cases), cases), cases)
            q = fit_memory_scope(q, cases)
            lq = loss(q, cases)
            if best is None or lq < best[0]:
                best = (lq, q)
    return best[1]


def table(p, cases, held):
    rows = []
    worst = 0.0
    for c in cases:
        if c["hold"] != held:
            continue
        e, (f, rate, pw, ms) = errors(p, c)
        worst = max([worst] + [abs(v) for v in e.values()])
        unit = 1e12 if c["kind"] == "gemm" else 1e9
        rows.append("| %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %s |" % (
            c["name"], c["input"],
            "%.0f / %.0f" % (c["rate"] / unit, rate / unit) if c["rate"] else "-",
            c["sm_mhz"], f, c["power_w"], pw,
            "%.0f / %.0f" % (c["mem_w"], ms) if c.get("mem_w") else "-"))
    head = ["| case | input | rate (TFLOP/s or GB/s) card / model | SM MHz | power W | memory W |",
            "|---|---|---|---|---|---|"]
    return "\n".join(head + rows), worst


SCENARIO_HEAD = """# {stem} — the run of perf/power_by_data.py on one {card} (docs/results/{doc}),
# phase by phase in the order it ran: idle with a context held, copies, an elementwise add and a
# sum, GEMMs of four dtypes on zeros, a constant and random values, BF16 GEMMs of eight shapes,
# idle again. Each case ran 2 s of warm-up and 4 s measured: each phase is 6 s of work at the
# card's rate. The card idled at {idle_c:g} C with {idle_w} W and reached {hot_c:g} C at {hot_w} W: this
# board's cooling (ambient_c, cooling_factor below) differs from the model's typical one.
# sim/model/calibration.cpp (power_by_data_table) compares each phase with the card; the cases
# sim/tools/fit_power.py kept out of the fit are marked there. Inputs: input = "zeros",
# "constant", "pattern" or "random" (normal values and random bits are both random).
# Written by `sim/tools/fit_power.py --scenario` from docs/results/raw/{json}.

[node]
description = "1x {card}: perf/power_by_data.py's cases (data kinds, dtypes, GEMM shapes)"
gpu_model = "{model}"
gpu_count = 1
privileged = true
cpu_count = 16
numa_nodes = 1
nvswitch = false

[gpu_defaults]
workload = "power_by_data"

[[gpu]]
index = 0
ambient_c = {ambient:.1f}
cooling_factor = {cooling:.2f}

[workloads.power_by_data]
start_s = 0
repeat = false
process = {{ pid = 52200, name = "python3 perf/power_by_data.py", memory_gib = 8 }}
"""


def write_scenario(path, json_name="power_by_data_h100.json", model="h100-sxm5-80gb"):
    """sim/scenarios/h100-power-by-data.toml: one phase per case, 6 s of work at the card's rate,
    on a board whose ambient and cooling give the card's idle and hottest readings."""
    d = json.load(open(os.path.join(RAW, json_name)))
    inputs = {"zeros": "zeros", "constant": "constant", "pattern": "pattern", "normal": "random",
              "bits": "random"}
    idle = d["cases"][0]
    hot = max(d["cases"], key=lambda c: c["temp_c"])
    r_total = (hot["temp_c"] - idle["temp_c"]) / (hot["power_w"] - idle["power_w"])
    die_k, sink_k = 0.025, 0.033  # the H100/H200 model's thermal stages
    stem = os.path.splitext(os.path.basename(path))[0]
    out = [SCENARIO_HEAD.format(
        stem=stem, card=d["gpu"], doc=json_name.replace(".json", ".md"), json=json_name, model=model,
        idle_c=idle["temp_c"], idle_w=round(idle["power_w"]), hot_c=hot["temp_c"], hot_w=round(hot["power_w"]),
        ambient=idle["temp_c"] - r_total * idle["power_w"], cooling=(r_total - die_k) / sink_k)]
    for i, c in enumerate(d["cases"]):
        lines = ["", "[[workloads.power_by_data.phases]]",
                 'name = "case%02d"  # %s, %s' % (i, c["name"], c["input"])]
        if c["kind"] == "idle":
            lines += ['kind = "idle"', "seconds = 5"]
        elif c["kind"] == "gemm":
            if "bmm" in c["name"]:
                m, n, k, b = 2048, 2048, 2048, 64
            else:
                (m, n, k), b = (int(x) for x in c["shape"].split("x")), 1
            lines += ['kind = "compute"', 'dtype = "%s"' % c["dtype"],
                      "tflop = %.0f  # %.1f TFLOP/s x 6 s" % (c["rate"] * 6 / 1e12, c["rate"] / 1e12),
                      "m = %d" % m, "n = %d" % n, "k = %d" % k] + (["batch = %d" % b] if b > 1 else []) + [
                      'input = "%s"' % inputs[c["input"]]]
        else:
            lines += ['kind = "memory"', 'dtype = "fp32"',
                      "gb = %.0f  # %.0f GB/s x 6 s" % (c["rate"] * 6 / 1e9, c["rate"] / 1e9),
                      'input = "%s"' % inputs[c["input"]]]
        out.append("\n".join(lines) + "\n")
    open(path, "w").write("".join(out))


def memory_scope_report(p, cases):
    """The memory scope, card against model, at each case's measured rate (stage 4's view)."""
    print("| case | input | memory W card | model | error |\n|---|---|---:|---:|---:|")
    worst = {False: 0.0, True: 0.0}
    for c in cases:
        if not c.get("mem_w"):
            continue
        bw = c.get("bw", 0.0)
        ms = memory_scope(p, c, c["rate"], bw, activity(p, c["input"]))
        e = ms / c["mem_w"] - 1
        if c["kind"] != "idle":
            worst[c["hold"]] = max(worst[c["hold"]], abs(e))
        print("| %s | %s%s | %.1f | %.1f | %+.1f %% |" % (
            c["name"], c["input"], " (held out)" if c["hold"] else "", c["mem_w"], ms, 100 * e))
    print("\ntile_pj = %.2f, tile_pj_fp32 = %.2f, tile_share = %.3f" % (
        p["tile_pj"], p["tile_pj_fp32"], p["tile_share"]))
    return 0


MIXED_HEAD = """# h200-power-mixed — perf/power_by_data.py --mixed on one NVIDIA H200 (docs/results/power_mixed_h200.md),
# HELD OUT: no fit reads it. Idle with a context held, then each case as the script ran it: 1 s
# cycles for 2 s of warm-up and the 8 s window, a BF16 8192^3 GEMM on random data for the "on"
# part of each cycle (a timed phase: it runs that long at whatever clock the cap allows), then
# idle with the context held or 1 GiB copies of random bytes; idle again at the end.
# sim/model/calibration.cpp (mixed_phase_table) compares each case's window with the card's.
# ASSUMPTION: the on part lasts exactly on_s (the script checks the time after each ~1.6 ms GEMM
# and drains at most one batch of ~50 ms after it: up to 5 % longer). The board's ambient and
# cooling are h200-power-by-data.toml's (the same kind of card, another day: 120 W idle at 37 C).
# Written by `sim/tools/fit_power.py --mixed-scenario` from docs/results/raw/{json}.

[node]
description = "1x NVIDIA H200: perf/power_by_data.py --mixed (GEMMs with idle gaps, GEMMs and copies)"
gpu_model = "h200-sxm-141gb"
gpu_count = 1
privileged = true
cpu_count = 16
numa_nodes = 1
nvswitch = false

[gpu_defaults]
workload = "power_mixed"

[[gpu]]
index = 0
ambient_c = 33.5
cooling_factor = 0.36

[workloads.power_mixed]
start_s = 0
repeat = false
process = {{ pid = 52201, name = "python3 perf/power_by_data.py --mixed", memory_gib = 8 }}
"""


def write_mixed_scenario(path, json_name="power_mixed_h200.json", cycles=10):
    """sim/scenarios/h200-power-mixed.toml: per mixed case `cycles` 1 s cycles (2 of warm-up and
    the 8 s window), its phases all named caseNN; idle cases 5 s."""
    d = json.load(open(os.path.join(RAW, json_name)))
    # The GEMM/copy case's GEMM phase lasts past its nominal 0.5 s (its last batch drains): the
    # share measured (gemm_share); the first run recorded none, and the second run's (the same
    # script on another H200, power_mixed_h200_run2.md's 51.4 %) stands in for it.
    run2 = json.load(open(os.path.join(RAW, "power_mixed_h200_run2.json")))
    drain_share = next(c["gemm_share"] for c in run2["cases"] if c.get("gemm_share"))
    out = [MIXED_HEAD.format(json=json_name)]
    for i, c in enumerate(d["cases"]):
        if c["kind"] != "idle" and c["off"] != "idle":
            share = c.get("gemm_share") or drain_share
            c = dict(c, on_s=round(share, 3), off_s=round(1 - share, 3))
        head = ["", "[[workloads.power_mixed.phases]]", 'name = "case%02d"  # %s' % (i, c["name"])]
        if c["kind"] == "idle":
            out.append("\n".join(head + ['kind = "idle"', "seconds = 5"]) + "\n")
            continue
        m, n, k = (int(x) for x in c["shape"].split("x"))
        for _ in range(cycles):
            out.append("\n".join(head + ['kind = "compute"', 'dtype = "%s"' % c["dtype"],
                                         "seconds = %g" % c["on_s"], "m = %d" % m, "n = %d" % n,
                                         "k = %d" % k, 'input = "random"']) + "\n")
            if c["off"] == "idle":
                out.append("\n".join(head + ['kind = "idle"', "seconds = %g" % c["off_s"]]) + "\n")
            else:  # copy 1 GiB bits
                out.append("\n".join(head + ['kind = "memory"', 'dtype = "fp32"',
                                             "seconds = %g" % c["off_s"], 'input = "random"']) + "\n")
    open(path, "w").write("".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--card", choices=sorted(CARDS), default="h100",
                    help="whose measurements (default %(default)s)")
    ap.add_argument("--check", action="store_true", help="no fit: the tables at --params")
    ap.add_argument("--params", help="JSON of parameters to start from (default: built in)")
    ap.add_argument("--out", help="write the fitted parameters here (JSON)")
    ap.add_argument("--scenario", help="write the power-by-data scenario here and stop")
    ap.add_argument("--mixed-scenario", help="write the mixed-phase scenario here and stop")
    ap.add_argument("--memory-scope", action="store_true",
                    help="fit the memory scope's tile term alone (stage 4) and print its table")
    ap.add_argument("--json", default="power_by_data_h100.json",
                    help="--scenario's measurements, in docs/results/raw/ (default %(default)s)")
    ap.add_argument("--model", default="h100-sxm5-80gb", help="--scenario's GPU model")
    a = ap.parse_args()
    if a.scenario:
        write_scenario(a.scenario, a.json, a.model)
        return 0
    if a.mixed_scenario:
        write_mixed_scenario(a.mixed_scenario)
        return 0
    p = dict(P0)
    if a.params:
        p.update(json.load(open(a.params)))
    cases = load_cases(a.card)
    p.update(CARDS[a.card]["mem_scope"])
    if a.memory_scope:
        return memory_scope_report(fit_memory_scope(p, cases), cases)
    if not a.check:
        p = fit(p, cases)
    if a.out:
        json.dump(p, open(a.out, "w"), indent=1, sort_keys=True)
    fitted, worst_fit = table(p, cases, False)
    held, worst_held = table(p, cases, True)
    print("## Fitted on (%d cases): worst error %.1f %%\n\n%s\n" % (
        sum(not c["hold"] for c in cases), 100 * worst_fit, fitted))
    print("## Held out (%d cases): worst error %.1f %%\n\n%s\n" % (
        sum(c["hold"] for c in cases), 100 * worst_held, held))
    print("## Parameters\n")
    for k in sorted(p):
        print("- %s = %.4g%s" % (k, p[k], "" if k in FIT else " (fixed)"))
    return 0 if worst_held <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
