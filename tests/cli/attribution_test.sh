#!/usr/bin/env bash
# Who used the energy (attribution/attribution.h) against the simulator's truth: real processes run
# simulated jobs (`gpuclk sim-job`, each its own process, listed by NVML under its pid), two on
# GPU 0 with different amounts of work (time-sliced while both run, then the larger alone) and one
# alone on GPU 1; the service splits each GPU's energy counter between them. Each process's
# energy must match the simulator's truth (sim-job's Energy column: its time slices' share of the
# GPU's energy) within 5 %, and per GPU the processes plus idle must add up to the counter's move
# within 1 %. Then gpuclk ps, the `processes` request's errors, and the /metrics series.
source "$(dirname "$0")/lib.sh" "$1"

# Twice real time: ~40 simulated seconds of jobs in ~20 s; the service reads its slow tier every
# simulated second.
export GPUCLK_SIM_SPEED=$(slowed 2)
SOCK="$TEST_TMP/s.sock"
start_serve --sim 2xh200 --socket "$SOCK" serve --counters-interval 1s --listen 127.0.0.1:0 \
  --metrics-detail attribution
energy_now() {  # the GPUs' energy counters (J), read by a fresh process
  "$GPUCLK_BIN" --sim 2xh200 --direct query --query-gpu=total_energy_consumption --format=csv,noheader,nounits
}
BEFORE=$(energy_now)

# Owners from hand-made cgroups (when this host lets us make them: root, a writable cgroup v1
# hierarchy): job a in a Kubernetes pod (the cgroupfs driver's layout), b in a Docker container,
# c in a Slurm job (cgroup v1). Each job process moves itself into its cgroup before it starts.
CG=/sys/fs/cgroup/pids
POD_UID=$(python3 -c 'import uuid; print(uuid.uuid4())')
hex64() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
CONTAINER=$(hex64)
SLURM_JOB=$((700000 + $$))
declare -A CGROUP=([a]="$CG/kubepods/burstable/pod$POD_UID/$(hex64)" [b]="$CG/docker/$CONTAINER"
  [c]="$CG/slurm/uid_$(id -u)/job_$SLURM_JOB/step_0")
declare -A OWNER=([a]="pod:$POD_UID" [b]="container:$CONTAINER" [c]="slurm:$SLURM_JOB")
CGROUPS=1
for j in a b c; do mkdir -p "${CGROUP[$j]}" 2>/dev/null || CGROUPS=0; done
remove_cgroups() {
  for j in a b c; do
    local d="${CGROUP[$j]}"
    while [ "$d" != "$CG" ] && rmdir "$d" 2>/dev/null; do d=$(dirname "$d"); done
  done
}
trap 'stop_serve; remove_cgroups; rm -rf "$TEST_TMP"' EXIT
[ "$CGROUPS" = 1 ] || echo "note: cannot make cgroups under $CG; owners are the test's own"

# The jobs: 30 TB and 60 TB of copies sharing GPU 0 (~20 s shared, then ~10 s alone), and a BF16
# GEMM alone on GPU 1. Each prints its pid and its truth.
job() {  # NAME GPU WORKLOAD AMOUNT
  local cgroup=/dev/null
  [ "$CGROUPS" = 1 ] && cgroup="${CGROUP[$1]}/cgroup.procs"
  sh -c 'echo $$ >"$0" && exec "$@"' "$cgroup" "$GPUCLK_BIN" --sim 2xh200 -i "$2" sim-job \
    --workload "$3" --amount "$4" --format csv,noheader,nounits >"$TEST_TMP/$1.csv" 2>&1
}
job a 0 mem-copy 30e12 &
A=$!
job b 0 mem-copy 60e12 &
B=$!
job c 1 gemm-bf16 10000T &
C=$!

# While they run: gpuclk ps lists them with their owner, power and share.
sleep "$(scaled 4)"
gpuclk --sim 2xh200 --socket "$SOCK" ps
expect_exit 0
expect_out "SHARE %"
expect_out_re "^ +0 +[0-9]+ .*running"
expect_out "JOB"

wait $A $B $C
# The service's last slow sample after the jobs: a couple of simulated seconds.
sleep "$(scaled 3)"
ask '{"request":"processes"}
' >"$TEST_TMP/processes.json"
AFTER=$(energy_now)

python3 - "$TEST_TMP" "$BEFORE" "$AFTER" "$CGROUPS" "${OWNER[a]}" "${OWNER[b]}" "${OWNER[c]}" <<'PY' || fail "attribution does not match the truth"
import csv, json, sys
tmp, before, after = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
cgroups, owners = sys.argv[4] == "1", dict(zip("abc", sys.argv[5:8]))
answer = json.load(open(f"{tmp}/processes.json"))
assert answer["ok"], answer
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond
# sim-job's csv: gpu, pid, workload, done, seconds, rate, energy, busy, result.
truth = {}
for name in "abc":
    row = next(csv.reader(open(f"{tmp}/{name}.csv")))
    truth[name] = (int(row[0]), int(row[1]), float(row[6]), row[8].strip())
    check(truth[name][3] == "completed", f"job {name} completed ({row})")
processes = {(p["gpu"], p["pid"]): p for p in answer["processes"]}
for name, (gpu, pid, energy, _) in truth.items():
    p = processes.get((gpu, pid))
    check(p is not None, f"job {name} (pid {pid}) is in the answer")
    if p is None: continue
    got = p["usage"]["energy_j"]
    check(abs(got - energy) <= 0.05 * energy,
          f"job {name}: {got:.0f} J attributed, truth {energy:.0f} J ({100 * (got / energy - 1):+.1f} %)")
    check(not p["running"], f"job {name}: ended")
    if cgroups:
        check(p["owner"] == owners[name], f"job {name}: owner {p['owner']}, its cgroup's {owners[name]}")
        owner = [o for o in answer["owners"] if o["owner"] == owners[name]]
        check(len(owner) == 1 and abs(owner[0]["usage"]["energy_j"] - got) < 1e-6 * got,
              f"job {name}: its owner's energy is its own")
