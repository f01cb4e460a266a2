#!/usr/bin/env bash
# gpuclk occupancy: the calculator by --arch, on the simulated GPUs, --sweep, --batch,
# --binary (through a stand-in cuobjdump), --ptxas-log, --list-archs, and its errors.
source "$(dirname "$0")/lib.sh" "$1"
SAMPLES="$(cd "$(dirname "$0")/../unit/occupancy_samples" && pwd)"

# The worked example of docs/occupancy.md: 256 threads × 32 registers fill an A100 and an H100.
for arch in sm_80 sm_90; do
  gpuclk occupancy --arch $arch --threads 256 --regs 32 --format json
  expect_exit 0
  expect_json .occupancy.active_blocks 8
  expect_json .occupancy.active_warps 64
  expect_json .occupancy.max_warps 64
  expect_json .occupancy.occupancy 100
  expect_json .occupancy.limiter warps+registers
  expect_json .blocks_per_sm_by.registers 8
done
gpuclk occupancy --arch sm_86 -t 256 -r 32 --format json
expect_exit 0; expect_json .occupancy.active_blocks 6; expect_json .occupancy.limiter warps

# Human table with advice.
gpuclk occupancy --arch sm_90 -t 256 -r 64
expect_exit 0
expect_out_re "Active blocks per SM +: 4"
expect_out_re "Occupancy +: 50.0 %"
expect_out "≤ 32 registers per thread → 100 % (8 blocks per SM)"
gpuclk occupancy --arch sm_90 -t 192 -r 32
expect_out "block 256 instead of 192 → 100 % (8 blocks per SM)"
gpuclk occupancy --arch sm_90 -t 256 -r 32 --smem-dynamic 100K --format json
expect_json .occupancy.active_blocks 2
expect_json .occupancy.limiter shared_memory
expect_json .kernel.shared_optin_needed true
expect_json '.advice[0]' "shared memory ≤ 75 KiB per block → 37.5 % (3 blocks per SM)"

# Invalid launches are reported as such, not as 0 %, and are bad input: exit 2 naming the limit
# (issue 32: "Launch possible: no" with exit 0).
gpuclk occupancy --arch sm_90 -t 1025 -r 32 --format json
expect_exit 2; expect_err "gpuclk: error: the launch cannot run:"
expect_json .occupancy.valid false
expect_json .occupancy.occupancy null
expect_json .occupancy.invalid_reasons block_above_device_maximum
gpuclk occupancy --arch sm_90 -t 256 -r 300
expect_exit 2; expect_out "Launch possible                     : no"; expect_err "255"
gpuclk occupancy --arch sm_90 -t 2048 -r 32
expect_exit 2; expect_err "1024"
gpuclk occupancy --arch sm_80 -t 512 -r 32 --max-threads 256
expect_exit 2
expect_out "exceeds the kernel's __launch_bounds__ of 256"; expect_out_re "Occupancy +: N/A"
gpuclk occupancy --arch sm_90 -t 128 -r 32 --smem-dynamic 228K --format json
expect_json .occupancy.invalid_reasons shared_per_block_above_maximum

# A live GPU's architecture: the simulated H100s.
gpuclk --sim occupancy --device 0 -t 256 -r 40 --format json
expect_exit 0; expect_json .arch sm_90; expect_json .occupancy.active_blocks 6
expect_json .gpu "GPU 0: NVIDIA H100 80GB HBM3"

# --sweep: every block size, the best as cudaOccupancyMaxPotentialBlockSize picks it.
gpuclk occupancy --arch sm_80 --regs 72 --sweep --format json
expect_exit 0
expect_json length 32
expect_json '[.[] | select(.best)] | .[0].threads' 896
expect_json '.[31].occupancy' null
gpuclk --sim occupancy -i 1 --regs 40 --sweep
expect_out "Best block size on sm_90: 768 threads, 2 blocks per SM, 75 %"
expect_out "Minimum grid for a full GPU 1: NVIDIA H100 80GB HBM3: 264 blocks (132 SMs)"

# --batch: CSV in, CSV out by default (plain numbers), JSON on request.
cat > "$TEST_TMP/kernels.csv" <<'CSV'
name,arch,threads,regs,smem_static,smem_dynamic,max_threads
gemm,sm_90,256,32,0,0,
reduce,sm_80,1024,64,48K,0,
bounded,sm_90,512,32,0,0,256
CSV
gpuclk occupancy --batch "$TEST_TMP/kernels.csv"
expect_exit 0
expect_lines 4
expect_out "name, arch, threads, regs, smem_static, smem_dynamic, max_threads, active_blocks, active_warps, max_warps, occupancy, limiter, valid, reason"
expect_out "gemm, sm_90, 256, 32, 0, 0, [N/A], 8, 64, 64, 100.00, warps+registers, yes, "
expect_out "reduce, sm_80, 1024, 64, 49152, 0, [N/A], 1, 32, 64, 50.00, registers, yes, "
gpuclk occupancy --batch - --format json < "$TEST_TMP/kernels.csv"
expect_exit 0
# The kernel's columns are numbers in JSON too (they were strings: "256"); a column of the
# user's own (name) stays text; an empty max_threads is null.
expect_json '[.[0].threads, .[1].smem_static, .[2].max_threads, .[0].max_threads] | map(type) | join(",")' "number,number,number,null"
expect_json '.[1].smem_static' 49152
expect_json '.[0].name' gemm
expect_json '.[2].valid' false
expect_json '.[0].threads' 256; expect_json '.[0].arch' sm_90
expect_json '.[2].active_blocks' 0
expect_json '.[2].reason' "512 threads per block exceeds the kernel's __launch_bounds__ of 256"
printf 'arch,threads,regs,smem_static,smem_dynamic\nsm_90,256,lots,0,0\n' > "$TEST_TMP/bad.csv"
gpuclk occupancy --batch "$TEST_TMP/bad.csv"
expect_exit 2; expect_err 'line 2, column regs: "lots" is not valid (use 0..255)'

