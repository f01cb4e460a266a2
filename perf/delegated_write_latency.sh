#!/usr/bin/env bash
# What one write of a user who is not root costs through `gpuclk serve`'s delegated settings, as
# `gpuclk govern` and `gpuclk sweep` send them (docs/serve.md, "Delegated settings"): the round
# trip of a `set` of a clock lock on one GPU, against the socket's own round trip (`hello`, the
# peer, same run and connection). Two kinds of `set`: a governor's (`"settle": false`: read back at
# once) and a sweep's or `gpuclk set`'s (read back after the 50 ms the clocks take to settle); and
# a `set` of the lock the GPU already has (the service's checks and reads, nothing written).
#   sudo perf/delegated_write_latency.sh [GPUCLK_BIN] [N]    (defaults: build/release/gpuclk 200)
# Root: the service runs as root, the client as nobody (setpriv). Simulator only: it locks clocks.
# Prints median and p99 ms of each, and the governor's write over the 20 ms default interval.
set -euo pipefail
BIN=$(realpath "${1:-build/release/gpuclk}")
N=${2:-200}
[ "$(id -u)" -eq 0 ] || { echo "run as root (the client runs as nobody)" >&2; exit 2; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
serve_pid=""
trap '[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
export GPUCLK_SIM_STATE=$tmp/sim.state GPUCLK_STATE_DIR=$tmp/state
mkdir -m 755 "$tmp/etc"
cat >"$tmp/etc/policy.toml" <<'TOML'
version = 1
[[rule]]
name = "perf"
users = ["nobody"]
gpus = "0"
settings = ["locked_gpu_clocks"]
TOML
chmod 644 "$tmp/etc/policy.toml"
"$BIN" --sim --socket "$tmp/s.sock" serve --listen off --policy "$tmp/etc/policy.toml" 2>"$tmp/serve.log" &
serve_pid=$!
for _ in $(seq 100); do grep -q "sampling every" "$tmp/serve.log" && break; sleep 0.1; done

setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 - "$tmp/s.sock" "$N" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
f = s.makefile("rb")
n = int(sys.argv[2])
def ask(request):
    t0 = time.perf_counter()
    s.sendall((json.dumps(request) + "\n").encode())
    answer = json.loads(f.readline())
    ms = (time.perf_counter() - t0) * 1000
    if not answer.get("ok"):
        sys.exit("refused: " + answer.get("error", "?"))
    return ms
def stats(name, samples):
    samples.sort()
    median = samples[len(samples) // 2]
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(f"{name:<37} median {median:7.2f} ms   p99 {p99:7.2f} ms   ({len(samples)} requests)")
    return median
hello = [ask({"request": "hello"}) for _ in range(n)]
# A lock that changes every time (a written setting, as a governor writes only on a change).
clocks = ["990,990", "1410,1410"]
govern = [ask({"request": "set", "gpus": [0], "settle": False,
               "settings": {"locked_gpu_clocks": clocks[i % 2]}}) for i in range(n)]
settled = [ask({"request": "set", "gpus": [0],
                "settings": {"locked_gpu_clocks": clocks[i % 2]}}) for i in range(max(20, n // 10))]
# The same lock again: the queue, the checks and the reads of the GPU and the journal, no write.
same = [ask({"request": "set", "gpus": [0], "settle": False,
             "settings": {"locked_gpu_clocks": clocks[1]}}) for _ in range(n)]
ask({"request": "restore"})
h = stats("hello (the socket's round trip)", hello)
g = stats("set, governor's (no settle)", govern)
w = stats("set, sweep's / gpuclk set's (settle)", settled)
u = stats("set, unchanged (checks, no write)", same)
print(f"governor's write: {g / h:.0f}x the socket's round trip, {g / 20 * 100:.0f} % of a 20 ms interval")
PY
