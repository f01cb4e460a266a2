#!/usr/bin/env bash
# Delegated settings (docs/serve.md): `gpuclk serve` runs as root on the simulator (4x H100) with a
# policy in a temporary folder; users who are not root (nobody, daemon, bin through setpriv, no
# supplementary groups) send `gpuclk set` / `restore` to it. A policy others could change, or a
# malformed one, stops the service at start (exit 2). A user outside the policy, a value outside
# the bounds, a GPU not granted, a setting not allowed: exit 4 naming the rule; a value outside the
# GPU's range: exit 2. A second user's request for a held GPU is refused naming the holder. Forged
# and malformed requests, a flood of 2000 requests, clients killed mid-request: no GPU changes that
# should not (read back through the simulator as root), the service keeps answering. The session's
# leader exiting, `gpuclk restore` by the user, and the service stopping put the GPUs back. Every
# grant and refusal is in the service's log. Needs root (skips, 77, otherwise).
source "$(dirname "$0")/lib.sh" "$1"
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
  echo "skipped: needs root and setpriv (util-linux) to run clients as other users"
  exit 77
fi
skip_unless_others_reach nobody "$GPUCLK_BIN" "$GPUCLK_BIN_DIR/libnvml-sim.so"
PY=/usr/bin/python3 # not a per-user python shim: the clients run as other users
chmod 755 "$TEST_TMP"
SOCK="$TEST_TMP/gpuclk.sock"
ETC="$TEST_TMP/etc"
POLICY="$ETC/policy.toml"
mkdir -m 755 "$ETC"
cat >"$POLICY" <<'TOML'
version = 1
[[rule]]
name = "nobody-power"
users = ["nobody"]
gpus = "0,1"
settings = ["power_limit", "locked_gpu_clocks"]
power_limit_min_w = 300
power_limit_max_w = 650
locked_gpu_clocks_max_mhz = 1755
[[rule]]
name = "daemon-any-power"
users = [1]
gpus = "all"
settings = ["power_limit"]
TOML
chmod 644 "$POLICY"

# as USER ARGS...: gpuclk ARGS as USER (its own group, no other groups), as gpuclk() does.
as() {
  local user=$1
  shift
  OUT=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \
    "$GPUCLK_BIN" --sim --socket "$SOCK" "$@" 2>"$TEST_TMP/stderr")
  RC=$?
  ERR=$(cat "$TEST_TMP/stderr")
  LAST_CMD="($user) gpuclk $*"
}
limits() {
  "$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits |
    tr '\n' ' ' | sed 's/ $//'
}
expect_limits() {
  check
  local got
  got=$(limits)
  [ "$got" == "$1" ] || fail "power limits '$got', expected '$1'"
}
wait_for() {
  local n=$(($1 * 10))
  shift
  for _ in $(seq "$n"); do eval "$*" && return 0; sleep 0.1; done
  return 1
}
serve() { start_serve --sim --socket "$SOCK" serve --listen 127.0.0.1:0 --policy "$POLICY"; }
INITIAL="700.00 700.00 700.00 700.00"

# --- A policy others could change, or a malformed one: exit 2 at start, no socket. ---
chmod 666 "$POLICY"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$POLICY"
expect_exit 2
expect_err "is world-writable: refusing"
chmod 664 "$POLICY"
chgrp nogroup "$POLICY"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$POLICY"
expect_exit 2
expect_err "is writable by group 65534"
chmod 644 "$POLICY"
chgrp root "$POLICY"
chown nobody "$POLICY"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$POLICY"
expect_exit 2
expect_err "is owned by uid 65534, not root"
chown root "$POLICY"
chmod 777 "$ETC"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$POLICY"
expect_exit 2
expect_err "policy folder $ETC is world-writable"
chmod 755 "$ETC"
cp "$POLICY" "$ETC/bad.toml"
sed -i 's/power_limit_max_w = 650/power_limit_max_w = "lots"/' "$ETC/bad.toml"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$ETC/bad.toml"
expect_exit 2
expect_err "bad.toml:8: power_limit_max_w must be watts"
gpuclk --sim --socket "$SOCK" serve --listen off --policy "$ETC/missing.toml"
expect_exit 2
expect_err "cannot read the policy"
check
[ ! -e "$SOCK" ] || fail "a refused start left $SOCK"

