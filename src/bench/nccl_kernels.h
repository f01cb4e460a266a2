// Device kernels of bench nccl (nccl_kernels.cu): each rank's input and the check of each
// operation's output against what it must hold. All launches are async on `stream`, on the
// current device. Internal to src/bench.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpuclk::bench::detail {

// What an output element must hold (CheckSpec::kind).
enum class NcclCheck {
  all_reduce,      // the sum of every rank's element at the same index
  all_gather,      // element k: rank k / part's element k % part
  reduce_scatter,  // element k: the sum of every rank's element rank × part + k
  broadcast,       // rank 0's element (root 0)
  all_to_all,      // element k: rank k / part's element rank × part + k % part
  from_peer,       // `peer`'s element (send/recv: the previous rank; a pair: the sender)
};

struct CheckSpec {
  NcclCheck kind = NcclCheck::all_reduce;
  int rank = 0, ranks = 1, peer = 0;
  std::size_t count = 0;  // elements to check
  std::size_t part = 0;   // a rank's part, elements (all-gather, reduce-scatter, all-to-all)
};

// data[i] = rank's input element i, i < count: small integers, so sums over ranks are exact.
void launch_fill(float* data, std::size_t count, int rank, cudaStream_t stream);
// data[i] = -1 (no input holds it), i < count: what an operation that wrote nothing leaves.
void launch_clear(float* data, std::size_t count, cudaStream_t stream);
// Adds to *wrong the elements of data[0..count) that differ from what `spec` says.
void launch_check(const float* data, const CheckSpec& spec, unsigned long long* wrong,
                  cudaStream_t stream);

}  // namespace gpuclk::bench::detail
