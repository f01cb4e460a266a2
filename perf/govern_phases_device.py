#!/usr/bin/env python3
"""The governor's classification on a real GPU, read-only (issue 18).

Starts `gpuclk govern --dry-run` once per policy (phase, geopm, threshold) with a decision log each,
then runs a PyTorch script on the same GPU that alternates a BF16 GEMM, a memory-bound elementwise
loop and sleeps with the CUDA context held, logging its own phase times. Prints, per policy, a table
of time per phase x class the governor assigned (the goal: >= 90 % of each phase's time classified
right) and the SM clock ceiling each policy would have held per phase. Nothing is written to the
card: --dry-run, and GPUCLK_READ_ONLY=1 makes gpuclk refuse writes anyway.

    python3 perf/govern_phases_device.py [--gpuclk build/device/gpuclk] [--device 0] [--cycles 3]
        [--seconds 5] [--out DIR]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import time

import torch

RIGHT = {"gemm": {"compute_bound", "power_capped"}, "elementwise": {"memory_bound"}, "sleep": {"idle"}}
POLICIES = ["phase", "geopm", "threshold"]


def run_phases(dev, cycles, seconds, t0):
    a = torch.empty(8192, 8192, device=dev, dtype=torch.bfloat16).uniform_(-1, 1)
    b = torch.empty_like(a).uniform_(-1, 1)
    c = torch.empty_like(a)
    x = torch.empty(256 * 2**20, device=dev, dtype=torch.float32).uniform_(-1, 1)  # 1 GiB
    y = torch.empty_like(x).uniform_(-1, 1)
    z = torch.empty_like(x)
    torch.cuda.synchronize()
    phases = []
    for _ in range(cycles):
        for name in ("gemm", "elementwise", "sleep"):
            start = time.time() - t0
            end_at = time.time() + seconds
            while time.time() < end_at:
                if name == "gemm":
                    for _ in range(8):
                        torch.matmul(a, b, out=c)
                elif name == "elementwise":
                    for _ in range(8):
                        torch.add(x, y, alpha=1.0001, out=z)
                else:
                    time.sleep(0.05)
                torch.cuda.synchronize()
            phases.append((name, start, time.time() - t0))
    return phases


def class_intervals(log_path, end):
    """[(gpu_class, start_s, end_s, max_mhz)] from the decision log (an entry holds until the next)."""
    entries = []
    with open(log_path) as f:
        for line in f:
            line = line.strip()
            if line:
                e = json.loads(line)
                entries.append((e["elapsed_s"], e.get("class", "unknown"), (e.get("decision") or {}).get("max_mhz")))
    out = []
    for i, (t, cls, mhz) in enumerate(entries):
        t_next = entries[i + 1][0] if i + 1 < len(entries) else end
        out.append((cls, t, t_next, mhz))
    return out


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuclk", default="build/device/gpuclk")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    args = ap.parse_args()
    dev = torch.device("cuda", args.device)
    torch.empty(1, device=dev)  # context first, so the governors see it from the start
    p = torch.cuda.get_device_properties(dev)
    bus = f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0"
    procs, logs = {}, {}
    t0 = time.time()
    for policy in POLICIES:
        logs[policy] = os.path.join(args.out, f"govern_{policy}.jsonl")
        if os.path.exists(logs[policy]):
            os.remove(logs[policy])
        procs[policy] = subprocess.Popen(
            [args.gpuclk, "-i", bus, "govern", "--policy", policy, "--dry-run", "--interval", "20ms",
             "--log", logs[policy]], stdout=open(logs[policy] + ".out", "w"), stderr=subprocess.STDOUT)
    time.sleep(2.0)  # the governors' first intervals
    phases = run_phases(dev, args.cycles, args.seconds, t0)
    end = time.time() - t0
    for policy, proc in procs.items():
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    classes = sorted({"compute_bound", "power_capped", "memory_bound", "idle", "unknown"})
    results = {"bus_id": bus, "phases": phases, "policies": {}}
    worst = 1.0
    for policy in POLICIES:
        if not os.path.exists(logs[policy]):
            print(f"{policy}: no decision log ({open(logs[policy] + '.out').read()[:300]})")
            worst = 0.0
            continue
        intervals = class_intervals(logs[policy], end)
        table = {}
        for name in ("gemm", "elementwise", "sleep"):
            row = {c: 0.0 for c in classes}
            ceilings = []
            for ph, s, e in phases:
                if ph != name:
                    continue
                for cls, a, b, mhz in intervals:
                    o = overlap(s, e, a, b)
                    if o > 0:
                        row[cls] = row.get(cls, 0.0) + o
                        # No lock counts as no ceiling (above every clock), so a short lock at
                        # a phase's edge is not reported as the phase's ceiling.
                        ceilings.append((mhz if mhz else float("inf"), o))
            total = sum(row.values()) or 1.0
            right = sum(v for c, v in row.items() if c in RIGHT[name]) / total
            ceiling = None
            if ceilings:  # time-weighted median of the ceiling held
                ceilings.sort()
                half, acc = sum(o for _, o in ceilings) / 2, 0.0
                for mhz, o in ceilings:
                    acc += o
                    if acc >= half:
                        ceiling = None if mhz == float("inf") else mhz
                        break
            table[name] = {"seconds": row, "right": right, "ceiling_mhz": ceiling}
            if policy == "phase":
                worst = min(worst, right)
        results["policies"][policy] = table
        print(f"\n### policy {policy}: seconds per phase x class (right = the class that phase should get)")
        print("| phase | " + " | ".join(classes) + " | right | clock ceiling held (median) |")
        print("|---|" + "---|" * (len(classes) + 2))
        for name, r in table.items():
            cells = " | ".join(f"{r['seconds'].get(c, 0.0):.1f}" for c in classes)
            ceil = f"{r['ceiling_mhz']:.0f} MHz" if r["ceiling_mhz"] else "none (no lock)"
            print(f"| {name} | {cells} | {100 * r['right']:.0f} % | {ceil} |")
    with open(os.path.join(args.out, "govern_phases.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nphase policy: worst phase classified right {100 * worst:.0f} % (goal >= 90 %)")


if __name__ == "__main__":
    main()