# --- Without a service a user cannot write (NVML refuses), as before. ---
serve || exit 1
T0=$(date +%s)

# Outside the policy: exit 4, the rule ('none') named; nothing written.
as bin set -i 0 --power-limit 600
expect_exit 4
expect_err "rule 'none'"
expect_err "no rule of $POLICY names user bin (uid 2)"
expect_limits "$INITIAL"

# Within the bounds: applied, printed as a direct set prints it, read back through the simulator.
as nobody set -i 0 --power-limit 600
expect_exit 0
expect_out_re "0 +power limit +700 W +600 W +600 W +changed"
expect_out "changed 1 setting(s) on 1 GPU(s); journal $GPUCLK_STATE_DIR/journal.json"
expect_err "set by the service (rule 'nobody-power'"
expect_limits "600.00 700.00 700.00 700.00"
"$GPUCLK_BIN" --sim journal --history >"$TEST_TMP/journal.txt"
check
grep -q "delegated: uid 65534 (nobody)" "$TEST_TMP/journal.txt" || fail "journal: $(cat "$TEST_TMP/journal.txt")"

# A clock lock within the bounds, then `reset` of it through the service; a reset to the default
# power limit (700 W) is above this user's maximum.
as nobody set -i 0 --lock-gpu-clocks 1410,1755
expect_exit 0
expect_out_re "0 +locked GPU clocks +unknown +1410.+1755 MHz .*changed"
as nobody reset -i 0 --gpu-clocks
expect_exit 0
expect_out_re "0 +locked GPU clocks +1410.+1755 MHz +unlocked .*changed"
as nobody reset -i 0 --power-limit
expect_exit 4
expect_err "power limit 700 W is above the maximum 650 W"

# A dry run through the service: what would change, nothing written, nothing held.
as nobody --format json set -i 1 --power-limit 400 --dry-run
expect_exit 0
expect_json '.settings[0].result' "would change"
expect_json '.settings[0].target' "400 W"
expect_limits "600.00 700.00 700.00 700.00"

# Outside the policy's bounds (4), the GPU's range (2), a GPU or setting not granted (4).
as nobody set -i 0 --power-limit 700
expect_exit 4
expect_err "refused by rule 'nobody-power'"
expect_err "power limit 700 W is above the maximum 650 W"
as nobody set -i 0 --lock-gpu-clocks 1980
expect_exit 4
expect_err "locked GPU clock 1980 MHz is above the maximum 1755 MHz"
as nobody set -i 2 --power-limit 600
expect_exit 4
expect_err "GPU 2 is not among its GPUs"
as nobody set -i 1 --app-clocks 2619,1755
expect_exit 4
expect_err "it does not allow application clocks"
as nobody set --power-limit 600 # no -i: every GPU, and GPUs 2 and 3 are not granted
expect_exit 4
as daemon set -i 3 --power-limit 50
expect_exit 2
expect_err "50 W"
as nobody set -i 0 --power-limit lots
expect_exit 2
expect_limits "600.00 700.00 700.00 700.00"

# A second user asking for a held GPU: refused, naming the holder.
as daemon set -i 0 --power-limit 500
expect_exit 4
expect_err "GPU 0 is held by nobody (uid 65534)"
expect_limits "600.00 700.00 700.00 700.00"

