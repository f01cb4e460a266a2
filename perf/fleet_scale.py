#!/usr/bin/env python3
"""perf/fleet_scale.sh's work (its header says what it measures and how it is called).

1. Capture: one `gpuclk serve --sim SCENARIO` per distinct scenario (the healthy node and each
   planted file), simulated time at 30x, scraped every 15 simulated seconds (SCRAPES times).
2. Replicate: each node gets its scenario's captured series under its own labels, as a
   Prometheus scraping it would store them: instance="nNNNN:9400", job="gpuclk", the exporter's
   own job label as exported_job (each group of 4 nodes one Slurm job: 1000 + NODE // 4), its
   GPUs' UUIDs made its own, power and energy scaled by a per-node factor within +-1 %,
   temperatures moved within +-1.5 C. Only the families gpuclk fleet reads are replicated, plus
   `up`. The captured scrapes are cycled over 1 h of history at a 15 s step (counters continue
   at their captured rate), the hour before the script started; fleet is asked about that hour
   as it was at its end (`--at`), however long the load took.
3. Load: Prometheus: OpenMetrics text into `promtool tsdb create-blocks-from openmetrics`, then
   a Prometheus on those blocks. VictoriaMetrics: its JSON line import (/api/v1/import).
4. Ask: `gpuclk fleet --range 1h --at END --format json` three times (the median is reported) and
   `gpuclk fleet --job ID` for the job of the first planted node; the engine's RSS after them.
5. Judge: every planted node must have a finding above info on each planted GPU (the [[gpu]]
   tables of its scenario, or every GPU when it has none), and no other finding may be above
   info.
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
HEALTHY = os.path.join(HERE, "fleet_scale", "node.toml")
STEP_S = 15
HOUR_S = 3600
SPEED = 30
TIME_SCALE = int(os.environ.get("GPUCLK_TEST_TIME_SCALE", "1"))
NODES_PER_JOB = 4
# The families gpuclk fleet reads (fleet::series_read(); tests/unit/fleet_series_test.cpp keeps
# that list honest against /metrics).
KEEP = re.compile(
    r"^gpuclk_(finding|gpu_(info|lost|sm_clock_hertz|max_sm_clock_hertz|power_watts|"
    r"power_limit_watts|application_sm_clock_hertz|application_memory_clock_hertz|"
    r"persistence_mode|temperature_celsius|utilization_ratio|memory_used_bytes|locked_clocks|"
    r"locked_clock_min_hertz|locked_clock_max_hertz|clock_event_reason|energy_joules_total|"
    r"slurm_job_energy_joules_total|slurm_job_seconds_total|pod_energy_joules_total|"
    r"pod_seconds_total))$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
SERIES = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")


def fail_usage(message):
    print(f"fleet_scale: {message}", file=sys.stderr)
    print("usage: perf/fleet_scale.sh [--nodes N] [--engine prometheus|victoriametrics] "
          "[--plant NODE=SCENARIO.toml ...]", file=sys.stderr)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(add_help=True, usage=argparse.SUPPRESS)
    p.add_argument("--nodes", default="1000")
    p.add_argument("--engine", default="prometheus")
    p.add_argument("--plant", action="append", default=[])
    args, rest = p.parse_known_args()
    if rest:
        fail_usage(f"unknown argument {rest[0]!r}")
    if not args.nodes.isdigit() or int(args.nodes) < 1:
        fail_usage(f"bad --nodes {args.nodes!r}: give a whole number of nodes, 1 or more")
    args.nodes = int(args.nodes)
    if args.engine not in ("prometheus", "victoriametrics"):
        fail_usage(f"bad --engine {args.engine!r}: prometheus or victoriametrics")
    plants = {}
    for plant in args.plant:
        node, _, path = plant.partition("=")
        if not node.isdigit() or not path:
            fail_usage(f"bad --plant {plant!r}: give NODE=SCENARIO.toml, e.g. 17=perf/fleet_scale/hot_gpu.toml")
        if int(node) >= args.nodes:
            fail_usage(f"bad --plant {plant!r}: node {node} is not one of the {args.nodes} nodes (0-{args.nodes - 1})")
        if not os.path.isfile(path):
            fail_usage(f"bad --plant {plant!r}: no file {path}")
        plants[int(node)] = os.path.abspath(path)
    args.plants = plants
    return args


def need(*programs):
    for program in programs:
        if not shutil.which(program):
            print(f"SKIP: {program} not installed", file=sys.stderr)
            sys.exit(77)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get(url, timeout=30, data=None):
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=timeout) as r:
        return r.read()


def wait_for(what, check, seconds, procs=()):
    """Polls `check` until it holds; fails after `seconds`, or at once when one of `procs` (what
    is being waited for) has exited."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        for proc in procs:
            if proc.poll() is not None:
                sys.exit(f"fleet_scale: {what}: {' '.join(proc.args[:3])} exited {proc.returncode} "
                         "before it answered")
        time.sleep(0.2)
    sys.exit(f"fleet_scale: {what} did not come within {seconds} s")


