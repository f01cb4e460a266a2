#!/usr/bin/env bash
# NVLink on the simulator: the 2x H200 NV18 pair (sim/scenarios/2xh200.toml) in topo, info, query
# and dmon -s n; doctor finds the link down (doctor/nvlink-down) and the growing replay counter
# (doctor/nvlink-errors), and nothing about the links on the healthy pair; /metrics carries the
# per-link series while the two ranks exchange gradients (--metrics-detail nvlink), and by default
# the links summed per GPU with series of its own only for a link that is down or whose errors
# rise (link 7 of nvlink-down, link 4 of GPU 1 in nvlink-errors; none on the healthy pair, whose
# link 14 counts data-ECC errors at a healthy link's background rate). The service reads the
# links' data counters with the error counters, every minute, and every slow tick only while a
# `dmon -s n` streams them: its slow samples say which reads were fresh, and its NVML calls
# (GPUCLK_NVML_TRACE) show one field-value call less per GPU and slow tick without a stream.
source "$(dirname "$0")/lib.sh" "$1"
SCEN="$GPUCLK_BIN_DIR/scenarios/doctor"
fresh_node() { rm -f "$GPUCLK_SIM_STATE" "$GPUCLK_SIM_STATE.gen" "$GPUCLK_SIM_STATE.lock"; }
export GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=30

# --- topo: the matrix's NV18 and the pair's bandwidth ---
fresh_node
gpuclk --sim 2xh200 --direct topo
expect_exit 0
expect_out_re "^GPU0 +X +NV18 "
expect_out_re "^GPU1 +NV18 +X "
expect_out "GPU0 <-> GPU1: 18 links x 26.562 GB/s = 478 GB/s (NVLink 4.0)"
expect_no_out "down"
gpuclk --sim "$SCEN/nvlink-down.toml" --direct topo
expect_exit 0
expect_out_re "^GPU0 +X +NV17 "
expect_out "GPU0 <-> GPU1: 17 links x 26.562 GB/s = 452 GB/s (NVLink 4.0)"
expect_out "GPU0: NVLink link 7 is down (17 of 18 up)"
expect_out "GPU1: NVLink link 7 is down (17 of 18 up)"
# JSON and CSV carry each GPU's links as columns beside the matrix's.
gpuclk --sim "$SCEN/nvlink-down.toml" --direct --format json topo
expect_exit 0
expect_json '.[0].nvlink_links_up == 17 and .[0].nvlink_links_down == "7" and .[1].nvlink_links_down == "7"' true
expect_json '.[0].nvlink_version == "4.0" and (.[0].nvlink_gigabytes_per_s | floor) == 451' true
gpuclk --sim 2xh200 --direct --format csv topo
expect_out "nvlink_links_up, nvlink_links_down, nvlink_gigabytes_per_s [GB/s], nvlink_version"
expect_out_re "^GPU0, X, NV18, .*, 18, , 478.1 GB/s, 4.0$"
# An NVSwitch node: each GPU's links go to the switches.
gpuclk --sim default --direct topo -i 0
expect_out "GPU0 <-> NVSwitch: 18 links x 26.562 GB/s = 478 GB/s (NVLink 4.0)"

# --- info and query ---
gpuclk --sim 2xh200 --direct --format json info -i 1
expect_exit 0
expect_json '.gpus[0].name' "NVIDIA H200"
expect_json '.gpus[0].nvlink.links' 18
expect_json '.gpus[0].nvlink.links_up' 18
expect_json '.gpus[0].nvlink.version' "4.0"
gpuclk --sim 2xh200 --direct query --format csv,noheader \
  --query-gpu=index,name,memory.total,power.limit,nvlink.link_count,nvlink.active,nvlink.version,nvlink.speed,nvlink.bandwidth,nvlink.errors.ecc,nvlink.errors.replay
expect_exit 0
# DL ECC: 13 + 70 + 41 counted before power-on, and link 14's 50 a minute for 30 s.
expect_out "0, NVIDIA H200, 143771 MiB, 700.00 W, 18, 18, 4.0, 26.562 GB/s, 478.1 GB/s, 149, 0"
expect_out "1, NVIDIA H200, 143771 MiB, 700.00 W, 18, 18, 4.0, 26.562 GB/s, 478.1 GB/s, 22, 0"
# The ranks exchange gradients: 30 s in, what GPU 1 sent GPU 0 received.
gpuclk --sim 2xh200 --direct query --format csv,noheader,nounits \
  --query-gpu=index,nvlink.tx_data,nvlink.rx_data