# --- Forged and malformed requests (raw bytes as nobody): refused, nothing changes. ---
cat >"$TEST_TMP/raw.py" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
lines = [
    b"not json at all",
    b'{"request":"set","uid":0,"gid":0,"pid":1,"gpus":[3],"settings":{"power_limit":"600"}}',
    b'{"request":"set","gpus":[-1],"settings":{"power_limit":"600"}}',
    b'{"request":"set","gpus":[99],"settings":{"power_limit":"600"}}',
    b'{"request":"set","gpus":"0","settings":{"power_limit":"600"}}',
    b'{"request":"set","gpus":[],"settings":{"power_limit":"600"}}',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":600}}',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":"1e9"}}',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":"nan"}}',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":"99999999999999999999999"}}',
    b'{"request":"set","gpus":[1],"settings":{"voltage":"1"}}',
    b'{"request":"set","gpus":[1],"settings":{}}',
    b'{"request":"set","gpus":[1],"settings":"power_limit=600"}',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":"600"},"snap":"yes"}',
    b'{"request":"set","v":2,"gpus":[1],"settings":{"power_limit":"600"}}',
    b'{"request":"restore","gpus":[7]}',
    b'[1,2,3]',
    b'{"request":"set","gpus":[1],"settings":{"power_limit":"6\\u0000"}}',
]
s.sendall(b"\n".join(lines) + b"\n")
data = b""
while data.count(b"\n") < len(lines):
    chunk = s.recv(1 << 20)
    if not chunk: break
    data += chunk
answers = [json.loads(l) for l in data.decode().splitlines()]
ok = [a for a in answers if a.get("ok")]
print(len(answers), "answers,", len(ok), "ok")
PY
OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups $PY "$TEST_TMP/raw.py" "$SOCK" 2>&1)
LAST_CMD="raw requests"
expect_out "18 answers, 0 ok"
expect_limits "600.00 700.00 700.00 700.00"

# A request line longer than the protocol allows: an error, the connection closed.
OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups $PY -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b"{\"request\":\"set\",\"x\":\"" + b"A" * 100000 + b"\"}\n")
print(s.recv(1000).decode())' "$SOCK" 2>&1)
expect_out "longer than"

# --- A flood: 2000 requests from one connection (refused and granted-again alike). ---
FLOOD_START=$(date +%s.%N)
OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups $PY -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])
reqs = []
for i in range(2000):
    gpu, watts = [(2, "600"), (0, "700"), (0, "600"), (1, "x")][i % 4]
    reqs.append(json.dumps({"request": "set", "gpus": [gpu], "settings": {"power_limit": watts}}))
s.sendall(("\n".join(reqs) + "\n").encode())
data = b""
while data.count(b"\n") < len(reqs):
    chunk = s.recv(1 << 20)
    if not chunk: break
    data += chunk
answers = [json.loads(l) for l in data.decode().splitlines()]
print(len(answers), "answers,", sum(1 for a in answers if a.get("ok")), "granted,",
      sum(1 for a in answers if a.get("code") == 4), "refused 4,",
      sum(1 for a in answers if a.get("code") == 2), "refused 2")' "$SOCK" 2>&1)
LAST_CMD="flood"
expect_out "2000 answers, 500 granted, 1000 refused 4, 500 refused 2"
echo "flood of 2000 requests: $(echo "$(date +%s.%N) - $FLOOD_START" | bc) s"
expect_limits "600.00 700.00 700.00 700.00"

# --- Clients killed mid-request: the service answers on; a grant whose session is gone is put
# back (the client is its own session's leader here). ---
for delay in 0 0.01 0.05; do
  setpriv --reuid=nobody --regid=nogroup --clear-groups setsid $PY -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"request\":\"set\",\"gpus\":[1],\"settings\":{\"power_limit\":\"550\"}}\n")
time.sleep(60)' "$SOCK" &
  KILLED=$!
  sleep "$delay"
  kill -9 "$KILLED"
  wait "$KILLED" 2>/dev/null
done
check
wait_for 10 '[ "$(limits)" == "600.00 700.00 700.00 700.00" ]' || fail "after killed clients: $(limits)"
as nobody --format json query --query-gpu=index
expect_exit 0

# --- The session's leader exiting puts the GPU back. ---
mkdir -m 700 "$TEST_TMP/nobody"
chown nobody "$TEST_TMP/nobody"
MARK="$TEST_TMP/nobody/session-set"
setpriv --reuid=nobody --regid=nogroup --clear-groups setsid bash -c \
  "'$GPUCLK_BIN' --sim --socket '$SOCK' set -i 1 --power-limit 500 >'$TEST_TMP/nobody/out' 2>&1; echo \$? >'$MARK'; exec sleep 60" &
