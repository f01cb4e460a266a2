// NCCL collectives over the node's GPUs (`gpuclk bench nccl`), timed as NVIDIA's nccl-tests
// 2.19 times them, so the figures can be set beside its own: one process and one thread drive
// every GPU (nccl-tests' -g N): ncclCommInitAll, then each operation launched on every rank inside
// ncclGroupStart/End on a non-blocking stream per GPU. Per message size: one untimed operation,
// then `iterations` back to back, timed on the host from the first launch to the end of the last
// (every stream synchronized), the mean per operation; out-of-place, then in-place. Buffers hold
// float32 values, summed; a check after each timing (nccl-tests' -c) compares every element with
// what the operation must produce. Sizes, counts and bandwidths follow nccl-tests exactly
// (nccl_plan.h).
//
// Built without CUDA (GPUCLK_HAVE_CUDA undefined), run() throws gpuclk::Error(not_supported)
// saying how to enable CUDA. CUDA and NCCL failures are gpuclk::Error too.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "bench/nccl_library.h"
#include "bench/nccl_plan.h"

namespace gpuclk::bench::nccl {

// Where a run is; the callback gets it before each size's timing (keep it short).
struct Progress {
  Operation operation = Operation::all_reduce;
  std::size_t bytes = 0;
  std::size_t step = 0, steps = 0;  // sizes done, sizes of this operation
  bool in_place = false;
  int pair_from = -1, pair_to = -1;  // rank indexes while measuring send/recv pairs
};

struct RunOptions {
  std::vector<Operation> operations = benchmark_operations();
  std::vector<std::size_t> sizes;  // bytes, nccl-tests' "size" (size_steps())
  int iterations = 20;             // nccl-tests' -n
  int warmup_iterations = 1;       // nccl-tests' -w: each size (stepping ×2), before timing
  bool check = true;               // nccl-tests' -c 1
  // Bytes each ordered pair sends with ncclSend/ncclRecv alone, to find the worst pair (0: no
  // pair figures; none with one GPU).
  std::size_t pair_bytes = 0;
  std::function<void(const Progress&)> on_progress;
};

// One placement (out-of-place or in-place) at one size: nccl-tests' time, algbw, busbw, #wrong.
struct Timing {
  double seconds = 0;  // per operation, mean over the iterations
  Bandwidth bandwidth;
  std::optional<std::uint64_t> wrong;  // elements that differ; nullopt: not checked
};

struct SizeResult {
  Counts counts;
  Timing out_of_place;
  std::optional<Timing> in_place;  // nullopt where in-place is not defined (all-to-all, send/recv)
};

struct OperationResult {
  Operation operation = Operation::all_reduce;
  std::vector<SizeResult> sizes;
  std::chrono::steady_clock::time_point start{}, end{};  // the operation's whole run, warm-up too
};

// One ordered pair: rank `from` sends `bytes` to rank `to`, nobody else moves data.
struct PairResult {
  int from = 0, to = 0;  // rank indexes (positions in the ordinals given)
  std::size_t bytes = 0;
  double seconds = 0;    // per transfer, mean
  double bandwidth = 0;  // B/s: bytes / seconds (send/recv's bus bandwidth)
  std::optional<std::uint64_t> wrong;
  std::chrono::steady_clock::time_point start{}, end{};
};

struct RunResult {
  std::vector<int> ordinals;                   // CUDA ordinal of each rank
  std::vector<std::vector<bool>> peer_access;  // [a][b]: cudaDeviceCanAccessPeer(a, b)
  bool native_all_to_all = false;              // ncclAlltoAll (else grouped send/recv)
  std::vector<OperationResult> operations;     // in RunOptions order
  std::vector<PairResult> pairs;               // a-major, a ≠ b
};

// Each ordinal's device memory now (cudaMemGetInfo).
std::vector<DeviceMemory> device_memory(std::span<const int> ordinals);

// Runs everything on `ordinals` (one rank each, in that order). Throws gpuclk::Error: CUDA or
// NCCL failures (their message names the call), too little memory (exit 2, naming the size and
// the GPU).
RunResult run(const Library& nccl, std::span<const int> ordinals, const RunOptions& options);

}  // namespace gpuclk::bench::nccl
