#!/usr/bin/env bash
# The binary without a GPU: help, version, NVML missing, bad global options.
source "$(dirname "$0")/lib.sh" "$1"

gpuclk --help
expect_exit 0; expect_out "status"; expect_out "clocks"; expect_out "query"

gpuclk --version
expect_exit 0; expect_out "gpuclk 0.1.0"

# No driver on this machine: exit 12 and the hint to use the simulator.
GPUCLK_NVML_LIB= gpuclk status
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ]; then
  echo "skip: a real NVML is installed here"
else
  expect_exit 12; expect_err "no NVIDIA driver found"; expect_err "gpuclk --sim"
fi

# An explicit library that does not exist: exit 12 naming the path.
gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 clocks
expect_exit 12; expect_err "/nonexistent/libnvidia-ml.so.1"

# The CUDA toolkit's link-time stub (lib64/stubs/libnvidia-ml.so) is refused, not used. Any
# NVML-shaped library under a stubs/ folder stands in for it here.
mkdir -p "$TEST_TMP/cuda/lib64/stubs"
cp "$GPUCLK_BIN_DIR/libnvml-sim.so" "$TEST_TMP/cuda/lib64/stubs/libnvidia-ml.so"
gpuclk --nvml-lib "$TEST_TMP/cuda/lib64/stubs/libnvidia-ml.so" status
expect_exit 12; expect_err "CUDA toolkit's link-time stub"

# A library that is not NVML at all: said so, not "the driver is too old" (issue 42).
gpuclk --nvml-lib /lib/x86_64-linux-gnu/libm.so.6 status
expect_exit 12; expect_err "libm.so.6' is not an NVML library (it has no nvmlInit_v2)"
expect_err "at the driver's libnvidia-ml.so.1"
check; ! grep -q "R450" <<<"$ERR" || fail "a non-NVML library blamed on an old driver"

# The simulated node without a driver says so, rather than "use gpuclk --sim" (issue 42).
gpuclk --sim=no-driver status
expect_exit 9; expect_err "Driver Not Loaded"; expect_err "this simulated node has no driver loaded"
check; ! grep -q "use \`gpuclk --sim\`" <<<"$ERR" || fail "advises --sim on the simulator: $ERR"

# sim-job: the table's units in its headers (its cells are bare numbers); --seconds 0 says what
# is wrong with it, not "give --amount or --seconds" (issue 42).
GPUCLK_SIM_SPEED=50 gpuclk --sim -i 0 sim-job --workload gemm-bf16 --amount 50T
expect_exit 0; expect_out "Done TFLOP"; expect_out "Rate TFLOP/s"; expect_out "Energy J"
GPUCLK_SIM_SPEED=50 gpuclk --sim -i 0 sim-job --workload mem-copy --amount 50G
expect_exit 0; expect_out "Done GB"; expect_out "Rate GB/s"
gpuclk --sim -i 0 sim-job --workload gemm-bf16 --seconds 0
expect_exit 2; expect_err "--seconds 0: not a positive number of simulated seconds"

gpuclk --bogus-option
expect_exit 2

gpuclk nosuchcommand
expect_exit 2

# GPUCLK_NVML_TRACE: every entry point the command called, with counts, in a table.
GPUCLK_NVML_TRACE="$TEST_TMP/trace.txt" gpuclk --sim clocks
expect_exit 0
OUT=$(cat "$TEST_TMP/trace.txt" 2>/dev/null); LAST_CMD="trace of gpuclk --sim clocks"
expect_out_re '^# NVML calls: [0-9]+ calls'
expect_out_re '^nvmlInit_v2 +1 '
expect_out_re '^nvmlShutdown +1 '  # the simulator saves its state there: always called
expect_out_re '^nvmlDeviceGetMaxClockInfo +[1-9]'
GPUCLK_NVML_TRACE=/nonexistent/dir/trace.txt gpuclk --sim query --fields index
expect_exit 0; expect_err "cannot write the NVML trace to /nonexistent/dir/trace.txt"

finish