LEADER=$!
check
wait_for 10 '[ -s "$MARK" ]' || fail "the session's set did not finish"
check
[ "$(cat "$MARK")" == 0 ] || fail "the session's set: $(cat "$TEST_TMP/nobody/out")"
expect_limits "600.00 500.00 700.00 700.00"
kill "$LEADER"
wait "$LEADER" 2>/dev/null
check
wait_for 10 '[ "$(limits)" == "600.00 700.00 700.00 700.00" ]' || fail "session ended: $(limits)"
check
# (the log line comes right after the write, so it may trail the read-back by a moment)
wait_for 5 'grep -q "session $LEADER: the session ended: GPUs 1 put back" "$TEST_TMP/serve.log"' ||
  fail "no put-back line: $(tail -5 "$TEST_TMP/serve.log")"

# --- `gpuclk restore` by the user puts back what it holds; then the GPU is free for others. ---
as bin restore
expect_exit 0
expect_out "nothing to restore: you hold no GPU settings through the service"
as nobody restore
expect_exit 0
expect_out_re "0 +power limit +600 W +700 W +700 W +changed"
expect_out "changed 1 setting(s) on 1 GPU(s); journal $GPUCLK_STATE_DIR/journal.json"
expect_limits "$INITIAL"
check
[ "$("$GPUCLK_BIN" --sim --format json journal | jq '.gpus | length')" == 0 ] || fail "journal not clean"
# Root changing a held setting since: the user's restore leaves root's value as it is.
as nobody set -i 1 --power-limit 600
expect_exit 0
gpuclk --sim set -i 1 --power-limit 550
expect_exit 0
as nobody restore
expect_exit 0
expect_out "note: GPU 1: power limit was changed since to 550 W; left as it is"
expect_limits "700.00 550.00 700.00 700.00"
gpuclk --sim restore
expect_exit 0
expect_limits "$INITIAL"

as daemon set -i 0,3 --power-limit 500
expect_exit 0
expect_limits "500.00 700.00 700.00 500.00"

# --- /metrics: requests by verdict, and who holds which GPU. ---
OUT=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | grep '^gpuclk_delegated')
LAST_CMD="curl /metrics"
expect_out_re '^gpuclk_delegated_requests_total\{verdict="granted"\} [1-9][0-9]*'
expect_out_re '^gpuclk_delegated_requests_total\{verdict="refused"\} [1-9][0-9]{3,}'
expect_out_re '^gpuclk_delegated_held\{gpu="0",.*uid="1"\} 1'
expect_out_re '^gpuclk_delegated_held\{gpu="1",.*uid=""\} 0'

# --- The log has every grant and refusal with the uid. ---
check
grep -q "delegated: uid 2 (bin) pid [0-9]*: set power_limit=600 gpus=\[0\]: refused (rule 'none', exit 4)" \
  "$TEST_TMP/serve.log" || fail "no refusal line for bin"
check
grep -Eq "delegated: uid 65534 \(nobody\) pid [0-9]* (session|process) [0-9]*: set power_limit=600 gpus=\[0\]: granted by rule 'nobody-power'" \
  "$TEST_TMP/serve.log" || fail "no grant line for nobody"
check
grep -q "uid 1 (daemon) pid [0-9]*: set power_limit=500 gpus=\[0\]: refused (rule 'holder', exit 4)" \
  "$TEST_TMP/serve.log" || fail "no holder refusal line"

# --- The service stopping puts back what users still hold. ---
kill "$SERVE_PID"
wait "$SERVE_PID"
RC=$?
LAST_CMD="serve (SIGTERM)"
expect_exit 0
SERVE_PID=""
expect_limits "$INITIAL"
check
grep -Eq "uid 1 \(daemon\) (session|process) [0-9]*: the service stops: GPUs 0,3 put back" "$TEST_TMP/serve.log" ||
  fail "no stop put-back line: $(tail -5 "$TEST_TMP/serve.log")"

