#!/usr/bin/env bash
# Records tests/data/nccl_inspector/*/ with the real NCCL Inspector plugin (README.md beside the
# recordings says what each one is). Needs the plugin's source (NCCL's plugins/profiler/inspector,
# Apache-2.0) in a folder of its own, the CUDA toolkit's headers and libcudart (no GPU, no driver).
#
#   tests/data/nccl_inspector/recorder/record.sh [PLUGIN_SOURCE_DIR]
#
# PLUGIN_SOURCE_DIR defaults to build/peers/nccl-inspector (an ignored folder: copy the source
# there). The plugin is built in place with its own Makefile (make CUDA_HOME=/usr/local/cuda).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
src="${1:-$repo/build/peers/nccl-inspector}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
out="$repo/build/nccl-inspector-recorder"
data="$here/.."

make -C "$src" CUDA_HOME="$cuda" >/dev/null
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -rdynamic -o "$out/inspector_recorder" \
  "$here/inspector_recorder.cpp" -ldl
g++ -std=c++17 -O2 -Wall -Wextra -shared -fPIC -o "$out/libcuda.so" "$here/fake_libcuda.cpp"

# The ranks sleep until their planned times; on a busy machine the OS may wake one late and make
# it look like a late rank. Real-time scheduling (root: chrt) keeps the wake-ups on time.
rt=()
if chrt -f 50 true 2>/dev/null; then rt=(chrt -f 50); fi

# record NAME VERBOSE RECORDER-ARGS...: one scenario into $data/NAME (its files replaced).
record() {
  local name="$1" verbose="$2"
  shift 2
  rm -rf "${data:?}/$name"
  mkdir -p "$data/$name"
  NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$data/$name" \
    NCCL_INSPECTOR_DUMP_VERBOSE="$verbose" NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500 \
    LD_LIBRARY_PATH="$out:$cuda/lib64" \
    "${rt[@]}" "$out/inspector_recorder" "$src/libnccl-profiler-inspector.so" "$@"
  echo "$name: $(cat "$data/$name"/*.log | wc -l) lines in $(ls "$data/$name" | wc -l) files"
}

# Two GPUs over NVLink (H100 NV18 figures), a data-parallel step: 40 ms of compute, two 25 MiB
# all-reduces at 300 GB/s bus bandwidth, an 8 MiB send/recv between the ranks.
record healthy_2gpu 1 --ranks 2 --steps 12 --ops-per-step 2 --op AllReduce --mib 25 \
  --busbw 300 --compute-ms 40 --channels 4 --p2p-mib 8 --comm-name DP --comm-hash 7f8c496ae9f661
# Four GPUs; rank 2 starts each step 12 ms after the others (a planted sleep), so the first
# all-reduce of each step waits for it on ranks 0, 1 and 3.
record late_rank_4gpu 1 --ranks 4 --steps 10 --ops-per-step 2 --op AllReduce --mib 25 \
  --busbw 360 --compute-ms 30 --late-rank 2 --late-ms 12 --channels 2 --first-device 0 \
  --comm-hash e62dedaa97644a
# The same planted sleep (20 ms, rank 1 of two), recorded without NCCL_INSPECTOR_DUMP_VERBOSE:
# no timestamps per operation, only execution times.
record late_rank_2gpu_plain 0 --ranks 2 --steps 12 --ops-per-step 2 --op AllReduce --mib 25 \
  --busbw 300 --compute-ms 30 --late-rank 1 --late-ms 20 --channels 4 --comm-hash 3a1b2c3d4e5f60
# Two GPUs on PCIe Gen4 x16 with NCCL_P2P_DISABLE=1 (staged through host memory): 100 MiB
# all-reduces at 6 GB/s, 20 ms of compute a step: most of the time in collectives.
record comm_bound_pcie_2gpu 1 --ranks 2 --steps 8 --ops-per-step 2 --op AllReduce --mib 100 \
  --busbw 6 --compute-ms 20 --channels 2 --comm-name "DP pcie" --comm-hash 1c0ffee2b0b