expect_exit 0
TX1=$(awk -F', ' '$1 == 1 { print $2 }' <<<"$OUT")
RX0=$(awk -F', ' '$1 == 0 { print $3 }' <<<"$OUT")
check; [ "${TX1:-0}" -gt $((40 * 1024 * 1024)) ] || fail "GPU 1 sent $TX1 KiB over NVLink, expected > 40 GiB"
check; awk -v a="$TX1" -v b="$RX0" 'BEGIN { exit !(a - b < 32 && b - a < 32) }' ||
  fail "GPU 0 received $RX0 KiB, GPU 1 sent $TX1 KiB"
# A PCIe card has no NVLink: N/A.
gpuclk --sim h100-calibration --direct query --format csv,noheader --query-gpu=nvlink.link_count
expect_out "[N/A]"

# --- dmon -s n: both GPUs transmit and receive while the gradient exchange runs ---
fresh_node
GPUCLK_SIM_SPEED=4 gpuclk --sim 2xh200 --direct dmon -s n -d 1 -c 8 --format csv,noheader
expect_exit 0
RX0MAX=$(awk -F', ' '$1 == 0 && $2 != "-" { if ($2 > m) m = $2 } END { print m + 0 }' <<<"$OUT")
TX1MAX=$(awk -F', ' '$1 == 1 && $3 != "-" { if ($3 > m) m = $3 } END { print m + 0 }' <<<"$OUT")
TX0MAX=$(awk -F', ' '$1 == 0 && $3 != "-" { if ($3 > m) m = $3 } END { print m + 0 }' <<<"$OUT")
check; [ "$RX0MAX" -gt 10000 ] || fail "GPU 0's NVLink receive rate peaked at $RX0MAX MB/s: $OUT"
check; [ "$TX1MAX" -gt 10000 ] || fail "GPU 1's NVLink transmit rate peaked at $TX1MAX MB/s"
check; [ "$TX1MAX" -le 460000 ] || fail "GPU 1 sent $TX1MAX MB/s, above the links' 478 GB/s"
check; [ "$TX0MAX" -gt 10000 ] || fail "GPU 0's NVLink transmit rate peaked at $TX0MAX MB/s"
gpuclk --sim 2xh200 --direct dmon -s n -c 1
expect_exit 0
expect_out_re "^# gpu +rxnvl +txnvl"

# --- doctor: the link down, the growing counter, nothing on the healthy pair ---
export GPUCLK_SIM_SPEED=$(slowed 40)
doctor_on() {
  fresh_node
  GPUCLK_SIM_START=$2 gpuclk --sim "$1" --direct --format json doctor --duration 20s --interval 200ms
}
nvlink_findings() { jq -r '.findings[] | select(.rule | startswith("nvlink")) | "\(.rule):\(.severity):\(.gpus | join(","))"' <<<"$OUT" | sort | paste -sd' '; }
doctor_on 2xh200 30
expect_exit 0
check; [ -z "$(nvlink_findings)" ] || fail "NVLink findings on the healthy pair: $(nvlink_findings)"
expect_json '.worst' "info"
doctor_on "$SCEN/nvlink-down.toml" 30
expect_exit 10
check; [ "$(nvlink_findings)" == "nvlink_down:warning:0 nvlink_down:warning:1" ] ||
  fail "findings '$(nvlink_findings)', expected nvlink_down on 0 and 1"
expect_json '[.findings[] | select(.rule == "nvlink_down")][0].evidence.links_down' "7"
expect_json '[.findings[] | select(.rule == "nvlink_down")][0].evidence.links_up' 17
doctor_on "$SCEN/nvlink-errors.toml" 30
expect_exit 10
check; [ "$(nvlink_findings)" == "nvlink_errors:warning:1" ] ||
  fail "findings '$(nvlink_findings)', expected nvlink_errors on 1"
check; jq -e '[.findings[] | select(.rule == "nvlink_errors")][0] | (.summary | contains("link 4 replay")) and .evidence.link4_replay_per_minute >= 100 and .evidence.link4_replay_per_minute <= 140' <<<"$OUT" >/dev/null ||
  fail "nvlink_errors does not name link 4's replays at ~120/min: $OUT"
gpuclk doctor --explain nvlink_down
expect_exit 0
expect_out "inactive"

# --- /metrics while the gradient exchange runs ---
fresh_node
SOCK="$TEST_TMP/gpuclk.sock"
GPUCLK_SIM_SPEED=4 start_serve --sim 2xh200 --socket "$SOCK" serve --listen 127.0.0.1:0 --interval 100ms \
  --metrics-detail nvlink || exit 1