class Work:
    """The work directory and the processes started in it (stopped at the end)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gpuclk-fleet-scale.")
        self.procs = []

    def start(self, cmd, log, env=None):
        out = open(os.path.join(self.dir, log), "w")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.procs.append(proc)
        return proc

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if os.environ.get("KEEP") == "1":
            print(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def capture(work, binary, scenarios, scrapes):
    """Per scenario: `scrapes` scrapes 15 simulated seconds apart, each {(name, labels): value}."""
    services = []
    for i, scenario in enumerate(scenarios):
        env = dict(os.environ, GPUCLK_SIM_STATE=os.path.join(work.dir, f"s{i}.state"),
                   GPUCLK_SIM_SPEED=str(SPEED), GPUCLK_SIM_START="300",
                   GPUCLK_STATE_DIR=os.path.join(work.dir, f"j{i}"))
        for k in ("GPUCLK_SOCKET", "GPUCLK_NVML_LIB", "GPUCLK_SIM_SCENARIO"):
            env.pop(k, None)
        work.start([binary, "--sim", scenario, "--socket", os.path.join(work.dir, f"s{i}.sock"),
                    "serve", "--listen", "127.0.0.1:0", "--interval", "1s",
                    "--counters-interval", "1s"], f"serve{i}.log", env)
        services.append(os.path.join(work.dir, f"serve{i}.log"))
    ports = []
    for log in services:
        def listening():
            return re.search(r"metrics http://127\.0\.0\.1:(\d+)", open(log).read())
        # A sanitizer build simulates the services' first 300 s slowly, five at once: the
        # tests' time scale (GPUCLK_TEST_TIME_SCALE, 3 for that build) stretches the wait.
        wait_for(f"gpuclk serve ({log})", listening, 120 * TIME_SCALE, work.procs)
        ports.append(int(listening().group(1)))
    # Warm up: the attribution books the jobs from its first intervals.
    time.sleep(60 / SPEED)
    captured = [[] for _ in scenarios]
    start = time.monotonic()
    for k in range(scrapes):
        for i, port in enumerate(ports):
            text = get(f"http://127.0.0.1:{port}/metrics").decode()
            series = {}
            for line in text.splitlines():
                if not line or line[0] == "#":
                    continue
                m = SERIES.match(line)
                if m and KEEP.match(m.group(1)):
                    series[(m.group(1), m.group(2) or "")] = float(m.group(3))
            captured[i].append(series)
        time.sleep(max(0.0, start + (k + 1) * STEP_S / SPEED - time.monotonic()))
    return captured


CLASSES = 16  # per-node variations: a node is one of 16, by a hash of its number


def node_class(node):
    return (node * 2654435761 >> 8) % CLASSES


def class_scale(cls):
    """Power and energy within +-1 %, temperatures within +-1.5 C."""
    return 1 + (cls - 7.5) / 750.0, (cls % 4 - 1.5)


def relabel(name, labels, node):
    """The labels a Prometheus scraping node `node` stores for this series, rendered."""
    out = [f'instance="n{node:04d}:9400"', 'job="gpuclk"']
    for key, value in LABEL.findall(labels):
        if key == "job":
            key, value = "exported_job", str(1000 + node // NODES_PER_JOB)
        elif key == "uuid" and value.startswith("GPU-"):
            value = f"GPU-{node:08x}" + value[12:]
        out.append(f'{key}="{value}"')
    return name + "{" + ",".join(out) + "}"


def timeline(captured, samples):
    """Per series, its value at each of `samples` steps: the scrapes cycled, counters continued."""
    scrapes = len(captured)
    keys = set()
    for scrape in captured:
        keys.update(scrape)
    out = {}
    for key in sorted(keys):
        values = [scrape.get(key) for scrape in captured]
        counter = key[0].endswith("_total")
        present = [v for v in values if v is not None]
        rate = (present[-1] - present[0]) / max(1, len(present) - 1) if counter and len(present) > 1 else 0
        cycle_gain = rate * scrapes
        out[key] = [None if values[i % scrapes] is None
                    else values[i % scrapes] + (i // scrapes) * cycle_gain
                    for i in range(samples)]
    return out


def scaled(name, values, cls):
    factor, warmer = class_scale(cls)
    if name.endswith("temperature_celsius"):
        return [None if v is None else v + warmer for v in values]
    if "energy_joules" in name or name == "gpuclk_gpu_power_watts":
        return [None if v is None else v * factor for v in values]
    return values


class Scenario:
    """One scenario's series over the timeline: those present at every step (written through one
    format string per node) and the others (written line by line)."""

    def __init__(self, series, t0, samples):
        self.steady = [k for k, v in series.items() if None not in v]
        self.sparse = [k for k, v in series.items() if None in v]
        self.series, self.t0, self.samples = series, t0, samples
        self.by_class = {}

    def cells(self, cls):
        """Per step, the tuple of "VALUE TIMESTAMP" of every steady series (and up), for a class."""
        if cls not in self.by_class:
            columns = [scaled(name, self.series[(name, labels)], cls) for name, labels in self.steady]
            self.by_class[cls] = [
                tuple([f"1 {self.t0 + i * STEP_S}"] +
                      [f"{col[i]:.10g} {self.t0 + i * STEP_S}" for col in columns])
                for i in range(self.samples)]
        return self.by_class[cls]


def chunks(engine, scratch, nodes, plants, lines_of, t0, samples):
    """The fleet's series in files, one at a time (the caller loads and removes each before the
    next is written): OpenMetrics for promtool in one file (one TSDB block holds the hour, as a
    Prometheus's own head or 2 h block would: a block per part of the hour costs a series lookup
    per block, and five made the instant queries twice and the range queries five times as
    dear); JSON lines for VictoriaMetrics, 100 nodes a file. Yields (path, samples in it)."""
    scenarios = {s: Scenario(series, t0, samples) for s, series in lines_of.items()}
    path = os.path.join(scratch, "chunk")
    if engine == "prometheus":
        formats = []
        for node in range(nodes):
            sc = scenarios[plants.get(node, HEALTHY)]
            head = f'up{{instance="n{node:04d}:9400",job="gpuclk"}} %s\n'
            body = "".join(relabel(name, labels, node).replace("%", "%%") + " %s\n"
                           for name, labels in sc.steady)
            sparse = [(relabel(name, labels, node), scaled(name, sc.series[(name, labels)],
                                                           node_class(node)))
                      for name, labels in sc.sparse]
            formats.append((head + body, sc, node_class(node), sparse))
        steps = samples
        for first in range(0, samples, steps):
            count = 0
            with open(path, "w", buffering=1 << 22) as out:
                for i in range(first, min(samples, first + steps)):
                    ts = t0 + i * STEP_S
                    chunk = []
                    for form, sc, cls, sparse in formats:
                        chunk.append(form % sc.cells(cls)[i])
                        count += 1 + len(sc.steady)
                        for prefix, values in sparse:
                            if values[i] is not None:
                                chunk.append(f"{prefix} {values[i]:.10g} {ts}\n")
                                count += 1
                    out.write("".join(chunk))
                out.write("# EOF\n")
            yield path, count
        return
    stamps = [(t0 + i * STEP_S) * 1000 for i in range(samples)]
    for first in range(0, nodes, 100):
        count = 0
        with open(path, "w", buffering=1 << 22) as out:
            for node in range(first, min(nodes, first + 100)):
                sc = scenarios[plants.get(node, HEALTHY)]
                metric = {"__name__": "up", "instance": f"n{node:04d}:9400", "job": "gpuclk"}
                out.write(json.dumps({"metric": metric, "values": [1] * samples,
                                      "timestamps": stamps}) + "\n")
                count += samples
                for (name, labels), values in sc.series.items():
                    rendered = relabel(name, labels, node)
                    metric = {"__name__": name}
                    metric.update((k, v.replace('\\"', '"').replace("\\\\", "\\"))
                                  for k, v in LABEL.findall(rendered[len(name):]))
                    kept = [(s, v) for s, v in zip(stamps, scaled(name, values, node_class(node)))
                            if v is not None]
                    out.write(json.dumps({"metric": metric, "values": [v for _, v in kept],
                                          "timestamps": [s for s, _ in kept]}) + "\n")
                    count += len(kept)
        yield path, count


def shm_or(fallback):
    """/dev/shm when it has room for a chunk (VictoriaMetrics' 100 nodes: 170 MiB), else
    `fallback`."""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > 2 << 30:
            return "/dev/shm"
    except OSError:
        pass
    return fallback


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def load(work, engine, data, nodes, at):
    """Starts the engine and loads the chunks of `data` into it, timing the writing of each
    apart from its loading; returns (its URL, its process, seconds writing, seconds loading,
    samples)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    writing = loading = 0.0
    samples = 0
    if engine == "prometheus":
        blocks = os.path.join(work.dir, "tsdb")
        t = time.monotonic()
        for path, count in data:
            writing += time.monotonic() - t
            t = time.monotonic()
            subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", path, blocks],
                           check=True, stdout=subprocess.DEVNULL)
            os.remove(path)
            samples += count
            loading += time.monotonic() - t
            t = time.monotonic()
        t = time.monotonic()
        config = os.path.join(work.dir, "prometheus.yml")
        open(config, "w").write("global: {scrape_interval: 15s}\n")
        proc = work.start(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={blocks}",
                           f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d",
                           "--log.level=warn"], "prometheus.log")
        wait_for("Prometheus", lambda: get(url + "/-/ready", 5), 600)
    else:
        proc = work.start(["victoria-metrics", f"-storageDataPath={os.path.join(work.dir, 'vm')}",
                           f"-httpListenAddr=127.0.0.1:{port}", "-search.disableCache",
                           "-retentionPeriod=1y", "-loggerLevel=WARN"], "victoria-metrics.log")
        wait_for("VictoriaMetrics", lambda: get(url + "/health", 5), 120)
        t = time.monotonic()
        for path, count in data:
            writing += time.monotonic() - t
            t = time.monotonic()
            subprocess.run(["curl", "-sf", "--data-binary", "@" + path, url + "/api/v1/import"],
                           check=True)
            os.remove(path)
            samples += count
            loading += time.monotonic() - t
            t = time.monotonic()
        get(url + "/internal/force_flush", 60)

    def all_up():
        answer = json.loads(get(url + f"/api/v1/query?query=count(up)&time={at}", 30))
        result = answer["data"]["result"]
        return result and int(float(result[0]["value"][1])) == nodes
    wait_for(f"{engine} holding {nodes} nodes", all_up, 300)
    loading += time.monotonic() - t
    return url, proc, writing, loading, samples


