// bench nccl in a build without CUDA: it says how to get a build that has it (stub.cpp's
// message, through device_count()).
#include "bench/nccl.h"
#include "bench/workload.h"
#include "util/error.h"

namespace gpuclk::bench::nccl {

std::vector<DeviceMemory> device_memory(std::span<const int>) {
  (void)device_count();  // throws: built without CUDA
  return {};
}

RunResult run(const Library&, std::span<const int>, const RunOptions&) {
  (void)device_count();  // throws: built without CUDA
  throw Error(ExitCode::not_supported, "gpuclk was built without CUDA");
}

}  // namespace gpuclk::bench::nccl
