#!/usr/bin/env bash
# gpuclk bench nccl without a GPU: argument errors, a build without CUDA, no driver, no NCCL
# (where it looked), an NCCL too old or no NCCL at all, and the simulator's refusal once a
# (stand-in) NCCL loads. The stand-in is tests/cli/fake_nccl.cpp, built next to gpuclk.
source "$(dirname "$0")/lib.sh" "$1"
FAKE_NCCL="$GPUCLK_BIN_DIR/libgpuclk-fake-nccl.so"

# --- bad arguments: refused before anything touches a GPU or loads NCCL (exit 2) --------------
gpuclk bench nccl --ops all_reduce,gather
expect_exit 2; expect_err "--ops: 'gather' is not an operation bench nccl runs"
expect_err "valid: all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv"
gpuclk bench nccl --sizes 8:lots
expect_exit 2; expect_err "--sizes: 'lots' is not a size"
gpuclk bench nccl --sizes 1G:8
expect_exit 2; expect_err "the smallest size is above the largest"
gpuclk bench nccl --factor 1
expect_exit 2; expect_err "--factor 1 is outside 2..1024"
gpuclk bench nccl --iters 0
expect_exit 2; expect_err "--iters 0 is outside 1..100000"
gpuclk bench nccl --warmup -1
expect_exit 2; expect_err "--warmup -1 is outside 0..1000"
gpuclk bench nccl --pair-size 3Q
expect_exit 2; expect_err "--pair-size: '3Q' is not a size"
gpuclk bench nccl --interval 1ms
expect_exit 2; expect_err "bad --interval 1ms"
gpuclk bench nccl --format yaml
expect_exit 2
gpuclk bench nccl --help
expect_exit 0; expect_out "12 no NVIDIA driver or no NCCL library"; expect_out "--nccl-lib"

# --- where it cannot run ------------------------------------------------------------------------
gpuclk --sim bench nccl --nccl-lib "$FAKE_NCCL"
if grep -q "built without CUDA" <<<"$ERR"; then
  echo "# this gpuclk has no CUDA: checking the build message"
  expect_exit 3; expect_err "reconfigure with -DGPUCLK_WITH_CUDA=ON"
  gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 bench nccl
  expect_exit 3; expect_err "built without CUDA"
  finish
fi
echo "# this gpuclk has CUDA: checking what it says without a GPU or NCCL"
# A stand-in NCCL loads (NVML from the simulator names the GPUs): the simulator cannot run NCCL.
expect_exit 3; expect_err "gpuclk bench nccl runs NCCL (2.27.3, $FAKE_NCCL) on real GPUs"
expect_err "the simulator (--sim) models NVML only"
GPUCLK_NCCL_LIB="$FAKE_NCCL" gpuclk --sim 2xh200 bench nccl --format json
expect_exit 3; expect_err "runs NCCL (2.27.3, "
# No driver at all: the same words and code as the other bench commands (12), before NCCL.
gpuclk --nvml-lib /nonexistent/libnvidia-ml.so.1 bench nccl --nccl-lib "$FAKE_NCCL"
expect_exit 12; expect_err "no NVIDIA GPU to benchmark here"
gpuclk --sim=no-driver bench nccl
expect_exit 9; expect_err "no NVIDIA GPU to benchmark here"
gpuclk --sim -i 9 bench nccl --nccl-lib "$FAKE_NCCL"
expect_exit 6
# The NCCL given is not there, too old, or no NCCL.
gpuclk --sim bench nccl --nccl-lib /nonexistent/libnccl.so.2
expect_exit 12; expect_err "cannot load NCCL library '/nonexistent/libnccl.so.2'"
expect_err "check the path given with --nccl-lib"
GPUCLK_FAKE_NCCL_VERSION=2604 gpuclk --sim bench nccl --nccl-lib "$FAKE_NCCL"
expect_exit 3; expect_err "is NCCL 2.6.4, which lacks send/recv (gpuclk needs NCCL 2.7 or later)"
gpuclk --sim bench nccl --nccl-lib "$GPUCLK_BIN_DIR/libnvml-sim.so"
expect_exit 3; expect_err "is not an NCCL library (it has no ncclGetVersion)"
# None found: the message lists where it looked (a host with an NCCL install finds it instead).
EMPTY="$TEST_TMP/empty-home"
mkdir -p "$EMPTY"
HOME="$EMPTY" LD_LIBRARY_PATH="" GPUCLK_NCCL_LIB="" VIRTUAL_ENV="" CONDA_PREFIX="" \
  gpuclk --sim bench nccl
if [ "$RC" -eq 12 ]; then
  expect_err "no NCCL library found (libnccl.so.2); looked in:"
  expect_err "the loader's path for libnccl.so.2 (LD_LIBRARY_PATH, ld.so.cache)"
  expect_err "nvidia/nccl/lib/libnccl.so.2 under lib/python3*/{site,dist}-packages of $EMPTY/.local"
  expect_err "pip install nvidia-nccl-cu12"
else
  echo "# this host has an NCCL of its own: it loaded, and the simulator refused"
  expect_exit 3; expect_err "models NVML only"
fi

finish