# --binary through a stand-in cuobjdump that prints the committed sample.
printf '#!/bin/sh\ncat "%s/cuobjdump_two_archs.txt"\n' "$SAMPLES" > "$TEST_TMP/cuobjdump"
chmod +x "$TEST_TMP/cuobjdump"
touch "$TEST_TMP/app"
GPUCLK_CUOBJDUMP="$TEST_TMP/cuobjdump" gpuclk occupancy --binary "$TEST_TMP/app" --arch sm_90 --threads 256 --format json
expect_exit 0
expect_json length 3
expect_json '.[1].kernel' "tiled(float*, float const*, int)"
expect_json '.[1].registers' 78
expect_json '.[1].shared_static' 4096
expect_json '.[1].active_blocks' 3
expect_json '.[1].limiter' registers
GPUCLK_CUOBJDUMP="$TEST_TMP/cuobjdump" gpuclk occupancy --binary "$TEST_TMP/app" --kernel 'spill' --arch sm_86
expect_exit 0; expect_out "void spill<300>(float*)"; expect_out "sm_80"; expect_no_out "tiled"
GPUCLK_CUOBJDUMP="$TEST_TMP/cuobjdump" gpuclk occupancy --binary "$TEST_TMP/app" --arch sm_75
expect_exit 0; expect_err "no SASS that runs on sm_75"

# cuobjdump missing: exit 3, and the hint names the way out.
PATH=/usr/bin:/bin CUDA_HOME=/nonexistent GPUCLK_CUOBJDUMP="$TEST_TMP/none" gpuclk occupancy --binary "$TEST_TMP/app"
expect_exit 3; expect_err "GPUCLK_CUOBJDUMP=$TEST_TMP/none is not an executable file"
if [ ! -x /usr/local/cuda/bin/cuobjdump ] && ! command -v cuobjdump >/dev/null; then
  gpuclk occupancy --binary "$TEST_TMP/app"
  expect_exit 3; expect_err "cuobjdump not found"; expect_err "--ptxas-log"
fi
gpuclk occupancy --binary "$TEST_TMP/does-not-exist"
expect_exit 2; expect_err "No such file or directory"

# --ptxas-log: the real nvcc -Xptxas -v log.
gpuclk occupancy --ptxas-log "$SAMPLES/ptxas_sm80_sm90.log" --format json
expect_exit 0
expect_json length 6
expect_json '.[0].kernel' "void spill<300>(float*)"
expect_json '.[0].stack' 1200
expect_json '.[5].arch' sm_90
expect_json '.[3].constant0' null
expect_err "best block sizes assume no __launch_bounds__"
gpuclk occupancy --ptxas-log "$SAMPLES/ptxas_sm80_sm90.log" --kernel tiled --arch sm_90 --max-threads 256 --format json
expect_exit 0; expect_json '.[0].threads' 256; expect_json '.[0].active_blocks' 3

# --list-archs: every architecture's limits.
gpuclk occupancy --list-archs --format json
expect_exit 0
expect_json length 19
expect_json '.[] | select(.arch == "sm_80") | .max_warps' 64
expect_json '.[] | select(.arch == "sm_90") | .shared_per_block_optin' 232448

# Bad arguments: exit 2 naming the value and what is valid.
gpuclk occupancy --arch sm_95 -t 256 -r 32
expect_exit 2; expect_err "unknown architecture sm_95: use one of sm_50, sm_52"
gpuclk occupancy --arch sm_90 -t 256
expect_exit 2; expect_err "needs --regs N"
gpuclk occupancy --arch sm_90 -r 32
expect_exit 2; expect_err "needs --threads N"
gpuclk occupancy --arch sm_90 -t 0 -r 32
expect_exit 2; expect_err "threads per block 0 is not a block size"
gpuclk occupancy --arch sm_90 -t 256 -r 32 --smem-static 1MB
expect_exit 2; expect_err "--smem-static 1MB is not a size"
gpuclk occupancy --arch sm_90 -t 256 -r 32 --carveout 120
expect_exit 2; expect_err "carveout 120 % is outside 0..100"
gpuclk occupancy --batch x.csv --list-archs
expect_exit 2; expect_err "separate modes"

finish
