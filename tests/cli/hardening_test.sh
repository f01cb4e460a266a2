#!/usr/bin/env bash
# Hostile input (issue 17): every reproducer of the issue, and others of each class. No input may
# make gpuclk write the wrong GPU or the wrong value, crash, hang, or grow without bound; each is
# a clear error with exit 2 (15 for a lost GPU) and nothing written.
source "$(dirname "$0")/lib.sh" "$1"

limits() {  # the power limits of every GPU, one line
  "$GPUCLK_BIN" --sim query --query-gpu=power.limit --format=csv,noheader,nounits | tr '\n' ' '
}
ORIGINAL=$(limits)
unchanged() { check; [ "$(limits)" == "$ORIGINAL" ] || fail "power limits changed: $(limits), were $ORIGINAL"; }

# --- Numbers: an index that overflows is exit 2, never GPU 0 ---
gpuclk --sim -i 18446744073709551616 set --power-limit 600
expect_exit 2; expect_err "GPU index '18446744073709551616' is out of range"; unchanged
gpuclk --sim -i 99999999999999999999999999 query --query-gpu=index
expect_exit 2
gpuclk --sim -i 4096 set --power-limit 600
expect_exit 2; unchanged
gpuclk --sim -i 7 set --power-limit 600
expect_exit 6; unchanged

# --- Selections: an empty one is an error everywhere, never "every GPU" ---
gpuclk --sim -i "" set --power-limit 600
expect_exit 2; expect_err "the GPU selection is empty"; unchanged
gpuclk --sim -i " , " set --power-limit 600
expect_exit 2; unchanged
# refused before the journal is locked (its directory is not even created; found by fuzz_argv)
gpuclk --sim -i "0,x" --state-dir "$TEST_TMP/never" set --power-limit 600
expect_exit 2; expect_err "-i: 'x' is not a GPU index"; unchanged
[ ! -e "$TEST_TMP/never" ] || fail "a bad -i created the journal directory"
# The hint names the GPUs of this node (every index, UUID and bus id there), not a made-up bus id
# beside index 0 alone (issue 32).
gpuclk --sim -i -1 status
expect_exit 2; expect_err "-i: '-1' is not a GPU index, UUID or PCI bus id"
expect_err "GPUs here: 0 (GPU-"; expect_err "; 3 (GPU-"; expect_err "00000000:18:00.0"
check; ! grep -qF "00:06.0" <<<"$ERR" || fail "the hint names a bus id that is not on this node"
gpuclk --sim=8xh100 -i gpu0 query --query-gpu=index
expect_exit 2; expect_err "; 7 (GPU-"
gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 -i -1 status
expect_exit 2; expect_err "give GPU indexes, UUIDs (GPU-…, or a unique prefix) or PCI bus ids (DDDDDDDD:BB:DD.F)"
gpuclk --sim set -i "" --power-limit 600
expect_exit 2; unchanged
gpuclk --sim -i "" query --query-gpu=index
expect_exit 2
gpuclk --sim occupancy --device "" --threads 256 --regs 32
expect_exit 2; expect_err "--device: the GPU selection is empty"
gpuclk --sim occupancy --device 18446744073709551617 --threads 256 --regs 32
expect_exit 2
printf 'gpus = ""\n[settings]\npower_limit_w = 600\n' > "$TEST_TMP/empty-gpus.toml"
gpuclk --sim apply "$TEST_TMP/empty-gpus.toml"
expect_exit 2; expect_err "gpus is empty"; unchanged
printf 'gpus = "18446744073709551616"\n[settings]\npower_limit_w = 600\n' > "$TEST_TMP/big-gpus.toml"
gpuclk --sim apply "$TEST_TMP/big-gpus.toml"
expect_exit 2; unchanged

# --- The power limit: exact milliwatts, the range named, --snap clamps to the near end ---
gpuclk --sim set -i 0 --power-limit 4295617.296
expect_exit 2; expect_err "outside this GPU's range 200 W"; expect_err "700 W"; unchanged
gpuclk --sim set -i 0 --power-limit 99999999999999999999999
expect_exit 2; expect_err "is not a power in watts"; unchanged
for bad in nan inf -600 0 1e3 0x258 " " 600.0001 "+600"; do
  gpuclk --sim set -i 0 --power-limit "$bad"
  expect_exit 2
done
unchanged
gpuclk --sim set -i 0 --power-limit 4295617.296 --snap
expect_exit 0; expect_out "clamped to 700 W"
gpuclk --sim query -i 0 --query-gpu=power.limit --format=csv,noheader,nounits
expect_out "700.00"
gpuclk --sim set -i 0 --power-limit 612.5
expect_exit 0
gpuclk --sim query -i 0 --query-gpu=power.limit --format=csv,noheader,nounits
expect_out "612.50"
gpuclk --sim restore
expect_exit 0
ORIGINAL=$(limits)

# Clocks: a number past any clock is a bad argument, not a wrapped one.
gpuclk --sim set -i 0 --lock-gpu-clocks 4294968301
expect_exit 2; expect_err "is not a clock range"

# --- Error messages quote at most ~80 characters of a bad value ---
LONG=$(head -c 30000 /dev/zero | tr '\0' 'x')
gpuclk --sim set -i 0 --power-limit "$LONG"
expect_exit 2
check; [ "${#ERR}" -lt 800 ] || fail "the error is ${#ERR} characters long"
gpuclk --sim -i "$LONG" query --query-gpu=index
expect_exit 2
check; [ "${#ERR}" -lt 800 ] || fail "the error is ${#ERR} characters long"