# Read-only: the policy is checked, then not used.
start_serve --sim --read-only --socket "$SOCK" serve --listen off --policy "$POLICY" || exit 1
check
grep -q "read-only mode: no delegated settings" "$TEST_TMP/serve.log" || fail "read-only: $(cat "$TEST_TMP/serve.log")"
stop_serve

# A service without a policy takes no settings from users: the user's set goes to NVML (refused).
start_serve --sim --socket "$SOCK" serve --listen off || exit 1
as nobody set -i 0 --power-limit 600
check
[ "$RC" -ne 0 ] || fail "a user's set without a policy succeeded"
expect_limits "$INITIAL"
stop_serve
# --- gpus = "job": the GPUs of the requester's Slurm job, found from its cgroup (a real one the
# test makes, as slurmstepd would: .../slurm/uid_U/job_J/step_S) and scontrol (a stand-in on the
# service's PATH). The client's environment plays no part. Skipped without a writable cgroup. ---
CGROUP=""
for root in /sys/fs/cgroup/freezer /sys/fs/cgroup/unified /sys/fs/cgroup; do
  dir="$root/gpuclk-test-$$/slurm/uid_65534/job_4242/step_0"
  if mkdir -p "$dir" 2>/dev/null && [ -e "$dir/cgroup.procs" ]; then
    CGROUP="$root/gpuclk-test-$$"
    break
  fi
  rmdir -p "$dir" 2>/dev/null
