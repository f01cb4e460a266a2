// What the timing loop needs from a workload once its buffers are ready on a device.
// Internal to src/bench; implementations: gemm.cpp, mem.cpp, fma.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/verify.h"
#include "bench/workload.h"

namespace gpuclk::bench::detail {

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Enqueues one launch of the work on `stream`; never synchronizes.
  virtual void launch(cudaStream_t stream) = 0;
  // FLOP or bytes one launch does, in the unit of unit().
  virtual double work_per_launch() const = 0;
  virtual RateUnit unit() const = 0;
  // Checks the output of the last launch; synchronizes `stream`.
  virtual Verification verify(cudaStream_t stream) = 0;
  // (key, value) facts for the result: algorithm, grid, …
  virtual std::vector<std::pair<std::string, std::string>> details() const { return {}; }
};

// Each allocates and fills its buffers on the current device, using `stream`, and returns when
// they are ready. Throws CudaError, or gpuclk::Error(not_supported) for a GPU that lacks the path.
std::unique_ptr<Kernel> make_gemm(const GemmSpec& spec, const DeviceInfo& device,
                                  const RunOptions& options, cudaStream_t stream);
std::unique_ptr<Kernel> make_mem(const MemSpec& spec, const DeviceInfo& device,
                                 const RunOptions& options, cudaStream_t stream);
std::unique_ptr<Kernel> make_fma(const FmaSpec& spec, const DeviceInfo& device,
                                 const RunOptions& options, cudaStream_t stream);

}  // namespace gpuclk::bench::detail
