#!/usr/bin/env python3
"""perf/detection_time.sh's work (its header says what it measures)."""
import ctypes
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

CASES = int(os.environ.get("CASES", "24"))
THERMAL = int(os.environ.get("THERMAL", "4"))
JOB_GPUS = list(range(6))
FINDING = re.compile(r'^gpuclk_finding\{rule="([^"]*)",severity="([^"]*)",gpus="([^"]*)"\} 1$')
THERMAL_BITS = 0x20 | 0x40  # NVML's SW and HW thermal slowdown reasons

NODE = """
[node]
description = "8x H100: GPUs 0-5 one Slurm job, GPU 6 a one-GPU job, GPU 7 idle (detection_time)"
gpu_model = "h100-sxm5-80gb"
gpu_count = 8
privileged = true
nvswitch = true
{gpus}
[workloads.job]
start_s = 2
repeat = true
process = {{ pid = 51000, name = "python3 train.py", memory_gib = 40, slurm_job = 9100 }}

[[workloads.job.phases]]
kind = "compute"
dtype = "bf16"
tflop = 1000
intensity = 850

[workloads.solo]
start_s = 2
repeat = true
process = {{ pid = 52000, name = "python3 solo.py", memory_gib = 20, slurm_job = 9200 }}

[[workloads.solo.phases]]
kind = "compute"
dtype = "bf16"
tflop = 1000
intensity = 850
"""


def scenario(hot_gpu=None):
    gpus = ""
    for i in range(8):
        gpus += f"\n[[gpu]]\nindex = {i}\n"
        if i in JOB_GPUS:
            gpus += 'workload = "job"\n'
        elif i == 6:
            gpus += 'workload = "solo"\n'
        if i == hot_gpu:
            gpus += "cooling_factor = 3.5\n"
    return NODE.format(gpus=gpus)


class Truth(ctypes.Structure):
    _fields_ = [("time_s", ctypes.c_double), ("energy_j", ctypes.c_double),
                ("power_w", ctypes.c_double), ("power_average_w", ctypes.c_double),
                ("die_c", ctypes.c_double), ("sink_c", ctypes.c_double),
                ("sm_mhz", ctypes.c_uint), ("memory_mhz", ctypes.c_uint),
                ("event_reasons", ctypes.c_ulonglong), ("phase_index", ctypes.c_uint),
                ("iterations", ctypes.c_ulonglong), ("total_flops", ctypes.c_double),
                ("total_dram_bytes", ctypes.c_double), ("total_pcie_bytes", ctypes.c_double),
                ("context_active", ctypes.c_int), ("lost", ctypes.c_int),
                ("phase_name", ctypes.c_char * 64)]


