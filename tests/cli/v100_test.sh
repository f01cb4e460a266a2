#!/usr/bin/env bash
# The pre-Ampere V100 model (sim/scenarios/v100.toml, models/v100-sxm2-32gb.toml) through every
# read command: no GPM, no row remapping, no memory clock locks, 7.5 MHz clock steps. Nothing may
# crash or fail where the H100 paths have data; what is not supported reads N/A (null in JSON).
source "$(dirname "$0")/lib.sh" "$1"
export GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=30

gpuclk --sim v100
expect_exit 0
expect_out "Tesla V100-SXM2-32GB"
expect_out_re "^  3  Tesla V100-SXM2-32GB +P0 +1530 +1530 +877 +877 "
expect_no_out "warning:"
expect_no_out "CRITICAL:"

gpuclk --sim v100 --format json
expect_exit 0
expect_json '.gpus | length' 4
expect_json '.findings | length' 0

gpuclk --sim v100 info -i 0
expect_exit 0
expect_out_re "Architecture +: Volta"
expect_out_re "Compute Capability +: 7.0"
expect_out_re "SMs +: 80"
expect_out_re "Total +: 32510 MiB"
expect_out_re "At Max Clock +: 125.3 TFLOP/s"  # FP16 tensor, 80 SMs at 1530 MHz

gpuclk --sim v100 clocks -i 0
expect_exit 0
# 7.5 MHz steps, listed by NVML in whole MHz (135, 142, 150, …): a range with its steps, not 187
# values one by one (issue 32).
expect_out_re "Graphics +: 135–1530 MHz in 7–8 MHz steps \(7.5 on average\), 187 values"
expect_out_re "Graphics Step +: 7.5 MHz"
expect_no_out "135, 142, 150"
expect_out_re "Memory +: 877 MHz"

gpuclk --sim v100 query --fields index,name,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit,temperature.gpu --format csv,noheader
expect_exit 0
expect_lines 4
# A V100 has no memory power scope: N/A, and stat has no memory share rather than 0 J.
gpuclk --sim v100 query --fields memory.power.draw.average --format csv,noheader -i 0
expect_exit 0; expect_out "[N/A]"
gpuclk --sim v100 stat --json "$TEST_TMP/v100-stat.json" -i 0 -- sleep 1.2
expect_exit 0
check; [ "$(jq -r '.gpus[0] | has("memory_energy_j")' "$TEST_TMP/v100-stat.json")" == false ] ||
  fail "a V100 stat report has a memory energy: $(cat "$TEST_TMP/v100-stat.json")"
gpuclk --sim v100 query --fields index,name,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit,temperature.gpu --format csv,noheader
expect_exit 0
expect_lines 4
expect_out "0, Tesla V100-SXM2-32GB, 1530 MHz, 1530 MHz, 1530 MHz, 300.00 W"

# dmon with every group: the GPM columns (g) read "-" on a GPU without GPM.
gpuclk --sim v100 dmon -c 2 -s pucvmetrgx
expect_exit 0
expect_lines 10
expect_out_re "^ +0 +[0-9]+ "
gpuclk --sim v100 dmon -c 1 -s g --format csv
expect_exit 0
expect_out "0, -, -, -"

gpuclk --sim v100 topo
expect_exit 0
expect_out "GPU0"

# A write on the 7.5 MHz grid: 1522 MHz is a V100 clock, 1523 is not (nearest named).
gpuclk --sim v100 set -i 0 --app-clocks 877,1522
expect_exit 0
gpuclk --sim v100 query -i 0 --fields clocks.applications.graphics --format csv,noheader
expect_out "1522 MHz"
gpuclk --sim v100 set -i 0 --app-clocks 877,1523
expect_exit 2
expect_err "1522"
expect_err "supported: 135–1530 MHz in 7–8 MHz steps (7.5 on average), 187 values"
# A lock's minimum and maximum off the grid: the supported clocks once per GPU, not twice.
gpuclk --sim v100 set -i 0 --lock-gpu-clocks 1000,1001
expect_exit 2
expect_err "nearest: 997 MHz or 1005 MHz (supported: 135–1530 MHz in 7–8 MHz steps"
expect_err "maximum GPU clock 1001 MHz is not supported; nearest: 997 MHz or 1005 MHz (supported: as above)"
check; [ "$(grep -o "187 values" <<<"$ERR" | wc -l)" -eq 1 ] || fail "the supported clocks are listed more than once"
gpuclk --sim v100 -i 0 sweep --sm-clocks 1000 --workload gemm-fp16 --duration 1
expect_exit 2; expect_err "supported: 135–1530 MHz in 7–8 MHz steps"
gpuclk --sim v100 restore
expect_exit 0

# doctor on the healthy V100 node: nothing above info; no row remapping, no retired pages.
GPUCLK_SIM_SPEED=40 gpuclk --sim v100 --format json doctor --duration 5s
expect_exit 0
expect_json '[.findings[] | select(.severity != "info")] | length' 0
expect_json '[.findings[] | select(.rule == "retired_pages" or .rule == "row_remapping")] | length' 0

# nvidia-smi's retired_pages fields: the V100s of doctor/retired-pages; N/A on an H100.
gpuclk --sim "$GPUCLK_BIN_DIR/scenarios/doctor/retired-pages.toml" query \
  --fields index,retired_pages.sbe,retired_pages.dbe,retired_pages.pending --format csv,noheader
expect_exit 0
expect_out "0, 0, 2, Yes"
expect_out "1, 44, 6, No"
# status through gpuclk serve shows the same page-retirement findings as read directly.
SOCK="$TEST_TMP/gpuclk.sock"
start_serve --sim "$GPUCLK_BIN_DIR/scenarios/doctor/retired-pages.toml" --socket "$SOCK" serve --listen off
gpuclk --sim "$GPUCLK_BIN_DIR/scenarios/doctor/retired-pages.toml" --direct status
expect_exit 0; direct=$OUT
gpuclk --sim "$GPUCLK_BIN_DIR/scenarios/doctor/retired-pages.toml" --socket "$SOCK" status
expect_exit 0
expect_out "CRITICAL: GPU 0: a page retirement is pending"
expect_out "warning: GPU 1: 50 pages of device memory retired"
check; [ "$(grep -E '^(CRITICAL|warning)' <<<"$OUT")" = "$(grep -E '^(CRITICAL|warning)' <<<"$direct")" ] ||
  fail "findings through the service differ from direct ones"
stop_serve
gpuclk --sim default query -i 0 --format json \
  --fields retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending
expect_exit 0
expect_json '.[0] | to_entries | map("\(.key)=\(.value)") | join(" ")' \
  "retired_pages.sbe=null retired_pages.dbe=null retired_pages.pending=null"

finish