def quiet_for_query(below, seconds):
    """On a shared machine: waits (at most `seconds`) until the 1-minute load average is below
    `below` before fleet is timed, so the answer's time is the engine's and fleet's, not the
    neighbours'. 0: no wait."""
    if below <= 0:
        return
    started = time.monotonic()
    while os.getloadavg()[0] >= below and time.monotonic() - started < seconds:
        time.sleep(5)
    print(f"waited {time.monotonic() - started:.0f} s for a load average below {below} "
          f"(now {os.getloadavg()[0]:.1f})")


def cpu_seconds(pid):
    """utime + stime of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Run:
    """One `gpuclk fleet`: its wall time, the CPU the server and it spent, its answer."""

    def __init__(self, binary, url, server_pid, extra):
        server = cpu_seconds(server_pid)
        mine = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        self.result = subprocess.run([binary, "fleet", "--prometheus", url, "--range", "1h",
                                      "--timeout", "300s"] + extra, capture_output=True, text=True)
        self.wall = time.monotonic() - started
        self.server_cpu = cpu_seconds(server_pid) - server
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.fleet_cpu = after.ru_utime + after.ru_stime - mine.ru_utime - mine.ru_stime

    def text(self):
        return f"{self.wall:.2f} s (server CPU {self.server_cpu:.1f} s, fleet CPU {self.fleet_cpu:.1f} s)"


def planted_gpus(path):
    scenario = tomllib.load(open(path, "rb"))
    indexes = sorted({g["index"] for g in scenario.get("gpu", [])})
    return indexes or list(range(scenario["node"]["gpu_count"]))


def judge(findings, plants):
    """Lines per planted node and of the others; (found, extra)."""
    above = {}
    for f in findings:
        if f["severity"] == "info":
            continue
        node = int(f["instance"][1:5])
        above.setdefault(node, []).append(f)
    found = 0
    for node, path in sorted(plants.items()):
        gpus = planted_gpus(path)
        mine = above.get(node, [])
        covered = {g for f in mine for g in f["gpus"]}
        ok = all(g in covered for g in gpus)
        found += ok
        said = ", ".join(f"{f['rule']} GPU {','.join(map(str, f['gpus'])) or '-'}" for f in mine) or "nothing"
        print(f"planted node {node} ({os.path.basename(path)}, GPU {','.join(map(str, gpus))}): "
              f"{'found' if ok else 'NOT FOUND'}: {said}")
    extra = []
    for node, mine in sorted(above.items()):
        gpus = set(planted_gpus(plants[node])) if node in plants else set()
        extra += [f for f in mine if not set(f["gpus"]) or not set(f["gpus"]) <= gpus]
    listed = "; ".join(f"{f['instance']} {f['rule']} GPU {','.join(map(str, f['gpus']))}" for f in extra[:10])
    print(f"not planted: {len(extra)} findings above info{': ' + listed if extra else ''}"
          f"{' ...' if len(extra) > 10 else ''}")
    return found, len(extra)


def main():
    args = parse_args()
    # Ctrl-C or kill: the finally blocks stop what was started and remove the work directory.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    binary = os.path.abspath(os.environ.get("GPUCLK_BIN", "build/release/gpuclk"))
    if not os.access(binary, os.X_OK):
        fail_usage(f"no gpuclk at {binary}: build it, or give GPUCLK_BIN")
    need("curl", *(("prometheus", "promtool") if args.engine == "prometheus" else ("victoria-metrics",)))
    scrapes = int(os.environ.get("SCRAPES", "40"))
    work = Work()
    try:
        scenarios = [HEALTHY] + sorted(set(args.plants.values()) - {HEALTHY})
        t = time.monotonic()
        captured = capture(work, binary, scenarios, scrapes)
        for proc in work.procs:
            proc.terminate()
        print(f"captured {scrapes} scrapes of {len(scenarios)} scenario(s) in {time.monotonic() - t:.0f} s")
        # An hour of the past that one 2 h block holds (promtool cuts blocks at multiples of 2 h);
        # fleet asks about it as it was at its end (--at), however long the load took.
        samples = HOUR_S // STEP_S + 1
        t0 = (int(time.time()) // 7200 - 2) * 7200 + 1800
        at = ["--at", str(t0 + HOUR_S)]
        lines_of = {s: timeline(c, samples) for s, c in zip(scenarios, captured)}
        per_node = len(lines_of[HEALTHY]) + 1
        scratch = tempfile.mkdtemp(prefix="gpuclk-fleet-scale.",
                                   dir=work.dir if args.engine == "prometheus" else shm_or(work.dir))
        try:
            data = chunks(args.engine, scratch, args.nodes, args.plants, lines_of, t0, samples)
            url, engine, writing, loading, count = load(work, args.engine, data, args.nodes, t0 + HOUR_S)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print(f"{args.nodes * per_node} series ({per_node} a node), {count} samples: written in "
              f"{writing:.0f} s, loaded into {args.engine} in {loading:.0f} s")

        quiet_for_query(float(os.environ.get("QUIET_BELOW", "0")), int(os.environ.get("QUIET_WAIT", "3600")))
        load_average = os.getloadavg()[0]
        runs = []
        for _ in range(3):
            runs.append(Run(binary, url, engine.pid, at + ["--format", "json"]))
            r = runs[-1].result
            if r.returncode not in (0, 10, 11):
                sys.exit(f"fleet_scale: gpuclk fleet exited {r.returncode}: {r.stderr.strip()}")
        answer = json.loads(r.stdout)
        print(f"fleet --range 1h: {len(answer['gpus'])} GPUs, {len(answer['nodes'])} nodes, "
              f"{len(answer['findings'])} findings, exit {r.returncode}, answered in "
              + "; ".join(run.text() for run in runs) + f"; load average {load_average:.1f} on "
              f"{os.cpu_count()} CPUs")
        job_node = min(args.plants) if args.plants else 0
        job = str(1000 + job_node // NODES_PER_JOB)
        job_run = Run(binary, url, engine.pid, at + ["--job", job, "--format", "json"])
        jr = job_run.result
        if jr.returncode not in (0, 10, 11):
            sys.exit(f"fleet_scale: gpuclk fleet --job {job} exited {jr.returncode}: {jr.stderr.strip()}")
        ja = json.loads(jr.stdout)
        stragglers = [f"{f['instance']} GPU {f['gpus'][0]}" for f in ja["findings"] if f["rule"] == "straggler"]
        print(f"fleet --job {job}: {ja['job']['gpus']} GPUs on {ja['job']['nodes']} nodes, "
              f"{ja['job']['energy_j'] / 1e6:.1f} MJ, {ja['job']['gpu_hours']:.1f} GPU-hours, straggler "
              f"{', '.join(stragglers) or 'none'}, exit {jr.returncode}, answered in {job_run.text()}")
        times = [run.wall for run in runs]
        rss = rss_mib(engine.pid)
        found, extra = judge(answer["findings"], args.plants)
        print(f"fleet_scale: {args.nodes} nodes, {len(answer['gpus'])} GPUs, engine {args.engine}, "
              f"fleet answered in {statistics.median(times):.2f} s, planted {len(args.plants)} "
              f"found {found}, extra {extra}, server RSS {rss:.0f} MiB")
        return 0 if found == len(args.plants) and extra == 0 else 1
    finally:
        work.close()


if __name__ == "__main__":
    sys.exit(main())