class Node:
    """A simulated node and its gpuclk serve; a thread polls its /metrics every 0.25 s and keeps
    which findings above info it held at each poll."""

    def __init__(self, binary, tmp, name, text, start_s):
        self.binary, self.tmp = binary, tmp
        self.path = os.path.join(tmp, name + ".toml")
        open(self.path, "w").write(text)
        self.env = dict(os.environ, GPUCLK_SIM_STATE=os.path.join(tmp, name + ".state"),
                        GPUCLK_STATE_DIR=os.path.join(tmp, name + ".journal"),
                        GPUCLK_SIM_SPEED="1", GPUCLK_SIM_START=str(start_s))
        for k in ("GPUCLK_SOCKET", "GPUCLK_NVML_LIB", "GPUCLK_SIM_SCENARIO"):
            self.env.pop(k, None)
        self.socket = os.path.join(tmp, name + ".sock")
        log = open(os.path.join(tmp, name + ".log"), "w")
        self.proc = subprocess.Popen([binary, "--sim", self.path, "--socket", self.socket, "serve",
                                      "--listen", "127.0.0.1:0"], stderr=log, env=self.env)
        for _ in range(600):
            m = re.search(r"metrics http://127\.0\.0\.1:(\d+)", open(log.name).read())
            if m:
                break
            if self.proc.poll() is not None:
                sys.exit(f"gpuclk serve did not start: {open(log.name).read()}")
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{m.group(1)}/metrics"
        self.polls = []  # (time, {(rule, severity, gpus)})
        self.stop = False
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def poll(self):
        while not self.stop:
            t = time.time()
            try:
                text = urllib.request.urlopen(self.url, timeout=5).read().decode()
            except OSError:
                time.sleep(0.25)
                continue
            held = set()
            for line in text.splitlines():
                m = FINDING.match(line)
                if m and m.group(2) != "info":
                    held.add((m.group(1), m.group(2), m.group(3)))
            self.polls.append((t, held))
            time.sleep(max(0.0, t + 0.25 - time.time()))

    def gpuclk(self, *args):
        subprocess.run([self.binary, "--sim", self.path, "--socket", self.socket, *args],
                       env=self.env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_finding(self, rule, gpu, since, timeout):
        deadline = time.time() + timeout
        while True:
            for t, held in reversed(self.polls):
                if t < since:
                    break
                if any(r == rule and g == str(gpu) for r, _, g in held):
                    return t
            if time.time() >= deadline:
                return None
            time.sleep(0.05)

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.proc.terminate()
        self.proc.wait(10)


def episodes(polls):
    """Each finding's appearances: (rule, gpus, start time)."""
    out, before = [], set()
    for t, held in polls:
        for rule, _, gpus in held:
            if (rule, gpus) not in before:
                out.append((rule, gpus, t))
        before = {(r, g) for r, _, g in held}
    return out


def runtime_cases(binary, tmp, latencies, planted, windows):
    node = Node(binary, tmp, "runtime", scenario(), 300)
    try:
        time.sleep(20)  # the attribution names the job, the rule's window fills; quiet baseline
        for case in range(CASES):
            gpu = JOB_GPUS[case % len(JOB_GPUS)]
            kind = "power" if (case // len(JOB_GPUS)) % 2 == 0 else "clock"
            onset = time.time()
            if kind == "power":
                node.gpuclk("set", "-i", str(gpu), "--power-limit", "300")
            else:
                node.gpuclk("set", "-i", str(gpu), "--lock-gpu-clocks", "1005,1005")
            seen = node.wait_finding("straggler", gpu, onset, 60)
            latency = None if seen is None else seen - onset
            latencies.append(latency)
            print(f"case {case + 1:2d}: {kind:7s} GPU {gpu}: "
                  + ("not found within 60 s" if latency is None else f"straggler after {latency:5.1f} s"),
                  flush=True)
            if kind == "power":
                node.gpuclk("reset", "-i", str(gpu), "--power-limit")
            else:
                node.gpuclk("reset", "-i", str(gpu), "--gpu-clocks")
            windows.append((str(gpu), onset, time.time() + 5))
            time.sleep(6)
        time.sleep(5)
    finally:
        node.close()
    planted.append(node.polls)


def truth_loop(lib, hot):
    """In a process of its own (the simulator library holds one node per process): the
    simulator's truth every 0.1 s, a line each: time, the hot GPU's clock, its peers' median
    clock, whether a thermal reason holds it, and whether its context is held."""
    sim = ctypes.CDLL(lib)
    sim.gpuclk_sim_gpu_truth.argtypes = [ctypes.c_uint, ctypes.POINTER(Truth)]
    while True:
        truths = {}
        for i in JOB_GPUS:
            tr = Truth()
            sim.gpuclk_sim_gpu_truth(i, ctypes.byref(tr))
            truths[i] = tr
        me = truths[hot]
        peers = statistics.median(t.sm_mhz for i, t in truths.items() if i != hot)
        print(f"{time.time():.3f} {me.sm_mhz} {peers} {int(bool(me.event_reasons & THERMAL_BITS))} "
              f"{me.context_active}", flush=True)
        time.sleep(0.1)


def thermal_cases(binary, tmp, latencies, planted, windows, lib):
    hot = 3
    for run in range(THERMAL):
        node = Node(binary, tmp, f"thermal{run}", scenario(hot), 0)
        env = dict(node.env, GPUCLK_SIM_SCENARIO=node.path)
        env.pop("GPUCLK_SIM_START")
        truth = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--truth", lib, str(hot)],
                                 stdout=subprocess.PIPE, text=True, env=env)
        try:
            first_reason = onset = seen = None
            start = time.time()
            for line in truth.stdout:
                t, clock, peers, thermal, context = line.split()
                t = float(t)
                if first_reason is None and thermal == "1":
                    first_reason = t
                if onset is None and context == "1" and float(clock) < 0.9 * float(peers):
                    onset = t
                if onset is not None:
                    seen = node.wait_finding("straggler", hot, onset - 30, 0)
                if seen is not None or time.time() - start > 300:
                    break
            latency = None if seen is None or onset is None else max(0.0, seen - onset)
            latencies.append(latency)
            reason = "" if first_reason is None or seen is None else \
                f" ({seen - first_reason:.1f} s after its first thermal reason)"
            print(f"thermal {run + 1}: GPU {hot} heats up: "
                  + ("not found" if latency is None else f"straggler after {latency:5.1f} s{reason}"),
                  flush=True)
            windows.append((str(hot), start, time.time() + 60))
        finally:
            truth.kill()
            truth.wait()
            node.close()
        planted.append(node.polls)


def main():
    binary = os.path.abspath(sys.argv[1])
    lib = os.path.join(os.path.dirname(binary), "libnvml-sim.so")
    if not os.access(binary, os.X_OK) or not os.path.exists(lib):
        sys.exit(f"detection_time: no gpuclk and libnvml-sim.so at {os.path.dirname(binary)}: build them")
    tmp = tempfile.mkdtemp(prefix="gpuclk-detection.")
    latencies, polls, windows = [], [], []
    try:
        runtime_cases(binary, tmp, latencies, polls, windows)
        if THERMAL:
            thermal_cases(binary, tmp, latencies, polls, windows, lib)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = [x for x in latencies if x is not None]
    planted = unplanted = on_healthy = 0
    for node_polls in polls:
        for rule, gpus, t in episodes(node_polls):
            if any(gpus == g and lo <= t <= hi for g, lo, hi in windows):
                planted += 1
            else:
                unplanted += 1
                on_healthy += gpus != "" and not any(gpus == g for g, _, _ in windows)
                print(f"finding not planted: {rule} on GPUs '{gpus}' at {time.strftime('%H:%M:%S', time.localtime(t))}")
    precision = planted / max(1, planted + unplanted)
    median = statistics.median(found) if found else float("inf")
    worst = max(found) if found else float("inf")
    print(f"detection_time: {len(latencies)} cases, found {len(found)}, onset -> finding median "
          f"{median:.1f} s, worst {worst:.1f} s; findings above info {planted + unplanted}, planted "
          f"{planted}, precision {precision:.3f}; on healthy or idle GPUs {on_healthy}")
    ok = len(found) == len(latencies) and median <= 15 and precision >= 0.95 and on_healthy == 0
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--truth":
        truth_loop(sys.argv[2], int(sys.argv[3]))
    sys.exit(main())
