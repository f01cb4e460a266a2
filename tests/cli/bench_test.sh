#!/usr/bin/env bash
# gpuclk bench without a GPU: argument errors, what a build without CUDA and the simulator say,
# and bench compare on committed reports (tests/cli/fixtures/bench_*.json, written by the report
# writer from the H100 calibration run, docs/calibration.md: see tests/unit/bench_report_view_test.cpp).
source "$(dirname "$0")/lib.sh" "$1"
FIXTURES="$(cd "$(dirname "$0")" && pwd)/fixtures"

# --- bad arguments: refused before anything touches a GPU, in every build (exit 2) ------------
gpuclk bench gemm --dtype fp64
expect_exit 2; expect_err "unknown --dtype 'fp64'"; expect_err "valid dtypes: fp32, tf32, fp16, bf16, fp8"
gpuclk bench gemm --dtype bf16,int8
expect_exit 2; expect_err "unknown --dtype 'int8'"
gpuclk bench gemm --input normal
expect_exit 2; expect_err "--input: 'normal' is not an input kind"; expect_err "valid: random"
gpuclk bench mem --input ones
expect_exit 2; expect_err "--input: 'ones' is not an input kind"
gpuclk bench gemm --m 0
expect_exit 2; expect_err "m = 0 is outside 1.."
gpuclk bench gemm --dtype fp8 --k 100
expect_exit 2; expect_err "not a multiple of 16"
gpuclk bench gemm --seconds -1
expect_exit 2; expect_err "--seconds -1 must be positive"
gpuclk bench fma --seconds 0
expect_exit 2; expect_err "must be positive"
gpuclk bench mem --warmup -2
expect_exit 2; expect_err "--warmup -2 must not be negative"
gpuclk bench mem --kind scatter
expect_exit 2; expect_err "valid kinds: copy, copy_kernel, triad"
gpuclk bench mem --mib 0
expect_exit 2; expect_err "--mib must be positive"
gpuclk bench fma --iterations 0
expect_exit 2; expect_err "iterations"
gpuclk bench fma --interval 1ms
expect_exit 2; expect_err "bad --interval 1ms"
gpuclk bench
expect_exit 2
gpuclk bench gemm --format yaml
expect_exit 2
gpuclk bench p2p --mib 0
expect_exit 2; expect_err "--mib 0 is outside 1..65536"
gpuclk bench p2p --samples 0
expect_exit 2; expect_err "--samples 0 is outside 1..1000"
gpuclk bench p2p --copies 5000
expect_exit 2; expect_err "--copies 5000 is outside 1..1000"
gpuclk bench p2p --numa x
expect_exit 2; expect_err "--numa: 'x' is not a NUMA node"
gpuclk bench p2p --peer-only --host-only
expect_exit 2; expect_err "excludes"

# --- no GPU to run on ---------------------------------------------------------------------------
gpuclk --sim bench fma
if grep -q "built without CUDA" <<<"$ERR"; then
  echo "# this gpuclk has no CUDA: checking the build message"
  expect_exit 3; expect_err "reconfigure with -DGPUCLK_WITH_CUDA=ON"
  # It names the setting that left CUDA out, nvcc, and the configure command.
  expect_err_re "built without CUDA \((configured with GPUCLK_WITH_CUDA=OFF|GPUCLK_WITH_CUDA=AUTO found no nvcc)"
  expect_err "install the CUDA toolkit (nvcc"; expect_err "cmake --preset release -DGPUCLK_WITH_CUDA=ON"
  # Without a driver too: the build is what is missing first (not "no GPU", exit 12).
  gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 bench gemm --dtype bf16
  expect_exit 3; expect_err "built without CUDA"
  gpuclk bench gemm --dtype bf16
  expect_exit 3; expect_err "built without CUDA"
  gpuclk --sim bench p2p
  expect_exit 3; expect_err "reconfigure with -DGPUCLK_WITH_CUDA=ON"
  gpuclk bench --help
  expect_exit 0; expect_out "12 no NVIDIA driver"
