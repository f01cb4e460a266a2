#!/usr/bin/env bash
# Third GPU-machine run: where gpuclk's per-call latency goes (issue 2). Read-only.
export GPUCLK_READ_ONLY=1
cd "$(dirname "$0")/.."
G=.device/gpuclk
python3 perf/nvml_open_costs.py
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo "$(( (t1 - t0) / 1000 )) us: $*"; }
for i in 1 2 3; do ms $G --version; done
for i in 1 2 3; do ms $G --nvml-lib /nonexistent query --fields name; done
for i in 1 2 3; do ms $G query --fields name --format csv,noheader; done
for i in 1 2 3; do ms nvidia-smi --query-gpu=name --format=csv,noheader; done
for i in 1 2 3; do ms python3 -c "import ctypes; l=ctypes.CDLL('libnvidia-ml.so.1'); l.nvmlInit_v2(); l.nvmlShutdown()"; done
for i in 1 2 3; do ms python3 -c "import ctypes; l=ctypes.CDLL('libnvidia-ml.so.1'); l.nvmlInit_v2()"; done
for i in 1 2 3; do ms python3 -c "pass"; done