done
remove_cgroup() { [ -n "$CGROUP" ] && find "$CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null; }
trap 'stop_serve; remove_cgroup; rm -rf "$TEST_TMP"' EXIT
if [ -z "$CGROUP" ]; then
  echo "gpus = \"job\" skipped: no cgroup hierarchy to make a job's cgroup in"
else
  mkdir -m 755 "$TEST_TMP/bin"
  cat >"$TEST_TMP/bin/scontrol" <<SH
#!/bin/sh
[ "\$*" = "show job -d --oneliner 4242" ] || exit 1
echo "JobId=4242 JobName=train UserId=nobody(65534) GroupId=nogroup(65534) JobState=RUNNING NodeList=$(hostname -s) Nodes=$(hostname -s) CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:2-3)"
SH
  chmod 755 "$TEST_TMP/bin/scontrol"
  cat >"$ETC/jobs.toml" <<'TOML'
version = 1
[[rule]]
name = "job-gpus"
users = ["nobody"]
gpus = "job"
settings = ["power_limit"]
TOML
  PATH="$TEST_TMP/bin:$PATH" start_serve --sim --socket "$SOCK" serve --listen off --policy "$ETC/jobs.toml" || exit 1
  as nobody set -i 2 --power-limit 600 # not in a job: refused
  expect_exit 4
  expect_err "runs in no Slurm job"
  rm -f "$TEST_TMP/nobody/"*
  setpriv --reuid=nobody --regid=nogroup --clear-groups setsid bash -c "
    while [ ! -e '$TEST_TMP/nobody/go' ]; do sleep 0.05; done
    '$GPUCLK_BIN' --sim --socket '$SOCK' set -i 2 --power-limit 600 >'$TEST_TMP/nobody/out2' 2>&1; echo \$? >'$TEST_TMP/nobody/rc2'
    '$GPUCLK_BIN' --sim --socket '$SOCK' set -i 1 --power-limit 600 >'$TEST_TMP/nobody/out1' 2>&1; echo \$? >'$TEST_TMP/nobody/rc1'
    exec sleep 60" &
  LEADER=$!
  echo "$LEADER" >"$CGROUP/slurm/uid_65534/job_4242/step_0/cgroup.procs"
  touch "$TEST_TMP/nobody/go"
  check
  wait_for 10 '[ -s "$TEST_TMP/nobody/rc1" ]' || fail "the job's requests did not finish"
  check
  [ "$(cat "$TEST_TMP/nobody/rc2")" == 0 ] || fail "job GPU 2: $(cat "$TEST_TMP/nobody/out2")"
  check
  [ "$(cat "$TEST_TMP/nobody/rc1")" == 4 ] && grep -q "GPU 1 is not among the GPUs of Slurm job 4242" "$TEST_TMP/nobody/out1" ||
    fail "job GPU 1: $(cat "$TEST_TMP/nobody/out1")"
  expect_limits "700.00 700.00 600.00 700.00"
  kill "$LEADER"
  wait "$LEADER" 2>/dev/null
  check
  wait_for 10 '[ "$(limits)" == "$INITIAL" ]' || fail "job session ended: $(limits)"
  stop_serve
fi
# --- A client whose session began outside the service's PID namespace (a container entered
# without a terminal, a CI runner): getsid() says 0 there, so the grant is tied to the oldest
# process above gpuclk that the service sees (below the namespace's init), and put back when it
# exits. The service and the client run in a new PID namespace (unshare), the client's session
# leader outside it. ---
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  NS="$TEST_TMP/ns"
  mkdir -m 777 "$NS"
  cat >"$NS/run.sh" <<'SH'
# In the new PID namespace: the service, then nobody's set from a bash that outlives it.
"$GPUCLK_BIN" --sim --socket "$NS/gpuclk.sock" serve --listen off --policy "$POLICY" 2>"$NS/serve.log" &
for _ in $(seq 100); do grep -q "sampling every" "$NS/serve.log" && break; sleep 0.1; done
echo "sid $(ps -o sid= $$ | tr -d " ")" >"$NS/sid"
# A child of the namespace's init: nothing above it would outlive the request.
setpriv --reuid=nobody --regid=nogroup --clear-groups \
  "$GPUCLK_BIN" --sim --socket "$NS/gpuclk.sock" set -i 0 --power-limit 600 >"$NS/direct" 2>&1
echo $? >>"$NS/direct"
setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
  "'$GPUCLK_BIN' --sim --socket '$NS/gpuclk.sock' set -i 1 --power-limit 500 >'$NS/out' 2>&1; echo \$? >'$NS/rc'; exec sleep 60" &
PARENT=$!
echo "$PARENT" >"$NS/parent"
for _ in $(seq 100); do [ -s "$NS/rc" ] && break; sleep 0.1; done
"$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits | tr '\n' ' ' >"$NS/held"
kill "$PARENT"
wait "$PARENT"
for _ in $(seq 100); do grep -q "the process ended" "$NS/serve.log" && break; sleep 0.1; done
"$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits | tr '\n' ' ' >"$NS/after"
SH
  GPUCLK_BIN="$GPUCLK_BIN" NS="$NS" POLICY="$POLICY" unshare --pid --fork --mount-proc bash "$NS/run.sh"
  LAST_CMD="(nobody, session outside the namespace) gpuclk set -i 1 --power-limit 500"
  check
  [ "$(cat "$NS/sid")" == "sid 0" ] || fail "the client's session is visible: $(cat "$NS/sid")"
  check
  [ "$(tail -1 "$NS/direct")" == 4 ] && grep -q "nothing would outlive the request" "$NS/direct" ||
    fail "a child of init: $(cat "$NS/direct")"
  check
  [ "$(cat "$NS/rc" 2>/dev/null)" == 0 ] || fail "refused: $(cat "$NS/out" 2>/dev/null)"
  check
  grep -q "put back when process $(cat "$NS/parent") (bash) ends" "$NS/out" ||
    fail "no put-back note: $(cat "$NS/out")"
  check
  [ "$(cat "$NS/held")" == "700.00 500.00 700.00 700.00 " ] || fail "held: $(cat "$NS/held")"
  check
  grep -q "uid 65534 (nobody) process $(cat "$NS/parent"): the process ended: GPUs 1 put back" "$NS/serve.log" ||
    fail "no put-back line: $(tail -3 "$NS/serve.log")"
  check
  [ "$(cat "$NS/after")" == "700.00 700.00 700.00 700.00 " ] || fail "after the process ended: $(cat "$NS/after")"
else
  echo "note: no PID namespace here (unshare --pid failed): the session-outside case is not checked"
fi
echo "serve_delegate: $(($(date +%s) - T0)) s with the service"
finish