metrics() { curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics"; }
for _ in $(seq "$(scaled 50)"); do
  metrics | grep -q '^gpuclk_nvlink_transmit_bytes_total{gpu="1".*link="3".*} [1-9]' && break
  sleep 0.2
done
OUT=$(metrics)
LAST_CMD="curl /metrics"
expect_out_re '^gpuclk_nvlink_up\{gpu="0".*link="17".*\} 1$'
expect_out_re '^gpuclk_nvlink_errors_total\{gpu="0".*link="9".*type="ecc".*\} 70$'
expect_out_re '^gpuclk_nvlink_errors_total\{gpu="1".*link="5".*type="replay".*\} 0$'
expect_out_re '^gpuclk_nvlink_transmit_bytes_total\{gpu="1".*link="3".*\} [1-9]'
expect_out_re '^gpuclk_nvlink_receive_bytes_total\{gpu="0".*link="3".*\} [1-9]'
expect_out "# TYPE gpuclk_nvlink_transmit_bytes_total counter"
# The per-GPU sums are the links' sums (data counters and every error type, at one build).
cat >"$TEST_TMP/sums.py" <<'PY'
import re, sys
links, gpus = {}, {}
for line in sys.stdin:
    m = re.match(r'gpuclk_(gpu_)?nvlink_(errors_total|transmit_bytes_total|receive_bytes_total)\{([^}]*)\} (\S+)$', line)
    if not m: continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3)))
    key = (labels["gpu"], m.group(2), labels.get("type", ""))
    if m.group(1): gpus[key] = float(m.group(4))
    else: links[key] = links.get(key, 0) + float(m.group(4))
assert len(gpus) == 2 * 6 and gpus.keys() == links.keys(), (sorted(gpus), sorted(links))
bad = {k: (gpus[k], links[k]) for k in gpus if gpus[k] != links[k]}
assert not bad, bad
PY
check; python3 "$TEST_TMP/sums.py" <<<"$OUT" >"$TEST_TMP/sums.txt" 2>&1 || fail "per-GPU NVLink sums: $(cat "$TEST_TMP/sums.txt")"
expect_out_re '^gpuclk_gpu_nvlinks_up\{gpu="1".*\} 18$'
# topo through the service: the same NVLink lines as read directly.
gpuclk --sim 2xh200 --socket "$SOCK" topo
expect_out "GPU0 <-> GPU1: 18 links x 26.562 GB/s = 478 GB/s (NVLink 4.0)"
gpuclk --sim 2xh200 --socket "$SOCK" --format json topo
expect_json '.[1].nvlink_links_up == 18 and .[1].nvlink_links_down == ""' true
stop_serve

# --- /metrics by default: per GPU, and a link of its own only when down or erroring ---
# scrape_until SECONDS: scrapes every 0.5 s (as a Prometheus would, more often) for that long;
# OUT: the last text.
scrape_until() {
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do OUT=$(metrics); sleep 0.5; done
  LAST_CMD="curl /metrics"
}
per_link() { grep -oE '^gpuclk_nvlink_up\{[^}]*\}' <<<"$OUT" | sed -E 's/.*gpu="([0-9]+)".*link="([0-9]+)".*/\1:\2/' | sort -t: -k1,1n -k2,2n | paste -sd' '; }
# At 30 simulated s a second, 6 s cover three of the service's minute-apart error reads.
fresh_node
GPUCLK_SIM_SPEED=$(slowed 30) start_serve --sim 2xh200 --socket "$SOCK" serve --listen 127.0.0.1:0 \
  --counters-interval 1s || exit 1
scrape_until "$(scaled 6)"
expect_out_re '^gpuclk_gpu_nvlinks_up\{gpu="0".*\} 18$'
expect_no_out "gpuclk_gpu_nvlinks_down"
expect_out_re '^gpuclk_gpu_nvlink_errors_total\{gpu="0".*type="ecc".*\} [1-9]'
expect_out_re '^gpuclk_gpu_nvlink_transmit_bytes_total\{gpu="1".*\} [1-9]'
check; [ -z "$(per_link)" ] || fail "per-link series on the healthy pair: $(per_link)"
stop_serve
fresh_node
start_serve --sim "$SCEN/nvlink-down.toml" --socket "$SOCK" serve --listen 127.0.0.1:0 --counters-interval 1s || exit 1
scrape_until "$(scaled 3)"
expect_out_re '^gpuclk_gpu_nvlinks_down\{gpu="1".*\} 1$'
expect_out_re '^gpuclk_gpu_nvlinks_up\{gpu="1".*\} 17$'
check; [ "$(per_link)" == "0:7 1:7" ] || fail "per-link series for '$(per_link)', expected link 7 of GPUs 0 and 1"
expect_out_re '^gpuclk_nvlink_errors_total\{gpu="0".*link="7".*type="crc".*\} 0$'
stop_serve
fresh_node
GPUCLK_SIM_SPEED=$(slowed 30) start_serve --sim "$SCEN/nvlink-errors.toml" --socket "$SOCK" serve \
  --listen 127.0.0.1:0 --counters-interval 1s || exit 1
