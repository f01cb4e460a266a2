#!/usr/bin/env bash
# Two-GPU run (nvidia-h200-x2; issues 2 and 7): every GPU at once, topology vs nvidia-smi topo -m,
# selection by UUID and bus id across both GPUs, fields vs nvidia-smi, bench --concurrent.
# Read-only.
export GPUCLK_READ_ONLY=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")/.."
G=$PWD/.device/gpuclk
export GPUCLK_BIN=$G
FINAL_OUT=$OUT; export OUT=/tmp/run5; mkdir -p $OUT
nvidia-smi -L
echo "=== gpuclk"; $G
echo "=== nvidia-smi topo -m"; nvidia-smi topo -m
echo "=== gpuclk topo"; $G topo
echo "=== gpuclk info (GPU sections)"; $G info | grep -E "^GPU|Name|UUID|PCI Bus|Architecture|SMs|Peak Bandwidth|Generation Current|Width Current|CPUs|NUMA" | head -40
echo "=== -i by UUID and bus id across both GPUs"
mapfile -t U < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
mapfile -t B < <(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader)
echo "-i ${U[1]},${B[0]} ->"; $G -i "${U[1]},${B[0]}" query --fields index,uuid,pci.bus_id --format csv,noheader
echo "-i ${B[1]#0000} ->"; $G -i "${B[1]#0000}" query --fields index,uuid --format csv,noheader
echo "=== fields vs nvidia-smi"; scripts/device-check.sh foundation > $OUT/foundation.md 2>&1; echo "rc=$?"; grep -E "differ|supported graphics" $OUT/foundation.md
echo "=== bench (incl. --concurrent)"; timeout 240 tests/device/bench_cli_test.sh $G > $OUT/bench_cli.log 2>&1; echo "rc=$?"; grep -E "^\|" $OUT/bench_cli.log
tar czf $FINAL_OUT/logs.tar.gz -C /tmp run5