else
  echo "# this gpuclk has CUDA: checking what it says without a GPU"
  # The simulator answers NVML only: no kernels to run.
  expect_exit 3; expect_err "the simulator (--sim) models NVML only"
  # bench p2p copies between real GPUs: the simulator says so too, with one GPU or several.
  gpuclk --sim bench p2p
  expect_exit 3; expect_err "gpuclk bench p2p copies between real GPUs"; expect_err "models NVML only"
  gpuclk --sim 2xh200 bench p2p --host-only --format json
  expect_exit 3; expect_err "models NVML only"
  gpuclk --sim -i 9 bench p2p
  expect_exit 6
  # fp8 on a pre-Ada GPU: known from NVML before CUDA is asked.
  gpuclk --sim a100 bench gemm --dtype fp8
  expect_exit 3; expect_err "fp8 GEMM needs compute capability 8.9 or newer"; expect_err "is 8.0"
  gpuclk --sim l4 bench gemm --dtype fp8
  expect_exit 3; expect_err "the simulator (--sim) models NVML only"
  # -i names a GPU that is not there.
  gpuclk --sim -i 9 bench fma
  expect_exit 6
  # No driver at all (a CI host): NVML is missing, and bench says it has no GPU to run on.
  gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 bench fma
  expect_exit 12; expect_err "no NVIDIA GPU to benchmark here"
  # The library is there but no driver is loaded (a host whose kernel module is missing): 9, as
  # nvidia-smi. README and docs/bench.md say which is which (issue 42: README said 12 only).
  gpuclk --sim=no-driver bench gemm
  expect_exit 9; expect_err "no NVIDIA GPU to benchmark here"; expect_err "Driver Not Loaded"
  check; grep -q "exits 12 on a host without the NVML" "$(dirname "$0")/../../README.md" &&
    grep -q "exits 9 where the library loads but no driver is" "$(dirname "$0")/../../README.md" &&
    grep -q "12 no NVML library, 9 no driver loaded" "$(dirname "$0")/../../docs/bench.md" ||
    fail "README or docs/bench.md do not say bench's exit codes without a driver"
fi

# --- bench compare on committed reports ----------------------------------------------------------
A="$FIXTURES/bench_h100_calibration.json"
B="$FIXTURES/bench_h100_other.json"
gpuclk bench compare "$A" "$B"
expect_exit 0; expect_out "B/A"; expect_out "bf16 8192x8192x8192"; expect_out "1.050"
gpuclk bench compare "$A" "$B" --format json
expect_exit 0
expect_json 'length' 4
expect_json '.[0].variant' "bf16 8192x8192x8192"
expect_json '.[0].rate_a' 680.65
expect_json '.[0].rate_b' 714.68
expect_json '.[0].ratio' 1.05
expect_json '.[0].sm_clock_a' 1410
expect_json '.[0].efficiency_a' 63.6
expect_json '.[1].ratio' null          # tf32: only in A
expect_json '.[3].unit' "GB/s"
expect_json '.[3].ratio' 0.9
gpuclk bench compare "$A" "$A" --format csv,noheader
expect_exit 0; expect_lines 4
# Bad files: exit 2 with the file named.
printf '{ not json' >"$TEST_TMP/broken.json"
gpuclk bench compare "$A" "$TEST_TMP/broken.json"
expect_exit 2; expect_err "$TEST_TMP/broken.json: not JSON"
printf '{"results": []}' >"$TEST_TMP/other.json"
gpuclk bench compare "$TEST_TMP/other.json" "$A"
expect_exit 2; expect_err "not a gpuclk bench report"
gpuclk bench compare "$A" "$TEST_TMP/missing.json"
expect_exit 2; expect_err "cannot read bench report '$TEST_TMP/missing.json'"
gpuclk bench compare "$A"
expect_exit 2

finish