# --- Work bounded by input: a 30,000-character kernel name and pattern ---
{
  printf "ptxas info    : Compiling entry function '%s' for 'sm_90'\n" "$LONG"
  printf "ptxas info    : Used 32 registers, 16 bytes smem\n"
} > "$TEST_TMP/long.log"
gpuclk occupancy --ptxas-log "$TEST_TMP/long.log" --kernel '.*' --arch sm_90 --threads 256
expect_exit 2; expect_err "no kernel matches"
gpuclk occupancy --ptxas-log "$TEST_TMP/long.log" --kernel '*x*x*x*x*x*x*x*x*y' --arch sm_90 --threads 256
expect_exit 2; expect_err "no kernel matches"
gpuclk occupancy --ptxas-log "$TEST_TMP/long.log" --kernel 'xxx' --arch sm_90 --threads 256 --format json
expect_exit 0; expect_json '.[0].registers' 32
gpuclk occupancy --ptxas-log "$TEST_TMP/long.log" --kernel "$LONG" --arch sm_90
expect_exit 2; expect_err "longer than 1024 characters"
# A register count no GPU allocates: refused at once (its block arithmetic would pass 2^31,
# UBSan's signed overflow), not answered as a kernel that cannot launch; one above sm_90's 255
# but within reach still is.
gpuclk occupancy --arch sm_90 --threads 256 --regs 2147483647
expect_exit 2; expect_err "at most 255"
gpuclk occupancy --arch sm_90 --threads 99999 --regs 32
expect_exit 2; expect_err "at most 1024"
gpuclk occupancy --arch sm_90 --threads 256 --regs 300
expect_exit 2; expect_out "Launch possible                     : no"; expect_err "the launch cannot run"
# Advice over a shared size far past any GPU: instant, not 2^31 steps (a launch that cannot run:
# exit 2 after the report).
gpuclk occupancy --arch sm_90 --threads 256 --regs 32 --smem-dynamic 1073741823K
expect_exit 2; expect_out "Advice"; expect_err "the launch cannot run"
# Tool output: counts past any GPU are refused, not wrapped.
printf "ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 99999999999999999999 registers\n" > "$TEST_TMP/wrap.log"
gpuclk occupancy --ptxas-log "$TEST_TMP/wrap.log" --arch sm_90
expect_exit 2; expect_err "is not a count"

# --- Files and streams: never read /dev/zero or a FIFO ---
mkfifo "$TEST_TMP/fifo"
for input in /dev/zero "$TEST_TMP/fifo" "$TEST_TMP"; do
  gpuclk --sim apply "$input"
  expect_exit 2; expect_err "not a regular file"
  gpuclk --sim="$input" query --query-gpu=index
  expect_exit 2; expect_err "not a regular file"
  gpuclk occupancy --batch "$input"
  expect_exit 2; expect_err "not a regular file"
  expect_err "give the path of a batch file"; check
  ! grep -q "file file" <<<"$ERR" || fail "the hint says 'file file'"
  gpuclk occupancy --ptxas-log "$input" --arch sm_90
  expect_exit 2; expect_err "not a regular file"
  gpuclk bench compare "$input" "$input"
  expect_exit 2; expect_err "not a regular file"
  # found by fuzz_argv: --report read /dev/zero for 47 s and a FIFO forever
  gpuclk govern --report "$input"
  expect_exit 2; expect_err "not a regular file"
done
head -c $((5 * 1024 * 1024)) /dev/zero > "$TEST_TMP/big.toml"
gpuclk --sim apply "$TEST_TMP/big.toml"
expect_exit 2; expect_err "is larger than 4 MiB"
# A stream (stdin) is read line by line with a bound per line.
gpuclk occupancy --batch - < /dev/zero
expect_exit 2; expect_err "longer than 65536"
unchanged

# --- A lost GPU is exit 15 everywhere (faults: GPU 2 falls off the bus at t = 60 s) ---
GPUCLK_SIM_START=100 GPUCLK_SIM_SPEED=0 gpuclk --sim faults set -i 2 --power-limit 600
expect_exit 15; expect_err "lost"
GPUCLK_SIM_START=100 GPUCLK_SIM_SPEED=0 gpuclk --sim faults set --power-limit 600
expect_exit 15

# --- The journal is validated on load like any other input ---
gpuclk --sim set -i 1 --power-limit 650
expect_exit 0
JOURNAL=$(ls "$TEST_TMP"/*.gpuclk/journal.json 2>/dev/null || ls "$GPUCLK_STATE_DIR"/journal.json)
cp "$JOURNAL" "$TEST_TMP/journal.good"
jq '.gpus[0].original.power_limit_mw = 18446744073709551615' "$TEST_TMP/journal.good" > "$JOURNAL"
gpuclk --sim restore
expect_exit 255; expect_err "power_limit_mw"
jq '.gpus[0].index = -1' "$TEST_TMP/journal.good" > "$JOURNAL"
gpuclk --sim restore
expect_exit 255; expect_err "index must be a whole number"
jq '.gpus[0].original.application_clocks.memory_mhz = 1e30' "$TEST_TMP/journal.good" > "$JOURNAL"
gpuclk --sim restore
expect_exit 255
rm -f "$JOURNAL"; mkfifo "$JOURNAL"
gpuclk --sim restore
expect_exit 255; expect_err "not a regular file"
rm -f "$JOURNAL"; cp "$TEST_TMP/journal.good" "$JOURNAL"
gpuclk --sim restore
expect_exit 0

finish