scrape_until "$(scaled 6)"
check; [ "$(per_link)" == "1:4" ] || fail "per-link series for '$(per_link)', expected link 4 of GPU 1"
expect_out_re '^gpuclk_nvlink_errors_total\{gpu="1".*link="4".*type="replay".*\} [1-9]'
stop_serve

# --- the service's pace of the links' data counters ---
# data_reads SOCK: per GPU, "fresh/samples/with-rate" of its slow samples over the last 10 min.
data_reads() {
  python3 - "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
f = s.makefile("rw")
f.write(json.dumps({"v": 1, "request": "history", "seconds": 600, "resolution": "interval"}) + "\n")
f.flush()
for g in json.loads(f.readline())["gpus"]:
    slow = g["slow"]
    fresh = sum(1 for x in slow if not x.get("nvlink_data_cached"))
    rated = sum(1 for x in slow if "nvlink_tx_bytes_per_second" in x)
    print(f"{fresh}/{len(slow)}/{rated}")
PY
}
# field_values_per_tick TRACE: the service's nvmlDeviceGetFieldValues calls per slow read (its
# energy reads count the slow reads), and that ratio is what the NVLink data reads move.
field_values_per_tick() {
  awk '$1 == "nvmlDeviceGetFieldValues" { f = $2 } $1 == "nvmlDeviceGetTotalEnergyConsumption" { e = $2 }
       END { if (e > 0) printf "%.2f\n", f / e; else print "none" }' "$1"
}
# 30 simulated seconds a second: 4 s cover two minutes of the sampler's clock, ~120 slow reads.
run_service() {  # run_service TRACE [dmon]: a service for `scaled 4` s; with dmon, one streams -s n
  fresh_node
  GPUCLK_NVML_TRACE="$1" GPUCLK_SIM_SPEED=$(slowed 30) start_serve --sim 2xh200 --socket "$SOCK" serve \
    --listen off --interval 1s --counters-interval 1s || exit 1
  if [ "${2:-}" == dmon ]; then
    "$GPUCLK_BIN" --sim 2xh200 --socket "$SOCK" dmon -s n -d 1 -c "$(scaled 150)" >"$TEST_TMP/dmon_n.txt" 2>&1 &
    local dmon=$!
    sleep "$(scaled 4)"
    OUT=$(data_reads "$SOCK")
    wait "$dmon"
  else
    sleep "$(scaled 4)"
    OUT=$(data_reads "$SOCK")
  fi
  LAST_CMD="history of the slow samples${2:+ while dmon -s n streams}"
  stop_serve
}
run_service "$TEST_TMP/trace_idle.txt"
IDLE=$OUT
# No stream: the data counters at the service's start and each minute (a few reads in ~120), the
# rate of the last two reads kept in every sample after the second.
check; python3 -c "
import sys
for line in sys.argv[1].split():
    fresh, n, rated = map(int, line.split('/'))
    assert n >= 20 and fresh <= 6 and rated >= n // 2, line
" "$IDLE" 2>/dev/null || fail "the service's data reads without a stream (fresh/samples/with a rate per GPU): $IDLE"
run_service "$TEST_TMP/trace_dmon.txt" dmon
STREAMED=$OUT
# While dmon -s n streams: every slow read reads them.
check; python3 -c "
import sys
for line in sys.argv[1].split():
    fresh, n, rated = map(int, line.split('/'))
    assert n >= 20 and fresh >= n // 2, line
" "$STREAMED" 2>/dev/null || fail "the service's data reads while dmon -s n streams: $STREAMED"
check; grep -qE '^ +1 +[0-9]+ +[0-9]+ *$' "$TEST_TMP/dmon_n.txt" ||
  fail "dmon -s n through the service shows no rate: $(tail -3 "$TEST_TMP/dmon_n.txt")"
# NVML calls: a field-value call per GPU and slow read more while the stream asks for the data.
idle_ratio=$(field_values_per_tick "$TEST_TMP/trace_idle.txt")
dmon_ratio=$(field_values_per_tick "$TEST_TMP/trace_dmon.txt")
echo "field-value calls per energy read: $idle_ratio without a stream, $dmon_ratio with dmon -s n; data reads (fresh/samples/rated): $IDLE / $STREAMED"
check; python3 -c "import sys; sys.exit(0 if float('$dmon_ratio') - float('$idle_ratio') >= 0.5 else 1)" 2>/dev/null ||
  fail "field-value calls per slow read: $idle_ratio without a stream, $dmon_ratio with one (expected about one more)"

finish