# Two on GPU 0 were split by their SM samples at least once.
check(answer["books"][0]["split_j"]["sm"] > 0, "GPU 0 split by SM samples")
# Per GPU: processes + idle + unknown against the counter: its move from the first to the last
# sample the service booked (no interval lost or booked twice); the service started before a
# fresh process read the counter ahead of the jobs, and booked its last sample before the read
# after them.
for gpu, books in enumerate(answer["books"]):
    parts = books["idle_j"] + books["unknown_j"] + sum(books["split_j"].values())
    procs = sum(p["usage"]["energy_j"] for p in answer["processes"] if p["gpu"] == gpu)
    check(abs(procs + books["idle_j"] + books["unknown_j"] - parts) <= 1e-6 * parts,
          f"GPU {gpu}: processes + idle = the books ({procs:.0f} + {books['idle_j']:.0f} J)")
    first, last = books["first_counter_j"], books["last_counter_j"]
    check(abs(parts - (last - first)) <= 0.01 * (last - first),
          f"GPU {gpu}: booked {parts:.0f} J, the counter moved {last - first:.0f} J")
    check(first <= float(before[gpu]) + 0.001 and float(before[gpu]) < last <= float(after[gpu]) + 0.001,
          f"GPU {gpu}: the service's readings {first:.0f}..{last:.0f} J, a fresh process's {before[gpu]}..{after[gpu]} J")
sys.exit(0 if ok else 1)
PY
check

# ps --all lists the ended jobs; --format json is the service's answer for the selected GPUs.
gpuclk --sim 2xh200 --socket "$SOCK" ps --all
expect_exit 0
expect_out "ended"
# The footer names the page that explains the split; the jobs' table is sorted by job (issue 42).
expect_out "docs/attribution.md: how"
check; python3 -c '
import sys
lines = sys.stdin.read().splitlines()
head = next(i for i, l in enumerate(lines) if l.startswith("JOB"))
cut = lines[head].index("USER")
jobs = []
for l in lines[head + 1:]:
    if not l.strip(): break
    jobs.append(l[:cut].strip())
assert len(jobs) >= 2 and jobs == sorted(jobs), jobs' <<<"$OUT" || fail "ps: the JOB table is not sorted by job: $OUT"
gpuclk --sim 2xh200 --socket "$SOCK" -i 1 ps --all --format json
expect_exit 0
check; python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["processes"] and all(p["gpu"] == 1 for p in d["processes"])' <<<"$OUT" || fail "ps -i 1 --format json: $OUT"

# A bad owner is refused, naming it; an unknown one is "not found" (6).
OUT=$(ask '{"request":"processes","owner":"nobody"}
')
check; grep -q "'nobody' names no owner" <<<"$OUT" || fail "bad owner: $OUT"
OUT=$(ask '{"request":"processes","owner":"slurm:424242"}
')
check; grep -q '"code":6' <<<"$OUT" || fail "unknown owner: $OUT"

# /metrics (--metrics-detail attribution): the users' energy, the GPUs' idle and per-split
# energy, bounded: no per-pid series.
curl -sf "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.prom"
check; grep -q '^gpuclk_user_energy_joules_total{user="' "$TEST_TMP/metrics.prom" || fail "no user energy series"
check; grep -q '^gpuclk_gpu_idle_energy_joules_total{gpu="0"' "$TEST_TMP/metrics.prom" || fail "no idle energy series"
check; grep -q '^gpuclk_gpu_process_energy_joules_total{.*split="sm"' "$TEST_TMP/metrics.prom" || fail "no split series"
check; ! grep -q 'pid=' "$TEST_TMP/metrics.prom" || fail "a per-pid series"
if [ "$CGROUPS" = 1 ]; then
  check; grep -q "^gpuclk_slurm_job_energy_joules_total{job=\"$SLURM_JOB\",user=\"$(id -un)\"}" "$TEST_TMP/metrics.prom" || fail "no series for Slurm job $SLURM_JOB"
  check; grep -q "^gpuclk_pod_energy_joules_total{pod_uid=\"$POD_UID\"" "$TEST_TMP/metrics.prom" || fail "no series for pod $POD_UID"
  check; grep -q "^gpuclk_container_gpu_seconds_total{container_id=\"$CONTAINER\",.*state=\"busy\"}" "$TEST_TMP/metrics.prom" || fail "no series for container $CONTAINER"
fi
if command -v promtool >/dev/null; then
  check; promtool check metrics <"$TEST_TMP/metrics.prom" >"$TEST_TMP/lint.txt" 2>&1 || fail "promtool: $(cat "$TEST_TMP/lint.txt")"
fi

# Without a service, ps lists what the driver says now and says where energy comes from.
stop_serve
gpuclk --sim 2xh200 --socket "$SOCK" ps
expect_exit 0
expect_out "python3 train.py"
expect_err "power, energy and GPU time per process come from gpuclk serve"
# The socket it asked, also when no --socket named one (it said "no service answers on ;").
GPUCLK_SOCKET="$TEST_TMP/none.sock" gpuclk --sim 2xh200 ps
expect_exit 0; expect_err "no service answers on $TEST_TMP/none.sock;"
finish
